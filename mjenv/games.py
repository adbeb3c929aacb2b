"""The one table of the games mjenv plays: every module that needs "which games exist" reads it.

A game is named by its key (``"blood_battle"``, ``"joy_mahjong"``, the ``game`` argument of
every command, env factory and config). A third game or variant is one entry here plus its rules,
engine and env module.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Game:
    """What the rest of mjenv needs to know about one game."""

    name: str
    """The key: ``blood_battle`` or ``joy_mahjong``."""
    title: str
    """For people: ``blood battle``, ``Joy Mahjong``."""
    env_module: str
    """The PettingZoo AEC env module (``env()`` / ``raw_env()``)."""
    preset: str
    """The default rules preset (``config.blood_battle_rules`` / ``joy_mahjong_rules``)."""
    variant_option: str
    """The env option that picks a table variant: ``preset`` (happy / qq) or ``room``."""
    variants: tuple[str, ...]
    """Its values; the first is the default."""
    gym_id: str
    """The Gymnasium id of the single-seat view (``gymnasium.make`` / ``gymnasium.make_vec``)."""
    backend: str
    """``module:Class`` of the compiled batched backend (:mod:`mjenv.vector`)."""

    @property
    def env_name(self) -> str:
        """The env module's own name (``blood_battle_v0``): its PettingZoo id is ``mjenv/<env_name>``."""
        return self.env_module.rpartition(".")[2]

    def variant_options(self, value: str | None = None) -> dict[str, str]:
        """The env option that picks variant ``value`` (default: the first of :attr:`variants`), e.g.
        ``{"room": "popular"}``."""
        return {self.variant_option: self.variants[0] if value is None else value}

    def variant(self, preset: str, rules: Any) -> str:
        """The variant a table plays, from its preset and its rules (a rules object or its dict): the
        preset, or the rule field the variant option sets (Joy Mahjong's ``room``)."""
        if self.variant_option == "preset":
            return preset
        return rules[self.variant_option] if isinstance(rules, Mapping) else getattr(rules, self.variant_option)

    def raw_env(self, **options: Any) -> Any:
        """The unwrapped AEC env of this game with ``options``."""
        return importlib.import_module(self.env_module).raw_env(**options)

    def env(self, **options: Any) -> Any:
        """The wrapped AEC env of this game with ``options``."""
        return importlib.import_module(self.env_module).env(**options)


GAMES: dict[str, Game] = {
    "blood_battle": Game("blood_battle", "blood battle", "mjenv.blood_battle_v0", "happy", "preset",
                         ("happy", "qq"), "mjenv/BloodBattle-v0",
                         "mjenv.vector.blood_battle:BloodBattleBackend"),
    "joy_mahjong": Game("joy_mahjong", "Joy Mahjong", "mjenv.joy_mahjong_v0", "standard", "room",
                        ("popular", "eight_fan", "no_fan"), "mjenv/JoyMahjong-v0",
                        "mjenv.vector.joy_mahjong:JoyMahjongBackend"),
}
"""Game key -> :class:`Game`, in a fixed order (the blood battle first: every default)."""

GAME_NAMES: tuple[str, ...] = tuple(GAMES)


def game(name: Any) -> Game:
    """The :class:`Game` called ``name``; a ValueError naming the games otherwise."""
    if not isinstance(name, str) or name not in GAMES:
        raise ValueError(f"unknown game {name!r}; choose one of {list(GAMES)}")
    return GAMES[name]
