"""The one table of games (mjenv/games.py): nothing else lists the games, each entry matches its
env, and the tables of per-game content elsewhere cover exactly the table's games."""

from __future__ import annotations

from tests.support import ROOT

import importlib.util
import re
from pathlib import Path

import pytest

from agents.arena.levels import LEVEL_TABLES
from agents.neural import LAYOUTS
from agents.registry import SHIPPED_DEFAULT
from mjenv import games, replay, scoring
from train.config import make_config
from train.distill import GAME_PHASES


PER_GAME_CONTENT = {
    "mjenv.replay.GAMES (how a log's hands replay)": replay.GAMES,
    "mjenv.scoring._SCORERS (mjenv score)": scoring._SCORERS,
    "agents.neural.LAYOUTS (the network's action heads)": LAYOUTS,
    "agents.registry.SHIPPED_DEFAULT (load_policy('ppo', game))": SHIPPED_DEFAULT,
    "agents.arena.levels.LEVEL_TABLES (level titles)": LEVEL_TABLES,
    "train.distill.GAME_PHASES (the search teacher's phases)": GAME_PHASES,
}
"""Tables of what differs per game, kept where that content lives: a new game fills each one."""

# Both game names in a row, in a tuple, list or call: the list of games written out again.
LIST_OF_GAMES = re.compile(r"""["']blood_battle["']\s*,\s*["']joy_mahjong["']""")


@pytest.mark.parametrize("name", PER_GAME_CONTENT)
def test_every_per_game_table_covers_exactly_the_games(name: str) -> None:
    assert sorted(PER_GAME_CONTENT[name]) == sorted(games.GAME_NAMES), f"{name} and mjenv/games.py disagree"


def test_the_list_of_games_is_written_only_in_the_table() -> None:
    found = []
    for folder in ("mjenv", "agents", "train", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "mjenv" / "games.py":
                continue
            text = path.read_text(encoding="utf-8")
            found += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}"
                      for m in LIST_OF_GAMES.finditer(text)]
    assert not found, f"read mjenv.games (GAME_NAMES, GAMES) instead of listing the games: {found}"


@pytest.mark.parametrize("game", games.GAME_NAMES)
def test_each_entry_matches_its_env(game: str) -> None:
    table = games.game(game)
    raw = table.raw_env()
    assert raw.metadata["name"] == table.env_name
    assert raw.preset == table.preset
    assert table.variant(raw.preset, raw.rules) == table.variants[0]  # the first variant is the default
    for variant in table.variants:
        other = table.raw_env(**table.variant_options(variant))
        assert table.variant(other.preset, other.rules) == variant
    module, _, cls = table.backend.partition(":")
    assert importlib.util.find_spec(module) is not None and cls


def test_the_trainer_and_the_table_agree_on_the_games() -> None:
    for game in games.GAME_NAMES:
        assert make_config({"game": game}).game == game
    with pytest.raises(ValueError, match="config field 'game' must be one of"):
        make_config({"game": "riichi"})


def test_an_unknown_game_is_named_with_the_games() -> None:
    with pytest.raises(ValueError, match=r"unknown game 'riichi'; choose one of \['blood_battle', 'joy_mahjong'\]"):
        games.game("riichi")
