"""Rule-based baseline for Joy Mahjong (欢乐麻将): :class:`JoyHeuristicPolicy`.

It decides only from the seat's observation tensor and action mask (encoder v0 of
:class:`mjenv.encoding.JoyMahjongObserver`), never from the game. In order of priority:

- 胡 / 抢杠胡 whenever the mask offers it.
- Discard: the tile that leaves the hand closest to a win, then the one that leaves the most
  useful unseen tiles (tile efficiency, 受入), then honours before terminals before middle
  tiles. The 财神 (wildcard) is never discarded while another discard is legal.
- 碰 / 吃 only when the call brings the hand closer to a win (after its best discard);
  直杠 / 暗杠 / 加杠 when the hand is no further from a win after the kong.

**Variants** (``flags``, :data:`agents.compiled.heuristic_joy.ALL` by default): EFFICIENCY (the
受入 tie-break; without it, tile order decides) and CALLS (碰 / 吃; without them, only kongs) can
be left out: ``heuristic-nocalls`` and ``heuristic-greedy`` (neither), rungs of the reference
ladders (:data:`VARIANTS`).

Distance to a win is over all 34 kinds, in *contains* semantics: the fewest tiles to add so
that the real tiles contain four melds (the declared ones included) and a pair, or seven pairs
without declared melds, less one per wildcard held (a wildcard fills any gap). It is built from
memoised per-group cost tables (:func:`mjenv.rules.shapes.regular_gap`). Knitted shapes and
the fifth-copy rule of wildcards are ignored: this is a baseline, not a search.

Loaded by name with ``load_policy("heuristic", game="joy_mahjong")`` (``mjenv eval --game
joy_mahjong --agents heuristic random``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from mjenv.actions import JOY_MAHJONG as L
from mjenv.encoding import JoyMahjongObserver
from mjenv.rules.shapes import regular_gap

from .base import batch_arrays
from .compiled import features as compiled_features
from .compiled import heuristic_joy as compiled
from .compiled.heuristic_joy import ALL, CALLS, EFFICIENCY

N_KINDS = 34
if JoyMahjongObserver.version != 0:  # the planes read below are those of encoder v0
    raise ImportError(f"agents.heuristic_joy decodes encoder v0, not v{JoyMahjongObserver.version}")
_V = {name: sl.start for name, sl in JoyMahjongObserver.views.items()}

VARIANTS = {"heuristic": ALL, "heuristic-nocalls": EFFICIENCY, "heuristic-greedy": 0}
"""Name -> flags of the Joy heuristic and its weaker variants (``load_policy(name, "joy_mahjong")``)."""


def distance(counts: bytes | bytearray, n_melds: int, wilds: int) -> int:
    """Tiles still missing for a win: regular (or seven pairs without melds) in contains
    semantics, less ``wilds``; ``counts``: 34 real counts (wildcards excluded)."""
    gap = regular_gap(bytes(counts), 4 - n_melds)
    if n_melds == 0:
        pairs = sum(min(c, 4) // 2 for c in counts)
        singles = sum(1 for c in counts if c % 2)
        short = max(0, 7 - pairs)
        gap = min(gap, short if short <= singles else singles + 2 * (short - singles))
    return gap - wilds


class JoyView:
    """What the heuristic reads from one Joy observation (seat-relative; 0 = self)."""

    def __init__(self, obs: np.ndarray) -> None:
        v = _V
        counts = obs[v["hand"]:v["hand"] + 4].sum(axis=0).astype(np.int64)
        self.wild = int(obs[v["wild"]].argmax())
        self.wilds = int(counts[self.wild])
        counts[self.wild] = 0
        self.real = bytearray(counts.tolist())  # the hand without its wildcards
        self.claim = int(obs[v["claim"]].argmax()) if obs[v["claim"]].any() else -1
        chows = obs[v["chow"]]
        own_ankan = obs[v["own_ankan"]]
        self.n_melds = int(chows.sum() + obs[v["pong"]].sum() + obs[v["kong"]].sum() + own_ankan.sum())
        # Copies the seat can see: hand (wildcards included), rivers, exposed melds, the indicator.
        seen = obs[v["hand"]:v["hand"] + 4].sum(axis=0) + 4 * obs[v["river"]:v["river"] + 4].sum(axis=0)
        seen += 3 * obs[v["pong"]:v["pong"] + 4].sum(axis=0) + 4 * obs[v["kong"]:v["kong"] + 4].sum(axis=0)
        seen += 4 * own_ankan + obs[v["indicator"]]
        runs = obs[v["chow"]:v["chow"] + 4].sum(axis=0)
        seen[:-2] += runs[:-2]
        seen[1:-1] += runs[:-2]
        seen[2:] += runs[:-2]
        self.unseen = [max(0, 4 - int(round(x))) for x in seen]


def _near(counts: Sequence[int]) -> list[int]:
    """Kinds whose draw can shorten the distance: held kinds and suited kinds within two ranks."""
    out = set()
    for k in range(N_KINDS):
        if counts[k]:
            out.add(k)
            if k < 27:
                r = k % 9
                out.update(k - d for d in (1, 2) if r - d >= 0)
                out.update(k + d for d in (1, 2) if r + d <= 8)
    return sorted(out)


def _tile_order(k: int) -> int:
    """Tie-break between equal discards: honours first, then terminals, then middle tiles."""
    if k >= 27:
        return 0
    r = k % 9
    return 1 if r in (0, 8) else 2 + min(r, 8 - r)


class JoyHeuristicPolicy:
    """Tile-efficiency baseline for Joy Mahjong (see the module docstring).

    ``act`` is the readable reference; ``act_batch`` runs the compiled copy
    (:mod:`agents.compiled.heuristic_joy`), which chooses exactly the same actions.
    """

    name = "heuristic"
    flags = ALL  # class defaults: a subclass that skips __init__ is the full heuristic

    def __init__(self, flags: int = ALL) -> None:
        if flags & ~ALL:
            raise ValueError(f"unknown Joy heuristic flags {flags & ~ALL:#x}; combine EFFICIENCY, CALLS")
        self.flags = flags
        self.name = next((n for n, f in VARIANTS.items() if f == flags), f"heuristic-flags{flags}")

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        mask = action_mask[:L.n]  # the default actions: ESCAPE (rule option) comes after them
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("the action mask has no legal action")
        for a in (L.HU, L.ROB_KONG):
            if mask[a]:
                return a
        if legal.size == 1:
            return int(legal[0])
        view = JoyView(observation)
        if mask[L.PASS]:
            return self._claim(view, mask)
        return self._turn(view, mask)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        """``act`` for every row at once, compiled (deterministic: ``rng`` is not used)."""
        obs, masks = batch_arrays(observations, action_masks, (JoyMahjongObserver.planes, N_KINDS),
                                  L.n, "joy_mahjong")
        return compiled.act_batch(obs, masks, compiled_features.suit_table(), compiled_features.honour_table(),
                                  self.flags)

    # ------------------------------------------------------------------ own turn

    def _turn(self, view: JoyView, mask: np.ndarray) -> int:
        """Kong when it costs nothing, else the best discard."""
        discards = [k for k in range(N_KINDS) if mask[L.DISCARD + k]]
        dist, k = self._best_discard(view.real, view.n_melds, view.wilds, discards, view.wild, view.unseen)
        for kong in range(N_KINDS):
            if mask[L.KONG + kong] and kong != view.wild:
                after = bytearray(view.real)
                four = after[kong] >= 4
                after[kong] -= 4 if four else 1  # 暗杠: a new meld; 加杠: the 碰 becomes a kong
                if distance(after, view.n_melds + int(four), view.wilds) <= dist:
                    return L.KONG + kong
        return L.DISCARD + k

    def _best_discard(self, real: bytearray, n_melds: int, wilds: int, discards: list[int], wild: int,
                      unseen: list[int]) -> tuple[int, int]:
        """(distance after it, kind) of the best discard among ``discards`` (kinds)."""
        real_discards = [k for k in discards if k != wild] or discards
        scored = []
        for k in real_discards:
            if k == wild:  # only wildcards can be discarded: one fewer wildcard
                scored.append((distance(real, n_melds, wilds - 1), k))
                continue
            real[k] -= 1
            scored.append((distance(real, n_melds, wilds), k))
            real[k] += 1
        best = min(d for d, _ in scored)
        tied = [k for d, k in scored if d == best]
        if len(tied) > 1 and self.flags & EFFICIENCY:
            tied.sort(key=lambda k: (-self._acceptance(real, k, n_melds, wilds, best, unseen, wild),
                                     _tile_order(k), -k))
        elif len(tied) > 1:
            tied.sort(key=lambda k: (_tile_order(k), -k))
        return best, tied[0]

    def _acceptance(self, real: bytearray, k: int, n_melds: int, wilds: int, dist: int,
                    unseen: list[int], wild: int) -> int:
        """Unseen tiles that shorten the distance once ``k`` is discarded (受入); a drawn
        wildcard always does."""
        if k == wild:
            return 0
        real[k] -= 1
        total = unseen[wild]
        for t in _near(real):
            if t != wild and unseen[t] and real[t] < 4:
                real[t] += 1
                if distance(real, n_melds, wilds) < dist:
                    total += unseen[t]
                real[t] -= 1
        real[k] += 1
        return total

    # ------------------------------------------------------------------ claims

    def _claim(self, view: JoyView, mask: np.ndarray) -> int:
        """碰 / 吃 when the call (and its best discard) brings the hand closer; 直杠 when not further."""
        k = view.claim
        real, m, w = view.real, view.n_melds, view.wilds
        now = distance(real, m, w)
        if mask[L.DIRECT_KONG]:
            after = bytearray(real)
            after[k] -= 3
            if distance(after, m + 1, w) <= now:
                return L.DIRECT_KONG
        options = []
        if mask[L.PONG]:
            options.append((L.PONG, (k, k)))
        for shape in range(3):
            if mask[L.CHOW + shape]:
                low = k - shape
                options.append((L.CHOW + shape, tuple(t for t in (low, low + 1, low + 2) if t != k)))
        best_action, best = L.PASS, now
        if not self.flags & CALLS:
            return best_action
        for action, used in options:
            after = bytearray(real)
            for t in used:
                after[t] -= 1
            discards = [t for t in range(N_KINDS) if after[t]] + ([view.wild] if w else [])
            if not discards:
                continue
            d, _ = self._best_discard(after, m + 1, w, discards, view.wild, view.unseen)
            if d < best:
                best_action, best = action, d
        return best_action
