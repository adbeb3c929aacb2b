"""The Joy Mahjong backend of :mod:`mjenv.vector` (the :class:`~mjenv.vector.backend.Backend`
protocol): the game spec (:mod:`mjenv.spec`), the seeded walls and match order, and chunk
loops over the compiled engine (:mod:`.engine.joy_mahjong`) and encoder
(:mod:`.encoding.joy_mahjong`). Rule IDs: docs/rules-joy-mahjong.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from ..engine.joy_mahjong import JOY_TILES
from ..spec import GameSpec
from .backend import CompiledBackend
from .encoding import joy_mahjong as enc
from .engine import joy_mahjong as eng
from .seeding import shuffled

_TILES = np.array(JOY_TILES, dtype=np.int8)
_SORTED_TILES = np.sort(_TILES)


def _scripted(script: dict[str, Any]) -> tuple[np.ndarray, int, int]:
    """The checked ``wall``, ``dealer`` and ``prevailing_wind`` of ``reset(options=...)``; an
    empty wall and -1 where not given (other keys are ignored, as the AEC env does)."""
    wall, dealer, wind = np.zeros(0, np.int8), -1, -1
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
    return wall, int(dealer), int(wind)


@njit(cache=True, nogil=True)
def _step_chunk(st: eng.State, rules: np.ndarray, actions: np.ndarray, tables: np.ndarray,
                delta: np.ndarray, ended: np.ndarray, out: np.ndarray, observe: bool, bean_scale: float,
                rule_flags: np.ndarray, optional: int) -> None:
    """Play one action per listed table; ``ended[j]``: the hand of ``tables[j]`` ended; with
    ``observe``, the next observation of every table whose hand goes on into ``out``."""
    for j in range(len(tables)):
        t = tables[j]
        st.delta[t, :] = 0
        ended[j] = eng.apply(st, rules, t, actions[t])
        delta[t, :] = st.delta[t]
        if observe and not ended[j]:
            enc.observe(st, t, st.current[t], bean_scale, rule_flags, optional, out[t])


@njit(cache=True, nogil=True, parallel=True)
def _step_parts(views: tuple, bounds: np.ndarray, rules: np.ndarray, actions: np.ndarray, tables: np.ndarray,
                delta: np.ndarray, ended: np.ndarray, out: np.ndarray, observe: bool, bean_scale: float,
                rule_flags: np.ndarray, optional: int) -> None:
    """:func:`_step_chunk` of part p = ``tables[bounds[p]:bounds[p + 1]]`` through ``views[p]``,
    the parts on numba's thread pool (a win's fan count takes the GIL inside its part only)."""
    for p in prange(len(bounds) - 1):
        lo, hi = bounds[p], bounds[p + 1]
        _step_chunk(views[p], rules, actions, tables[lo:hi], delta, ended[lo:hi], out, observe, bean_scale,
                    rule_flags, optional)


@njit(cache=True, nogil=True)
def _start_chunk(st: eng.State, rules: np.ndarray, tables: np.ndarray, seeds: np.ndarray, hands: np.ndarray,
                 single: bool, prevailing0: np.ndarray, script_wall: np.ndarray, script_dealer: int,
                 script_wind: int) -> None:
    """Deal hand ``hands[j]`` of ``seeds[j]`` on ``tables[j]`` and compute its first mask: the wall
    and rolls of :func:`mjenv.engine.joy_mahjong.seeded_wall`; a match's first hand takes the dice's
    dealer and East (a single hand: the seeded wind), then the deal passes to the next seat and the
    wind advances every four hands (J10). A script (wall, dealer/wind >= 0) overrides hand 0. An
    episode starts from the bankroll's balances, which then carry over its hands (B4)."""
    rolls = np.empty(2, np.int64)
    wall = np.empty(eng.N_TILES, np.int8)
    for j in range(len(tables)):
        t, hand = tables[j], hands[j]
        shuffled(_TILES, seeds[j], hand, wall, rolls)
        if hand == 0:
            st.balances[t, :] = rules[eng.R_BANKROLL : eng.R_BANKROLL + 4]
            if len(script_wall):
                wall[:] = script_wall
            dealer = rolls[0] if script_dealer < 0 else script_dealer
            prevailing0[t] = script_wind if script_wind >= 0 else (rolls[1] if single else 0)
            prevailing = prevailing0[t]
        else:
            dealer = (st.dealer[t] + 1) % 4
            prevailing = (prevailing0[t] + hand // 4) % 4
        eng.deal(st, t, wall, dealer, prevailing)
        eng.compute_mask(st, rules, t)


@njit(cache=True, nogil=True)
def _observe_chunk(st: eng.State, tables: np.ndarray, out: np.ndarray, bean_scale: float,
                   rule_flags: np.ndarray, optional: int) -> None:
    for j in range(len(tables)):
        t = tables[j]
        enc.observe(st, t, st.current[t], bean_scale, rule_flags, optional, out[t])


@njit(cache=True, nogil=True)
def _observe_seats(st: eng.State, tables: np.ndarray, seats: np.ndarray, out: np.ndarray, bean_scale: float,
                   rule_flags: np.ndarray, optional: int) -> None:
    for j in range(len(tables)):
        enc.observe(st, tables[j], seats[j], bean_scale, rule_flags, optional, out[j])


@njit(cache=True, nogil=True)
def _state_tables(st: eng.State, tables: np.ndarray, out: np.ndarray, bean_scale: float, optional: int) -> None:
    for j in range(tables.shape[0]):
        enc.state(st, tables[j], bean_scale, optional, out[j])


class JoyMahjongBackend(CompiledBackend):
    """Joy Mahjong on ``num_envs`` tables; ``options`` are ``joy_mahjong_v0.raw_env``'s game
    options (:func:`mjenv.spec.spec`), or ``spec`` a ready :class:`~mjenv.spec.GameSpec`."""

    game = "joy_mahjong"

    obs_shape, state_shape = (enc.OBS_PLANES, eng.W), (enc.STATE_PLANES, eng.W)  # without the optional planes
    new_state = staticmethod(eng.new_state)

    def __init__(self, num_envs: int, spec: GameSpec | None = None, **options: Any) -> None:
        super().__init__(num_envs, eng.new_state, spec, options)
        self._rules = eng.rules_array(self.rules)
        self._prevailing0 = np.zeros(num_envs, dtype=np.int64)  # the match's first prevailing wind
        self._no_out = np.zeros((1, *self.obs_shape), dtype=np.float32)
        self._step_chunk, self._step_parts = _step_chunk, _step_parts

    def start_hands(self, tables: np.ndarray, hand_seeds: np.ndarray, hand_indices: np.ndarray,
                    script: dict[str, Any] | None = None, part: int = 0) -> None:
        """Deal hand ``hand_indices[j]`` of ``hand_seeds[j]`` on ``tables[j]`` (protocol): the
        first hand's dealer by dice and its prevailing wind seeded (single hand) or East (match);
        then the deal passes to the next seat and the wind advances every four hands (J10).
        ``script`` (``wall``, ``dealer``, ``prevailing_wind``) overrides the first hand."""
        wall, dealer, wind = _scripted(script or {})  # checked before any table changes
        _start_chunk(self.views[part], self._rules, np.ascontiguousarray(tables, dtype=np.int64),
                     np.ascontiguousarray(hand_seeds, dtype=np.int64), np.ascontiguousarray(hand_indices, dtype=np.int64),
                     self.match_hands == 1, self._prevailing0, wall, dealer, wind)

    def _step_args(self, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray, ended: np.ndarray,
                   out: np.ndarray, observe: bool) -> tuple:
        return (self._rules, actions, tables, delta, ended, out, observe, self.bean_scale, self.rule_flags,
                self.optional)

    def observe(self, tables: np.ndarray, out: np.ndarray, part: int = 0) -> None:
        """The seat to act's observation into ``out[tables]`` (protocol; masks are kept by step)."""
        _observe_chunk(self.views[part], tables, out, self.bean_scale, self.rule_flags, self.optional)

    def observe_seats(self, tables: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """Seat ``seats[j]``'s observation of ``tables[j]`` into ``out[j]`` (protocol)."""
        _observe_seats(self.st, tables, seats, out, self.bean_scale, self.rule_flags, self.optional)

    def state(self, out: np.ndarray, tables: np.ndarray) -> None:
        """The AEC ``state()`` of ``tables[j]`` into ``out[j]`` (protocol)."""
        _state_tables(self.st, tables, out, self.bean_scale, self.optional)

    def hand_result(self, tables: np.ndarray) -> dict[str, np.ndarray]:
        """The finished hands (protocol), plus the win: ``winner``, ``win_tile``, ``win_from``
        (-1: self-drawn), ``fan``, ``X``, the bird's tile and seat (-1: none); with the rule
        options, ``escaped`` and ``balances`` (:meth:`CompiledBackend.option_results`)."""
        st = self.arrays
        return {"end_reason": st.end_reason[tables].copy(), "won": st.won[tables] != 0,
                "winner": st.win_seat[tables].astype(np.int64),
                "win_tile": st.win_tile[tables].astype(np.int64),
                "win_from": st.win_from[tables].astype(np.int64),
                "fan": st.win_fan[tables].astype(np.int64), "X": st.win_x[tables].astype(np.int64),
                "bird": st.bird[tables].astype(np.int64), "bird_seat": st.bird_seat[tables].astype(np.int64),
                **self.option_results(tables)}
