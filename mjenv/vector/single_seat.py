"""``SingleSeatView``: one learning seat per table of a batched env against opponent policies, the
episode rules of every single-seat toolkit view written once (``docs/vector.md#single-seat-view``).

The Gymnasium, Stable-Baselines3, TorchRL and RLlib single-seat envs (:mod:`mjenv.integrations`)
adapt this view to their APIs (spaces, autoreset modes, info masks); the rules below are its own.

=====================  ======================================================================
Make                   ``SingleSeatView(venv, opponents, *, seat=0, observation_dtype="float32")``
                       over ``venv = mjenv.vector.make(game, n, backend=..., copy=False,
                       final_observations=True, **options)`` (either backend)
Opponents              resolved policies: one object with ``act_batch(observations,
                       action_masks, rng)`` or a list of three (opponent ``k`` sits ``k + 1``
                       seats after the learner), or a lineup table (``policies``, ``lineup``
                       ``(N, 3)``, ``draw(tables, episode_seeds)``) such as
                       :class:`mjenv.integrations.opponents.Lineups` builds from names and
                       mixtures. Each distinct policy is called once per engine step over every
                       table where one of its seats is to act, on float32 planes
Seat                   0-3, or ``"random"``: drawn once per episode from its seed
                       (:func:`uniform_from_seed`)
Observation            ``(N, *obs_shape)`` of the learner's seat, float32 or uint8
                       (``observation_dtype``: quantised here, once; the engine and the
                       opponents read float32)
Step                   ``step(actions, active=None) -> obs, reward, terminated, info, final``:
                       the learner's action at every ``active`` table, then the opponents up to
                       its next decision; same-step autoreset (a finished table already shows
                       its next episode's first decision)
Reward                 float32 ``(N,)``: the learner's bean change from its decision up to its
                       next one (beans before its first decision of an episode count with that
                       decision)
Info                   ``action_mask`` int8 ``(N, A)``, ``seat`` ``(N,)`` (the current episodes'),
                       ``illegal_action`` (on a step with one, the learner's)
Final                  on a step where episodes end, else ``{}``: ``_final`` bool ``(N,)`` and,
                       valid where it is set, ``beans`` ``(N, 4)``, ``end_reason``, ``won``,
                       ``seat``, ``skipped_hands``, ``final_obs`` (the learner's last view, a
                       buffer the next ending overwrites); with the rule options ``escaped``,
                       ``penalty``, ``balances``, ``item_uses`` (the last hand's), and with
                       ``bankroll`` ``skipped_beans``
=====================  ======================================================================

**Skipped hands.** A hand can end before the learner is asked (a win on the dealer's first
discard; escapes). Without ``bankroll`` it is merged into the table's next episode, which keeps the
seat and the opponents of the skipped hand: its rewards count the skipped hand's beans, ``beans``
is the sum over its hands, ``skipped_hands`` counts the merged ones. With ``bankroll`` each hand
starts from the bankroll (B4, docs/rules-blood-battle.md), so a merged episode could lose more
than it holds: the skipped hand is left out (its rewards dropped) and the next episode reports it
in ``skipped_hands`` and ``skipped_beans`` (their bean tables, summed). Either way an episode's
rewards sum to ``beans[seat]``, and with ``bankroll`` ``balances == bankroll + beans``.

**Seeding.** ``reset(seed=s)`` deals as ``venv.reset(seed=s)`` (table ``i``: the AEC env's
``reset(seed=s + i)``); the opponents draw from ``default_rng(s)``. The same seed and actions give
the same episodes on either backend.

**Failures.** An opponent's illegal action raises ``IllegalActionError`` naming it; after an
opponent failed mid-turn the view refuses to step until ``reset``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces

from ..encoding import check_observation_dtype
from ..engine.core import N_SEATS, IllegalActionError
from .crediting import Ledger
from .encoding.quantize import quantize_rows
from .env import VectorEnv

__all__ = ["SingleSeatView", "seat_option", "uniform_from_seed"]

N_OPPONENTS = 3
SEAT_SALT = 0x5EA7
"""The salt of the per-episode seat draw (``seat="random"``)."""
MAX_SKIPPED = 1000  # hands in a row that end before the learning seat acts: surely a bug
FINAL_FIELDS = ("beans", "end_reason", "won", "seat", "skipped_hands", "skipped_beans", "escaped", "penalty",
                "balances", "item_uses")
"""The fields of a finished episode, in this order (the last five with the rule options only)."""
_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 of uint64 values: a cheap, well-mixed hash (per-episode draws from a seed)."""
    z = (x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)) & _MASK64
    z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _MASK64
    z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _MASK64
    return z ^ (z >> np.uint64(31))


def uniform_from_seed(seeds: np.ndarray, salt: int) -> np.ndarray:
    """float64 in [0, 1) per seed: a pure function of (seed, salt)."""
    with np.errstate(over="ignore"):
        h = splitmix64(splitmix64(np.asarray(seeds, dtype=np.int64).view(np.uint64)) ^ np.uint64(salt))
    return (h >> np.uint64(11)).astype(np.float64) / float(2**53)


def seat_option(seat: Any) -> int | str:
    """``seat`` checked: an int 0-3 or ``"random"``."""
    if not (seat == "random" or (isinstance(seat, (int, np.integer)) and not isinstance(seat, (bool, np.bool_))
                                 and 0 <= seat < N_SEATS)):
        raise ValueError(f"seat must be 0-{N_SEATS - 1} or 'random', got {seat!r}")
    return seat if seat == "random" else int(seat)


class FixedLineups:
    """The same resolved policies at every table: ``policies`` and the ``lineup`` ``(N, 3)`` of
    indices into them (what :class:`SingleSeatView` reads of a lineup table)."""

    def __init__(self, policies: Any, num_envs: int) -> None:
        seats = list(policies) if isinstance(policies, (list, tuple)) else [policies] * N_OPPONENTS
        if len(seats) != N_OPPONENTS or not all(hasattr(p, "act_batch") for p in seats):
            raise TypeError("opponents must be a lineup table (policies, lineup, draw), one policy with "
                            f"act_batch or a list of {N_OPPONENTS}; got {policies!r}"[:300])
        self.policies: list[Any] = []
        index: dict[int, int] = {}  # one entry per distinct policy object
        for p in seats:
            if id(p) not in index:
                index[id(p)] = len(self.policies)
                self.policies.append(p)
        self.lineup = np.tile(np.array([index[id(p)] for p in seats], dtype=np.int64), (num_envs, 1))

    def draw(self, tables: np.ndarray, episode_seeds: np.ndarray) -> None:
        """Nothing to draw: every table plays the same lineup."""


def _lineups(opponents: Any, num_envs: int) -> Any:
    """A lineup table from ``opponents`` (one already, or resolved policies), checked against ``num_envs``."""
    if not all(hasattr(opponents, key) for key in ("policies", "lineup", "draw")):
        return FixedLineups(opponents, num_envs)
    if np.shape(opponents.lineup) != (num_envs, N_OPPONENTS):
        raise ValueError(f"the opponents' lineup must have shape ({num_envs}, {N_OPPONENTS}), "
                         f"got {np.shape(opponents.lineup)}")
    return opponents


class SingleSeatView:
    """One learning seat per table of ``venv`` against ``opponents``; see the module docstring."""

    def __init__(self, venv: VectorEnv, opponents: Any, *, seat: int | str = 0,
                 observation_dtype: str = "float32") -> None:
        if not isinstance(venv, VectorEnv) or not venv.final_observations or venv.observation_dtype != "float32":
            raise ValueError("SingleSeatView plays a mjenv.vector.make(...) env made with final_observations=True "
                             "and float32 observations (the opponents read float32; the view quantises)")
        self.venv = venv
        self.num_envs = n = venv.num_envs
        self.seat_option = seat_option(seat)
        self.observation_dtype = check_observation_dtype(observation_dtype)
        self.opponents = _lineups(opponents, n)
        self.observer = venv.backend.observer
        """The encoder of the observations (``describe_observation(obs[i], view.observer)``)."""
        if self.observation_dtype == "uint8":
            self.single_observation_space = spaces.Box(*self.observer.uint8_bounds(), dtype=np.uint8)
        else:
            self.single_observation_space = spaces.Box(*self.observer.bounds(), dtype=np.float32)
        self.single_action_space = venv.single_action_space
        # With bankroll every engine episode starts from the bankroll (B4): a skipped hand cannot
        # join the next one (its return would exceed the bankroll), so it is left out instead.
        self.merges_skipped = not venv.backend.keeps_balances
        """Whether a hand that ends before the learner acts is merged into the next episode (no bankroll)."""
        self.final_obs = np.zeros((n, *self.single_observation_space.shape), dtype=self.single_observation_space.dtype)
        """Row ``i``: the learner's last view of table ``i``'s latest finished episode."""
        self._codec = self.observer.uint8_codec
        self._all = np.arange(n, dtype=np.int64)
        self._rng = np.random.default_rng()
        self._seat = np.zeros(n, dtype=np.int64)
        self._acted = np.zeros(n, dtype=np.bool_)  # the learner acted in the table's current hand
        self._ledger = Ledger(n)  # the beans not yet paid (the learner's column is its reward)
        self._merged = np.zeros((n, N_SEATS), dtype=np.int64)  # beans of the hands skipped before the episode
        self._skipped = np.zeros(n, dtype=np.int64)
        self._engine: dict[str, np.ndarray] = {}  # the engine's last obs (its own buffers: copy=False)
        self._failure: str | None = None

    # ------------------------------------------------------------------ API

    def reset(self, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every table (the engine's seeding) and play the opponents up to the learner's turn.
        ``options`` script every table's first hand (the AEC env's ``wall``, ``dealer`` ...)."""
        self._engine, _ = self.venv.reset(seed=seed, options=options)
        self._rng = np.random.default_rng(seed if isinstance(seed, (int, np.integer)) else None)
        self._acted[:] = False
        self._ledger.clear()
        self._merged[:] = 0
        self._skipped[:] = 0
        self._failure = None
        self._new_episodes(self._all)
        self._advance_or_fail(np.zeros(self.num_envs, dtype=np.float64), {})  # hands end here only skipped
        return self.observations(), self._info()

    def step(self, actions: Any, active: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any], dict[str, Any]]:
        """The learner's action at every ``active`` table (bool ``(N,)``, default all; the others
        wait on the same decision, reward 0), then the opponents up to its next decision."""
        if not self.ready:
            raise RuntimeError("call reset() before step()")
        if self._failure is not None:
            raise RuntimeError(f"a previous step failed ({self._failure}); the tables are mid-turn: call reset()")
        n = self.num_envs
        playing = np.ones(n, dtype=np.bool_) if active is None else self.check_active(active)
        reward = np.zeros(n, dtype=np.float64)
        final: dict[str, Any] = {}
        illegal = None
        if playing.any():
            acts = np.asarray(actions)
            if acts.shape != (n,) or not np.issubdtype(acts.dtype, np.integer):
                raise ValueError(f"actions must be an int array of shape ({n},), got {acts.dtype} {acts.shape}")
            self._engine, rewards, term, _, info = self.venv.step(np.where(playing, acts, 0), playing)
            self._acted |= playing  # the learner: the engine's illegal_action applies
            self._ledger.receive(rewards)
            illegal = info.get("illegal_action")
            self._ends(term, info, reward, final)
            self._advance_or_fail(reward, final)
        terminated = final["_final"].copy() if final else np.zeros(n, dtype=np.bool_)
        going_on = np.flatnonzero(playing & ~terminated)  # an ended table's ledger holds its next episode's
        reward[going_on] = self._ledger.pay(going_on, self._seat[going_on])
        return self.observations(), reward.astype(np.float32), terminated, self._info(illegal), final

    def observations(self) -> np.ndarray:
        """``(N, *obs_shape)``: the learner's current view at every table, in ``observation_dtype`` (a new array)."""
        return self._convert(self._engine["observation"])

    def planes(self) -> np.ndarray:
        """float32 ``(N, *obs_shape)``: the learner's current views as the engine wrote them (its
        buffer, overwritten by the next step)."""
        return self._engine["observation"]

    def action_masks(self) -> np.ndarray:
        """int8 ``(N, A)``: the learner's legal actions at every table (a copy)."""
        if not self.ready:
            raise RuntimeError("call reset() before action_masks()")
        return self._engine["action_mask"].copy()

    @property
    def ready(self) -> bool:
        """Whether a ``reset`` has dealt the tables (``step`` needs one)."""
        return bool(self._engine)

    @property
    def seat(self) -> np.ndarray:
        """int64 ``(N,)``: the learner's seat in each table's current episode (a copy)."""
        return self._seat.copy()

    def set_opponents(self, opponents: Any) -> None:
        """New opponents (resolved policies or a lineup table) from their next decision on; a
        lineup table draws the current episodes' lineups from their seeds."""
        lineups = _lineups(opponents, self.num_envs)
        lineups.draw(self._all, self.venv.episode_seeds)
        self.opponents = lineups

    def close(self) -> None:
        self.venv.close()

    # ------------------------------------------------------------------ helpers

    def check_active(self, active: Any) -> np.ndarray:
        """``step``'s ``active``, checked: a bool array with one entry per table."""
        active = np.asarray(active)
        if active.shape != (self.num_envs,) or active.dtype != np.bool_:
            raise ValueError(f"active must be a bool array of shape ({self.num_envs},), got {active.dtype} {active.shape}")
        return active

    def _new_episodes(self, tables: np.ndarray) -> None:
        """Seats and lineups of the listed tables' new episodes, from their episode seeds."""
        seeds = self.venv.episode_seeds[tables]
        if self.seat_option == "random":
            self._seat[tables] = (uniform_from_seed(seeds, SEAT_SALT) * N_SEATS).astype(np.int64)
        else:
            self._seat[tables] = self.seat_option
        self.opponents.draw(tables, seeds)
        self._acted[tables] = False

    def _ends(self, term: np.ndarray, info: dict[str, Any], reward: np.ndarray, final: dict[str, Any]) -> None:
        """Account for the hands that just ended: the learner's episode ends (if it acted in the
        hand), or the hand is skipped (module docstring); then the tables' new episodes."""
        done = np.flatnonzero(term)
        if not len(done):
            return
        real, skipped = done[self._acted[done]], done[~self._acted[done]]
        if len(skipped):
            self._merged[skipped] += info["beans"][skipped]
            self._skipped[skipped] += 1
            if (self._skipped[skipped] >= MAX_SKIPPED).any():
                raise RuntimeError(f"{MAX_SKIPPED} hands in a row ended before the learning seat was asked to act")
            if not self.merges_skipped:  # left out: its rewards are dropped, its beans reported apart
                self._ledger.clear(skipped)
        if len(real):
            reward[real] = self._ledger.settle(real)[np.arange(len(real)), self._seat[real]]
            self._record(real, info, final)
        # A merged hand's episode goes on with its seat and lineup; every other table starts anew.
        self._new_episodes(real if self.merges_skipped else done)

    def _record(self, real: np.ndarray, info: dict[str, Any], final: dict[str, Any]) -> None:
        """The finished episodes' fields into ``final`` (made on the step's first ending)."""
        n = self.num_envs
        if not final:
            final.update(_final=np.zeros(n, dtype=np.bool_), beans=np.zeros((n, 4), dtype=np.int64),
                         end_reason=np.full(n, "", dtype=object), won=np.zeros((n, 4), dtype=np.bool_),
                         seat=np.zeros(n, dtype=np.int64), skipped_hands=np.zeros(n, dtype=np.int64),
                         final_obs=self.final_obs)
            if not self.merges_skipped:
                final["skipped_beans"] = np.zeros((n, 4), dtype=np.int64)
        final["_final"][real] = True
        final["seat"][real] = self._seat[real]
        if self.merges_skipped:
            final["beans"][real] = info["beans"][real] + self._merged[real]
        else:
            final["beans"][real] = info["beans"][real]
            final["skipped_beans"][real] = self._merged[real]
        final["end_reason"][real] = info["end_reason"][real]
        if "won" in info:
            final["won"][real] = info["won"][real]
        final["skipped_hands"][real] = self._skipped[real]
        for key in ("escaped", "penalty", "balances", "item_uses"):  # with the rule options escape, bankroll, items
            if key in info:
                final.setdefault(key, np.zeros_like(info[key]))[real] = info[key][real]
        self._merged[real] = 0
        self._skipped[real] = 0
        views = np.stack([info["final_obs"][t][self._seat[t]] for t in real])
        self.final_obs[real] = self._convert(views)

    def _advance_or_fail(self, reward: np.ndarray, final: dict[str, Any]) -> None:
        """:meth:`_advance`; if an opponent fails mid-turn, the view refuses to step until ``reset``."""
        try:
            self._advance(reward, final)
        except BaseException as e:  # re-raised: the tables wait on opponents, so no step may follow
            self._failure = f"{type(e).__name__}: {e}"[:500]
            raise

    def _advance(self, reward: np.ndarray, final: dict[str, Any]) -> None:
        """Let the opponents act, batched over tables, until every table waits on its learner."""
        lineups = self.opponents
        while True:
            seat_to_act = self.venv.backend.seat
            waiting = seat_to_act != self._seat
            if not waiting.any():
                return
            rows = np.flatnonzero(waiting)
            planes, masks = self._engine["observation"], self._engine["action_mask"]
            pids = lineups.lineup[rows, (seat_to_act[rows] - self._seat[rows] - 1) % N_SEATS]
            actions = np.zeros(self.num_envs, dtype=np.int64)
            for pid in np.unique(pids):
                tables = rows[pids == pid]
                policy = lineups.policies[pid]
                chosen = np.asarray(policy.act_batch(planes[tables], masks[tables], self._rng))
                self._check_opponent(policy, tables, chosen)
                actions[tables] = chosen
            self._engine, rewards, term, _, info = self.venv.step(actions, waiting)
            self._ledger.receive(rewards)
            self._ends(term, info, reward, final)

    def _check_opponent(self, policy: Any, tables: np.ndarray, actions: np.ndarray) -> None:
        """An opponent's actions, strictly: one legal action per table it plays."""
        name = getattr(policy, "name", type(policy).__name__)
        if actions.shape != tables.shape or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"opponent {name!r} returned {actions.dtype} {actions.shape} for {len(tables)} "
                             "tables; act_batch must return one int action per row")
        mask = self._engine["action_mask"]
        ok = (actions >= 0) & (actions < mask.shape[1])
        ok[ok] = mask[tables[ok], actions[ok]] > 0
        if not ok.all():
            j = int(np.argmin(ok))
            t, a = int(tables[j]), int(actions[j])
            legal = ", ".join(str(x) for x in np.flatnonzero(mask[t]))
            raise IllegalActionError(f"opponent {name!r} chose illegal action {a} at table {t} "
                                     f"(seat {int(self.venv.backend.seat[t])}); legal: {legal}; an opponent "
                                     "policy must choose from the mask it is given")

    def _convert(self, planes: np.ndarray) -> np.ndarray:
        """float32 planes in the view's observation dtype (a new array)."""
        if self.observation_dtype == "float32":
            return planes.copy()
        out = np.zeros(planes.shape, dtype=np.uint8)
        quantize_rows(planes, np.arange(len(planes), dtype=np.int64), *self._codec, out)
        return out

    def _info(self, illegal: np.ndarray | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": self._engine["action_mask"].copy(), "seat": self._seat.copy()}
        if illegal is not None:
            info["illegal_action"] = illegal
        return info
