"""The 财神 wildcard (docs/rules-joy-mahjong.md J2, J4): the search of ``score_win`` against brute
force over every substitution, the shapes a wildcard completes, ``can_win``, and ``wildcard_of``."""

from __future__ import annotations

import random
from itertools import combinations_with_replacement
from typing import Optional

import pytest
from tests.mjenv.rules.test_joy_fans import KNITTED, ORPHANS, random_complete_hand, random_context

from mjenv import tiles
from mjenv.config import JoyMahjongRules
from mjenv.melds import Meld, parse_meld
from mjenv.rules import shapes
from mjenv.rules.joy import (JoyContext, JoyScore, can_complete, can_win, score_completion,
                             score_win, wildcard_of)

RULES = JoyMahjongRules()
HONOURS = set(range(27, 34))


# ---------------------------------------------------------------- helpers


def with_wildcards(rng: random.Random, w: int) -> tuple[list[int], list[Meld], int]:
    """A random complete hand whose wild kind is held exactly ``w`` times: some tiles of the
    hand are turned into the wildcard (which may also be held as itself)."""
    while True:
        conc, melds = random_complete_hand(rng)
        meld_kinds = {k for m in melds for k in m.kinds()}
        wild = rng.choice([k for k in range(34) if k not in meld_kinds])
        if conc[wild] > w:
            continue
        others = [k for k in range(34) if k != wild for _ in range(conc[k])]
        if w - conc[wild] > len(others):
            continue
        c = conc[:]
        for k in rng.sample(others, w - conc[wild]):
            c[k] -= 1
            c[wild] += 1
        return c, melds, wild


def context_for(rng: random.Random, c: list[int], melds: list[Meld], win: int,
                wild: int) -> JoyContext:
    """Random legal flags; a wildcard winning tile is self-drawn (J2)."""
    ctx = random_context(rng, c, melds, win)
    if win == wild and not ctx.self_drawn:
        ctx = JoyContext(self_drawn=True, last_tile=ctx.last_tile, fourth_tile=ctx.fourth_tile,
                         seat_wind=ctx.seat_wind, prevailing_wind=ctx.prevailing_wind,
                         flowers=ctx.flowers)
    return ctx


def is_winning_shape(h: list[int], n_melds: int) -> bool:
    """J2 shapes of a concrete wildcard-free concealed hand (an independent, simple check)."""
    if shapes.is_regular_win(h):
        return True
    if n_melds == 0:
        if all(x % 2 == 0 for x in h):
            return True  # 七对
        if all(h[k] for k in ORPHANS) and sum(h[k] for k in ORPHANS) == 14:
            return True  # 十三幺
        held = {k for k in range(34) if h[k]}
        if max(h) == 1 and any(held <= set(p) | HONOURS for p in KNITTED):
            return True  # 全不靠 / 七星不靠
    if n_melds <= 1:
        for p in KNITTED:  # 组合龙 + melds + pair
            if all(h[k] for k in p):
                rest = h[:]
                for k in p:
                    rest[k] -= 1
                if shapes.is_regular_win(rest):
                    return True
    return False


def brute_force(c: list[int], melds: list[Meld], win: int, wild: int, ctx: JoyContext,
                prefilter: bool) -> list[tuple[tuple, JoyScore]]:
    """Every legal substitution (each wildcard -> one of 34 kinds, no fifth copy counting hand
    and melds), scored through J4-adjusted PyMahjongGB; (tie key, score) per winning one.

    Without ``prefilter`` PyMahjongGB itself judges every substitution.
    """
    w = c[wild]
    base = c[:]
    base[wild] = 0
    owned = base[:]
    for m in melds:
        for k in m.kinds():
            owned[k] += 1
    out = []
    for fill in combinations_with_replacement(range(34), w):
        h = base[:]
        for k in fill:
            h[k] += 1
        if any(owned[k] + fill.count(k) > 4 for k in set(fill)):
            continue
        if prefilter and not is_winning_shape(h, len(melds)):
            continue
        for win_as in (sorted(set(fill)) if win == wild else [win]):
            try:
                s = score_completion(c, melds, win, wild, fill, win_as, ctx, RULES)
            except ValueError:
                continue  # PyMahjongGB: not a win
            key = (s.fan, fill.count(wild), tuple(-k for k in fill), -win_as)
            out.append((key, s))
    return out


# ---------------------------------------------------------------- (a), (b) brute force


@pytest.mark.parametrize("w, n, prefilter", [(1, 60, False), (2, 30, False), (2, 20, True),
                                             (3, 16, True), (4, 6, True)])
def test_search_equals_brute_force(w: int, n: int, prefilter: bool) -> None:
    rng = random.Random(1000 * w + n)
    for _ in range(n):
        c, melds, wild = with_wildcards(rng, w)
        win = rng.choice([k for k in range(34) if c[k]])
        ctx = context_for(rng, c, melds, win, wild)
        result = score_win(c, melds, win, wild, ctx, RULES)
        assert result is not None
        scored = brute_force(c, melds, win, wild, ctx, prefilter)
        best_key, best = max(scored, key=lambda t: t[0])
        # (a) the search finds the brute-force maximum, and the same tie-broken substitution.
        assert result.fan == best.fan, (c, melds, wild, win, ctx)
        assert (result.substitution, result.win_as) == (best.substitution, best.win_as)
        assert result.fans == best.fans
        # (b) it is at least every single legal substitution and never makes a fifth copy.
        assert all(result.fan >= s.fan for _, s in scored)
        owned = c[:]
        owned[wild] = 0
        for m in melds:
            for k in m.kinds():
                owned[k] += 1
        for _, k in result.substitution:
            owned[k] += 1
        assert max(owned) <= 4
        assert len(result.substitution) == w and all(x == wild for x, _ in result.substitution)


def test_no_fifth_copy_through_melds() -> None:
    # 5p is melded as a kong: the wildcard 1m can't be a fifth 5p, so 4p6p needs ... 5p: no win.
    melds = [parse_meld("kong:5p"), parse_meld("pong:E")]
    assert score_win(tiles.counts_of("46p1m789s99s"), melds, 22 + 4, 0, JoyContext(),
                     RULES) is None
    assert not can_win(tiles.counts_of("46p1m789s99s"), 2, 0,
                       meld_counts=tiles.to_counts([k for m in melds for k in m.kinds()]))
    # With a pong (3 copies) the fourth 5p is fine.
    melds = [parse_meld("pong:5p"), parse_meld("pong:E")]
    r = score_win(tiles.counts_of("46p1m789s99s"), melds, 26, 0, JoyContext(), RULES)
    assert r is not None and r.substitution == ((0, 13),)
    # Four 1m in hand are all wildcards; no kind gets a fifth copy even so.
    r = score_win(tiles.counts_of("1111m234p567s99sEE"), [], 26, 0, JoyContext(), RULES)
    assert r is not None
    counts = tiles.counts_of("234p567s99sEE").astype(int)
    for _, k in r.substitution:
        counts[k] += 1
    assert counts.max() <= 4


# ---------------------------------------------------------------- (c) special shapes


def joy(hand: str, win: str, wild: str, melds: tuple[str, ...] = (), **ctx) -> Optional[JoyScore]:
    """score_win on tile strings."""
    return score_win(tiles.counts_of(hand), [parse_meld(m) for m in melds],
                     tiles.parse_tile(win), tiles.parse_tile(wild), JoyContext(**ctx), RULES)


def test_seven_pairs_with_wildcards() -> None:
    # 9s wild twice: one pairs the lone 7s, the other the lone E.
    r = joy("1155m2288p7sECC99s", "C", "9s")
    assert r is not None and r.shape == "seven_pairs"
    assert sorted(t for _, t in r.substitution) == [24, 27]
    assert {"七对"} <= {f.name for f in r.fans} and "无财神" not in {f.name for f in r.fans}
    # Four wildcards and five real pairs could make 连七对 (88), but 2222 3333 4444 5555 66 is
    # worth more (四暗刻 + 一色四节高 + 清一色 ...): the maximum over substitutions wins (J4).
    r = joy("2233445566m1111s", "6m", "1s", self_drawn=True)
    assert r is not None and r.fan > 88 + 24 and {"四暗刻", "一色四节高"} <= {f.name for f in r.fans}


def test_thirteen_orphans_with_wildcards() -> None:
    # 5m wild fills the missing 白 and the pair.
    r = joy("19m19p19sESWNCF55m", "C", "5m")
    assert r is not None and r.shape == "thirteen_orphans" and r.fan >= 88
    assert {t for _, t in r.substitution} >= {33}
    # The winning tile itself is the wildcard (self-drawn) and stands for the missing 9s.
    r = joy("19m19p1sESWNCFPP5m", "5m", "5m", self_drawn=True)
    assert r is not None and r.shape == "thirteen_orphans" and r.win_as == 26


def test_knitted_with_wildcards() -> None:
    # 全不靠: 147m 258p 3s + ESWN, 6s wild twice -> two more of the pattern or the honours.
    r = joy("147m258p3sESWN66sC", "C", "6s")
    assert r is not None and r.shape == "knitted"
    assert "全不靠" in {f.name for f in r.fans} or "七星不靠" in {f.name for f in r.fans}
    # 七星不靠 (24) reached with a wildcard as the missing 白 (the other as 8p, the smallest of
    # the knitted tiles that fit); two knitted tiles instead would be 全不靠 (12) only.
    r = joy("147m25p3sESWNCF11s", "C", "1s")
    assert r is not None and "七星不靠" in {f.name for f in r.fans}
    assert r.substitution == ((18, 16), (18, 33))
    # 组合龙 + a meld + a pair, the wildcard standing for a knitted tile.
    r = joy("147m258p36sE789m11p", "1p", "E")
    assert r is not None and r.shape == "knitted_straight" and r.substitution == ((27, 26),)


# ---------------------------------------------------------------- the winning tile


def test_wildcard_winning_tile() -> None:
    # A discarded wildcard cannot be claimed (J2).
    with pytest.raises(ValueError, match="discarded wildcard"):
        joy("123m456p789sEEE1s6s", "6s", "6s")
    # Self-drawn it stands for 1s: 单钓将 on the substituted tile.
    r = joy("123m456p789sEEE1s6s", "6s", "6s", self_drawn=True)
    assert r is not None and r.win_as == 18 and r.substitution == ((23, 18),)
    assert "单钓将" in {f.name for f in r.fans}
    # 和绝张 describes the physical tile: not passed on when the wildcard stands for another.
    r2 = joy("123m456p789sEEE1s6s", "6s", "6s", self_drawn=True, fourth_tile=True)
    assert r2 is not None and "和绝张" not in {f.name for f in r2.fans} and r2.fan == r.fan
    # ... but it is when the wildcard is its own face (its other three copies visible).
    r3 = joy("234m456p78s6sEEE11s", "6s", "6s", self_drawn=True, fourth_tile=True)
    assert r3 is not None and r3.win_as == 23 and "和绝张" in {f.name for f in r3.fans}


def test_wildcard_never_in_a_meld() -> None:
    with pytest.raises(ValueError, match="never takes part in a meld"):
        joy("123m456p789s11s", "1s", "6s", melds=("chow:567s",))


def test_tie_rule_prefers_own_face() -> None:
    # 6s wild completes 456s as itself; any tie goes to the own-face reading, here worth
    # 无财神 anyway. Deterministic: the same call gives the same substitution.
    a = joy("123m456p789s45s6sEE", "E", "6s")
    b = joy("123m456p789s45s6sEE", "E", "6s")
    assert a == b and a is not None and a.substitution == ((23, 23),)


# ---------------------------------------------------------------- (d) can_win


def perturbed(rng: random.Random, c: list[int], melds: list[Meld], wild: int) -> list[int]:
    """Swap one random tile for another kind (keeping four copies at most)."""
    owned = c[:]
    for m in melds:
        for k in m.kinds():
            owned[k] += 1
    while True:
        out = c[:]
        a = rng.choice([k for k in range(34) if out[k]])
        b = rng.randrange(34)
        if a == b or owned[b] >= 4 or (b == wild and b in meld_counts(melds)):
            continue
        out[a] -= 1
        out[b] += 1
        return out


def meld_counts(melds: list[Meld]) -> list[int]:
    """The melds' tiles as 34 counts."""
    counts = [0] * 34
    for m in melds:
        for k in m.kinds():
            counts[k] += 1
    return counts


def test_can_win_agrees_with_score_win() -> None:
    rng = random.Random(7)
    wins = losses = 0
    for i in range(4000):
        w = rng.choice([0, 0, 1, 1, 2, 3, 4])
        c, melds, wild = with_wildcards(rng, w)
        if i % 2:
            c = perturbed(rng, c, melds, wild)
        if rng.random() < 0.1:  # no wildcard at all
            wild_arg: Optional[int] = None
        else:
            wild_arg = wild
        win = rng.choice([k for k in range(34) if c[k] and k != wild_arg] or [wild])
        ctx = JoyContext(self_drawn=True)
        expect = score_win(c, melds, win, wild_arg, ctx, RULES) is not None
        assert can_win(c, len(melds), wild_arg, meld_counts(melds)) == expect, (c, melds, wild_arg)
        if not melds:  # numpy int8 input and no meld_counts give the same answer
            assert can_win(tiles.to_counts(tiles.from_counts(c)), 0, wild_arg) == expect
        wins += expect
        losses += not expect
    assert wins > 1500 and losses > 1000


@pytest.mark.parametrize("w, n", [(0, 400), (1, 300), (2, 150), (3, 20)])
def test_can_win_against_brute_force_shapes(w: int, n: int) -> None:
    # A brute-force reading of J2: some substitution gives a winning shape.
    rng = random.Random(11 + w)
    for i in range(n):
        c, melds, wild = with_wildcards(rng, w)
        if i % 2:
            c = perturbed(rng, c, melds, wild)
        w_now = c[wild]
        owned = c[:]
        owned[wild] = 0
        for k, x in enumerate(meld_counts(melds)):
            owned[k] += x
        base = c[:]
        base[wild] = 0
        expect = False
        for fill in combinations_with_replacement(range(34), w_now):
            h = base[:]
            ok = True
            for k in fill:
                h[k] += 1
                ok = ok and owned[k] + fill.count(k) <= 4
            if ok and is_winning_shape(h, len(melds)):
                expect = True
                break
        assert can_win(c, len(melds), wild, meld_counts(melds)) == expect, (c, melds, wild)


def test_can_win_rejects_wrong_counts() -> None:
    with pytest.raises(ValueError, match="concealed tiles"):
        can_win(tiles.counts_of("123m456p789s11s"), 0, None)


# ---------------------------------------------------------------- (e) wildcard_of


@pytest.mark.parametrize("indicator, wild", [
    ("5m", "6m"), ("9m", "1m"), ("9p", "1p"), ("8s", "9s"), ("9s", "1s"),
    ("E", "S"), ("S", "W"), ("W", "N"), ("N", "C"), ("C", "F"), ("F", "P"), ("P", "E"),
])
def test_wildcard_of(indicator: str, wild: str) -> None:
    assert wildcard_of(tiles.parse_tile(indicator)) == tiles.parse_tile(wild)


def test_wildcard_of_is_a_cycle_per_group() -> None:
    for lo, size in ((0, 9), (9, 9), (18, 9), (27, 7)):
        seen, k = [], lo
        for _ in range(size):
            seen.append(k)
            k = wildcard_of(k)
        assert k == lo and sorted(seen) == list(range(lo, lo + size))
    with pytest.raises(ValueError):
        wildcard_of(34)  # a flower is never an indicator


def waiting_hand(rng: random.Random, w: int) -> tuple[list[int], list[Meld], int]:
    """A 3n+1 concealed hand holding exactly ``w`` wildcards: a complete hand less one tile
    that is not the wildcard, half the time with another tile swapped."""
    while True:
        c, melds, wild = with_wildcards(rng, w)
        if rng.random() < 0.5:
            c = perturbed(rng, c, melds, wild)
        real = [k for k in range(34) if c[k] and k != wild]
        if c[wild] != w or not real:
            continue
        c[rng.choice(real)] -= 1
        return c, melds, wild


@pytest.mark.parametrize("w", [0, 1, 2, 3, 4])
def test_precheck_never_misses_a_win_the_scorer_accepts(w: int) -> None:
    """J2 (four wildcards included): for every tile that completes a waiting hand by the
    scorer, the engine's pre-check (can_complete) and shape check (can_win) both say win, and
    can_win says win for no other tile."""
    rng = random.Random(100 + w)
    wins = 0
    for _ in range(150):
        c, melds, wild = waiting_hand(rng, w)
        melded = meld_counts(melds)
        ready = can_complete(c, len(melds), wild, melded)
        for k in range(34):
            if c[k] + melded[k] >= 4 or (k == wild and melded[k]):
                continue
            full = c[:]
            full[k] += 1
            scored = score_win(full, melds, k, wild, JoyContext(self_drawn=k == wild), RULES)
            assert can_win(full, len(melds), wild, melded) == (scored is not None), (c, melds, k)
            if scored is not None:
                wins += 1
                assert ready, (c, melds, wild, k)
    assert wins > 20


def test_can_win_refuses_more_than_four_wildcards() -> None:
    with pytest.raises(ValueError, match="at most four wildcards.*can_complete"):
        can_win(tiles.counts_of("147m234p678sEEEEE"), 0, tiles.parse_tile("E"))
