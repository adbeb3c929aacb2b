"""One table of the compiled engine behind the AEC env (``raw_env(backend="compiled")``).

:class:`CompiledTable` plays a one-table backend of :mod:`mjenv.vector` (the same
:class:`~mjenv.spec.GameSpec` as the env) and shows the AEC env the part of the readable engine's
face that :class:`mjenv.aec.MahjongAECEnv` steps: ``current_player``, ``legal_mask()``,
``apply(action)`` (each seat's bean change), ``over``, ``end_reason`` and ``balances`` at the end
of a hand. Its observations and states come from the compiled encoders, equal to the readable
ones (the parity tests hold them so). What needs the readable engine's objects (the table drawn
as text, replay logs, the Parallel API's claim windows) stays with ``backend="reference"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .spec import GameSpec
from .vector.backend import END_REASONS
from .vector.factory import backend_class

BACKENDS = ("reference", "compiled")
"""The engines an AEC env can play on: the readable one (the default and the specification) and
the compiled one of :mod:`mjenv.vector`, step for step the same game."""


def check_backend(backend: Any) -> str:
    """``backend`` if it is one of :data:`BACKENDS`, else a ValueError naming them."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    return backend


class CompiledTable:
    """A one-table compiled backend with the readable engine's face (see the module docstring)."""

    def __init__(self, spec: GameSpec) -> None:
        self.backend = b = backend_class(spec.game)(1, spec=spec)
        self._tables = np.zeros(1, dtype=np.int64)
        self._actions = np.zeros(1, dtype=np.int64)
        self._seats = np.zeros(1, dtype=np.int64)
        self._delta = np.zeros((1, 4), dtype=np.int64)
        self._obs = np.zeros((1, *b.obs_shape), dtype=np.float32)  # the seat to act's, kept by step
        self._view = np.zeros((1, *b.obs_shape), dtype=np.float32)  # any other seat's
        self._state = np.zeros((1, *b.state_shape), dtype=np.float32)
        self._ended = np.zeros(1, dtype=np.bool_)
        self._step = b.stepper(self._actions, self._tables, self._delta, self._ended, self._obs)
        self.current_player = 0
        self.over = False
        self.end_reason = ""
        self.balances: list[int] | None = None

    def deal(self, seed: int, hand_index: int, script: dict[str, Any]) -> CompiledTable:
        """Deal hand ``hand_index`` of ``seed`` (0 starts an episode; a later one goes on with the
        match: dealer, wind and balances); ``script`` (checked before anything changes) scripts
        hand 0 as the readable env's reset options do."""
        self.backend.start_hands(self._tables, np.array([seed], dtype=np.int64),
                                 np.array([hand_index], dtype=np.int64), script)
        self.backend.observe(self._tables, self._obs)
        self.current_player, self.over, self.end_reason, self.balances = int(self.backend.seat[0]), False, "", None
        return self

    def legal_mask(self) -> np.ndarray:
        """The legal actions of the seat to act (int8; the backend's row, not a copy)."""
        return self.backend.mask[0]

    def apply(self, action: int) -> list[int]:
        """Play a legal ``action`` of the seat to act (lone legal actions after it are played at
        once, as the readable engine does); each seat's bean change."""
        self._actions[0] = action
        self._step()
        if self._ended[0]:
            result = self.backend.hand_result(self._tables)
            self.over, self.end_reason = True, END_REASONS[result["end_reason"][0]]
            if self.backend.keeps_balances:
                self.balances = result["balances"][0].tolist()
        else:
            self.current_player = int(self.backend.seat[0])
        return self._delta[0].tolist()

    def observe(self, seat: int) -> np.ndarray:
        """What ``seat`` observes now (float32 planes, a fresh array)."""
        if seat == self.current_player and not self.over:
            return self._obs[0].copy()
        self._seats[0] = seat
        self.backend.observe_seats(self._tables, self._seats, self._view)
        return self._view[0].copy()

    def state(self) -> np.ndarray:
        """The table's perfect-information state (float32 planes, a fresh array)."""
        self.backend.state(self._state, self._tables)
        return self._state[0].copy()
