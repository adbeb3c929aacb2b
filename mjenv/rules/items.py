"""Items (道具, S17 of docs/rules-blood-battle.md): pure functions over the wall and hands.

The wall is the list of kinds the engine holds; its live part is ``wall[head:tail]`` (draws take
``head``, kong replacements ``tail - 1``). Every function here returns what changes; the engine
(:mod:`mjenv.engine.blood_battle`) sequences the decisions and applies them.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..config import ITEMS

QIANKUN, TOUTIAN, YIHUA, QIANLIYAN, SHUNFENG = range(len(ITEMS))
"""S17.3-S17.7: the items' indices, in action order."""


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
