"""Look-ahead planes for the neural agent in Joy Mahjong: what each discard or call does to the hand.

The Joy counterpart of :mod:`agents.lookahead`: stacked under the observation
(``PolicyValueNet(lookahead=True, game="joy_mahjong")``), so the network need not learn the
distance arithmetic of :mod:`agents.heuristic_joy` (wildcards included) from raw counts. They are
computed from the observation alone, with the Joy heuristic's own evaluation (distance to a win,
受入, the discard tie-break). :func:`lookahead_joy` is the readable reference for one observation;
:func:`with_lookahead_joy`, which the network uses, computes the same planes for a batch with the
compiled copy (:mod:`agents.compiled.lookahead_joy`).

Planes, each 34 wide (one column per kind k); "distance" is
:func:`agents.heuristic_joy.distance` (tiles still missing, less the wildcards held):

====  =====================================================================================
0     discard k keeps the lowest distance reachable by a discard (1/0; 0 where k is not held;
      the wildcard counts only when it is the only tile held, as the heuristic discards it)
1     discard k leaves the distance one above that lowest
2     受入 after discarding k, over the best one's, for the discards at the lowest distance
      (unseen copies that lower the distance; a drawn wildcard always does)
3     drawing (or being offered) k lowers the distance of the hand as it stands (the wildcard:
      always)
4-7   whole plane: distance of the hand as it stands is ≤ 0, 1, 2, ≥ 3 (one-hot)
8     whole plane: the offered tile's 碰, then the best discard, lowers the distance (claim phase)
9-11  whole plane: the 吃 with the offered tile low / middle / high, then the best discard, lowers
      the distance (claim phase, where the three tiles are held apart from the offered one)
12    whole plane: the offered tile's 直杠 does not raise the distance (claim phase)
13    own turn: 暗杠 (four held) or 加杠 (an own 碰 of k) of k does not raise the distance
14    the heuristic's tie-break between equal discards: honours 0, terminals 1/6, then 3/6 to 6/6
      towards the middle ranks (a constant plane)
====  =====================================================================================
"""

from __future__ import annotations

import numpy as np

from mjenv.encoding import JoyMahjongObserver

from .compiled import features as compiled_features
from .compiled import lookahead_joy as compiled
from .compiled.lookahead_joy import JOY_LOOKAHEAD_PLANES
from .heuristic_joy import N_KINDS, JoyHeuristicPolicy, JoyView, _near, _tile_order, distance

_V = {name: sl.start for name, sl in JoyMahjongObserver.views.items()}
_HEURISTIC = JoyHeuristicPolicy()
TILE_ORDER = np.array([_tile_order(k) / 6 for k in range(N_KINDS)], dtype=np.float32)


def lookahead_joy(obs: np.ndarray) -> np.ndarray:
    """The ``(JOY_LOOKAHEAD_PLANES, 34)`` look-ahead planes of one Joy Mahjong observation."""
    out = np.zeros((JOY_LOOKAHEAD_PLANES, N_KINDS), dtype=np.float32)
    out[14] = TILE_ORDER
    phase = obs[_V["phase"]:_V["phase"] + 3, 0]  # turn / claim / rob; none once the hand is over
    if not phase.any():
        return out
    view = JoyView(obs)
    real, m, w, wild = view.real, view.n_melds, view.wilds, view.wild
    now = distance(real, m, w)
    out[4 + min(max(now, 0), 3)] = 1.0
    out[3, wild] = 1.0
    for t in _near(real):
        if t != wild and real[t] < 4:
            real[t] += 1
            out[3, t] = distance(real, m, w) < now
            real[t] -= 1
    if (sum(real) + w) % 3 == 2:  # own turn: one tile must go
        _discard_planes(out, view)
        own_pongs = obs[_V["pong"]]
        for k in range(N_KINDS):
            four = real[k] >= 4
            if k != wild and (four or (real[k] and own_pongs[k])):
                real[k] -= 4 if four else 1
                out[13, k] = distance(real, m + int(four), w) <= now
                real[k] += 4 if four else 1
    if view.claim >= 0 and phase[1]:  # the claim phase
        _claim_planes(out, view, now)
    return out


def _discard_planes(out: np.ndarray, view: JoyView) -> None:
    """Planes 0-2: each discard's distance against the lowest, and the best ones' 受入."""
    real, m, w, wild = view.real, view.n_melds, view.wilds, view.wild
    held = [k for k in range(N_KINDS) if real[k]]
    if not held:  # only wildcards: discarding one costs a wildcard
        out[0, wild] = 1.0
        return
    after = {}
    for k in held:
        real[k] -= 1
        after[k] = distance(real, m, w)
        real[k] += 1
    best = min(after.values())
    accepted = {k: _HEURISTIC._acceptance(real, k, m, w, best, view.unseen, wild)
                for k in held if after[k] == best}
    top = max(accepted.values()) or 1
    for k in held:
        out[0, k] = after[k] == best
        out[1, k] = after[k] == best + 1
        out[2, k] = min(accepted.get(k, 0) / top, 2.0)


def _claim_planes(out: np.ndarray, view: JoyView, now: int) -> None:
    """Planes 8-12: whether each call, then its best discard, brings the hand closer."""
    k, real, m, w, wild = view.claim, view.real, view.n_melds, view.wilds, view.wild
    options = [(8, (k, k))]
    for shape in range(3):
        low = k - shape
        if k < 27 and low // 9 == k // 9 and low >= 0 and (low + 2) // 9 == k // 9:
            options.append((9 + shape, tuple(t for t in (low, low + 1, low + 2) if t != k)))
    for plane, used in options:
        after = bytearray(real)
        if any(after[t] < used.count(t) for t in set(used)):
            continue
        for t in used:
            after[t] -= 1
        discards = [t for t in range(N_KINDS) if after[t]] + ([wild] if w else [])
        if discards:
            d, _ = _HEURISTIC._best_discard(after, m + 1, w, discards, wild, view.unseen)
            out[plane] = d < now
    if real[k] >= 3:
        after = bytearray(real)
        after[k] -= 3
        out[12] = distance(after, m + 1, w) <= now


def with_lookahead_joy(observations: np.ndarray) -> np.ndarray:
    """A batch of Joy observations ``(N, P, 34)`` with the look-ahead planes stacked under each;
    computed by the compiled copy of :func:`lookahead_joy`, which gives the same planes."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    # The rule options' planes (after the default ones) pass through; the look-ahead reads the default ones.
    if obs.ndim != 3 or obs.shape[1] < JoyMahjongObserver.planes or obs.shape[2] != N_KINDS:
        raise ValueError(f"with_lookahead_joy needs Joy Mahjong observations of shape "
                         f"(N, {JoyMahjongObserver.planes} or more, {N_KINDS}), got {obs.shape}")
    default = np.ascontiguousarray(obs[:, :JoyMahjongObserver.planes])
    planes = compiled.lookahead_batch(default, compiled_features.suit_table(), compiled_features.honour_table(),
                                      TILE_ORDER)
    return np.concatenate([obs, planes], axis=1)
