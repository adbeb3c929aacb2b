"""The blood-battle backend of :mod:`mjenv.vector` (the :class:`~mjenv.vector.backend.Backend`
protocol): the AEC env's options and validation, the seeded walls, and chunk loops over the
compiled engine (:mod:`.engine.blood_battle`) and encoder (:mod:`.encoding.blood_battle`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..blood_battle_v0 import raw_env
from ..engine.blood_battle import SUIT_TILES
from .engine import blood_battle as eng
from .encoding import blood_battle as enc
from .rules.shapes import suit_table
from .rules.sichuan import rule_vector

_TILES = np.array(SUIT_TILES, dtype=np.int8)
_AEC_ONLY = ("render_mode", "tile_style", "log_path")


def seeded_walls(seed: int, hand_index: int) -> tuple[np.ndarray, int]:
    """:func:`mjenv.engine.blood_battle.seeded_wall` as an int8 array (the same generator calls)."""
    rng = np.random.default_rng([seed, hand_index])
    wall = _TILES[rng.permutation(len(_TILES))]
    return wall, int(rng.integers(4))


def _scripted(script: dict[str, Any]) -> tuple[np.ndarray | None, int | None]:
    """The first hand's wall and dealer of ``reset(options={"wall": ..., "dealer": ...})``, checked."""
    wall = script.get("wall")
    if wall is not None:
        wall = np.asarray(wall)
        if wall.shape != (len(_TILES),) or not np.array_equal(np.sort(wall), _TILES):
            raise ValueError("a blood-battle wall holds each of the 27 suited kinds exactly 4 times")
        wall = wall.astype(np.int8)
    dealer = script.get("dealer")
    if dealer is not None and not (isinstance(dealer, (int, np.integer)) and 0 <= dealer < 4):
        raise ValueError(f"dealer must be a seat 0-3, got {dealer!r}")
    return wall, dealer


@njit(cache=True, nogil=True)
def _step_chunk(st: eng.State, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray,
                ended: np.ndarray, rules: np.ndarray, table: np.ndarray) -> None:
    """Play one action per listed table; ``ended[j]``: the hand of ``tables[j]`` ended."""
    for j in range(len(tables)):
        t = tables[j]
        ended[j] = eng.apply(st, t, actions[t], rules, table)
        delta[t, :] = st.delta[t]


@njit(cache=True, nogil=True)
def _observe_chunk(st: eng.State, tables: np.ndarray, out: np.ndarray, bean_scale: float,
                   rule_flags: np.ndarray) -> None:
    for j in range(len(tables)):
        t = tables[j]
        enc.observe(st, t, out[t], bean_scale, rule_flags)


@njit(cache=True, nogil=True)
def _state_all(st: eng.State, out: np.ndarray, bean_scale: float) -> None:
    for t in range(out.shape[0]):
        enc.state(st, t, out[t], bean_scale)


@njit(cache=True, nogil=True)
def _deal_chunk(st: eng.State, tables: np.ndarray, dealers: np.ndarray, rules: np.ndarray,
                table: np.ndarray) -> None:
    for j in range(len(tables)):
        eng.deal(st, tables[j], dealers[j], rules, table)


class BloodBattleBackend:
    """Blood battle on ``num_envs`` tables; ``options`` are ``blood_battle_v0.raw_env``'s."""

    game = "blood_battle"

    def __init__(self, num_envs: int, **options: Any) -> None:
        aec_only = sorted(set(options) & set(_AEC_ONLY))
        if aec_only:
            raise ValueError(f"option(s) {aec_only} belong to the AEC env only (rendering, logs); "
                             f"replay a table through blood_battle_v0.raw_env to use them")
        ref = raw_env(**options)  # the same validation and errors as the AEC env
        self.rules, self.match_hands, self.num_envs = ref.rules, ref.match_hands, num_envs
        self.n_actions = ref.layout.n
        self.layout = ref.layout
        self.obs_shape, self.state_shape = enc.OBS_SHAPE, enc.STATE_SHAPE
        self.bean_scale = float(ref.observer.bean_scale)
        self.rule_flags = np.array(ref.observer.rule_flags, dtype=np.float64)
        self._rules = rule_vector(self.rules)
        self._table = suit_table()
        self.st, self.arrays = eng.new_state(num_envs)
        self.seat = self.arrays.current  # the engine's own buffers
        self.mask = self.arrays.mask

    def start_hands(self, tables: np.ndarray, hand_seeds: np.ndarray, hand_indices: np.ndarray,
                    script: dict[str, Any] | None = None) -> None:
        """Deal hand ``hand_indices[j]`` of ``hand_seeds[j]`` on ``tables[j]`` (protocol)."""
        dealers = np.empty(len(tables), dtype=np.int64)
        classic = self.rules.mode == "classic"
        script_wall, script_dealer = _scripted(script or {})
        for j, (t, seed, hand) in enumerate(zip(tables.tolist(), hand_seeds.tolist(), hand_indices.tolist())):
            wall, dice = seeded_walls(seed, hand)
            dealer = self.arrays.next_dealer[t] if classic and hand > 0 else dice
            if hand == 0:
                wall = wall if script_wall is None else script_wall
                dealer = dealer if script_dealer is None else script_dealer
            self.arrays.wall[t] = wall
            dealers[j] = dealer
        _deal_chunk(self.st, np.ascontiguousarray(tables, dtype=np.int64), dealers, self._rules, self._table)

    def step(self, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Play ``actions[tables]``; bean changes into ``delta``; the hands that ended (protocol)."""
        ended = np.zeros(len(tables), dtype=np.bool_)
        _step_chunk(self.st, actions, tables, delta, ended, self._rules, self._table)
        return ended

    def observe(self, tables: np.ndarray, out: np.ndarray) -> None:
        """The seat to act's observation into ``out[tables]`` (protocol; masks are kept by step)."""
        _observe_chunk(self.st, tables, out, self.bean_scale, self.rule_flags)

    def state(self, out: np.ndarray) -> None:
        _state_all(self.st, out, self.bean_scale)

    def hand_result(self, tables: np.ndarray) -> dict[str, np.ndarray]:
        """The finished hands (protocol), plus each seat's win, int64 ``(len, 4)``: ``win_from``
        (the discarder or robbed kong-maker, -1 self-drawn), ``fan`` (total fan before the cap),
        ``win_order`` (1 for the hand's first win, 2, 3; 0 for a seat that did not win)."""
        a = self.arrays
        return {"end_reason": a.end_reason[tables].copy(), "won": a.won[tables] != 0,
                "win_from": a.win_from[tables].astype(np.int64), "fan": a.win_fan[tables].astype(np.int64),
                "win_order": a.win_order[tables].astype(np.int64)}
