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

TABLES = vjoy.need_tables()


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
        assert vjoy.can_win(hand, n_melds, wild, melds, *TABLES) == ref, (hand.tolist(), n_melds, wild, melds.tolist())
        wins += ref
    assert wins > 3000  # the generator reaches winning hands, not only losing ones


def test_ready_precheck_agrees_with_can_complete():
    """The engine's pre-check on 3n+1 tiles, all four wildcards held included
    (docs/rules-joy-mahjong.md#J2)."""
    rng = np.random.default_rng(8)
    four = 0
    for i in range(6000):
        hand, n_melds, wild, melds = _random_case(rng)
        if i % 3 == 0 and hand[wild] < 4 and melds[wild] == 0:  # hold all four wildcards
            while hand[wild] < 4:
                others = [k for k in np.flatnonzero(hand) if k != wild]
                hand[others[int(rng.integers(len(others)))]] -= 1
                hand[wild] += 1
        nz = np.flatnonzero(hand)
        hand[nz[int(rng.integers(len(nz)))]] -= 1
        four += hand[wild] == 4
        ref = joy.can_complete(hand, n_melds, wild, melds if n_melds else None)
        assert vjoy.can_complete(hand, n_melds, wild, melds, *TABLES) == ref, (hand.tolist(), n_melds, wild)
    assert four > 500


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
    assert vjoy.can_win(hand, 0, wild, zeros, *TABLES) is expected
    assert joy.can_win(hand, 0, None if wild < 0 else wild) is expected


def test_need_table_is_the_uncapped_dynamic_programme():
    """Spot rows of the look-up tables against fewest_wild itself."""
    suit, honour = TABLES
    rng = np.random.default_rng(11)
    cur, nxt = np.empty(50, np.int64), np.empty(50, np.int64)
    for table, size in ((suit, 9), (honour, 7)):
        for _ in range(2000):
            h = np.bincount(rng.integers(0, size, int(rng.integers(0, 15))), minlength=size)
            if h.max() > 4:
                continue
            need0, need2 = vjoy.fewest_wild(h.astype(np.int64), np.full(size, 4, np.int64), size,
                                            size == 9, cur, nxt)
            key = int(sum(int(c) * 5 ** i for i, c in enumerate(h)))
            assert (table[key, 0], table[key, 1]) == (need0, need2 - need0)


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
