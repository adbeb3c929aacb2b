"""The batched env of :mod:`mjenv.vector`: seeding, episodes, autoreset, validation and threads,
shared by every game backend (:mod:`.backend`). ``docs/vector.md`` is the guide.

======================  =====================================================================
Make                    ``mjenv.vector.make(game, num_envs, num_threads=1, copy=True, **options)``;
                        ``options``: the AEC env's (preset, mode, room, rule fields, match_hands)
Reset                   ``obs, info = reset(seed=s)``: table i plays what ``raw_env`` plays after
                        ``reset(seed=s+i)`` and unseeded resets after each episode; ``seed`` may be
                        N ints, one per table (``reset(seed=s[i])``)
Observation             ``{"observation": float32 (N, *obs_shape), "action_mask": int8 (N, A)}``
                        of the seat to act at each table (``info["seat"]``), the AEC encoder's values
Step                    ``step(actions, active=None)``: int (N,), one per table; ``active`` limits
                        the tables that play (the others wait)
Rewards                 float32 (N, 4): every seat's bean change from this step (``raw_env.rewards``)
Episode end             ``terminated[i]``; same-step autoreset: ``obs[i]`` is the next episode's first
                        decision; ``info["beans"]``, ``info["end_reason"]``, ``info["won"]`` and the
                        backend's win fields (``win_from``, ``fan`` ...) where ``info["_final"]``;
                        never truncated
State                   ``state(tables=None)``: float32 (N, *state_shape), the AEC env's ``state()``
                        (of the listed tables only, given ``tables``)
Buffers                 ``copy=False``: the returned obs/mask arrays are reused by the next step
Bad input               an illegal action at any table raises IllegalActionError naming the table,
                        the action and the legal ones; no table is stepped
Threads                 ``num_threads=k``: each step splits the tables into k parts played at
                        once on numba's thread pool (one compiled call); results do not depend on k
======================  =====================================================================

Version history: v0 (mjenv 0.1.0) first release, blood battle and Joy Mahjong backends; per-table
seeds in ``reset`` and the hand's win fields in ``info`` (for the duplicate arena); threads that
speed up (one state view per thread, compiled dealing), the same games as before; the threads'
parts run in one compiled call on numba's pool instead of a Python thread pool (two threads
1.5x -> 1.7x at 1,024 tables), the same games as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numba import njit

from ..engine.core import IllegalActionError
from . import seeding
from .backend import END_REASONS, Backend

__all__ = ["IllegalActionError", "VectorEnv"]

_END_NAMES = np.array(END_REASONS, dtype=object)


@njit(cache=True, nogil=True)
def _first_illegal(actions: np.ndarray, tables: np.ndarray, mask: np.ndarray) -> int:
    """The first position ``j`` whose ``actions[tables[j]]`` is outside ``mask``'s row, else -1."""
    for j in range(len(tables)):
        a = actions[tables[j]]
        if a < 0 or a >= mask.shape[1] or mask[tables[j], a] == 0:
            return j
    return -1


class VectorEnv:
    """``num_envs`` tables of one game played in lockstep; see ``docs/vector.md``.

    ``reset``/``step`` return ``obs = {"observation": float32 (N, *obs_shape), "action_mask": int8
    (N, A)}`` for the seat to act at each table (``info["seat"]``). With ``copy=False`` the returned
    arrays are the env's own buffers, overwritten by the next ``step``/``reset``.
    """

    def __init__(self, backend: Backend, num_threads: int = 1, copy: bool = True) -> None:
        self.backend = backend
        self.num_envs = n = backend.num_envs
        self.num_threads = min(num_threads, n)
        self.copy = copy
        self.match_hands = backend.match_hands
        self.single_action_space = spaces.Discrete(backend.n_actions)
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(-np.inf, np.inf, backend.obs_shape, np.float32),
            "action_mask": spaces.Box(0, 1, (backend.n_actions,), np.int8)})
        self.state_shape = backend.state_shape
        self._obs = np.zeros((n, *backend.obs_shape), dtype=np.float32)
        self._delta = np.zeros((n, 4), dtype=np.int64)
        self._all = np.arange(n, dtype=np.int64)
        backend.use_threads(self.num_threads)
        self._streams = np.zeros((n, 6), dtype=np.uint64)  # per table: the AEC env's np_random
        self._hand_seed = np.zeros(n, dtype=np.int64)
        self._hand_index = np.zeros(n, dtype=np.int64)
        self._episode_beans = np.zeros((n, 4), dtype=np.int64)
        self._no_reason = np.full(n, "", dtype=object)
        self._ready = False

    # ------------------------------------------------------------------ API

    def reset(self, seed: int | Any | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start every table: table ``i`` plays what the AEC env plays after ``reset(seed=seed+i)``
        and unseeded resets after each episode. ``seed`` may also be one seed per table (a sequence
        of ``num_envs`` ints >= 0): table ``i`` then plays the AEC env's ``reset(seed=seed[i])``.
        ``options={"wall": ..., "dealer": ...}`` scripts every table's first hand, as the AEC
        env's ``reset(options=...)``."""
        if seed is None:  # fresh entropy, as if each table had been given a seed of its own
            seeds = np.random.default_rng().integers(2**63, size=self.num_envs)
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            if not 0 <= seed <= 2**63 - self.num_envs:
                raise ValueError(f"seed must be an int in [0, 2**63 - num_envs] or None, got {seed!r}")
            seeds = int(seed) + self._all
        else:
            seeds = self._table_seeds(seed)
        # The backend checks a script before it deals any table: bad options change nothing.
        self.backend.start_hands(self._all, seeds, np.zeros(self.num_envs, dtype=np.int64), options)
        self._streams, self._hand_seed[:] = seeding.streams(seeds), seeds
        self._hand_index[:] = 0
        self._episode_beans[:] = 0
        self._ready = True
        self.backend.observe(self._all, self._obs)
        return self._out(), {"seat": self.backend.seat.astype(np.int64)}

    def step(self, actions: Any, active: np.ndarray | None = None
             ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per table for its seat to act; finished episodes restart at once.

        ``active`` (bool (N,), default all): only these tables play; the others keep waiting on
        the same decision (their actions are ignored, their rewards are 0).
        """
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        if active is None:
            tables = self._all
        else:
            active = np.asarray(active, dtype=np.bool_)
            if active.shape != (self.num_envs,):
                raise ValueError(f"active must be a bool array of shape ({self.num_envs},), got {active.shape}")
            tables = np.flatnonzero(active)
        actions = self._check(actions, tables)
        b = self.backend
        self._delta[:] = 0
        # One compiled call (split over the threads): play and observe the tables whose hand goes on.
        ended = np.zeros(self.num_envs, dtype=np.bool_)
        ended[tables] = b.step(actions, tables, self._delta, self._obs)
        rewards = self._delta.astype(np.float32)
        self._episode_beans += self._delta
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        info: dict[str, Any] = {}
        done = np.flatnonzero(ended)
        if len(done):  # a few tables per step: deal their next hand here, on this thread
            result = b.hand_result(done)
            self._hand_index[done] += 1
            last = self._hand_index[done] >= self.match_hands  # the episode's last hand ended
            over = done[last]
            if len(over):
                terminated[over] = True
                beans = np.zeros((self.num_envs, 4), dtype=np.int64)
                beans[over] = self._episode_beans[over]
                reason = self._no_reason.copy()
                reason[over] = _END_NAMES[result.pop("end_reason")[last]]
                info.update(beans=beans, end_reason=reason, _final=terminated.copy())
                for key, value in result.items():  # "won" and the backend's other fields of the last hand
                    full = np.zeros((self.num_envs, *value.shape[1:]), dtype=value.dtype)
                    full[over] = value[last]
                    info[key] = full
                self._episode_beans[over] = 0
                self._hand_index[over] = 0
                seeding.next_seeds(self._streams, over, self._hand_seed)  # the AEC env's unseeded reset()
            b.start_hands(done, self._hand_seed[done], self._hand_index[done])
            b.observe(done, self._obs)
        info["seat"] = b.seat.astype(np.int64)
        return self._out(), rewards, terminated, np.zeros(self.num_envs, dtype=np.bool_), info

    def state(self, tables: Any = None) -> np.ndarray:
        """float32 (N, *state_shape): every table's perfect-information state (the AEC ``state()``);
        with ``tables`` (ints in [0, N)), only those tables' states, in that order."""
        if tables is None:
            tables = self._all
        else:
            tables = np.asarray(tables)
            if (tables.ndim != 1 or not np.issubdtype(tables.dtype, np.integer)
                    or ((tables < 0) | (tables >= self.num_envs)).any()):
                raise ValueError(f"tables must be a 1-d array of table indices in [0, {self.num_envs}), got {tables!r}")
            tables = tables.astype(np.int64)
        out = np.zeros((len(tables), *self.state_shape), dtype=np.float32)
        self.backend.state(out, tables)
        return out

    def action_masks(self) -> np.ndarray:
        """int8 (N, A): the legal actions of each table's seat to act."""
        return self.backend.mask.copy()

    def close(self) -> None:
        """Nothing to release (the threads are numba's pool); kept for the Gymnasium API."""

    # ------------------------------------------------------------------ helpers

    def _table_seeds(self, seed: Any) -> np.ndarray:
        """``reset``'s per-table seeds as int64 (N,), checked: N ints in [0, 2**63)."""
        arr = np.asarray(seed)
        if (arr.shape != (self.num_envs,) or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer)
                or (arr < 0).any() or (arr.dtype == np.uint64 and (arr >= 2**63).any())):
            raise ValueError(f"seed must be an int >= 0, None, or {self.num_envs} ints in [0, 2**63) "
                             f"(one per table), got {seed!r}")
        return arr.astype(np.int64)

    def _check(self, actions: Any, tables: np.ndarray) -> np.ndarray:
        """Validate the listed tables' actions before any table is stepped."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be an int array of shape ({self.num_envs},), "
                             f"got {a.dtype} {a.shape}")
        a = a.astype(np.int64)
        mask = self.backend.mask
        j = _first_illegal(a, tables, mask)
        if j >= 0:
            t = int(tables[j])
            layout = self.backend.layout
            name = layout.name(int(a[t])) if 0 <= a[t] < mask.shape[1] else "outside the action space"
            legal = ", ".join(f"{x} ({layout.name(x)})" for x in np.flatnonzero(mask[t]))
            raise IllegalActionError(
                f"table {t}: illegal action {int(a[t])} ({name}) for seat {int(self.backend.seat[t])}; "
                f"legal: {legal}; no table was stepped")
        return a

    def _out(self) -> dict[str, np.ndarray]:
        if self.copy:
            return {"observation": self._obs.copy(), "action_mask": self.backend.mask.copy()}
        return {"observation": self._obs, "action_mask": self.backend.mask}
