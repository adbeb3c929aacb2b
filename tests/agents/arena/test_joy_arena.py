"""The duplicate arena and ``mjenv eval`` on Joy Mahjong."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.arena import ArenaResult, run_arena
from agents.base import RandomPolicy
from agents.arena.levels import level_title
from mjenv.cli import main

RAKE = 5
OPTIONS = {"room": "popular", "rake": RAKE}


@pytest.fixture(scope="module")
def one_vs_three() -> ArenaResult:
    """random vs 3 × random on Joy Mahjong, with a rake."""
    return run_arena(game="joy_mahjong", agents=["random", "random"], deals=16, seed=7,
                     env_options=OPTIONS, progress=False)


class CheckedRandom(RandomPolicy):
    """Random play that records every mask and checks its own choice against it."""

    def __init__(self) -> None:
        self.decisions = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        assert action_mask.dtype == np.int8 and action_mask.shape == (76,)
        a = super().act(observation, action_mask, rng)
        assert action_mask[a] == 1
        self.decisions += 1
        return a


def test_sets_share_a_wall_and_rotate_the_agents(one_vs_three: ArenaResult) -> None:
    res = one_vs_three
    assert len(res.records) == 4 * res.deals
    for deal in range(res.deals):
        recs = [r for r in res.records if r.deal == deal]
        assert len({r.wall_digest for r in recs}) == 1 and len({r.dealer for r in recs}) == 1
        assert sorted(r.lineup.index(0) for r in recs) == [0, 1, 2, 3]
    assert len({r.wall_digest for r in res.records}) == res.deals


def test_results_depend_on_the_seed_only_not_on_workers(one_vs_three: ArenaResult) -> None:
    pooled = run_arena(game="joy_mahjong", agents=["random", "random"], deals=16, seed=7,
                       env_options=OPTIONS, workers=2, progress=False)
    other = run_arena(game="joy_mahjong", agents=["random", "random"], deals=16, seed=8,
                      env_options=OPTIONS, progress=False)
    assert pooled.records == one_vs_three.records
    drop = ("elapsed_s", "workers")
    assert ({k: v for k, v in pooled.to_dict().items() if k not in drop}
            == {k: v for k, v in one_vs_three.to_dict().items() if k not in drop})
    assert other.records != one_vs_three.records


def test_every_set_is_zero_sum_minus_the_rake(one_vs_three: ArenaResult) -> None:
    res = one_vs_three
    for deal in range(res.deals):
        assert sum(sum(r.beans) for r in res.records if r.deal == deal) == 4 * (-4 * RAKE)
    np.testing.assert_allclose(res.per_set_means()[0] + 3 * res.per_set_means()[1], -4 * RAKE)
    assert res.to_dict()["check"] == {"all_seats_beans_per_hand": -4 * RAKE, "expected": -4 * RAKE}


def test_stats_use_joy_fans_and_levels(one_vs_three: ArenaResult) -> None:
    res = one_vs_three
    st = res.stats()
    wins = [w for r in res.records for w in r.wins]
    assert wins, "random play wins some of 64 Joy hands"
    # no cap (docs/rules-joy-mahjong.md#J4)
    assert all(isinstance(w[2], int) and w[2] >= 1 and w[3] == w[2] for w in wins)
    assert sum(s["wins"] for s in st.values()) == len(wins)
    for s in st.values():
        assert s["mean_capped_fan"] == s["mean_fan"]
        assert s["level"] == level_title("joy_mahjong", s["cumulative_beans"])
    d = json.loads(json.dumps(res.to_dict(), allow_nan=False, ensure_ascii=False))
    assert d["game"] == "joy_mahjong" and d["rules"]["room"] == "popular" and d["rake"] == RAKE


def test_four_agents_and_every_action_is_legal() -> None:
    agents = [CheckedRandom() for _ in range(4)]
    res = run_arena(game="joy_mahjong", agents=agents, deals=3, seed=1,
                    env_options={"room": "eight_fan"}, progress=False)
    assert res.mode == "4"
    for deal in range(3):
        recs = [r for r in res.records if r.deal == deal]
        for agent in range(4):
            assert sorted(r.lineup.index(agent) for r in recs) == [0, 1, 2, 3]
    assert all(a.decisions > 0 for a in agents)


def test_bad_joy_options_fail_before_playing() -> None:
    with pytest.raises(ValueError, match="room"):
        run_arena(game="joy_mahjong", agents=["random", "random"], deals=1, env_options={"room": "vip"},
                  progress=False)
    with pytest.raises(ValueError, match="cap_fan"):
        run_arena(game="joy_mahjong", agents=["random", "random"], deals=1, env_options={"cap_fan": 8},
                  progress=False)


def test_cli_eval_joy_end_to_end(tmp_path, capsys) -> None:
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    status = main(["eval", "--game", "joy_mahjong", "--room", "no_fan", "--agents", "random", "random",
                   "--deals", "3", "--seed", "2", "--rule", "rake=2", "--out", str(out), "--plot", str(png),
                   "--no-progress"])
    assert status == 0
    d = json.loads(out.read_text(encoding="utf-8"))
    assert d["game"] == "joy_mahjong" and d["env_options"] == {"rake": 2, "room": "no_fan"}
    assert d["check"]["all_seats_beans_per_hand"] == -8 and d["mode"] == "1v3"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = capsys.readouterr().out
    assert text.startswith("joy_mahjong (room no_fan, rake=2)") and "random#2" in text
    status = main(["eval", "--game", "joy_mahjong", "--agents", "random", "random", "random", "random",
                   "--deals", "1", "--no-progress"])
    assert status == 0 and "random#4" in capsys.readouterr().out


def test_cli_eval_joy_bad_arguments_exit_2(capsys) -> None:
    assert main(["eval", "--game", "joy_mahjong", "--agents", "random", "random", "--deals", "1",
                 "--rule", "room=vip", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "mjenv eval: error" in err and "room" in err
