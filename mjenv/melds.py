"""Declared melds (副露) and their notation ``pong:5p``, ``kong:5p``, ``addkong:5p``, ``ankan:5p``, ``chow:345m``."""

from __future__ import annotations

from typing import NamedTuple, Sequence

from . import tiles

MELD_KINDS = ("chow", "pong", "kong", "addkong", "ankan")
KONGS = ("kong", "addkong", "ankan")


class Meld(NamedTuple):
    """A declared meld. ``tile`` is the pong/kong tile, or the lowest tile of a chow.

    ``kind``: ``chow`` 吃, ``pong`` 碰, ``kong`` 直杠 (on a discard), ``addkong`` 面下杠/加杠
    (4th tile added to one's pong), ``ankan`` 暗杠 (concealed). ``source`` is the seat the
    claimed tile came from (None for ankan, and where unknown).
    """

    kind: str
    tile: int
    source: int | None = None

    @property
    def is_kong(self) -> bool:
        return self.kind in KONGS

    @property
    def concealed(self) -> bool:
        return self.kind == "ankan"

    def kinds(self) -> list[int]:
        """The tile kinds the meld holds (3 or 4)."""
        if self.kind == "chow":
            return [self.tile, self.tile + 1, self.tile + 2]
        return [self.tile] * (4 if self.is_kong else 3)

    def __str__(self) -> str:
        return f"{self.kind}:{tiles.fmt(self.kinds()) if self.kind == 'chow' else tiles.name(self.tile)}"


def check_replacement_win(melds: Sequence[Meld], self_drawn: bool, after_kong: bool,
                          fan: str) -> None:
    """A self-draw on a kong replacement (``fan``: 杠上花 S9 of docs/rules-blood-battle.md / 杠上开花 J9 of
    docs/rules-joy-mahjong.md) needs a declared kong; raises ValueError naming the way out
    otherwise."""
    if self_drawn and after_kong and not any(m.is_kong for m in melds):
        raise ValueError(f"after_kong with self_drawn is {fan}, a self-draw on a kong's "
                         "replacement tile, but the hand declares no kong: add the kong to melds "
                         "(kong:, addkong: or ankan:) or drop after_kong")


def parse_meld(text: str) -> Meld:
    """Parse ``pong:5p`` / ``kong:5p`` / ``addkong:5p`` / ``ankan:5p`` / ``chow:345m``."""
    kind, sep, body = text.partition(":")
    if not sep or kind not in MELD_KINDS:
        raise ValueError(f"malformed meld {text!r}: expected one of {', '.join(k + ':…' for k in MELD_KINDS)}")
    ks = sorted(tiles.parse(body))
    if kind == "chow":
        ok = (len(ks) == 3 and ks[0] < tiles.N_SUIT_KINDS and tiles.suit_of(ks[0]) == tiles.suit_of(ks[2])
              and ks[1] == ks[0] + 1 and ks[2] == ks[0] + 2)
        if not ok:
            raise ValueError(f"malformed meld {text!r}: a chow is three consecutive suited tiles")
        return Meld("chow", ks[0])
    if len(set(ks)) != 1 or len(ks) not in (1, 3, 4) or ks[0] >= tiles.N_KINDS:
        raise ValueError(f"malformed meld {text!r}: give one tile, e.g. {kind}:5p")
    return Meld(kind, ks[0])
