"""Invariants over thousands of seeded random games (docs/rules-blood-battle.md B1-B2, S1, S4).

CI plays 2,000 games per preset on the engine (plus a smaller number through the env);
``-m slow`` plays 20,000.
"""

import pytest

from mjenv import blood_battle_v0
from mjenv.actions import BLOOD_BATTLE as L
from mjenv.config import blood_battle_rules
from mjenv.engine.blood_battle import new_game
from tests.support import best_discard, check_rewards_sum_to_beans, play_random_game

PRESETS = ["happy", "qq"]


def _pick(g, legal: list[int], rng) -> int:
    """Mostly purposeful random play, so wins, multi-wins and robbed kongs happen often:
    take 胡 nine times in ten, discard toward a lower shanten half the time, else uniform."""
    for a in (L.HU, L.ROB_KONG):
        if a in legal and rng.random() < 0.9:
            return a
    discards = [a for a in legal if a < L.KONG]
    if discards and len(discards) == len(legal) and rng.random() < 0.5:
        return best_discard(g, discards)
    return int(rng.choice(legal))


def _not_won(g, legal: list[int]) -> None:
    """A seat that has won is never asked again (S14)."""
    assert not g.won[g.current_player]


def _random_game(rules, seed: int):
    """Play one hand with random legal actions (see _pick); check invariants at every step."""
    return play_random_game(new_game, rules, seed, 108, _pick, _not_won)


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
    check_rewards_sum_to_beans(lambda: blood_battle_v0.env(preset=preset, room_coefficient=2, rake=rake),
                               300, rake)
