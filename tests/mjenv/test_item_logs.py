"""Replay logs, narration and the viewer with the rule option items (S17 of
docs/rules-blood-battle.md): every use and its private result is a log line that re-simulation
checks; the narration and the viewer show the result to its user only.

The log is random play with ``items=2`` on the readable engine (seeds chosen so that every item
is used, 乾坤大挪移 included); the viewer's one-seat view is checked in Chromium as
tests/mjenv/test_viewer.py checks it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mjenv import blood_battle_v0, narration, replay, tiles
from mjenv.actions import ITEM_NAMES_ZH
from mjenv.cli import main
from mjenv.config import ITEMS
from mjenv.viewer import TableView, render_html, view_data
from tests.support import edit_line, expect_log_error

SEEDS = (0, 1, 2)
RESULT_FIELDS = {"toutian": {"give", "take", "index"}, "yihua": {"give", "take", "index"},
                 "qianliyan": {"kind", "part", "wall"}, "shunfeng": {"seen"}}


def play_logged(path: Path, seeds: tuple[int, ...] = SEEDS, **options: Any) -> list[list[dict[str, Any]]]:
    """Random legal play of one hand per seed, logged to ``path``; each hand's engine events."""
    env = blood_battle_v0.raw_env(log_path=path, **{"items": 2, **options})
    rng = np.random.default_rng(7)
    events = []
    for seed in seeds:
        env.reset(seed=seed)
        while not env.game.over:
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
        events.append(list(env.game.events))
    return events


@pytest.fixture(scope="module")
def items_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[dict[str, Any]]]]:
    path = tmp_path_factory.mktemp("items") / "hands.jsonl"
    return path, play_logged(path)


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


# ---------------------------------------------------------------- the log


def test_an_items_log_records_every_use_and_result_and_verifies(items_log, capsys) -> None:
    path, events = items_log
    hands = replay.read_log(path)
    assert len(hands) == len(SEEDS)
    for hand, evs in zip(hands, events):
        assert hand.header.record["options"]["items"] == [dict.fromkeys(ITEMS, 2)] * 4
        logged = [ll.record for ll in hand.lines if ll.record["type"] != "action"]
        assert logged == evs  # every event of the engine, item results included, in order
    lines = [ll.record for hand in hands for ll in hand.lines]
    items = [r for r in lines if r["type"] == "item"]
    assert {r["item"] for r in items} == set(RESULT_FIELDS)
    for r in items:
        assert set(r) == {"type", "actor", "item"} | RESULT_FIELDS[r["item"]]
    deals = [r for r in lines if r["type"] == "qiankun_deal"]
    assert deals and all(sorted(r["wall"]) == sorted(h.lines[0].record["wall"]) for r, h in zip(deals, hands))
    names = {r["name"] for r in lines if r["type"] == "action"}
    assert {"item qiankun", "item toutian", "item yihua", "item qianliyan", "item shunfeng"} <= names
    assert any(n.startswith("give ") for n in names) and any(n.startswith("name ") for n in names)
    result = replay.verify_log(path)
    assert sum(result.beans) == 0 and len(result.hands) == len(SEEDS)
    assert main(["replay", "--render", str(path)]) == 0
    out = capsys.readouterr().out
    assert "uses 顺风耳: the next draw is" in out and "乾坤大挪移: player_" in out and "OK, 3 hand(s)" in out


@pytest.mark.parametrize("item, change", [
    ("shunfeng", lambda r: r.update(seen="9s" if r["seen"] != "9s" else "1s")),
    ("qianliyan", lambda r: r.update(part=r["part"] + 1)),
    ("toutian", lambda r: r.update(take="9s" if r["take"] != "9s" else "1s")),
    ("yihua", lambda r: r.update(index=r["index"] - 1)),
])
def test_an_edited_item_result_is_a_mismatch_at_its_line(items_log, tmp_path, item, change) -> None:
    lines = lines_of(items_log[0])
    nth = [json.loads(t).get("item") for t in lines if json.loads(t)["type"] == "item"].index(item)
    bad, at = edit_line(lines, "item", change, nth)
    expect_log_error(tmp_path, bad, at, replay.ReplayMismatch, "item differs", check=replay.verify_log)


def test_an_edited_qiankun_deal_is_a_mismatch(items_log, tmp_path) -> None:
    def swap(r: dict[str, Any]) -> None:  # two tiles of different kinds change places: still 108 tiles
        w = r["wall"]
        j = next(j for j in range(1, len(w)) if w[j] != w[0])
        w[0], w[j] = w[j], w[0]

    bad, at = edit_line(lines_of(items_log[0]), "qiankun_deal", swap)
    expect_log_error(tmp_path, bad, at, replay.ReplayMismatch, "qiankun_deal differs", check=replay.verify_log)


@pytest.mark.parametrize("change, words", [
    (lambda r: r.pop(next(iter(RESULT_FIELDS[r["item"]]))), "line has the fields"),
    (lambda r: r.update(extra=1), "unexpected field"),
    (lambda r: r.update(item="jinshouzhi"), "field 'item' must be one of toutian"),
    (lambda r: r.update(actor=4), "field 'actor' must be a seat"),
])
def test_item_lines_are_format_checked(items_log, tmp_path, change, words) -> None:
    bad, at = edit_line(lines_of(items_log[0]), "item", change)
    expect_log_error(tmp_path, bad, at, replay.LogFormatError, words)


def test_the_reference_backend_keeps_logs_with_items(tmp_path) -> None:
    from mjenv import vector

    venv = vector.make("blood_battle", 1, backend="reference", items=2)
    venv.backend.keep_logs()
    venv.reset(seed=4)
    rng = np.random.default_rng(7)
    while True:
        _, _, term, _, _ = venv.step(np.array([rng.choice(np.flatnonzero(venv.backend.mask[0]))]))
        if term[0]:
            break
    lines = venv.backend.hand_logs.pop(0)
    assert any(r["type"] == "item" for r in lines)
    path = tmp_path / "hand.jsonl"
    replay.append_hand(path, lines)
    assert len(replay.verify_log(path).hands) == 1


# ---------------------------------------------------------------- narration and the viewer


def test_the_narration_tells_a_result_to_its_user_only(items_log) -> None:
    items = [ll.record for hand in replay.read_log(items_log[0]) for ll in hand.lines if ll.record["type"] == "item"]
    for r in items:
        name = ITEM_NAMES_ZH[ITEMS.index(r["item"])]
        public = f"player_{r['actor']} uses {name}"
        assert narration.describe_event(r, viewer=(r["actor"] + 1) % 4) == public
        full = narration.describe_event(r, viewer=r["actor"])
        assert full == narration.describe_event(r)
        assert full.startswith(public + ": ") or full.startswith(public + " on ")
        shown = {"shunfeng": ["seen"], "qianliyan": ["kind"], "toutian": ["give", "take"], "yihua": ["give", "take"]}
        for key in shown[r["item"]]:
            assert tiles.name_zh(tiles.parse_tile(r[key])) in full
    deal = next(ll.record for ll in replay.read_log(items_log[0])[0].lines if ll.record["type"] == "qiankun_deal")
    assert narration.describe_event(deal, viewer=0) == narration.describe_event(deal)  # who used it is public


def test_the_table_view_follows_swaps_and_the_qiankun_deal(items_log) -> None:
    """Rebuilt from the events alone, the table agrees with the re-simulated engine after every
    event (hands with the swapped tiles, the 乾坤大挪移 deal) and counts each seat's uses."""
    path = items_log[0]
    for hand in replay.read_log(path):
        view = TableView(hand.lines[0].record, joy=False)
        seen = {"events": 1, "synced": 0}  # start_hand made the view

        def on_line(ll: replay.LogLine, game: Any) -> None:
            if ll.record["type"] == "action" or ll.line == hand.lines[0].line:
                return
            view.apply(ll.record)
            seen["events"] += 1
            if seen["events"] == len(game.events) and game.phase != "qiankun":
                seen["synced"] += 1
                for s in range(4):
                    assert view.concealed(s)[:27] == list(game.hands[s])[:27], (ll.line, s)
                assert view.wall == game.wall_count
                assert ll.record["type"] != "item" or view.drawn[ll.record["actor"]] == game.drawn

        replay.replay_hand(path, hand, on_line)
        assert seen["synced"] > 20
        uses = view.snapshot()["items"]
        counted = [[sum(1 for ll in hand.lines if ll.record.get("name") == f"item {item}" and ll.record["actor"] == s)
                    for item in ITEMS] for s in range(4)]
        assert [[u.get(item, 0) for item in ITEMS] for u in uses] == counted


def test_a_one_seat_view_shows_item_results_of_that_seat_only(items_log, tmp_path) -> None:
    from tests.mjenv.test_viewer import drive

    data = view_data(items_log[0], hands=(1, 1))
    frames = data["hands"][0]["frames"]
    got = drive(render_html(data), 0, tmp_path)
    assert got["errors"] == []
    hand = replay.read_log(items_log[0])[0]
    items = [(i, ll.record) for i, ll in enumerate(hand.lines) if ll.record["type"] == "item"]
    assert {r["actor"] for _, r in items} >= {2} and {r["actor"] for _, r in items} - {2}
    for i, r in items:
        text = got["events_seat2"][i]
        public = f"player_{r['actor']} uses {ITEM_NAMES_ZH[ITEMS.index(r['item'])]}"
        if r["actor"] == 2:
            assert public in text and len(text) > len(public) + 8, text
        else:
            assert text.endswith(public), text
        assert frames[i]["table"]["items"][r["actor"]][r["item"]] >= 1


def test_a_person_plays_items_in_the_terminal_and_reads_their_results(tmp_path) -> None:
    """``mjenv play`` with items: a person who always takes the last listed action uses every item
    it may; the terminal tells its results, and the hand's log verifies."""
    from mjenv.play import run_play

    out: list[str] = []

    def last_listed(prompt: str) -> str:
        listing = out[max(i for i, line in enumerate(out) if line == "legal actions:"):]
        return str(max(int(line.split("]")[0].strip(" [")) for line in listing if line.lstrip().startswith("[")))

    result = run_play(seat=1, opponents="heuristic", seed=3, input_fn=last_listed,
                      print_fn=lambda *a: out.extend(" ".join(map(str, a)).split("\n")), items=1,
                      log_path=tmp_path / "hand.jsonl")
    assert result.finished
    told = [line for line in out if line.startswith("player_1 uses ")]
    assert {line.split(":")[0].split(" on ")[0][len("player_1 uses "):] for line in told} == {"顺风耳", "千里眼",
                                                                                            "移花接木", "偷天换日"}
    assert all(":" in line for line in told)  # the person's own results, told in full
    assert len(replay.verify_log(tmp_path / "hand.jsonl").hands) == 1
