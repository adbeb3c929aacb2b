"""Duplicate arena (agents/arena/), level titles (agents/arena/levels.py) and ``mjenv eval``."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from agents.arena import ArenaResult, lineup, run_arena, t_quantile_975
from agents.arena.levels import LEVEL_TABLES, level_title
from mjenv.cli import main

RAKE = 10
OPTIONS = {"preset": "qq", "rake": RAKE}


@pytest.fixture(scope="module")
def one_vs_three() -> ArenaResult:
    """random vs 3 × random, with a rake so the zero-sum check is not trivially 0."""
    return run_arena(agents=["random", "random"], deals=24, seed=3, env_options=OPTIONS, progress=False)


def _without_run_facts(d: dict) -> dict:
    """The JSON minus what legitimately differs between equal runs (timing, worker count)."""
    return {k: v for k, v in d.items() if k not in ("elapsed_s", "workers")}


# ---------------------------------------------------------------- rotations and walls


@pytest.mark.parametrize("n_agents", [2, 4])
def test_each_rotation_set_seats_the_first_agent_everywhere_once(n_agents: int) -> None:
    seats_of = Counter()
    for r in range(4):
        for seat, agent in enumerate(lineup(n_agents, r)):
            seats_of[agent, seat] += 1
    for seat in range(4):
        assert seats_of[0, seat] == 1
        if n_agents == 4:
            assert all(seats_of[a, seat] == 1 for a in range(4))
        else:
            assert seats_of[1, seat] == 3


def test_lineup_rejects_other_agent_counts() -> None:
    with pytest.raises(ValueError, match="2 agents"):
        lineup(3, 0)


def test_a_set_reuses_one_wall_and_dealer_and_rotates_every_agent(one_vs_three: ArenaResult) -> None:
    res = one_vs_three
    assert len(res.records) == 4 * res.deals
    for deal in range(res.deals):
        recs = [r for r in res.records if r.deal == deal]
        assert sorted(r.rotation for r in recs) == [0, 1, 2, 3]
        assert len({r.wall_digest for r in recs}) == 1
        assert len({r.dealer for r in recs}) == 1
        assert sorted(r.lineup.index(0) for r in recs) == [0, 1, 2, 3]
    assert len({r.wall_digest for r in res.records}) == res.deals  # each deal a new wall


def test_four_agents_each_play_every_seat_once_per_set() -> None:
    res = run_arena(agents=["random"] * 4, deals=2, seed=0, progress=False)
    assert res.labels == ["random#1", "random#2", "random#3", "random#4"]
    for deal in range(2):
        recs = [r for r in res.records if r.deal == deal]
        for agent in range(4):
            assert sorted(r.lineup.index(agent) for r in recs) == [0, 1, 2, 3]
    assert all(s["seats"] == 1 for s in res.stats().values())


# ---------------------------------------------------------------- determinism


def test_results_depend_on_the_seed_only_not_on_workers(one_vs_three: ArenaResult) -> None:
    again = run_arena(agents=["random", "random"], deals=24, seed=3, env_options=OPTIONS, progress=False)
    pooled = run_arena(agents=["random", "random"], deals=24, seed=3, env_options=OPTIONS, workers=2,
                       progress=False)
    other = run_arena(agents=["random", "random"], deals=24, seed=4, env_options=OPTIONS, progress=False)
    assert again.records == one_vs_three.records
    assert pooled.records == one_vs_three.records
    assert _without_run_facts(pooled.to_dict()) == _without_run_facts(one_vs_three.to_dict())
    assert other.records != one_vs_three.records


def test_the_first_deals_of_a_longer_run_are_the_same_deals(one_vs_three: ArenaResult) -> None:
    short = run_arena(agents=["random", "random"], deals=5, seed=3, env_options=OPTIONS, progress=False)
    assert short.records == one_vs_three.records[: 4 * 5]


# ---------------------------------------------------------------- statistics


def test_every_set_is_zero_sum_minus_the_rake(one_vs_three: ArenaResult) -> None:
    res = one_vs_three
    for deal in range(res.deals):
        assert sum(sum(r.beans) for r in res.records if r.deal == deal) == 4 * (-4 * RAKE)
    per_set = res.per_set_means()
    # One seat of agent 0 plus three seats of agent 1 hold all four seats' beans.
    np.testing.assert_allclose(per_set[0] + 3 * per_set[1], -4 * RAKE)
    st = res.stats()
    assert st["random#1"]["mean_beans"] + 3 * st["random#2"]["mean_beans"] == pytest.approx(-4 * RAKE)
    d = res.to_dict()
    assert d["check"] == {"all_seats_beans_per_hand": -4 * RAKE, "expected": -4 * RAKE}


def test_counts_add_up_over_agents(one_vs_three: ArenaResult) -> None:
    res = one_vs_three
    st = res.stats()
    all_wins = [w for r in res.records for w in r.wins]
    assert all_wins, "random play should win sometimes in 96 hands"
    assert sum(s["wins"] for s in st.values()) == len(all_wins)
    assert sum(s["self_draws"] for s in st.values()) == sum(1 for w in all_wins if w[1] is None)
    assert sum(s["deal_ins"] for s in st.values()) == sum(1 for w in all_wins if w[1] is not None)
    assert [s["seat_hands"] for s in st.values()] == [4 * res.deals, 12 * res.deals]
    for s in st.values():
        assert s["ci_low"] < s["mean_beans"] < s["ci_high"]
        assert s["cumulative_beans"] == pytest.approx(s["mean_beans"] * 4 * res.deals)
        assert 0 <= s["draw_rate"] <= 1
        assert s["level"] == level_title("blood_battle", s["cumulative_beans"])


def test_ci_width_shrinks_with_more_deals(one_vs_three: ArenaResult) -> None:
    short = run_arena(agents=["random", "random"], deals=4, seed=3, env_options=OPTIONS, progress=False)
    for label in ("random#1", "random#2"):
        assert one_vs_three.stats()[label]["ci_halfwidth"] < short.stats()[label]["ci_halfwidth"]


def test_t_quantiles() -> None:
    assert t_quantile_975(1) == pytest.approx(12.7062, abs=1e-4)
    assert t_quantile_975(30) == pytest.approx(2.0423, abs=1e-4)
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=1e-4)  # expansion takes over
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=1e-4)
    with pytest.raises(ValueError):
        t_quantile_975(0)


# ---------------------------------------------------------------- outputs

RESULT_KEYS = {
    "schema", "game", "preset", "mode", "agents", "labels", "seed", "deals", "hands", "env_options", "rules",
    "rake", "interval", "results", "per_set_mean_beans", "check", "workers", "backend", "elapsed_s",
}
AGENT_KEYS = {
    "seats", "seat_hands", "mean_beans", "ci_low", "ci_high", "ci_halfwidth", "std_per_set",
    "win_rate", "deal_in_rate", "self_draw_rate", "draw_rate", "wins", "self_draws", "deal_ins",
    "mean_fan", "mean_capped_fan", "cumulative_beans", "level",
}


def test_json_has_the_documented_keys(one_vs_three: ArenaResult) -> None:
    d = json.loads(json.dumps(one_vs_three.to_dict(), allow_nan=False, ensure_ascii=False))
    assert set(d) == RESULT_KEYS
    assert d["schema"] == "mjenv.arena/1" and d["mode"] == "1v3" and d["hands"] == 96
    assert d["labels"] == ["random#1", "random#2"]
    assert d["rules"]["rake"] == RAKE and d["rules"]["forced_win_last_four"] is True  # the qq preset
    # The option groups that are off are left out, so results from before they existed still pair.
    assert not {"escape", "escape_rule", "bankroll", "min_beans"} & set(d["rules"])
    for label in d["labels"]:
        assert set(d["results"][label]) == AGENT_KEYS
        assert len(d["per_set_mean_beans"][label]) == 24


def test_plot_writes_a_png(one_vs_three: ArenaResult, tmp_path) -> None:
    path = tmp_path / "cumulative.png"
    one_vs_three.plot(str(path))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000


def test_format_table_names_every_agent(one_vs_three: ArenaResult) -> None:
    table = one_vs_three.format_table()
    assert "random#1" in table and "random#2" in table and "96 hands" in table


# ---------------------------------------------------------------- argument checks


@pytest.mark.parametrize("kwargs, match", [
    ({"agents": ["random"] * 3}, "2 agents"),
    ({"deals": 0}, "deals"),
    ({"seed": -1}, "seed"),
    ({"workers": 0}, "workers"),
    ({"game": "riichi"}, "unknown game"),
    ({"env_options": {"match_hands": 2}}, "match_hands"),
    ({"env_options": {"cap_fann": 8}}, "cap_fann"),
    ({"agents": ["random", "nobody"]}, "nobody"),
])
def test_bad_arguments_fail_before_playing(kwargs: dict, match: str) -> None:
    args = {"agents": ["random", "random"], "deals": 1, "progress": False, **kwargs}
    with pytest.raises(ValueError, match=match):
        run_arena(**args)


# ---------------------------------------------------------------- level titles


@pytest.mark.parametrize("score, title", [
    (-500, "初品益都红"), (0, "初品益都红"), (99, "初品益都红"), (100, "初品益都红"),
    (199, "初品益都红"), (200, "良品益都红"), (2299, "良品大红袍"), (2300, "上品大红袍"),
    (49999, "良品涮椒"), (50000, "上品涮椒"), (199999, "良品指天椒"), (200000, "上品指天椒"),
    (10**9, "上品指天椒"),
])
def test_blood_battle_levels_follow_seed_004(score: int, title: str) -> None:
    assert level_title("blood_battle", score) == title


@pytest.mark.parametrize("score, title", [
    (-1, "白板"), (0, "白板"), (99, "白板"), (100, "一万"), (79999, "九万"), (80000, "东风"),
    (799999, "北风"), (800000, "中"), (10**9, "中"),  # 发 and 雀神 have no known threshold
])
def test_joy_levels_follow_seed_001(score: int, title: str) -> None:
    assert level_title("joy_mahjong", score) == title


def test_level_tables_match_the_seeds() -> None:
    assert len(LEVEL_TABLES["blood_battle"]) == 18
    assert [t for t, _ in LEVEL_TABLES["joy_mahjong"]][-2:] == ["发", "雀神"]
    for table in LEVEL_TABLES.values():
        known = [low for _, low in table if low is not None]
        assert known == sorted(known) and len(set(known)) == len(known)
    with pytest.raises(ValueError, match="no level table"):
        level_title("riichi", 0)


# ---------------------------------------------------------------- mjenv eval


def test_cli_eval_end_to_end(tmp_path, capsys) -> None:
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    status = main(["eval", "--preset", "qq", "--agents", "random", "random", "--deals", "3", "--seed", "1",
                   "--rule", "rake=5", "--out", str(out), "--plot", str(png), "--no-progress"])
    assert status == 0
    d = json.loads(out.read_text(encoding="utf-8"))
    assert d["env_options"] == {"rake": 5, "preset": "qq"} and d["deals"] == 3 and d["seed"] == 1
    assert d["check"]["all_seats_beans_per_hand"] == -20
    assert png.stat().st_size > 0
    assert "random#2" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [
    ["eval", "--agents", "random", "--deals", "1"],
    ["eval", "--agents", "random", "random", "--deals", "1", "--rule", "cap_fan=eight"],
])
def test_cli_eval_bad_arguments_exit_2(argv: list[str], capsys) -> None:
    assert main([*argv, "--no-progress"]) == 2
    assert "mjenv eval: error" in capsys.readouterr().err
