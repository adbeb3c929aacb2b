"""Issue 47 item 4: every integer rule option has an upper bound, so that no bean, payment or
balance overflows the compiled engine's int64; beyond it the rules are refused naming the field
(API and ``--rule``), within it both engines agree exactly."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agents.arena import run_arena
from mjenv import blood_battle_v0, joy_mahjong_v0
from mjenv.config import BLOOD_LIMITS, JOY_LIMITS

_NEEDS = {"escape_factor": {"escape": True}, "escape_min_penalty": {"escape": True},
          "escape_min_compensation": {"escape": True}, "escape_x": {"escape": True},
          "min_beans": {"bankroll": 10**15}}
HUGE = [2**63 - 1, 2**62, 2**70]


@pytest.mark.parametrize("game, field", [("blood_battle", f) for f in BLOOD_LIMITS] +
                         [("joy_mahjong", f) for f in JOY_LIMITS])
def test_every_integer_field_has_an_upper_bound(game, field):
    limit = (BLOOD_LIMITS if game == "blood_battle" else JOY_LIMITS)[field]
    raw_env = blood_battle_v0.raw_env if game == "blood_battle" else joy_mahjong_v0.raw_env
    extra = dict(_NEEDS.get(field, {}))
    for value in (limit + 1, *HUGE):
        if field == "min_beans":
            extra["bankroll"] = value  # min_beans may not exceed the bankroll; both over the limit
        with pytest.raises(ValueError, match=repr(field) if field != "min_beans" else "'(bankroll|min_beans)'"):
            raw_env(**{**extra, field: value})


def test_four_bankrolls_each_bounded():
    with pytest.raises(ValueError, match="'bankroll'"):
        blood_battle_v0.raw_env(bankroll=[1, 2, 3, 2**63 - 1])


def test_combined_worst_hand_bounded_naming_the_fields():
    with pytest.raises(ValueError, match="room_coefficient, base_points, cap_fan"):
        blood_battle_v0.raw_env(room_coefficient=10**6, base_points=1000, cap_fan=30)
    with pytest.raises(ValueError, match="match_hands=4096"):
        blood_battle_v0.raw_env(room_coefficient=10**6, cap_fan=26, match_hands=4096)
    blood_battle_v0.raw_env(room_coefficient=10**6, cap_fan=26)  # one hand of it is fine


def test_rule_flag_beyond_int64_exits_2_naming_the_field():
    proc = subprocess.run([sys.executable, "-m", "mjenv", "eval", "--rule", "bankroll=1180591620717411303424",
                           "--deals", "1", "--no-progress"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "'bankroll'" in proc.stderr


@pytest.mark.parametrize("game, options, least", [
    ("blood_battle", dict(bankroll=[10**15, 10**15, 7, 10**15], escape=True, escape_min_penalty=10**8,
                          escape_min_compensation=10**8), 10**8),
    ("blood_battle", dict(room_coefficient=10**6, rake=10**12, escape=True, escape_factor=1000), 10**12),
    ("joy_mahjong", dict(room_coefficient=10**6, escape=True, escape_x=10**6, rake=10**12), 10**12),
    ("joy_mahjong", dict(bankroll=[10**15, 1, 10**15, 5], escape=True), 1),
])
def test_both_engines_agree_at_the_bounds(game, options, least):
    """Random agents escape often: the huge escape amounts and balances are all settled."""
    records = [run_arena(game, ["random", "random"], deals=3, seed=3, env_options=options, progress=False,
                         backend=backend).records for backend in ("reference", "compiled")]
    assert records[0] == records[1]
    assert max(abs(b) for r in records[0] for b in r.beans) >= least  # the large amounts were paid
