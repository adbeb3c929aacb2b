"""The interface a game backend of :mod:`mjenv.vector` implements.

The batched env (:class:`mjenv.vector.env.VectorEnv`) owns what every game shares: seeding (one
``np.random.Generator`` per table, hand seeds drawn like ``MahjongAECEnv.reset``), episodes of
``match_hands`` hands, autoreset, action validation (all tables before any is stepped), threads
and the returned buffers. A backend owns the game: the per-table state as arrays, the walls, the
rules, masks, observations and ``state()``.

Call order, per batch of tables (``tables``: an int64 index array, ascending):

1. ``start_hands(tables, hand_seeds, hand_indices)`` deals hand ``hand_indices[j]`` of the seed
   ``hand_seeds[j]`` on ``tables[j]``; hand index 0 starts an episode (carry-over cleared), a later
   one continues the table's match (the previous hand's next dealer, prevailing wind, ...).
2. ``seat`` / ``mask`` (attributes, arrays over every table) describe the decision each table
   waits on; the env validates actions against ``mask`` before calling ``step``.
3. ``step(actions, tables, delta, out=None, part=None)`` plays one legal action per listed table,
   auto-plays lone legal actions (the reference's ``auto_forced``), writes each seat's bean change
   into ``delta`` (int64 ``(N, 4)``, rows of ``tables`` only) and returns a bool array over
   ``tables``: that table's hand ended. Its ``seat``/``mask`` rows are then stale until the next
   ``start_hands``. With ``use_threads(n)``, n > 1, one compiled call splits the tables into n
   contiguous parts on numba's thread pool (``prange``), each part through its own compiled view
   of the state (:class:`CompiledBackend`); ``part=k`` plays all listed tables on the calling
   thread through view k instead (for callers that run threads of their own). A step only
   touches the listed tables, so parts never share a table.
4. ``observe(tables, out, part)`` writes the observation of each listed table's seat to act into
   ``out[tables]`` (float32 ``(N, *obs_shape)``) and refreshes ``mask``/``seat`` rows;
   ``observe_seats(tables, seats, out)`` writes the observation of seat ``seats[j]`` of
   ``tables[j]`` into ``out[j]`` (any seat, also of a finished hand before the next deal).
5. ``state(out)`` writes the AEC env's ``state()`` of every table into ``out``;
   ``hand_result(tables)`` reads a finished hand (end reason, winners, the game's win details)
   before the next deal; ``dealt(tables)`` the walls and dealers of hands just dealt.

Two kinds implement it: the compiled backends (:class:`CompiledBackend`, one per game) and the
readable engine (:class:`mjenv.vector.reference.ReferenceBackend`), field for field the same.

With the rule options ``escape`` (S16, J11) and ``bankroll`` (B4) the masks have one more column
(ESCAPE, the last action), the observations and states the optional planes of the AEC encoders,
and ``hand_result`` the seats that escaped and the balances after the hand (which carry over the
hands of an episode). Rule IDs: docs/rules-blood-battle.md, docs/rules-joy-mahjong.md.
"""

from __future__ import annotations

import abc

import os
import threading
import warnings
from typing import Any, Callable, Protocol

import numba
import numpy as np

from ..spec import GameSpec
from ..spec import spec as game_spec
from .encoding.optional import optional_bits

_pool_forked = False
"""True in a process forked after its parent started numba's ``omp`` pool (GNU OpenMP cannot run
there: numba terminates such a child at its first parallel call), so ``step`` plays every part on
the calling thread instead."""

_pool_turn = threading.Lock()
"""Parallel steps from several Python threads take turns on numba's pool: its ``workqueue`` layer
(the only one always present) terminates the process when two launches meet."""


def _after_fork_in_child() -> None:
    """Note a pool the child cannot use; a fresh lock (another thread may have held it at the fork)."""
    global _pool_forked, _pool_turn
    _pool_turn = threading.Lock()
    try:
        _pool_forked = _pool_forked or numba.threading_layer() == "omp"
    except ValueError:  # the parent never started numba's pool
        pass


os.register_at_fork(after_in_child=_after_fork_in_child)

END_REASONS = ("", "win", "draw", "escape")
"""``hand_result`` end-reason codes: index into this tuple (the reference's ``end_reason``)."""


class Backend(Protocol):
    """A compiled game engine playing ``num_envs`` tables as arrays (see the module docstring)."""

    game: str
    """``"blood_battle"`` or ``"joy_mahjong"``."""
    num_envs: int
    n_actions: int
    obs_shape: tuple[int, int]
    state_shape: tuple[int, int]
    match_hands: int
    rules: Any
    """The validated rules object of :mod:`mjenv.config` (the same the AEC env builds)."""
    seat: np.ndarray
    """int64 ``(N,)``: the seat to act at each table (valid after ``observe``)."""
    mask: np.ndarray
    """int8 ``(N, n_actions)``: the legal actions of that seat (valid after ``observe``)."""
    keeps_balances: bool
    """The rules keep bean balances (rule option ``bankroll``): ``hand_result`` has ``balances``."""

    def use_threads(self, n: int) -> None:
        """Prepare ``n`` parts (threads): ``step`` splits its tables over them."""
        ...

    def start_hands(self, tables: np.ndarray, hand_seeds: np.ndarray, hand_indices: np.ndarray,
                    script: dict[str, Any] | None = None, part: int = 0) -> None:
        """Deal hand ``hand_indices[j]`` of seed ``hand_seeds[j]`` on ``tables[j]``.

        ``script`` (tests only) overrides the first hand like the AEC env's ``reset(options=)``:
        ``{"wall": sequence of kinds, "dealer": int}`` applied to every listed table.
        """
        ...

    def step(self, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray,
             out: np.ndarray | None = None, part: int | None = None) -> np.ndarray:
        """Play ``actions[tables]`` (already checked against ``mask``); bean changes into
        ``delta[tables]``; return bool over ``tables``: the hand ended. With ``out``, also write
        the observation of every listed table whose hand goes on (as ``observe``), in the same
        compiled pass."""
        ...

    def observe(self, tables: np.ndarray, out: np.ndarray, part: int = 0) -> None:
        """Observation of the seat to act into ``out[tables]``; refresh ``seat``/``mask`` rows."""
        ...

    def observe_seats(self, tables: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """The observation of seat ``seats[j]`` of table ``tables[j]`` into ``out[j]``."""
        ...

    def state(self, out: np.ndarray, tables: np.ndarray) -> None:
        """The AEC env's ``state()`` of table ``tables[j]`` into ``out[j]`` (float32 ``(len, *state_shape)``)."""
        ...

    def hand_result(self, tables: np.ndarray) -> dict[str, np.ndarray]:
        """Of the listed tables' finished hands: ``end_reason`` (int8 codes into END_REASONS),
        ``won`` (bool ``(len, 4)``: seats that won this hand), the game's win details (the same
        fields and values on every backend of a game); with ``escape``, ``escaped`` (bool
        ``(len, 4)``); with ``bankroll``, ``balances`` (int64 ``(len, 4)``, after the hand)."""
        ...

    def dealt(self, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The listed tables' walls as dealt (int8 ``(len, wall size)``) and dealers (int64
        ``(len,)``), read after ``start_hands`` and before the first ``step``."""
        ...


AEC_ONLY = ("render_mode", "tile_style", "log_path")
"""AEC env options a batched env refuses: rendering and logs belong to one replayed table."""

SPLIT_BOUND = 3_000_000_000
"""Most beans one seat may owe in a hand when balances split payments: a split multiplies two
amounts of at most that size, which int64 holds (the reference's ints are unbounded)."""


def checked_spec(game: str, options: dict[str, Any]) -> GameSpec:
    """The game spec of a batched env's ``options`` (the AEC env's, less rendering and logs)."""
    aec_only = sorted(set(options) & set(AEC_ONLY))
    if aec_only:
        raise ValueError(f"option(s) {aec_only} belong to the AEC env only (rendering, logs); "
                         f"replay a table through {game}_v0.raw_env to use them")
    return game_spec(game, **options)  # the same validation and errors as the AEC env


class SpecBackend:
    """What every backend reads from its game spec (:mod:`mjenv.spec`): the rules, the layout,
    the observer, the match settings and the shapes of its buffers."""

    def __init__(self, num_envs: int, spec: GameSpec) -> None:
        observer = spec.observer
        self.spec, self.game, self.rules, self.match_hands = spec, spec.game, spec.rules, spec.match_hands
        self.num_envs = num_envs
        self.layout, self.n_actions = spec.layout, spec.layout.n
        self.observer, self.script_keys = observer, spec.script_keys
        self.illegal_action, self.illegal_reward = spec.illegal_action, spec.illegal_reward
        self.observation_dtype = spec.observation_dtype
        self.observation_bounds = spec.observation_box()
        """The AEC env's observation Box (its bounds and dtype)."""
        self.bean_scale = float(observer.bean_scale)
        # The optional planes (escaped, balance) follow the default ones, as in the AEC encoders.
        self.obs_shape = (observer.planes, observer.width)
        self.state_shape = (observer.state_planes, observer.width)
        self.keeps_balances = spec.rules.bankroll is not None


class CompiledBackend(SpecBackend, abc.ABC):
    """What both compiled backends share: the game spec (a ready ``spec`` or the AEC env's options
    to build one), the constants the encoders need, and one compiled view of the state per thread.

    The views share the state's arrays but not their reference counts: every compiled read of a
    field touches its count atomically, and two threads on one view contend on those counts
    badly enough to run slower than one thread.
    """

    game: str

    def __init__(self, num_envs: int, new_state: Callable[[int, int], Any], spec: GameSpec | None,
                 options: dict[str, Any]) -> None:
        if spec is None:
            spec = checked_spec(self.game, options)
        elif options:
            raise ValueError(f"give a spec or options, not both (got options {sorted(options)})")
        elif spec.game != self.game:
            raise ValueError(f"a {spec.game} spec cannot make a {self.game} backend")
        observer = spec.observer
        bound = observer.bean_bound * observer.bean_scale  # beans one seat can move in a hand
        if spec.rules.bankroll is not None and bound > SPLIT_BOUND:
            raise ValueError(f"with bankroll, the compiled engine splits payments in int64: a hand of these rules "
                             f"can move up to {bound:,.0f} beans per seat, more than {SPLIT_BOUND:,}; lower "
                             f"room_coefficient (or escape_x), or play them on {self.game}_v0.raw_env")
        super().__init__(num_envs, spec)
        self.rule_flags = np.array(observer.rule_flags, dtype=np.float64)
        self.optional = optional_bits(observer)
        self.st, self.arrays = new_state(num_envs, self.n_actions)
        self.views = [self.st]
        self._view_tuple = (self.st,)
        self.seat = self.arrays.current  # the engine's own buffers
        self.mask = self.arrays.mask

    @classmethod
    def bytes_per_table(cls) -> int:
        """Bytes one table's state arrays and observation buffers take (for the memory check)."""
        _, arrays = cls.new_state(1)
        return sum(a.nbytes for a in arrays) + 3 * 4 * int(np.prod(cls.obs_shape))

    def option_results(self, tables: np.ndarray) -> dict[str, np.ndarray]:
        """``hand_result``'s fields of the rule options: ``escaped`` with escape, ``balances``
        (after the hand) with bankroll; none with the options off."""
        out = {}
        if self.rules.escape:
            out["escaped"] = self.arrays.escaped[tables] != 0
        if self.keeps_balances:
            out["balances"] = self.arrays.balances[tables].copy()
        return out

    def dealt(self, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The listed tables' walls as dealt and their dealers (protocol)."""
        return self.arrays.wall[tables].astype(np.int8), self.arrays.dealer[tables].astype(np.int64)

    def use_threads(self, n: int) -> None:
        """One compiled view of the state per thread (``part`` 0 .. n - 1)."""
        self.views = [self.st] + [type(self.st)(*self.arrays) for _ in range(n - 1)]
        self._view_tuple = tuple(self.views)

    def step(self, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray,
             out: np.ndarray | None = None, part: int | None = None) -> np.ndarray:
        """Play ``actions[tables]``; bean changes into ``delta``; the hands that ended (protocol)."""
        ended = np.zeros(len(tables), dtype=np.bool_)
        args = self._step_args(actions, tables, delta, ended, self._no_out if out is None else out, out is not None)
        n = min(len(self.views), len(tables))
        if n > 1 and part is None and _pool_forked:
            warnings.warn("this process was forked after numba's OpenMP pool started, which it cannot use: "
                          "num_threads > 1 plays on one thread here (start workers with 'spawn' or "
                          "'forkserver' to keep the threads)", RuntimeWarning, stacklevel=3)
            part = 0
        if part is not None or n < 2:
            self._step_chunk(self.views[part or 0], *args)
        else:  # part p: tables[bounds[p]:bounds[p + 1]] (linspace costs 30 us a step)
            with _pool_turn:
                self._step_parts(self._view_tuple, np.arange(n + 1, dtype=np.int64) * len(tables) // n, *args)
        return ended

    def stepper(self, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray, ended: np.ndarray,
                out: np.ndarray) -> Callable[[], None]:
        """A call that plays ``actions[tables]`` on the calling thread, as :meth:`step` with ``out``,
        into these same buffers every time (``ended`` over ``tables``): no per-call arguments to
        build, for a caller that steps a few tables one decision at a time (the AEC env's)."""
        chunk, args = self._step_chunk, (self.st, *self._step_args(actions, tables, delta, ended, out, True))
        return lambda: chunk(*args)

    @abc.abstractmethod
    def _step_args(self, actions: np.ndarray, tables: np.ndarray, delta: np.ndarray, ended: np.ndarray,
                   out: np.ndarray, observe: bool) -> tuple:
        """The arguments after the view of the game's compiled ``_step_chunk`` (and after the
        views and bounds of its ``_step_parts``)."""
