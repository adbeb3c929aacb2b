"""Look-ahead planes for the neural agent: what each discard or call does to the hand.

The network sees these planes stacked under the observation (``PolicyValueNet(lookahead=True)``),
so it need not learn shanten arithmetic from raw counts (Suphx's look-ahead features serve the
same purpose). They are computed from the observation alone (:func:`agents.features.decode`),
with the heuristic's own hand evaluation: the agent still never looks at the game. Waits are
valued (plane 2) with the table's rules, given as ``rules`` (the env's ``raw_env.rules``; the
default preset when omitted), since the observation does not carry them. :func:`lookahead` is the
readable reference for one observation; :func:`with_lookahead`, which the network uses, computes
the same planes for a batch with the compiled copy (:mod:`agents.compiled.lookahead`).

Planes, each 27 wide (one column per suited kind k):

====  =====================================================================================
0     discard k keeps the lowest shanten reachable by a discard (1/0; 0 where k is not held);
      while choosing the void (定缺): k's suit is a void that leaves the lowest shanten
1     discard k (void: k's suit) leaves the shanten one above that lowest
2     useful draws after discarding k (void: after voiding k's suit), over the best one's
      (unseen copies that lower the shanten; a ready hand weights each wait by its points)
3     drawing (or being offered) k lowers the shanten of the hand as it stands
4     danger of k (the heuristic's estimate of dealing into a threatening seat), / 3, ≤ 1
5-8   whole plane: shanten of the hand as it stands (void: after the best void) is ≤ 0, 1,
      2, ≥ 3 (one-hot)
9     whole plane: the offered tile's 碰 lowers the shanten (claim phase)
10    k lies in a near-清一色 suit (all but ≤ 4 own tiles in it)
11    whole plane: the offered tile's 碰 keeps the shanten as it is (claim phase)
12    whole plane: the hand leans to 对对胡 (pairs and melds ≥ 4)
13    whole plane: the offered tile's 直杠 does not raise the shanten (claim phase)
====  =====================================================================================
"""

from __future__ import annotations

import numpy as np

from mjenv.config import BloodBattleRules
from mjenv.encoding import BloodBattleObserver
from mjenv.tiles import N_SUIT_KINDS

from .compiled import features as compiled_features
from .compiled import heuristic as compiled_heuristic
from .compiled import lookahead as compiled
from .compiled.lookahead import LOOKAHEAD_PLANES
from .features import HandEval, bits, decode
from .heuristic import SEVEN_PAIRS_WEIGHT, danger, flush_suit, threats, toitoi_leaning, win_points
DEFAULT_RULES = BloodBattleRules()


def lookahead(obs: np.ndarray, rules: BloodBattleRules | None = None) -> np.ndarray:
    """The ``(LOOKAHEAD_PLANES, 27)`` look-ahead planes of one blood-battle observation; waits are
    valued with ``rules`` (the table's; default: the default preset's)."""
    rules = rules or DEFAULT_RULES
    out = np.zeros((LOOKAHEAD_PLANES, N_SUIT_KINDS), dtype=np.float32)
    view = decode(obs)
    unseen = [max(0, 4 - v) for v in view.visible]
    if view.phase == "void":
        _void_planes(out, view.hand, unseen)
        return out
    if view.phase == "over":
        return out
    hand, void, n = view.hand, view.void[0], view.n_melds
    now = HandEval(hand, void, n)
    out[5 + min(max(now.shanten, 0), 3)] = 1.0
    for t in now.useful():
        out[3, t] = 1.0
    if sum(hand) % 3 == 2:  # own turn: one tile must go
        melds = tuple(view.own_melds())
        rows = []
        for k in range(N_SUIT_KINDS):
            if not hand[k]:
                continue
            after = list(hand)
            after[k] -= 1
            ev = HandEval(after, void, n)
            weight = 0.0
            if ev.shanten == 0:
                for t in ev.useful():
                    if unseen[t]:
                        after[t] += 1
                        weight += unseen[t] * win_points(bytes(after), melds, void, rules) / 6
                        after[t] -= 1
            else:
                reg, sp = ev.useful_masks()
                for t in bits(reg | sp):
                    weight += unseen[t] * (SEVEN_PAIRS_WEIGHT if sp >> t & 1 else 1.0)
            rows.append((k, ev.shanten, weight))
        best = min(s for _, s, _ in rows)
        top = max((w for _, s, w in rows if s == best), default=0.0) or 1.0
        for k, s, w in rows:
            out[0, k] = s == best
            out[1, k] = s == best + 1
            out[2, k] = min(w / top, 2.0)
    if view.claim >= 0 and view.phase == "claim" and hand[view.claim] >= 2:
        after = list(hand)
        after[view.claim] -= 2
        pong = HandEval(after, void, n + 1).shanten
        out[9], out[11] = pong < now.shanten, pong == now.shanten
        if hand[view.claim] == 3:
            after[view.claim] -= 1
            out[13] = HandEval(after, void, n + 1).shanten <= now.shanten
    out[12] = toitoi_leaning(view)
    threat = threats(view)
    if any(t.level for t in threat):
        for k in range(N_SUIT_KINDS):
            out[4, k] = min(danger(view, threat, k) / 3.0, 1.0)
    flush = flush_suit(view)
    if flush >= 0:
        out[10, 9 * flush:9 * flush + 9] = 1.0
    return out


def _void_planes(out: np.ndarray, hand: list[int], unseen: list[int]) -> None:
    """Planes 0-2 and 5-8 for the 定缺 choice: the shanten and useful draws left by each void."""
    rows = []
    for s in range(3):
        ev = HandEval(hand, s, 0)
        rows.append((s, ev.shanten, sum(unseen[t] for t in ev.useful())))
    best = min(r[1] for r in rows)
    top = max((w for _, sh, w in rows if sh == best), default=0) or 1
    for s, sh, w in rows:
        cols = slice(9 * s, 9 * s + 9)
        out[0, cols], out[1, cols], out[2, cols] = sh == best, sh == best + 1, min(w / top, 2.0)
    out[5 + min(max(best, 0), 3)] = 1.0


def with_lookahead(observations: np.ndarray, rules: BloodBattleRules | None = None) -> np.ndarray:
    """A batch of observations ``(N, P, 27)`` with the look-ahead planes (waits valued with ``rules``)
    stacked under each; computed by the compiled copy of :func:`lookahead`, which gives the same planes."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    # The rule options' planes (after the default ones) pass through; the look-ahead reads the default ones.
    if obs.ndim != 3 or obs.shape[1] < BloodBattleObserver.planes or obs.shape[2] != N_SUIT_KINDS:
        raise ValueError(f"with_lookahead needs blood-battle observations of shape "
                         f"(N, {BloodBattleObserver.planes} or more, {N_SUIT_KINDS}), got {obs.shape}")
    default = np.ascontiguousarray(obs[:, :BloodBattleObserver.planes])
    planes = compiled.lookahead_batch(default, compiled_features.suit_table(),
                                      compiled_heuristic.scoring(rules or DEFAULT_RULES))
    return np.concatenate([obs, planes], axis=1)
