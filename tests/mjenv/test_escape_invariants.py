"""Invariants of escapes and bean balances over seeded random games (B4, S16, J11 of docs/rules-blood-battle.md and docs/rules-joy-mahjong.md).

The policy escapes now and then (2% of decisions) and otherwise plays as the games' own invariant
tests do; bankrolls are small, so payments cut short by a balance are common. Checked at every
step and at the end: tiles conserved, every seat asked has a legal action and is still in play,
an escaper never acts again, rewards add up to the bean table and to the balances' change, no
balance below 0, beans conserved apart from the rake and 扣豆, the same seed plays the same game. The default run plays a few hundred games per
configuration; ``-m slow`` plays 20,000.
"""

from __future__ import annotations

import numpy as np
import pytest

import tests.mjenv.test_blood_battle_invariants as bb
import tests.mjenv.test_joy_mahjong_invariants as jm
from mjenv import blood_battle_v0, joy_mahjong_v0
from mjenv.config import blood_battle_rules, joy_mahjong_rules
from mjenv.engine import blood_battle, joy_mahjong
from mjenv.engine.core import N_SEATS, GameCore
from tests.support import tile_total

ESCAPE_RATE = 0.02
BANKROLL = (40, 150, 400, 1000)  # at N = 3: a few payments drain the small ones
CONFIGS = {
    "happy": (blood_battle, lambda **o: blood_battle_rules("happy", **o), bb._pick, 108),
    "qq": (blood_battle, lambda **o: blood_battle_rules("qq", **o), bb._pick, 108),
    "qq_classic": (blood_battle, lambda **o: blood_battle_rules("qq", mode="classic", **o), bb._pick, 108),
    "popular": (joy_mahjong, lambda **o: joy_mahjong_rules(room="popular", **o), jm._pick, 144),
    "eight_fan": (joy_mahjong, lambda **o: joy_mahjong_rules(room="eight_fan", **o), jm._pick, 144),
    "no_fan": (joy_mahjong, lambda **o: joy_mahjong_rules(room="no_fan", **o), jm._pick, 144),
}


def _escape_sometimes(pick):
    """``pick`` that escapes at 2% of the decisions."""
    def choose(g: GameCore, legal: list[int], rng: np.random.Generator) -> int:
        esc = g.layout.ESCAPE
        if rng.random() < ESCAPE_RATE:
            return esc
        return pick(g, [a for a in legal if a != esc], rng)
    return choose


def _play(engine, rules, pick, n_tiles: int, seed: int) -> tuple[GameCore, dict[str, int]]:
    """One hand with escapes; every invariant checked; returns the game and what it met."""
    g = engine.new_game(rules, seed)
    start = list(g.balances) if g.balances is not None else None
    rng = np.random.default_rng(seed + 1)
    totals = [0] * N_SEATS
    escaped_at: dict[int, int] = {}  # seat -> index of its escape event
    seen = {"escape": 0, "cut_short": 0, "played_on": 0}
    while not g.over:
        assert tile_total(g) == n_tiles
        s = g.current_player
        assert not g.escaped[s] and not g.won[s], f"seat {s} is out of play but asked (phase {g.phase})"
        legal = g.legal_actions()
        assert g.layout.ESCAPE in legal and len(legal) >= 2
        phase = g.phase
        delta = g.apply(pick(g, legal, rng))
        totals = [t + d for t, d in zip(totals, delta)]
        for seat in range(N_SEATS):
            if g.escaped[seat] and seat not in escaped_at:
                escaped_at[seat] = len(g.events)
                seen["escape"] += 1
                seen[f"escape_{phase}"] = seen.get(f"escape_{phase}", 0) + 1
                seen["played_on"] += not g.over
        if g.balances is not None:
            assert min(g.balances) >= 0
            assert g.balances == [b + t for b, t in zip(start, totals)]
    assert tile_total(g) == n_tiles
    assert totals == g.beans
    for seat, at in escaped_at.items():  # an escaper never acts again
        assert not [e for e in g.events[at:] if e.get("actor") == seat]
    # Beans move between seats except the rake (at most A per seat: what it held) and 扣豆.
    penalty = sum(e.get("penalty", 0) for e in g.events if e["type"] == "escape")
    rake = -sum(g.beans) - penalty
    if g.balances is None:
        assert rake == N_SEATS * rules.rake
    else:
        assert 0 <= rake <= N_SEATS * rules.rake
        seen["cut_short"] += any("owed" in e or "penalty_owed" in e for e in g.events)
    return g, seen


def _check_many(config: str, n: int, bankroll=BANKROLL) -> dict[str, int]:
    engine, make_rules, pick, n_tiles = CONFIGS[config]
    rules = make_rules(escape=True, room_coefficient=3, rake=7, bankroll=bankroll)
    choose = _escape_sometimes(pick)
    seen: dict[str, int] = {}
    for seed in range(n):
        g, met = _play(engine, rules, choose, n_tiles, seed)
        for key, count in {**met, f"end_{g.end_reason}": 1}.items():
            seen[key] = seen.get(key, 0) + count
    return seen


@pytest.mark.parametrize("config,n", [("happy", 500), ("qq", 300), ("qq_classic", 200),
                                      ("popular", 300), ("eight_fan", 200), ("no_fan", 200)])
def test_random_games_with_escapes_and_balances(config, n):
    seen = _check_many(config, n)
    # Escapes in a rob window are rare in random play: see test_escape_in_a_rob_window.
    must = ["escape", "cut_short", "escape_turn", "escape_claim", "end_draw", "end_escape"]
    if config != "qq":  # three wins before an escape are rare in qq's blood mode
        must.append("end_win")
    if config in ("happy", "qq", "qq_classic"):
        must.append("escape_void")
    if config == "happy":
        must.append("played_on")  # the happy hand goes on after an escape
    else:
        assert seen.get("played_on", 0) == 0  # qq and Joy end at the escape
    assert all(seen.get(k) for k in must), seen


@pytest.mark.parametrize("config", ["happy", "qq", "popular"])
def test_random_games_with_escapes_and_unlimited_beans(config):
    seen = _check_many(config, 150, bankroll=None)
    assert seen["escape"] and not seen["cut_short"], seen


@pytest.mark.slow
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_random_games_with_escapes_slow(config):
    seen = _check_many(config, 20000)
    assert seen["escape"] and seen["cut_short"], seen


@pytest.mark.parametrize("config", ["happy", "popular"])
def test_same_seed_same_game(config):
    engine, make_rules, pick, n_tiles = CONFIGS[config]
    rules = make_rules(escape=True, bankroll=BANKROLL)
    choose = _escape_sometimes(pick)
    for seed in range(20):
        first, again = (_play(engine, rules, choose, n_tiles, seed)[0] for _ in range(2))
        assert first.events == again.events


# ---------------------------------------------------------------- matches through the env


def _escaping_choice(escape: int):
    """For play_aec: uniform among the legal actions, but escape only 2% of the time."""
    def choose(legal: np.ndarray, rng: np.random.Generator) -> int:
        others = legal[legal != escape]
        return escape if rng.random() < ESCAPE_RATE else int(rng.choice(others))
    return choose


@pytest.mark.parametrize("make_env", [
    lambda: blood_battle_v0.raw_env(preset="happy", escape=True, bankroll=BANKROLL, min_beans=10, match_hands=6,
                                    room_coefficient=3, rake=7),
    lambda: blood_battle_v0.raw_env(preset="qq", mode="classic", escape=True, bankroll=500, match_hands=6, rake=7),
    lambda: joy_mahjong_v0.raw_env(room="eight_fan", escape=True, bankroll=BANKROLL, min_beans=5, match_hands=6,
                                   room_coefficient=3, rake=7),
], ids=["happy", "qq_classic", "joy"])
def test_env_matches_carry_balances_and_stop_below_min_beans(make_env):
    """Over matches: each seat's rewards sum to its balance change; balances carry from hand to
    hand; a match stops after the first hand that leaves a seat below min_beans; observations
    and states stay inside their spaces."""
    stopped = 0
    for seed in range(25):
        e = make_env()
        e.reset(seed=seed)
        rng = np.random.default_rng(seed)
        choose = _escaping_choice(e.layout.ESCAPE)
        start = list(e.rules.bankroll) if isinstance(e.rules.bankroll, tuple) else [e.rules.bankroll] * 4
        got = [0] * 4
        while not all(e.terminations.values()):
            agent = e.agent_selection
            obs = e.observe(agent)
            assert e.observation_space(agent).contains(obs) and e.state_space.contains(e.state())
            hand = e.hand_index
            e.step(choose(np.flatnonzero(obs["action_mask"]), rng))
            got = [t + e.rewards[a] for t, a in zip(got, e.possible_agents)]
            if not e.game.over and e.hand_index != hand:  # a new hand starts from the last one's balances
                assert e.game.balances == [b + t for b, t in zip(start, got)]
        balances = e.game.balances
        assert [b + t for b, t in zip(start, got)] == balances and min(balances) >= 0
        assert [e.infos[a]["balance"] for a in e.possible_agents] == balances
        end = e.infos["player_0"]["match_end"]
        if end == "min_beans":
            stopped += 1
            assert min(balances) < e.rules.min_beans and e.hand_index < e.match_hands
        else:
            assert end == "hands" and e.hand_index == e.match_hands
    assert stopped or not e.rules.min_beans  # small bankrolls: some match stops early
