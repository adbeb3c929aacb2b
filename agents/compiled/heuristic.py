"""Compiled blood-battle heuristic: the batch form of :class:`agents.heuristic.HeuristicPolicy`.

Every function mirrors the Python one of the same name, step for step and in the same float
order, so that the choices (tie-breaks included) are identical. The view is the decoded work
array of :mod:`agents.compiled.features`; the table's rules travel as :func:`scoring`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mjenv.actions import BLOOD_BATTLE as L
from mjenv.config import BloodBattleRules
from mjenv.vector.rules.shapes import suit_table as win_shapes
from mjenv.vector.rules.blood_battle import ANKAN as M_ANKAN, KONG as M_KONG, PONG as M_PONG, score_win
from mjenv.vector.rules.blood_battle import rule_vector as engine_rule_vector

from .features import (HAND, KONG, OWN_ANKAN, PONG, RIVER, S_CLAIM, S_N_ANKAN, S_N_MELDS, S_VOID,
                       S_WALL, S_WON, SCALARS, VISIBLE, decode, new_view, obvious_action, shanten,
                       shanten_parts, useful_masks)

SEVEN_PAIRS_WEIGHT = 2.0  # a 七对 path draw counts this many plain draws (3 fan vs 1, but slower)
# What the heuristic weighs beyond shanten (``flags``; the full heuristic has them all). Weaker
# variants leave some out: they are the rungs of the reference ladders (agents.arena.ladder).
EFFICIENCY = 1
"""Within a shanten level, prefer the discard that leaves the most useful unseen draws."""
PATTERNS = 2
"""Aim for value: steer to a near 清一色, 碰 toward 对对胡, weight a ready hand's waits by their points."""
DEFENCE = 4
"""Avoid tiles a threatening seat may win on; dump the most dangerous void tile first."""
VOID = 8
"""定缺 the suit whose loss costs least (without: the first suit offered, 万)."""
ALL = EFFICIENCY | PATTERNS | DEFENCE | VOID
A_DISCARD, A_KONG, A_PONG, A_DIRECT_KONG = L.DISCARD, L.KONG, L.PONG, L.DIRECT_KONG
A_HU, A_ROB_KONG, A_PASS, A_VOID = L.HU, L.ROB_KONG, L.PASS, L.VOID


def scoring(rules: BloodBattleRules) -> tuple[np.ndarray, np.ndarray]:
    """What a win's points need in compiled code: the compiled engine's rule vector and its
    win-shape table (:mod:`mjenv.vector.rules`), so the heuristic scores waits with the engine's
    own scorer."""
    return engine_rule_vector(rules), win_shapes()


# ---------------------------------------------------------------- win points


@njit(cache=True, nogil=True)
def win_points(h: np.ndarray, v: np.ndarray, void: int, scoring: tuple) -> int:
    """Points (X) of a plain discard win with the concealed tiles ``h`` and the seat's melds in
    the view ``v``, 0 if not a legal win (``agents.heuristic.win_points``): the compiled engine's
    :func:`mjenv.vector.rules.blood_battle.score_win` with no win context."""
    meld = np.zeros(27, dtype=np.int8)
    for k in range(27):
        if v[PONG, k]:
            meld[k] = M_PONG
        elif v[OWN_ANKAN, k]:
            meld[k] = M_ANKAN
        elif v[KONG, k]:
            meld[k] = M_KONG
    rules, shapes = scoring
    return max(score_win(h, meld, v[SCALARS, S_N_MELDS], 0, void, rules, shapes), 0)


# ---------------------------------------------------------------- helpers


@njit(cache=True, nogil=True)
def flush_suit(v: np.ndarray) -> int:
    """The suit of a near 清一色 (all but <= 4 own tiles in it, every meld in it), or -1."""
    per = np.zeros(3, dtype=np.int64)
    meld_suits = 0
    for k in range(27):
        per[k // 9] += v[HAND, k]
        if v[PONG, k] or v[KONG, k] or v[OWN_ANKAN, k]:
            per[k // 9] += 3
            meld_suits |= 1 << (k // 9)
    s = 0
    for x in range(1, 3):
        if per[x] > per[s]:
            s = x
    if s == v[SCALARS, S_VOID] or per[s] < per.sum() - 4 or meld_suits & ~(1 << s):
        return -1
    return s


@njit(cache=True, nogil=True)
def toitoi_leaning(v: np.ndarray) -> bool:
    """Many pairs / triplets and only 碰-type melds: worth calling toward 对对胡."""
    void = v[SCALARS, S_VOID]
    pairs = 0
    for k in range(27):
        if v[HAND, k] >= 2 and k // 9 != void:
            pairs += 1
    return pairs + v[SCALARS, S_N_MELDS] >= 4


@njit(cache=True, nogil=True)
def _one_suit_discards(v: np.ndarray, r: int) -> int:
    """The suit a seat seems to collect (>= 6 non-void discards, at most one of that suit), or -1."""
    void = v[SCALARS, S_VOID + r]
    if void < 0:
        return -1
    per = np.zeros(3, dtype=np.int64)
    for k in range(27):
        per[k // 9] += v[RIVER + r, k]
    a, b = (1, 2) if void == 0 else ((0, 2) if void == 1 else (0, 1))
    if per[a] + per[b] < 6:
        return -1
    low = b if per[b] < per[a] else a
    return low if per[low] <= 1 else -1


@njit(cache=True, nogil=True)
def threats(v: np.ndarray, level: np.ndarray, collects: np.ndarray) -> bool:
    """Per relative seat: threat level and collected suit (``agents.heuristic.threats``); whether any."""
    wall = v[SCALARS, S_WALL]
    late = 0.5 * (wall < 30) + 0.5 * (wall < 15)
    level[:] = 0.0
    collects[:] = -1
    for r in range(1, 4):
        if v[SCALARS, S_WON + r]:
            continue
        exposed = v[SCALARS, S_N_ANKAN + r]
        for k in range(27):
            exposed += v[PONG + r, k] + v[KONG + r, k]
        collects[r] = _one_suit_discards(v, r)
        level[r] = late + 0.5 * max(0, exposed - 1) + 0.5 * (collects[r] >= 0)
    return level[1] != 0 or level[2] != 0 or level[3] != 0


@njit(cache=True, nogil=True)
def danger(v: np.ndarray, level: np.ndarray, collects: np.ndarray, k: int) -> float:
    """Rough risk of discarding kind k into the threatening seats."""
    total = 0.0
    for r in range(1, 4):
        # nobody wins on their void suit (docs/rules-blood-battle.md#S2)
        if not level[r] or k // 9 == v[SCALARS, S_VOID + r]:
            continue
        d = 1.0
        if collects[r] >= 0:
            d = 1.5 if k // 9 == collects[r] else 0.3
        if v[RIVER + r, k]:
            d *= 0.3
        if v[VISIBLE, k] >= 4:
            d *= 0.5
        if k % 9 == 0 or k % 9 == 8:
            d *= 0.8
        total += level[r] * d
    return total


@njit(cache=True, nogil=True)
def discard_weight(after: np.ndarray, sh: int, v: np.ndarray, void: int, unseen: np.ndarray,
                   table: np.ndarray, scoring: tuple, values: bool) -> float:
    """Useful unseen draws after a discard; with ``values`` a ready hand weights each wait by its
    points / 6 (else it counts them)."""
    reg, sp = useful_masks(after, void, v[SCALARS, S_N_MELDS], table)
    weight = 0.0
    for t in range(27):
        if not (reg | sp) >> t & 1:
            continue
        if sh == 0 and not values:
            weight += unseen[t]
        elif sh == 0:
            if unseen[t]:
                after[t] += 1
                weight += unseen[t] * win_points(after, v, void, scoring) / 6
                after[t] -= 1
        else:
            weight += unseen[t] * (SEVEN_PAIRS_WEIGHT if sp >> t & 1 else 1.0)
    return weight


# ---------------------------------------------------------------- decisions


@njit(cache=True, nogil=True)
def _choose_void(v: np.ndarray, mask: np.ndarray, table: np.ndarray, flags: int) -> int:
    """The suit whose loss costs least: strongest rest, then fewest tiles, then most useful draws;
    without VOID the first suit offered."""
    hand = v[HAND]
    best = -1
    bk0 = bk1 = bk2 = 0
    for s in range(3):
        if not mask[A_VOID + s]:
            continue
        if not flags & VOID:
            return A_VOID + s
        sh = shanten(hand, s, 0, table)
        n = hand[9 * s:9 * s + 9].sum()
        reg, sp = useful_masks(hand, s, 0, table)
        useful = 0
        for k in range(27):
            if (reg | sp) >> k & 1:
                useful += max(0, 4 - v[VISIBLE, k])
        if best < 0 or (sh, n, -useful) < (bk0, bk1, bk2):
            best, bk0, bk1, bk2 = s, sh, n, -useful
    return A_VOID + best


@njit(cache=True, nogil=True)
def _best_discard(v: np.ndarray, mask: np.ndarray, level: np.ndarray, collects: np.ndarray,
                  any_threat: bool, table: np.ndarray, scoring: tuple, flags: int) -> int:
    """Lowest shanten, then most useful tiles (value-weighted when ready), then safety; ``any_threat``
    is False without DEFENCE."""
    hand, void, n = v[HAND], v[SCALARS, S_VOID], v[SCALARS, S_N_MELDS]
    flush = flush_suit(v) if flags & PATTERNS else -1
    unseen = np.maximum(0, 4 - v[VISIBLE])
    sh = np.full(27, 99, dtype=np.int64)
    after = hand.copy()
    low = 99
    for k in range(27):
        if mask[A_DISCARD + k]:
            after[k] -= 1
            sh[k] = shanten(after, void, n, table)
            after[k] += 1
            low = min(low, sh[k])
    if flush >= 0 and low <= 0:
        flush = -1  # already ready: wait values decide, never break the hand for a flush
    adj = np.full(27, 99, dtype=np.int64)
    reach = 99
    for k in range(27):
        if mask[A_DISCARD + k]:
            adj[k] = sh[k] - 1 if flush >= 0 and k // 9 != flush else sh[k]
            reach = min(reach, adj[k])
    reach += 1 if any_threat else 0
    weight = np.zeros(27)
    top = np.zeros(16)  # per adjusted shanten + 2
    best_level = 99
    for k in range(27):
        if adj[k] > reach:
            continue
        if flags & EFFICIENCY:
            after[k] -= 1
            weight[k] = discard_weight(after, sh[k], v, void, unseen, table, scoring, (flags & PATTERNS) != 0)
            after[k] += 1
        top[adj[k] + 2] = max(top[adj[k] + 2], weight[k])
        best_level = min(best_level, adj[k])
    w_danger = 0.0
    if any_threat:
        w_danger = (0.15, 0.3, 0.5)[min(max(best_level, 0), 2)]
    best, best_eff = -1, 0.0
    for k in range(27):
        if adj[k] > reach:
            continue
        t = top[adj[k] + 2]
        off = flush >= 0 and k // 9 != flush
        eff = adj[k] + (0.5 * (1 - weight[k] / t) if t > 0 else 0.5) - (0.5 if off else 0.0)
        if w_danger:
            eff += w_danger * danger(v, level, collects, k)
        if best < 0 or eff < best_eff:
            best, best_eff = k, eff
    return best


@njit(cache=True, nogil=True)
def _turn(v: np.ndarray, mask: np.ndarray, table: np.ndarray, scoring: tuple, flags: int) -> int:
    """Kong if it does not hurt, else the best discard."""
    hand, void, n = v[HAND], v[SCALARS, S_VOID], v[SCALARS, S_N_MELDS]
    now = -2
    after = hand.copy()
    for k in range(27):
        if not mask[A_KONG + k]:
            continue
        if now == -2:
            now = shanten(hand, void, n, table)
        after[:] = hand
        if hand[k] == 4:  # 暗杠: a new meld
            after[k] = 0
            s = shanten(after, void, n + 1, table)
        else:  # 面下杠: the 碰 becomes a kong, the meld count stays
            after[k] -= 1
            s = shanten(after, void, n, table)
        if s <= now:
            return A_KONG + k
    level = np.zeros(4)
    collects = np.zeros(4, dtype=np.int64)
    any_threat = threats(v, level, collects) if flags & DEFENCE else False
    if void >= 0 and mask[A_DISCARD + 9 * void:A_DISCARD + 9 * void + 9].any():
        # Forced void dump: all of them must go, so shed the most dangerous first.
        best, best_d = -1, 0.0
        for k in range(27):
            if mask[A_DISCARD + k]:
                d = danger(v, level, collects, k)
                if best < 0 or d > best_d:
                    best, best_d = k, d
        return A_DISCARD + best
    return A_DISCARD + _best_discard(v, mask, level, collects, any_threat, table, scoring, flags)


@njit(cache=True, nogil=True)
def _claim(v: np.ndarray, mask: np.ndarray, table: np.ndarray, flags: int) -> int:
    """直杠 / 碰 when the hand is not set back, else pass."""
    hand, void, n, k = v[HAND], v[SCALARS, S_VOID], v[SCALARS, S_N_MELDS], v[SCALARS, S_CLAIM]
    if k < 0:
        return A_PASS
    before = shanten(hand, void, n, table)
    if before >= 1 and (flags & PATTERNS) != 0:
        flush = flush_suit(v)
        if flush != -1 and flush != k // 9:
            return A_PASS  # an off-suit meld would end the 清一色 chance
    after = hand.copy()
    if mask[A_DIRECT_KONG]:
        after[k] -= 3
        if shanten(after, void, n + 1, table) <= before:
            return A_DIRECT_KONG
        after[k] += 3
    if mask[A_PONG]:
        after[k] -= 2
        s = shanten(after, void, n + 1, table)
        if s < before or (s == before and (flags & PATTERNS) != 0 and toitoi_leaning(v)):
            return A_PONG
    return A_PASS


@njit(cache=True, nogil=True)
def act_batch(observations: np.ndarray, masks: np.ndarray, table: np.ndarray,
              scoring: tuple, flags: int = ALL) -> np.ndarray:
    """One action per row, as ``HeuristicPolicy.act`` with these ``flags``; every mask must offer a
    legal action."""
    out = np.empty(len(observations), dtype=np.int64)
    v = new_view()
    for i in range(len(observations)):
        mask = masks[i]
        out[i] = obvious_action(mask, A_HU, A_ROB_KONG)
        if out[i] >= 0:
            continue
        decode(observations[i], v)
        if mask[A_VOID:A_VOID + 3].any():
            out[i] = _choose_void(v, mask, table, flags)
        elif mask[A_PASS]:
            out[i] = _claim(v, mask, table, flags)
        else:
            out[i] = _turn(v, mask, table, scoring, flags)
    return out
