"""The duplicate arena's deals played on the self-play view of :mod:`mjenv.vector`
(:class:`~mjenv.vector.SelfPlayVectorEnv`, as the trainer's rollouts), on either backend:
the compiled engine (``backend="compiled"``, the fast path) or the readable one
(``backend="reference"``, which also writes replay logs).

Same protocol as :func:`agents.arena.aec.play_hand` (the reference): deal ``d`` is dealt from env seed
``deal_seed(seed, d)`` on four tables, one per rotation, and every table plays one hand. Each step,
every policy chooses for all the tables where one of its seats is to act, in one ``act_batch``
call. Randomness stays per (seed, deal, rotation, seat):

- a policy whose ``act_batch`` leaves its generator untouched (greedy networks, the heuristics)
  is deterministic there, so one batched call chooses what row-by-row calls would;
- a policy that draws from it (``random``, sampling networks) is then called row by row with
  ``act`` and ``decision_rng(seed, deal, rotation, seat)``, the reference arena's generator.

So the records equal the reference arena's, hand for hand, on both backends, for every policy
that follows the ``Policy`` protocol (``act_batch`` consistent with ``act``). With ``log_dir`` (the
reference backend), each deal's four hands are written as the AEC env logs them, every decision
with its legal actions and, for policies with ``action_probs`` (neural agents), their
probabilities (:mod:`.logs`).
"""

from __future__ import annotations

import os
import zlib
from typing import Any, Callable, Sequence

import numpy as np

from agents.base import Policy

from .logs import DealLogs
from .protocol import N_SEATS, HandRecord, checked_actions, decision_rng, deal_seed, lineup
from .results import spec_name

TABLES_PER_ENV = 4096
"""Tables played in lockstep (1,024 deals × 4 rotations); more deals are played in turns."""


def play_deals(game: str, policies: Sequence[Policy], env_options: dict[str, Any], seed: int, start: int,
               stop: int, num_threads: int = 1, on_deal: Callable[[int], None] | None = None,
               names: Sequence[str] | None = None, backend: str = "compiled",
               log_dir: str | os.PathLike | None = None) -> list[HandRecord]:
    """Deals ``[start, stop)`` × 4 rotations on ``backend``; records in (deal, rotation) order.
    ``on_deal(k)`` is told each time ``k`` more deals have finished (progress bars). Every output
    of a policy is checked (:func:`~.protocol.checked_actions`; ``names``: the agents' labels in
    its errors and logs). ``log_dir`` (reference backend): one replay log per deal there."""
    if log_dir is not None and backend != "reference":
        raise ValueError(f"replay logs (log_dir) are kept by the readable engine: play them on backend "
                         f"'reference', not {backend!r}")
    per_env = TABLES_PER_ENV // N_SEATS
    names = list(names) if names is not None else [spec_name(p) for p in policies]
    logs = None if log_dir is None else DealLogs(log_dir)
    records: list[HandRecord] = []
    for lo in range(start, stop, per_env):
        hi = min(stop, lo + per_env)
        records += _DealBatch(game, policies, env_options, seed, lo, hi, num_threads, names, backend,
                              logs).play(on_deal)
    return records


class _DealBatch:
    """Deals ``[start, stop)`` on one batched env, four tables per deal (table ``4·i + r``:
    deal ``start + i``, rotation ``r``)."""

    def __init__(self, game: str, policies: Sequence[Policy], env_options: dict[str, Any], seed: int,
                 start: int, stop: int, num_threads: int, names: Sequence[str], backend: str,
                 logs: DealLogs | None) -> None:
        from mjenv.vector import SelfPlayVectorEnv  # lazily: the compiled engine loads only when used

        self.game, self.policies, self.seed, self.names, self.logs = game, list(policies), seed, list(names), logs
        n = N_SEATS * (stop - start)
        self.deal = start + np.arange(n) // N_SEATS
        self.rotation = np.arange(n) % N_SEATS
        # agent_at[table, seat]: the policy seated there.
        self.agent_at = np.array([lineup(len(policies), r) for r in range(N_SEATS)])[self.rotation]
        # The self-play view, as the trainer's rollouts: its rewards go unread (a hand's record is its bean table).
        self.venv = SelfPlayVectorEnv(game, n, backend=backend, num_threads=num_threads, copy=False, **env_options)
        self.engine = self.venv.venv.backend
        if logs is not None:
            self.engine.keep_logs()
        self.cap = int(getattr(self.engine.rules, "cap_fan", 0))
        self._rngs: dict[tuple[int, int], np.random.Generator] = {}
        self._probe = np.random.default_rng(0)
        self._draws_rng: set[int] = set()

    def play(self, on_deal: Callable[[int], None] | None = None) -> list[HandRecord]:
        """Every table's hand; finished tables wait (``step(active=)``) until all are done."""
        venv, n = self.venv, self.venv.num_envs
        obs, info = venv.reset(seed=[deal_seed(self.seed, int(d)) for d in self.deal])
        wall, dealer = self.engine.dealt(np.arange(n))
        digests = [zlib.crc32(w.astype(np.int16).tobytes()) for w in wall]
        records: list[HandRecord | None] = [None] * n
        active = np.ones(n, dtype=np.bool_)
        tables = np.arange(n)
        while active.any():
            seat, masks = info["seat"], info["action_mask"]
            agent = self.agent_at[tables, seat]
            actions = np.zeros(n, dtype=np.int64)
            for p in range(len(self.policies)):
                rows = np.flatnonzero(active & (agent == p))
                if rows.size:
                    if self.logs is not None:
                        self._log_decisions(p, rows, obs, masks)
                    actions[rows] = self._choose(p, rows, obs[rows], masks[rows], seat)
            obs, _, terminated, _, info = venv.step(actions, active=active)
            finished = np.flatnonzero(terminated & active)
            for t in finished.tolist():
                records[t] = HandRecord(int(self.deal[t]), int(self.rotation[t]), tuple(self.agent_at[t].tolist()),
                                        digests[t], int(dealer[t]), tuple(info["beans"][t].tolist()),
                                        self._wins(info, t), str(info["end_reason"][t]), self._escaped(info, t),
                                        self._item_uses(info, t))
                if self.logs is not None:
                    self.logs.add(int(self.deal[t]), int(self.rotation[t]), self.engine.hand_logs.pop(t),
                                  [self.names[a] for a in self.agent_at[t]])
            active &= ~terminated
            if on_deal is not None and finished.size:  # deals whose four tables are all done now
                deals = np.unique(finished // N_SEATS)
                done = int((~active.reshape(-1, N_SEATS)[deals]).all(axis=1).sum())
                if done:
                    on_deal(done)
        venv.close()
        return records  # type: ignore[return-value]

    def _choose(self, p: int, rows: np.ndarray, observations: np.ndarray, masks: np.ndarray,
                seat: np.ndarray) -> np.ndarray:
        """Policy ``p``'s actions at ``rows`` (their ``observations`` and ``masks``): one batched
        call, or row by row with each seat's own generator once the policy has drawn from its
        generator (module docstring)."""
        policy = self.policies[p]
        name = self.names[p]
        if p not in self._draws_rng:
            before = self._probe.bit_generator.state
            actions = checked_actions(name, policy.act_batch(observations, masks, self._probe), masks)
            if self._probe.bit_generator.state == before:
                return actions
            self._draws_rng.add(p)
            self._probe = np.random.default_rng(0)
        return np.array([checked_actions(name, [policy.act(o, m, self._rng(int(t), int(seat[t])))], m[None])[0]
                         for o, m, t in zip(observations, masks, rows)], dtype=np.int64)

    def _rng(self, table: int, seat: int) -> np.random.Generator:
        """The reference arena's generator of this table's seat: ``decision_rng(seed, deal, rotation, seat)``."""
        key = (table, seat)
        if key not in self._rngs:
            self._rngs[key] = decision_rng(self.seed, int(self.deal[table]), int(self.rotation[table]), seat)
        return self._rngs[key]

    def _log_decisions(self, p: int, rows: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
        """Note policy ``p``'s decisions at ``rows`` for the replay logs: their legal actions and,
        where the policy has ``action_probs``, its probabilities (as the AEC arena logs them)."""
        probs = getattr(self.policies[p], "action_probs", None)
        for t in rows.tolist():
            self.engine.log_decision(t, None if probs is None else probs(obs[t], masks[t]))

    @staticmethod
    def _escaped(info: dict[str, Any], t: int) -> tuple[int, ...]:
        """The seats of table ``t`` that escaped (none without the rule option ``escape``)."""
        return tuple(np.flatnonzero(info["escaped"][t]).tolist()) if "escaped" in info else ()

    @staticmethod
    def _item_uses(info: dict[str, Any], t: int) -> tuple[tuple[int, ...], ...]:
        """Each seat's uses of each item in table ``t``'s hand (none without the rule option ``items``)."""
        return tuple(map(tuple, info["item_uses"][t].tolist())) if "item_uses" in info else ()

    def _wins(self, info: dict[str, Any], t: int) -> tuple[tuple[int, int | None, int | None, int | None], ...]:
        """(seat, source, total_fan, capped_fan) per win of table ``t``'s finished hand, in order."""
        if self.game == "joy_mahjong":  # one win at most; no cap
            w = int(info["winner"][t])
            if w < 0:
                return ()
            src, fan = int(info["win_from"][t]), int(info["fan"][t])
            return ((w, None if src < 0 else src, fan, fan),)
        order = info["win_order"][t]
        wins = []
        for s in sorted((s for s in range(N_SEATS) if order[s]), key=lambda s: order[s]):
            src, fan = int(info["win_from"][t, s]), int(info["fan"][t, s])
            wins.append((s, None if src < 0 else src, fan, min(fan, self.cap)))
        return tuple(wins)
