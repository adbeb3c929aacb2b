"""``mjenv view``: the HTML replay viewer, checked in a real headless Chromium.

The page is loaded from a file with a test script appended that presses keys (dispatched
``keydown`` events, as a person's keys arrive) and records what the page shows after each one;
``--dump-dom`` returns it. What the page shows is compared with the engine's state re-simulated
from the log, not with the viewer's own data.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.arena import deal_log_path, run_arena
from mjenv import narration, replay, tiles
from mjenv.cli import main
from mjenv.games import GAME_NAMES
from mjenv import viewer
from mjenv.viewer import TableView, render_html, view_data

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

ERRORS_HOOK = """<script>window.__errors = [];
window.addEventListener("error", e => window.__errors.push(String(e.message)));
const __ce = console.error; console.error = (...a) => { window.__errors.push(a.join(" ")); __ce(...a); };</script>"""

DRIVER = """<script>(function () {
  const press = k => document.dispatchEvent(new KeyboardEvent("keydown", {key: k, bubbles: true}));
  const kinds = nodes => Array.from(nodes).map(n => Number(n.dataset.kind));
  const shot = () => {
    const seats = {};
    document.querySelectorAll(".seat[data-seat]").forEach(p => {
      seats[p.dataset.seat] = {
        hand: kinds(p.querySelectorAll(".row.hand > .tile")),
        river: kinds(p.querySelectorAll(".river .tile")),
        beans: Number(p.querySelector(".beans").dataset.beans),
        melds: Array.from(p.querySelectorAll(".meld[data-meld]")).map(m => [m.dataset.meld, m.dataset.from]),
      };
    });
    return {pos: document.getElementById("pos").textContent, seats,
            wall: Number(document.getElementById("wall").textContent),
            now: document.getElementById("now").textContent,
            decision: document.getElementById("decision").textContent,
            taken: Array.from(document.querySelectorAll(".opt.taken")).map(o => Number(o.dataset.action))[0] ?? null,
            options: Array.from(document.querySelectorAll(".opt")).map(o => Number(o.dataset.action)),
            wins: document.getElementById("wins").textContent,
            title: document.getElementById("title").textContent,
            subtitle: document.getElementById("subtitle").textContent,
            agents: document.getElementById("agents").textContent,
            events: document.querySelectorAll("#events li").length};
  };
  const out = {errors: window.__errors, frames: [shot()], views: {}};
  const n = %(steps)d;
  for (let i = 0; i < n; i++) { press("ArrowRight"); out.frames.push(shot()); }
  press("ArrowRight"); out.past_end = shot();
  press("2"); out.views.seat2 = shot();
  out.events_seat2 = Array.from(document.querySelectorAll("#events li")).map(li => li.textContent);
  press("t"); out.views.table = shot();
  press("Home"); out.home = shot();
  press("End"); out.end = shot();
  const pre = document.createElement("pre"); pre.id = "test-out"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();</script>"""


def chromium(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    """Run headless Chromium with its own profile folder (several test runs may share the machine)."""
    assert CHROMIUM, "the viewer tests need Chromium: apt-get install -y chromium (.ci/run installs it)"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           f"--user-data-dir={tmp / 'chromium-profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def drive(page: str, steps: int, tmp: Path, hash_: str = "") -> dict[str, Any]:
    """Load ``page`` with the key-pressing driver; return what it recorded."""
    page = page.replace("<head>", "<head>" + ERRORS_HOOK, 1)
    page = page.replace("</body>", DRIVER % {"steps": steps} + "</body>", 1)
    path = tmp / "driven.html"
    path.write_text(page, encoding="utf-8")
    dom = chromium("--virtual-time-budget=5000", "--dump-dom", path.as_uri() + hash_, tmp=tmp).stdout
    found = re.search(r'<pre id="test-out">(.*?)</pre>', dom, re.S)
    assert found, f"the driver wrote no result; page errors? DOM starts {dom[:500]!r}"
    return json.loads(html.unescape(found.group(1)))


def engine_frames(path: Path, hand_no: int = 0) -> dict[int, dict[str, Any]]:
    """Per line index of a hand where the re-simulated engine has played exactly the logged events:
    its hands, rivers, beans and wall (what the page must show there)."""
    hand = replay.read_log(path)[hand_no]
    out: dict[int, dict[str, Any]] = {}
    state = {"i": -1, "seen": 0}

    def on_line(ll: replay.LogLine, game: Any) -> None:
        state["i"] += 1
        if ll.record["type"] == "action":
            return
        state["seen"] += 1
        if state["seen"] == len(game.events):
            out[state["i"]] = {"hands": [sorted(tiles.from_counts(game.hands[s])) for s in range(4)],
                               "rivers": [list(game.rivers[s]) for s in range(4)],
                               "beans": list(game.beans), "wall": game.wall_count,
                               "melds": [[[m.kind, "" if m.source is None else str(m.source)] for m in game.melds[s]]
                                         for s in range(4)]}

    replay.replay_hand(path, hand, on_line)
    return out


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One duplicate deal of each game by the heuristic against random agents (legal actions logged)."""
    root = tmp_path_factory.mktemp("logs")
    run_arena(agents=["heuristic", "random"], deals=1, progress=False, log_dir=root / "bb")
    run_arena(game="joy_mahjong", agents=["heuristic", "random"], deals=1, progress=False, log_dir=root / "joy")
    return {"blood_battle": deal_log_path(root / "bb", 0), "joy_mahjong": deal_log_path(root / "joy", 0)}


# ---------------------------------------------------------------- the page in Chromium


@pytest.mark.parametrize("game", GAME_NAMES)
def test_stepping_a_whole_hand_by_keys_shows_what_the_log_says(game: str, logs: dict[str, Path],
                                                              tmp_path: Path) -> None:
    data = view_data(logs[game])
    frames = data["hands"][0]["frames"]
    got = drive(render_html(data), len(frames) - 1, tmp_path)
    assert got["errors"] == []
    assert len(got["frames"]) == len(frames)
    assert got["frames"][-1]["pos"].startswith(f"step {len(frames)} / {len(frames)}")
    assert got["past_end"]["pos"] == got["frames"][-1]["pos"]  # → at the end stays there
    expected = engine_frames(logs[game])
    assert len(expected) > 20
    for i, want in expected.items():
        shown = got["frames"][i]
        for s in range(4):
            seat = shown["seats"][str(s)]
            assert sorted(seat["hand"]) == want["hands"][s], (i, s)
            assert seat["river"] == want["rivers"][s], (i, s)
            assert seat["beans"] == want["beans"][s], (i, s)
            assert seat["melds"] == want["melds"][s], (i, s)
        assert shown["wall"] == want["wall"], i
    end = replay.read_log(logs[game])[0].lines[-1].record
    assert [got["end"]["seats"][str(s)]["beans"] for s in range(4)] == end["beans"]
    assert got["home"]["pos"].startswith("step 1 /")


def test_one_seat_view_hides_the_other_hands(logs: dict[str, Path], tmp_path: Path) -> None:
    data = view_data(logs["blood_battle"])
    got = drive(render_html(data), 30, tmp_path)
    seat2, table = got["views"]["seat2"], got["views"]["table"]
    assert got["errors"] == []
    assert seat2["seats"]["2"]["hand"] == table["seats"]["2"]["hand"] and -1 not in seat2["seats"]["2"]["hand"]
    for s in ("0", "1", "3"):
        assert set(seat2["seats"][s]["hand"]) == {-1}
        assert len(seat2["seats"][s]["hand"]) == len(table["seats"][s]["hand"])
        assert -1 not in table["seats"][s]["hand"]
        assert seat2["seats"][s]["river"] == table["seats"][s]["river"]  # rivers are public
    # The event list tells the others' decisions and draws without what they chose or drew.
    lines = [ll.record for ll in replay.read_log(logs["blood_battle"])[0].lines]
    assert len(got["events_seat2"]) == len(lines)
    for rec, text in zip(lines, got["events_seat2"]):
        if rec.get("actor") is None or rec["actor"] == 2:
            continue
        if rec["type"] == "action":
            assert text.endswith(f"player_{rec['actor']} decides"), text
        elif rec["type"] == "tsumo":
            assert text.endswith(f"player_{rec['actor']} 摸牌") or "补牌" in text, text


def test_decisions_show_the_legal_actions_and_the_policy_probabilities(tmp_path: Path) -> None:
    run_arena(agents=["ppo", "random"], deals=1, progress=False, log_dir=tmp_path / "logs")
    path = deal_log_path(tmp_path / "logs", 0)
    hand = replay.read_log(path)[0]
    lines = [ll.record for ll in hand.lines]
    ppo_seat = hand.header.record["agents"].index("ppo")
    i = next(i for i, r in enumerate(lines) if r["type"] == "action" and r["actor"] == ppo_seat and len(r["legal"]) > 2)
    rec = lines[i]
    assert "probs" in rec and abs(sum(rec["probs"]) - 1) < 1e-3
    assert all("probs" not in r for r in lines if r["type"] == "action" and r["actor"] != ppo_seat)
    got = drive(render_html(view_data(path)), i, tmp_path)
    shown = got["frames"][i]
    assert got["errors"] == []
    assert shown["taken"] == rec["action"]
    ranked = [a for _, a in sorted(zip(rec["probs"], rec["legal"]), key=lambda pa: -pa[0])]
    assert shown["options"] == ranked[:6]
    assert "top choices of the policy" in shown["decision"]


def is_blank(png: Path) -> bool:
    """A screenshot with almost no tile-coloured pixels or hardly any colours is blank."""
    from PIL import Image

    img = np.asarray(Image.open(png).convert("RGB")).astype(int)
    ivory = (np.abs(img - np.array([255, 253, 246])).sum(axis=2) < 30).mean()
    colours = len(np.unique(img.reshape(-1, 3)[::7], axis=0))
    return ivory < 0.01 or colours < 200


@pytest.mark.parametrize("game", GAME_NAMES)
def test_screenshot_shows_a_table_of_tiles(game: str, logs: dict[str, Path], tmp_path: Path) -> None:
    page = tmp_path / "game.html"
    assert main(["view", str(logs[game]), "-o", str(page)]) == 0
    png = tmp_path / "shot.png"
    chromium("--window-size=1500,1000", f"--screenshot={png}", page.as_uri() + "#hand=0&step=120", tmp=tmp_path)
    assert not is_blank(png)
    # The same check on a page whose script never draws (the data removed) calls it blank.
    broken = tmp_path / "broken.html"
    broken.write_text(page.read_text(encoding="utf-8").replace('"hands":[', '"nohands":[', 1), encoding="utf-8")
    chromium("--window-size=1500,1000", f"--screenshot={png}", broken.as_uri(), tmp=tmp_path)
    assert is_blank(png)


# ---------------------------------------------------------------- data and command


def test_table_view_matches_the_engine_at_every_synchronised_step(tmp_path: Path) -> None:
    """The viewer rebuilds the table from events alone; where the engine has played exactly the
    logged events, both agree (many hands of both games, kongs, wins, flowers and 补花 included)."""
    for game, options in (("blood_battle", {"preset": "qq"}), ("blood_battle", {"mode": "classic", "preset": "qq"}),
                          ("joy_mahjong", {})):
        out = tmp_path / f"{game}-{len(options)}"
        run_arena(game=game, agents=["heuristic", "heuristic"], deals=3, progress=False, log_dir=out,
                  env_options=options)
        kinds: set[str] = set()
        for d in range(3):
            path = deal_log_path(out, d)
            for n, hand in enumerate(replay.read_log(path)):
                kinds |= {ll.record["type"] for ll in hand.lines}
                view = TableView(hand.lines[0].record, joy=game == "joy_mahjong")
                want = engine_frames(path, n)
                for i, ll in enumerate(hand.lines):
                    if ll.record["type"] != "action" and i > 0:
                        view.apply(ll.record)
                    if i in want:
                        snap = view.snapshot()
                        for s in range(4):
                            shown = snap["hands"][s] + ([snap["drawn"][s]] if snap["drawn"][s] is not None else [])
                            assert sorted(shown) == want[i]["hands"][s], (path, n, i, s)
                        assert snap["rivers"] == want[i]["rivers"] and snap["beans"] == want[i]["beans"]
                        assert snap["wall"] == want[i]["wall"], (path, n, i)
        assert {"hora", "pay"} <= kinds, game


def test_view_command_writes_one_offline_file(logs: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "game.html"
    assert main(["view", str(logs["joy_mahjong"]), "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # nothing fetched from the network
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page
    data = json.loads(html.unescape(re.search(r'type="application/json">(.*?)</script>', page, re.S).group(1)))
    assert len(data["hands"]) == 4 and data["hands"][0]["agents"] is not None


def test_view_refuses_a_log_that_does_not_verify(logs: dict[str, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    lines = logs["blood_battle"].read_text(encoding="utf-8").splitlines()
    i = next(i for i, line in enumerate(lines) if '"type": "dahai"' in line)
    rec = json.loads(lines[i])
    rec["pai"] = "9s" if rec["pai"] != "9s" else "1s"
    lines[i] = json.dumps(rec, ensure_ascii=False)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "bad.html"
    assert main(["view", str(bad), "-o", str(out)]) == 1
    assert f"mismatch at line {i + 1}" in capsys.readouterr().err
    assert not out.exists()
    assert main(["view", str(tmp_path / "missing.jsonl"), "-o", str(out)]) == 2
    assert not out.exists()


# ---------------------------------------------------------------- decision analysis in logs


def _rewrite(path: Path, out: Path, index: int, change: Any) -> int:
    """Copy a log to ``out`` with ``change(record)`` applied to its ``index``-th action line;
    returns the line's number."""
    lines = path.read_text(encoding="utf-8").splitlines()
    at = [i for i, line in enumerate(lines) if '"type": "action"' in line][index]
    rec = json.loads(lines[at])
    change(rec)
    lines[at] = json.dumps(rec, ensure_ascii=False)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return at + 1


def test_logs_with_and_without_analysis_both_verify(logs: dict[str, Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    from mjenv import blood_battle_v0

    plain = tmp_path / "plain.jsonl"
    env = blood_battle_v0.env(log_path=plain)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert "legal" not in plain.read_text(encoding="utf-8")
    for path in (plain, logs["blood_battle"], logs["joy_mahjong"]):
        assert main(["replay", str(path)]) == 0
        assert "OK" in capsys.readouterr().out
    assert view_data(plain)["hands"][0]["frames"]


def test_logged_legal_actions_are_checked_against_the_re_simulation(logs: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    line = _rewrite(logs["blood_battle"], bad, 5, lambda r: r["legal"].pop())
    with pytest.raises(replay.ReplayMismatch, match="legal actions") as err:
        replay.verify_log(bad)
    assert err.value.line == line
    line = _rewrite(logs["blood_battle"], bad, 5, lambda r: r.update(probs=[1.0]))
    with pytest.raises(replay.LogFormatError, match="one probability per legal action") as err:
        replay.read_log(bad)
    assert err.value.line == line


def test_log_decision_needs_a_log_and_one_probability_per_action(tmp_path: Path) -> None:
    from mjenv import blood_battle_v0

    raw = blood_battle_v0.raw_env()
    raw.reset(seed=0)
    with pytest.raises(ValueError, match="log_path"):
        raw.log_decision()
    raw = blood_battle_v0.raw_env(log_path=tmp_path / "g.jsonl")
    raw.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(62,\)"):
        raw.log_decision(np.ones(5))


def test_arena_log_dir_refuses_a_folder_with_logs(logs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="already holds deal_"):
        run_arena(agents=["random", "random"], deals=1, progress=False, log_dir=logs["blood_battle"].parent)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        run_arena(agents=["random", "random"], deals=1, progress=False, log_dir=tmp_path / "file")


def test_eval_log_then_view(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["eval", "--agents", "random", "random", "--deals", "2", "--no-progress",
                 "--log", str(tmp_path / "logs")]) == 0
    assert "mjenv view" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["deal_00000.jsonl", "deal_00001.jsonl"]
    assert main(["view", str(tmp_path / "logs" / "deal_00001.jsonl")]) == 0
    assert (tmp_path / "logs" / "deal_00001.html").is_file()


# ---------------------------------------------------------------- scripted corners of the table


def follow(g: Any, script: list[tuple[int, int]]) -> TableView:
    """Play ``script`` and then pass/discard to the end, rebuilding the table from the new events
    after every step and comparing it with the engine (hands, melds, rivers, wall, beans)."""
    from tests import support

    view = TableView(g.events[0], joy=narration.game_of(g) == "joy_mahjong")
    seen = 1

    def sync() -> None:
        nonlocal seen
        for ev in g.events[seen:]:
            view.apply(ev)
        seen = len(g.events)
        for s in range(4):
            assert view.concealed(s) == list(g.hands[s]), s
            assert view.rivers[s] == list(g.rivers[s]), s
            assert [tuple(m[:3]) for m in view.melds[s]] == [(m.kind, m.tile, m.source) for m in g.melds[s]], s
            assert view.won_tiles[s] == [w.tile for w in g.wins if w.seat == s], s  # every 一炮多响 winner
        assert (view.wall, view.beans) == (g.wall_count, list(g.beans))

    sync()
    for seat, action in script:
        support.play(g, [(seat, action)])
        sync()
    while not g.over:
        support.burn(g, wall=g.wall_count - 1 if g.wall_count else None)
        sync()
    return view


@pytest.mark.parametrize("robbers", [(2,), (2, 3)])
def test_table_view_through_a_robbed_added_kong(robbers: tuple[int, ...]) -> None:
    import tests.mjenv.test_blood_battle_scenarios as bb

    hands = list(bb.ROB_HANDS)
    hands[1] = "55m1s13699m44557p"
    g = bb.new_game("happy", hands, draws="5m 2s 3s 4s 5m", tail="6s")
    script = bb.dingque() + [(0, bb.D("5m")), (1, bb.PONG), (2, bb.PASS), (3, bb.PASS), (1, bb.D("1s")),
                             (2, bb.D("2s")), (3, bb.D("3s")), (0, bb.D("4s")), (1, bb.KONG("5m"))]
    script += [(s, bb.ROB if s in robbers else bb.PASS) for s in (2, 3)]
    view = follow(g, script)
    assert [s for s in range(4) if view.won_tiles[s]] == list(robbers)
    assert view.melds[1][0][0] == "pong"  # the robbed kong is void: the 碰 stays


def test_table_view_through_two_winners_on_one_discard() -> None:
    import tests.mjenv.test_blood_battle_scenarios as bb

    g = bb.new_game("qq", bb.MULTI_HANDS, draws=bb.MULTI_DRAWS)
    view = follow(g, bb.dingque() + bb.MULTI_ROUND + [(1, bb.HU), (2, bb.PASS), (3, bb.HU)])
    assert view.won_tiles[1][:1] == view.won_tiles[3][:1] == [tiles.parse_tile("5m")]


def test_table_view_through_a_joy_rob_and_its_bird() -> None:
    import tests.mjenv.test_joy_mahjong_scenarios as joy

    g = joy.new_game(joy.ROB_HANDS, draws="6m 7s C F P 6m 2p")
    view = follow(g, [(0, joy.D("6m")), (1, joy.PASS), (2, joy.PONG), (2, joy.D("E")), (3, joy.D("C")),
                      (0, joy.D("F")), (1, joy.D("P")), (2, joy.KONG("6m")), (1, joy.ROB)])
    assert (view.bird, view.bird_seat) == (tiles.parse_tile("2p"), 1)
    assert view.wild is not None and view.indicator is not None


# ---------------------------------------------------------------- hostile text, large logs


HOSTILE = ["<!--<script>", "</script>", "<script>", "<!--", "-->"]
"""Strings that, unescaped inside the page's script element, end it early or keep it open."""


def _with_header(path: Path, out: Path, **fields: Any) -> Path:
    """A copy of a log with ``fields`` changed in every header (free text: the log still verifies)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["type"] == "header":
            rec.update(fields)
        lines.append(json.dumps(rec, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.parametrize("text", HOSTILE)
def test_a_page_with_html_in_the_free_text_of_its_log_renders(logs: dict[str, Path], tmp_path: Path, text: str) -> None:
    agents = [f"{text}a\u2028", f"b{text}", "&amp; c", "d>"]
    path = _with_header(logs["blood_battle"], tmp_path / "odd.jsonl", agents=agents, preset=f"happy{text}")
    replay.verify_log(path)
    data = view_data(path)
    page = render_html(data)
    frames = data["hands"][0]["frames"]
    got = drive(page, 3, tmp_path)
    assert got["errors"] == []
    assert got["frames"][0]["events"] == len(frames)  # every event listed
    assert got["frames"][3]["pos"].startswith(f"step 4 / {len(frames)}")
    assert got["frames"][0]["agents"] == "agents: " + ", ".join(f"P{s} {a}" for s, a in enumerate(agents))
    assert got["frames"][0]["title"].endswith(f"happy{text}")  # the preset, shown as text
    embedded = re.search(r'<script id="mjenv-data" type="application/json">(.*?)</script>', page, re.S).group(1)
    assert not set("<>&\u2028") & set(embedded)  # all of them written as JSON escapes


def test_view_chooses_hands_and_numbers_them_as_in_the_log(logs: dict[str, Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "page.html"
    assert main(["view", str(logs["joy_mahjong"]), "-o", str(out), "--hands", "2:3"]) == 0
    assert "2 hand(s) (hands 2-3 of 4)" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r'type="application/json">(.*?)</script>', page, re.S).group(1))
    assert [h["number"] for h in data["hands"]] == [2, 3] and data["log_hands"] == 4
    everything = view_data(logs["joy_mahjong"])
    assert data["hands"] == everything["hands"][1:3]
    got = drive(page, 0, tmp_path)
    assert got["errors"] == [] and " · hand 2 of 4 · " in got["frames"][0]["subtitle"]
    for bad in ("0", "3:2", "x", "1:y"):
        with pytest.raises(SystemExit) as exit_:
            main(["view", str(logs["joy_mahjong"]), "-o", str(out), "--hands", bad])
        assert exit_.value.code == 2
    assert main(["view", str(logs["joy_mahjong"]), "-o", str(out), "--hands", "5:"]) == 2
    assert "chooses no hand" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == page  # the refused commands left the page


def test_view_refuses_a_log_of_more_hands_than_a_page_shows_unless_chosen(logs: dict[str, Path], tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(viewer, "MAX_HANDS", 3)  # the log has four hands
    out = tmp_path / "page.html"
    assert main(["view", str(logs["blood_battle"]), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "holds 4 hands, more than the 3 a page shows" in err and "--hands 1:3" in err and "Traceback" not in err
    assert os.listdir(tmp_path) == []  # nothing written, no temporary file
    assert main(["view", str(logs["blood_battle"]), "-o", str(out), "--hands", "1:4"]) == 0
    assert "4 hand(s), " in capsys.readouterr().out


def test_view_memory_does_not_grow_with_the_log(logs: dict[str, Path], tmp_path: Path) -> None:
    """The page is written one hand at a time: the memory peak of a log of 24 hands is about that
    of one of 4 (it was six times as large when the whole log was held, several times over)."""
    import tracemalloc

    text = logs["blood_battle"].read_text(encoding="utf-8")
    peaks = []
    for copies in (1, 6):
        path = tmp_path / f"x{copies}.jsonl"
        path.write_text(text * copies, encoding="utf-8")
        tracemalloc.start()
        viewer.write_view(path, tmp_path / f"x{copies}.html")
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.3 * peaks[0], peaks
