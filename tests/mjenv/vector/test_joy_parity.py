"""Parity of the compiled Joy Mahjong engine (mjenv.vector) with joy_mahjong_v0.raw_env.

Table i of ``make("joy_mahjong", n).reset(seed=s)`` must play exactly what ``raw_env`` plays after
``reset(seed=s+i)`` and an unseeded ``reset()`` after each episode. Both play the same random
legal actions (half the tables eager: 胡, kongs and calls first, to reach wins, robs and kong
replacements often); at every step the seat to act, the mask, the observation, the rewards and
``state()`` must be equal, and at the end of each hand the beans, the end reason, the win (seat,
tile, source, fan, X), the bird and every seat's view of the finished table. With the rule options
(escape, bankroll) the seats escape now and then, and who escaped, the balances at every step and
how each match ended must agree too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mjenv import joy_mahjong_v0, vector
from tests.support import pick_action
from tests.mjenv.vector.vector_parity import short_payments

# The default suite plays >= 400 games per room (CI-sized: most of a room's scoring paths, in
# seconds); the slow suite 100,000 (SLOW_GAMES).
ROOMS = ("popular", "eight_fan", "no_fan")
FAST_GAMES = 400
SLOW_GAMES = 100_000
TABLES = 64


class _Recorder:
    """Keeps the backend's last ``hand_result`` (read before the next hand is dealt)."""

    def __init__(self, backend: Any) -> None:
        self.inner = backend.hand_result
        self.tables: dict[int, dict[str, int]] = {}
        backend.hand_result = self

    def __call__(self, tables: np.ndarray) -> dict[str, np.ndarray]:
        result = self.inner(tables)
        for j, t in enumerate(tables.tolist()):
            self.tables[t] = {k: v[j] for k, v in result.items()}
        return result


def _check_hand_end(g: Any, got: dict[str, Any], where: str) -> None:
    """The finished hand of the reference game ``g`` against the backend's record."""
    assert got["end_reason"] == ("", "win", "draw", "escape").index(g.end_reason), where
    if g.rules.escape:
        assert got["escaped"].tolist() == g.escaped, where
    if g.balances is not None:
        assert got["balances"].tolist() == g.balances, where
    if g.wins:
        (w,) = g.wins
        src = -1 if w.source is None else w.source
        assert (got["winner"], got["win_tile"], got["win_from"], got["fan"], got["X"]) == (
            w.seat, w.tile, src, w.score.fan, w.score.X), where
        assert got["bird"] == (-1 if g.bird is None else g.bird), where
        assert got["bird_seat"] == (-1 if g.bird_seat is None else g.bird_seat), where
    else:
        assert got["winner"] == -1, where


def play_parity(options: dict[str, Any], seed: int, games: int, tables: int = TABLES,
                check_state: bool = True, escape_rate: float | np.ndarray = 0.0, hands: int = 0,
                final_observations: bool | None = None) -> dict[str, int]:
    """Play ``games`` episodes and ``hands`` hands over ``tables`` tables through both engines,
    comparing every step;
    with the ESCAPE action a seat escapes with probability ``escape_rate`` (one, or one per table). Returns counts of
    what was reached (wins, draws, escapes, decisions, payments cut short by a balance). Every
    seat's view of each finished table is compared with ``final_observations`` (by default with
    ``check_state``)."""
    final_observations = check_state if final_observations is None else final_observations
    venv = vector.make("joy_mahjong", tables, final_observations=final_observations, **options)
    rec = _Recorder(venv.backend)
    envs = [joy_mahjong_v0.raw_env(**options) for _ in range(tables)]
    for i, e in enumerate(envs):
        e.reset(seed=seed + i)
    obs, info = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    eager = np.arange(tables) % 2 == 0
    layout = envs[0].layout
    stats = {"games": 0, "wins": 0, "draws": 0, "escapes": 0, "decisions": 0, "hands": 0, "min_beans": 0}
    while stats["games"] < games or stats["hands"] < hands:
        state = venv.state() if check_state else None
        if envs[0].rules.bankroll is not None:
            assert venv.backend.arrays.balances.tolist() == [e.game.balances for e in envs], stats["decisions"]
        actions = np.empty(tables, dtype=np.int64)
        for i, e in enumerate(envs):
            where = f"table {i} seed {seed + i} step {stats['decisions']}"
            agent = e.agent_selection
            assert info["seat"][i] == e.possible_agents.index(agent), where
            ref = e.observe(agent)
            assert np.array_equal(obs["action_mask"][i], ref["action_mask"]), where
            assert np.array_equal(obs["observation"][i], ref["observation"]), where
            if check_state:
                assert np.array_equal(state[i], e.state()), where
            if layout.ESCAPE < 0:
                actions[i] = pick_action(layout, ref["action_mask"], rng, bool(eager[i]))
            elif rng.random() < np.broadcast_to(escape_rate, (tables,))[i]:
                actions[i] = layout.ESCAPE
            else:  # the game's own actions
                actions[i] = pick_action(layout, ref["action_mask"][:layout.ESCAPE], rng, bool(eager[i]))
        obs, rewards, terminated, truncated, info = venv.step(actions)
        stats["decisions"] += tables
        for i, e in enumerate(envs):
            where = f"table {i} seed {seed + i} step {stats['decisions']}"
            g = e.game
            e.step(int(actions[i]))
            assert rewards[i].tolist() == [e.rewards[a] for a in e.possible_agents], where
            if g.over:  # the hand ended (in a match the next one is already dealt)
                stats["hands"] += 1
                _check_hand_end(g, rec.tables[i], where)
                stats[{"win": "wins", "draw": "draws", "escape": "escapes"}[g.end_reason]] += 1
                for kind in short_payments(g) if g.balances is not None else ():
                    stats[f"short_{kind}"] = stats.get(f"short_{kind}", 0) + 1
            assert bool(terminated[i]) == all(e.terminations.values()), where
            if terminated[i]:
                if final_observations:  # every seat's view of the finished table
                    views = np.array([e.observe_seat(s) for s in range(4)])
                    assert np.array_equal(info["final_obs"][i], views), where
                agent0 = e.possible_agents[0]
                assert info["beans"][i].tolist() == [e.infos[a]["beans"] for a in e.possible_agents], where
                assert info["end_reason"][i] == e.infos[agent0]["end_reason"], where
                if e.rules.bankroll is not None:
                    assert info["balances"][i].tolist() == [e.infos[a]["balance"] for a in e.possible_agents], where
                    assert info["match_end"][i] == e.infos[agent0]["match_end"], where
                    stats["min_beans"] += e.infos[agent0]["match_end"] == "min_beans"
                stats["games"] += 1
                e.reset()
    venv.close()
    return stats


@pytest.fixture(scope="module")
def compiled() -> None:
    """Compile (or load from the on-disk cache) once for the module."""
    venv = vector.make("joy_mahjong", 2)
    venv.reset(seed=0)
    venv.close()


@pytest.mark.parametrize("room", ROOMS)
def test_random_play_matches_the_reference(compiled, room):
    stats = play_parity({"room": room}, seed=1000, games=FAST_GAMES)
    assert stats["games"] >= FAST_GAMES
    assert stats["wins"] > FAST_GAMES // 10 and stats["draws"] > 0  # both endings were compared


def test_rule_fields_and_beans_match(compiled):
    """Every rule field off its default: all_mcr payers, 无番和 beside 无财神, N and the rake."""
    options = {"room": "popular", "discard_payers": "all_mcr", "wucaishen_blocks_wufanhe": False,
               "room_coefficient": 200, "rake": 20}
    stats = play_parity(options, seed=77, games=200)
    assert stats["wins"] > 20


def test_match_mode_matches_the_reference(compiled):
    """16-hand matches: the deal passes, the prevailing wind advances, beans add up per episode."""
    stats = play_parity({"room": "eight_fan", "match_hands": 16}, seed=5, games=16, tables=16)
    assert stats["hands"] >= 16 * 16


@pytest.mark.slow
@pytest.mark.parametrize("room", ROOMS)
def test_random_play_matches_the_reference_slow(room):
    stats = play_parity({"room": room}, seed=2_000_000, games=SLOW_GAMES, tables=256, check_state=False)
    assert stats["games"] >= SLOW_GAMES
