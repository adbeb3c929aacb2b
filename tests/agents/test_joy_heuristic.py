"""The Joy Mahjong baseline (agents/heuristic_joy.py): legal, greedy for wins, keeps the 财神."""

from __future__ import annotations

import numpy as np
import pytest

from agents.arena import run_arena
from agents.heuristic_joy import JoyHeuristicPolicy, JoyView, distance
from mjenv import joy_mahjong_v0, tiles

L = joy_mahjong_v0.LAYOUT


def _real(text: str) -> bytearray:
    return bytearray(tiles.counts_of(text).tolist()[:34])


def test_distance_counts_missing_tiles_less_wildcards() -> None:
    assert distance(_real("123m456p789sEEESS"), 0, 0) == 0  # a complete hand
    assert distance(_real("123m456p789sEEES"), 0, 0) == 1  # ready (单钓)
    assert distance(_real("123m456p789sEEES"), 0, 1) == 0  # a wildcard completes it
    assert distance(_real("1133557799mEESS"), 0, 0) == 0  # seven pairs
    assert distance(_real("19m19p19sESWNCFP"), 0, 0) > 1  # knitted shapes are not counted
    assert distance(_real("456pEE"), 3, 0) == 0  # three declared melds


class Checked(JoyHeuristicPolicy):
    """The heuristic, checking every decision against the rules of the brief, on both paths: the
    compiled ``act_batch`` (what the compiled arena calls) and the readable ``act``."""

    def __init__(self) -> None:
        self.decisions = self.hu_offers = self.wild_discards = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        return self._check(observation, action_mask, super().act(observation, action_mask, rng))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        actions = super().act_batch(observations, action_masks, rng)
        for o, m, a in zip(observations, action_masks, actions):
            self._check(o, m, int(a))
        return actions

    def _check(self, observation: np.ndarray, action_mask: np.ndarray, a: int) -> int:
        """``a`` after checking it is legal, takes every win, and keeps the 财神 while it can."""
        assert action_mask[a] == 1
        self.decisions += 1
        if action_mask[L.HU] or action_mask[L.ROB_KONG]:
            self.hu_offers += 1
            assert a in (L.HU, L.ROB_KONG)
        wild = JoyView(observation).wild
        if a == L.DISCARD + wild:
            others = [k for k in np.flatnonzero(action_mask[:34]) if k != wild]
            assert not others, "the 财神 is discarded only when nothing else can be"
            self.wild_discards += 1
        return a


@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_every_decision_is_legal_and_follows_the_rules(backend: str) -> None:
    agents = [Checked() for _ in range(4)]
    res = run_arena(game="joy_mahjong", agents=agents, deals=6, seed=4,
                    env_options={"room": "eight_fan"}, progress=False, backend=backend)
    assert all(a.decisions > 0 for a in agents)
    assert sum(a.hu_offers for a in agents) > 0
    assert any(r.wins for r in res.records)


def test_beats_random_and_is_deterministic() -> None:
    res = run_arena(game="joy_mahjong", agents=[JoyHeuristicPolicy(), "random"], deals=12, seed=9,
                    env_options={"rake": 1}, progress=False)
    st = res.stats()
    assert st["heuristic"]["ci_low"] > 0 and st["heuristic"]["win_rate"] > 0.5
    again = run_arena(game="joy_mahjong", agents=[JoyHeuristicPolicy(), "random"], deals=3, seed=9,
                      env_options={"rake": 1}, progress=False)
    assert again.records == res.records[:12]
