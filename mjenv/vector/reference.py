"""The readable engine (:mod:`mjenv.engine`) as a :class:`~mjenv.vector.backend.Backend`: one readable
game per table, stepped in Python, so that ``make(game, n, backend="reference")`` is the same
batched env as the compiled one, on the specification (docs/vector.md). It compiles nothing; it
is there to check the compiled backends against (the same VectorEnv, two backends) and to run
the batched API where numba cannot.

``hand_result`` gives every field of the game's compiled backend, with the same values: the fields
every backend shares (``end_reason``, ``won``, and with the rule options ``escaped`` and
``balances``) and the game's win details (:data:`WIN_FIELDS`: blood battle ``win_from``, ``fan``,
``win_order``, ``penalty`` and ``item_uses``; Joy Mahjong ``winner``, ``win_tile``, ``fan``, ``X``, the bird ...),
read from each game's ``wins`` and events.

Replay logs: after :meth:`ReferenceBackend.keep_logs`, every hand a table finishes leaves its
replay log (the lines the AEC env writes with ``log_path``: :func:`mjenv.replay.hand_records`) in
``hand_logs``, for the caller to write (the arena's ``log_dir``). Rule IDs:
docs/rules-blood-battle.md, docs/rules-joy-mahjong.md.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import replay
from ..engine.core import N_SEATS, GameCore
from ..spec import GameSpec
from .backend import END_REASONS, SpecBackend


def blood_battle_wins(games: Sequence[GameCore], rules: Any) -> dict[str, np.ndarray]:
    """The blood-battle backend's win fields (:meth:`BloodBattleBackend.hand_result`), int64
    ``(len, 4)``: ``win_from`` (-1: self-drawn or no win), ``fan`` (total, before the cap),
    ``win_order`` (1, 2, 3 in the order the wins were scored; 0: no win); with ``escape``, the
    扣豆 each seat paid, ``penalty`` (S16.1: the escape events' ``penalty``); with ``items``, each
    seat's uses of each item, ``item_uses`` int64 ``(len, 4, 5)`` (S17, items in
    :data:`mjenv.config.ITEMS` order)."""
    n = len(games)
    win_from = np.full((n, N_SEATS), -1, np.int64)
    fan, order = np.zeros((n, N_SEATS), np.int64), np.zeros((n, N_SEATS), np.int64)
    for j, g in enumerate(games):
        for i, w in enumerate(g.wins):
            win_from[j, w.seat] = -1 if w.source is None else w.source
            fan[j, w.seat], order[j, w.seat] = w.score.total_fan, i + 1
    out = {"win_from": win_from, "fan": fan, "win_order": order}
    if rules.escape:
        penalty = np.zeros((n, N_SEATS), np.int64)
        for j, g in enumerate(games):
            for e in g.events:
                if e["type"] == "escape":
                    penalty[j, e["actor"]] += e.get("penalty", 0)
        out["penalty"] = penalty
    if rules.items is not None:
        out["item_uses"] = np.array([g.item_uses for g in games], dtype=np.int64).reshape(n, N_SEATS, -1)
    return out


def joy_mahjong_wins(games: Sequence[GameCore], rules: Any) -> dict[str, np.ndarray]:
    """The Joy Mahjong backend's win fields (:meth:`JoyMahjongBackend.hand_result`), int64
    ``(len,)``: ``winner``, ``win_tile``, ``win_from`` (-1: self-drawn or no win), ``fan``, ``X``,
    the bird's tile and seat (J8; -1: none)."""
    names = ("winner", "win_tile", "win_from", "fan", "X", "bird", "bird_seat")
    rows = []
    for g in games:
        w = g.wins[0] if g.wins else None  # a Joy Mahjong hand ends at its one win (J10)
        win = (-1, -1, -1, 0, 0) if w is None else (w.seat, w.tile, -1 if w.source is None else w.source,
                                                     w.score.fan, w.score.X)
        rows.append(win + ((-1, -1) if g.bird is None else (g.bird, g.bird_seat)))
    table = np.array(rows, dtype=np.int64).reshape(len(games), len(names))
    return {name: table[:, i].copy() for i, name in enumerate(names)}


WIN_FIELDS: dict[str, Callable[[Sequence[GameCore], Any], dict[str, np.ndarray]]] = {
    "blood_battle": blood_battle_wins, "joy_mahjong": joy_mahjong_wins}
"""Game key -> the ``hand_result`` fields its compiled backend adds to the shared ones."""


class ReferenceBackend(SpecBackend):
    """``num_envs`` tables of the readable engine playing ``spec``'s game (the Backend protocol)."""

    def __init__(self, num_envs: int, spec: GameSpec) -> None:
        super().__init__(num_envs, spec)
        self.games: list[GameCore | None] = [None] * num_envs
        self.seat = np.zeros(num_envs, dtype=np.int64)
        self.mask = np.zeros((num_envs, self.n_actions), dtype=np.int8)
        self._win_fields = WIN_FIELDS[spec.game]
        self._dealt_as: list[tuple[int, int, dict[str, Any]]] = [(0, 0, {})] * num_envs
        """(seed, hand index, script) of each table's hand: its replay log's header."""
        self._decisions: list[list[tuple[int, int, int, dict[str, Any]]]] | None = None
        """Per table, (seat, action, events before, analysis) of each decision (with logs kept)."""
        self._notes: list[dict[str, Any]] = []
        self.hand_logs: dict[int, list[dict[str, Any]]] = {}
        """Table -> the replay log lines of its last finished hand (after :meth:`keep_logs`)."""

    def keep_logs(self) -> None:
        """Keep the replay log of every hand dealt from now on (see the module docstring)."""
        self._decisions = [[] for _ in range(self.num_envs)]
        self._notes = [{} for _ in range(self.num_envs)]

    def log_decision(self, table: int, probs: np.ndarray | None = None) -> None:
        """Record with table ``table``'s next action its legal actions and the policy's ``probs``
        (as the AEC env's ``log_decision``)."""
        if self._decisions is None:
            raise ValueError("log_decision needs replay logs: call keep_logs() first")
        self._notes[table] = replay.decision_note(self.games[table].legal_actions(), probs, self.n_actions)

    def use_threads(self, n: int) -> None:
        """One thread: the readable engine is Python (``n`` parts play one after the other)."""

    def start_hands(self, tables: np.ndarray, hand_seeds: np.ndarray, hand_indices: np.ndarray,
                    script: dict[str, Any] | None = None, part: int = 0) -> None:
        """Deal hand ``hand_indices[j]`` of ``hand_seeds[j]`` on ``tables[j]`` (protocol): every new
        game is made before any table changes, so a bad script changes nothing."""
        new = [self.spec.new_game(int(seed), int(hand), self.games[t] if hand > 0 else None,
                                  (script or {}) if hand == 0 else {})
               for t, seed, hand in zip(tables, hand_seeds, hand_indices)]
        for t, game, seed, hand in zip(tables, new, hand_seeds, hand_indices):
            self.games[t] = game
            self._dealt_as[t] = (int(seed), int(hand), (script or {}) if hand == 0 else {})
            if self._decisions is not None:
                self._decisions[t], self._notes[t] = [], {}
            self._refresh(t)

    def step(self, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray,
             out: np.ndarray | None = None, part: int | None = None) -> np.ndarray:
        """Play ``actions[tables]``; bean changes into ``delta``; the hands that ended (protocol)."""
        ended = np.zeros(len(tables), dtype=np.bool_)
        for j, t in enumerate(tables):
            game = self.games[t]
            if self._decisions is None:
                delta[t] = game.apply(int(actions[t]))
            else:  # where in the event stream the decision was taken, as the AEC env logs it
                seat, before = game.current_player, len(game.events)
                delta[t] = game.apply(int(actions[t]))
                self._decisions[t].append((seat, int(actions[t]), before, self._notes[t]))
                self._notes[t] = {}
            ended[j] = game.over
            if game.over:
                if self._decisions is not None:
                    self.hand_logs[int(t)] = replay.hand_records(self._log_header(int(t)), game.events,
                                                                 self._decisions[t], self.layout)
            else:
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

    def dealt(self, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The listed tables' walls as dealt and their dealers (protocol; read before the first step)."""
        games = [self.games[t] for t in tables]
        return (np.array([g.wall for g in games], dtype=np.int8).reshape(len(games), -1),
                np.array([g.dealer for g in games], dtype=np.int64))

    def hand_result(self, tables: np.ndarray) -> dict[str, np.ndarray]:
        """The listed tables' hands (protocol): ``end_reason``, ``won``, the game's win fields
        (:data:`WIN_FIELDS`); with the rule options ``escaped`` and ``balances`` (after the hand)."""
        games = [self.games[t] for t in tables]
        out = {"end_reason": np.array([END_REASONS.index(g.end_reason) for g in games], dtype=np.int8),
               "won": np.array([g.won for g in games], dtype=np.bool_).reshape(len(games), 4),
               **self._win_fields(games, self.rules)}
        if self.rules.escape:
            out["escaped"] = np.array([g.escaped for g in games], dtype=np.bool_).reshape(len(games), 4)
        if self.keeps_balances:
            out["balances"] = np.array([g.balances for g in games], dtype=np.int64).reshape(len(games), 4)
        return out

    def _log_header(self, t: int) -> dict[str, Any]:
        """The header line of table ``t``'s finished hand (the AEC env's, without agents)."""
        seed, hand, script = self._dealt_as[t]
        return replay.hand_header(self.spec.preset, self.rules, seed, hand, game=self.game, scripted=script)

    def _refresh(self, t: int) -> None:
        game = self.games[t]
        self.seat[t] = game.current_player
        self.mask[t] = game.legal_mask()
