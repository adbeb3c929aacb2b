"""Replay logs: JSON lines that re-simulate a blood-battle or Joy Mahjong hand exactly.

A log holds one or more hands (the env appends one per finished hand when ``log_path`` is
set; the hands of one log may even mix games). Each hand is a ``header`` line naming its game,
then the engine's events in order with the seats' decisions (``action`` lines) placed before
the events they caused, ending at ``end_hand``. A blood-battle hand::

    {"type": "header", "game": "blood_battle", "preset": "qq", "options": {<every rule field>},
     "seed": 7, "hand_index": 0, "env_version": "blood_battle_v0", "mjenv_version": "0.1.0"}
    {"type": "start_hand", "dealer": 2, "wall": [<108 kinds, head first>]}
    {"type": "tsumo", "actor": 2, "pai": "5m"}                 # draw; "replacement": true after a kong
    {"type": "action", "actor": 2, "action": 60, "name": "void p"}
    {"type": "dingque", "actor": 2, "suit": "p"}               # 定缺; "dingque_reveal" once all chose
    {"type": "dahai", "actor": 2, "pai": "3p"}                 # discard
    {"type": "pon" | "daiminkan", "actor": 0, "target": 2, "pai": "3p"}
    {"type": "ankan" | "kakan_declare" | "kakan", "actor": 0, "pai": "3p"}
    {"type": "hora", "actor": 1, "target": 3, "pai": "6s", "fans": [["清一色", 3]], "X": 24}
    {"type": "pay", "from": 3, "to": 1, "points": 24, "beans": 24, "reason": "win"}
    {"type": "ryukyoku"}                                       # wall empty (流局)
    {"type": "end_hand", "reason": "draw", "beans": [12, -24, 0, 12]}

A Joy Mahjong hand (``"game": "joy_mahjong"``, ``"env_version": "joy_mahjong_v0"``, preset
``standard``, the room among the ``options``) uses the same lines (tiles of all 34 kinds) plus::

    {"type": "start_hand", "dealer": 1, "prevailing_wind": 0, "wall": [<144 kinds; 34-41 flowers>]}
    {"type": "hua", "actor": 1, "pai": "3f"}                   # 补花: a flower set aside (J1)
    {"type": "indicator_flower", "pai": "5f"}                  # a flower flipped as indicator
    {"type": "indicator", "pai": "9m", "wild": "1m"}           # the 财神 indicator and wildcard (J2)
    {"type": "chi", "actor": 2, "target": 1, "pai": "4p", "consumed": ["3p", "5p"]}
    {"type": "hora", ..., "fans": [["无财神", 2], ["花牌", 1]], "fan": 3, "X": 6}
    {"type": "bird", "pai": "E", "seat": 1}                    # the bird and the seat it hits (J8)

With the rule option ``escape`` (S16, J11) the header's options hold the escape fields and
the escape is an action (``"name": "escape"``) followed by its event, then what the escaper pays;
``penalty`` is the happy 扣豆 that goes to no one (S16.1), absent where the rule has none; in a
``pay`` of reason ``escape`` the ``points`` are C_j (happy), 16倍 or the 查大叫 value (qq) or X_e
(Joy). A seat that escaped while choosing its void shows none (``null``) at ``dingque_reveal``::

    {"type": "escape", "actor": 2, "penalty": 414}
    {"type": "pay", "from": 2, "to": 0, "points": 24, "beans": 24, "reason": "escape"}
    {"type": "end_hand", "reason": "escape", "beans": [...]}      # when the escape ends the hand

With the rule option ``items`` (S17) the header's options hold the item fields; a seat's use of an
item is its ``action`` lines (``item toutian``, then ``give 5m``, ``name 3p``), followed by the use
and its private result: the tile given, the tile taken and the wall index they swapped (偷天换日,
移花接木), the kind named with its part of the live wall (-1: none there) and that wall's length
(千里眼), the next draw's tile (顺风耳). The 乾坤大挪移 deal, once every holder has decided, is a
``qiankun_deal`` line with its users and the wall then dealt (``start_hand`` keeps the wall of the
seed). Re-simulation checks every result, so an edited one is a mismatch::

    {"type": "qiankun_deal", "users": [0, 2], "wall": [<108 kinds, head first>]}
    {"type": "item", "actor": 1, "item": "toutian", "give": "1m", "take": "5p", "index": 95}
    {"type": "item", "actor": 1, "item": "yihua", "give": "9m", "take": "1m", "index": 95}
    {"type": "item", "actor": 3, "item": "qianliyan", "kind": "4s", "part": 0, "wall": 37}
    {"type": "item", "actor": 2, "item": "shunfeng", "seen": "8p"}

With ``bankroll`` (B4) ``start_hand`` and ``end_hand`` carry the seats' ``balances``, and a payment
cut short by a balance says what was ``owed`` (``penalty_owed`` for 扣豆); the first hand's
balances must be the bankroll, and a hand that follows its predecessor in the log must start from
the balances that one ended with::

    {"type": "start_hand", "dealer": 2, "wall": [...], "balances": [1000, 1000, 40, 1000]}
    {"type": "pay", "from": 2, "to": 1, "points": 24, "beans": 40, "reason": "win", "owed": 72}
    {"type": "end_hand", "reason": "win", "beans": [...], "balances": [1000, 1072, 0, 928]}

Passes are ``action`` lines too. An ``action`` line may carry the decision's analysis (the
arena's ``--log``, the env's ``log_decision``): ``"legal"``, the legal actions, and ``"probs"``,
the policy's probability of each (only from agents that expose them)::

    {"type": "action", "actor": 2, "action": 9, "name": "discard 1p", "legal": [0, 9, 20], "probs": [0.1, 0.85, 0.05]}

A header may name the agent of each seat (``"agents": ["ppo", "random", "random", "random"]``).
The wall, dealer (and prevailing wind) of ``start_hand`` are
authoritative; ``options`` rebuild the rules without the preset. A hand dealt from its seed has the
wall of (``seed``, ``hand_index``), and verifying checks that (an edited seed is a mismatch); a hand
whose first deal was scripted (``reset(options={"wall": …})``) says so with the optional header
field ``"scripted": ["dealer", "wall"]`` (the keys given), and its wall need not match the seed. The
header's ``mjenv_version`` must be a version number no newer than the mjenv that verifies it.

:func:`read_log` parses and checks the format (:class:`LogFormatError`, naming the line; JSON nested
too deeply for Python's parser is one too; :func:`iter_log` reads one hand at a time);
:func:`verify_log` re-plays every hand through the engine and compares each line
(:class:`ReplayMismatch`, naming the first line that differs).

Rule IDs in the comments: docs/rules-blood-battle.md (S, B) and docs/rules-joy-mahjong.md (J).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from . import __version__, tiles
from .actions import BLOOD_BATTLE as LAYOUT
from .actions import JOY_MAHJONG, ActionLayout
from .config import OPTION_GROUPS, BloodBattleRules, JoyMahjongRules, as_dict, field_names
from .engine import blood_battle as blood_battle_engine
from .engine import joy_mahjong as joy_mahjong_engine
from .engine.blood_battle import BloodBattleGame
from .engine.core import GameCore, IllegalActionError
from .engine.joy_mahjong import JoyMahjongGame
from .rules.beans import starting_balances

GAME = "blood_battle"
ENV_VERSION = "blood_battle_v0"

PathLike = str | os.PathLike


# ---------------------------------------------------------------- errors


class ReplayError(ValueError):
    """A log that cannot be verified; ``line`` is the 1-based line number it names."""

    def __init__(self, path: PathLike, line: int, detail: str) -> None:
        self.path, self.line, self.detail = str(path), line, detail
        super().__init__(f"{self.path}:{line}: {detail}")


class LogFormatError(ReplayError):
    """Malformed or truncated log: bad JSON, missing header, unknown type, wrong field type."""


class NotALogError(LogFormatError):
    """The file does not start as a replay log does (with a header line): some other file."""


class ReplayMismatch(ReplayError):
    """The re-simulation disagrees with the log at ``line``."""


# ---------------------------------------------------------------- format


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_seat(v: Any) -> bool:
    return _is_int(v) and 0 <= v < 4


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_pai(v: Any) -> bool:
    return isinstance(v, str) and v in _PAI


def _is_suit(v: Any) -> bool:
    return isinstance(v, str) and len(v) == 1 and v in tiles.SUITS


def _is_int_list(v: Any) -> bool:
    return isinstance(v, list) and all(_is_int(x) for x in v)


def _is_beans(v: Any) -> bool:
    return _is_int_list(v) and len(v) == 4


def _is_voids(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 4 and all(x is None or _is_suit(x) for x in v)


def _is_fans(v: Any) -> bool:
    return isinstance(v, list) and all(
        isinstance(f, list) and len(f) == 2 and _is_str(f[0]) and _is_int(f[1]) for f in v)


def _is_dict(v: Any) -> bool:
    return isinstance(v, dict)


def _is_seed(v: Any) -> bool:
    return v is None or _is_int(v)


def _is_probs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(p, (int, float)) and not isinstance(p, bool)
                                       and 0 <= p <= 1 for p in v)


def _is_agents(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 4 and all(_is_str(x) for x in v)


def _is_str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_seats(v: Any) -> bool:
    return isinstance(v, list) and all(_is_seat(x) for x in v)


ITEM_FIELDS: dict[str, tuple[str, ...]] = {
    "toutian": ("give", "take", "index"), "yihua": ("give", "take", "index"),
    "qianliyan": ("kind", "part", "wall"), "shunfeng": ("seen",)}
"""S17: an ``item`` line's item -> its result fields (乾坤大挪移 shows as its ``qiankun_deal``)."""


def _is_item(v: Any) -> bool:
    return isinstance(v, str) and v in ITEM_FIELDS


_PAI = frozenset(tiles.name(k) for k in range(tiles.N_SUIT_KINDS))
_JOY_PAI = frozenset(tiles.name(k) for k in range(tiles.N_KINDS))
_FLOWER = frozenset(tiles.name(k) for k in range(tiles.N_KINDS, tiles.N_KINDS + tiles.N_FLOWERS))


def _is_joy_pai(v: Any) -> bool:
    return isinstance(v, str) and v in _JOY_PAI


def _is_flower(v: Any) -> bool:
    return isinstance(v, str) and v in _FLOWER


def _is_joy_pais(v: Any) -> bool:
    return isinstance(v, list) and all(_is_joy_pai(x) for x in v)


Field = tuple[Callable[[Any], bool], str]
Schema = dict[str, tuple[dict[str, Field], dict[str, Field]]]


def _schema(tile: Field) -> Schema:
    """The line types both games share; ``tile``: the check of a tile field."""
    actor, pai, target = {"actor": (_is_seat, "a seat 0-3")}, {"pai": tile}, {"target": (_is_seat, "a seat 0-3")}
    balances = {"balances": (_is_beans, "four ints")}
    return {
        "header": ({
            "game": (_is_str, "a string"), "preset": (_is_str, "a string"),
            "options": (_is_dict, "an object of rule fields"), "seed": (_is_seed, "an int or null"),
            "hand_index": (_is_int, "an int"), "env_version": (_is_str, "a string"),
            "mjenv_version": (_is_str, "a string"),
        }, {"scripted": (_is_str_list, "a list of reset option names"),
            "agents": (_is_agents, "four agent names, one per seat")}),
        "start_hand": ({"dealer": (_is_seat, "a seat 0-3"), "wall": (_is_int_list, "a list of ints")}, balances),
        "tsumo": ({**actor, **pai}, {"replacement": (_is_bool, "a bool")}),
        "dahai": ({**actor, **pai}, {}),
        "pon": ({**actor, **target, **pai}, {}),
        "daiminkan": ({**actor, **target, **pai}, {}),
        "ankan": ({**actor, **pai}, {}),
        "kakan_declare": ({**actor, **pai}, {}),
        "kakan": ({**actor, **pai}, {}),
        "hora": ({**actor, **target, **pai,
                  "fans": (_is_fans, "a list of [name, fan] pairs"), "X": (_is_int, "an int")}, {}),
        "pay": ({"from": (_is_seat, "a seat 0-3"), "to": (_is_seat, "a seat 0-3"),
                 "points": (_is_int, "an int"), "beans": (_is_int, "an int"),
                 "reason": (_is_str, "a string")}, {"owed": (_is_int, "an int")}),
        "escape": (actor, {"penalty": (_is_int, "an int"), "penalty_owed": (_is_int, "an int")}),
        "ryukyoku": ({}, {}),
        "end_hand": ({"reason": (_is_str, "a string"), "beans": (_is_beans, "four ints")}, balances),
        "action": ({**actor, "action": (_is_int, "an int"), "name": (_is_str, "a string")},
                   {"legal": (_is_int_list, "a list of action numbers"),
                    "probs": (_is_probs, "a list of probabilities, one per legal action")}),
    }


# type -> (required fields, optional fields); each field: (check, what it should be).
_SUITED: Field = (_is_pai, "a suited tile such as '5m'")
SCHEMA: Schema = {
    **_schema(_SUITED),
    "dingque": ({"actor": (_is_seat, "a seat 0-3"), "suit": (_is_suit, "one of 'm', 'p', 's'")}, {}),
    "dingque_reveal": ({"voids": (_is_voids, "four suits")}, {}),
    # S17, rule option items: the 乾坤大挪移 deal, then an item's use and its private result
    "qiankun_deal": ({"users": (_is_seats, "a list of seats"), "wall": (_is_int_list, "a list of ints")}, {}),
    "item": ({"actor": (_is_seat, "a seat 0-3"), "item": (_is_item, f"one of {', '.join(ITEM_FIELDS)}")},
             {"seen": _SUITED, "kind": _SUITED, "part": (_is_int, "an int"), "wall": (_is_int, "an int"),
              "give": _SUITED, "take": _SUITED, "index": (_is_int, "an int")}),
}
"""The blood battle's line types."""

_JOY_TILE: Field = (_is_joy_pai, "a tile such as '5m' or 'E'")
JOY_SCHEMA: Schema = _schema(_JOY_TILE)
JOY_SCHEMA.update({
    "start_hand": ({"dealer": (_is_seat, "a seat 0-3"), "prevailing_wind": (_is_seat, "a wind 0-3 (E S W N)"),
                    "wall": (_is_int_list, "a list of ints")}, JOY_SCHEMA["start_hand"][1]),
    "hua": ({"actor": (_is_seat, "a seat 0-3"), "pai": (_is_flower, "a flower '1f'-'8f'")}, {}),
    "indicator_flower": ({"pai": (_is_flower, "a flower '1f'-'8f'")}, {}),
    "indicator": ({"pai": _JOY_TILE, "wild": _JOY_TILE}, {}),
    "chi": ({"actor": (_is_seat, "a seat 0-3"), "target": (_is_seat, "a seat 0-3"), "pai": _JOY_TILE,
             "consumed": (_is_joy_pais, "a list of tiles")}, {}),
    "hora": ({**JOY_SCHEMA["hora"][0], "fan": (_is_int, "an int")}, {}),
    "bird": ({"pai": _JOY_TILE, "seat": (_is_seat, "a seat 0-3")}, {}),
})
"""Joy Mahjong's line types."""


@dataclass(frozen=True)
class GameSpec:
    """What replaying one game needs: its env version, rules, layout, line types and engine."""

    env_version: str
    rules: type
    layout: ActionLayout
    schema: Schema
    start: Callable[[Any, dict[str, Any]], GameCore]
    """(rules, start_hand line) -> the engine at the start of the hand (its balances, if any)."""
    seeded_wall: Callable[[int, int], tuple[Any, ...]]
    """(seed, hand index) -> the wall the env deals, first in a tuple (the engine's ``seeded_wall``)."""


GAMES: dict[str, GameSpec] = {
    "blood_battle": GameSpec(ENV_VERSION, BloodBattleRules, LAYOUT, SCHEMA,
                             lambda rules, r: BloodBattleGame(rules, r["wall"], r["dealer"],
                                                              balances=r.get("balances")),
                             blood_battle_engine.seeded_wall),
    "joy_mahjong": GameSpec("joy_mahjong_v0", JoyMahjongRules, JOY_MAHJONG, JOY_SCHEMA,
                            lambda rules, r: JoyMahjongGame(rules, r["wall"], r["dealer"], r["prevailing_wind"],
                                                            balances=r.get("balances")),
                            joy_mahjong_engine.seeded_wall),
}
"""Game name (the header's ``game``) -> how to replay it."""


@dataclass
class LogLine:
    """One parsed line: its 1-based number and the JSON object."""

    line: int
    record: dict[str, Any]


@dataclass
class LoggedHand:
    """One hand of a log: the header line, then every line up to and including ``end_hand``."""

    header: LogLine
    lines: list[LogLine]

    @property
    def end_line(self) -> int:
        return self.lines[-1].line


def _check_record(path: PathLike, n: int, record: Any, schema: Schema = SCHEMA) -> dict[str, Any]:
    """Check one line against a game's ``schema``; return it as a dict."""
    if not isinstance(record, dict):
        raise LogFormatError(path, n, f"expected a JSON object, got {type(record).__name__}")
    kind = record.get("type")
    if not isinstance(kind, str):
        raise LogFormatError(path, n, "missing string field 'type'")
    if kind not in schema:
        raise LogFormatError(path, n, f"unknown line type {kind!r}; known: {', '.join(schema)}")
    required, optional = schema[kind]
    for name, (check, what) in required.items():
        if name not in record:
            raise LogFormatError(path, n, f"{kind}: missing field {name!r}")
        if not check(record[name]):
            raise LogFormatError(path, n, f"{kind}: field {name!r} must be {what}, got {record[name]!r}")
    if len(record) > len(required) + 1:  # optional or unexpected fields present
        for name, (check, what) in optional.items():
            if name in record and not check(record[name]):
                raise LogFormatError(path, n, f"{kind}: field {name!r} must be {what}, got {record[name]!r}")
        extra = sorted(set(record) - set(required) - set(optional) - {"type"})
        if extra:
            raise LogFormatError(path, n, f"{kind}: unexpected field(s) {extra}")
        if "probs" in record and len(record["probs"]) != len(record.get("legal", ())):
            raise LogFormatError(path, n, f"{kind}: 'probs' needs 'legal' of the same length (one probability "
                                          f"per legal action), got {len(record['probs'])} probs and "
                                          f"{len(record.get('legal', ()))} legal actions")
    if kind == "item" and set(record) - set(required) - {"type"} != set(ITEM_FIELDS[record["item"]]):
        raise LogFormatError(path, n, f"item: a {record['item']} line has the fields "
                                      f"{list(ITEM_FIELDS[record['item']])} besides actor and item")
    return record


def _check_header(path: PathLike, n: int, h: dict[str, Any]) -> GameSpec:
    """The header names a game and env this module replays, with every rule field; returns the game."""
    spec = GAMES.get(h["game"])
    if spec is None:
        raise LogFormatError(path, n, f"header: game {h['game']!r} is not one of {sorted(GAMES)}")
    if h["env_version"] != spec.env_version:
        raise LogFormatError(path, n, f"header: env_version {h['env_version']!r} is not {spec.env_version!r} "
                                      f"(game {h['game']!r})")
    fields = set(field_names(spec.rules))
    optional = {name for group in OPTION_GROUPS.values() for name in group}  # left out while off
    missing, extra = sorted(fields - optional - set(h["options"])), sorted(set(h["options"]) - fields)
    if missing or extra:
        raise LogFormatError(path, n, f"header: options must hold every rule field exactly (the escape "
                                      f"and bankroll fields only when on); missing {missing}, unknown {extra}")
    release = _release(h["mjenv_version"])
    if release is None:
        raise LogFormatError(path, n, f"header: mjenv_version {h['mjenv_version']!r} is not a version number "
                                      f"such as {__version__!r}")
    if release > _release(__version__):
        raise LogFormatError(path, n, f"header: written by mjenv {h['mjenv_version']}, newer than this mjenv "
                                      f"{__version__}; upgrade mjenv to verify it")
    if h["hand_index"] < 0:
        raise LogFormatError(path, n, f"header: hand_index must be >= 0, got {h['hand_index']}")
    return spec


def _release(version: str) -> tuple[int, ...] | None:
    """The release numbers of a version string (``0.1.0rc1`` -> (0, 1, 0)); None if it is not one."""
    match = re.fullmatch(r"(\d+(?:\.\d+)*)(?:[.+-]?[A-Za-z0-9.+-]*)", version)
    return None if match is None else tuple(int(x) for x in match.group(1).split("."))


def read_log(path: PathLike) -> list[LoggedHand]:
    """Parse a log into hands, checking the format; raises :class:`LogFormatError`."""
    return list(iter_log(path))


_NOT_A_LOG = ("not a replay log: expected a header line, got {} (a log of env option log_path, mjenv eval "
              "--log or mjenv demo --log starts each hand with one)")


def iter_log(path: PathLike) -> Iterator[LoggedHand]:
    """The hands of a log one at a time, each checked as :func:`read_log` does when it is read (a
    problem further on is raised when the reading gets there): for logs too large to hold."""
    hands = 0
    current: LoggedHand | None = None
    schema = SCHEMA  # the line types of the game of the last header (blood battle before any)
    last = 0
    with open(path, "rb") as fh:
        for n, data in enumerate(fh, start=1):
            last = n
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise LogFormatError(path, n, f"not UTF-8: {exc.reason} at byte {exc.start}") from exc
            if not text.strip():
                continue  # blank lines (e.g. between concatenated logs) carry nothing
            first = current is None and not hands
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                if first:  # e.g. an eval results file (indented JSON) given for its log
                    raise NotALogError(path, n, _NOT_A_LOG.format(f"a line that is not JSON ({exc.msg})")) from exc
                raise LogFormatError(path, n, f"bad JSON: {exc.msg} (column {exc.colno})") from exc
            except RecursionError as exc:  # e.g. 100,000 nested brackets: no log line nests that deep
                raise LogFormatError(path, n, "bad JSON: nested too deeply to parse") from exc
            if first and not (isinstance(raw, dict) and raw.get("type") == "header"):
                raise NotALogError(path, n, _NOT_A_LOG.format(
                    repr(raw["type"]) if isinstance(raw, dict) and "type" in raw else "a line without a type"))
            record = _check_record(path, n, raw, schema)
            kind = record["type"]
            if kind == "header":
                if current is not None:
                    raise LogFormatError(path, n, f"header before the hand that starts at line "
                                                  f"{current.header.line} reached end_hand (truncated hand)")
                schema = _check_header(path, n, record).schema
                current = LoggedHand(LogLine(n, record), [])
                continue
            if current is None:
                raise LogFormatError(path, n, f"expected a header line, got {kind!r}")
            if not current.lines and kind != "start_hand":
                raise LogFormatError(path, n, f"expected start_hand after the header, got {kind!r}")
            current.lines.append(LogLine(n, record))
            if kind == "end_hand":
                hands += 1
                yield current
                current = None
    if current is not None:
        raise LogFormatError(path, last, f"the hand that starts at line {current.header.line} "
                                         f"stops at line {last} before end_hand (truncated)")
    if not hands:
        raise LogFormatError(path, max(last, 1), "no hand in the log: expected a header line")


# ---------------------------------------------------------------- writing


def hand_header(preset: str, rules: Any, seed: int | None, hand_index: int,
                game: str = GAME, scripted: Iterable[str] = ()) -> dict[str, Any]:
    """The header line of one hand of ``game``; ``scripted``: the reset options that dealt it, if any."""
    header = {"type": "header", "game": game, "preset": preset, "options": as_dict(rules),
              "seed": seed, "hand_index": hand_index, "env_version": GAMES[game].env_version,
              "mjenv_version": __version__}
    if scripted:
        header["scripted"] = sorted(scripted)
    return header


def decision_note(legal: list[int], probs: Any, n_actions: int) -> dict[str, Any]:
    """A logged decision's analysis: its ``legal`` actions and, given the policy's probability of
    every action (``(n_actions,)``), ``probs`` of the legal ones (4 decimals)."""
    note: dict[str, Any] = {"legal": legal}
    if probs is not None:
        probs = np.asarray(probs, dtype=np.float64)
        if probs.shape != (n_actions,):
            raise ValueError(f"probs must have shape ({n_actions},), one per action, got {probs.shape}")
        note["probs"] = [round(float(probs[a]), 4) for a in legal]
    return note


def hand_records(header: dict[str, Any], events: Sequence[dict[str, Any]],
                 actions: Iterable[tuple[int, int, int, dict[str, Any]]],
                 layout: ActionLayout = LAYOUT) -> list[dict[str, Any]]:
    """Header, then events with each ``(seat, action, n_events_before, analysis)`` placed where it
    was taken; ``analysis`` (``legal``, ``probs``; may be empty) is added to the action line."""
    out = [header]
    done = 0
    for seat, action, before, analysis in actions:
        out.extend(events[done:before])
        done = before
        out.append({"type": "action", "actor": seat, "action": action, "name": layout.name(action), **analysis})
    out.extend(events[done:])
    return out


def append_hand(path: PathLike, records: Iterable[dict[str, Any]]) -> None:
    """Append one hand's lines to a log (UTF-8, Chinese fan names kept readable)."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


# ---------------------------------------------------------------- verifying


@dataclass
class HandSummary:
    """What one verified hand did."""

    header_line: int
    end_line: int
    game: str
    preset: str
    seed: int | None
    hand_index: int
    dealer: int
    actions: int
    events: int
    end_reason: str
    beans: list[int]
    balances: list[int] | None = None
    """The balances at the end of the hand (rule option ``bankroll``, B4)."""


@dataclass
class ReplayResult:
    """Every hand of a log re-simulated and matched line by line."""

    path: str
    hands: list[HandSummary] = field(default_factory=list)

    @property
    def beans(self) -> list[int]:
        """Bean totals per seat over all hands."""
        return [sum(h.beans[s] for h in self.hands) for s in range(4)]

    def summary(self) -> str:
        """A short human-readable report."""
        reasons: dict[str, int] = {}
        for h in self.hands:
            reasons[h.end_reason] = reasons.get(h.end_reason, 0) + 1
        # "draw" is the exhaustive draw (the wall ran out), never drawing a tile.
        words = {"win": "ended by wins", "draw": "ended in an exhaustive draw (流局)",
                 "escape": "ended by an escape (逃跑)"}
        ends = ", ".join(f"{n} {words.get(r, r)}" for r, n in sorted(reasons.items()))
        return (f"{self.path}: OK, {len(self.hands)} hand(s) verified "
                f"({sum(h.actions for h in self.hands)} actions, {sum(h.events for h in self.hands)} events; "
                f"{ends}); beans {self.beans}")


StepHook = Callable[[LogLine, GameCore], None]


def _diff(logged: dict[str, Any], engine: dict[str, Any]) -> str:
    """The fields in which a logged event differs from the re-simulated one."""
    if logged.get("type") != engine.get("type"):
        return f"the log has {logged.get('type')!r}, the re-simulation has {json.dumps(engine, ensure_ascii=False)}"
    parts = []
    for key in sorted(set(logged) | set(engine)):
        if logged.get(key, "<absent>") != engine.get(key, "<absent>"):
            parts.append(f"{key}: log {logged.get(key, '<absent>')!r}, re-simulation {engine.get(key, '<absent>')!r}")
    return f"{logged['type']} differs: " + "; ".join(parts)


def replay_hand(path: PathLike, hand: LoggedHand, on_line: StepHook | None = None) -> HandSummary:
    """Re-simulate one hand and match every line; ``on_line`` sees each matched line and the game."""
    h = hand.header.record
    spec = GAMES[h["game"]]
    try:
        rules = spec.rules(**h["options"])
    except (TypeError, ValueError) as exc:  # a rule value of the wrong type or out of range
        raise LogFormatError(path, hand.header.line, f"header: bad options: {exc}") from exc
    start = hand.lines[0]
    try:
        game = spec.start(rules, start.record)
    except ValueError as exc:
        raise LogFormatError(path, start.line, f"start_hand: {exc}") from exc
    layout = game.layout  # with ESCAPE when the rules have it
    seen, n_actions = 0, 0  # engine events matched so far
    for ll in hand.lines:
        rec = ll.record
        if rec["type"] == "action":
            if seen < len(game.events):
                ev = json.dumps(game.events[seen], ensure_ascii=False)
                raise ReplayMismatch(path, ll.line, f"the re-simulation has {ev} before this action; the log lacks it")
            if rec["actor"] != game.current_player:
                raise ReplayMismatch(path, ll.line, f"action by seat {rec['actor']}, but seat "
                                                    f"{game.current_player} is to act in the re-simulation")
            a = rec["action"]
            if "legal" in rec and rec["legal"] != game.legal_actions():
                raise ReplayMismatch(path, ll.line, f"legal actions {rec['legal']} logged; the re-simulation has "
                                                    f"{game.legal_actions()}")
            if not 0 <= a < layout.n or rec["name"] != layout.name(a):
                expected = layout.name(a) if 0 <= a < layout.n else "outside the action space"
                raise ReplayMismatch(path, ll.line, f"action {a} is named {rec['name']!r}; it is {expected!r}")
            try:
                game.apply(a)
            except IllegalActionError as exc:
                raise ReplayMismatch(path, ll.line, f"illegal in the re-simulation: {exc}") from exc
            n_actions += 1
        else:
            if seen >= len(game.events):
                who = f"seat {game.current_player}" if not game.over else "nobody (the hand is over)"
                raise ReplayMismatch(path, ll.line, f"the log has {rec['type']!r} but the re-simulation "
                                                    f"waits for an action by {who}")
            if rec != game.events[seen]:
                raise ReplayMismatch(path, ll.line, _diff(rec, game.events[seen]))
            seen += 1
        if on_line is not None:
            on_line(ll, game)
    _check_seed(path, hand, spec)
    # end_hand is the engine's last event, so a matched end_hand means the game is over.
    end = hand.lines[-1].record
    return HandSummary(hand.header.line, hand.end_line, h["game"], h["preset"], h["seed"], h["hand_index"],
                       start.record["dealer"], n_actions, seen, end["reason"], list(end["beans"]),
                       game.balances)


def _check_seed(path: PathLike, hand: LoggedHand, spec: GameSpec) -> None:
    """A hand dealt from its seed has the wall of (seed, hand index): else the header was edited."""
    h, start = hand.header.record, hand.lines[0]
    if h["seed"] is None or "wall" in h.get("scripted", ()):
        return
    if start.record["wall"] != list(spec.seeded_wall(h["seed"], h["hand_index"])[0]):
        raise ReplayMismatch(path, hand.header.line,
                             f"header: seed {h['seed']}, hand {h['hand_index']} deals another wall than the "
                             f"start_hand of line {start.line}: the seed or the wall was edited (a scripted wall "
                             "is marked \"scripted\": [\"wall\"])")


def _check_balances(path: PathLike, hand: LoggedHand, before: HandSummary | None) -> None:
    """B4: the first hand of an episode starts from the bankroll, and a hand that follows the hand
    before it in the log (same game and seed, the next index) from that hand's closing balances."""
    h, start = hand.header.record, hand.lines[0]
    if "balances" not in start.record:
        return
    if h["hand_index"] == 0:
        want, where = starting_balances(h["options"]["bankroll"]), "the header's bankroll"
    elif (before is not None and before.game == h["game"] and before.seed == h["seed"]
          and before.hand_index == h["hand_index"] - 1):
        want, where = before.balances, f"the balances hand {before.hand_index} ended with (line {before.end_line})"
    else:
        return
    if start.record["balances"] != want:
        raise ReplayMismatch(path, start.line, f"start_hand: balances {start.record['balances']} are not "
                                               f"{where}, {want}")


def replay_hands(path: PathLike, hands: Iterable[LoggedHand], on_line: StepHook | None = None) -> ReplayResult:
    """Re-simulate hands already read by :func:`read_log`; raises :class:`ReplayError`."""
    result = ReplayResult(str(path))
    for hand in hands:
        _check_balances(path, hand, result.hands[-1] if result.hands else None)
        result.hands.append(replay_hand(path, hand, on_line))
    return result


def verify_log(path: PathLike, on_line: StepHook | None = None) -> ReplayResult:
    """Read and re-simulate every hand of a log; raises :class:`ReplayError` on the first problem
    (and ``OSError`` when the file cannot be read)."""
    return replay_hands(path, read_log(path), on_line)
