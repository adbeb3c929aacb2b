"""The compiled Joy rules (mjenv.vector.rules.joy) against the reference (mjenv.rules.joy).

Random hands, biased towards complete and near-complete shapes with wildcards and declared
melds, must get the same answer from both win checks; the small rules are compared over their
whole input range.
"""

from __future__ import annotations

import numpy as np
import pytest

from mjenv.rules import joy, joy_settlement
from mjenv.vector.rules import joy as vjoy


def _random_case(rng: np.random.Generator) -> tuple[np.ndarray, int, int, np.ndarray]:
    """(concealed counts, declared melds, wildcard kind, meld tile counts) of a 14-tile hand."""
    wild = int(rng.integers(34))
    left = np.full(34, 4, np.int64)
    melds = np.zeros(34, np.int8)
    n_melds = int(rng.choice([0, 0, 1, 2, 3]))
    for _ in range(n_melds):
        while True:
            if rng.random() < 0.5:
                k = int(rng.integers(34))
                kinds = [k] * (4 if rng.random() < 0.2 else 3)
            else:
                low = int(rng.integers(3)) * 9 + int(rng.integers(7))
                kinds = [low, low + 1, low + 2]
            if wild not in kinds and all(left[k] >= kinds.count(k) for k in kinds):
                break
        for k in kinds:
            left[k] -= 1
            melds[k] += 1
    n = 14 - 3 * n_melds
    hand = np.zeros(34, np.int8)
    if rng.random() < 0.6:  # a complete shape with some tiles turned into wildcards
        pool: list[int] = []
        if n_melds == 0 and rng.random() < 0.3:
            kinds = rng.choice(34, 7, replace=False)
            pool = [int(k) for k in kinds for _ in range(2)]
        else:
            pool = [int(rng.integers(34))] * 2
            while len(pool) < n:
                if rng.random() < 0.5:
                    pool += [int(rng.integers(34))] * 3
                else:
                    low = int(rng.integers(3)) * 9 + int(rng.integers(7))
                    pool += [low, low + 1, low + 2]
        for i in range(len(pool)):
            if rng.random() < 0.25:
                pool[i] = wild
            elif rng.random() < 0.1:
                pool[i] = int(rng.integers(34))
        taken = 0
        for k in pool:
            if left[k] > 0:
                left[k] -= 1
                hand[k] += 1
                taken += 1
    else:
        taken = 0
    while taken < n:
        k = wild if rng.random() < 0.1 else int(rng.integers(34))
        if left[k] > 0:
            left[k] -= 1
            hand[k] += 1
            taken += 1
    return hand, n_melds, wild, melds


def test_can_win_agrees_with_the_reference_on_random_hands():
    rng = np.random.default_rng(7)
    wins = 0
    for _ in range(30000):
        hand, n_melds, wild, melds = _random_case(rng)
        ref = joy.can_win(hand, n_melds, wild, melds if n_melds else None)
        assert vjoy.can_win(hand, n_melds, wild, melds) == ref, (hand.tolist(), n_melds, wild, melds.tolist())
        wins += ref
    assert wins > 3000  # the generator reaches winning hands, not only losing ones


def test_ready_precheck_with_an_added_wildcard_agrees():
    """The engine's 听 pre-check adds one wildcard to 13 tiles (up to five wildcards)."""
    rng = np.random.default_rng(8)
    for _ in range(5000):
        hand, n_melds, wild, melds = _random_case(rng)
        nz = np.flatnonzero(hand)
        hand[nz[int(rng.integers(len(nz)))]] -= 1
        hand[wild] += 1
        ref = joy.can_win(hand, n_melds, wild, melds if n_melds else None)
        assert vjoy.can_win(hand, n_melds, wild, melds) == ref


@pytest.mark.parametrize("text,wild,expected", [
    ("19m19p19sESWNCFPP", -1, True),      # 十三幺
    ("147m258p369sESWNC", -1, True),      # 全不靠
    ("147m258p369s123m55p", -1, True),    # 组合龙 + a chow + a pair
    ("11223344556677m", -1, True),        # 七对
    ("123m456m789m111p2s5s", -1, False),
    ("123m456m789m111p2s5s", 22, True),   # the 5s wildcard pairs the 2s
])
def test_named_shapes(text, wild, expected):
    from mjenv import tiles
    hand = np.zeros(34, np.int8)
    for k in tiles.parse(text):
        hand[k] += 1
    zeros = np.zeros(34, np.int8)
    assert vjoy.can_win(hand, 0, wild, zeros) is expected
    assert joy.can_win(hand, 0, None if wild < 0 else wild) is expected


def test_wildcard_bird_and_chow_rules_over_every_input():
    for k in range(34):
        assert vjoy.wildcard_of(k) == joy.wildcard_of(k)
        for dealer in range(4):
            assert vjoy.bird_seat(k, dealer) == joy_settlement.bird_seat(k, dealer)
    rng = np.random.default_rng(3)
    for _ in range(3000):
        hand = np.bincount(rng.integers(0, 34, 13), minlength=34).astype(np.int8)
        k, wild = int(rng.integers(34)), int(rng.integers(34))
        expected = 0
        if k < 27:
            r = k % 9
            for shape in range(3):
                low = k - shape
                if low < k - r or low + 2 > k - r + 8:
                    continue
                if all(hand[t] and t != wild for t in (low, low + 1, low + 2) if t != k):
                    expected |= 1 << shape
        assert vjoy.chow_shapes(hand, k, wild) == expected
