"""The readable engine (:mod:`mjenv.engine`) as a :class:`~mjenv.vector.backend.Backend`: one readable
game per table, stepped in Python, so that ``make(game, n, backend="reference")`` is the same
batched env as the compiled one, on the specification (docs/vector.md). It compiles nothing; it
is there to check the compiled backends against (the same VectorEnv, two backends) and to run
the batched API where numba cannot.

``hand_result`` gives the fields every backend shares (``end_reason``, ``won``, and with the rule
options ``escaped``, ``balances`` and the blood battle's ``penalty``); the compiled backends'
per-game win details (``fan``, ``win_from``, the bird ...) are theirs alone. Rule IDs: docs/rules-blood-battle.md,
docs/rules-joy-mahjong.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.core import GameCore
from ..spec import GameSpec
from .backend import END_REASONS, SpecBackend


class ReferenceBackend(SpecBackend):
    """``num_envs`` tables of the readable engine playing ``spec``'s game (the Backend protocol)."""

    def __init__(self, num_envs: int, spec: GameSpec) -> None:
        super().__init__(num_envs, spec)
        self.games: list[GameCore | None] = [None] * num_envs
        self.seat = np.zeros(num_envs, dtype=np.int64)
        self.mask = np.zeros((num_envs, self.n_actions), dtype=np.int8)

    def use_threads(self, n: int) -> None:
        """One thread: the readable engine is Python (``n`` parts play one after the other)."""

    def start_hands(self, tables: np.ndarray, hand_seeds: np.ndarray, hand_indices: np.ndarray,
                    script: dict[str, Any] | None = None, part: int = 0) -> None:
        """Deal hand ``hand_indices[j]`` of ``hand_seeds[j]`` on ``tables[j]`` (protocol): every new
        game is made before any table changes, so a bad script changes nothing."""
        new = [self.spec.new_game(int(seed), int(hand), self.games[t] if hand > 0 else None,
                                  (script or {}) if hand == 0 else {})
               for t, seed, hand in zip(tables, hand_seeds, hand_indices)]
        for t, game in zip(tables, new):
            self.games[t] = game
            self._refresh(t)

    def step(self, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray,
             out: np.ndarray | None = None, part: int | None = None) -> np.ndarray:
        """Play ``actions[tables]``; bean changes into ``delta``; the hands that ended (protocol)."""
        ended = np.zeros(len(tables), dtype=np.bool_)
        for j, t in enumerate(tables):
            game = self.games[t]
            delta[t] = game.apply(int(actions[t]))
            ended[j] = game.over
            if not game.over:
                self._refresh(t)
                if out is not None:
                    out[t] = self.observer.observe(game, game.current_player)
        return ended

    def observe(self, tables: np.ndarray, out: np.ndarray, part: int = 0) -> None:
        """The seat to act's observation into ``out[tables]``; refresh ``seat``/``mask`` (protocol)."""
        for t in tables:
            game = self.games[t]
            out[t] = self.observer.observe(game, game.current_player)
            self._refresh(t)

    def observe_seats(self, tables: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """Seat ``seats[j]``'s observation of ``tables[j]`` into ``out[j]`` (protocol)."""
        for j, (t, seat) in enumerate(zip(tables, seats)):
            out[j] = self.observer.observe(self.games[t], int(seat))

    def state(self, out: np.ndarray, tables: np.ndarray) -> None:
        """The AEC ``state()`` of ``tables[j]`` into ``out[j]`` (protocol)."""
        for j, t in enumerate(tables):
            out[j] = self.observer.state(self.games[t])

    def hand_result(self, tables: np.ndarray) -> dict[str, np.ndarray]:
        """The listed tables' hands (protocol): ``end_reason``, ``won``; with the rule options
        ``escaped``, ``balances`` (after the hand) and the blood battle's ``penalty``."""
        games = [self.games[t] for t in tables]
        out = {"end_reason": np.array([END_REASONS.index(g.end_reason) for g in games], dtype=np.int8),
               "won": np.array([g.won for g in games], dtype=np.bool_).reshape(len(games), 4)}
        if self.rules.escape:
            out["escaped"] = np.array([g.escaped for g in games], dtype=np.bool_).reshape(len(games), 4)
        if self.keeps_balances:
            out["balances"] = np.array([g.balances for g in games], dtype=np.int64).reshape(len(games), 4)
        if self.rules.escape and self.game == "blood_battle":  # the 扣豆 each seat paid (S16.1), as compiled
            out["penalty"] = np.zeros((len(games), 4), dtype=np.int64)
            for j, g in enumerate(games):
                for event in g.events:
                    if event["type"] == "escape":
                        out["penalty"][j, event["actor"]] += event.get("penalty", 0)
        return out

    def _refresh(self, t: int) -> None:
        game = self.games[t]
        self.seat[t] = game.current_player
        self.mask[t] = game.legal_mask()
