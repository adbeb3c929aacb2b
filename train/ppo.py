"""PPO self-play for the blood battle (血战到底) and Joy Mahjong (欢乐麻将): one policy shared by the four seats.

    python -m train --config configs/quickstart_blood_battle.yaml          # minutes on 2 cores
    python -m train --config configs/train_blood_battle.yaml --workers 8   # a longer run
    python -m train --resume runs/<run>                                    # continue after a stop
    tensorboard --logdir runs

The file reads top to bottom, CleanRL style: the config (``train/config.py``), setup, an optional
imitation warm start (behaviour cloning of ``teacher``, e.g. the heuristic, from its self-play),
then the loop — rollouts (``train/rollout.py``) → GAE per seat → PPO update with masked logits →
logging → opponent-pool snapshot → checkpoint → evaluation — and a final duplicate evaluation
against the baselines, printed as the arena's table.

**Overlap** (``overlap: true``, the default): the workers play update ``u + 1``'s hands with the
weights before update ``u`` while the learner runs update ``u``, so neither waits for the other; the
policy lag is one update, and PPO's ratio is taken against the stored behaviour log-probabilities,
which corrects it. The imitation warm start overlaps too, exactly: the teacher plays every seat,
so its next batch of hands does not depend on the weights. The request in flight is saved in the
checkpoint, so ``--resume`` replays it and a resumed run matches an unbroken one.

**Fine-tuning**: ``init_policy`` starts the network from a trained policy (a checkpoint path or a
shipped name) instead of a fresh initialisation; it is checked against the config's network before
any file is written.

**Towards the teacher** (both off by default; ablations in ``docs/experiments/2026-12-01-ppo-ablations.md``): ``kl_coef``
adds ``KL(π_BC ‖ π)`` to the loss, π_BC being the policy PPO starts from: the one the imitation
ended with, else ``init_policy``'s (kept in the checkpoint as ``anchor``); ``bc_coef`` adds the
cross-entropy of the baselines' own decisions in the hands where they sit, which the rollouts
otherwise throw away.

**Device**: ``device: auto`` (the default) puts the learner on CUDA when present, else on the CPU;
the rollout workers always run on the CPU. On an H200 the quickstart loop trains 3.6× faster than
the same machine's CPU learner (docs/experiments/2026-12-04-gpu-learner.md).

**Reward**: a seat's bean delta divided by ``reward_scale`` (default: the beans of one capped win,
192 for the happy preset). Beans that reach a seat between its decisions are credited to its
last decision (see ``train/rollout.py``); GAE runs over each seat's own decisions in a hand,
with no bootstrap past the hand's end.

**Checks**: before the run directory is made (or, on ``--resume``, before any file of the run is
written) the device, ``env_options``, every policy named (teacher, baselines, arena opponents),
``init_policy`` against the config's network and the checkpoint to resume are checked; a problem
exits with status 2 and a message naming it. A loss or weight that becomes NaN or infinite stops
training (exit status 1) before a checkpoint keeps it.

**Outputs** in ``runs/<exp_name>__<seed>__<time>/``: ``config.yaml`` (the resolved config),
``checkpoint.pt`` (weights, optimiser, pool, counters: ``torch.load(weights_only=True)``; load the
policy with ``agents.load_policy("…/checkpoint.pt")``), ``eval.json`` (the final arena results) and
TensorBoard events: ``charts/…`` (beans per hand, win rate, speed, pool, evaluations),
``losses/…`` (policy, value, entropy, KL, clip fraction, explained variance), and in
``imitation/`` the warm start's ``imitation/…`` (cross-entropy, accuracy, value loss), over
demonstrations seen.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from agents.checkpoint import CHECKPOINT_FORMAT, CheckpointError, check_resumable, non_finite_tensors, save_checkpoint
from agents.neural import NeuralPolicy, PolicyValueNet, read_checkpoint

from .backends import make_workers
from .config import TrainConfig, parse_args, save_yaml
from .pool import OpponentPool
from .records import LEARNER, Rollout
from .rollout import all_weights, make_env, policy_weights

LEARNER_STREAM = 2**32
"""Third seed word of the learner's minibatch generator (workers use their index there)."""


def gae(rewards: np.ndarray, values: np.ndarray, dones: np.ndarray, gamma: float,
        lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns over contiguous trajectories; ``dones`` marks each one's last step."""
    advantages = np.zeros_like(rewards)
    last = 0.0
    for t in reversed(range(len(rewards))):
        nonterminal = 0.0 if dones[t] else 1.0
        next_value = values[t + 1] if nonterminal else 0.0  # the hand is over: nothing to bootstrap
        delta = rewards[t] + gamma * next_value * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        advantages[t] = last
    return advantages, advantages + values


def duplicate_advantages(rewards: np.ndarray, dones: np.ndarray, par: np.ndarray) -> np.ndarray:
    """Each decision's advantage with duplicate deals: its seat's whole-hand return less the par
    (see ``train/vector_rollout.py``); ``dones`` marks each seat's last decision in a hand."""
    ends = np.flatnonzero(dones) + 1
    starts = np.concatenate([[0], ends[:-1]])
    totals = np.add.reduceat(rewards.astype(np.float64), starts)
    return np.repeat(totals, ends - starts) - par


def to_batch(rollout: Rollout, advantages: np.ndarray, returns: np.ndarray,
             device: torch.device) -> dict[str, torch.Tensor | None]:
    """The tensors a PPO update needs (and the baselines' decisions, when the rollout kept them)."""
    def t(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a).to(device)

    batch = {"obs": t(rollout.obs), "mask": t(rollout.mask),
             "state": None if rollout.state is None else t(rollout.state),
             "action": t(rollout.action), "logprob": t(rollout.logprob), "value": t(rollout.value),
             "advantage": t(advantages.astype(np.float32)), "return": t(returns.astype(np.float32))}
    if rollout.demos is not None:
        batch.update(demo_obs=t(rollout.demos.obs), demo_mask=t(rollout.demos.mask),
                     demo_action=t(rollout.demos.action))
    return batch


def learner_forward(net: PolicyValueNet, cfg: TrainConfig, obs: torch.Tensor, mask: torch.Tensor,
                    state: torch.Tensor | None = None, value: bool = True
                    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """``net(obs, mask, state)`` (or ``net.logits`` without ``value``) in the learner's precision
    (``learner_dtype``), returned as float32 so that the losses are computed in float32."""
    with torch.autocast(obs.device.type, dtype=torch.bfloat16, enabled=cfg.learner_dtype == "bfloat16"):
        if not value:
            return net.logits(obs, mask).float()
        logits, v = net(obs, mask, state)
    return logits.float(), v.float()


def anchor_logprobs(anchor: nn.Module, batch: dict[str, Any], chunk: int = 4096) -> torch.Tensor:
    """Log-probabilities (N, A) of the behaviour-cloned ``anchor`` over the batch (illegal actions: about -1e9)."""
    with torch.no_grad():
        parts = [torch.log_softmax(anchor.logits(batch["obs"][i:i + chunk], batch["mask"][i:i + chunk]), dim=1)
                 for i in range(0, len(batch["action"]), chunk)]
    return torch.cat(parts)


def subsample_demos(batch: dict[str, Any], rng: np.random.Generator) -> None:
    """Keep at most one baseline decision per learning-policy decision (drawn without replacement)."""
    n, m = len(batch["action"]), len(batch["demo_action"])
    if m > n:
        keep = torch.from_numpy(np.sort(rng.choice(m, size=n, replace=False))).to(batch["demo_action"].device)
        for key in ("demo_obs", "demo_mask", "demo_action"):
            batch[key] = batch[key][keep]


def ppo_update(net: PolicyValueNet, optimizer: torch.optim.Optimizer, batch: dict[str, Any],
               cfg: TrainConfig, rng: np.random.Generator) -> dict[str, float]:
    """``update_epochs`` passes of clipped PPO over the batch; returns the last epoch's mean losses.

    With ``kl_coef`` the batch holds the behaviour-cloned policy's log-probabilities (``anchor_logp``)
    and the loss adds ``kl_coef · KL(π_BC ‖ π)``; with ``bc_coef`` it holds the baselines' decisions
    (``demo_*``), each minibatch takes an equal share of them, and the loss adds ``bc_coef`` times
    their cross-entropy."""
    n = len(batch["action"])
    n_minibatches = max(1, round(n / cfg.minibatch_size))  # equal sizes: no tiny trailing minibatch
    device = batch["action"].device
    for _epoch in range(cfg.update_epochs):
        epoch_stats: list[list[float]] = []
        perm = torch.from_numpy(rng.permutation(n)).to(device)
        demo_mbs = (torch.tensor_split(torch.from_numpy(rng.permutation(len(batch["demo_action"]))).to(device),
                                       n_minibatches) if cfg.bc_coef > 0 else [None] * n_minibatches)
        for mb, demo_mb in zip(torch.tensor_split(perm, n_minibatches), demo_mbs):
            mask = batch["mask"][mb]
            state = None if batch["state"] is None else batch["state"][mb]
            logits, new_value = learner_forward(net, cfg, batch["obs"][mb], mask, state)
            logp_all = torch.log_softmax(logits, dim=1)  # illegal actions: logit -1e9, probability 0
            new_logprob = logp_all.gather(1, batch["action"][mb, None]).squeeze(1)
            entropy = -torch.where(mask, logp_all.exp() * logp_all, 0.0).sum(dim=1)
            logratio = new_logprob - batch["logprob"][mb]
            ratio = logratio.exp()
            with torch.no_grad():
                old_approx_kl = (-logratio).mean()
                approx_kl = ((ratio - 1) - logratio).mean()  # http://joschu.net/blog/kl-approx.html
                clipfrac = ((ratio - 1.0).abs() > cfg.clip_coef).float().mean()

            adv = batch["advantage"][mb]
            if cfg.norm_adv and len(mb) > 1:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            # Policy loss
            pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
            # Value loss
            ret, old_value = batch["return"][mb], batch["value"][mb]
            if cfg.clip_vloss:
                clipped = old_value + (new_value - old_value).clamp(-cfg.clip_coef, cfg.clip_coef)
                v_loss = 0.5 * torch.max((new_value - ret) ** 2, (clipped - ret) ** 2).mean()
            else:
                v_loss = 0.5 * ((new_value - ret) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - cfg.ent_coef * entropy_loss + cfg.vf_coef * v_loss
            kl_anchor = bc_loss = torch.zeros((), device=device)
            if cfg.kl_coef > 0:  # KL(π_BC ‖ π) over the legal actions
                anchor_logp = batch["anchor_logp"][mb]
                kl_anchor = torch.where(mask, anchor_logp.exp() * (anchor_logp - logp_all), 0.0).sum(dim=1).mean()
                loss = loss + cfg.kl_coef * kl_anchor
            if demo_mb is not None and len(demo_mb):
                demo_logits = learner_forward(net, cfg, batch["demo_obs"][demo_mb], batch["demo_mask"][demo_mb],
                                              value=False)
                bc_loss = -torch.log_softmax(demo_logits, dim=1).gather(1, batch["demo_action"][demo_mb, None]).mean()
                loss = loss + cfg.bc_coef * bc_loss
            check_finite("PPO loss", loss, cfg)

            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            optimizer.step()
            epoch_stats.append([t.item() for t in (pg_loss, v_loss, entropy_loss, old_approx_kl, approx_kl, clipfrac,
                                                   kl_anchor, bc_loss)])
        mean = np.mean(epoch_stats, axis=0)
        if cfg.target_kl > 0 and mean[4] > cfg.target_kl:
            break
    names = ("policy_loss", "value_loss", "entropy", "old_approx_kl", "approx_kl", "clipfrac", "kl_to_bc", "bc_loss")
    return {k: float(v) for k, v in zip(names, mean)}


def imitation_update(net: PolicyValueNet, optimizer: torch.optim.Optimizer, batch: dict[str, Any],
                     cfg: TrainConfig, rng: np.random.Generator) -> dict[str, float]:
    """``imitation_epochs`` passes of behaviour cloning over a batch of demonstrations: cross-entropy
    on the teacher's actions plus value regression on its returns; returns the last epoch's means."""
    n = len(batch["action"])
    n_minibatches = max(1, round(n / cfg.minibatch_size))
    for _epoch in range(cfg.imitation_epochs):
        epoch_stats: list[list[float]] = []
        perm = torch.from_numpy(rng.permutation(n)).to(batch["action"].device)
        for mb in torch.tensor_split(perm, n_minibatches):
            state = None if batch["state"] is None else batch["state"][mb]
            logits, value = learner_forward(net, cfg, batch["obs"][mb], batch["mask"][mb], state)
            action = batch["action"][mb]
            policy_loss = -torch.log_softmax(logits, dim=1).gather(1, action[:, None]).mean()
            v_loss = 0.5 * ((value - batch["return"][mb]) ** 2).mean()
            loss = policy_loss + cfg.vf_coef * v_loss
            check_finite("imitation loss", loss, cfg)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            optimizer.step()
            accuracy = (logits.argmax(dim=1) == action).float().mean()
            epoch_stats.append([policy_loss.item(), v_loss.item(), accuracy.item()])
    mean = np.mean(epoch_stats, axis=0)
    return {"policy_loss": float(mean[0]), "value_loss": float(mean[1]), "accuracy": float(mean[2])}


def explained_variance(returns: np.ndarray, values: np.ndarray) -> float:
    """1 − Var(returns − values) / Var(returns); NaN when the returns do not vary."""
    var_ret = np.var(returns)
    return float("nan") if var_ret == 0 else float(1 - np.var(returns - values) / var_ret)


def policy_copy(net: PolicyValueNet, weights: dict[str, Any] | None = None) -> PolicyValueNet:
    """A frozen CPU copy of the network's policy (no oracle critic), with ``weights`` if given."""
    player = PolicyValueNet(**{**net.arch, "state_planes": 0}, rules=net.rules)
    weights = weights if weights is not None else {k: torch.from_numpy(v) for k, v in policy_weights(net).items()}
    player.load_state_dict(weights)
    return player.eval().requires_grad_(False)


def evaluate(net: PolicyValueNet, cfg: TrainConfig, step: int, workers: int | None = None,
             progress: bool = False) -> dict[str, Any]:
    """Duplicate arena (1 seat vs 3) of the greedy policy against each of ``cfg.eval_opponents``,
    on ``workers`` processes (default ``cfg.eval_workers``), with a progress bar if ``progress``."""
    from agents.arena import run_arena  # lazily: only evaluation needs the arena and its baselines

    policy = NeuralPolicy(policy_copy(net), name=f"ppo@{step}", greedy=True)
    return {opp: run_arena(cfg.game, agents=[policy, opp], deals=cfg.eval_deals, seed=cfg.eval_seed,
                           workers=cfg.eval_workers if workers is None else workers,
                           env_options=cfg.env_options, progress=progress)
            for opp in cfg.eval_opponents}


def rollout_request(update: int, net: PolicyValueNet, pool: OpponentPool) -> dict[str, Any]:
    """The arguments of ``workers.submit`` for one update's rollouts with the current weights and pool."""
    return {"update": update, "weights": all_weights(net), "snapshots": {s.id: s.weights for s in pool.snapshots},
            "pool": pool.priorities()}


def imitation_request(update: int, net: PolicyValueNet) -> dict[str, Any]:
    """The arguments of ``workers.submit`` for one batch of the teacher's demonstrations (the teacher
    plays every seat: the hands do not depend on the weights, so they can be played ahead)."""
    return {"update": update, "weights": all_weights(net), "snapshots": {}, "pool": [], "imitate": True}


def request_state(request: dict[str, Any] | None) -> dict[str, Any] | None:
    """A rollout request as tensors and plain values (for a checkpoint read with ``weights_only``)."""
    if request is None:
        return None
    return {"update": request["update"], "weights": {k: torch.from_numpy(v) for k, v in request["weights"].items()},
            "snapshots": [{"id": sid, "weights": {k: torch.from_numpy(v) for k, v in w.items()}}
                          for sid, w in request["snapshots"].items()],
            "pool": [[sid, p] for sid, p in request["pool"]], "imitate": request.get("imitate", False)}


def request_from_state(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """The rollout request :func:`request_state` saved."""
    if state is None:
        return None
    return {"update": int(state["update"]), "weights": {k: v.numpy() for k, v in state["weights"].items()},
            "snapshots": {int(s["id"]): {k: v.numpy() for k, v in s["weights"].items()} for s in state["snapshots"]},
            "pool": [(int(sid), float(p)) for sid, p in state["pool"]], "imitate": bool(state.get("imitate", False))}


def log_eval(writer: Any, results: dict[str, Any], step: int) -> None:
    """The policy's arena statistics against each baseline, in TensorBoard."""
    for opp, result in results.items():
        me = result.stats()[result.labels[0]]
        writer.add_scalar(f"charts/eval_vs_{opp}_beans_per_hand", me["mean_beans"], step)
        writer.add_scalar(f"charts/eval_vs_{opp}_ci_halfwidth", me["ci_halfwidth"], step)
        writer.add_scalar(f"charts/eval_vs_{opp}_win_rate", me["win_rate"], step)
        writer.add_scalar(f"charts/eval_vs_{opp}_deal_in_rate", me["deal_in_rate"], step)


class TrainingDiverged(RuntimeError):
    """A loss or a weight became NaN or infinite: training stops before a checkpoint keeps it."""


def check_finite(what: str, value: torch.Tensor, cfg: TrainConfig) -> None:
    """Stop with :class:`TrainingDiverged` when a loss is not finite (before it reaches the weights)."""
    if not bool(torch.isfinite(value).all()):
        raise TrainingDiverged(
            f"the {what} became {value.item() if value.numel() == 1 else 'non-finite'}; the weights were not "
            f"updated with it and the last checkpoint is untouched. Lower learning_rate ({cfg.learning_rate}) "
            f"or max_grad_norm ({cfg.max_grad_norm}), or raise reward_scale ({cfg.reward_scale}), then "
            "--resume or start again")


def check_weights(net: nn.Module) -> None:
    """Stop with :class:`TrainingDiverged` when a weight is NaN or infinite."""
    bad = non_finite_tensors(net.state_dict())
    if bad:
        raise TrainingDiverged(f"non-finite weights in {bad[:3]} after an update; the last checkpoint is untouched")


def check_device(name: str) -> torch.device:
    """The torch device of the learner (``auto``: CUDA when present, else the CPU), or a ValueError
    if it is unknown or absent here."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError as exc:
        raise ValueError(f"config field 'device': {name!r} is not a torch device (auto, cpu, cuda, cuda:1, mps)") from exc
    available = {"cpu": lambda: True, "cuda": torch.cuda.is_available, "mps": torch.backends.mps.is_available}
    if device.type not in available or not available[device.type]():
        raise ValueError(f"config field 'device': no {device.type} device on this machine; use --device auto "
                         "(CUDA when present, else the CPU) or --device cpu")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise ValueError(f"config field 'device': {name!r}, but this machine has "
                         f"{torch.cuda.device_count()} CUDA device(s)")
    return device


def check_env(cfg: TrainConfig) -> Any:
    """A probe env of the config's game and ``env_options``, or a ValueError naming the field."""
    try:
        return make_env(cfg)
    except (TypeError, ValueError) as exc:  # an unknown rule field, a wrong type, a value out of range
        raise ValueError(f"config field 'env_options' {cfg.env_options!r}: {exc}") from exc


def check_policies(cfg: TrainConfig) -> None:
    """Every policy the run will load (teacher, baselines, arena opponents) exists for its game."""
    from agents.registry import load_policy

    fields = [("baseline_opponents", cfg.baseline_opponents), ("eval_opponents", cfg.eval_opponents)]
    if cfg.imitation_decisions > 0:
        fields.append(("teacher", [cfg.teacher]))
    for name, specs in fields:
        for spec in specs:
            try:
                load_policy(spec, cfg.game)
            except (TypeError, ValueError) as exc:  # an unknown name, no such policy for the game, a bad .pt
                raise ValueError(f"config field {name!r}: {exc}") from exc


def load_init_policy(cfg: TrainConfig, net: PolicyValueNet) -> None:
    """Copy ``init_policy``'s weights into ``net``; a ValueError naming the field if it is not a trained
    network, or not this config's network."""
    from agents.registry import load_policy

    try:
        policy = load_policy(cfg.init_policy, cfg.game)
    except (TypeError, ValueError) as exc:  # an unknown name, a missing or damaged .pt, another game's policy
        raise ValueError(f"config field 'init_policy': {exc}") from exc
    if not isinstance(policy, NeuralPolicy):
        raise ValueError(f"config field 'init_policy': {cfg.init_policy!r} is {type(policy).__name__}, not a trained "
                         "network; give a checkpoint path or a shipped name such as blood_battle_happy")
    theirs, ours = {**policy.net.arch, "state_planes": 0}, {**net.arch, "state_planes": 0}
    if theirs != ours:
        diff = ", ".join(f"{k} {theirs[k]!r} (config: {ours[k]!r})" for k in ours if theirs.get(k) != ours[k])
        raise ValueError(f"config field 'init_policy': {cfg.init_policy} is another network: {diff}")
    weights = policy.net.state_dict()
    if policy.net.arch["state_planes"] != net.arch["state_planes"]:  # no oracle critic here, or one of other planes
        weights = {k: v for k, v in weights.items() if not k.startswith("critic_trunk.")}
    missing, unexpected = net.load_state_dict(weights, strict=False)
    assert not unexpected and all(k.startswith("critic_trunk.") for k in missing), (missing, unexpected)


@dataclasses.dataclass(eq=False)
class Learner:
    """What the learner holds and a checkpoint keeps: the network, its optimiser, the opponent pool,
    the policy PPO starts from (``anchor``, for kl_coef), the counters, and the rollout request the
    workers are playing ahead (``inflight``: saved, so that ``--resume`` replays it)."""

    net: PolicyValueNet
    optimizer: torch.optim.Optimizer
    pool: OpponentPool
    anchor: PolicyValueNet | None = None
    update: int = 0
    global_step: int = 0
    hands: int = 0
    demonstrations: int = 0
    elapsed_s: float = 0.0
    """Seconds of training, summed over resumed sessions."""
    inflight: dict[str, Any] | None = None

    def rollouts(self, workers: Any, request: Callable[[int], dict[str, Any]]) -> Rollout:
        """This update's rollouts: the request played ahead, else ``request(update)`` submitted now."""
        if self.inflight is None:
            self.inflight = request(self.update)
            workers.submit(**self.inflight)
        rollout = workers.receive()
        self.inflight = None
        return rollout

    def play_ahead(self, workers: Any, request: Callable[[int], dict[str, Any]]) -> None:
        """Overlap: submit the next update's request, played while the learner learns from this one."""
        self.inflight = request(self.update + 1)
        workers.submit(**self.inflight)

    def save(self, path: Path, cfg: TrainConfig, encoder_version: int) -> None:
        """The run's checkpoint (atomic): the weights and everything ``--resume`` needs."""
        save_checkpoint(path, {
            "format": CHECKPOINT_FORMAT, "arch": dict(self.net.arch), "encoder_version": encoder_version,
            "model": {k: v.cpu() for k, v in self.net.state_dict().items()},
            "optimizer": self.optimizer.state_dict(), "pool": self.pool.state_dict(),
            "config": dataclasses.asdict(cfg), "update": self.update, "global_step": self.global_step,
            "hands": self.hands, "demonstrations": self.demonstrations, "elapsed_s": self.elapsed_s,
            "inflight": request_state(self.inflight),
            "anchor": None if self.anchor is None else {k: v.cpu() for k, v in self.anchor.state_dict().items()},
        })

    def load(self, path: Path, cfg: TrainConfig, device: torch.device) -> None:
        """Continue the run of the trainer checkpoint ``path``; a CheckpointError naming the file if it
        cannot (not a trainer checkpoint, another network, non-finite optimiser state)."""
        ckpt = read_checkpoint(path)
        check_resumable(path, ckpt, self.net.arch)
        self.net.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.pool.load_state_dict(ckpt["pool"])
        self.update, self.global_step, self.hands = ckpt["update"], ckpt["global_step"], ckpt["hands"]
        self.demonstrations, self.elapsed_s = ckpt["demonstrations"], ckpt["elapsed_s"]
        if ckpt.get("anchor") is not None:
            self.anchor = policy_copy(self.net, ckpt["anchor"]).to(device)
        elif cfg.kl_coef > 0 and self.demonstrations >= cfg.imitation_decisions:
            raise CheckpointError(f"{path}: kl_coef needs the policy the imitation ended with, and this "
                                  "checkpoint does not keep it (it predates kl_coef); resume with --kl-coef 0")
        self.inflight = request_from_state(ckpt.get("inflight"))


def new_learner(cfg: TrainConfig, probe: Any, device: torch.device, fine_tune: bool) -> Learner:
    """A fresh network (from the config's seed; with ``fine_tune``, ``init_policy``'s weights when it
    names one), optimiser and pool."""
    net = PolicyValueNet(probe.observer.planes, cfg.channels, cfg.blocks,
                         probe.observer.state_planes if cfg.oracle_critic else 0, cfg.lookahead, cfg.game,
                         probe.rules.escape, generator=torch.Generator().manual_seed(cfg.seed),
                         rules=probe.rules if cfg.lookahead and cfg.game == "blood_battle" else None,
                         items=getattr(probe.rules, "items", None) is not None).to(device)
    learner = Learner(net, torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5),
                      OpponentPool(cfg.pool_size, cfg.pfsp_power))
    if fine_tune and cfg.init_policy:
        load_init_policy(cfg, net)
        if cfg.imitation_decisions == 0:
            learner.anchor = policy_copy(net).to(device)  # for kl_coef: the policy PPO starts from
    return learner


def new_run_dir(cfg: TrainConfig) -> Path:
    """``runs_dir/<exp_name>__<seed>__<time>``, made now; a ValueError if it cannot be."""
    run_dir = Path(cfg.runs_dir) / f"{cfg.exp_name}__{cfg.seed}__{int(time.time())}"
    try:
        run_dir.mkdir(parents=True, exist_ok=False)
    except OSError as exc:  # runs_dir a file, read-only, or on a file system that takes no folders
        raise ValueError(f"cannot create the run folder {run_dir}: {exc.strerror or exc}") from None
    return run_dir


def imitation_step(learner: Learner, rollout: Rollout, cfg: TrainConfig, device: torch.device) -> dict[str, float]:
    """Behaviour cloning of the teacher on one batch of its demonstrations; the losses, accuracy and
    the critic's explained variance before the update."""
    # Value targets: each seat's bean return from the decision to the end of the hand.
    zeros = np.zeros_like(rollout.reward)
    _, returns = gae(rollout.reward, zeros, rollout.done, 1.0, 1.0)
    batch = to_batch(rollout, zeros, returns, device)
    net = learner.net
    with torch.no_grad():
        values = net(batch["obs"], batch["mask"], batch["state"])[1].cpu().numpy()
    net.train()
    losses = imitation_update(net, learner.optimizer, batch, cfg,
                              np.random.default_rng([cfg.seed, learner.update, LEARNER_STREAM]))
    net.eval()
    check_weights(net)
    return {**losses, "explained_variance": explained_variance(returns, values)}


def ppo_step(learner: Learner, rollout: Rollout, cfg: TrainConfig,
             device: torch.device) -> tuple[dict[str, float], np.ndarray]:
    """Advantages (GAE over each seat's own decisions in a hand, or the duplicate par) and one PPO
    update; the losses and the returns."""
    advantages, returns = gae(rollout.reward, rollout.value, rollout.done, cfg.gamma, cfg.gae_lambda)
    if rollout.par is not None:  # duplicate deals: the par is the baseline (the critic still learns)
        advantages = duplicate_advantages(rollout.reward, rollout.done, rollout.par)
    batch = to_batch(rollout, advantages, returns, device)
    learner_rng = np.random.default_rng([cfg.seed, learner.update, LEARNER_STREAM])
    if cfg.kl_coef > 0:
        batch["anchor_logp"] = anchor_logprobs(learner.anchor, batch)
    if cfg.bc_coef > 0:
        subsample_demos(batch, learner_rng)
    learner.net.train()
    losses = ppo_update(learner.net, learner.optimizer, batch, cfg, learner_rng)
    learner.net.eval()
    check_weights(learner.net)
    return losses, returns


def ppo_scalars(learner: Learner, rollout: Rollout, losses: dict[str, float], returns: np.ndarray,
                sps: float, rollout_wait: float, update_seconds: float) -> dict[str, float]:
    """One update's TensorBoard scalars: the learning policy's seats (beans, wins), speed, pool, losses."""
    mine = [(h.beans[s], h.won[s]) for h in rollout.hands for s in range(4) if h.lineup[s] == LEARNER]
    pool = learner.pool
    scalars = {
        "charts/learning_rate": learner.optimizer.param_groups[0]["lr"],
        "charts/beans_per_hand": float(np.mean([b for b, _ in mine])),
        "charts/win_rate": float(np.mean([w for _, w in mine])),
        "charts/hands": learner.hands,
        "charts/rollout_decisions_per_second": rollout.all_decisions / rollout.seconds,
        "charts/SPS": sps,
        "time/rollout_wait_seconds": rollout_wait,
        "time/update_seconds": update_seconds,
        "charts/pool_size": len(pool.snapshots),
        **{f"losses/{name}": value for name, value in losses.items()},
        "losses/explained_variance": explained_variance(returns, rollout.value),
    }
    if pool.snapshots:
        scalars["charts/pool_beat_rate"] = float(np.mean([s.beat_rate for s in pool.snapshots]))
    return scalars


def final_evaluation(net: PolicyValueNet, cfg: TrainConfig, step: int, writer: Any, run_dir: Path,
                     ckpt_path: Path) -> None:
    """The duplicate arena against every ``eval_opponents`` on the workers' cores too: logged, printed as
    the arena's tables and written to ``eval.json``."""
    final_workers = max(cfg.eval_workers, cfg.workers)
    print(f"evaluating {ckpt_path} against {', '.join(cfg.eval_opponents)}: "
          f"{cfg.eval_deals} duplicate deals × 4 rotations each, {final_workers} worker(s) …", flush=True)
    results = evaluate(net, cfg, step, final_workers, progress=cfg.progress)
    log_eval(writer, results, step)
    for result in results.values():
        print(result.format_table(), flush=True)
    with open(run_dir / "eval.json", "w", encoding="utf-8") as fh:
        json.dump({opp: r.to_dict() for opp, r in results.items()}, fh, ensure_ascii=False, indent=1)


def train(cfg: TrainConfig, resume: str | Path | None = None) -> Path:
    """Run (or continue) PPO self-play; return the run directory."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    # ---------------------------------------------------------------- checks, before any file is written
    device = check_device(cfg.device)
    probe = check_env(cfg)
    check_policies(cfg)
    torch.set_num_threads(cfg.torch_threads)

    # ---------------------------------------------------------------- network, optimiser, pool; or the run to resume
    # A resumed run has its weights in its checkpoint: init_policy is for new runs only.
    learner = new_learner(cfg, probe, device, fine_tune=resume is None)
    if resume is not None:  # the run's files stay untouched until its checkpoint loads
        run_dir = Path(resume)
        learner.load(run_dir / "checkpoint.pt", cfg, device)
        print(f"resumed {run_dir} at update {learner.update}, decision {learner.global_step}", flush=True)
    else:
        run_dir = new_run_dir(cfg)
    ckpt_path = run_dir / "checkpoint.pt"
    save_yaml(cfg, run_dir / "config.yaml")
    # This session's seconds per phase; "rollout" is the learner's wait for them (with overlap, their
    # time beyond the update's).
    phases = dict.fromkeys(("rollout", "update", "evaluation"), 0.0)

    # ---------------------------------------------------------------- logging and workers
    # On resume, drop the events logged after the checkpoint (they will be logged again).
    writer = SummaryWriter(str(run_dir), purge_step=learner.global_step + 1 if resume is not None else None)
    if resume is None:
        writer.add_text("config", "\n".join(f"- `{k}`: `{v}`" for k, v in dataclasses.asdict(cfg).items()))
    workers = make_workers(cfg)
    if learner.inflight is not None:  # the rollouts the checkpointed run had under way: the same again
        workers.submit(**learner.inflight)
    bar = None
    try:
        # ------------------------------------------------------------ imitation warm start
        if learner.demonstrations < cfg.imitation_decisions:
            bar = tqdm(total=cfg.imitation_decisions, initial=learner.demonstrations, unit="dec",
                       disable=not cfg.progress, dynamic_ncols=True, desc=f"imitate {cfg.teacher}")
            learner.optimizer.param_groups[0]["lr"] = cfg.imitation_learning_rate
            # Its own event folder: a resume in the PPO phase purges PPO steps only, not these.
            bc_writer = SummaryWriter(str(run_dir / "imitation"),
                                      purge_step=learner.demonstrations + 1 if resume is not None else None)
            request = functools.partial(imitation_request, net=learner.net)  # the teacher's demonstrations
            while learner.demonstrations < cfg.imitation_decisions:
                learner.update += 1
                t0 = time.perf_counter()
                rollout = learner.rollouts(workers, request)
                t1 = time.perf_counter()
                phases["rollout"] += t1 - t0
                learner.demonstrations += len(rollout.action)
                done = learner.demonstrations >= cfg.imitation_decisions
                if cfg.overlap and not done:  # the teacher's next hands do not depend on the weights
                    learner.play_ahead(workers, request)
                losses = imitation_step(learner, rollout, cfg, device)
                phases["update"] += time.perf_counter() - t1
                learner.elapsed_s += time.perf_counter() - t0
                for name, value in losses.items():
                    bc_writer.add_scalar(f"imitation/{name}", value, learner.demonstrations)
                bar.update(min(learner.demonstrations, cfg.imitation_decisions) - bar.n)
                bar.set_postfix(acc=f"{losses['accuracy']:.0%}", refresh=False)
                if done:
                    learner.anchor = policy_copy(learner.net).to(device)  # the behaviour-cloned policy, for kl_coef
                if learner.update % cfg.checkpoint_every == 0 or done:
                    learner.save(ckpt_path, cfg, probe.observer.version)
            bar.close()
            bc_writer.close()

        # ------------------------------------------------------------ PPO
        learner.optimizer.param_groups[0]["lr"] = cfg.learning_rate
        bar = tqdm(total=cfg.total_decisions, initial=min(learner.global_step, cfg.total_decisions), unit="dec",
                   disable=not cfg.progress, dynamic_ncols=True, desc="ppo")
        session_start, session_step0 = time.perf_counter(), learner.global_step
        request = functools.partial(rollout_request, net=learner.net, pool=learner.pool)
        while learner.global_step < cfg.total_decisions:
            learner.update += 1
            t0 = time.perf_counter()
            if cfg.anneal_lr:  # learning-rate annealing
                learner.optimizer.param_groups[0]["lr"] = cfg.learning_rate * (
                    1.0 - learner.global_step / cfg.total_decisions)
            # Rollouts: whole hands, the learning policy in >= 1 seat, pool snapshots elsewhere
            rollout = learner.rollouts(workers, request)
            t1 = time.perf_counter()
            phases["rollout"] += t1 - t0
            learner.global_step += len(rollout.action)
            learner.hands += len(rollout.hands)
            learner.pool.record(rollout.hands)
            if cfg.overlap and learner.global_step < cfg.total_decisions:
                learner.play_ahead(workers, request)
            # Advantages and the PPO update
            losses, returns = ppo_step(learner, rollout, cfg, device)
            update_seconds = time.perf_counter() - t1
            phases["update"] += update_seconds
            learner.elapsed_s += time.perf_counter() - t0
            # Logging
            sps = (learner.global_step - session_step0) / (time.perf_counter() - session_start)
            scalars = ppo_scalars(learner, rollout, losses, returns, sps, t1 - t0, update_seconds)
            for tag, value in scalars.items():
                writer.add_scalar(tag, value, learner.global_step)
            bar.update(min(learner.global_step, cfg.total_decisions) - bar.n)
            bar.set_postfix(beans=f"{scalars['charts/beans_per_hand']:+.1f}", win=f"{scalars['charts/win_rate']:.0%}",
                            ent=f"{losses['entropy']:.2f}", pool=len(learner.pool.snapshots), refresh=False)
            # Opponent pool: a frozen copy of the policy every snapshot_every updates
            if learner.update % cfg.snapshot_every == 0:
                learner.pool.add(policy_weights(learner.net), learner.update)
            # Checkpoint (atomic), every checkpoint_every updates and at the end
            if learner.update % cfg.checkpoint_every == 0 or learner.global_step >= cfg.total_decisions:
                learner.save(ckpt_path, cfg, probe.observer.version)
            # Periodic evaluation against the baselines
            if cfg.eval_every and learner.update % cfg.eval_every == 0 and cfg.eval_opponents:
                t2 = time.perf_counter()
                log_eval(writer, evaluate(learner.net, cfg, learner.global_step), learner.global_step)
                phases["evaluation"] += time.perf_counter() - t2
    finally:
        if bar is not None:
            bar.close()
        workers.close()
        writer.flush()

    # ---------------------------------------------------------------- final evaluation
    if cfg.eval_opponents:  # the rollout workers are closed: it may use their cores too
        t2 = time.perf_counter()
        final_evaluation(learner.net, cfg, learner.global_step, writer, run_dir, ckpt_path)
        phases["evaluation"] += time.perf_counter() - t2
    writer.close()
    print(f"{learner.global_step} decisions, {learner.hands} hands, {learner.elapsed_s:.0f} s of training. "
          f"This session: waiting for rollouts {phases['rollout']:.0f} s, updates {phases['update']:.0f} s, "
          f"evaluation {phases['evaluation']:.0f} s. "
          f"Policy: agents.load_policy({str(ckpt_path)!r})", flush=True)
    return run_dir


def main(argv: list[str] | None = None) -> int:
    """``python -m train``: parse the config and train; exit status 2 on a bad config."""
    try:
        cfg, resume = parse_args(argv)
    except ValueError as exc:  # unknown key, wrong type, out of range: name it and stop
        print(f"python -m train: error: {exc}", file=sys.stderr)
        return 2
    try:
        train(cfg, resume)
    except ValueError as exc:  # a damaged checkpoint, an unknown policy, device or env option: no traceback
        print(f"python -m train: error: {exc}", file=sys.stderr)
        return 2
    except TrainingDiverged as exc:
        print(f"python -m train: error: {exc}", file=sys.stderr)
        return 1
    return 0
