"""Rule-based baseline for the blood battle (血战到底): ``load_policy("heuristic")``.

It decides only from the seat's observation tensor and action mask (decoded by
:func:`agents.features.decode`), never from the game. In order of priority:

- 胡 / 抢杠胡 whenever the mask offers it.
- 定缺: the suit whose loss leaves the strongest hand (lowest shanten of the other two suits),
  then the one with the fewest tiles, then the most useful draws left.
- Discard: void-suit tiles first (the mask forces it; the most dangerous goes first, while
  nobody is ready yet). Otherwise the lowest shanten, then the most useful tiles left
  (unseen copies that lower shanten; ready hands weight each wait by the points it would
  score). Near a 清一色 (all but <= 4 own tiles in one suit, melds in it too) a tile of the
  other suit counts one shanten cheaper. A little defence: tiles a threatening seat could win
  on cost more, the more so the further the hand is from ready.
- 碰 / 直杠 only when the hand is not set back (shanten after the call and its best discard
  <= before); an equal-shanten 碰 only when heading for 对对胡; before the hand is ready, no
  call outside a near 清一色 suit. 暗杠 / 面下杠 when shanten does not rise.

**Variants** (``flags``, :data:`agents.compiled.heuristic.ALL` by default): each of EFFICIENCY
(the useful-draw count within a shanten level), PATTERNS (清一色 steering, 对对胡 碰, wait values),
DEFENCE (danger) and VOID (the 定缺 choice; without it, the first suit offered) can be left out;
what remains decides by shanten, then the lowest tile kind. Named variants (:data:`VARIANTS`):
``heuristic-greedy`` (shanten and the 定缺 choice only) and ``heuristic-novoid`` (shanten only) are
rungs of the reference ladders (:mod:`agents.arena.ladder`); ``heuristic-nodefence`` and
``heuristic-plain`` play level with or above the heuristic (docs/baselines.md), so they are not.

Blood battle only; ``load_policy("heuristic", game="joy_mahjong")`` gives Joy Mahjong's baseline,
:class:`agents.heuristic_joy.JoyHeuristicPolicy`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from mjenv.actions import BLOOD_BATTLE as L
from mjenv.config import BloodBattleRules
from mjenv.encoding import BloodBattleObserver
from mjenv.melds import Meld
from mjenv.rules.blood_battle import WinContext, score_win
from mjenv.tiles import N_SUIT_KINDS

from .base import batch_arrays
from .compiled import features as compiled_features
from .compiled import heuristic as compiled
from .compiled.heuristic import ALL, DEFENCE, EFFICIENCY, PATTERNS, SEVEN_PAIRS_WEIGHT, VOID
from .features import BloodBattleView, HandEval, bits, decode

SUPPORTED_GAMES = ("blood_battle",)
_PLAIN = WinContext()

VARIANTS = {"heuristic": ALL, "heuristic-nodefence": ALL & ~DEFENCE, "heuristic-plain": EFFICIENCY | VOID,
            "heuristic-greedy": VOID, "heuristic-novoid": 0}
"""Name -> flags of the heuristic and its weaker variants (``load_policy(name)``)."""


@lru_cache(maxsize=1 << 16)
def win_points(hand: bytes, melds: tuple[Meld, ...], void: int, rules: BloodBattleRules) -> int:
    """Points (X) of a plain discard win with these 14 tiles, 0 if not a legal win (memoised)."""
    result = score_win(list(hand) + [0] * 7, melds, _PLAIN, rules, void)
    return 0 if result is None else result.X


class HeuristicPolicy:
    """Shanten / tile-efficiency baseline with pattern steering and cheap defence.

    ``act`` is the readable reference; ``act_batch`` runs the compiled copy
    (:mod:`agents.compiled.heuristic`), which chooses exactly the same actions.
    """

    name = "heuristic"
    flags = ALL  # class defaults: a subclass that skips __init__ is the full heuristic

    def __init__(self, game: str = "blood_battle", rules: BloodBattleRules | None = None,
                 flags: int = ALL) -> None:
        if game not in SUPPORTED_GAMES:
            raise ValueError(f"HeuristicPolicy plays {SUPPORTED_GAMES}, not {game!r}; "
                             f"load_policy('heuristic', game) picks the heuristic of each game")
        if flags & ~ALL:
            raise ValueError(f"unknown heuristic flags {flags & ~ALL:#x}; combine EFFICIENCY, PATTERNS, DEFENCE, VOID")
        self.game, self.flags = game, flags
        self.name = next((n for n, f in VARIANTS.items() if f == flags), f"heuristic-flags{flags}")
        # Only ranks waits by value; the observation does not carry the table's rules.
        self.rules = rules or BloodBattleRules()

    # ------------------------------------------------------------------ entry point

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        mask = action_mask[:L.n]  # the default actions: ESCAPE (rule option) comes after them
        if mask[L.HU]:
            return L.HU
        if mask[L.ROB_KONG]:
            return L.ROB_KONG
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("the action mask has no legal action")
        if legal.size == 1:
            return int(legal[0])
        view = decode(observation)
        if mask[L.VOID:L.VOID + 3].any():
            return self._choose_void(view, mask)
        if mask[L.PASS]:
            return self._claim(view, mask)
        return self._turn(view, mask)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        """``act`` for every row at once, compiled (deterministic: ``rng`` is not used)."""
        obs, masks = batch_arrays(observations, action_masks, (BloodBattleObserver.planes, N_SUIT_KINDS),
                                  L.n, self.game)
        return compiled.act_batch(obs, masks, compiled_features.suit_table(), compiled.scoring(self.rules),
                                  self.flags)

    # ------------------------------------------------------------------ 定缺

    def _choose_void(self, view: BloodBattleView, mask: np.ndarray) -> int:
        """The suit whose loss costs least: strongest rest, then fewest tiles; without VOID the first
        suit offered."""
        best, best_key = -1, None
        for s in range(3):
            if not mask[L.VOID + s]:
                continue
            if not self.flags & VOID:
                return L.VOID + s
            ev = HandEval(view.hand, s, 0)
            n = sum(view.hand[9 * s:9 * s + 9])
            key = (ev.shanten, n, -_count(ev.useful(), view.visible))
            if best_key is None or key < best_key:
                best, best_key = s, key
        return L.VOID + best

    # ------------------------------------------------------------------ own turn

    def _turn(self, view: BloodBattleView, mask: np.ndarray) -> int:
        """Kong if it does not hurt, else the best discard."""
        hand, void, n = view.hand, view.void[0], view.n_melds
        discards = np.flatnonzero(mask[L.DISCARD:L.DISCARD + N_SUIT_KINDS]).tolist()
        kongs = np.flatnonzero(mask[L.KONG:L.KONG + N_SUIT_KINDS]).tolist()
        if kongs:
            now = HandEval(hand, void, n).shanten
            for k in kongs:
                after = list(hand)
                if hand[k] == 4:  # 暗杠: a new meld
                    after[k] = 0
                    s = HandEval(after, void, n + 1).shanten
                else:  # 面下杠: the 碰 becomes a kong, the meld count stays
                    after[k] -= 1
                    s = HandEval(after, void, n).shanten
                if s <= now:
                    return L.KONG + k
        threat = threats(view) if self.flags & DEFENCE else [Threat(0.0, -1)] * 4
        if void >= 0 and any(k // 9 == void for k in discards):
            # Forced void dump: all of them must go, so shed the most dangerous first.
            return L.DISCARD + max(discards, key=lambda k: (danger(view, threat, k), -k))
        return L.DISCARD + self._best_discard(view, discards, threat)

    def _best_discard(self, view: BloodBattleView, discards: list[int], threat: list[Threat]) -> int:
        """Lowest shanten, then most useful tiles (value-weighted when ready), then safety."""
        hand, void, n = view.hand, view.void[0], view.n_melds
        flush = flush_suit(view) if self.flags & PATTERNS else -1
        unseen = [max(0, 4 - v) for v in view.visible]
        melds = tuple(view.own_melds())
        raw = []
        for k in discards:
            after = list(hand)
            after[k] -= 1
            raw.append((k, after, HandEval(after, void, n)))
        if flush >= 0 and min(ev.shanten for _, _, ev in raw) <= 0:
            flush = -1  # already ready: wait values decide, never break the hand for a flush
        evals = []
        for k, after, ev in raw:
            off = flush >= 0 and k // 9 != flush
            evals.append((ev.shanten - 1 if off else ev.shanten, off, k, after, ev))
        # Efficiency only decides within a shanten level, danger at most one level further.
        reach = min(e[0] for e in evals) + (1 if any(t.level for t in threat) else 0)
        rows = []  # (adjusted shanten, off-flush flag, useful weight, kind)
        for adj, off, k, after, ev in evals:
            if adj > reach:
                continue
            if not self.flags & EFFICIENCY:
                weight = 0.0
            elif ev.shanten == 0 and not self.flags & PATTERNS:
                weight = float(_count(ev.useful(), view.visible))
            elif ev.shanten == 0:
                weight = 0.0
                for t in ev.useful():
                    if unseen[t]:
                        after[t] += 1
                        weight += unseen[t] * win_points(bytes(after), melds, void, self.rules) / 6
                        after[t] -= 1
            else:
                reg_mask, sp_mask = ev.useful_masks()
                weight = 0.0
                for t in bits(reg_mask | sp_mask):
                    # A 七对 draw is worth more than a plain one (3 fan against 1).
                    weight += unseen[t] * (SEVEN_PAIRS_WEIGHT if sp_mask >> t & 1 else 1.0)
            rows.append((adj, off, weight, k))
        best_level = min(r[0] for r in rows)
        top = {}
        for s, _, w, _ in rows:
            top[s] = max(top.get(s, 0.0), w)
        # Shanten first; efficiency moves the score within [0, 0.5) so it never beats a shanten
        # step; shedding the off-flush suit comes before efficiency within a level.
        w_danger = 0.0 if not any(t.level for t in threat) else (0.15, 0.3, 0.5)[min(max(best_level, 0), 2)]

        def score(row: tuple[int, bool, float, int]) -> tuple[float, int]:
            s, off, w, k = row
            eff = s + (0.5 * (1 - w / top[s]) if top[s] > 0 else 0.5) - (0.5 if off else 0.0)
            if w_danger:
                eff += w_danger * danger(view, threat, k)
            return (eff, k)

        return min(rows, key=score)[3]

    # ------------------------------------------------------------------ claims

    def _claim(self, view: BloodBattleView, mask: np.ndarray) -> int:
        """直杠 / 碰 when the hand is not set back, else pass."""
        hand, void, n, k = view.hand, view.void[0], view.n_melds, view.claim
        if k < 0:
            return L.PASS
        before = HandEval(hand, void, n)
        patterns = bool(self.flags & PATTERNS)
        if before.shanten >= 1 and patterns and flush_suit(view) not in (-1, k // 9):
            return L.PASS  # an off-suit meld would end the 清一色 chance
        if mask[L.DIRECT_KONG]:
            after = list(hand)
            after[k] -= 3
            if HandEval(after, void, n + 1).shanten <= before.shanten:
                return L.DIRECT_KONG
        if mask[L.PONG]:
            after = list(hand)
            after[k] -= 2
            # Contains-shanten of the 3n+2 hand = shanten after its best discard.
            s = HandEval(after, void, n + 1).shanten
            if s < before.shanten or (s == before.shanten and patterns and toitoi_leaning(view)):
                return L.PONG
        return L.PASS


# ---------------------------------------------------------------- helpers


def _count(kinds: list[int], visible: list[int]) -> int:
    """Unseen copies of the given kinds."""
    return sum(max(0, 4 - visible[k]) for k in kinds)


def flush_suit(view: BloodBattleView) -> int:
    """The suit of a near 清一色 (all but <= 4 own tiles in it, every meld in it), or -1."""
    melds = view.pongs[0] + view.kongs[0] + view.own_ankan
    per_suit = [sum(view.hand[9 * s:9 * s + 9]) for s in range(3)]
    for k in melds:
        per_suit[k // 9] += 3
    total = sum(per_suit)
    s = max(range(3), key=per_suit.__getitem__)
    if s == view.void[0] or per_suit[s] < total - 4 or any(k // 9 != s for k in melds):
        return -1
    return s


def toitoi_leaning(view: BloodBattleView) -> bool:
    """Many pairs / triplets and only 碰-type melds: worth calling toward 对对胡."""
    void = view.void[0]
    pairs = sum(1 for k, c in enumerate(view.hand) if c >= 2 and k // 9 != void)
    return pairs + view.n_melds >= 4


class Threat(NamedTuple):
    """How likely a relative seat is to be ready (0 = none), and the suit it seems to collect."""

    level: float
    collects: int


def threats(view: BloodBattleView) -> list[Threat]:
    """Per relative seat (0 = self, never a threat): exposed melds, one-suit discards, late wall."""
    out = [Threat(0.0, -1)] * 4
    late = 0.5 * (view.wall < 30) + 0.5 * (view.wall < 15)
    for r in range(1, 4):
        if view.won[r]:
            continue
        exposed = len(view.pongs[r]) + len(view.kongs[r]) + view.n_ankan[r]
        collects = _one_suit_discards(view, r)
        out[r] = Threat(late + 0.5 * max(0, exposed - 1) + 0.5 * (collects >= 0), collects)
    return out


def _one_suit_discards(view: BloodBattleView, r: int) -> int:
    """The suit a seat seems to collect (>= 6 non-void discards, at most one of that suit), or -1."""
    river, void = view.rivers[r], view.void[r]
    if void < 0:
        return -1
    per = [sum(river[9 * s:9 * s + 9]) for s in range(3)]
    keep = [s for s in range(3) if s != void]
    if per[keep[0]] + per[keep[1]] < 6:
        return -1
    low = min(keep, key=per.__getitem__)
    return low if per[low] <= 1 else -1


def danger(view: BloodBattleView, threats: list[Threat], k: int) -> float:
    """Rough risk of discarding kind k into the threatening seats."""
    total = 0.0
    for r in range(1, 4):
        level, collects = threats[r]
        # nobody wins on their void suit (docs/rules-blood-battle.md#S2)
        if not level or k // 9 == view.void[r]:
            continue
        d = 1.0
        if collects >= 0:
            d = 1.5 if k // 9 == collects else 0.3
        if view.rivers[r][k]:
            d *= 0.3  # 现物: not fully safe (Sichuan has no furiten), but they let it go
        if view.visible[k] >= 4:
            d *= 0.5  # no copy hidden: no pair / triplet wait on it
        if k % 9 in (0, 8):
            d *= 0.8
        total += level * d
    return total
