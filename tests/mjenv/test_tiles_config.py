"""Tile notation (mjenv/tiles.py) and rule options (presets, overrides, validation; rule IDs:
docs/rules-blood-battle.md)."""

import dataclasses

import numpy as np
import pytest

from mjenv import tiles
from mjenv.config import BLOOD_BATTLE_PRESETS, BloodBattleRules, blood_battle_rules, load_rules_file
from mjenv.melds import Meld, parse_meld


@pytest.mark.parametrize("text, expected", [
    ("123m", [0, 1, 2]),
    ("19p", [9, 17]),
    ("55s", [22, 22]),
    ("ESWNCFP", [27, 28, 29, 30, 31, 32, 33]),
    ("1234567z", [27, 28, 29, 30, 33, 32, 31]),  # Tenhou order: 5z 白, 6z 发, 7z 中
    ("18f", [34, 41]),
    ("2244552299万1199筒", [1, 1, 3, 3, 4, 4, 1, 1, 8, 8, 9, 9, 17, 17]),
    ("3饼4条5索", [11, 21, 22]),
    ("五万 东 红中 白板 春", [4, 27, 31, 33, 34]),
    ("1m 2m,3m", [0, 1, 2]),
])
def test_parse(text, expected):
    assert tiles.parse(text) == expected


@pytest.mark.parametrize("text, pos, reason", [
    ("123m4x5p", 5, "unknown tile character 'x'"),
    ("123", 0, "digits without a suit letter"),
    ("12 3m", 0, "digits without a suit letter"),
    ("m", 0, "no digits before it"),
    ("0m", 0, "rank 0"),
    ("8z", 0, "honours are 1z-7z"),
    ("9f", 0, "flowers are 1f-8f"),
    ("11mE2", 4, "digits without a suit letter"),
])
def test_malformed_strings_point_at_the_character(text, pos, reason):
    with pytest.raises(tiles.TileError, match=reason) as err:
        tiles.parse(text)
    assert err.value.pos == pos
    caret_line = str(err.value).splitlines()[-1]
    assert caret_line.index("^") - 2 == pos  # the caret sits under the offending character


def test_format_round_trip():
    rng = np.random.default_rng(0)
    for _ in range(200):
        kinds = sorted(rng.integers(0, 42, size=14).tolist())
        assert tiles.parse(tiles.fmt(kinds)) == kinds
    assert tiles.fmt(tiles.counts_of("5m1m9pE")) == "15m9pE"
    assert tiles.name_zh(4) == "五万" and tiles.name_zh(13) == "五筒" and tiles.name_zh(31) == "中"
    assert tiles.show([0, 27], "unicode") == "\U0001F007\U0001F000"
    with pytest.raises(ValueError, match="flowers"):
        tiles.counts_of("1m1f")


def test_melds():
    assert parse_meld("pong:5p") == Meld("pong", 13)
    assert parse_meld("ankan:9s").kinds() == [26] * 4
    assert parse_meld("chow:345m") == Meld("chow", 2)
    assert str(parse_meld("addkong:1m")) == "addkong:1m"
    for bad in ("pung:5p", "pong5p", "chow:346m", "pong:56p", "chow:89m1p"):
        with pytest.raises(ValueError, match="malformed meld"):
            parse_meld(bad)


@pytest.mark.parametrize("preset", sorted(BLOOD_BATTLE_PRESETS))
def test_preset_files_equal_named_presets(preset):
    spec = load_rules_file(f"configs/blood_battle_{preset}.yaml")
    assert spec["game"] == "blood_battle" and spec["preset"] == preset
    assert blood_battle_rules(preset, **spec["rules"]) == blood_battle_rules(preset)
    # the file lists every field, so a reader sees the whole rule set
    assert set(spec["rules"]) == {f.name for f in dataclasses.fields(BloodBattleRules)}


def test_presets_differ_where_the_seeds_do():
    happy, qq = blood_battle_rules("happy"), blood_battle_rules("qq")
    assert (happy.direct_kong_units, qq.direct_kong_units) == (2, 1)  # S5
    assert (happy.self_draw_bonus, qq.self_draw_bonus) == ("add_fan", "add_base")  # S9
    assert (happy.flower_pig_points, qq.flower_pig_points) == (6 * 32, 6 * 16)  # S15.1
    assert not happy.gang_pao_transfer and qq.gang_pao_transfer  # S12
    assert not happy.forced_win_last_four and qq.forced_win_last_four  # S13


@pytest.mark.parametrize("overrides, exc, field", [
    ({"nope": 1}, ValueError, "nope"),
    ({"cap_fan": 0}, ValueError, "cap_fan"),
    ({"cap_fan": 6.0}, TypeError, "cap_fan"),
    ({"rake": -5}, ValueError, "rake"),
    ({"self_draw_bonus": "double"}, ValueError, "self_draw_bonus"),
    ({"forced_win_last_four": "yes"}, TypeError, "forced_win_last_four"),
])
def test_bad_overrides(overrides, exc, field):
    with pytest.raises(exc, match=field):
        blood_battle_rules("qq", **overrides)


def test_override_by_name():
    r = blood_battle_rules("happy", cap_fan=8, room_coefficient=200)
    assert r.cap_fan == 8 and r.room_coefficient == 200 and r.flower_pig_points == 6 * 128


def test_bad_rules_files(tmp_path):
    cases = {
        "list.yaml": "- 1\n- 2\n",
        "nogame.yaml": "preset: qq\n",
        "extra.yaml": "game: blood_battle\npreset: qq\ncolour: red\n",
        "rules.yaml": "game: blood_battle\npreset: qq\nrules: [1]\n",
    }
    for name, text in cases.items():
        p = tmp_path / name
        p.write_text(text)
        with pytest.raises(ValueError, match=name):
            load_rules_file(p)
