"""Win shapes, waits and shanten (docs/rules-blood-battle.md#S7), against known hands and a slow reference."""

from __future__ import annotations

import random
from functools import lru_cache

import numpy as np
import pytest

from mjenv.rules import shapes
from mjenv.rules.shapes import (
    Decomposition, decompositions, is_regular_win, is_seven_pairs, regular_shanten, seven_pairs_shanten,
    shanten, waits,
)
from mjenv.tiles import counts_of, parse

# ---------------------------------------------------------------- slow reference


def _all_melds() -> list[tuple[int, ...]]:
    """Every meld as a tuple of kinds: 34 pungs and 21 chows."""
    out = [(k, k, k) for k in range(34)]
    out += [(k, k + 1, k + 2) for k in range(27) if k % 9 <= 6]
    return out


MELDS = _all_melds()


@lru_cache(maxsize=None)
def ref_melds(c: tuple[int, ...]) -> bool:
    """Obviously correct: the lowest tile lies in some meld; remove it, the rest is melds too."""
    if not any(c):
        return True
    low = next(k for k in range(34) if c[k])
    for meld in MELDS:
        if low not in meld:
            continue
        rest = list(c)
        for k in meld:
            rest[k] -= 1
        if min(rest) >= 0 and ref_melds(tuple(rest)):
            return True
    return False


def ref_regular(c: list[int]) -> bool:
    """Some pair removed leaves only melds."""
    if sum(c) % 3 != 2:
        return False
    for p in range(34):
        if c[p] >= 2:
            rest = list(c)
            rest[p] -= 2
            if ref_melds(tuple(rest)):
                return True
    return False


def ref_seven_pairs(c: list[int]) -> bool:
    return sum(c) == 14 and all(x % 2 == 0 for x in c)


def ref_waits(c: list[int]) -> list[int]:
    out = []
    for t in range(34):
        if c[t] < 4:
            d = list(c)
            d[t] += 1
            if ref_regular(d) or ref_seven_pairs(d):
                out.append(t)
    return out


def _random_hands(n_hands: int, size: int, seed: int) -> list[list[int]]:
    """Mixed random hands: uniform, one-suit, one-suit+honours, and near-complete ones."""
    rng = random.Random(seed)
    hands = []
    full = [k for k in range(34) for _ in range(4)]
    for i in range(n_hands):
        style = i % 4
        if style == 0:
            pool = full
        elif style == 1:
            suit = rng.randrange(3)
            pool = [k for k in full if k // 9 == suit]
        elif style == 2:
            suit = rng.randrange(3)
            pool = [k for k in full if k // 9 == suit or k >= 27]
        else:
            hands.append(_near_complete(rng, size))
            continue
        c = [0] * 34
        for k in rng.sample(pool, size):
            c[k] += 1
        hands.append(c)
    return hands


def _near_complete(rng: random.Random, size: int) -> list[int]:
    """A complete hand with tiles removed down to ``size`` (and one swapped at random)."""
    while True:
        c = [0] * 34
        for meld in rng.sample(MELDS, 4) + [(rng.randrange(34),) * 2]:
            for k in meld:
                c[k] += 1
        if max(c) > 4:
            continue
        kinds = [k for k in range(34) for _ in range(c[k])]
        rng.shuffle(kinds)
        kinds = kinds[:size]
        if rng.random() < 0.5:
            kinds[0] = rng.randrange(34)
        out = [0] * 34
        for k in kinds:
            out[k] += 1
        if max(out) <= 4:
            return out


# ---------------------------------------------------------------- known cases


@pytest.mark.parametrize("hand, expected", [
    ("1112345678999m", "123456789m"),  # 九莲宝灯 shape: every tile of the suit
    ("1122334455667m", "147m"),  # 1m: 11+123+234+456+567; 4m: 44 pair; 7m: also seven pairs
    ("123456789m1234p", "14p"),  # 123+4 or 1+234
    ("1133557799m113p", "3p"),  # seven pairs only: no chow fits 1 3 5 7 9
    ("11m22p33s44m55p66sE", "E"),  # seven pairs waiting on an honour
    ("123m456p789sEESS", "ES"),  # honours only as pairs/pungs: a two-pair wait
    ("1111m123p456p789p", ""),  # the only shape needs a fifth 1m
    ("1111m2222m3333m4m", "45m"),  # 123×4+4 or seven pairs; 5m: 111+123+222+345+33
    ("13579m2468p1357s", ""),
    ("EEESSSWWWNNNC", "C"),
])
def test_waits_known(hand: str, expected: str) -> None:
    c = counts_of(hand)
    assert sum(c) == 13
    assert waits(c) == sorted(parse(expected))
    assert waits(c) == ref_waits(c.tolist())


def test_waits_accepts_lists_and_arrays() -> None:
    c = counts_of("1112345678999m")
    assert waits(c.tolist()) == waits(c) == waits(c.astype(np.int64)) == list(range(9))


def test_waits_rejects_wrong_size() -> None:
    with pytest.raises(ValueError, match="3k\\+1"):
        waits(counts_of("11122233344455m"))
    with pytest.raises(ValueError, match="34 kinds"):
        waits([0] * 33)


@pytest.mark.parametrize("hand, regular, seven", [
    ("11122233344455m", True, False),
    ("11223344556677m", True, True),  # 123×2 456×2 77 and seven pairs
    ("11224444557799m", False, True),  # a four is two pairs
    ("1133557799m1133p", False, True),
    ("123m456p789sEEESS", True, False),
    ("123m456p789sESWNC", False, False),
    ("11m", True, False),  # 3k+2 with k = 0
    ("1234m", False, False),
])
def test_win_shapes(hand: str, regular: bool, seven: bool) -> None:
    c = counts_of(hand)
    assert is_regular_win(c) is regular
    assert is_seven_pairs(c) is seven


def test_decompositions_all_readings() -> None:
    # 带幺九 seed example: 111222333m is three pungs or 123m×3 (S8).
    ds = decompositions(counts_of("111222333m78999p"))
    assert ds == [
        Decomposition(17, (("chow", 0), ("chow", 0), ("chow", 0), ("chow", 15))),
        Decomposition(17, (("pung", 0), ("pung", 1), ("pung", 2), ("chow", 15))),
    ]
    # 11112222333344m: three distinct readings, none duplicated.
    ds = decompositions(counts_of("11112222333344m"))
    assert sorted((d.pair, d.melds) for d in ds) == sorted([
        (0, (("chow", 0), ("chow", 0), ("chow", 1), ("chow", 1))),
        (3, (("chow", 0), ("chow", 0), ("chow", 0), ("chow", 0))),
        (3, (("chow", 0), ("pung", 0), ("pung", 1), ("pung", 2))),
    ])
    assert len(set(ds)) == len(ds)
    assert decompositions(counts_of("11224444557799m")) == []
    assert decompositions(counts_of("EEECCC11m")) == [Decomposition(0, (("pung", 27), ("pung", 31)))]


@pytest.mark.parametrize("hand, n_melds, expected, reg, seven", [
    ("11122233344455m", 0, -1, -1, 1),  # complete; five pairs inside for seven pairs
    ("11224444557799m", 0, -1, 2, -1),  # only 444 is a meld: three more need a tile each
    ("1112345678999m", 0, 0, 0, 4),
    ("1111m123p456p789p", 0, 1, 1, 4),  # a fifth 1m does not exist
    ("19m19p19sESWNCFP", 0, 6, 8, 6),  # all isolated: seven pairs is nearer
    ("147m258p369sESWN", 0, 6, 8, 6),
    ("123m456p789sEESSC", 0, 0, 0, 4),  # 14 tiles: discard C for a ready hand
    ("11m22p33s44m55p66s7s", 0, 0, 3, 0),  # no meld at all: four melds cost a tile each
    ("1234m", 3, 0, 0, None),  # one meld needed: 123 + 4 or 1 + 234
    ("13m", 4, 0, 0, None),  # four melds declared, a pair to make
    ("13m5p9p", 3, 1, 1, None),  # 13m needs 2m, a single needs its pair
])
def test_shanten_known(hand: str, n_melds: int, expected: int, reg: int, seven: int | None) -> None:
    c = counts_of(hand)
    assert shanten(c, n_melds) == expected
    assert regular_shanten(c, n_melds) == reg
    if seven is not None:
        assert seven_pairs_shanten(c) == seven


def test_shanten_rejects_wrong_size() -> None:
    with pytest.raises(ValueError, match="13 or 14 tiles"):
        shanten(counts_of("123m"))
    with pytest.raises(ValueError, match="with 2 declared melds"):
        shanten(counts_of("123m"), 2)


# ---------------------------------------------------------------- randomized cross-checks


@pytest.mark.parametrize("seed", [1, 2])
def test_waits_match_reference(seed: int) -> None:
    hands = _random_hands(1000, 13, seed)
    n_ready = 0
    for c in hands:
        got = waits(np.array(c, dtype=np.int8))
        assert got == ref_waits(c), c
        n_ready += bool(got)
    assert n_ready > 150  # the generator must produce enough ready hands to test anything


@pytest.mark.parametrize("seed", [3, 4])
def test_is_regular_win_matches_reference(seed: int) -> None:
    hands = _random_hands(1000, 14, seed)
    wins = 0
    for c in hands:
        assert is_regular_win(c) is ref_regular(c), c
        wins += ref_regular(c)
    assert wins > 50


def test_is_regular_win_with_declared_melds() -> None:
    rng = random.Random(5)
    for size in (2, 5, 8, 11):
        for c in _random_hands(200, size, rng.randrange(10 ** 6)):
            assert is_regular_win(c) is ref_regular(c), c


def test_shanten_consistency() -> None:
    for c in _random_hands(300, 13, 6):
        arr = np.array(c, dtype=np.int8)
        s = shanten(arr)
        # Ready exactly when some tile completes the hand.
        assert (s == 0) == bool(waits(arr)), c
        # One draw lowers shanten by exactly one at best (exactness, no fifth copies).
        best = 99
        for t in range(34):
            if c[t] < 4:
                arr[t] += 1
                best = min(best, shanten(arr))
                arr[t] -= 1
        assert best == s - 1, c
    for c in _random_hands(100, 14, 7):
        arr = np.array(c, dtype=np.int8)
        s = shanten(arr)
        assert (s == -1) == (ref_regular(c) or ref_seven_pairs(c)), c
        # A 14-tile hand is as far as its best discard.
        best = 99
        for t in range(34):
            if c[t]:
                arr[t] -= 1
                best = min(best, shanten(arr))
                arr[t] += 1
        assert s == (-1 if s == -1 else best), c


def test_shanten_with_melds_consistency() -> None:
    for c in _random_hands(300, 7, 8):
        s = shanten(c, 2)
        assert (s == 0) == bool(waits(c)), c


# ---------------------------------------------------------------- bounded memo tables


def _memo_tables() -> list[tuple[str, shapes.BoundedTable]]:
    from mjenv.rules import joy
    return [("shapes._SUIT_INFO", shapes._SUIT_INFO), ("shapes._HONOUR_INFO", shapes._HONOUR_INFO),
            ("shapes._COSTS[9]", shapes._COSTS[(9, True)]),
            ("shapes._COSTS[7]", shapes._COSTS[(7, False)]),
            ("joy._SUIT_TABLE", joy._SUIT_TABLE), ("joy._HONOUR_TABLE", joy._HONOUR_TABLE)]


DEPRECATED_MODULES = {"sichuan"}  # mjenv.rules.sichuan: mjenv.rules.blood_battle, with a warning


def test_every_cache_of_the_rules_is_bounded() -> None:
    """No memo of mjenv.rules grows without limit (a long run would leak memory)."""
    import importlib
    import pkgutil

    import mjenv.rules
    lru = 0
    for info in pkgutil.iter_modules(mjenv.rules.__path__):
        if info.name in DEPRECATED_MODULES:  # an alias of a module the loop reads anyway
            continue
        module = importlib.import_module(f"mjenv.rules.{info.name}")
        for name, value in vars(module).items():
            if hasattr(value, "cache_info"):
                lru += 1
                assert value.cache_parameters()["maxsize"] is not None, f"{info.name}.{name}"
    assert lru >= 4
    for name, table in _memo_tables():
        assert isinstance(table, shapes.BoundedTable) and table.limit <= 1 << 16, name


def test_memo_tables_stay_within_their_limit_and_stay_correct(monkeypatch) -> None:
    """With small limits the tables evict, and give the answers of unbounded fresh tables."""
    from mjenv.rules import joy
    rng = random.Random(5)
    hands = []
    for _ in range(300):
        tiles13 = rng.sample([k for k in range(34) for _ in range(4)], 13)
        counts = [tiles13.count(k) for k in range(34)]
        full = counts[:]
        full[rng.choice([k for k in range(34) if full[k] < 4])] += 1
        hands.append((counts, full, rng.randrange(34)))

    def answer(counts: list[int], full: list[int], wild: int) -> tuple:
        return waits(counts), shapes.regular_gap(bytes(counts), 4), joy.can_win(full, 0, wild)

    for _, table in _memo_tables():
        table.clear()
        monkeypatch.setattr(table, "limit", 50)
    bounded = []
    for hand in hands:
        bounded.append(answer(*hand))
        for name, table in _memo_tables():
            assert len(table) <= 50, name
    assert len(shapes._SUIT_INFO) > 25  # the tables did fill up and evict
    for _, table in _memo_tables():
        table.clear()
        monkeypatch.setattr(table, "limit", 1 << 20)
    assert [answer(*hand) for hand in hands] == bounded
