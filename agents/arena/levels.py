"""Level titles (等级): a cosmetic lookup from a cumulative score to a title, per game
(docs/rules-blood-battle.md#S17).

Tables, as (title, lowest score of the title):

- ``blood_battle``: seed 004 (QQ 四川麻将, 六、等级), 18 titles from 初品益都红 (100) to
  上品指天椒 (200000). The seed writes no. 15 as "上品 涮 椒"; the stray spaces are dropped.
- ``joy_mahjong``: seed 001 (欢乐麻将, 等级), 17 titles from 白板 (0) to 雀神. The seed masks the
  score of no. 16 发 (``**``) and gives none for no. 17 雀神, so both are listed with threshold
  ``None`` and never returned: any score >= 800000 maps to 中, the highest title whose
  threshold is known.

Scores below the first threshold (negative ones included) get the lowest title.
"""

from __future__ import annotations

LEVEL_TABLES: dict[str, tuple[tuple[str, int | None], ...]] = {
    "blood_battle": (
        ("初品益都红", 100), ("良品益都红", 200), ("上品益都红", 500),
        ("初品大红袍", 1000), ("良品大红袍", 1500), ("上品大红袍", 2300),
        ("初品二荆条", 3000), ("良品二荆条", 4000), ("上品二荆条", 6000),
        ("初品朝天椒", 9000), ("良品朝天椒", 13000), ("上品朝天椒", 18000),
        ("初品涮椒", 25000), ("良品涮椒", 35000), ("上品涮椒", 50000),
        ("初品指天椒", 70000), ("良品指天椒", 100000), ("上品指天椒", 200000),
    ),
    "joy_mahjong": (
        ("白板", 0), ("一万", 100), ("二万", 200), ("三万", 500), ("四万", 1000),
        ("五万", 2000), ("六万", 5000), ("七万", 10000), ("八万", 20000), ("九万", 50000),
        ("东风", 80000), ("西风", 100000), ("南风", 200000), ("北风", 500000), ("中", 800000),
        ("发", None),  # masked in seed 001
        ("雀神", None),  # no score in seed 001
    ),
}


def level_title(game: str, score: float) -> str:
    """The level title (等级) of a cumulative ``score`` in ``game`` (``blood_battle``, ``joy_mahjong``)."""
    if game not in LEVEL_TABLES:
        raise ValueError(f"no level table for game {game!r}; known: {sorted(LEVEL_TABLES)}")
    known = [(title, low) for title, low in LEVEL_TABLES[game] if low is not None]
    title = known[0][0]
    for name, low in known:
        if score >= low:
            title = name
    return title


_NAMED_AFTER = {"blood_battle": "chilli varieties, seed 004", "joy_mahjong": "tiles, seed 001"}


def level_legend(game: str) -> str:
    """What the ``level`` column of a game means, in one line for a table's legend."""
    titles = [title for title, _ in LEVEL_TABLES[game]]
    return (f"level: the {game} 等级 title of the cumulative score, from {titles[0]} up to {titles[-1]} "
            f"({len(titles)} titles named after {_NAMED_AFTER[game]}); cosmetic (rule S17), not a tile")
