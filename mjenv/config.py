"""Rule options: one frozen dataclass per game, named presets, validated overrides.

Every rule that a real table could play differently is a field here, with its rule ID
(docs/rules-blood-battle.md, docs/rules-joy-mahjong.md) in its docstring line. Unknown fields and
bad values fail at construction, naming the field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

import yaml


@dataclass(frozen=True)
class BloodBattleRules:
    """Sichuan blood battle (血战到底) rule options; defaults are the ``happy`` preset."""

    mode: str = "blood"
    """S14/S1: ``blood`` (play on until three seats win) or ``classic`` (first win ends)."""
    base_points: int = 6
    """S5/S11: points of 1倍 (the 基本分)."""
    direct_kong_units: int = 2
    """S5: 倍 the discarder pays for a 直杠 (happy 2, qq 1)."""
    added_kong_units: int = 1
    """S5: 倍 each seat not yet won pays for a 面下杠/弯杠."""
    concealed_kong_units: int = 2
    """S5: 倍 each seat not yet won pays for a 暗杠 (下雨)."""
    self_draw_bonus: str = "add_fan"
    """S9: ``add_fan`` (+1 fan, happy), ``add_base`` (+1 倍, qq) or ``none``."""
    gen_counts_kongs: bool = True
    """S9: 根 counts declared kongs; false = only undeclared fours (four in hand, or a 碰 plus
    its 4th tile in hand)."""
    cap_fan: int = 6
    """S10: 封顶 in fan, applied after extras."""
    flower_pig_units: int = 0
    """S15.1: 倍 a 花猪 pays each other seat; 0 means the cap amount 2^(cap-1) (happy); qq 16."""
    gang_pao_transfer: bool = False
    """S12: on 杠上炮 the discarder hands the kong's income to each winner (qq)."""
    forced_win_last_four: bool = False
    """S13: from the first draw of one of the wall's last four tiles on, every win (self-draw,
    discard, 抢杠胡) must be taken (qq)."""
    room_coefficient: int = 1
    """B1: N, beans per point."""
    rake: int = 0
    """B1: A, beans taken from every seat once per hand."""

    def __post_init__(self) -> None:
        _check_types(self)
        _check_choice(self, "mode", ("blood", "classic"))
        _check_choice(self, "self_draw_bonus", ("add_fan", "add_base", "none"))
        for name in ("base_points", "cap_fan", "room_coefficient"):
            if getattr(self, name) < 1:
                raise ValueError(f"rule field {name!r} must be >= 1, got {getattr(self, name)!r}")
        for name in ("direct_kong_units", "added_kong_units", "concealed_kong_units",
                     "flower_pig_units", "rake"):
            if getattr(self, name) < 0:
                raise ValueError(f"rule field {name!r} must be >= 0, got {getattr(self, name)!r}")

    @property
    def flower_pig_points(self) -> int:
        """S15.1: points a 花猪 pays each non-花猪 seat."""
        units = self.flower_pig_units or 2 ** (self.cap_fan - 1)
        return self.base_points * units


BLOOD_BATTLE_PRESETS: dict[str, dict[str, Any]] = {
    # seed 002, 欢乐四川麻将
    "happy": {},
    # seed 004, QQ 四川麻将
    "qq": {
        "direct_kong_units": 1,
        "self_draw_bonus": "add_base",
        "flower_pig_units": 16,
        "gang_pao_transfer": True,
        "forced_win_last_four": True,
    },
}


@dataclass(frozen=True)
class JoyMahjongRules:
    """Joy Mahjong (欢乐麻将) rule options; defaults as in docs/rules-joy-mahjong.md (popular room)."""

    room: str = "popular"
    """J5: ``popular`` 大众场 (X = fan), ``eight_fan`` 8番场 (a win needs >= 8 fan without flowers,
    X = fan + 8) or ``no_fan`` 无番场 (X = 10); X is then doubled by the bird and the dealer."""
    discard_payers: str = "discarder"
    """J6: on a discard win ``discarder`` pays alone; ``all_mcr``: the discarder pays fan+8, the
    other two 8 each (the MCR way)."""
    wucaishen_blocks_wufanhe: bool = True
    """J4 (default true): 无财神 is a fan, so a hand with it is never 无番和; false lets 无番和 stand
    beside 无财神 (decided ignoring 无财神)."""
    room_coefficient: int = 1
    """B1: N, beans per point."""
    rake: int = 0
    """B1: A, beans taken from every seat once per hand."""

    def __post_init__(self) -> None:
        _check_types(self)
        _check_choice(self, "room", ("popular", "eight_fan", "no_fan"))
        _check_choice(self, "discard_payers", ("discarder", "all_mcr"))
        if self.room_coefficient < 1:
            raise ValueError(f"rule field 'room_coefficient' must be >= 1, got {self.room_coefficient!r}")
        if self.rake < 0:
            raise ValueError(f"rule field 'rake' must be >= 0, got {self.rake!r}")


JOY_MAHJONG_PRESETS: dict[str, dict[str, Any]] = {
    # seeds 000/001, 欢乐麻将; the room is chosen with the ``room`` field
    "standard": {},
}


def _check_types(obj: Any) -> None:
    """Reject values whose type does not match the field's default (bool is not int)."""
    for f in fields(obj):
        value, default = getattr(obj, f.name), f.default
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, type(default))
        if not ok:
            raise TypeError(
                f"rule field {f.name!r} must be {type(default).__name__}, "
                f"got {type(value).__name__} {value!r}"
            )


def _check_choice(obj: Any, name: str, choices: tuple[str, ...]) -> None:
    """Reject a string field outside its choices."""
    if getattr(obj, name) not in choices:
        raise ValueError(f"rule field {name!r} must be one of {choices}, got {getattr(obj, name)!r}")


def field_names(cls: type) -> tuple[str, ...]:
    """The rule fields of a rules dataclass."""
    return tuple(f.name for f in fields(cls))


def make_rules(cls: type, presets: Mapping[str, Mapping[str, Any]], preset: str,
               overrides: Mapping[str, Any]) -> Any:
    """Build a rules object from a named preset plus overrides by field name."""
    if preset not in presets:
        raise ValueError(f"unknown preset {preset!r}; choose one of {sorted(presets)}")
    unknown = sorted(set(overrides) - set(field_names(cls)))
    if unknown:
        raise ValueError(
            f"unknown rule field(s) {unknown} for {cls.__name__}; "
            f"known fields: {', '.join(field_names(cls))}"
        )
    return cls(**{**presets[preset], **overrides})


def blood_battle_rules(preset: str = "happy", **overrides: Any) -> BloodBattleRules:
    """The rules of a blood-battle preset (``happy`` or ``qq``), with overrides by name."""
    return make_rules(BloodBattleRules, BLOOD_BATTLE_PRESETS, preset, overrides)


def joy_mahjong_rules(preset: str = "standard", **overrides: Any) -> JoyMahjongRules:
    """The Joy Mahjong rules, with overrides by name (e.g. ``room="eight_fan"``)."""
    return make_rules(JoyMahjongRules, JOY_MAHJONG_PRESETS, preset, overrides)


def load_rules_file(path: str | Path) -> dict[str, Any]:
    """Read a rules YAML file (``configs/*.yaml``): ``{game, preset, rules: {...}}``."""
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, dict) or not {"game", "preset"} <= set(data):
        raise ValueError(f"{path}: a rules file needs the keys 'game' and 'preset'")
    extra = sorted(set(data) - {"game", "preset", "rules"})
    if extra:
        raise ValueError(f"{path}: unknown top-level key(s) {extra}")
    rules = data.get("rules") or {}
    if not isinstance(rules, dict):
        raise ValueError(f"{path}: 'rules' must be a mapping of rule fields")
    return {"game": data["game"], "preset": data["preset"], "rules": rules}


def as_dict(rules: Any) -> dict[str, Any]:
    """Plain dict of a rules object (for logs and saved configs)."""
    return dataclasses.asdict(rules)
