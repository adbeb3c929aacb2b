"""Tile kinds, count arrays and the compact notation.

A tile *kind* is an int in ``0..33`` (flowers ``34..41``)::

    0-8    1m-9m   万 (characters)
    9-17   1p-9p   筒 (dots)
    18-26  1s-9s   条 (bamboo)
    27-30  E S W N 东南西北
    31-33  C F P   中发白
    34-41  1f-8f   春夏秋冬梅兰竹菊

Hands are 34-slot integer count arrays (flowers are counted apart). The notation:
``123m456p789s``, honours ``ESWNCFP`` (or ``1z-7z`` in Tenhou order
E S W N P F C), flowers ``1f-8f``; Chinese suffixes 万/筒/饼/条/索 and Chinese tile names
(``五万``, ``东``, ``红中`` ...) are accepted too.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

N_KINDS = 34
N_SUIT_KINDS = 27
N_FLOWERS = 8
SUITS = "mps"
SUIT_NAMES_ZH = "万筒条"
HONOURS = "ESWNCFP"
HONOUR_NAMES_ZH = ("东", "南", "西", "北", "中", "发", "白")
FLOWER_NAMES_ZH = ("春", "夏", "秋", "冬", "梅", "兰", "竹", "菊")
DIGITS_ZH = "一二三四五六七八九"
HELD = bytes([0] + [1] * 255)
"""A ``bytes.translate`` table: ``counts.translate(HELD)`` is 1 for each kind held, 0 elsewhere."""
# Tenhou's honour order 1z-7z is E S W N P(白) F(发) C(中).
_TENHOU_Z = (27, 28, 29, 30, 33, 32, 31)
_SUFFIX = {"m": 0, "p": 1, "s": 2, "万": 0, "筒": 1, "饼": 1, "条": 2, "索": 2}
_NAME_ZH = {
    **{n: 27 + i for i, n in enumerate(HONOUR_NAMES_ZH)},
    "红中": 31, "发财": 32, "白板": 33,
    **{n: 34 + i for i, n in enumerate(FLOWER_NAMES_ZH)},
}

_UNICODE = (
    [chr(0x1F007 + i) for i in range(9)]  # 🀇-🀏 characters
    + [chr(0x1F019 + i) for i in range(9)]  # 🀙-🀡 dots
    + [chr(0x1F010 + i) for i in range(9)]  # 🀐-🀘 bamboo
    + [chr(c) for c in (0x1F000, 0x1F001, 0x1F002, 0x1F003, 0x1F004, 0x1F005, 0x1F006)]
    + [chr(0x1F022 + i) for i in range(4)]  # plum orchid bamboo chrysanthemum
)
# Unicode orders flowers plum..chrysanthemum (1f022) then seasons (1f026); ours are seasons first.
_UNICODE[34:] = [chr(0x1F026 + i) for i in range(4)] + [chr(0x1F022 + i) for i in range(4)]


class TileError(ValueError):
    """A malformed tile string; the message points at the offending character."""

    def __init__(self, text: str, pos: int, reason: str) -> None:
        self.text, self.pos = text, pos
        super().__init__(f"{reason} at position {pos}:\n  {text}\n  {' ' * pos}^")


def suit_of(kind: int) -> int:
    """0 m, 1 p, 2 s, 3 honour, 4 flower."""
    return kind // 9 if kind < N_SUIT_KINDS else (3 if kind < N_KINDS else 4)


def rank_of(kind: int) -> int:
    """1-9 for suited tiles; 1-7 for honours (E S W N C F P); 1-8 for flowers."""
    if kind < N_SUIT_KINDS:
        return kind % 9 + 1
    return kind - 26 if kind < N_KINDS else kind - 33


def parse(text: str) -> list[int]:
    """Parse notation into a list of tile kinds, in written order."""
    out: list[int] = []
    pending: list[tuple[int, int]] = []  # (digit, position) awaiting a suit letter
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace() or ch in ",":
            if pending:
                raise TileError(text, pending[0][1], "digits without a suit letter")
            i += 1
            continue
        if ch.isdigit():
            pending.append((int(ch), i))
            i += 1
            continue
        if ch in DIGITS_ZH and i + 1 < len(text) and text[i + 1] in _SUFFIX:
            pending.append((DIGITS_ZH.index(ch) + 1, i))
            out.extend(_flush(text, pending, _SUFFIX[text[i + 1]], i + 1))
            i += 2
            continue
        if ch in _SUFFIX or ch in "zf":
            if not pending:
                raise TileError(text, i, f"suit {ch!r} with no digits before it")
            if ch == "z":
                out.extend(_flush_z(text, pending))
            elif ch == "f":
                out.extend(_flush_f(text, pending))
            else:
                out.extend(_flush(text, pending, _SUFFIX[ch], i))
            i += 1
            continue
        known = ch in HONOURS or ch in _NAME_ZH or text[i : i + 2] in _NAME_ZH
        if not known:
            raise TileError(text, i, f"unknown tile character {ch!r}")
        if pending:
            raise TileError(text, pending[0][1], "digits without a suit letter")
        if ch in HONOURS:
            out.append(27 + HONOURS.index(ch))
            i += 1
            continue
        two = text[i : i + 2]
        if two in _NAME_ZH:
            out.append(_NAME_ZH[two])
            i += 2
            continue
        if ch in _NAME_ZH:
            out.append(_NAME_ZH[ch])
            i += 1
            continue
    if pending:
        raise TileError(text, pending[0][1], "digits without a suit letter")
    return out


def _flush(text: str, pending: list[tuple[int, int]], suit: int, pos: int) -> list[int]:
    """Turn pending digits into suited kinds."""
    out = []
    for d, p in pending:
        if d == 0:
            raise TileError(text, p, "rank 0 is not a tile (ranks are 1-9)")
        out.append(suit * 9 + d - 1)
    pending.clear()
    return out


def _flush_z(text: str, pending: list[tuple[int, int]]) -> list[int]:
    """Turn pending digits into honours, Tenhou order."""
    out = []
    for d, p in pending:
        if not 1 <= d <= 7:
            raise TileError(text, p, "honours are 1z-7z")
        out.append(_TENHOU_Z[d - 1])
    pending.clear()
    return out


def _flush_f(text: str, pending: list[tuple[int, int]]) -> list[int]:
    """Turn pending digits into flowers."""
    out = []
    for d, p in pending:
        if not 1 <= d <= 8:
            raise TileError(text, p, "flowers are 1f-8f")
        out.append(34 + d - 1)
    pending.clear()
    return out


def parse_tile(text: str) -> int:
    """Parse exactly one tile."""
    kinds = parse(text)
    if len(kinds) != 1:
        raise TileError(text, 0, f"expected exactly one tile, got {len(kinds)}")
    return kinds[0]


def to_counts(kinds: Iterable[int], size: int = N_KINDS) -> np.ndarray:
    """Count array (int8) of a list of non-flower kinds."""
    counts = np.zeros(size, dtype=np.int8)
    for k in kinds:
        counts[k] += 1
    return counts


def counts_of(text: str) -> np.ndarray:
    """Count array of a tile string (flowers are not allowed here)."""
    kinds = parse(text)
    if any(k >= N_KINDS for k in kinds):
        raise ValueError(f"flowers are not part of a hand: {text!r}")
    return to_counts(kinds)


def from_counts(counts: Sequence[int] | np.ndarray) -> list[int]:
    """Sorted list of kinds from a count array."""
    return [k for k in range(len(counts)) for _ in range(int(counts[k]))]


def fmt(kinds: Iterable[int] | np.ndarray) -> str:
    """Compact notation, sorted: ``fmt(parse("5m1m")) == "15m"``.

    Accepts a list of kinds, or a count array (an ndarray of length 34).
    """
    if isinstance(kinds, np.ndarray) and kinds.shape == (N_KINDS,):
        kinds = from_counts(kinds)
    ks = sorted(kinds)
    parts: list[str] = []
    for suit, letter in enumerate(SUITS):
        digits = "".join(str(k - 9 * suit + 1) for k in ks if suit_of(k) == suit)
        if digits:
            parts.append(digits + letter)
    parts.extend(HONOURS[k - 27] for k in ks if suit_of(k) == 3)
    flowers = "".join(str(k - 33) for k in ks if k >= N_KINDS)
    if flowers:
        parts.append(flowers + "f")
    return "".join(parts)


def name(kind: int) -> str:
    """One tile in compact notation: ``5m``, ``E``, ``3f``."""
    return _NAMES[kind]


def name_zh(kind: int) -> str:
    """Chinese name: 五万, 三筒, 东, 中, 春."""
    if kind < N_SUIT_KINDS:
        return DIGITS_ZH[kind % 9] + SUIT_NAMES_ZH[kind // 9]
    if kind < N_KINDS:
        return HONOUR_NAMES_ZH[kind - 27]
    return FLOWER_NAMES_ZH[kind - 34]


def glyph(kind: int) -> str:
    """Unicode mahjong glyph."""
    return _UNICODE[kind]


def show(kinds: Iterable[int], style: str = "zh") -> str:
    """Human-readable tiles: ``style`` is ``zh`` (Chinese), ``unicode`` or ``ascii``."""
    ks = list(kinds)
    if style == "ascii":
        return fmt(ks)
    f = name_zh if style == "zh" else glyph
    sep = " " if style == "zh" else ""
    return sep.join(f(k) for k in sorted(ks))


_NAMES = [fmt([k]) for k in range(N_KINDS + N_FLOWERS)]
