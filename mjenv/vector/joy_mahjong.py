"""The Joy Mahjong backend of :mod:`mjenv.vector` (the :class:`~mjenv.vector.backend.Backend`
protocol): the AEC env's options and validation, the seeded walls and match order, and chunk
loops over the compiled engine (:mod:`.engine.joy_mahjong`) and encoder
(:mod:`.encoding.joy_mahjong`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..engine.joy_mahjong import JOY_TILES
from ..joy_mahjong_v0 import raw_env
from .encoding import joy_mahjong as enc
from .engine import joy_mahjong as eng

_TILES = np.array(JOY_TILES, dtype=np.int8)
_SORTED_TILES = np.sort(_TILES)
_AEC_ONLY = ("render_mode", "tile_style", "log_path")


def seeded_wall(seed: int, hand_index: int) -> tuple[np.ndarray, int, int]:
    """:func:`mjenv.engine.joy_mahjong.seeded_wall` as an int8 array (the same generator calls):
    the wall, the dealer's dice and the seeded prevailing wind."""
    rng = np.random.default_rng([seed, hand_index])
    wall = _TILES[rng.permutation(len(_TILES))]
    return wall, int(rng.integers(4)), int(rng.integers(4))


def _scripted(script: dict[str, Any]) -> tuple[np.ndarray | None, int | None, int | None]:
    """The checked ``wall``, ``dealer`` and ``prevailing_wind`` of ``reset(options=...)``, or None
    where not given (other keys are ignored, as the AEC env does)."""
    wall = dealer = wind = None
    if "wall" in script:
        wall = np.asarray(script["wall"])
        if wall.shape != (eng.N_TILES,) or not np.array_equal(np.sort(wall), _SORTED_TILES):
            raise ValueError("a Joy Mahjong wall holds each of the 34 kinds 4 times and the 8 "
                             "flowers once (144 kinds 0-41, head first)")
        wall = wall.astype(np.int8)
    if "dealer" in script:
        dealer = script["dealer"]
        if isinstance(dealer, bool) or not (isinstance(dealer, (int, np.integer)) and 0 <= dealer < 4):
            raise ValueError(f"dealer must be a seat 0-3, got {dealer!r}")
    if "prevailing_wind" in script:
        wind = script["prevailing_wind"]
        if isinstance(wind, bool) or not (isinstance(wind, (int, np.integer)) and 0 <= wind < 4):
            raise ValueError(f"prevailing_wind must be 0-3 (E S W N), got {wind!r}")
    return wall, dealer, wind


@njit(cache=True, nogil=True)
def _step_chunk(st: eng.State, rules: np.ndarray, actions: np.ndarray, tables: np.ndarray,
                delta: np.ndarray, ended: np.ndarray) -> None:
    """Play one action per listed table; ``ended[j]``: the hand of ``tables[j]`` ended."""
    for j in range(len(tables)):
        t = tables[j]
        st.delta[t, :] = 0
        ended[j] = eng.apply(st, rules, t, actions[t])
        delta[t, :] = st.delta[t]


@njit(cache=True, nogil=True)
def _deal_chunk(st: eng.State, rules: np.ndarray, tables: np.ndarray, walls: np.ndarray,
                dealers: np.ndarray, prevailing: np.ndarray) -> None:
    """Deal ``walls[j]`` on ``tables[j]`` and compute its first decision's mask."""
    for j in range(len(tables)):
        t = tables[j]
        eng.deal(st, t, walls[j], dealers[j], prevailing[j])
        eng.compute_mask(st, rules, t)


@njit(cache=True, nogil=True)
def _observe_chunk(st: eng.State, tables: np.ndarray, out: np.ndarray, bean_scale: float,
                   rule_flags: np.ndarray) -> None:
    for j in range(len(tables)):
        t = tables[j]
        enc.observe(st, t, st.current[t], bean_scale, rule_flags, out[t])


@njit(cache=True, nogil=True)
def _state_all(st: eng.State, out: np.ndarray, bean_scale: float) -> None:
    for t in range(out.shape[0]):
        enc.state(st, t, bean_scale, out[t])


class JoyMahjongBackend:
    """Joy Mahjong on ``num_envs`` tables; ``options`` are ``joy_mahjong_v0.raw_env``'s."""

    game = "joy_mahjong"

    def __init__(self, num_envs: int, **options: Any) -> None:
        aec_only = sorted(set(options) & set(_AEC_ONLY))
        if aec_only:
            raise ValueError(f"option(s) {aec_only} belong to the AEC env only (rendering, logs); "
                             f"replay a table through joy_mahjong_v0.raw_env to use them")
        ref = raw_env(**options)  # the same validation and errors as the AEC env
        self.rules, self.match_hands, self.num_envs = ref.rules, ref.match_hands, num_envs
        self.layout = ref.layout
        self.n_actions = ref.layout.n
        self.obs_shape = (enc.OBS_PLANES, eng.W)
        self.state_shape = (enc.STATE_PLANES, eng.W)
        self.bean_scale = float(ref.observer.bean_scale)
        self.rule_flags = np.array(ref.observer.rule_flags, dtype=np.float64)
        self._rules = eng.rules_array(self.rules)
        self.st, self.arrays = eng.new_state(num_envs)
        self._prevailing0 = np.zeros(num_envs, dtype=np.int64)  # the match's first prevailing wind
        self.seat = self.arrays.current  # the engine's own buffers
        self.mask = self.arrays.mask

    def start_hands(self, tables: np.ndarray, hand_seeds: np.ndarray, hand_indices: np.ndarray,
                    script: dict[str, Any] | None = None) -> None:
        """Deal hand ``hand_indices[j]`` of ``hand_seeds[j]`` on ``tables[j]`` (protocol): the
        first hand's dealer by dice and its prevailing wind seeded (single hand) or East (match);
        then the deal passes to the next seat and the wind advances every four hands (J10).
        ``script`` (``wall``, ``dealer``, ``prevailing_wind``) overrides the first hand."""
        wall0, dealer0, wind0 = _scripted(script or {})  # checked before any table changes
        n = len(tables)
        walls = np.empty((n, eng.N_TILES), dtype=np.int8)
        dealers = np.empty(n, dtype=np.int64)
        prevailing = np.empty(n, dtype=np.int64)
        single = self.match_hands == 1
        for j, (t, seed, hand) in enumerate(zip(tables.tolist(), hand_seeds.tolist(), hand_indices.tolist())):
            walls[j], dice, wind = seeded_wall(seed, hand)
            if hand == 0:
                if wall0 is not None:
                    walls[j] = wall0
                dealers[j] = dice if dealer0 is None else dealer0
                self._prevailing0[t] = wind0 if wind0 is not None else (wind if single else 0)
                prevailing[j] = self._prevailing0[t]
            else:
                dealers[j] = (self.arrays.dealer[t] + 1) % 4
                prevailing[j] = (self._prevailing0[t] + hand // 4) % 4
        _deal_chunk(self.st, self._rules, np.ascontiguousarray(tables, dtype=np.int64), walls,
                    dealers, prevailing)

    def step(self, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Play ``actions[tables]``; bean changes into ``delta``; the hands that ended (protocol)."""
        ended = np.zeros(len(tables), dtype=np.bool_)
        _step_chunk(self.st, self._rules, actions, tables, delta, ended)
        return ended

    def observe(self, tables: np.ndarray, out: np.ndarray) -> None:
        """The seat to act's observation into ``out[tables]`` (protocol; masks are kept by step)."""
        _observe_chunk(self.st, tables, out, self.bean_scale, self.rule_flags)

    def state(self, out: np.ndarray) -> None:
        _state_all(self.st, out, self.bean_scale)

    def hand_result(self, tables: np.ndarray) -> dict[str, np.ndarray]:
        """The finished hands (protocol), plus the win: ``winner``, ``win_tile``, ``win_from``
        (-1: self-drawn), ``fan``, ``X``, the bird's tile and seat (-1: none)."""
        st = self.arrays
        return {"end_reason": st.end_reason[tables].copy(), "won": st.won[tables] != 0,
                "winner": st.win_seat[tables].astype(np.int64),
                "win_tile": st.win_tile[tables].astype(np.int64),
                "win_from": st.win_from[tables].astype(np.int64),
                "fan": st.win_fan[tables].astype(np.int64), "X": st.win_x[tables].astype(np.int64),
                "bird": st.bird[tables].astype(np.int64), "bird_seat": st.bird_seat[tables].astype(np.int64)}
