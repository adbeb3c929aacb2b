"""Self-play rollouts: whole hands played by the learning policy and pool snapshots.

A :class:`RolloutWorker` steps ``envs_per_worker`` tables of the config's game in lockstep; the seats that
must act are grouped by the policy sitting there, so each network sees one batch per step. The tables
are one batched env of :mod:`mjenv.vector` (``train/vector_rollout.py``) on the backend ``engine``
names: ``compiled`` (the default) or ``reference`` (the readable engine); both play the same hands
and everything below. Every policy reads observations and masks only (the ``Policy`` protocol), so
no rollout needs the Python game object itself. Every
hand seats the learning policy in one random seat. With probability ``baseline_prob`` the three
other seats are one baseline of ``baseline_opponents`` (e.g. the heuristic); otherwise each is
the learning policy too with probability ``latest_prob``, else a pool snapshot drawn with the
learner's priorities. Every decision of a learning-policy seat is kept; the others' are not.

**Demonstrations** (``collect(..., imitate=True)``, for the imitation warm start): the teacher
(``cfg.teacher``) sits in all four seats and every decision is kept, with log-probability and
value 0.

**Reward crediting** (:func:`credit_rewards`, the specification; the tables get it step by step
from the self-play view's rewards, :class:`~train.vector_rollout.DecisionCredits`): a seat's
reward is the env's bean delta. Beans that reach a seat between its decisions (kong payments, other seats' wins, the final settlement) are
credited to its last decision; beans before its first decision to its first. So each seat's
credited rewards sum to its summed env rewards exactly, and each bean is counted once. A seat
that never decides in a hand (Joy Mahjong: a win before its first turn, e.g. the dealer's 天和)
has nothing to credit: its beans count in the hand's result only.

The batch is returned as flat numpy arrays ordered by (hand, seat, decision), so each seat's
decisions in a hand are contiguous and ``done`` marks the last one: GAE runs over that.
Seeds: a worker's generator for update ``u`` is ``default_rng([seed, u, worker index])``; deals
and sampled actions come from it alone, so a resumed run replays exactly.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np
import torch

from agents.base import Policy
from agents.neural import PolicyValueNet, masked_sample
from agents.registry import load_policy
from mjenv import games

from .config import TrainConfig
from .records import BASELINE, DECISION_FIELDS, LEARNER, N_SEATS, TEACHER, Decisions, Demos, Rollout, Weights
from .vector_rollout import VectorTables


def credit_rewards(actors: Sequence[int], step_rewards: Sequence[Sequence[int]]) -> list[int]:
    """Reward of each decision ``t`` of a hand: the beans its actor receives from step ``t`` up to
    that seat's next decision (from the start of the hand for a seat's first decision)."""
    credited = [0] * len(actors)
    last: list[int | None] = [None] * N_SEATS
    pending = [0] * N_SEATS  # beans a seat received before its first decision
    for t, seat in enumerate(actors):
        if last[seat] is None:
            credited[t] = pending[seat]
        last[seat] = t
        for s, r in enumerate(step_rewards[t]):
            if last[s] is None:
                pending[s] += r
            else:
                credited[last[s]] += r
    # A seat that never decided (a Joy hand won before its first turn) has no decision to credit:
    # its beans stay in the hand's totals (HandSummary.beans) and train nothing.
    return credited


def make_env(cfg: TrainConfig) -> Any:
    """A ``raw_env`` of the config's game with its options."""
    return games.game(cfg.game).raw_env(**cfg.env_options)


def reward_scale(cfg: TrainConfig) -> float:
    """Beans per unit of reward: the config's, or the observation's bean scale (see TrainConfig)."""
    if cfg.reward_scale > 0:
        return cfg.reward_scale
    return make_env(cfg).observer.bean_scale


PER_SEAT_STATE_VIEWS = frozenset({"hands", "chow", "pong", "kong", "ankan", "river", "recent", "won_tile", "void",
                                  "won", "flowers", "dealer", "beans", "current"})
"""The ``state()`` views made of four equal blocks of planes, one per absolute seat."""


def relative_state_index(state_views: dict[str, slice], planes: int) -> np.ndarray:
    """(4, planes) plane indices: row ``s`` reorders ``state()`` so each per-seat view lists seat ``s``,
    then 下家 ``s + 1``, 对家, 上家, as the observation does; the other planes stay where they are."""
    index = np.tile(np.arange(planes), (N_SEATS, 1))
    for name, view in state_views.items():
        if name not in PER_SEAT_STATE_VIEWS:
            continue
        block = (view.stop - view.start) // N_SEATS
        for seat in range(N_SEATS):
            for rel in range(N_SEATS):
                src = view.start + block * ((seat + rel) % N_SEATS)
                index[seat, view.start + block * rel: view.start + block * (rel + 1)] = np.arange(src, src + block)
    return index


def relative_state(states: np.ndarray, seats: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``states`` (N, planes, width) of the seats ``seats`` (N,) in seat-relative order (see
    :func:`relative_state_index`)."""
    return states[np.arange(len(states))[:, None], index[seats]]


def policy_weights(net: PolicyValueNet) -> Weights:
    """The weights a snapshot needs (no oracle critic), as numpy arrays."""
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()
            if not k.startswith("critic_trunk.")}


def all_weights(net: PolicyValueNet) -> Weights:
    """Every weight of the network as numpy arrays (for the workers' copy of the learner)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def _load(net: PolicyValueNet, weights: Weights) -> None:
    """Copy numpy weights into a network (they may be read-only, as Ray's object store hands them out)."""
    net.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})


class RolloutWorker:
    """Plays whole hands and returns the learning policy's decisions (see the module docstring)."""

    def __init__(self, cfg: TrainConfig, index: int, torch_threads: int | None = None) -> None:
        if torch_threads is not None:
            torch.set_num_threads(torch_threads)
        self.cfg, self.index = cfg, index
        self.bf16 = cfg.rollout_dtype == "bfloat16"
        self.scale = reward_scale(cfg)
        probe = make_env(cfg)
        self.agents = probe.possible_agents
        self.obs_shape = probe.observation_space(self.agents[0])["observation"].shape
        self.n_actions = int(probe.action_space(self.agents[0]).n)
        state_planes = probe.observer.state_planes if cfg.oracle_critic else 0
        self.arch = {"obs_planes": probe.observer.planes, "channels": cfg.channels, "blocks": cfg.blocks,
                     "lookahead": cfg.lookahead, "game": cfg.game, "escape": probe.rules.escape,
                     "items": getattr(probe.rules, "items", None) is not None}
        # The blood battle's look-ahead planes value waits with this env's rules (Joy's need none).
        self.rules = probe.rules if cfg.lookahead and cfg.game == "blood_battle" else None
        self.net = PolicyValueNet(**self.arch, state_planes=state_planes, rules=self.rules).eval()
        self.snapshots: dict[int, PolicyValueNet] = {}
        self.fixed: dict[int, Policy] = {BASELINE - i: load_policy(name, cfg.game)
                                         for i, name in enumerate(cfg.baseline_opponents)}
        self.relative = (relative_state_index(probe.observer.state_views, probe.observer.state_planes)
                         if cfg.oracle_seat_relative else None)
        self.demos: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # this collection's, for bc_coef
        self.tables = VectorTables(cfg)

    def lineup(self, rng: np.random.Generator, pool_ids: np.ndarray, imitate: bool) -> list[int]:
        """Who sits where in a new hand (see the module docstring)."""
        me = int(rng.integers(N_SEATS))
        if imitate:
            return [TEACHER] * N_SEATS
        n_baselines = len(self.cfg.baseline_opponents)
        if n_baselines and rng.random() < self.cfg.baseline_prob:
            rival = BASELINE - int(rng.integers(n_baselines))
            return [LEARNER if s == me else rival for s in range(N_SEATS)]
        return [LEARNER if s == me or pool_ids.size == 0 or rng.random() < self.cfg.latest_prob
                else int(rng.choice(pool_ids)) for s in range(N_SEATS)]

    def decide(self, pid: int, kept: int, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator,
               states: Callable[[], np.ndarray], seats: np.ndarray) -> Decisions:
        """The actions of policy ``pid`` for a batch of its seats ``seats``: one forward pass (or one
        ``act_batch``); ``states()`` gives the batch's ``env.state()`` planes when the oracle critic
        needs them. A baseline's decisions are also kept in :attr:`demos` when ``bc_coef`` > 0."""
        state = None
        if self.net.oracle:
            states = self._oracle_states(states, seats)
        if pid in self.fixed:
            actions = self.fixed[pid].act_batch(obs, mask, rng)
            logp = value = np.zeros(len(obs), dtype=np.float32)
            if pid == kept:  # demonstrations are stored as the network's inputs
                obs = self.net.prepare(obs)
            elif self.cfg.bc_coef > 0:
                self.demos.append((self.net.prepare(obs), mask, np.asarray(actions, dtype=np.int64)))
        else:
            obs = self.net.prepare(obs)  # snapshots share the learner's architecture
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
                if pid == LEARNER:
                    state = states() if self.net.oracle else None
                    logits_t, value_t = self.net(torch.from_numpy(obs), torch.from_numpy(mask),
                                                 None if state is None else torch.from_numpy(state))
                    value = value_t.float().numpy()
                else:
                    logits_t = self.snapshots[pid].logits(torch.from_numpy(obs), torch.from_numpy(mask))
                    value = np.zeros(len(obs), dtype=np.float32)
            logits_t = logits_t.float()  # bfloat16 under rollout_dtype; sampled and scored in float32
            actions = masked_sample(logits_t.numpy(), rng)
            logp = torch.log_softmax(logits_t, dim=1).numpy()[np.arange(len(obs)), actions]
        if pid == kept and self.net.oracle and state is None:  # demonstrations for an oracle critic
            state = states()
        return dict(zip(DECISION_FIELDS, (obs, mask, state, np.asarray(actions, dtype=np.int64), logp, value)))

    def _oracle_states(self, states: Callable[[], np.ndarray], seats: np.ndarray) -> Callable[[], np.ndarray]:
        """``states`` as the oracle critic reads them: seat-relative with ``oracle_seat_relative``."""
        if self.relative is None:
            return states
        return lambda: relative_state(states(), seats, self.relative)

    def _take_demos(self) -> Demos | None:
        """This collection's baseline decisions (``bc_coef`` > 0), emptying the buffer."""
        if self.cfg.bc_coef == 0:
            return None
        parts, self.demos = self.demos, []
        if not parts:
            planes = self.net.prepare(np.zeros((0, *self.obs_shape), dtype=np.float32))
            return Demos(planes, np.zeros((0, self.n_actions), dtype=np.bool_), np.zeros(0, dtype=np.int64))
        return Demos(*(np.concatenate(column) for column in zip(*parts)))

    def collect(self, update: int, weights: Weights, new_snapshots: dict[int, Weights],
                pool: list[tuple[int, float]], decisions: int, imitate: bool = False) -> Rollout:
        """Play hands until ``decisions`` kept decisions are reached; finish started hands.

        Kept are the learning policy's decisions, or with ``imitate`` the teacher's in all seats."""
        start = time.perf_counter()
        rng = np.random.default_rng([self.cfg.seed, update, self.index])
        _load(self.net, weights)
        for sid, w in new_snapshots.items():
            self.snapshots[sid] = PolicyValueNet(**self.arch, rules=self.rules).eval()
            _load(self.snapshots[sid], w)
        for sid in set(self.snapshots) - {sid for sid, _ in pool}:
            del self.snapshots[sid]  # left the pool
        pool_ids = np.array([sid for sid, _ in pool], dtype=np.int64)
        if pool_ids.size:  # this update's opponents: fewer networks per step, the same odds per snapshot
            pool_ids = rng.choice(pool_ids, size=self.cfg.snapshots_per_rollout,
                                  p=np.array([p for _, p in pool], dtype=np.float64))
        if imitate and TEACHER not in self.fixed:  # loaded on first use: not every game has a heuristic
            self.fixed[TEACHER] = load_policy(self.cfg.teacher, self.cfg.game)
        self.demos = []
        rollout = self.tables.collect(self, rng, pool_ids, decisions, imitate, start)
        rollout.demos = self._take_demos()
        return rollout
