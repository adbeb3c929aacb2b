"""Invariants over thousands of seeded random games (RULES.md B1-B2, S1, S4).

CI plays 2,000 games per preset on the engine (plus a smaller number through the env);
``-m slow`` plays 20,000.
"""

import numpy as np
import pytest

from mjenv import blood_battle_v0
from mjenv.config import blood_battle_rules
from mjenv.actions import BLOOD_BATTLE as L
from mjenv.engine.blood_battle import N_SEATS, new_game
from mjenv.rules.shapes import shanten

PRESETS = ["happy", "qq"]


def _tile_total(g) -> int:
    """Tiles in the wall, hands, melds, rivers and won piles."""
    return (g.wall_count + sum(map(sum, g.hands))
            + sum(len(m.kinds()) for ms in g.melds for m in ms)
            + sum(map(len, g.rivers)) + sum(map(len, g.won_tiles)))


def _pick(g, legal: list[int], rng) -> int:
    """Mostly purposeful random play, so wins, multi-wins and robbed kongs happen often:
    take 胡 nine times in ten, discard toward a lower shanten half the time, else uniform."""
    for a in (L.HU, L.ROB_KONG):
        if a in legal and rng.random() < 0.9:
            return a
    discards = [a for a in legal if a < L.KONG]
    if discards and len(discards) == len(legal) and rng.random() < 0.5:
        hand = g.hands[g.current_player]
        n_melds = len(g.melds[g.current_player])

        def after(a):
            hand[a] -= 1
            v = shanten(hand, n_melds)
            hand[a] += 1
            return v
        return min(discards, key=after)
    return int(rng.choice(legal))


def _random_game(rules, seed: int):
    """Play one hand with random legal actions (see _pick); check invariants at every step."""
    g = new_game(rules, seed)
    rng = np.random.default_rng(seed + 1)
    totals = [0] * N_SEATS
    steps = 0
    while not g.over:
        assert _tile_total(g) == 108
        assert 0 <= g.current_player < N_SEATS and not g.won[g.current_player]
        legal = g.legal_actions()
        assert legal, f"seat {g.current_player} has no legal action in phase {g.phase}"
        assert len(legal) >= 2, "a seat with no choice must not be asked (DESIGN §4)"
        delta = g.apply(_pick(g, legal, rng))
        totals = [t + d for t, d in zip(totals, delta)]
        steps += 1
        assert steps < 1000
    assert _tile_total(g) == 108
    assert totals == g.beans
    assert sum(g.beans) == -4 * rules.rake
    return g


def _check_many(preset: str, n: int, **overrides):
    rules = blood_battle_rules(preset, room_coefficient=3, rake=7, **overrides)
    seen = {"win_end": 0, "draw_end": 0, "multi_win": 0, "rob": 0, "self_draw": 0, "refund": 0}
    for seed in range(n):
        g = _random_game(rules, seed)
        seen[g.end_reason + "_end"] += 1
        sources = [w.source for w in g.wins if w.source is not None]
        seen["multi_win"] += len(sources) != len(set(sources))
        seen["rob"] += any(f.name == "抢杠胡" for w in g.wins for f in w.score.fans)
        seen["self_draw"] += any(w.source is None for w in g.wins)
        seen["refund"] += any(e.get("reason") == "kong_refund" for e in g.events)
    return seen


@pytest.mark.parametrize("preset", PRESETS)
def test_random_games(preset):
    seen = _check_many(preset, 2000)
    assert all(seen.values()), seen  # every path below was exercised


@pytest.mark.parametrize("preset", PRESETS)
def test_random_games_classic(preset):
    _check_many(preset, 500, mode="classic")


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_random_games_slow(preset):
    _check_many(preset, 20000)


@pytest.mark.parametrize("preset", PRESETS)
def test_same_seed_same_game(preset):
    rules = blood_battle_rules(preset)
    for seed in range(20):
        assert _random_game(rules, seed).events == _random_game(rules, seed).events


@pytest.mark.parametrize("preset", PRESETS)
def test_env_rewards_sum_to_beans(preset):
    """Through the env: each agent's rewards sum to its bean total; totals sum to -4A."""
    rake = 11
    for seed in range(300):
        e = blood_battle_v0.env(preset=preset, room_coefficient=2, rake=rake)
        e.reset(seed=seed)
        rng = np.random.default_rng(seed)
        got = {a: 0 for a in e.possible_agents}
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            got[agent] += reward
            if term or trunc:
                assert info["beans"] == got[agent]
                e.step(None)
                continue
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert sum(got.values()) == -4 * rake
        assert list(got.values()) == e.unwrapped.game.beans
