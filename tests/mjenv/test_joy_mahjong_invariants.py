"""Invariants over thousands of seeded random Joy Mahjong games (B1-B2, J1-J3, J10; docs/rules-joy-mahjong.md).

The default run plays 2,000 games on the engine over the three rooms (plus a few hundred through
the env); ``-m slow`` plays 20,000.
"""

import pytest

from mjenv import joy_mahjong_v0
from mjenv.actions import JOY_MAHJONG as L
from mjenv.config import joy_mahjong_rules
from mjenv.engine.joy_mahjong import new_game
from tests.support import best_discard, check_rewards_sum_to_beans, play_random_game


def _pick(g, legal: list[int], rng) -> int:
    """Purposeful random play so that wins, 截和, robbed kongs and chows happen often: 胡 nine
    times in ten, an own kong mostly, a call three times in ten, a discard toward a lower shanten
    mostly."""
    for a in (L.HU, L.ROB_KONG):
        if a in legal and rng.random() < 0.9:
            return a
    kongs = [a for a in legal if L.KONG <= a < L.CHOW]
    if kongs and rng.random() < 0.8:
        return int(rng.choice(kongs))
    calls = [a for a in legal if a >= L.CHOW and a not in (L.PASS, L.HU, L.ROB_KONG)]
    if calls and rng.random() < 0.3:
        return int(rng.choice(calls))
    discards = [a for a in legal if a < L.KONG]
    if discards and rng.random() < 0.85:
        return best_discard(g, discards)
    return int(rng.choice(legal))


def _check_claim(g, legal: list[int]) -> None:
    """A claim window never offers the wildcard, and 吃 only to the discarder's right."""
    if g.phase == "claim":
        assert g.claim_tile != g.wild  # a discarded wildcard is never claimed (J2)
        if any(L.CHOW <= a < L.CHOW + 3 for a in legal):
            assert g.current_player == (g.claim_from + 1) % 4  # 吃 only from the left (J3)


def _random_game(rules, seed: int):
    """Play one hand with _pick; check the invariants at every step."""
    g = play_random_game(new_game, rules, seed, 144, _pick, _check_claim)
    assert len(g.wins) <= 1  # one hand ends at the first win (J10)
    for ms in g.melds:
        assert all(g.wild not in m.kinds() for m in ms)  # wildcards never in a meld (J2)
    return g


def _check_many(room: str, n: int, start: int = 0):
    rules = joy_mahjong_rules(room=room, room_coefficient=3, rake=7)
    seen = {"win": 0, "draw": 0, "self_draw": 0, "jiehu": 0, "rob": 0, "chow": 0, "kong": 0,
            "play_flower": 0, "bird": 0}
    for seed in range(start, start + n):
        g = _random_game(rules, seed)
        seen[g.end_reason] += 1
        seen["self_draw"] += any(w.source is None for w in g.wins)
        seen["jiehu"] += sum(a == L.HU for a in g.answers.values()) > 1 and g.phase == "over"
        seen["rob"] += any(f.name == "抢杠和" for w in g.wins for f in w.score.fans)
        seen["chow"] += any(m.kind == "chow" for ms in g.melds for m in ms)
        seen["kong"] += any(m.is_kong for ms in g.melds for m in ms)
        deal = next(i for i, e in enumerate(g.events) if e["type"] == "indicator")
        seen["play_flower"] += any(e["type"] == "hua" for e in g.events[deal:])
        seen["bird"] += any(e["type"] == "bird" for e in g.events)
    return seen


@pytest.mark.parametrize("room, n", [("popular", 1200), ("eight_fan", 400), ("no_fan", 400)])
def test_random_games(room, n):
    seen = _check_many(room, n)
    must = ["win", "draw", "self_draw", "chow", "kong", "play_flower", "bird"]
    if room == "popular":
        must.append("jiehu")  # 抢杠和 is rare in random play: see the scenario tests
    assert all(seen[k] for k in must), seen


@pytest.mark.slow
@pytest.mark.parametrize("room", ["popular", "eight_fan", "no_fan"])
def test_random_games_slow(room):
    _check_many(room, 20000 // 3, start=10_000)


def test_same_seed_same_game():
    rules = joy_mahjong_rules()
    for seed in range(20):
        assert _random_game(rules, seed).events == _random_game(rules, seed).events


@pytest.mark.parametrize("room", ["popular", "eight_fan"])
def test_env_rewards_sum_to_beans(room):
    """Through the env: each agent's rewards sum to its bean total; totals sum to -4A."""
    rake = 11
    check_rewards_sum_to_beans(lambda: joy_mahjong_v0.env(room=room, room_coefficient=2, rake=rake), 150, rake,
                               choose=lambda legal, rng: L.HU if L.HU in legal else rng.choice(legal))
