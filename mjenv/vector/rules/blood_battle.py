"""Compiled Sichuan blood-battle scoring (S7-S11, S15): the array form of
:mod:`mjenv.rules.blood_battle`, giving the same points.

A seat's tiles are a 27-kind count row plus a meld row (``meld[k]``: 0 none, or one of the meld
codes below). Rules travel as an int64 vector (the ``R_*`` indices, filled by :func:`rule_vector`).
Base patterns (S8) are read from the shape bits instead of listing decompositions: a hand is
all pungs when every concealed count is 0, 2 or 3 with one pair, and 带幺九 when the suit table says
some reading has a 1 or a 9 in every set; the largest (fan − 根 adjustment) reading is kept.
Rule IDs: docs/rules-blood-battle.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...actions import BLOOD_BATTLE
from ...config import BloodBattleRules
from .beans import bankroll_vector
from .shapes import MELDS, POW5, is_seven_pairs, suit_key, suited_is_wait, suited_regular_bits

PONG, KONG, ADDKONG, ANKAN = 1, 2, 3, 4
"""Meld codes: 碰, 直杠, 面下杠, 暗杠 (the reference's Meld kinds pong, kong, addkong, ankan)."""

(R_CLASSIC, R_BASE, R_DIRECT, R_ADDED, R_CONCEALED, R_BONUS, R_GEN_KONGS, R_CAP, R_PIG,
 R_TRANSFER, R_FORCED, R_COEF, R_RAKE) = range(13)
# S16 escape (the minimums in beans) and B4 balances: the bankroll takes four entries, one per seat.
R_ESCAPE, R_ESCAPE_QQ, R_FACTOR, R_MIN_PENALTY, R_MIN_COMPENSATION, R_CAP_POINTS, R_BALANCES = range(13, 20)
R_BANKROLL, R_MIN_BEANS = 20, 24
# S17 items: on, the first item action (after ESCAPE), qiankun_tiles, qianliyan_parts, and each
# seat's inventory at the start of a hand (five counts per seat, in mjenv.config.ITEMS order).
R_ITEMS, R_ITEM_A, R_QIANKUN_TILES, R_QIANLIYAN_PARTS, R_INVENTORY, R_SIZE = 25, 26, 27, 28, 29, 49
BONUS_NONE, BONUS_FAN, BONUS_BASE = 0, 1, 2

# WinContext flags, or-ed into one int.
SELF_DRAWN, AFTER_KONG, ROB_KONG, FIRST_TURN, DEALER = 1, 2, 4, 8, 16


def rule_vector(r: BloodBattleRules) -> np.ndarray:
    """The rules as the int64 vector the compiled code reads."""
    v = np.zeros(R_SIZE, dtype=np.int64)
    v[R_CLASSIC] = r.mode == "classic"
    v[R_BASE] = r.base_points
    v[R_DIRECT] = r.direct_kong_units * r.base_points
    v[R_ADDED] = r.added_kong_units * r.base_points
    v[R_CONCEALED] = r.concealed_kong_units * r.base_points
    v[R_BONUS] = ("none", "add_fan", "add_base").index(r.self_draw_bonus)
    v[R_GEN_KONGS] = r.gen_counts_kongs
    v[R_CAP] = r.cap_fan
    v[R_PIG] = r.flower_pig_points
    v[R_TRANSFER] = r.gang_pao_transfer
    v[R_FORCED] = r.forced_win_last_four
    v[R_COEF] = r.room_coefficient
    v[R_RAKE] = r.rake
    v[R_ESCAPE] = r.escape
    v[R_ESCAPE_QQ] = r.escape_rule == "qq"
    v[R_FACTOR] = r.escape_factor
    v[R_MIN_PENALTY] = r.escape_penalty_floor
    v[R_MIN_COMPENSATION] = r.escape_compensation_floor
    v[R_CAP_POINTS] = r.cap_points
    bankroll_vector(v, r, R_BALANCES, R_BANKROLL, R_MIN_BEANS)
    if r.items is not None:
        v[R_ITEMS] = 1
        v[R_ITEM_A] = BLOOD_BATTLE.with_options(r.escape, True).ITEM
        v[R_QIANKUN_TILES] = r.qiankun_tiles
        v[R_QIANLIYAN_PARTS] = r.qianliyan_parts
        v[R_INVENTORY : R_INVENTORY + 20] = np.array(r.items).reshape(-1)
    return v


@njit(cache=True, nogil=True)
def suits_mask(h: np.ndarray, meld: np.ndarray) -> int:
    """Bit s set for each suit among the concealed tiles and the melds."""
    found = 0
    for k in range(27):
        if h[k] or meld[k]:
            found |= 1 << (k // 9)
    return found


@njit(cache=True, nogil=True)
def is_flower_pig(h: np.ndarray, meld: np.ndarray) -> bool:
    """S15.1 花猪: tiles of all three suits (declared melds count)."""
    return suits_mask(h, meld) == 7


@njit(cache=True, nogil=True)
def gen_count(h: np.ndarray, meld: np.ndarray, gen_counts_kongs: bool) -> int:
    """S9 根: kinds owned four times; declared kongs only with gen_counts_kongs, a 碰 plus its
    4th tile in hand always (revised S9)."""
    n = 0
    for k in range(27):
        owned = h[k]
        if meld[k] == PONG:
            owned += 3
        elif meld[k] and gen_counts_kongs:
            owned += 4
        if owned >= 4:
            n += 1
    return n


@njit(cache=True, nogil=True)
def _regular_fan(h: np.ndarray, meld: np.ndarray, flush: bool, table: np.ndarray) -> int:
    """S8: the best base pattern's fan over the regular readings; 0 when there is none."""
    bits = suited_regular_bits(h, table)
    if bits == 0:
        return 0
    yao = bits == 3
    jiang = True
    pairs, singles = 0, 0  # all pungs: every concealed count 0, 2 or 3, one of them 2
    for k in range(27):
        x = h[k]
        if x == 1 or x == 4:
            singles += 1
        elif x == 2:
            pairs += 1
        if (x or meld[k]) and k % 9 not in (1, 4, 7):
            jiang = False
        if meld[k] and k % 9 not in (0, 8):
            yao = False
    pungs = singles == 0 and pairs == 1
    if flush:
        return 5 if yao else (4 if pungs else 3)
    if pungs and jiang:
        return 4
    if yao:
        return 3
    return 2 if pungs else 1


@njit(cache=True, nogil=True)
def win_fan(h: np.ndarray, meld: np.ndarray, n_melds: int, ctx: int, void: int,
            rules: np.ndarray, table: np.ndarray) -> int:
    """S7-S10: the total fan of a win before the cap (the reference's ``total_fan``), or -1 when
    this is not a legal win. ``h`` holds the concealed tiles including the winning tile.
    """
    n = 0
    for k in range(27):
        n += h[k]
    if n + 3 * n_melds != 14:
        return -1
    suits = suits_mask(h, meld)
    if suits == 7 or (void >= 0 and suits >> void & 1):
        return -1
    flush = suits in (1, 2, 4)
    best = _regular_fan(h, meld, flush, table)  # fan − 根 adjustment of the best reading
    if n_melds == 0 and is_seven_pairs(h, 27):
        dragon = False
        for k in range(27):
            if h[k] == 4:
                dragon = True
        # (fan − 根 adjustment): 七对 3, 龙七对 5 − 1, 清七对 5, 清龙七对 6 − 1
        best = max(best, 5 if flush else (4 if dragon else 3))
    if best == 0:
        return -1
    if ctx & FIRST_TURN:
        best = max(best, 6)  # 天胡 / 地胡
    total = best + gen_count(h, meld, rules[R_GEN_KONGS] != 0)
    if ctx & AFTER_KONG:
        total += 1
    if ctx & ROB_KONG:
        total += 1
    if ctx & SELF_DRAWN and rules[R_BONUS] == BONUS_FAN:
        total += 1
    return total


@njit(cache=True, nogil=True)
def win_points(total_fan: int, ctx: int, rules: np.ndarray) -> int:
    """S9-S11: the points X one paying seat pays for a win of ``total_fan`` (capped here)."""
    bonus = 1 if ctx & SELF_DRAWN and rules[R_BONUS] == BONUS_BASE else 0
    capped = min(total_fan, rules[R_CAP])
    return rules[R_BASE] * ((1 << (capped - 1)) + bonus)


@njit(cache=True, nogil=True)
def score_win(h: np.ndarray, meld: np.ndarray, n_melds: int, ctx: int, void: int,
              rules: np.ndarray, table: np.ndarray) -> int:
    """S7-S11: the points X one paying seat pays, or -1 when this is not a legal win."""
    total = win_fan(h, meld, n_melds, ctx, void, rules, table)
    return -1 if total < 0 else win_points(total, ctx, rules)


@njit(cache=True, nogil=True)
def ready_points(h: np.ndarray, meld: np.ndarray, n_melds: int, void: int, rules: np.ndarray,
                 table: np.ndarray) -> int:
    """S15.2 查大叫: the largest plain-discard-win X over the waits of a 3k+1 hand; 0 if not ready.
    A kind already owned four times is never a wait. ``h`` is restored."""
    best = 0
    for t in range(27):
        owned = h[t]
        if meld[t]:
            owned += 3 if meld[t] == PONG else 4
        if owned >= 4 or not suited_is_wait(h, t, table):
            continue
        h[t] += 1
        x = score_win(h, meld, n_melds, 0, void, rules, table)
        h[t] -= 1
        if x > best:
            best = x
    return best


@njit(cache=True, nogil=True)
def holds_3n2(h: np.ndarray, n_melds: int) -> bool:
    """A hand of 3n+2 tiles (a kong counts 3): a seat that has drawn and not yet discarded."""
    n = 0
    for k in range(27):
        n += h[k]
    return (n + 3 * n_melds) % 3 == 2


@njit(cache=True, nogil=True)
def flower_pig_now(h: np.ndarray, meld: np.ndarray, n_melds: int) -> bool:
    """S15.1 as if the wall ran out now (S16): :func:`is_flower_pig`; a 3n+2 hand only when every
    discard leaves three suits, that is when each suit is melded or held at least twice."""
    if not holds_3n2(h, n_melds):
        return is_flower_pig(h, meld)
    for s in range(3):
        held, melded = 0, False
        for k in range(9 * s, 9 * s + 9):
            held += h[k]
            melded = melded or meld[k] != 0
        if not melded and held < 2:
            return False
    return True


@njit(cache=True, nogil=True)
def _wait_possible(n: np.ndarray, melds_ok: np.ndarray, odd: int, n_melds: int) -> bool:
    """:func:`may_wait` from the suits' counts ``n``, whether each splits into melds, and the
    number of kinds held an odd number of times."""
    ones, twos, regular = 0, 0, True
    for s in range(3):
        m = n[s] % 3
        ones += m == 1
        twos += m == 2
        regular = regular and (m != 0 or melds_ok[s])
    regular = regular and ((ones == 1 and twos == 0) or (ones == 0 and twos == 2))
    return regular or (n_melds == 0 and odd == 1)


@njit(cache=True, nogil=True)
def _suit_counts(h: np.ndarray, n: np.ndarray, keys: np.ndarray) -> int:
    """Each suit's number of tiles into ``n`` and its table key into ``keys``; returns the number
    of kinds held an odd number of times."""
    odd = 0
    for s in range(3):
        n[s] = 0
        for k in range(9 * s, 9 * s + 9):
            n[s] += h[k]
            odd += h[k] & 1
        keys[s] = suit_key(h, 9 * s)
    return odd


@njit(cache=True, nogil=True)
def may_wait(h: np.ndarray, n_melds: int, table: np.ndarray) -> bool:
    """Whether the 3k+1 hand ``h`` can have a wait at all (a necessary condition, three table
    reads): for a regular win the suits' counts mod 3 are (1, 0, 0) or (2, 2, 0) in some order
    and each suit of 0 mod 3 splits into melds; for 七对, one kind of odd count and no melds."""
    n, keys, melds_ok = np.zeros(3, np.int64), np.zeros(3, np.int64), np.zeros(3, np.bool_)
    odd = _suit_counts(h, n, keys)
    for s in range(3):
        melds_ok[s] = table[keys[s]] & MELDS != 0
    return _wait_possible(n, melds_ok, odd, n_melds)


@njit(cache=True, nogil=True)
def ready_points_now(h: np.ndarray, meld: np.ndarray, n_melds: int, void: int, rules: np.ndarray,
                     table: np.ndarray) -> int:
    """S15.2 as if the wall ran out now (S16): :func:`ready_points`; a 3n+2 hand is judged on its
    most favourable discard. Hands that cannot wait (:func:`may_wait`, updated discard by discard)
    are skipped. ``h`` is restored."""
    if not holds_3n2(h, n_melds):
        return ready_points(h, meld, n_melds, void, rules, table) if may_wait(h, n_melds, table) else 0
    n, keys, melds_ok = np.zeros(3, np.int64), np.zeros(3, np.int64), np.zeros(3, np.bool_)
    odd = _suit_counts(h, n, keys)
    best = 0
    for k in range(27):
        if not h[k]:
            continue
        s = k // 9
        for o in range(3):  # the suits after discarding k: only suit s changes
            melds_ok[o] = table[keys[o] - (POW5[k % 9] if o == s else 0)] & MELDS != 0
        n[s] -= 1
        if _wait_possible(n, melds_ok, odd + (1 if h[k] % 2 == 0 else -1), n_melds):
            h[k] -= 1
            best = max(best, ready_points(h, meld, n_melds, void, rules, table))
            h[k] += 1
        n[s] += 1
    return best
