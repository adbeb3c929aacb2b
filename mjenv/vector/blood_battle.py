"""The blood-battle backend of :mod:`mjenv.vector` (the :class:`~mjenv.vector.backend.Backend`
protocol): the game spec (:mod:`mjenv.spec`), the seeded walls, and chunk loops over the
compiled engine (:mod:`.engine.blood_battle`) and encoder (:mod:`.encoding.blood_battle`).
Rule IDs: docs/rules-blood-battle.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from ..engine.blood_battle import SUIT_TILES
from ..spec import GameSpec
from .backend import CompiledBackend
from .engine import blood_battle as eng
from .encoding import blood_battle as enc
from .rules.shapes import suit_table
from .rules.blood_battle import R_BANKROLL, rule_vector
from .seeding import shuffled

_TILES = np.array(SUIT_TILES, dtype=np.int8)


def _scripted(script: dict[str, Any]) -> tuple[np.ndarray, int]:
    """The first hand's wall and dealer of ``reset(options={"wall": ..., "dealer": ...})``, checked
    (an empty wall and dealer -1 where not given)."""
    wall = script.get("wall")
    if wall is not None:
        wall = np.asarray(wall)
        if wall.shape != (len(_TILES),) or not np.array_equal(np.sort(wall), _TILES):
            raise ValueError("a blood-battle wall holds each of the 27 suited kinds exactly 4 times")
    dealer = script.get("dealer")
    if dealer is not None and (isinstance(dealer, bool) or not (isinstance(dealer, (int, np.integer)) and 0 <= dealer < 4)):
        raise ValueError(f"dealer must be a seat 0-3, got {dealer!r}")
    return (np.zeros(0, np.int8) if wall is None else wall.astype(np.int8)), (-1 if dealer is None else int(dealer))


@njit(cache=True, nogil=True)
def _step_chunk(st: eng.State, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray,
                ended: np.ndarray, rules: np.ndarray, table: np.ndarray, out: np.ndarray, observe: bool,
                bean_scale: float, rule_flags: np.ndarray, optional: int) -> None:
    """Play one action per listed table; ``ended[j]``: the hand of ``tables[j]`` ended; with
    ``observe``, the next observation of every table whose hand goes on into ``out``."""
    for j in range(len(tables)):
        t = tables[j]
        ended[j] = eng.apply(st, t, actions[t], rules, table)
        delta[t, :] = st.delta[t]
        if observe and not ended[j]:
            enc.observe(st, t, out[t], bean_scale, rule_flags, optional)


@njit(cache=True, nogil=True, parallel=True)
def _step_parts(views: tuple, bounds: np.ndarray, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray,
                ended: np.ndarray, rules: np.ndarray, table: np.ndarray, out: np.ndarray, observe: bool,
                bean_scale: float, rule_flags: np.ndarray, optional: int) -> None:
    """:func:`_step_chunk` of part p = ``tables[bounds[p]:bounds[p + 1]]`` through ``views[p]``,
    the parts on numba's thread pool."""
    for p in prange(len(bounds) - 1):
        lo, hi = bounds[p], bounds[p + 1]
        _step_chunk(views[p], actions, tables[lo:hi], delta, ended[lo:hi], rules, table, out, observe,
                    bean_scale, rule_flags, optional)


@njit(cache=True, nogil=True)
def _observe_chunk(st: eng.State, tables: np.ndarray, out: np.ndarray, bean_scale: float,
                   rule_flags: np.ndarray, optional: int) -> None:
    for j in range(len(tables)):
        t = tables[j]
        enc.observe(st, t, out[t], bean_scale, rule_flags, optional)


@njit(cache=True, nogil=True)
def _observe_seats(st: eng.State, tables: np.ndarray, seats: np.ndarray, out: np.ndarray, bean_scale: float,
                   rule_flags: np.ndarray, optional: int) -> None:
    for j in range(len(tables)):
        enc.observe_seat(st, tables[j], seats[j], bean_scale, rule_flags, optional, out[j])


@njit(cache=True, nogil=True)
def _state_tables(st: eng.State, tables: np.ndarray, out: np.ndarray, bean_scale: float, optional: int) -> None:
    for j in range(tables.shape[0]):
        enc.state(st, tables[j], out[j], bean_scale, optional)


@njit(cache=True, nogil=True)
def _start_chunk(st: eng.State, tables: np.ndarray, seeds: np.ndarray, hands: np.ndarray, classic: bool,
                 script_wall: np.ndarray, script_dealer: int, rules: np.ndarray, table: np.ndarray) -> None:
    """Deal hand ``hands[j]`` of ``seeds[j]`` on ``tables[j]``: the wall and dice of
    :func:`mjenv.engine.blood_battle.seeded_wall`; in classic matches the previous hand's next
    dealer deals; a script (a wall, dealer >= 0) overrides an episode's first hand. An episode
    starts from the bankroll's balances, which then carry over its hands (B4)."""
    rolls = np.empty(1, np.int64)
    for j in range(len(tables)):
        t = tables[j]
        shuffled(_TILES, seeds[j], hands[j], st.wall[t], rolls)
        dealer = st.next_dealer[t] if classic and hands[j] > 0 else rolls[0]
        if hands[j] == 0:
            st.balances[t, :] = rules[R_BANKROLL : R_BANKROLL + 4]
            if len(script_wall):
                st.wall[t, :] = script_wall
            if script_dealer >= 0:
                dealer = script_dealer
        eng.deal(st, t, dealer, rules, table)


class BloodBattleBackend(CompiledBackend):
    """Blood battle on ``num_envs`` tables; ``options`` are ``blood_battle_v0.raw_env``'s game
    options (:func:`mjenv.spec.spec`), or ``spec`` a ready :class:`~mjenv.spec.GameSpec`."""

    game = "blood_battle"
    obs_shape, state_shape = enc.OBS_SHAPE, enc.STATE_SHAPE
    new_state = staticmethod(eng.new_state)

    def __init__(self, num_envs: int, spec: GameSpec | None = None, **options: Any) -> None:
        super().__init__(num_envs, eng.new_state, spec, options)
        self._rules = rule_vector(self.rules)
        self._table = suit_table()
        self._no_out = np.zeros((1, *self.obs_shape), dtype=np.float32)
        self._step_chunk, self._step_parts = _step_chunk, _step_parts

    def start_hands(self, tables: np.ndarray, hand_seeds: np.ndarray, hand_indices: np.ndarray,
                    script: dict[str, Any] | None = None, part: int = 0) -> None:
        """Deal hand ``hand_indices[j]`` of ``hand_seeds[j]`` on ``tables[j]`` (protocol)."""
        script_wall, script_dealer = _scripted(script or {})  # checked before any table changes
        _start_chunk(self.views[part], np.ascontiguousarray(tables, dtype=np.int64),
                     np.ascontiguousarray(hand_seeds, dtype=np.int64), np.ascontiguousarray(hand_indices, dtype=np.int64),
                     self.rules.mode == "classic", script_wall, script_dealer, self._rules, self._table)

    def _step_args(self, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray, ended: np.ndarray,
                   out: np.ndarray, observe: bool) -> tuple:
        return (actions, tables, delta, ended, self._rules, self._table, out, observe, self.bean_scale,
                self.rule_flags, self.optional)

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
        """The finished hands (protocol), plus each seat's win, int64 ``(len, 4)``: ``win_from``
        (the discarder or robbed kong-maker, -1 self-drawn), ``fan`` (total fan before the cap),
        ``win_order`` (1 for the hand's first win, 2, 3; 0 for a seat that did not win); with the
        rule options, ``escaped`` and ``balances`` (:meth:`CompiledBackend.option_results`), with
        ``escape`` the 扣豆 each seat paid, ``penalty`` int64 ``(len, 4)`` (S16.1), and with ``items``
        each seat's uses of each item this hand, ``item_uses`` int64 ``(len, 4, 5)`` (items in
        :data:`mjenv.config.ITEMS` order, S17)."""
        a = self.arrays
        out = {"end_reason": a.end_reason[tables].copy(), "won": a.won[tables] != 0,
               "win_from": a.win_from[tables].astype(np.int64), "fan": a.win_fan[tables].astype(np.int64),
               "win_order": a.win_order[tables].astype(np.int64), **self.option_results(tables)}
        if self.rules.escape:
            out["penalty"] = a.penalty[tables].copy()
        if self.rules.items is not None:
            out["item_uses"] = a.item_uses[tables].astype(np.int64)
        return out
