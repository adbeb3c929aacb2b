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

The escape action comes last, so the layouts without it (and the checkpoints trained on them)
stay as they are.

Rule IDs cited here are anchors of docs/rules-blood-battle.md (B, S) and docs/rules-joy-mahjong.md (J).
"""

from __future__ import annotations

from . import tiles


class ActionLayout:
    """Offsets of each action block for a game's flat action space."""

    def __init__(self, n_kinds: int, chow: bool, void: bool, escape: bool = False) -> None:
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
        self.n = nxt + (1 if escape else 0)

    def with_escape(self, escape: bool) -> "ActionLayout":
        """This game's layout with the ESCAPE action (``escape`` true) or without it."""
        return ESCAPE_LAYOUTS[self] if escape else self

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
        fixed = {self.PONG: "碰", self.DIRECT_KONG: "直杠", self.HU: "胡",
                 self.ROB_KONG: "抢杠胡", self.PASS: "过", self.ESCAPE: "逃跑"}
        if a in fixed:
            return fixed[a]
        return f"定缺 {tiles.SUIT_NAMES_ZH[a - self.VOID]}"


BLOOD_BATTLE = ActionLayout(tiles.N_SUIT_KINDS, chow=False, void=True)
JOY_MAHJONG = ActionLayout(tiles.N_KINDS, chow=True, void=False)
ESCAPE_LAYOUTS = {
    BLOOD_BATTLE: ActionLayout(tiles.N_SUIT_KINDS, chow=False, void=True, escape=True),
    JOY_MAHJONG: ActionLayout(tiles.N_KINDS, chow=True, void=False, escape=True),
}
"""Each game's layout with the ESCAPE action appended (the rule option ``escape``)."""
