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
    escape: bool = False
    """S16: every seat that has neither won nor escaped may ESCAPE (逃跑/强退) at each decision;
    adds one action, the last (62)."""
    escape_rule: str = "happy"
    """S16.1/S16.2, with ``escape``: ``happy`` (the hand goes on; 扣豆 + 赔偿) or ``qq`` (the hand
    ends; 16倍 to each seat not yet won)."""
    escape_factor: int = 1
    """S16.1: x, the 修正参数 of the happy 扣豆 and 赔偿."""
    escape_min_penalty: int | None = None
    """S16.1: the least 扣豆, in beans; None: N·6·2^(cap_fan−1) (one capped win)."""
    escape_min_compensation: int | None = None
    """S16.1: the least 赔偿 to each seat, in beans; None: N·base_points (N·6)."""
    bankroll: int | tuple[int, int, int, int] | None = None
    """B4: beans each seat holds at the start of an episode (one int, or four); None: unlimited."""
    min_beans: int = 0
    """B4: 场次下限; in a match, a seat below it after a hand ends the match. Needs ``bankroll``."""
    items: Any = None
    """S17: items (道具) each seat holds at the start of a hand: an int (that many of each), a
    mapping item -> count, or four mappings (one per seat); None: off. Kept as four tuples of
    counts in :data:`mjenv.rules.items.ITEMS` order; adds the item actions after the others."""
    qiankun_tiles: int = 10
    """S17.3, with ``items``: tiles of one suit a 乾坤大挪移 deal holds at least (1-13)."""
    qianliyan_parts: int = 4
    """S17.6, with ``items``: the equal parts of the live wall 千里眼 tells apart (1-55)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", item_inventory(self.items))
        _check_options(self, {**_BLOOD_OPTIONAL, "items": ""})
        _check_limits(self, BLOOD_LIMITS)
        _check_choice(self, "mode", ("blood", "classic"))
        _check_choice(self, "escape_rule", ("happy", "qq"))
        _check_choice(self, "self_draw_bonus", ("add_fan", "add_base", "none"))
        for name in ("base_points", "cap_fan", "room_coefficient"):
            if getattr(self, name) < 1:
                raise ValueError(f"rule field {name!r} must be >= 1, got {getattr(self, name)!r}")
        for name in ("direct_kong_units", "added_kong_units", "concealed_kong_units",
                     "flower_pig_units", "rake", "escape_factor"):
            if getattr(self, name) < 0:
                raise ValueError(f"rule field {name!r} must be >= 0, got {getattr(self, name)!r}")
        _check_escape(self, {"escape_factor": 1, "escape_min_penalty": None, "escape_min_compensation": None})
        if self.escape_rule == "qq":
            for name, default in (("escape_factor", 1), ("escape_min_penalty", None),
                                  ("escape_min_compensation", None)):
                if getattr(self, name) != default:
                    raise ValueError(f"rule field {name!r} belongs to escape_rule='happy' (扣豆 and 赔偿); "
                                     f"escape_rule='qq' pays 16倍 and has no {name}")
        _check_balances(self)
        check_int_range("qiankun_tiles", self.qiankun_tiles, QIANKUN_TILES)
        check_int_range("qianliyan_parts", self.qianliyan_parts, QIANLIYAN_PARTS)
        if self.items is None:
            for name, default in (("qiankun_tiles", 10), ("qianliyan_parts", 4)):
                if getattr(self, name) != default:
                    raise ValueError(f"rule field {name!r} applies only with items (S17); set items or leave {name} out")

    @property
    def flower_pig_points(self) -> int:
        """S15.1: points a 花猪 pays each non-花猪 seat."""
        units = self.flower_pig_units or 2 ** (self.cap_fan - 1)
        return self.base_points * units

    @property
    def cap_points(self) -> int:
        """S10/S16.1: the points of one capped win, 6·2^(cap_fan−1)."""
        return self.base_points * 2 ** (self.cap_fan - 1)

    @property
    def escape_penalty_floor(self) -> int:
        """S16.1: the least 扣豆 in beans (``escape_min_penalty``, by default N·cap)."""
        if self.escape_min_penalty is None:
            return self.room_coefficient * self.cap_points
        return self.escape_min_penalty

    @property
    def escape_compensation_floor(self) -> int:
        """S16.1: the least 赔偿 in beans (``escape_min_compensation``, by default N·6)."""
        if self.escape_min_compensation is None:
            return self.room_coefficient * self.base_points
        return self.escape_min_compensation


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
        "escape_rule": "qq",
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
    escape: bool = False
    """J11: every seat may ESCAPE (逃跑) at each decision, ending the hand; adds one action, the
    last (76)."""
    escape_x: int | None = None
    """J11: X_e, points the escaper pays each other seat; None: the room's X of an 8-fan win with
    no bird and no dealer (popular 8, eight_fan 16, no_fan 10)."""
    bankroll: int | tuple[int, int, int, int] | None = None
    """B4: beans each seat holds at the start of an episode (one int, or four); None: unlimited."""
    min_beans: int = 0
    """B4: 场次下限; in a match, a seat below it after a hand ends the match. Needs ``bankroll``."""

    def __post_init__(self) -> None:
        _check_options(self, _JOY_OPTIONAL)
        _check_limits(self, JOY_LIMITS)
        _check_choice(self, "room", ("popular", "eight_fan", "no_fan"))
        _check_choice(self, "discard_payers", ("discarder", "all_mcr"))
        if self.room_coefficient < 1:
            raise ValueError(f"rule field 'room_coefficient' must be >= 1, got {self.room_coefficient!r}")
        if self.rake < 0:
            raise ValueError(f"rule field 'rake' must be >= 0, got {self.rake!r}")
        if self.escape_x is not None and self.escape_x < 1:
            raise ValueError(f"rule field 'escape_x' must be >= 1 or None, got {self.escape_x!r}")
        _check_escape(self, {"escape_x": None})
        _check_balances(self)


JOY_MAHJONG_PRESETS: dict[str, dict[str, Any]] = {
    # seeds 000/001, 欢乐麻将; the room is chosen with the ``room`` field
    "standard": {},
}


_BLOOD_OPTIONAL = {"escape_min_penalty": "an int >= 0 or None", "escape_min_compensation": "an int >= 0 or None",
                   "bankroll": "an int >= 0, four ints >= 0 (one per seat) or None"}
_JOY_OPTIONAL = {"escape_x": "an int >= 1 or None",
                 "bankroll": "an int >= 0, four ints >= 0 (one per seat) or None"}
"""Fields whose default is None (off), and what they accept."""


_BEANS = 10**15
"""The most beans a seat may hold (``bankroll``, ``min_beans``): four of them stay far below 2**63."""
BLOOD_LIMITS: dict[str, int] = {
    "base_points": 1_000, "direct_kong_units": 1_000, "added_kong_units": 1_000, "concealed_kong_units": 1_000,
    "cap_fan": 30, "flower_pig_units": 1_000_000, "room_coefficient": 1_000_000, "rake": 10**12,
    "escape_factor": 1_000, "escape_min_penalty": 10**12, "escape_min_compensation": 10**12,
    "bankroll": _BEANS, "min_beans": _BEANS}
JOY_LIMITS: dict[str, int] = {"room_coefficient": 1_000_000, "rake": 10**12, "escape_x": 1_000_000,
                              "bankroll": _BEANS, "min_beans": _BEANS}
"""The largest value of every integer rule field (docs/rules-blood-battle.md §2, rules-joy-mahjong.md
§13): each far above any table's, and small enough that every product the settlement forms stays
in int64 (the compiled engine's); :data:`EPISODE_BEAN_LIMIT` then bounds their combination."""
EPISODE_BEAN_LIMIT = 2**62
"""The most beans any seat may win or lose in an episode, worst case: half of int64's range, so no
bean, payment or balance of the compiled engine can overflow (:func:`check_episode_beans`)."""


def _check_limits(obj: Any, limits: Mapping[str, int]) -> None:
    """Every integer field at most its limit (bankroll: each of its values), naming the field."""
    for name, limit in limits.items():
        value = getattr(obj, name)
        values = value if isinstance(value, tuple) else (value,)
        if value is not None and max(values) > limit:
            raise ValueError(f"rule field {name!r} must be at most {limit:,} (so that no bean, payment or "
                             f"balance can overflow int64), got {value!r}")


def check_episode_beans(hand_bound: int, match_hands: int, fields: str) -> None:
    """Refuse rules whose worst hand, ``hand_bound`` beans per seat (the env's ``hand_bean_bound``),
    could over ``match_hands`` hands pass :data:`EPISODE_BEAN_LIMIT`; ``fields`` names the rule
    fields that bound grows with."""
    if hand_bound * match_hands > EPISODE_BEAN_LIMIT:
        raise ValueError(f"rule fields {fields} let one hand move up to {hand_bound:,} beans per seat; over "
                         f"match_hands={match_hands} that could pass 2**62 beans and overflow int64: lower them")


# ------------------------------------------------------------------ items (S17)

ITEMS = ("qiankun", "toutian", "yihua", "qianliyan", "shunfeng")
"""S17.3-S17.7, in action order: 乾坤大挪移, 偷天换日, 移花接木, 千里眼, 顺风耳 (金手指 is cosmetic, S17.9)."""
MAX_ITEM_COUNT = 99
"""The most of one item a seat may hold (a bound for the inventory planes)."""
QIANKUN_TILES = (1, 13)
"""S17.3: ``qiankun_tiles`` between these (a dealt hand has 13 tiles)."""
QIANLIYAN_PARTS = (1, 55)
"""S17.6: ``qianliyan_parts`` between these (the live wall holds at most 55 tiles after the deal)."""


def _item_counts(value: Any, where: str) -> tuple[int, ...]:
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
        if not (isinstance(n, int) and not isinstance(n, bool)) or not 0 <= n <= MAX_ITEM_COUNT:
            raise ValueError(f"rule field 'items'{where}: the count of {name} must be an int 0-{MAX_ITEM_COUNT}, got {n!r}")
    return counts


def item_inventory(value: Any) -> tuple[tuple[int, ...], ...] | None:
    """S17.1: the per-seat counts ``((5 counts) x 4 seats)`` of the rule field ``items``: None (off),
    an int (that many of each item), a mapping item -> count, or four such mappings (one per seat)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        if len(value) != 4 or not all(isinstance(v, (Mapping, int)) for v in value):
            raise ValueError(f"rule field 'items' must be an int, a mapping item -> count or four mappings "
                             f"(one per seat), got {value!r}")
        return tuple(_item_counts(v, f"[{seat}]") for seat, v in enumerate(value))
    if isinstance(value, Mapping) or (isinstance(value, int) and not isinstance(value, bool)):
        return (_item_counts(value, ""),) * 4
    raise ValueError(f"rule field 'items' must be None, an int, a mapping item -> count or four mappings, "
                     f"got {type(value).__name__} {value!r}")


def check_int_range(name: str, value: Any, bounds: tuple[int, int]) -> None:
    """A ValueError naming the rule field unless ``value`` is an int within ``bounds``."""
    if not (isinstance(value, int) and not isinstance(value, bool)) or not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"rule field {name!r} must be an int {bounds[0]}-{bounds[1]}, got {value!r}")



def _is_int(value: Any) -> bool:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def _check_options(obj: Any, optional: Mapping[str, str]) -> None:
    """Type and range checks: the fields of ``optional`` by hand (None, an int, bankroll's four
    ints, a list of four read as a tuple), every other field against its default's type."""
    for name, what in optional.items():
        value = getattr(obj, name)
        if name == "items":  # checked by mjenv.rules.items.inventory
            continue
        if isinstance(value, list) and name == "bankroll":
            value = tuple(value)
            object.__setattr__(obj, name, value)  # YAML and JSON give lists; the rules keep a tuple
        values = value if name == "bankroll" and isinstance(value, tuple) else (value,)
        if value is None:
            continue
        if not all(_is_int(v) for v in values):
            raise TypeError(f"rule field {name!r} must be {what}, got {type(value).__name__} {value!r}")
        if len(values) != (4 if isinstance(value, tuple) else 1) or min(values) < 0:
            raise ValueError(f"rule field {name!r} must be {what}, got {value!r}")
    _check_types(obj, skip=optional)


def _check_escape(obj: Any, escape_fields: Mapping[str, Any]) -> None:
    """The escape fields only act with ``escape=True``: set without it, they are a mistake."""
    if obj.escape:
        return
    for name, default in escape_fields.items():
        if getattr(obj, name) != default:
            raise ValueError(f"rule field {name!r} applies only with escape=True (S16/J11); "
                             f"set escape=True or leave {name} out")


def _check_balances(obj: Any) -> None:
    """B4: ``min_beans`` >= 0 needs ``bankroll``, and no seat starts below it."""
    if obj.min_beans < 0:
        raise ValueError(f"rule field 'min_beans' must be >= 0, got {obj.min_beans!r}")
    if obj.bankroll is None:
        if obj.min_beans:
            raise ValueError("rule field 'min_beans' needs bankroll (B4): without balances "
                             "no seat can fall below it")
        return
    low = min(obj.bankroll) if isinstance(obj.bankroll, tuple) else obj.bankroll
    if low < obj.min_beans:
        raise ValueError(f"rule field 'bankroll' {obj.bankroll!r} starts a seat below min_beans "
                         f"{obj.min_beans} (场次下限): that seat could not sit down")


def _check_types(obj: Any, skip: Mapping[str, str] = {}) -> None:
    """Reject values whose type does not match the field's default (bool is not int)."""
    for f in fields(obj):
        if f.name in skip:
            continue
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


OPTION_GROUPS: dict[str, tuple[str, ...]] = {
    "escape": ("escape", "escape_rule", "escape_factor", "escape_min_penalty", "escape_min_compensation",
               "escape_x"),
    "bankroll": ("bankroll", "min_beans"),
    "items": ("items", "qiankun_tiles", "qianliyan_parts"),
}
"""Rule fields that only act when their group's switch (the key: ``escape`` true, ``bankroll``
set) is on; :func:`as_dict` leaves a group out while it is off."""


def as_dict(rules: Any) -> dict[str, Any]:
    """Plain dict of a rules object (for logs and saved configs). The option groups that are off
    (:data:`OPTION_GROUPS`: no escape, no bankroll) are left out, so logs and configs written
    before those options existed read the same, and a dict without them builds the same rules."""
    out = dataclasses.asdict(rules)
    for switch, group in OPTION_GROUPS.items():
        if switch in out and out[switch] in (False, None):
            for name in group:
                out.pop(name, None)
    if isinstance(out.get("bankroll"), tuple):
        out["bankroll"] = list(out["bankroll"])
    if out.get("items") is not None:  # four mappings, which build the same rules
        out["items"] = [dict(zip(ITEMS, counts)) for counts in out["items"]]
    return out
