"""Items (道具, S17 of docs/rules-blood-battle.md): pure functions over the wall and hands.

The wall is the list of kinds the engine holds; its live part is ``wall[head:tail]`` (draws take
``head``, kong replacements ``tail - 1``). Every function here returns what changes; the engine
(:mod:`mjenv.engine.blood_battle`) sequences the decisions and applies them.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

ITEMS = ("qiankun", "toutian", "yihua", "qianliyan", "shunfeng")
"""S17.3-S17.7, in action order: 乾坤大挪移, 偷天换日, 移花接木, 千里眼, 顺风耳 (金手指 is cosmetic, S17.9)."""
QIANKUN, TOUTIAN, YIHUA, QIANLIYAN, SHUNFENG = range(len(ITEMS))
MAX_COUNT = 99
"""The most of one item a seat may hold (a bound for the inventory planes)."""
QIANKUN_TILES = (1, 13)
"""S17.3: ``qiankun_tiles`` between these (a dealt hand has 13 tiles)."""
QIANLIYAN_PARTS = (1, 55)
"""S17.6: ``qianliyan_parts`` between these (the live wall holds at most 55 tiles after the deal)."""

Inventory = tuple[tuple[int, ...], ...]


def _counts(value: Any, where: str) -> tuple[int, ...]:
    """Five counts from an int (that many of each) or a mapping item -> count (others 0)."""
    if isinstance(value, Mapping):
        unknown = sorted(map(str, set(value) - set(ITEMS)))
        if unknown:
            raise ValueError(f"rule field 'items'{where}: unknown item(s) {unknown}; items are {', '.join(ITEMS)} "
                             f"(金手指 is cosmetic and not modelled, S17.9)")
        counts = tuple(value.get(name, 0) for name in ITEMS)
    else:
        counts = (value,) * len(ITEMS)
    for name, n in zip(ITEMS, counts):
        if not (isinstance(n, int) and not isinstance(n, bool)) or not 0 <= n <= MAX_COUNT:
            raise ValueError(f"rule field 'items'{where}: the count of {name} must be an int 0-{MAX_COUNT}, got {n!r}")
    return counts


def inventory(value: Any) -> Inventory | None:
    """S17.1: the per-seat counts ``((5 counts) x 4 seats)`` of the rule field ``items``: None (off),
    an int (that many of each item), a mapping item -> count, or four such mappings (one per seat)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        if len(value) != 4 or not all(isinstance(v, (Mapping, int)) for v in value):
            raise ValueError(f"rule field 'items' must be an int, a mapping item -> count or four mappings "
                             f"(one per seat), got {value!r}")
        return tuple(_counts(v, f"[{seat}]") for seat, v in enumerate(value))
    if isinstance(value, Mapping) or (isinstance(value, int) and not isinstance(value, bool)):
        return (_counts(value, ""),) * 4
    raise ValueError(f"rule field 'items' must be None, an int, a mapping item -> count or four mappings, "
                     f"got {type(value).__name__} {value!r}")


def check_range(name: str, value: Any, bounds: tuple[int, int]) -> None:
    """A ValueError naming the rule field unless ``value`` is an int within ``bounds``."""
    if not (isinstance(value, int) and not isinstance(value, bool)) or not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"rule field {name!r} must be an int {bounds[0]}-{bounds[1]}, got {value!r}")


def qiankun_wall(wall: Sequence[int], dealer: int, users: Sequence[int], n_suited: int,
                 rng: np.random.Generator) -> list[int]:
    """S17.3: a wall whose deal (13 tiles to each seat from ``dealer`` on) gives each seat of
    ``users`` (in turn order from the dealer) at least ``n_suited`` tiles of one suit, the suit
    drawn uniformly among those with that many tiles still undealt; every other tile is dealt
    from what remains, shuffled. The 108 tiles are conserved."""
    pool = list(wall)
    fixed: dict[int, list[int]] = {}
    for seat in users:
        counts = np.bincount(np.asarray(pool) // 9, minlength=3)
        suits = [s for s in range(3) if counts[s] >= n_suited]
        suit = suits[int(rng.integers(len(suits)))]
        of_suit = [i for i, k in enumerate(pool) if k // 9 == suit]
        take = sorted(rng.choice(len(of_suit), size=n_suited, replace=False).tolist())
        picked = [of_suit[i] for i in take]
        fixed[seat] = [pool[i] for i in picked]
        for i in reversed(picked):
            pool.pop(i)
    rest = [pool[i] for i in rng.permutation(len(pool))]
    out: list[int] = []
    for i in range(4):
        seat = (dealer + i) % 4
        mine = fixed.get(seat, [])
        need = 13 - len(mine)
        out += mine + rest[:need]
        rest = rest[need:]
    return out + rest


def nearest(wall: Sequence[int], head: int, tail: int, kind: int) -> int:
    """The wall index of the copy of ``kind`` nearest the draw end in the live wall, or -1."""
    for i in range(head, tail):
        if wall[i] == kind:
            return i
    return -1


def live_kinds(wall: Sequence[int], head: int, tail: int, n_kinds: int = 27) -> np.ndarray:
    """S17.4: the kinds with a copy in the live wall (the kinds 偷天换日 may name), as 0/1."""
    out = np.zeros(n_kinds, dtype=np.int8)
    out[list(set(wall[head:tail]))] = 1
    return out


def qianliyan_part(wall: Sequence[int], head: int, tail: int, kind: int, parts: int) -> int:
    """S17.6: in which of ``parts`` equal parts of the live wall (0 at the draw end) the nearest
    copy of ``kind`` lies, or -1 when none is in the live wall."""
    i = nearest(wall, head, tail, kind)
    return -1 if i < 0 else (i - head) * parts // (tail - head)
