"""``heuristic-items`` (agents.heuristic_items): legal hands with items=1 in which it uses items, its
偷天换日 swaps that win at once, the heuristic's choice wherever it uses no item, and no item
ever with the option off. (What the items are worth: docs/experiments/2026-12-07-what-items-are-worth.md.)"""

from __future__ import annotations

import numpy as np
import pytest

from agents.heuristic import HeuristicPolicy
from agents.heuristic_items import HeuristicItemsPolicy, item_offset
from agents.registry import load_policy
from mjenv import blood_battle_v0
from mjenv.actions import BLOOD_BATTLE
from mjenv.rules.items import QIANKUN, QIANLIYAN, TOUTIAN

LAYOUT = BLOOD_BATTLE.with_options(False, True)


def _play(hands: int, seed: int, **options) -> list[tuple[int, np.ndarray, np.ndarray, int]]:
    """(seat, observation, mask, action) of every decision of ``hands`` hands: seat 0 plays
    heuristic-items, the others the heuristic; every action is checked legal."""
    env = blood_battle_v0.raw_env(**options)
    items, plain = load_policy("heuristic-items"), HeuristicPolicy()
    rng = np.random.default_rng(seed)
    out = []
    for h in range(hands):
        env.reset(seed=seed + h)
        while not env.game.over:
            agent = env.agent_selection
            seat = env.possible_agents.index(agent)
            o = env.observe(agent)
            a = (items if seat == 0 else plain).act(o["observation"], o["action_mask"], rng)
            assert o["action_mask"][a], (h, seat, a)
            out.append((seat, o["observation"], o["action_mask"], a))
            env.step(a)
    return out


def test_with_items_it_plays_legal_hands_uses_items_and_wins_by_its_swaps() -> None:
    steps = _play(hands=3, seed=11, items=1)
    mine = [(o, m, a) for seat, o, m, a in steps if seat == 0]
    actions = [a for _, _, a in mine]
    assert item_offset(LAYOUT.n) == LAYOUT.ITEM
    assert actions.count(LAYOUT.ITEM + QIANKUN) == 3  # every hand, before the deal
    assert LAYOUT.ITEM + TOUTIAN in actions and LAYOUT.ITEM + QIANLIYAN not in actions
    # 偷天换日 only to a ready hand's wait: the named kind completes it, and it takes the 自摸.
    for i, a in enumerate(actions):
        if LAYOUT.NAME <= a:
            nxt_o, nxt_m, nxt_a = mine[i + 1]
            if nxt_m[BLOOD_BATTLE.HU]:
                assert nxt_a == BLOOD_BATTLE.HU
    assert any(LAYOUT.NAME <= a and mine[i + 1][2] == BLOOD_BATTLE.HU for i, a in enumerate(actions))
    # Where no item is offered it is the heuristic; the batch path chooses as act does.
    plain = HeuristicPolicy()
    rng = np.random.default_rng(0)
    for o, m, a in mine:
        if not m[LAYOUT.ITEM:].any():
            assert a == plain.act(o, m, rng)
    obs, masks = np.stack([o for o, _, _ in mine]), np.stack([m for _, m, _ in mine])
    assert (HeuristicItemsPolicy().act_batch(obs, masks, rng) == actions).all()


def test_without_items_it_is_the_heuristic() -> None:
    steps = _play(hands=1, seed=4)
    obs, masks = np.stack([s[1] for s in steps]), np.stack([s[2] for s in steps])
    assert masks.shape[1] == BLOOD_BATTLE.n and item_offset(masks.shape[1]) == -1
    rng = np.random.default_rng(0)
    assert (HeuristicItemsPolicy().act_batch(obs, masks, rng) == HeuristicPolicy().act_batch(obs, masks, rng)).all()
    with pytest.raises(ValueError, match="joy_mahjong"):
        load_policy("heuristic-items", "joy_mahjong")
