"""Joy Mahjong replay logs: the env writes them, ``verify_log`` / ``mjenv replay`` check them."""

import json
from collections import Counter

import numpy as np
import pytest

import mjenv
from mjenv import blood_battle_v0, cli, joy_mahjong_v0
from mjenv.config import as_dict
from mjenv.engine.joy_mahjong import seeded_wall
from mjenv.replay import LogFormatError, ReplayMismatch, read_log, verify_log

L = joy_mahjong_v0.LAYOUT
CLAIMS = (L.HU, L.ROB_KONG, L.DIRECT_KONG, L.PONG, L.CHOW, L.CHOW + 1, L.CHOW + 2)


def _pick(mask: np.ndarray, rng: np.random.Generator, eager: bool) -> int:
    """A random legal action; ``eager`` takes 胡/抢杠/杠/碰/吃 and own kongs when legal."""
    legal = np.flatnonzero(mask)
    if eager:
        for a in CLAIMS:
            if mask[a]:
                return a
        kongs = legal[(legal >= L.KONG) & (legal < L.KONG + 34)]
        if kongs.size:
            return int(kongs[0])
    return int(legal[rng.integers(legal.size)])


def play_episode(e, seed: int, eager: bool = False, options: dict | None = None) -> tuple[list[int], int]:
    """Play one episode of a raw env; return each seat's summed rewards and the number of steps."""
    e.reset(seed=seed, options=options)
    rng = np.random.default_rng(seed + 1)
    totals, steps = [0] * 4, 0
    while not all(e.terminations.values()):
        e.step(_pick(e.game.legal_mask(), rng, eager))
        steps += 1
        for i, a in enumerate(e.possible_agents):
            totals[i] += e.rewards[a]
    return totals, steps


CONFIGS = [
    dict(room="popular"),
    dict(room="eight_fan", rake=2, room_coefficient=5),
    dict(room="no_fan", discard_payers="all_mcr", match_hands=4),
]


def test_round_trip_over_rooms(tmp_path):
    """Episodes over the three rooms and rule overrides: every log verifies, the logged bean
    tables add up to the rewards the env paid, and every Joy line type shows up."""
    kinds, games = Counter(), 0
    for c, config in enumerate(CONFIGS):
        path = tmp_path / f"config{c}.jsonl"
        e = joy_mahjong_v0.raw_env(log_path=str(path), **config)
        paid, steps = [0] * 4, 0
        for i in range(40):
            totals, n = play_episode(e, seed=1000 * c + 7 * i, eager=i % 4 != 0)
            paid = [p + t for p, t in zip(paid, totals)]
            steps += n
            games += 1

        def count(ll, game):
            """Tally the verified lines by type."""
            kinds[ll.record["type"]] += 1
            if ll.record.get("replacement"):
                kinds["replacement draw"] += 1

        result = verify_log(path, on_line=count)
        m = config.get("match_hands", 1)
        assert [h.hand_index for h in result.hands] == [k % m for k in range(40 * m)]
        assert {h.game for h in result.hands} == {"joy_mahjong"}
        assert result.beans == paid
        assert sum(h.actions for h in result.hands) == steps
    assert games == 120
    assert set(kinds) >= {"start_hand", "tsumo", "replacement draw", "action", "hua", "indicator",
                          "indicator_flower", "dahai", "chi", "pon", "daiminkan", "ankan", "kakan",
                          "hora", "bird", "pay", "ryukyoku", "end_hand"}
    assert "dingque" not in kinds


def test_header_names_the_game_and_start_hand_the_wind(tmp_path):
    path = tmp_path / "g.jsonl"
    e = joy_mahjong_v0.raw_env(room="eight_fan", rake=3, match_hands=2, log_path=path)
    _, steps = play_episode(e, seed=42)
    lines = [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines()]
    headers = [r for r in lines if r["type"] == "header"]
    assert headers[0] == {"type": "header", "game": "joy_mahjong", "preset": "standard",
                          "options": as_dict(e.rules), "seed": 42, "hand_index": 0,
                          "env_version": "joy_mahjong_v0", "mjenv_version": mjenv.__version__}
    assert headers[0]["options"]["room"] == "eight_fan" and headers[0]["options"]["rake"] == 3
    starts = [r for r in lines if r["type"] == "start_hand"]
    assert [s["prevailing_wind"] for s in starts] == [0, 0]  # a match starts in the East round
    assert len(starts[0]["wall"]) == 144
    actions = [r for r in lines if r["type"] == "action"]
    assert len(actions) == steps and all(r["name"] == e.action_name(r["action"]) for r in actions)
    # Deal, 补花 of the deal, then the 财神 indicator before the first decision.
    first = lines[:lines.index(actions[0])]
    assert [r["type"] for r in first[:2]] == ["header", "start_hand"]
    assert first[-1]["type"] == "indicator"


def test_scripted_wall_dealer_and_wind_replay(tmp_path):
    path = tmp_path / "g.jsonl"
    wall = list(reversed(seeded_wall(9)[0]))  # not the wall of seed 5
    e = joy_mahjong_v0.raw_env(log_path=path)
    play_episode(e, seed=5, options={"wall": wall, "dealer": 2, "prevailing_wind": 3})
    hand = read_log(path)[0]
    assert hand.lines[0].record == {"type": "start_hand", "dealer": 2, "wall": wall, "prevailing_wind": 3}
    assert verify_log(path).hands[0].dealer == 2


def test_one_log_may_hold_both_games(tmp_path):
    path = tmp_path / "mixed.jsonl"
    play_episode(blood_battle_v0.raw_env(log_path=path), seed=1)
    play_episode(joy_mahjong_v0.raw_env(log_path=path), seed=2)
    play_episode(blood_battle_v0.raw_env(preset="qq", log_path=path), seed=3)
    result = verify_log(path)
    assert [h.game for h in result.hands] == ["blood_battle", "joy_mahjong", "blood_battle"]


def test_no_log_without_log_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    e = joy_mahjong_v0.raw_env()
    play_episode(e, seed=1)
    assert e._log_actions is None
    assert list(tmp_path.iterdir()) == []


def test_bad_log_path_type_names_the_option():
    with pytest.raises(TypeError, match="log_path"):
        joy_mahjong_v0.env(log_path=3)


# ---------------------------------------------------------------- tampering


@pytest.fixture(scope="module")
def log_lines(tmp_path_factory) -> list[str]:
    """A Joy log of a few single hands (eager play) with flowers, claims, a win and its bird."""
    path = tmp_path_factory.mktemp("joylog") / "g.jsonl"
    e = joy_mahjong_v0.raw_env(log_path=path, rake=1)
    for seed in range(60):
        play_episode(e, seed=seed, eager=True)
        types = Counter(json.loads(t)["type"] for t in path.read_text(encoding="utf-8").splitlines())
        if types["bird"] and types["chi"] and types["hua"] and types["header"] >= 2:
            break
    assert types["bird"] and types["chi"] and types["hua"] and types["indicator"]
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _write(tmp_path, lines: list[str]):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _edit(lines: list[str], kind: str, change, nth: int = 0) -> tuple[list[str], int]:
    """Apply ``change`` to the nth line of ``kind``; return the new lines and its 1-based number."""
    idx = [i for i, t in enumerate(lines) if json.loads(t)["type"] == kind][nth]
    rec = json.loads(lines[idx])
    change(rec)
    out = list(lines)
    out[idx] = json.dumps(rec, ensure_ascii=False) + "\n"
    return out, idx + 1


def test_untampered_log_verifies(tmp_path, log_lines):
    result = verify_log(_write(tmp_path, log_lines))
    assert result.hands[-1].end_line == len(log_lines)
    assert "win" in {h.end_reason for h in result.hands}


@pytest.mark.parametrize("kind, change, message", [
    ("bird", lambda r: r.update(seat=(r["seat"] + 1) % 4), "bird differs: seat"),
    ("bird", lambda r: r.update(pai="P" if r["pai"] != "P" else "E"), "bird differs: pai"),
    ("hua", lambda r: r.update(pai="8f" if r["pai"] != "8f" else "7f"), "hua differs: pai"),
    ("indicator", lambda r: r.update(wild="1m" if r["wild"] != "1m" else "2m"), "indicator differs: wild"),
    ("chi", lambda r: r.update(consumed=r["consumed"][::-1]), "chi differs: consumed"),
    ("hora", lambda r: r.update(fan=r["fan"] + 1), "hora differs: fan"),
])
def test_changed_joy_line_is_caught(tmp_path, log_lines, kind, change, message):
    lines, n = _edit(log_lines, kind, change)
    with pytest.raises(ReplayMismatch, match=message) as err:
        verify_log(_write(tmp_path, lines))
    assert err.value.line == n


@pytest.mark.parametrize("kind", ["hua", "indicator", "bird", "chi"])
def test_deleted_joy_line_is_caught_at_its_place(tmp_path, log_lines, kind):
    idx = [i for i, t in enumerate(log_lines) if json.loads(t)["type"] == kind][0]
    with pytest.raises(ReplayMismatch) as err:
        verify_log(_write(tmp_path, log_lines[:idx] + log_lines[idx + 1:]))
    assert err.value.line == idx + 1


@pytest.mark.parametrize("kind, field, value, message", [
    ("hua", "pai", "5m", "field 'pai' must be a flower"),
    ("indicator_flower", "pai", "E", "field 'pai' must be a flower"),
    ("dahai", "pai", "9f", "field 'pai' must be a tile such as '5m' or 'E'"),
    ("chi", "consumed", "3p5p", "field 'consumed' must be a list of tiles"),
    ("bird", "seat", 4, "field 'seat' must be a seat"),
    ("hora", "fan", "8", "field 'fan' must be an int"),
    ("start_hand", "prevailing_wind", 7, "field 'prevailing_wind' must be a wind"),
])
def test_wrong_joy_field_types_name_the_line(tmp_path, log_lines, kind, field, value, message):
    if kind == "indicator_flower" and not any(json.loads(t)["type"] == kind for t in log_lines):
        kind, field = "hua", "pai"  # no flower was flipped as the indicator in this log
    lines, n = _edit(log_lines, kind, lambda r: r.update({field: value}))
    with pytest.raises(LogFormatError, match=message) as err:
        read_log(_write(tmp_path, lines))
    assert err.value.line == n


def test_line_types_belong_to_the_game_of_the_header(tmp_path, log_lines):
    lines = list(log_lines)
    lines[5] = json.dumps({"type": "dingque", "actor": 0, "suit": "m"}) + "\n"
    with pytest.raises(LogFormatError, match="unknown line type 'dingque'") as err:
        read_log(_write(tmp_path, lines))
    assert err.value.line == 6
    lines, n = _edit(log_lines, "start_hand", lambda r: r.pop("prevailing_wind"))
    with pytest.raises(LogFormatError, match="missing field 'prevailing_wind'") as err:
        read_log(_write(tmp_path, lines))
    assert err.value.line == n


def test_bad_joy_header(tmp_path, log_lines):
    lines, n = _edit(log_lines, "header", lambda r: r.update(game="blood_battle"))
    with pytest.raises(LogFormatError, match="env_version 'joy_mahjong_v0' is not 'blood_battle_v0'") as err:
        read_log(_write(tmp_path, lines))
    assert err.value.line == n
    lines, n = _edit(log_lines, "header", lambda r: r.update(game="riichi"))
    with pytest.raises(LogFormatError, match="game 'riichi' is not one of") as err:
        read_log(_write(tmp_path, lines))
    assert err.value.line == n
    lines, n = _edit(log_lines, "header", lambda r: r["options"].pop("room"))
    with pytest.raises(LogFormatError, match=r"missing \['room'\]") as err:
        read_log(_write(tmp_path, lines))
    assert err.value.line == n
    lines, n = _edit(log_lines, "header", lambda r: r["options"].update(room="vip"))
    with pytest.raises(LogFormatError, match="room") as err:
        verify_log(_write(tmp_path, lines))
    assert err.value.line == n
    lines, n = _edit(log_lines, "start_hand", lambda r: r["wall"].pop())
    with pytest.raises(LogFormatError, match="start_hand: a Joy Mahjong wall") as err:
        verify_log(_write(tmp_path, lines))
    assert err.value.line == n


def test_truncated_joy_log_names_the_line(tmp_path, log_lines):
    end = next(i for i, t in enumerate(log_lines) if json.loads(t)["type"] == "end_hand")
    with pytest.raises(LogFormatError, match="before end_hand") as err:
        read_log(_write(tmp_path, log_lines[:end]))
    assert err.value.line == end


# ---------------------------------------------------------------- CLI


def test_cli_exit_codes(tmp_path, log_lines, capsys):
    assert cli.main(["replay", str(_write(tmp_path, log_lines))]) == 0
    assert "verified" in capsys.readouterr().out

    lines, n = _edit(log_lines, "bird", lambda r: r.update(seat=(r["seat"] + 2) % 4))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines), encoding="utf-8")
    assert cli.main(["replay", str(bad)]) == 1
    assert f"mismatch at line {n}: bird differs: seat" in capsys.readouterr().err

    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(log_lines[:9]) + '{"type": "hua", "actor": 0\n', encoding="utf-8")
    assert cli.main(["replay", str(broken)]) == 2
    assert "malformed log at line 10: bad JSON" in capsys.readouterr().err

    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(log_lines[:12]), encoding="utf-8")
    assert cli.main(["replay", str(cut)]) == 2
    assert "malformed log at line 12:" in capsys.readouterr().err


def test_cli_render_shows_flowers_indicator_and_bird(tmp_path, log_lines, capsys):
    assert cli.main(["replay", "--render", str(_write(tmp_path, log_lines))]) == 0
    out = capsys.readouterr().out
    assert "风圈" in out and " 补花 " in out and "财神 indicator" in out
    assert " 吃 " in out and "-> 吃 (" in out and " 胡 " in out and "鸟 " in out
    hands = sum(1 for t in log_lines if json.loads(t)["type"] == "header")
    assert out.count("phase over") == hands
