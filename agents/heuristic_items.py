"""The blood-battle heuristic with simple item rules (S17 of docs/rules-blood-battle.md):
``load_policy("heuristic-items")``.

A yardstick for what items (道具) are worth (docs/experiments/2026-12-07-what-items-are-worth.md),
not a strong item player. It plays as :class:`agents.heuristic.HeuristicPolicy` and, where the
rule option ``items`` offers them:

- 乾坤大挪移: always used before the deal (a hand of at least ``qiankun_tiles`` of one suit).
- On its own turn, when the heuristic would discard tile k:
  - 偷天换日 when the hand without k is ready and a wait has unseen copies: give k, name the wait
    that scores most (the swap completes the hand, and 胡 is taken as 自摸);
  - else 移花接木: give k for a random live-wall tile (an extra draw);
  - else 顺风耳 (the heuristic does not read what it hears: the use only tells the table).
- 千里眼 is never used (nothing here reads its answer).

The tile given is the heuristic's discard choice on the same hand; the kind named is chosen again
from the observation, so the policy keeps no state between the steps of a use. Without items (or
once they are spent) it chooses exactly as the heuristic.
"""

from __future__ import annotations

import numpy as np

from mjenv.actions import BLOOD_BATTLE as L
from mjenv.actions import N_ITEMS
from mjenv.encoding import BloodBattleObserver
from mjenv.rules.items import QIANKUN, SHUNFENG, TOUTIAN, YIHUA
from mjenv.tiles import N_SUIT_KINDS

from .base import default_part
from .features import BloodBattleView, HandEval, decode
from .heuristic import HeuristicPolicy, win_points

_N_ITEM_ACTIONS = N_ITEMS + 2 * N_SUIT_KINDS  # the item block of a layout with items (S17)


def item_offset(n_actions: int) -> int:
    """The first item action of a blood-battle mask of length ``n_actions``, or -1 without items."""
    return n_actions - _N_ITEM_ACTIONS if n_actions >= L.n + _N_ITEM_ACTIONS else -1


class HeuristicItemsPolicy(HeuristicPolicy):
    """The heuristic, plus 乾坤大挪移, 偷天换日 to a sure win, 移花接木 and 顺风耳 (module docstring)."""

    name = "heuristic-items"

    def __init__(self, game: str = "blood_battle") -> None:
        super().__init__(game)
        self.name = "heuristic-items"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(self.act_batch(observation[None], action_mask[None], rng)[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        """The compiled heuristic for every row, then the item rules where items are offered."""
        obs, masks = np.asarray(observations), np.asarray(action_masks)
        item = item_offset(masks.shape[-1]) if masks.ndim == 2 else -1
        if item < 0:
            return super().act_batch(obs, masks, rng)
        give, name = item + N_ITEMS, item + N_ITEMS + N_SUIT_KINDS
        # Rows that choose a tile to give or a kind to name have no default action offered.
        follow_up = masks[:, give:name + N_SUIT_KINDS].any(axis=1)
        out = np.zeros(len(masks), dtype=np.int64)
        turn = np.flatnonzero(~follow_up)
        if turn.size:
            out[turn] = super().act_batch(obs[turn], masks[turn], rng)
        views_obs, _ = default_part(obs, masks, BloodBattleObserver.planes, L.n)
        for r in range(len(masks)):
            m = masks[r]
            if not m[item:].any():
                continue
            view = decode(views_obs[r])
            if follow_up[r]:
                k = self._give(views_obs[r], view, rng)
                out[r] = give + k if m[give:name].any() else name + self._name(view, k, m[name:name + N_SUIT_KINDS])
            elif m[item + QIANKUN]:
                out[r] = item + QIANKUN
            elif out[r] < L.KONG:  # the heuristic discards out[r]: an item first?
                out[r] = self._use(view, int(out[r]), m[item:item + N_ITEMS], item)
        return out

    def _give(self, observation: np.ndarray, view: BloodBattleView, rng: np.random.Generator) -> int:
        """The heuristic's discard from this hand (a void-suit tile while it holds one)."""
        hand, void = view.hand, view.void[0]
        kinds = [k for k in range(N_SUIT_KINDS) if hand[k] and (k // 9 == void or not self._holds_void(view))]
        mask = np.zeros(L.n, dtype=np.int8)
        mask[kinds] = 1
        return int(HeuristicPolicy.act(self, observation, mask, rng)) if len(kinds) > 1 else kinds[0]

    @staticmethod
    def _holds_void(view: BloodBattleView) -> bool:
        """Whether the hand still holds a tile of its void suit."""
        v = view.void[0]
        return v >= 0 and any(view.hand[9 * v:9 * v + 9])

    def _ready_waits(self, view: BloodBattleView, k: int) -> list[int]:
        """The waits with unseen copies of the hand without k, if that hand is ready and void-free."""
        after = list(view.hand)
        after[k] -= 1
        v = view.void[0]
        if v >= 0 and any(after[9 * v:9 * v + 9]):
            return []
        ev = HandEval(after, v, view.n_melds)
        if ev.shanten != 0:
            return []
        return [t for t in ev.useful() if view.visible[t] < 4]

    def _use(self, view: BloodBattleView, k: int, offered: np.ndarray, item: int) -> int:
        """The item to use before discarding k, or the discard itself."""
        if offered[TOUTIAN] and self._ready_waits(view, k):
            return item + TOUTIAN
        if offered[YIHUA]:
            return item + YIHUA
        if offered[SHUNFENG]:
            return item + SHUNFENG
        return L.DISCARD + k

    def _name(self, view: BloodBattleView, k: int, offered: np.ndarray) -> int:
        """偷天换日's kind: the offered wait that scores most, else the kind that leaves the lowest shanten."""
        after = list(view.hand)
        after[k] -= 1
        melds, void = tuple(view.own_melds()), view.void[0]
        best, best_key = -1, None
        for t in np.flatnonzero(offered).tolist():
            after[t] += 1
            key = (-win_points(bytes(after), melds, void, self.rules), HandEval(after, void, view.n_melds).shanten, t)
            after[t] -= 1
            if best_key is None or key < best_key:
                best, best_key = t, key
        return best
