"""The batched env of :mod:`mjenv.vector`: seeding, episodes, autoreset, validation and threads,
shared by every game backend (:mod:`.backend`). ``docs/vector.md`` is the guide. Rule IDs:
docs/rules-blood-battle.md, docs/rules-joy-mahjong.md.

======================  =====================================================================
Make                    ``mjenv.vector.make(game, num_envs, num_threads=1, copy=True,
                        final_observations=False, **options)``; ``options``: the AEC env's (preset,
                        mode, room, rule fields, match_hands, illegal_action, observation_dtype)
Reset                   ``obs, info = reset(seed=s)``: table i plays what ``raw_env`` plays after
                        ``reset(seed=s+i)`` and unseeded resets after each episode; ``seed`` may be
                        N ints, one per table (``reset(seed=s[i])``)
Observation             ``{"observation": float32 (N, *obs_shape), "action_mask": int8 (N, A)}``
                        of the seat to act at each table (``info["seat"]``), the AEC encoder's values;
                        ``observation_dtype="uint8"``: the AEC env's uint8 planes
Step                    ``step(actions, active=None)``: int (N,), one per table; ``active`` limits
                        the tables that play (the others wait)
Rewards                 float32 (N, 4): every seat's bean change from this step (``raw_env.rewards``)
Episode end             ``terminated[i]``; same-step autoreset (``autoreset_mode``, also in
                        ``metadata``): ``obs[i]`` is the next episode's first decision;
                        ``info["beans"]``, ``info["end_reason"]``, ``info["won"]`` and the
                        backend's win fields (``win_from``, ``fan`` ...) where ``info["_final"]``;
                        ``final_observations=True``: ``info["final_obs"][i]``, every seat's view of
                        the finished table ``(4, *obs_shape)``; never truncated
Rule options            ``escape`` (S16, J11): ESCAPE is the last action; ``info["escaped"]`` bool
                        (N, 4), ``end_reason`` ``"escape"``, blood battle ``info["penalty"]`` (扣豆
                        paid); ``bankroll`` (B4): ``info["balances"]`` int64 (N, 4) after the
                        episode, carried over its hands; ``info["match_end"]`` ``"hands"`` or
                        ``"min_beans"`` (a seat below ``min_beans`` ended the match)
State                   ``state(tables=None)``: float32 (N, *state_shape), the AEC env's ``state()``
                        (of the listed tables only, given ``tables``)
Buffers                 ``copy=False``: the returned obs/mask arrays are reused by the next step
Illegal actions         ``illegal_action`` as in the AEC env: ``"raise"`` (default): IllegalActionError
                        naming the table, the action and the legal ones, no table is stepped;
                        ``"first_legal"``: the lowest legal action instead; ``"terminate"``: that
                        table's episode ends, its seat gets ``illegal_reward``; both set
                        ``info["illegal_action"]``
Bad input               a clear error before anything changes: wrong shapes or types, reset options
                        other than the game's script keys, ``state()`` before ``reset``
Threads                 ``num_threads=k``: each step splits the tables into k parts played at
                        once on numba's thread pool (one compiled call); results do not depend on k
======================  =====================================================================

Version history: v0 (mjenv 0.1.0) first release, blood battle and Joy Mahjong backends; per-table
seeds in ``reset`` and the hand's win fields in ``info`` (for the duplicate arena); threads that
speed up (one state view per thread, compiled dealing), the same games as before; the threads'
parts run in one compiled call on numba's pool instead of a Python thread pool (two threads
1.5x -> 1.7x at 1,024 tables), the same games as before; ``illegal_action`` honoured,
``observation_dtype``, ``final_observations``, ``autoreset_mode`` declared, reset options checked;
the rule options ``escape`` and ``bankroll`` (off by default: the default games unchanged).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from numba import njit

from ..engine.core import IllegalActionError
from . import seeding
from .backend import END_REASONS, Backend
from .encoding.quantize import quantize_rows

__all__ = ["IllegalActionError", "VectorEnv"]

_END_NAMES = np.array(END_REASONS, dtype=object)
ILLEGAL_END = "illegal_action"
"""``info["end_reason"]`` of an episode ended by ``illegal_action="terminate"`` (as the AEC env)."""


@njit(cache=True, nogil=True)
def _illegal(actions: np.ndarray, tables: np.ndarray, mask: np.ndarray, out: np.ndarray) -> int:
    """``out[j]``: ``actions[tables[j]]`` is outside ``mask``'s row; returns how many are."""
    n = 0
    for j in range(len(tables)):
        a = actions[tables[j]]
        out[j] = a < 0 or a >= mask.shape[1] or mask[tables[j], a] == 0
        n += out[j]
    return n


class VectorEnv:
    """``num_envs`` tables of one game played in lockstep; see ``docs/vector.md``.

    ``reset``/``step`` return ``obs = {"observation": (N, *obs_shape), "action_mask": int8 (N, A)}``
    for the seat to act at each table (``info["seat"]``). With ``copy=False`` the returned arrays
    are the env's own buffers, overwritten by the next ``step``/``reset``.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}
    autoreset_mode = AutoresetMode.SAME_STEP
    """A step that ends a table's episode already returns the next episode's first decision."""

    def __init__(self, backend: Backend, num_threads: int = 1, copy: bool = True,
                 final_observations: bool = False) -> None:
        self.backend = backend
        self.num_envs = n = backend.num_envs
        self.num_threads = min(num_threads, n)
        self.copy, self.final_observations = copy, final_observations
        self.match_hands = backend.match_hands
        self.illegal_action, self.illegal_reward = backend.illegal_action, backend.illegal_reward
        self.observation_dtype = backend.observation_dtype
        self.single_action_space = spaces.Discrete(backend.n_actions)
        self.single_observation_space = spaces.Dict({
            "observation": backend.observation_bounds,
            "action_mask": spaces.Box(0, 1, (backend.n_actions,), np.int8)})
        self.state_shape = backend.state_shape
        self._obs = np.zeros((n, *backend.obs_shape), dtype=np.float32)  # what the encoders write
        self._obs_out = self._obs if self.observation_dtype == "float32" else np.zeros(self._obs.shape, np.uint8)
        self._codec = backend.observer.uint8_codec
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
        ``options`` with the AEC env's script keys (blood battle ``wall``, ``dealer``; Joy Mahjong
        also ``prevailing_wind``) scripts every table's first hand, as the AEC env's
        ``reset(options=...)``; any other key is refused."""
        script = self._checked_options(options)
        if seed is None:  # fresh entropy, as if each table had been given a seed of its own
            seeds = np.random.default_rng().integers(2**63, size=self.num_envs)
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            if not 0 <= seed <= 2**63 - self.num_envs:
                raise ValueError(f"seed must be an int in [0, 2**63 - num_envs] or None, got {seed!r}")
            seeds = int(seed) + self._all
        else:
            seeds = self._table_seeds(seed)
        # The backend checks a script before it deals any table: bad options change nothing.
        self.backend.start_hands(self._all, seeds, np.zeros(self.num_envs, dtype=np.int64), script)
        self._streams, self._hand_seed[:] = seeding.streams(seeds), seeds
        self._hand_index[:] = 0
        self._episode_beans[:] = 0
        self._ready = True
        self._observe(self._all)
        return self._out(), {"seat": self.backend.seat.astype(np.int64)}

    def step(self, actions: Any, active: np.ndarray | None = None
             ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per table for its seat to act; finished episodes restart at once.

        ``active`` (bool (N,), default all): only these tables play; the others keep waiting on
        the same decision (their actions are ignored, their rewards are 0).
        """
        self._require_reset("step")
        tables = self._all if active is None else self._active_tables(active)
        actions, illegal = self._check(actions, tables)
        info: dict[str, Any] = {}
        penalised = np.zeros(0, dtype=np.int64)
        if illegal is not None:
            info["illegal_action"] = np.zeros(self.num_envs, dtype=np.bool_)
            info["illegal_action"][tables[illegal]] = True
            if self.illegal_action == "terminate":
                penalised, tables = tables[illegal], tables[~illegal]
        b = self.backend
        self._delta[:] = 0
        # One compiled call (split over the threads): play and observe the tables whose hand goes on.
        ended = np.zeros(self.num_envs, dtype=np.bool_)
        ended[tables] = b.step(actions, tables, self._delta, self._obs)
        rewards = self._delta.astype(np.float32)
        self._episode_beans += self._delta
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        done = np.flatnonzero(ended)
        over = np.zeros(0, dtype=np.int64)
        if len(done):  # a few tables per step: deal their next hand here, on this thread
            result = b.hand_result(done)
            self._hand_index[done] += 1
            last = self._hand_index[done] >= self.match_hands  # the episode's last hand ended
            short = None
            if b.keeps_balances:  # B4 场次下限: a seat below min_beans ends the match after its hand
                short = ~last & (result["balances"] < b.rules.min_beans).any(axis=1)
                last |= short
            over = done[last]
            if len(over):
                self._record_ends(info, over, _END_NAMES[result.pop("end_reason")[last]],
                                  {key: value[last] for key, value in result.items()},
                                  None if short is None else np.where(short[last], "min_beans", "hands"))
        if len(penalised):  # illegal_action="terminate": the episode ends where the hand stands
            rewards[penalised, b.seat[penalised]] = self.illegal_reward
            result = b.hand_result(penalised)
            del result["end_reason"]
            self._record_ends(info, penalised, np.full(len(penalised), ILLEGAL_END, dtype=object), result,
                              np.full(len(penalised), "", dtype=object) if b.keeps_balances else None)
            self._hand_index[penalised] = 0
        for t in (over, penalised):
            terminated[t] = True
        finished = np.concatenate([over, penalised])
        if len(finished):
            self._episode_beans[finished] = 0
            self._hand_index[over] = 0
            seeding.next_seeds(self._streams, finished, self._hand_seed)  # the AEC env's unseeded reset()
        redeal = np.union1d(done, penalised)
        if len(redeal):
            b.start_hands(redeal, self._hand_seed[redeal], self._hand_index[redeal])
            b.observe(redeal, self._obs)
        self._quantize(np.union1d(tables, penalised))
        info["seat"] = b.seat.astype(np.int64)
        return self._out(), rewards, terminated, np.zeros(self.num_envs, dtype=np.bool_), info

    def state(self, tables: Any = None) -> np.ndarray:
        """float32 (N, *state_shape): every table's perfect-information state (the AEC ``state()``);
        with ``tables`` (ints in [0, N)), only those tables' states, in that order."""
        self._require_reset("state")
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

    def observe_seats(self, tables: Any, seats: Any) -> np.ndarray:
        """``(len(tables), *obs_shape)``: what seat ``seats[j]`` of table ``tables[j]`` observes now
        (any seat, not only the one to act), in the env's ``observation_dtype``."""
        self._require_reset("observe_seats")
        tables, seats = np.asarray(tables, dtype=np.int64), np.asarray(seats, dtype=np.int64)
        if tables.shape != seats.shape or tables.ndim != 1 or ((tables < 0) | (tables >= self.num_envs)).any() \
                or ((seats < 0) | (seats > 3)).any():
            raise ValueError("tables and seats must be 1-d arrays of the same length: table indices in "
                             f"[0, {self.num_envs}) and seats 0-3")
        return self._observe_seats(tables, seats)

    @property
    def episode_seeds(self) -> np.ndarray:
        """int64 (N,): each table's episode seed, a copy: the seed ``raw_env.reset(seed=...)`` deals
        the table's current episode from (its first hand's; per-episode draws hash it); 0 before ``reset``."""
        return self._hand_seed.copy()

    def action_masks(self) -> np.ndarray:
        """int8 (N, A): the legal actions of each table's seat to act."""
        self._require_reset("action_masks")
        return self.backend.mask.copy()

    def close(self) -> None:
        """Nothing to release (the threads are numba's pool); kept for the Gymnasium API."""

    # ------------------------------------------------------------------ helpers

    def _require_reset(self, method: str) -> None:
        if not self._ready:
            raise RuntimeError(f"call reset() before {method}()")

    def _checked_options(self, options: Any) -> dict[str, Any]:
        """``reset``'s options: None or a mapping of the game's script keys (checked by the backend)."""
        if options is None:
            return {}
        if not isinstance(options, Mapping):
            raise TypeError(f"reset options must be a dict or None, got {type(options).__name__} {options!r}")
        unknown = sorted(map(str, set(options) - set(self.backend.script_keys)))
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; {self.backend.game} takes "
                             f"{list(self.backend.script_keys)} (they script every table's first hand)")
        return dict(options)

    def _active_tables(self, active: Any) -> np.ndarray:
        active = np.asarray(active)
        if active.shape != (self.num_envs,) or active.dtype != np.bool_:
            raise ValueError(f"active must be a bool array of shape ({self.num_envs},), got {active.dtype} {active.shape}")
        return np.flatnonzero(active)

    def _record_ends(self, info: dict[str, Any], over: np.ndarray, reasons: np.ndarray,
                     fields: dict[str, np.ndarray], match_end: np.ndarray | None) -> None:
        """The info of the episodes that ended at tables ``over``: beans, end reason, the last hand's
        fields (as the hand stands, for a table ended by an illegal action), with balances kept
        the ``match_end`` (``hands``, ``min_beans``; "" after an illegal action) and, if asked,
        every seat's view."""
        n = self.num_envs
        if "_final" not in info:
            info.update(beans=np.zeros((n, 4), dtype=np.int64), end_reason=self._no_reason.copy(),
                        _final=np.zeros(n, dtype=np.bool_))
            if self.backend.keeps_balances:
                info["match_end"] = self._no_reason.copy()
        info["beans"][over] = self._episode_beans[over]
        info["end_reason"][over] = reasons
        if match_end is not None:
            info["match_end"][over] = match_end
        info["_final"][over] = True
        for key, value in fields.items():  # "won" and the backend's other fields of the last hand
            if key not in info:
                info[key] = np.zeros((n, *value.shape[1:]), dtype=value.dtype)
            info[key][over] = value
        if self.final_observations:
            if "final_obs" not in info:
                info.update(final_obs=np.full(n, None, dtype=object), _final_obs=np.zeros(n, dtype=np.bool_))
            views = self._observe_seats(np.repeat(over, 4), np.tile(np.arange(4), len(over)))
            for j, t in enumerate(over):
                info["final_obs"][t] = views[4 * j : 4 * j + 4]
            info["_final_obs"][over] = True

    def _observe_seats(self, tables: np.ndarray, seats: np.ndarray) -> np.ndarray:
        out = np.zeros((len(tables), *self._obs.shape[1:]), dtype=np.float32)
        self.backend.observe_seats(tables, seats, out)
        if self.observation_dtype == "float32":
            return out
        u8 = np.zeros(out.shape, dtype=np.uint8)
        quantize_rows(out, np.arange(len(out), dtype=np.int64), *self._codec, u8)
        return u8

    def _observe(self, tables: np.ndarray) -> None:
        self.backend.observe(tables, self._obs)
        self._quantize(tables)

    def _quantize(self, tables: np.ndarray) -> None:
        """The uint8 form of the listed tables' new observations (nothing to do for float32)."""
        if self._obs_out is not self._obs:
            quantize_rows(self._obs, tables, *self._codec, self._obs_out)

    def _table_seeds(self, seed: Any) -> np.ndarray:
        """``reset``'s per-table seeds as int64 (N,), checked: N ints in [0, 2**63)."""
        arr = np.asarray(seed)
        if (arr.shape != (self.num_envs,) or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer)
                or (arr < 0).any() or (arr.dtype == np.uint64 and (arr >= 2**63).any())):
            raise ValueError(f"seed must be an int >= 0, None, or {self.num_envs} ints in [0, 2**63) "
                             f"(one per table), got {seed!r}")
        return arr.astype(np.int64)

    def _check(self, actions: Any, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The listed tables' actions, checked before any table is stepped: ``(actions, illegal)``,
        ``illegal`` a bool array over ``tables`` (None when all are legal). ``raise`` mode raises
        for the first illegal one; ``first_legal`` replaces them by the lowest legal action."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be an int array of shape ({self.num_envs},), "
                             f"got {a.dtype} {a.shape}")
        a = a.astype(np.int64)  # a copy: first_legal may change it
        mask = self.backend.mask
        illegal = np.zeros(len(tables), dtype=np.bool_)
        if _illegal(a, tables, mask, illegal) == 0:
            return a, None
        if self.illegal_action == "raise":
            t = int(tables[np.argmax(illegal)])
            layout = self.backend.layout
            name = layout.name(int(a[t])) if 0 <= a[t] < mask.shape[1] else "outside the action space"
            legal = ", ".join(f"{x} ({layout.name(x)})" for x in np.flatnonzero(mask[t]))
            raise IllegalActionError(
                f"table {t}: illegal action {int(a[t])} ({name}) for seat {int(self.backend.seat[t])}; "
                f"legal: {legal}; no table was stepped (or make the env with illegal_action="
                "'first_legal' or 'terminate' for a sampler that ignores the mask)")
        if self.illegal_action == "first_legal":
            bad = tables[illegal]
            a[bad] = mask[bad].argmax(axis=1)
        return a, illegal

    def _out(self) -> dict[str, np.ndarray]:
        if self.copy:
            return {"observation": self._obs_out.copy(), "action_mask": self.backend.mask.copy()}
        return {"observation": self._obs_out, "action_mask": self.backend.mask}
