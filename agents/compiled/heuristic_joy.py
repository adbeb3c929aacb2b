"""Compiled Joy Mahjong heuristic: the batch form of :class:`agents.heuristic_joy.JoyHeuristicPolicy`.

Each function mirrors the Python one of the same name; distances use the group cost tables of
:mod:`agents.compiled.features` (the suit table and the honour table).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mjenv.actions import JOY_MAHJONG as L
from mjenv.encoding import JoyMahjongObserver

from .features import INF, fold_at, group_costs, group_key, obvious_action

if JoyMahjongObserver.version != 0:  # the planes read below are those of encoder v0
    raise ImportError(f"agents.compiled.heuristic_joy decodes encoder v0, not v{JoyMahjongObserver.version}")
_V = {name: sl.start for name, sl in JoyMahjongObserver.views.items()}
P_HAND, P_CLAIM, P_CHOW, P_PONG, P_KONG = _V["hand"], _V["claim"], _V["chow"], _V["pong"], _V["kong"]
P_OWN_ANKAN, P_RIVER, P_WILD, P_INDICATOR = _V["own_ankan"], _V["river"], _V["wild"], _V["indicator"]
A_DISCARD, A_KONG, A_CHOW, A_PONG = L.DISCARD, L.KONG, L.CHOW, L.PONG
A_DIRECT_KONG, A_HU, A_ROB_KONG, A_PASS = L.DIRECT_KONG, L.HU, L.ROB_KONG, L.PASS
N_KINDS = 34
# What the heuristic weighs beyond the distance (``flags``; the full heuristic has both). Weaker
# variants leave some out: they are the rungs of the reference ladders (agents.arena.ladder).
EFFICIENCY = 1
"""Among discards at the lowest distance, prefer the one with the most useful unseen draws (受入)."""
CALLS = 2
"""碰 / 吃 when the call brings the hand closer (without: never 碰 or 吃; kongs stay)."""
ALL = EFFICIENCY | CALLS


@njit(cache=True, nogil=True)
def distance(counts: np.ndarray, n_melds: int, wilds: int, suits: np.ndarray, honours: np.ndarray) -> int:
    """Tiles still missing for a win (``agents.heuristic_joy.distance``); ``counts``: 34 real counts."""
    target = (4 - n_melds) * 2 + 1
    m = group_costs(suits, group_key(counts, 0, 9), 9, True)
    p = group_costs(suits, group_key(counts, 9, 9), 9, True)
    s = group_costs(suits, group_key(counts, 18, 9), 9, True)
    z = group_costs(honours, group_key(counts, 27, 7), 7, False)
    gap = INF
    for y in range(target + 1):  # one odd index in all: fold_at keeps each side's two from both odd
        gap = min(gap, fold_at(m, p, y) + fold_at(s, z, target - y))
    if n_melds == 0:
        pairs = singles = 0
        for c in counts:
            pairs += min(c, 4) // 2
            singles += c % 2
        short = max(0, 7 - pairs)
        gap = min(gap, short if short <= singles else singles + 2 * (short - singles))
    return gap - wilds


@njit(cache=True, nogil=True)
def _decode(o: np.ndarray, real: np.ndarray, unseen: np.ndarray) -> tuple[int, int, int, int]:
    """Fill ``real`` and ``unseen`` from one observation, as ``JoyView``; returns
    (wild kind, wildcards held, claimed kind or -1, declared melds)."""
    wild = claim = 0
    n_melds = 0.0
    seen = np.zeros(N_KINDS)
    for k in range(N_KINDS):
        held = 0.0
        for i in range(4):
            held += o[P_HAND + i, k]
            seen[k] += 4 * o[P_RIVER + i, k] + 3 * o[P_PONG + i, k] + 4 * o[P_KONG + i, k]
            if k < 32:
                for d in range(3):
                    seen[k + d] += o[P_CHOW + i, k]
        real[k] = np.int64(held)
        seen[k] += held + 4 * o[P_OWN_ANKAN, k] + o[P_INDICATOR, k]
        n_melds += o[P_CHOW, k] + o[P_PONG, k] + o[P_KONG, k] + o[P_OWN_ANKAN, k]
        if o[P_WILD, k] > o[P_WILD, wild]:
            wild = k
        if o[P_CLAIM, k] > o[P_CLAIM, claim]:
            claim = k
    if o[P_CLAIM, claim] == 0:
        claim = -1
    wilds = real[wild]
    real[wild] = 0
    for k in range(N_KINDS):
        unseen[k] = max(0, 4 - np.int64(np.rint(seen[k])))
    return wild, wilds, claim, np.int64(n_melds)


@njit(cache=True, nogil=True)
def _tile_order(k: int) -> int:
    """Tie-break between equal discards: honours first, then terminals, then middle tiles."""
    if k >= 27:
        return 0
    r = k % 9
    return 1 if r == 0 or r == 8 else 2 + min(r, 8 - r)


@njit(cache=True, nogil=True)
def _near(counts: np.ndarray, t: int) -> bool:
    """Whether a draw of ``t`` can shorten the distance: held, or a suited kind within two ranks."""
    if counts[t]:
        return True
    if t >= 27:
        return False
    r = t % 9
    for d in (-2, -1, 1, 2):
        if 0 <= r + d <= 8 and counts[t + d]:
            return True
    return False


@njit(cache=True, nogil=True)
def _acceptance(real: np.ndarray, k: int, n_melds: int, wilds: int, dist: int, unseen: np.ndarray,
                wild: int, suits: np.ndarray, honours: np.ndarray) -> int:
    """Unseen tiles that shorten the distance once ``k`` is discarded (受入); a drawn wildcard always does.

    The same count as calling :func:`distance` once per candidate draw, but a draw changes one
    suit group, so the other groups' costs and folds are computed once per discard."""
    if k == wild:
        return 0
    real[k] -= 1
    target = (4 - n_melds) * 2 + 1
    keys = (group_key(real, 0, 9), group_key(real, 9, 9), group_key(real, 18, 9), group_key(real, 27, 7))
    m = group_costs(suits, keys[0], 9, True)
    p = group_costs(suits, keys[1], 9, True)
    s = group_costs(suits, keys[2], 9, True)
    z = group_costs(honours, keys[3], 7, False)
    f_mp = np.empty(target + 1, dtype=np.int64)
    f_sz = np.empty(target + 1, dtype=np.int64)
    for y in range(target + 1):
        f_mp[y], f_sz[y] = fold_at(m, p, y), fold_at(s, z, y)
    pairs = singles = 0
    for c in real:
        pairs += min(c, 4) // 2
        singles += c % 2
    total = unseen[wild]
    for t in range(N_KINDS):
        if t == wild or not unseen[t] or real[t] >= 4 or not _near(real, t):
            continue
        g = min(t // 9, 3)
        key = keys[g] + 5 ** (t - 9 * g)  # one more copy of t (fewer than 4 held)
        gap = INF
        if g == 3:
            z2 = group_costs(honours, key, 7, False)
            for y in range(target + 1):
                gap = min(gap, f_mp[y] + fold_at(s, z2, target - y))
        elif g == 2:
            s2 = group_costs(suits, key, 9, True)
            for y in range(target + 1):
                gap = min(gap, f_mp[y] + fold_at(s2, z, target - y))
        else:
            g2 = group_costs(suits, key, 9, True)
            for y in range(target + 1):
                gap = min(gap, (fold_at(g2, p, y) if g == 0 else fold_at(m, g2, y)) + f_sz[target - y])
        if n_melds == 0:  # seven pairs: one more copy makes a pair of an odd count, a single of an even one
            odd = real[t] % 2
            short = max(0, 7 - (pairs + odd))
            more = singles - 1 if odd else singles + 1
            gap = min(gap, short if short <= more else more + 2 * (short - more))
        if gap - wilds < dist:
            total += unseen[t]
    real[k] += 1
    return total


@njit(cache=True, nogil=True)
def _best_discard(real: np.ndarray, n_melds: int, wilds: int, discards: np.ndarray, wild: int,
                  unseen: np.ndarray, suits: np.ndarray, honours: np.ndarray,
                  efficiency: bool = True) -> tuple[int, int]:
    """(distance after it, kind) of the best discard among the kinds flagged in ``discards``; ties by
    受入 (with ``efficiency``), then tile order."""
    only_wild = True
    for k in range(N_KINDS):
        if discards[k] and k != wild:
            only_wild = False
    dist = np.full(N_KINDS, 999, dtype=np.int64)
    best = 999
    n_tied = 0
    for k in range(N_KINDS):
        if not discards[k] or (k == wild and not only_wild):
            continue
        if k == wild:  # only wildcards can be discarded: one fewer wildcard
            dist[k] = distance(real, n_melds, wilds - 1, suits, honours)
        else:
            real[k] -= 1
            dist[k] = distance(real, n_melds, wilds, suits, honours)
            real[k] += 1
        if dist[k] < best:
            best, n_tied = dist[k], 0
        n_tied += dist[k] == best
    choice = -1
    key0 = key1 = key2 = 0
    for k in range(N_KINDS):
        if dist[k] != best:
            continue
        if n_tied == 1:
            return best, k
        accepted = _acceptance(real, k, n_melds, wilds, best, unseen, wild, suits, honours) if efficiency else 0
        key = (-accepted, _tile_order(k), -k)
        if choice < 0 or key < (key0, key1, key2):
            choice, key0, key1, key2 = k, key[0], key[1], key[2]
    return best, choice


@njit(cache=True, nogil=True)
def _turn(real: np.ndarray, n_melds: int, wilds: int, wild: int, unseen: np.ndarray, mask: np.ndarray,
          suits: np.ndarray, honours: np.ndarray, flags: int) -> int:
    """Kong when it costs nothing, else the best discard."""
    dist, k = _best_discard(real, n_melds, wilds, mask[A_DISCARD:A_DISCARD + N_KINDS], wild, unseen,
                            suits, honours, (flags & EFFICIENCY) != 0)
    after = real.copy()
    for kong in range(N_KINDS):
        if mask[A_KONG + kong] and kong != wild:
            after[:] = real
            four = after[kong] >= 4
            after[kong] -= 4 if four else 1  # 暗杠: a new meld; 加杠: the 碰 becomes a kong
            if distance(after, n_melds + four, wilds, suits, honours) <= dist:
                return A_KONG + kong
    return A_DISCARD + k


@njit(cache=True, nogil=True)
def _claim(real: np.ndarray, n_melds: int, wilds: int, wild: int, claim: int, unseen: np.ndarray,
           mask: np.ndarray, suits: np.ndarray, honours: np.ndarray, flags: int) -> int:
    """碰 / 吃 when the call (and its best discard) brings the hand closer; 直杠 when not further."""
    k = claim
    now = distance(real, n_melds, wilds, suits, honours)
    after = real.copy()
    if mask[A_DIRECT_KONG]:
        after[k] -= 3
        if distance(after, n_melds + 1, wilds, suits, honours) <= now:
            return A_DIRECT_KONG
    best_action, best = A_PASS, now
    if not flags & CALLS:
        return best_action
    discards = np.zeros(N_KINDS, dtype=np.int64)
    for option in range(4):  # 碰, then 吃 with the claimed tile low / middle / high
        action = A_PONG if option == 0 else A_CHOW + option - 1
        if not mask[action]:
            continue
        after[:] = real
        if option == 0:
            after[k] -= 2
        else:
            low = k - (option - 1)
            for t in range(low, low + 3):
                if t != k:
                    after[t] -= 1
        for t in range(N_KINDS):
            discards[t] = after[t] != 0 or (t == wild and wilds != 0)
        if not discards.any():
            continue
        d, _ = _best_discard(after, n_melds + 1, wilds, discards, wild, unseen, suits, honours,
                             (flags & EFFICIENCY) != 0)
        if d < best:
            best_action, best = action, d
    return best_action


@njit(cache=True, nogil=True)
def act_batch(observations: np.ndarray, masks: np.ndarray, suits: np.ndarray,
              honours: np.ndarray, flags: int = ALL) -> np.ndarray:
    """One action per row, as ``JoyHeuristicPolicy.act`` with these ``flags``; every mask must offer a
    legal action."""
    out = np.empty(len(observations), dtype=np.int64)
    real = np.zeros(N_KINDS, dtype=np.int64)
    unseen = np.zeros(N_KINDS, dtype=np.int64)
    for i in range(len(observations)):
        mask = masks[i]
        out[i] = obvious_action(mask, A_HU, A_ROB_KONG)
        if out[i] >= 0:
            continue
        wild, wilds, claim, n_melds = _decode(observations[i], real, unseen)
        if mask[A_PASS]:
            out[i] = _claim(real, n_melds, wilds, wild, claim, unseen, mask, suits, honours, flags)
        else:
            out[i] = _turn(real, n_melds, wilds, wild, unseen, mask, suits, honours, flags)
    return out
