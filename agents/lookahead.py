"""Look-ahead planes for the neural agent: what each discard or call does to the hand.

The network sees these planes stacked under the observation (``PolicyValueNet(lookahead=True)``),
so it need not learn shanten arithmetic from raw counts (Suphx's look-ahead features serve the
same purpose). They are computed from the observation alone (:func:`agents.features.decode`),
with the heuristic's own hand evaluation: the agent still never looks at the game.

Planes, each 27 wide (one column per suited kind k):

====  =====================================================================================
0     discard k keeps the lowest shanten reachable by a discard (1/0; 0 where k is not held)
1     discard k leaves the shanten one above that lowest
2     useful draws after discarding k, over the best discard's (unseen copies that lower the
      shanten; a ready hand weights each wait by the points it would score)
3     drawing (or being offered) k lowers the shanten of the hand as it stands
4     danger of k (the heuristic's estimate of dealing into a threatening seat), / 3, ≤ 1
5-8   whole plane: shanten of the hand as it stands is ≤ 0, 1, 2, ≥ 3 (one-hot)
9     whole plane: the offered tile's 碰 lowers the shanten (claim phase)
10    k lies in a near-清一色 suit (all but ≤ 4 own tiles in it)
====  =====================================================================================
"""

from __future__ import annotations

import numpy as np

from .features import N_SUIT_KINDS, HandEval, bits, decode
from .heuristic import SEVEN_PAIRS_WEIGHT, danger, flush_suit, threats, win_points
from mjenv.config import BloodBattleRules

LOOKAHEAD_PLANES = 11
_RULES = BloodBattleRules()  # waits are valued by the default (happy) scoring, as the heuristic does


def lookahead(obs: np.ndarray) -> np.ndarray:
    """The ``(LOOKAHEAD_PLANES, 27)`` look-ahead planes of one blood-battle observation."""
    out = np.zeros((LOOKAHEAD_PLANES, N_SUIT_KINDS), dtype=np.float32)
    view = decode(obs)
    if view.phase in ("void", "over"):
        return out
    hand, void, n = view.hand, view.void[0], view.n_melds
    unseen = [max(0, 4 - v) for v in view.visible]
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
                        weight += unseen[t] * win_points(bytes(after), melds, void, _RULES) / 6
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
        out[9] = HandEval(after, void, n + 1).shanten < now.shanten
    threat = threats(view)
    if any(t.level for t in threat):
        for k in range(N_SUIT_KINDS):
            out[4, k] = min(danger(view, threat, k) / 3.0, 1.0)
    flush = flush_suit(view)
    if flush >= 0:
        out[10, 9 * flush:9 * flush + 9] = 1.0
    return out


def with_lookahead(observations: np.ndarray) -> np.ndarray:
    """A batch of observations ``(N, P, 27)`` with the look-ahead planes stacked under each."""
    planes = np.stack([lookahead(o) for o in observations]) if len(observations) else \
        np.zeros((0, LOOKAHEAD_PLANES, N_SUIT_KINDS), dtype=np.float32)
    return np.concatenate([np.asarray(observations, dtype=np.float32), planes], axis=1)
