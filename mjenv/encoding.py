"""Versioned observation encoders: one flat float32 tensor of shape ``(planes, kinds)``.

Each plane is 27 wide for the blood battle and 34 wide for Joy Mahjong (one column per tile
kind). Seat-relative views
put the observing seat first, then 下家 (+1), 对家 (+2), 上家 (+3). Scalars (wall count,
beans, flags) fill a whole plane with one value so a convolution sees them everywhere.
``Observer.views`` names the plane ranges, like OpenSpiel's observer.

A seat's observation holds only what that seat may know (no leak of hidden tiles): its own
hand, every seat's discards and exposed melds, the number (not kinds) of others' 暗杠, void
suits once all four are chosen, who has won and on what, the wall count and the beans.
``state()`` adds every hand, the chosen voids and the wall order, for oracle critics.

Rivers hold the discards nobody claimed, in order; a claimed tile moves into the claimer's meld.

Optional planes (:data:`OPTIONAL_PLANES`) come after the default ones, only when their rule
option is on, so the default shapes never change: ``escaped`` (blood battle with ``escape``,
S16) and ``balance`` (either game with ``bankroll``, B4), in the observation per relative
seat and in ``state()`` per absolute seat.

Version history: v0 (mjenv 0.1.0) first release; JoyMahjongObserver v0 added (the wildcard
and its indicator, flowers, winds, 吃 melds; no 定缺); the optional ``escaped`` and ``balance``
planes; the optional item planes (:data:`ITEM_PLANES`, blood battle with ``items``, S17).

Rule IDs cited here are anchors of docs/rules-blood-battle.md (B, S) and docs/rules-joy-mahjong.md (J).
"""

from __future__ import annotations

import operator
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from .engine.blood_battle import N_SEATS, BloodBattleGame
from .engine.core import GameCore

if TYPE_CHECKING:  # the blood battle need not import the Joy rules
    from .engine.joy_mahjong import JoyMahjongGame

ENCODER_VERSION = 0
OBSERVATION_DTYPES = ("float32", "uint8")
"""``observation_dtype`` options: the planes as float32, or as uint8 small integers (:meth:`_PlaneRanges.to_uint8`)."""
BEANS_UINT8 = (16, 128)
"""(scale, offset) of the real-valued planes (beans) in a uint8 observation: ``round(16·value) + 128``,
clipped to [0, 255], so a step of 1/16 of the bean scale over [-8, 7.94]."""
RECENT = 4  # last discards shown per seat, most recent first
_THRESH = np.arange(4)[:, None]
_PHASES = ("void", "turn", "claim", "rob")
_NO_VOIDS = (-1,) * 4
_NO_PHASE = [0.0] * 4  # the phase planes of a phase outside _PHASES (over, the item steps)
_THERMOMETER = (np.arange(5)[None, :] > _THRESH).astype(np.float32)  # [i, count] = count > i
_QUARTERS = (np.arange(5) / 4).astype(np.float32)  # river count -> count / 4


def _layout(spec: list[tuple[str, int]] | list[tuple[str, int, str]]) -> dict[str, slice]:
    """Consecutive plane ranges from (name, size) or (name, size, meaning) entries."""
    views, i = {}, 0
    for name, n, *_ in spec:
        views[name] = slice(i, i + n)
        i += n
    return views


def _meanings(spec: list[tuple[str, int, str]]) -> dict[str, str]:
    """View name -> what its planes hold (docs/observations.md is generated from these)."""
    return {name: meaning for name, _, meaning in spec}


def check_observation_dtype(dtype: str) -> str:
    """``dtype`` if it is one of :data:`OBSERVATION_DTYPES`, else a ValueError naming them."""
    if not isinstance(dtype, str) or dtype not in OBSERVATION_DTYPES:
        raise ValueError(f"observation_dtype must be one of {OBSERVATION_DTYPES}, got {dtype!r}")
    return dtype


OPTIONAL_PLANES = {
    "escaped": "per relative seat: has escaped (逃跑, S16); with the rule option escape",
    "balance": "per relative seat: beans held (B4) / bean_scale; with the rule option bankroll",
}
"""Optional views (4 planes each, after the default ones) and what they hold."""

ITEM_PLANES = [
    ("item_inventory", 5, "own items left: 乾坤大挪移, 偷天换日, 移花接木, 千里眼, 顺风耳 (count each, S17.1); with items"),
    ("item_uses", 20, "per relative seat, per item: uses this hand (public, S17.10); with items"),
    ("item_turn", 5, "per item: used by the observer in its turn now (at most once a turn, S17.2); with items"),
    ("item_step", 5, "the item decision asked: 乾坤大挪移 use or keep, 偷天换日 give, 移花接木 give, "
                     "偷天换日 name, 千里眼 name (S17.2-S17.6); with items"),
    ("item_given", 1, "the kind the observer gives to 偷天换日 (its name step), one-hot; with items"),
    ("shunfeng", 1, "the kind the next draw takes, heard with 顺风耳 while the knowledge holds (S17.7); with items"),
    ("qianliyan_part", 1, "per kind asked with 千里眼: (part + 1) / qianliyan_parts of its nearest copy (S17.6); with items"),
    ("qianliyan_none", 1, "per kind asked with 千里眼: none was in the live wall; with items"),
    ("qianliyan_wall", 1, "per kind asked with 千里眼: tiles in the live wall when asked / 108; with items"),
]
"""The blood battle's optional item views (rule option ``items``, S17), after the other optional
ones: (name, planes, meaning). ``state()`` holds ``item_inventory`` and ``item_uses`` per absolute
seat (20 planes each), ``item_step`` and ``item_given``; every seat's knowledge is in its wall order."""
ITEM_STATE_PLANES = [("item_inventory", 20), ("item_uses", 20), ("item_step", 5), ("item_given", 1)]
_ITEM_STEPS = {("qiankun", -1): 0, ("give", 1): 1, ("give", 2): 2, ("name", 1): 3, ("name", 3): 4}


class _PlaneRanges:
    """The value ranges of an observer's planes: [0, 1] but the views in ``wide_ranges`` and the
    beans (``±bean_bound``); the env's Box bounds and docs/observations.md come from here.

    The uint8 form of an observation stores every plane as a small integer: ``value · scale``
    (``uint8_scales``; 1 for the 0/1 planes), exact, so ``uint8 / scale`` is the float32 value;
    the beans, which no byte holds exactly, are quantised by :data:`BEANS_UINT8`, and the optional
    balances spread over the byte's range (254 steps up to their bound)."""

    plane_spec: list[tuple[str, int, str]]
    views: dict[str, slice]
    meanings: dict[str, str]
    planes: int
    state_views: dict[str, slice]
    state_planes: int
    width: int
    wide_ranges: dict[str, tuple[float, float]]
    uint8_scales: dict[str, int]
    bean_bound: float
    bean_scale: float
    optional: tuple[str, ...] = ()
    """The optional views this observer appends (:data:`OPTIONAL_PLANES`), in order."""

    def _add_optional(self, optional: tuple[str, ...], balance_bound: float) -> None:
        """Append the views ``optional`` after the default planes of the observation and of the
        state, for this observer only; ``balance_bound``: the largest balance / bean_scale."""
        self.optional = optional
        if not optional:
            return
        self.plane_spec = type(self).plane_spec + [(name, 4, OPTIONAL_PLANES[name]) for name in optional]
        self.views, self.meanings = _layout(self.plane_spec), _meanings(self.plane_spec)
        self.planes = max(sl.stop for sl in self.views.values())
        start = type(self).state_planes
        self.state_views = {**type(self).state_views, **{name: slice(start + 4 * i, start + 4 * i + 4)
                                                         for i, name in enumerate(optional)}}
        self.state_planes = start + 4 * len(optional)
        if "balance" in optional:
            self.wide_ranges = {**type(self).wide_ranges, "balance": (0.0, balance_bound)}

    def _add_items(self, max_count: int, parts: int) -> None:
        """Append the item views (:data:`ITEM_PLANES`, S17) after the other optional ones."""
        self.item_planes = True
        self.item_parts = parts
        self.plane_spec = self.plane_spec + ITEM_PLANES
        self.views, self.meanings = _layout(self.plane_spec), _meanings(self.plane_spec)
        self.planes = max(sl.stop for sl in self.views.values())
        start = self.state_planes
        for name, n in ITEM_STATE_PLANES:
            self.state_views = {**self.state_views, name: slice(start, start + n)}
            start += n
        self.state_planes = start
        counts = (0.0, float(max(max_count, 1)))
        self.wide_ranges = {**self.wide_ranges, "item_inventory": counts, "item_uses": counts}
        self.uint8_scales = {**self.uint8_scales, "qianliyan_part": parts, "qianliyan_wall": 108}

    item_planes = False
    """Whether the item views (rule option ``items``, S17) follow the other optional ones."""

    def _item_obs(self, g: BloodBattleGame, seat: int, order: list[int]) -> np.ndarray:
        """The item planes of ``seat``'s observation: what it holds, the public uses, its knowledge."""
        w = self.width
        out = np.zeros((sum(n for _, n, _ in ITEM_PLANES), w), dtype=np.float32)
        out[0:5] = np.array(g.inventory[seat], dtype=np.float32)[:, None]
        out[5:25] = np.array([g.item_uses[s] for s in order], dtype=np.float32).reshape(20, 1)
        if g.current_player == seat:
            if g.phase == "turn":
                out[25:30] = np.array(g.turn_used, dtype=np.float32)[:, None]
            self._item_step_planes(g, out[30:36])
        heard = g.shunfeng_tile(seat)
        if heard >= 0:
            out[36, heard] = 1
        for kind, (part, wall) in g.qianliyan[seat].items():
            if part >= 0:
                out[37, kind] = (part + 1) / self.item_parts
            else:
                out[38, kind] = 1
            out[39, kind] = wall / 108
        return out

    @staticmethod
    def _item_step_planes(g: BloodBattleGame, out: np.ndarray) -> None:
        """``item_step`` (5 planes) and ``item_given`` (1) of the decision open now."""
        pending = g.item_pending[0] if g.item_pending is not None else -1
        step = _ITEM_STEPS.get((g.phase, pending))
        if step is not None:
            out[step] = 1
        if g.phase == "name" and g.item_pending[1] >= 0:
            out[5, g.item_pending[1]] = 1

    def _item_state(self, g: BloodBattleGame) -> np.ndarray:
        """The item planes of ``state()``: every seat's inventory and uses, the decision open now."""
        out = np.zeros((46, self.width), dtype=np.float32)
        out[0:20] = np.array(g.inventory, dtype=np.float32).reshape(20, 1)
        out[20:40] = np.array(g.item_uses, dtype=np.float32).reshape(20, 1)
        self._item_step_planes(g, out[40:46])
        return out

    def _optional_planes(self, g: GameCore, seats: list[int]) -> np.ndarray:
        """The optional planes, ``seats`` in the order to show them (relative or absolute)."""
        rows = []
        for name in self.optional:
            if name == "escaped":
                rows += [float(g.escaped[s]) for s in seats]
            else:
                rows += [g.balances[s] / self.bean_scale for s in seats]
        return np.broadcast_to(np.array(rows, dtype=np.float32)[:, None], (len(rows), self.width))

    def _with_optional(self, out: np.ndarray, g: GameCore, seats: list[int]) -> np.ndarray:
        """``out`` with the optional planes appended (``out`` itself when there are none)."""
        if not self.optional:
            return out
        return np.concatenate([out, self._optional_planes(g, seats)])

    def ranges(self) -> dict[str, tuple[float, float]]:
        """Value range of each view that is not [0, 1]."""
        return {**self.wide_ranges, "beans": (-self.bean_bound, self.bean_bound)}

    def bounds(self, state: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of the observation planes, or of the ``state()`` planes: the Box bounds."""
        views = self.state_views if state else self.views
        planes = max(sl.stop for sl in views.values())
        low = np.zeros((planes, self.width), dtype=np.float32)
        high = np.ones((planes, self.width), dtype=np.float32)
        for name, (lo, hi) in self.ranges().items():
            if name in views:
                low[views[name]], high[views[name]] = lo, hi
        return low, high

    @cached_property
    def uint8_codec(self) -> tuple[np.ndarray, np.ndarray]:
        """float32 ``(scale, offset)`` per observation plane: ``uint8 = rint(value·scale + offset)``."""
        planes = max(sl.stop for sl in self.views.values())
        scale = np.ones(planes, dtype=np.float32)
        offset = np.zeros(planes, dtype=np.float32)
        for name, factor in self.uint8_scales.items():
            scale[self.views[name]] = factor
        scale[self.views["beans"]], offset[self.views["beans"]] = BEANS_UINT8
        if "balance" in self.views:  # balances in [0, bound]: the byte's whole range, quantised
            scale[self.views["balance"]] = 254 / max(self.wide_ranges["balance"][1], 1 / 254)
        return scale, offset

    def uint8_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of the uint8 observation planes."""
        scale, offset = self.uint8_codec
        low, high = (np.clip(np.rint(b * scale[:, None] + offset[:, None]), 0, 255).astype(np.uint8)
                     for b in self.bounds())
        return low, high

    def to_uint8(self, observation: np.ndarray) -> np.ndarray:
        """The uint8 form of float32 observations ``(..., planes, width)``."""
        scale, offset = self.uint8_codec
        q = np.rint(observation * scale[:, None] + offset[:, None])
        return np.clip(q, 0, 255).astype(np.uint8)

    def from_uint8(self, observation: np.ndarray) -> np.ndarray:
        """float32 planes back from the uint8 form: exact but for the quantised beans."""
        scale, offset = self.uint8_codec
        return ((observation.astype(np.float32) - offset[:, None]) / scale[:, None]).astype(np.float32)


class BloodBattleObserver(_PlaneRanges):
    """Observation (per seat) and state (perfect information) encoders, version 0."""

    version = ENCODER_VERSION
    width = 27
    plane_spec = [
        ("hand", 4, "own concealed hand, thermometer (>=1 ... >=4)"),
        ("drawn", 1, "tile just drawn by the observer"),
        ("claim", 1, "discard being claimed, or tile being added to a kong (rob window)"),
        ("pong", 4, "per relative seat: 碰 kinds"),
        ("kong", 4, "per relative seat: exposed kongs (直杠, 面下杠)"),
        ("own_ankan", 1, "observer's own 暗杠 kinds"),
        ("river", 4, "per relative seat: discard counts / 4"),
        ("recent", 4 * RECENT, "per relative seat: last 4 discards, most recent first, one-hot each"),
        ("won_tile", 4, "per relative seat: tile won on"),
        ("void", 4, "per relative seat: void-suit kinds (others only once revealed)"),
        ("ankan_count", 4, "per relative seat: number of 暗杠 / 4"),
        ("won", 4, "per relative seat: has won"),
        ("dealer", 4, "per relative seat: is the dealer"),
        ("beans", 4, "per relative seat: beans / bean_scale"),
        ("seat", 4, "absolute seat of the observer, one-hot"),
        ("phase", 4, "void / turn / claim / rob"),
        ("wall", 1, "tiles left in the wall / 108"),
        ("after_kong", 1, "the observer's current draw is a kong replacement (杠上花 chance)"),
        ("rules", 4, "rule flags: add_base self-draw bonus, 杠上炮 transfer, forced win, classic"),
    ]
    """(view name, planes, meaning) in plane order."""
    views = _layout(plane_spec)
    meanings = _meanings(plane_spec)
    planes = max(s.stop for s in views.values())
    wide_ranges: dict[str, tuple[float, float]] = {}
    uint8_scales = {"river": 4, "ankan_count": 4, "wall": 108}
    state_views = _layout([
        ("hands", 16),          # every seat's hand, thermometer, absolute seat order
        ("pong", 4), ("kong", 4), ("ankan", 4),
        ("river", 4), ("recent", 4 * RECENT), ("won_tile", 4),
        ("void", 4),            # chosen voids, revealed or not
        ("won", 4), ("dealer", 4), ("beans", 4),
        ("current", 4),         # seat to act
        ("phase", 4),
        ("claim", 1),
        ("wall_order", 56),     # remaining wall from head to tail, one-hot per row
        ("wall", 1),
    ])
    state_planes = max(s.stop for s in state_views.values())

    def __init__(self, bean_scale: float, rule_flags: tuple[bool, bool, bool, bool] = (False,) * 4,
                 bean_bound: float = 16.0, escape: bool = False, balance_bound: float | None = None,
                 items: int | None = None, qianliyan_parts: int = 4) -> None:
        self.bean_scale = float(bean_scale)
        self.bean_bound = float(bean_bound)
        """No seat's beans in one hand exceed ``bean_bound · bean_scale``: the range of the bean planes."""
        # Optional planes: ``escaped`` with escape; ``balance`` (up to balance_bound) with a bankroll;
        # the item views with items (``items``: the largest count a seat holds, S17).
        self._add_optional(("escaped",) * escape + ("balance",) * (balance_bound is not None), balance_bound or 0.0)
        if items is not None:
            self._add_items(items, qianliyan_parts)
        self.rule_flags = [float(f) for f in rule_flags]
        self._start = {name: sl.start for name, sl in self.views.items()}
        self._order = [[(seat + r) % N_SEATS for r in range(N_SEATS)] for seat in range(N_SEATS)]
        self._order_rows = [np.array(o, dtype=np.intp) for o in self._order]
        self._onehot4 = [[float(i == j) for i in range(N_SEATS)] for j in range(N_SEATS)]
        self._phase_flags = {p: [float(p == q) for q in _PHASES] for p in _PHASES}
        v, w = self._start, self.width
        # Flat offsets (plane * width) of the one-hot cells, looked up once: per relative seat r,
        # its pong and kong planes, its last discards' planes (most recent first), its void cells.
        self._at = {name: v[name] * w for name in ("drawn", "claim", "own_ankan", "won_tile")}
        self._pong_at = [(v["pong"] + r) * w for r in range(N_SEATS)]
        self._kong_at = [(v["kong"] + r) * w for r in range(N_SEATS)]
        self._recent_at = [[(v["recent"] + RECENT * r + i) * w for i in range(RECENT)] for r in range(N_SEATS)]
        self._void_blocks: dict[tuple[int, ...], np.ndarray] = {}  # (seat, shown voids) -> void planes

    def observe(self, g: BloodBattleGame, seat: int) -> np.ndarray:
        """The observation of ``seat``: only what that seat may know.

        One-hot cells are gathered as flat indices and written with one ``put``; the offsets come
        from tables built once: a few numpy calls per observation (this runs at every decision).
        """
        v, w, at = self._start, self.width, self._at
        out = np.zeros((type(self).planes, w), dtype=np.float32)  # the default planes; optional ones follow
        h0, r0 = v["hand"], v["river"]
        # Table look-ups (take) are the cheapest numpy calls for the thermometer and river planes;
        # counts are 0-4, so mode="clip" clips nothing (and spares take's buffered copy).
        _THERMOMETER.take(np.frombuffer(g.hands[seat], np.uint8, w), axis=1, out=out[h0 : h0 + 4], mode="clip")
        _QUARTERS.take(g.river_counts[:, :w].take(self._order_rows[seat], axis=0), out=out[r0 : r0 + 4], mode="clip")
        phase = g.phase
        own_turn = g.current_player == seat and phase == "turn"
        ones: list[int] = []  # flat indices (plane * width + kind) of cells set to 1
        if own_turn and g.drawn is not None:
            ones.append(at["drawn"] + g.drawn)
        if phase == "claim" or phase == "rob":
            ones.append(at["claim"] + g.claim_tile)
        order = self._order[seat]
        n_ankan = [0.0] * N_SEATS
        for r, s in enumerate(order):
            for m in g.melds[s]:
                kind = m.kind
                if kind == "pong":
                    ones.append(self._pong_at[r] + m.tile)
                elif kind == "ankan":
                    n_ankan[r] += 0.25
                    if r == 0:
                        ones.append(at["own_ankan"] + m.tile)
                else:
                    ones.append(self._kong_at[r] + m.tile)
            river = g.rivers[s]
            if river:  # the last RECENT discards, most recent first
                ones += map(operator.add, self._recent_at[r], river[: -RECENT - 1 : -1])
        for win in g.wins:
            ones.append(at["won_tile"] + ((win.seat - seat) % N_SEATS) * w + win.tile)
        out.put(ones, 1)
        # S2: the own void, and the others' once revealed (-1: not chosen, or hidden)
        voids = tuple(g.void) if phase != "void" else tuple(x if t == seat else -1 for t, x in enumerate(g.void))
        if voids != _NO_VOIDS:
            v0 = v["void"]
            out[v0 : v0 + 4] = self._void_planes(seat, voids)
        # Whole-plane scalars, ankan_count to the end, are consecutive: one broadcast write.
        scale, won, beans = self.bean_scale, g.won, g.beans
        scalars = (
            n_ankan
            + won[seat:] + won[:seat]  # bools: 0.0 / 1.0 in the float32 array
            + self._onehot4[(g.dealer - seat) % N_SEATS]
            + [b / scale for b in beans[seat:] + beans[:seat]]
            + self._onehot4[seat]
            + self._phase_flags.get(phase, _NO_PHASE)
            + [g.wall_count / 108, float(own_turn and g.after_kong)]
            + self.rule_flags
        )
        out[v["ankan_count"] :] = np.array(scalars, dtype=np.float32)[:, None]
        out = self._with_optional(out, g, order)
        return np.concatenate([out, self._item_obs(g, seat, order)]) if self.item_planes else out

    def _void_planes(self, seat: int, voids: tuple[int, ...]) -> np.ndarray:
        """The void planes of ``seat`` showing the suits ``voids`` (absolute seats, -1 none): one
        block per (seat, voids), made once (at most 4·4⁴ of them)."""
        block = self._void_blocks.get((seat, voids))
        if block is None:
            block = np.zeros((N_SEATS, self.width), dtype=np.float32)
            for r, s in enumerate(self._order[seat]):
                if voids[s] >= 0:
                    block[r, 9 * voids[s] : 9 * voids[s] + 9] = 1
            self._void_blocks[(seat, voids)] = block
        return block

    def state(self, g: BloodBattleGame) -> np.ndarray:
        """Perfect information: every hand, the chosen voids, the wall order (absolute seats)."""
        v, w = self.state_views, self.width
        out = _shared_state_planes(g, v, type(self).state_planes, w, self.bean_scale, _PHASES)
        for s in range(N_SEATS):
            if g.void[s] >= 0:
                out[v["void"].start + s, 9 * g.void[s] : 9 * g.void[s] + 9] = 1
            out[v["won"].start + s] = g.won[s]
        rest = g.wall[g.head : g.tail][: v["wall_order"].stop - v["wall_order"].start]
        if rest:
            out[v["wall_order"].start + np.arange(len(rest)), rest] = 1
        out[v["wall"].start] = g.wall_count / 108
        out = self._with_optional(out, g, list(range(N_SEATS)))
        return np.concatenate([out, self._item_state(g)]) if self.item_planes else out


def _shared_state_planes(g: GameCore, v: dict[str, slice], planes: int, w: int, bean_scale: float,
                         phases: tuple[str, ...]) -> np.ndarray:
    """The ``state()`` planes both games have: hands, melds, rivers, dealer, beans, wins, turn, claim."""
    out = np.zeros((planes, w), dtype=np.float32)
    for s in range(N_SEATS):
        out[v["hands"].start + 4 * s : v["hands"].start + 4 * s + 4] = (
            np.frombuffer(g.hands[s], np.uint8, w) > _THRESH
        )
        for m in g.melds[s]:
            if m.kind == "chow":  # Joy only; a seat may hold two identical chows
                out[v["chow"].start + s, m.tile] += 1
            else:
                out[v[m.kind if m.kind in ("pong", "ankan") else "kong"].start + s, m.tile] = 1
        river = g.rivers[s]
        if river:
            out[v["river"].start + s] = np.bincount(river, minlength=w)[:w] / 4
            base = v["recent"].start + RECENT * s
            for i, k in enumerate(reversed(river[-RECENT:])):
                out[base + i, k] = 1
        out[v["dealer"].start + s] = s == g.dealer
        out[v["beans"].start + s] = g.beans[s] / bean_scale
    for win in g.wins:
        out[v["won_tile"].start + win.seat, win.tile] = 1
    if g.current_player >= 0:
        out[v["current"].start + g.current_player] = 1
    if g.phase in phases:
        out[v["phase"].start + phases.index(g.phase)] = 1
    if g.phase in ("claim", "rob"):
        out[v["claim"].start, g.claim_tile] = 1
    return out


_JOY_PHASES = ("turn", "claim", "rob")
_ROOMS = ("popular", "eight_fan", "no_fan")
JOY_WALL_ROWS = 90  # the most tiles left after the deal: 144 - 53 dealt - 1 indicator


class JoyMahjongObserver(_PlaneRanges):
    """Joy Mahjong observation (per seat) and state (perfect information) encoders, version 0.

    34 columns, one per kind (flowers are counted per seat, never shown by kind: every flower is
    worth the same, J4 of docs/rules-joy-mahjong.md). Seat-relative order as in the blood battle:
    self, 下家, 对家, 上家.
    """

    version = ENCODER_VERSION
    width = 34
    plane_spec = [
        ("hand", 4, "own concealed hand, thermometer (>=1 ... >=4); wildcards at their face"),
        ("drawn", 1, "tile just drawn by the observer"),
        ("claim", 1, "discard being claimed, or tile being added to a kong (rob window)"),
        ("chow", 4, "per relative seat: number of 吃 melds by lowest kind"),
        ("pong", 4, "per relative seat: 碰 kinds"),
        ("kong", 4, "per relative seat: exposed kongs (直杠, 加杠)"),
        ("own_ankan", 1, "observer's own 暗杠 kinds"),
        ("river", 4, "per relative seat: discard counts / 4"),
        ("recent", 4 * RECENT, "per relative seat: last 4 discards, most recent first, one-hot each"),
        ("wild", 1, "the 财神 kind, one-hot (J2)"),
        ("indicator", 1, "the face-up indicator, one-hot"),
        ("won_tile", 4, "per relative seat: tile won on (the hand is over)"),
        ("flowers", 4, "per relative seat: flowers set aside / 8"),
        ("ankan_count", 4, "per relative seat: number of 暗杠 / 4"),
        ("dealer", 4, "per relative seat: is the dealer"),
        ("beans", 4, "per relative seat: beans / bean_scale"),
        ("seat", 4, "absolute seat of the observer, one-hot"),
        ("seat_wind", 4, "the observer's seat wind E S W N, one-hot"),
        ("prevailing", 4, "the prevailing wind E S W N, one-hot"),
        ("phase", 3, "turn / claim / rob"),
        ("wall", 1, "tiles left in the wall / 144"),
        ("after_kong", 1, "the observer's current draw is a kong replacement (杠上开花 chance)"),
        ("rules", 4, "room popular / eight_fan / no_fan, discard_payers == all_mcr"),
    ]
    """(view name, planes, meaning) in plane order."""
    views = _layout(plane_spec)
    meanings = _meanings(plane_spec)
    planes = max(s.stop for s in views.values())
    wide_ranges = {"chow": (0.0, 4.0)}  # a seat may hold the same chow up to four times
    uint8_scales = {"river": 4, "flowers": 8, "ankan_count": 4, "wall": 144}
    state_views = _layout([
        ("hands", 16),          # every seat's hand, thermometer, absolute seat order
        ("chow", 4), ("pong", 4), ("kong", 4), ("ankan", 4),
        ("river", 4), ("recent", 4 * RECENT), ("won_tile", 4),
        ("flowers", 4),         # per seat: flowers / 8
        ("dealer", 4), ("beans", 4),
        ("current", 4),         # seat to act
        ("phase", 3),
        ("claim", 1), ("wild", 1), ("indicator", 1),
        ("prevailing", 4),
        ("wall_order", JOY_WALL_ROWS),  # remaining wall from head to tail, one-hot per row (0 for a flower)
        ("wall_flowers", 3),    # flowers in the remaining wall: position i at plane i // 34, column i % 34
        ("wall", 1),
    ])
    state_planes = max(s.stop for s in state_views.values())

    def __init__(self, bean_scale: float, room: str = "popular", all_mcr: bool = False,
                 bean_bound: float = 80.0, balance_bound: float | None = None) -> None:
        self.bean_scale = float(bean_scale)
        self.bean_bound = float(bean_bound)
        """No seat's beans in one hand exceed ``bean_bound · bean_scale``: the range of the bean planes."""
        # Optional planes: ``balance`` (up to balance_bound) with a bankroll; an escape ends the hand.
        self._add_optional(("balance",) * (balance_bound is not None), balance_bound or 0.0)
        self.rule_flags = [float(room == r) for r in _ROOMS] + [float(all_mcr)]
        self._start = {name: sl.start for name, sl in self.views.items()}
        self._order = [[(seat + r) % N_SEATS for r in range(N_SEATS)] for seat in range(N_SEATS)]
        self._onehot4 = [[float(i == j) for i in range(N_SEATS)] for j in range(N_SEATS)]
        self._phase_flags = {p: [float(p == q) for q in _JOY_PHASES] for p in (*_JOY_PHASES, "over")}
        self._order_rows = [np.array(o, dtype=np.intp) for o in self._order]
        v, w = self._start, self.width
        # Flat offsets (plane * width) of the one-hot planes, looked up once (per relative seat r
        # for the per-seat ones, the last discards most recent first).
        self._at = {name: v[name] * w for name in ("drawn", "claim", "wild", "indicator", "own_ankan", "won_tile")}
        self._chow_at = [(v["chow"] + r) * w for r in range(N_SEATS)]
        self._pong_at = [(v["pong"] + r) * w for r in range(N_SEATS)]
        self._kong_at = [(v["kong"] + r) * w for r in range(N_SEATS)]
        self._recent_at = [[(v["recent"] + RECENT * r + i) * w for i in range(RECENT)] for r in range(N_SEATS)]

    def observe(self, g: JoyMahjongGame, seat: int) -> np.ndarray:
        """The observation of ``seat``: only what that seat may know (one ``put`` of the ones)."""
        v, w, at = self._start, self.width, self._at
        out = np.zeros((type(self).planes, w), dtype=np.float32)  # the default planes; optional ones follow
        h0, r0 = v["hand"], v["river"]
        # Table look-ups (take) are the cheapest numpy calls for the thermometer and river planes;
        # counts are 0-4, so mode="clip" clips nothing (and spares take's buffered copy).
        _THERMOMETER.take(np.frombuffer(g.hands[seat], np.uint8, w), axis=1, out=out[h0 : h0 + 4], mode="clip")
        _QUARTERS.take(g.river_counts.take(self._order_rows[seat], axis=0), out=out[r0 : r0 + 4], mode="clip")
        phase = g.phase
        own_turn = g.current_player == seat and phase == "turn"
        ones = [at["wild"] + g.wild, at["indicator"] + g.indicator]  # flat indices of cells set to 1
        if own_turn and g.drawn is not None:
            ones.append(at["drawn"] + g.drawn)
        if phase == "claim" or phase == "rob":
            ones.append(at["claim"] + g.claim_tile)
        order = self._order[seat]
        n_ankan = [0.0] * N_SEATS
        flat = out.reshape(-1)
        for r, s in enumerate(order):
            for m in g.melds[s]:
                kind = m.kind
                if kind == "chow":
                    flat[self._chow_at[r] + m.tile] += 1  # the same chow can be made twice
                elif kind == "pong":
                    ones.append(self._pong_at[r] + m.tile)
                elif kind == "ankan":
                    n_ankan[r] += 0.25
                    if r == 0:
                        ones.append(at["own_ankan"] + m.tile)
                else:
                    ones.append(self._kong_at[r] + m.tile)
            river = g.rivers[s]
            if river:  # the last RECENT discards, most recent first
                ones += map(operator.add, self._recent_at[r], river[: -RECENT - 1 : -1])
        for win in g.wins:
            ones.append(at["won_tile"] + ((win.seat - seat) % N_SEATS) * w + win.tile)
        out.put(ones, 1)
        scale, flowers, beans, onehot = self.bean_scale, g.flowers, g.beans, self._onehot4
        scalars = (
            [len(f) / 8 for f in flowers[seat:] + flowers[:seat]]
            + n_ankan
            + onehot[(g.dealer - seat) % N_SEATS]
            + [b / scale for b in beans[seat:] + beans[:seat]]
            + onehot[seat]
            + onehot[g.seat_winds[seat]]
            + onehot[g.prevailing_wind]
            + self._phase_flags[phase]
            + [g.wall_count / 144, float(own_turn and g.after_kong)]
            + self.rule_flags
        )
        out[v["flowers"] :] = np.array(scalars, dtype=np.float32)[:, None]
        return self._with_optional(out, g, order)

    def state(self, g: JoyMahjongGame) -> np.ndarray:
        """Perfect information: every hand, the wall order, flowers included (absolute seats)."""
        v, w = self.state_views, self.width
        out = _shared_state_planes(g, v, type(self).state_planes, w, self.bean_scale, _JOY_PHASES)
        for s in range(N_SEATS):
            out[v["flowers"].start + s] = len(g.flowers[s]) / 8
        out[v["wild"].start, g.wild] = 1
        out[v["indicator"].start, g.indicator] = 1
        out[v["prevailing"].start + g.prevailing_wind] = 1
        rest = np.array(g.wall[g.head : g.tail][:JOY_WALL_ROWS], dtype=np.int64)
        if len(rest):
            rows = np.arange(len(rest))
            kinds = rest < w
            out[v["wall_order"].start + rows[kinds], rest[kinds]] = 1
            at = rows[~kinds]
            out[v["wall_flowers"].start + at // w, at % w] = 1
        out[v["wall"].start] = g.wall_count / 144
        return self._with_optional(out, g, list(range(N_SEATS)))
