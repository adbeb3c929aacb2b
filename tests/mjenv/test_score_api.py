"""The public scoring API ``mjenv.score`` and the ``mjenv score`` command (rule IDs:
docs/rules-blood-battle.md, docs/rules-joy-mahjong.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import mjenv
from mjenv.cli import main
from mjenv.scoring import score

KEYS = {"fans", "total_fan", "capped_fan", "multiplier", "X"}


def test_default_hand() -> None:
    # Defaults: happy (as every command), 11224444557799m on 9m, discard → 清龙七对 6 (根 1 - 1) → 6·32.
    result = score()
    assert [(f.name, f.name_en, f.fan) for f in result.fans] == [
        ("清龙七对", "full flush dragon seven pairs", 6)]
    assert (result.total_fan, result.capped_fan, result.multiplier, result.X) == (6, 6, 32, 192)
    assert mjenv.score is score


def test_b3_hand_level_example() -> None:
    # B3: 对对胡 self-drawn with add_base → 6·(2+1) = 18 per loser (54 from three).
    result = score(hand="111222444m33399p", win_tile="9p", preset="qq", self_drawn=True)
    assert result.to_dict() == {
        "fans": [{"name": "对对胡", "name_en": "all pungs", "fan": 2},
                 {"name": "自摸加底", "name_en": "self-draw bonus base", "fan": 0}],
        "total_fan": 2, "capped_fan": 2, "multiplier": 3, "X": 18,
    }
    assert 3 * result.X == 54


@pytest.mark.parametrize("kwargs, total, X", [
    # happy 杠上花 with a declared kong: 对对胡 2 + 根 1 + 杠上花 1 + 自摸加番 1 = 5 → 96.
    (dict(hand="111222m33399p", win_tile="9p", melds=["kong:4m"], preset="happy",
          self_drawn=True, after_kong=True), 5, 96),
    # A melds string alone is one meld; addkong/ankan count 3 slots like kong.
    (dict(hand="111222m33399p", win_tile="3p", melds="ankan:4m", preset="happy"), 3, 24),
    (dict(hand="111222m33399p", win_tile="3p", melds=("addkong:4m",), preset="happy",
          gen_counts_kongs=False), 2, 12),
    # Rule override: cap_fan=8 lets 清龙七对 6 + 根 1 = 7 through → 384.
    (dict(hand="11114444557799m", win_tile="9m", cap_fan=8), 7, 384),
    # 抢杠胡 on a 平胡: 2 fan → 12; void of the absent suit is fine (Chinese suit name too).
    (dict(hand="23445677p345789s", win_tile="7p", rob_kong=True, void="m"), 2, 12),
    (dict(hand="23445677p345789s", win_tile="7p", void="万"), 1, 6),
    # 天胡 in qq: 6 fan ×32 + 1 → 198; last_tile adds nothing.
    (dict(hand="23445677p345789s", win_tile="7p", first_turn=True, dealer=True,
          self_drawn=True, last_tile=True, preset="qq"), 6, 198),
    # Chinese tile notation is accepted.
    (dict(hand="一万一万一万二万二万二万四万四万四万三筒三筒三筒九筒九筒", win_tile="九筒"), 2, 12),
])
def test_score_variants(kwargs: dict, total: int, X: int) -> None:
    result = score(**kwargs)
    assert result.total_fan == total
    assert result.X == X


@pytest.mark.parametrize("kwargs, message", [
    (dict(hand="1122x4444557799m"), "unknown tile character"),
    (dict(hand="11224444557799"), "digits without a suit"),
    (dict(win_tile="3m"), "win tile 3m is not in the hand"),
    (dict(win_tile="9m9m"), "exactly one tile"),
    (dict(hand="1122444455779m"), "wrong tile count: 13 concealed"),
    (dict(hand="11224444557799m", melds=["pong:3p"]), "wrong tile count: 14 concealed"),
    (dict(hand="55555m111222333m", win_tile="5m"), "more than four copies of 5m"),
    (dict(hand="55p123456789m", win_tile="5p", melds=["pong:5p"]), "more than four copies of 5p"),
    (dict(hand="13579m113357799p", win_tile="1m"), "not a winning hand"),
    (dict(hand="111222444m33399p", win_tile="9p", void="p"), "void suit p"),
    (dict(hand="123m456p789s11122s", win_tile="2s"), "three suits"),
    (dict(hand="123m456m789p22p", win_tile="2p", melds=["pong:9s"]), "three suits"),
    (dict(hand="123456789mEEE22m", win_tile="E"), "no honours"),
    (dict(hand="12345678999m", win_tile="9m", melds=["chow:123p"]), "no chow"),
    (dict(hand="111222444m33399p", win_tile="9p", rob_kong=True, self_drawn=True), "rob_kong"),
    (dict(first_turn=True, dealer=True), "天胡"),
    (dict(game="joy_mahjong", void="m"), r"option\(s\) \['void'\] for game 'joy_mahjong'"),
    (dict(wild="6m"), r"option\(s\) \['wild'\] for game 'blood_battle'"),
    (dict(game="riichi"), "unknown game"),
    (dict(no_such_rule=1), "unknown rule field"),
    (dict(preset="tokyo"), "unknown preset"),
    (dict(melds=["pung:5p"]), "malformed meld"),
    (dict(void="x"), "void must be one of"),
    (dict(hand="11224444557799m1f"), "flowers"),
    # Every argument of the wrong type is refused (a non-bool flag would count as true).
    (dict(hand=None), "hand must be a string in tile notation"),
    (dict(hand=123), "hand must be a string"),
    (dict(win_tile=None), "win_tile must be a string"),
    (dict(melds=None), "melds must be a meld string or a list"),
    (dict(melds=5), "melds must be a meld string or a list"),
    (dict(melds=["pong:5p", 1]), "each meld must be a string"),
    (dict(game=["blood_battle"]), "unknown game"),
    (dict(preset=["qq"]), "preset must be a preset name"),
    (dict(self_drawn="no"), "self_drawn must be True or False, got str 'no'"),
    (dict(after_kong=1), "after_kong must be True or False"),
    (dict(rob_kong=None), "rob_kong must be True or False"),
    (dict(last_tile="yes"), "last_tile must be True or False"),
    (dict(first_turn="no"), "first_turn must be True or False"),
    (dict(dealer=1), "dealer must be True or False"),
    (dict(void=1.0), "void must be one of"),
    (dict(cap_fan="8"), "rule field 'cap_fan' must be int"),
    (dict(gen_counts_kongs="false"), "rule field 'gen_counts_kongs' must be bool"),
    (dict(game="joy_mahjong", wild=5), "wild must be a string"),
    (dict(game="joy_mahjong", fourth_tile="no"), "fourth_tile must be True or False"),
    (dict(game="joy_mahjong", flowers="2"), "flowers must be 0..8"),
    (dict(game="joy_mahjong", seat_wind=None), "seat_wind must be one of"),
    (dict(game="joy_mahjong", room=1), "rule field 'room' must be str"),
    (dict(game="joy_mahjong", self_drawn="no"), "self_drawn must be True or False"),
    # 杠上花 / 杠上开花 (a self-draw on a kong replacement) needs a declared kong (S9, J9).
    (dict(hand="11m44m66m99m22p55p88p", win_tile="8p", self_drawn=True, after_kong=True,
          preset="happy"), "杠上花.*declares no kong"),
    (dict(hand="111222m33399p", win_tile="9p", melds=["pong:4m"], self_drawn=True,
          after_kong=True), "杠上花.*declares no kong"),
    (dict(game="joy_mahjong", hand="123m456p789sEEE11s", win_tile="1s", self_drawn=True,
          after_kong=True), "杠上开花.*declares no kong"),
])
def test_score_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        score(**kwargs)


def test_numpy_bools_are_flags() -> None:
    assert score(self_drawn=np.bool_(True)).X == score(self_drawn=True).X


# ---------------------------------------------------------------- CLI


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["score", "--hand", "111222444m33399p", "--win-tile", "9p", "--self-drawn",
               "--preset", "qq", "--json"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == KEYS
    assert all(set(f) == {"name", "name_en", "fan"} for f in data["fans"])
    assert [f["name"] for f in data["fans"]] == ["对对胡", "自摸加底"]
    assert (data["total_fan"], data["capped_fan"], data["multiplier"], data["X"]) == (2, 2, 3, 18)


def test_cli_table(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["score", "--game", "blood_battle", "--hand", "111222m33399p", "--win-tile", "9p",
               "--meld", "kong:4m", "--preset", "happy", "--self-drawn", "--after-kong"])
    assert rc == 0
    out = capsys.readouterr().out
    for text in ("对对胡", "all pungs", "根", "root", "杠上花", "win on kong replacement",
                 "自摸加番", "total fan 5", "X = 96"):
        assert text in out


@pytest.mark.parametrize("extra, X", [
    (["--rule", "cap_fan=8"], 384),  # 7 fan uncapped
    (["--rule", "cap_fan=8", "--rule", "gen_counts_kongs=false"], 384),  # fours in hand count
    (["--rule", "base_points=10"], 320),  # capped 6 → 10·32
    (["--rule", "self_draw_bonus=none", "--self-drawn"], 192),  # str value
    (["--self-drawn", "--preset", "qq"], 198),  # qq add_base: 6·(32+1)
    (["--self-drawn"], 192),  # happy (the default) add_fan: 7 fan, capped at 6
    (["--void", "p", "--rob-kong"], 192),
    (["--first-turn", "--dealer", "--self-drawn", "--last-tile", "--preset", "qq"], 198),
])
def test_cli_options(capsys: pytest.CaptureFixture[str], extra: list[str], X: int) -> None:
    rc = main(["score", "--hand", "11114444557799m", "--win-tile", "9m", "--json", *extra])
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["X"] == X


@pytest.mark.parametrize("argv, message", [
    (["--hand", "11224444557799m", "--win-tile", "3m"], "win tile 3m is not in the hand"),
    (["--hand", "13579m113357799p", "--win-tile", "1m"], "not a winning hand"),
    (["--hand", "11224444557799m", "--win-tile", "9m", "--void", "m"], "void suit m"),
    (["--hand", "11224444557799m", "--win-tile", "9m", "--rule", "foo=1"], "unknown rule field"),
    (["--hand", "11224444557799m", "--win-tile", "9m", "--rule", "cap_fan=x"], "cap_fan"),
    (["--hand", "11224444557799m", "--win-tile", "9m", "--game", "go"], "unknown game"),
    (["--hand", "11224444557799m", "--win-tile", "9m", "--self-drawn", "--rob-kong"], "rob_kong"),
    (["--hand", "11224444557799m", "--win-tile", "9m", "--self-drawn", "--after-kong"],
     "declares no kong"),
])
def test_cli_invalid_exits_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(["score", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err


def test_cli_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["score", "--hand", "11m", "--win-tile", "1m", "--rule", "cap_fan"])
    assert exc.value.code == 2
    assert "KEY=VALUE" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def test_python_m_mjenv() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mjenv", "score", "--hand", "111222444m33399p", "--win-tile", "9p",
         "--self-drawn", "--preset", "qq", "--json"],
        capture_output=True, text=True, encoding="utf-8", timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == KEYS and data["X"] == 18
    bad = subprocess.run(
        [sys.executable, "-m", "mjenv", "score", "--hand", "13579m113357799p", "--win-tile", "1m"],
        capture_output=True, text=True, encoding="utf-8", timeout=60, check=False)
    assert bad.returncode == 2
    assert "not a winning hand" in bad.stderr
