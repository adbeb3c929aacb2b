"""Rollouts: a worker's tables in one :mod:`mjenv.vector` env, on the backend the config's ``engine``
names (``compiled`` or ``reference``: the same hands, decisions and credits on either).

The hands, lineups, kept decisions, reward crediting and the returned :class:`~train.records.Rollout`
are described in ``train/rollout.py`` (its module docstring); here is how the tables are played
(one :class:`~mjenv.vector.SelfPlayVectorEnv`):

- **Steps.** Every table with a hand under way acts at each step: one forward pass per network
  (one ``act_batch`` per baseline) over the tables where its seat is to act, then one
  ``venv.step(actions, active)`` for all of them. Tables whose hand ended after enough decisions
  were collected wait (``active`` False) while the others finish theirs.
- **Deals.** Each update resets the env with a seed ``s`` drawn from the worker's generator. By the
  engine's seeding contract (``docs/vector.md#seeding``) table ``i`` then plays hand seeds
  ``s + i``, then the draws of ``default_rng(s + i)``: each ``HandSummary.seed`` replays its hand
  through ``raw_env.reset(seed=...)``, action by action.
- **Duplicate deals** (``duplicate_rollouts``): tables ``4g … 4g + 3`` share their seeds, so they
  play the same deals, and each deal's lineup is drawn once and rotated one seat per table; every
  started set of four is finished. Each kept decision carries its seat's *par* (``Rollout.par``):
  the mean of what that seat won in the other three rotations, played by the others
  (:func:`duplicate_par`). The learner takes the hand's return less the par as the advantage of
  every decision of that seat in the hand (``train/ppo.py``): the par does not depend on the seat's
  own actions, so the policy gradient keeps its expectation, and it removes most of the luck of
  the deal. Rewards stay the beans, so the critic learns what it always learns.
- **Crediting** is the self-play view's (:class:`~mjenv.vector.SelfPlayVectorEnv`, whose
  :class:`~mjenv.vector.crediting.Ledger` every batched view shares): it returns with each seat's
  decision what the seat received since its previous one, and each seat's remainder when a hand
  ends. :class:`DecisionCredits` files those rewards under the decisions they belong to, which
  makes them :func:`~train.rollout.credit_rewards` (tested hand by hand).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Protocol

import numpy as np

from .config import TrainConfig
from .records import DECISION_FIELDS, LEARNER, N_SEATS, TEACHER, Decisions, HandSummary, Rollout


class DecisionCredits:
    """The view's credited rewards (:class:`~mjenv.vector.SelfPlayVectorEnv`) filed under decision
    ids: the reward that comes with a seat's decision belongs to its previous decision in the hand
    (to that decision itself at the seat's first), the hand's final rewards to its last decision.
    ``credit[i]`` is decision ``i``'s credited beans so far."""

    def __init__(self, n_tables: int) -> None:
        self.last = np.full((n_tables, N_SEATS), -1, dtype=np.int64)  # each seat's latest decision in the hand
        self.credit = np.zeros(4096, dtype=np.int64)

    def decide(self, tables: np.ndarray, seats: np.ndarray, ids: np.ndarray, rewards: np.ndarray) -> None:
        """Seat ``seats[j]`` of table ``tables[j]`` takes decision ``ids[j]`` (ids ascending, new);
        ``rewards[j]`` came with it."""
        if self.credit.size <= ids[-1]:
            self.credit = np.concatenate([self.credit, np.zeros(max(self.credit.size, len(ids)), dtype=np.int64)])
        previous = self.last[tables, seats]
        first = previous < 0
        self.credit[ids] = np.where(first, rewards, 0)
        self.credit[previous[~first]] += rewards[~first]  # one decision per (table, seat): no repeated index
        self.last[tables, seats] = ids

    def finish(self, table: int, final: np.ndarray) -> None:
        """Table ``table``'s hand ended: each seat's ``final`` (4,) beans go to its last decision."""
        last = self.last[table]
        decided = last >= 0  # a seat that never decided has no decision to credit
        self.credit[last[decided]] += final[decided]
        self.last[table] = -1


def duplicate_par(beans: np.ndarray, sets: np.ndarray) -> np.ndarray:
    """(H, 4) par of each hand and seat: the mean of that seat's beans in the other hands of its set
    (``sets[h]``: the set of four rotations of one deal that hand ``h`` belongs to)."""
    totals = np.zeros((sets.max() + 1, N_SEATS), dtype=np.float64)
    np.add.at(totals, sets, beans)
    sizes = np.bincount(sets)[sets][:, None]
    if (sizes != N_SEATS).any():
        raise AssertionError("a duplicate set was left unfinished")
    return (totals[sets] - beans) / (N_SEATS - 1)


class Worker(Protocol):
    """What the tables ask of the rollout worker that owns them (:class:`train.rollout.RolloutWorker`)."""

    cfg: TrainConfig
    scale: float
    """Beans per unit of reward."""
    net: Any
    """The learning network (``net.oracle``: whether decisions keep ``env.state()`` planes)."""

    def lineup(self, rng: np.random.Generator, pool_ids: np.ndarray, imitate: bool) -> list[int]:
        """Who sits where in a new hand."""
        ...

    def decide(self, pid: int, kept: int, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator,
               states: Callable[[], np.ndarray], seats: np.ndarray) -> Decisions:
        """The actions of policy ``pid`` for a batch of its seats (:data:`~train.records.DECISION_FIELDS`)."""
        ...


class VectorTables:
    """``cfg.envs_per_worker`` tables of ``cfg.game`` in one self-play view
    (:class:`~mjenv.vector.SelfPlayVectorEnv`) on the backend ``cfg.engine``."""

    def __init__(self, cfg: TrainConfig) -> None:
        from mjenv.vector import SelfPlayVectorEnv  # compiles (or loads from numba's cache) the engine

        self.venv = SelfPlayVectorEnv(cfg.game, cfg.envs_per_worker, backend=cfg.engine, copy=False,
                                      **cfg.env_options)
        self.n = cfg.envs_per_worker

    def collect(self, worker: Worker, rng: np.random.Generator, pool_ids: np.ndarray,
                decisions: int, imitate: bool, start: float) -> Rollout:
        """Play hands until ``decisions`` kept decisions are reached, finishing started hands."""
        n, venv = self.n, self.venv
        kept = TEACHER if imitate else LEARNER
        dup = worker.cfg.duplicate_rollouts and not imitate
        base = int(rng.integers(2**62))  # table seeds base + i stay below 2**63
        group = np.arange(n) // N_SEATS  # duplicate sets: tables 4g .. 4g+3
        seeds = base + (group if dup else np.arange(n))
        obs, info = venv.reset(seed=seeds)
        seat, mask = info["seat"], info["action_mask"]
        rewards = np.zeros(n, dtype=np.int64)  # what came with each table's decision to take
        streams = [np.random.default_rng(int(s)) for s in seeds]  # the engine's per-table hand seeds
        deal_no = np.zeros(n, dtype=np.int64)  # each table's hand count (its set's deal, with dup)
        set_lineups: list[list[list[int]]] = [[] for _ in range(n // N_SEATS)]

        def draw_lineup(t: int) -> list[int]:
            """Table ``t``'s lineup for its hand ``deal_no[t]`` (with dup: its set's, rotated ``t % 4`` seats)."""
            if not dup:
                return worker.lineup(rng, pool_ids, imitate)
            drawn = set_lineups[group[t]]
            if len(drawn) == deal_no[t]:
                drawn.append(worker.lineup(rng, pool_ids, imitate))
            rotation = t % N_SEATS
            return [drawn[deal_no[t]][(s - rotation) % N_SEATS] for s in range(N_SEATS)]

        lineup = np.array([draw_lineup(t) for t in range(n)], dtype=np.int64)
        meta: list[tuple[int, tuple[int, ...]]] = [(int(seeds[t]), tuple(lineup[t].tolist())) for t in range(n)]
        deal_of = [(int(group[t]), 0) for t in range(n)]  # each hand's (set of tables, deal number)
        hand_of = np.arange(n, dtype=np.int64)  # each table's hand id (an index into meta)
        results: dict[int, tuple[tuple[int, ...], tuple[bool, ...]]] = {}
        active = np.ones(n, dtype=np.bool_)
        credits = DecisionCredits(n)
        log: dict[str, list[np.ndarray]] = {"hand": [], "seat": [], "action": [], "slot": []}
        buf: dict[str, list[np.ndarray | None]] = {name: [] for name in DECISION_FIELDS}
        n_kept = n_all = 0

        while active.any():
            rows = np.flatnonzero(active)
            seats = seat[rows]
            pids = lineup[rows, seats]
            actions = np.zeros(n, dtype=np.int64)
            slot = np.full(len(rows), -1, dtype=np.int64)  # index in the kept buffers, or -1
            for pid in np.unique(pids):
                sel = np.flatnonzero(pids == pid)
                tables = rows[sel]
                d = worker.decide(int(pid), kept, obs[tables], mask[tables].astype(np.bool_), rng,
                                  lambda tables=tables: venv.state(tables), seats[sel])
                actions[tables] = d["action"]
                if pid == kept:
                    for name in buf:
                        buf[name].append(d[name])
                    slot[sel] = n_kept + np.arange(len(sel))
                    n_kept += len(sel)
            credits.decide(rows, seats, n_all + np.arange(len(rows)), rewards[rows])
            n_all += len(rows)
            for name, values in zip(log, (hand_of[rows], seats, actions[rows], slot)):
                log[name].append(values)

            obs, reward, terminated, _, info = venv.step(actions, active)
            seat, mask = info["seat"], info["action_mask"]
            rewards = np.rint(reward).astype(np.int64)
            for t in rows[terminated[rows]].tolist():
                credits.finish(t, np.rint(info["final_rewards"][t]).astype(np.int64))
                results[int(hand_of[t])] = (tuple(info["beans"][t].tolist()), tuple(info["won"][t].tolist()))
                # Enough: this table waits while the others finish (with dup, once its set's deals are all played).
                if n_kept >= decisions and (not dup or deal_no[t] + 1 >= len(set_lineups[group[t]])):
                    active[t] = False
                    continue
                deal_no[t] += 1
                lineup[t] = draw_lineup(t)  # the env already dealt its next hand
                hand_of[t] = len(meta)
                meta.append((int(streams[t].integers(2**63)), tuple(lineup[t].tolist())))
                deal_of.append((int(group[t]), int(deal_no[t])))

        hand, seats, action, slot = (np.concatenate(log[name]) for name in log)
        counts = np.bincount(hand, minlength=len(meta))
        per_hand = np.split(action[np.argsort(hand, kind="stable")], np.cumsum(counts)[:-1])
        hands = [HandSummary(seed, lineup_, *results[h], per_hand[h].tolist())
                 for h, (seed, lineup_) in enumerate(meta)]
        ids = np.flatnonzero(slot >= 0)
        ids = ids[np.lexsort((ids, seats[ids], hand[ids]))]  # grouped by (hand, seat), in play order
        h_k, s_k = hand[ids], seats[ids]
        done = np.ones(len(ids), dtype=np.bool_)
        done[:-1] = (h_k[1:] != h_k[:-1]) | (s_k[1:] != s_k[:-1])
        where = np.empty(n_kept, dtype=np.int64)  # each kept slot's row in the returned arrays
        where[slot[ids]] = np.arange(len(ids))

        def flat(name: str) -> np.ndarray:
            """The kept decisions' ``name`` in (hand, seat, decision) order: one scatter per step's chunk."""
            chunks = buf[name]
            out = np.empty((n_kept, *chunks[0].shape[1:]), dtype=chunks[0].dtype)
            at = 0
            for chunk in chunks:
                out[where[at:at + len(chunk)]] = chunk
                at += len(chunk)
            return out

        beans = credits.credit[ids]
        par = None
        if dup:  # each kept decision's seat par for its hand, in reward units
            _, sets = np.unique(np.array(deal_of), axis=0, return_inverse=True)
            par_beans = duplicate_par(np.array([h.beans for h in hands], dtype=np.float64), sets.reshape(-1))
            par = (par_beans[h_k, s_k] / worker.scale).astype(np.float32)
        return Rollout(
            obs=flat("obs"), mask=flat("mask"), state=flat("state") if worker.net.oracle else None,
            action=flat("action"), logprob=flat("logprob").astype(np.float32), value=flat("value"),
            reward=(beans / worker.scale).astype(np.float32), beans=beans, done=done, hand=h_k, seat=s_k,
            hands=hands, all_decisions=n_all, seconds=time.perf_counter() - start, par=par,
        )
