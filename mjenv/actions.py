"""Flat action layouts, one ``Discrete(n)`` space per game, written as a commented sum.

Blood battle (27 suited kinds, no 吃, 定缺)::

    [ 0, 27)  discard kind k
    [27, 54)  kong of kind k on one's own turn: 暗杠 if four are in hand, else 面下杠
              (adding the 4th to one's 碰). Only four copies exist, so at most one of the
              two is possible for a kind: one block of 27 instead of two.
    54        碰 pong the discard
    55        直杠 kong on the discard
    56        胡 win (self-draw, or on the discard)
    57        抢杠胡 rob the kong being added
    58        pass (过)
    [59, 62)  定缺 void suit m, p, s
    = 62
    62        escape (逃跑/强退), only with the rule option ``escape`` (S16): = 63
    then, only with the rule option ``items`` (S17), after ESCAPE when it is there (I = 62 or 63):
    [I, I+5)      use item 乾坤大挪移 (pre-deal; keeping it is PASS), 偷天换日, 移花接木, 千里眼, 顺风耳
    [I+5, I+32)   give kind k (the tile 偷天换日 / 移花接木 puts into the wall)
    [I+32, I+59)  name kind k (the kind 偷天换日 takes / 千里眼 looks for)
    = I + 59 (121 or 122)

Joy Mahjong (34 kinds, 吃 from the seat on the left, no 定缺)::

    [ 0, 34)  discard kind k (0-26 suited, 27-30 东南西北, 31-33 中发白)
    [34, 68)  kong of kind k on one's own turn: 暗杠 or 面下杠/加杠, one block as above
    [68, 71)  吃 chow the discard: the claimed tile is the lowest / middle / highest of the chow
    71        碰 pong the discard
    72        直杠 kong on the discard
    73        胡 win (self-draw, or on the discard)
    74        抢杠胡 rob the kong being added
    75        pass (过)
    = 76
    76        escape (逃跑), only with the rule option ``escape`` (J11): = 77

The escape action comes last, and the item actions after it, so the layouts without it (and the checkpoints trained on them)
stay as they are.

Rule IDs cited here are anchors of docs/rules-blood-battle.md (B, S) and docs/rules-joy-mahjong.md (J).
"""

from __future__ import annotations

from . import tiles

N_ITEMS = 5
ITEM_NAMES = ("item qiankun", "item toutian", "item yihua", "item qianliyan", "item shunfeng")
ITEM_NAMES_ZH = ("乾坤大挪移", "偷天换日", "移花接木", "千里眼", "顺风耳")


class ActionLayout:
    """Offsets of each action block for a game's flat action space."""

    def __init__(self, n_kinds: int, chow: bool, void: bool, escape: bool = False, items: bool = False) -> None:
        self.n_kinds = n_kinds
        self.DISCARD = 0
        self.KONG = n_kinds
        nxt = 2 * n_kinds
        self.CHOW = nxt if chow else -1  # CHOW + 0/1/2: claimed tile is low/mid/high
        nxt += 3 if chow else 0
        self.PONG, self.DIRECT_KONG, self.HU, self.ROB_KONG, self.PASS = range(nxt, nxt + 5)
        nxt += 5
        self.VOID = nxt if void else -1
        nxt += 3 if void else 0
        self.ESCAPE = nxt if escape else -1  # S16/J11: the last action, only with the option
        nxt += 1 if escape else 0
        # S17: the items, then the two follow-up decisions (a tile to give, a kind to name), each
        # a block of its own rather than a product of the two.
        self.ITEM = nxt if items else -1  # ITEM + i: item i of mjenv.rules.items.ITEMS
        self.GIVE = nxt + N_ITEMS if items else -1
        self.NAME = nxt + N_ITEMS + n_kinds if items else -1
        self.n = nxt + (N_ITEMS + 2 * n_kinds if items else 0)
        self.base = self  # the layout without options (set for the variants in LAYOUTS)

    def with_escape(self, escape: bool) -> "ActionLayout":
        """This game's layout with the ESCAPE action (``escape`` true) or without it."""
        return self.with_options(escape, False)

    def with_options(self, escape: bool, items: bool = False) -> "ActionLayout":
        """This game's layout with ESCAPE (S16/J11) and the item actions (S17) as asked."""
        return LAYOUTS[(self.base, bool(escape), bool(items))]

    def name(self, a: int) -> str:
        """Human-readable name of action ``a``, e.g. ``discard 5m`` or ``pong``."""
        if not 0 <= a < self.n:
            raise ValueError(f"action {a} is outside the action space [0, {self.n})")
        if a < self.KONG:
            return f"discard {tiles.name(a)}"
        if a < 2 * self.n_kinds:
            return f"kong {tiles.name(a - self.KONG)}"
        if self.CHOW >= 0 and self.CHOW <= a < self.CHOW + 3:
            return ("chow low", "chow mid", "chow high")[a - self.CHOW]
        if 0 <= self.ITEM <= a:
            return self._item_name(a, ITEM_NAMES, "give", "name", tiles.name)
        fixed = {self.PONG: "pong", self.DIRECT_KONG: "kong on discard", self.HU: "hu",
                 self.ROB_KONG: "rob kong", self.PASS: "pass", self.ESCAPE: "escape"}
        if a in fixed:
            return fixed[a]
        return f"void {tiles.SUITS[a - self.VOID]}"

    def name_zh(self, a: int) -> str:
        """Chinese name of action ``a``, e.g. ``打 五万`` or ``碰``."""
        if a < self.KONG:
            return f"打 {tiles.name_zh(a)}"
        if a < 2 * self.n_kinds:
            return f"杠 {tiles.name_zh(a - self.KONG)}"
        if self.CHOW >= 0 and self.CHOW <= a < self.CHOW + 3:
            return ("吃 (低)", "吃 (中)", "吃 (高)")[a - self.CHOW]
        if 0 <= self.ITEM <= a:
            return self._item_name(a, ITEM_NAMES_ZH, "换出", "指定", tiles.name_zh)
        fixed = {self.PONG: "碰", self.DIRECT_KONG: "直杠", self.HU: "胡",
                 self.ROB_KONG: "抢杠胡", self.PASS: "过", self.ESCAPE: "逃跑"}
        if a in fixed:
            return fixed[a]
        return f"定缺 {tiles.SUIT_NAMES_ZH[a - self.VOID]}"

    def _item_name(self, a: int, items: tuple[str, ...], give: str, name: str, tile_name) -> str:
        """The name of an item action ``a`` (>= ITEM): the item, or the kind given / named."""
        if a < self.GIVE:
            return items[a - self.ITEM]
        if a < self.NAME:
            return f"{give} {tile_name(a - self.GIVE)}"
        return f"{name} {tile_name(a - self.NAME)}"


BLOOD_BATTLE = ActionLayout(tiles.N_SUIT_KINDS, chow=False, void=True)
JOY_MAHJONG = ActionLayout(tiles.N_KINDS, chow=True, void=False)
LAYOUTS: dict[tuple[ActionLayout, bool, bool], ActionLayout] = {}
"""(base layout, escape, items) -> the layout with those options (one object each, so that
layouts compare by identity as before)."""
for _base, _args in ((BLOOD_BATTLE, (tiles.N_SUIT_KINDS, False, True)), (JOY_MAHJONG, (tiles.N_KINDS, True, False))):
    for _escape in (False, True):
        for _items in (False, True):
            _v = _base if not (_escape or _items) else ActionLayout(*_args, escape=_escape, items=_items)
            _v.base = _base
            LAYOUTS[(_base, _escape, _items)] = _v
ESCAPE_LAYOUTS = {b: LAYOUTS[(b, True, False)] for b in (BLOOD_BATTLE, JOY_MAHJONG)}
"""Each game's layout with the ESCAPE action appended (the rule option ``escape``)."""
