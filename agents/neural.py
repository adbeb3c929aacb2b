"""Neural agent for both games: the network the PPO trainer (``python -m train``) learns, and the
policy that plays a trained checkpoint (``load_policy("runs/…/checkpoint.pt")``).

**Network** (:class:`PolicyValueNet`): a small residual network over the observation planes.
An observation of ``(P, K)`` planes (K = 27 kinds for the blood battle, 34 for Joy Mahjong) is
seen as ``(P channels, G groups, 9 ranks)``: the three suits, plus for Joy one group of the 7
honours (padded to 9). Every convolution is a 1-d convolution along the ranks of one suit
(kernel 3, zero padding at 1 and 9), with the same weights for every suit, so a 9m never looks
like a neighbour of 1p; honours have no neighbours (their group sees only its own column)::

    obs (P, G, 9) ─ conv 1×3, C ─ ReLU ─ B × residual block ─┬─ per-tile linear → 2 logits per kind
                                                              │     (discard k, kong k)
                                                              ├─ pooled → linear → fixed logits
                                                              │     (吃 × 3 for Joy, 碰, 直杠, 胡, 抢杠胡, 过)
                                                              ├─ pooled per suit → linear → 1 logit
                                                              │     per suit (定缺 of that suit; blood battle)
                                                              ├─ pooled → linear → 1 logit (ESCAPE; option)
                                                              ├─ pooled → linear → 5 item logits, and
                                                              │     per-tile linear → 2 logits per kind
                                                              │     (give k, name k; option items)
                                                              └─ pooled → MLP → value
    residual block: x + conv(ReLU(conv(x))) + Linear(mean over the tiles)  then ReLU

The pooled-context term of each block lets the suits exchange information (which suit is void,
how far a 清一色 is) without breaking the symmetry between suits; "pooled" is the mean and the
max over the tiles. Defaults: C = 64 channels, B = 3 blocks (0.12 M parameters); the
quickstart uses C = 32, B = 2 (0.03 M).

**Look-ahead planes** (``lookahead=True``): :func:`agents.lookahead.lookahead` adds 14 planes per
observation (what each discard or void does to the shanten and the useful draws, danger, calls), stacked
under the observation by :meth:`PolicyValueNet.prepare` before the trunk sees it. They cost about
0.3 ms per decision and let a small network imitate and improve on the heuristic. Waits are valued
with the network's ``rules``: the trainer passes its env's; a loaded checkpoint uses the rules of
the ``env_options`` it was trained with, unless ``NeuralPolicy.load(..., rules=)`` says otherwise;
those options pass the user's validation (types, ranges, upper bounds), and options that name files
(``rules_file``, ``log_path``) are refused from a checkpoint (:class:`CheckpointError`).
In Joy Mahjong :func:`agents.lookahead_joy.lookahead_joy` adds 15 planes (the Joy heuristic's
distance to a win and 受入 after each discard and call; no rules needed).

**Oracle critic** (``state_planes > 0``, training only): a second trunk of the same shape reads the
observation stacked on ``env.state()`` (P + 134 planes: every hand and the wall) and gives the
value; the policy trunk then has no value head of its own. The agent never uses it.

**Rule options** (``escape=True``, ``items=True``): the network of an env with ESCAPE or the item
actions (S16, S17 of docs/rules-blood-battle.md) has their logits, in the env layout's order
(:meth:`mjenv.actions.ActionLayout.with_options`), so ``n_actions`` is that layout's ``n``; a
network trained without them reads the default part of such an env and never uses them.

**Masked logits**: illegal actions get ``-1e9`` before any softmax or argmax, so they have
probability 0 and are never chosen.

**Checkpoints** (written by ``train``): the format, its checksums and every check on reading are
in :mod:`agents.checkpoint` (its names are importable from here too); :func:`read_checkpoint` reads
a policy checkpoint with all of them, the weights checked against a fresh network of the file's
``arch``, and turns every bad file into a :class:`CheckpointError` naming the file and the reason.

This module imports torch; ``mjenv`` never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from mjenv.actions import BLOOD_BATTLE, JOY_MAHJONG, N_ITEMS, ActionLayout
from mjenv.config import BloodBattleRules
from mjenv.encoding import BloodBattleObserver, JoyMahjongObserver

from .base import default_part
# The checkpoint format lives in agents.checkpoint; its names stay importable from here.
from .checkpoint import (ARCH_BOUNDS, ARCH_FLAGS, CHECKPOINT_FORMAT, CHECKSUM_KEY, FIELDS,  # noqa: F401
                         FULL_CHECKSUM_KEY, CheckpointError, FieldCheck, arch_bound_problem, check_arch,
                         check_fields, check_model, checkpoint_checksum, is_count, is_number, is_tensors,
                         named_tensors, non_finite_tensors, read_verified, tensor_checksum, with_checksums)
from .lookahead import LOOKAHEAD_PLANES, with_lookahead
from .lookahead_joy import JOY_LOOKAHEAD_PLANES, with_lookahead_joy

LAYOUTS: dict[str, ActionLayout] = {"blood_battle": BLOOD_BATTLE, "joy_mahjong": JOY_MAHJONG}
N_SUITS = 3
RANKS = 9
MASKED = -1e9
# The heads rely on the layouts: discards then kongs, one per kind, then the fixed actions, then 定缺.
for _L in LAYOUTS.values():
    assert (_L.DISCARD, _L.KONG) == (0, _L.n_kinds) and (_L.VOID < 0 or _L.VOID == _L.n - N_SUITS)


DEFAULT_SHAPES = {game: (observer.planes, LAYOUTS[game].n)
                  for game, observer in (("blood_battle", BloodBattleObserver), ("joy_mahjong", JoyMahjongObserver))}
"""Observation planes and actions of each game without the rule options escape and bankroll."""

def lookahead_planes(game: str) -> int:
    """How many look-ahead planes ``lookahead=True`` stacks under a ``game`` observation."""
    return JOY_LOOKAHEAD_PLANES if game == "joy_mahjong" else LOOKAHEAD_PLANES


class _RankConv(nn.Module):
    """1-d convolution (kernel 3) along the ranks of each suit, channels last: ``(N, G, 9, C_in)`` →
    ``(N, G, 9, C_out)``; groups after the three suits (the honours) get no neighbours.

    Written as one matrix product over the three shifted copies of the input: on a CPU this is
    about twice as fast as ``nn.Conv2d`` for such small inputs.
    """

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.linear = nn.Linear(3 * c_in, c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = F.pad(x, (0, 0, 1, 1))  # one zero rank before 1 and after 9 of every suit
        left, right = p[:, :, :-2], p[:, :, 2:]
        if x.shape[1] > N_SUITS:  # honours: 东 is no neighbour of 南
            keep = torch.ones(x.shape[1], 1, 1, dtype=x.dtype, device=x.device)
            keep[N_SUITS:] = 0
            left, right = left * keep, right * keep
        return self.linear(torch.cat([left, p[:, :, 1:-1], right], dim=-1))


class _Block(nn.Module):
    """Residual block: two rank convolutions plus a pooled-context bias."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = _RankConv(channels, channels)
        self.conv2 = _RankConv(channels, channels)
        self.context = nn.Linear(channels, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv2(torch.relu(self.conv1(x)))
        y = y + self.context(x.mean(dim=(1, 2)))[:, None, None, :]
        return torch.relu(x + y)


class _Trunk(nn.Module):
    """Stem convolution and residual blocks: planes ``(N, P, K)`` → features ``(N, G, 9, C)``."""

    def __init__(self, planes: int, channels: int, blocks: int) -> None:
        super().__init__()
        self.stem = _RankConv(planes, channels)
        self.blocks = nn.Sequential(*[_Block(channels) for _ in range(blocks)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, planes, kinds = x.shape
        groups = -(-kinds // RANKS)
        if kinds < groups * RANKS:  # the 7 honours padded to a group of 9
            x = F.pad(x, (0, groups * RANKS - kinds))
        x = x.transpose(1, 2).reshape(n, groups, RANKS, planes)
        return self.blocks(torch.relu(self.stem(x)))


def _tiles(h: torch.Tensor, kinds: int) -> torch.Tensor:
    """Per-kind features ``(N, K, C)`` (the honour group's padding dropped)."""
    return h.reshape(h.shape[0], -1, h.shape[-1])[:, :kinds]


def _pool(h: torch.Tensor, kinds: int = N_SUITS * RANKS) -> torch.Tensor:
    """Mean and max over the kinds: ``(N, G, 9, C)`` → ``(N, 2C)``."""
    t = _tiles(h, kinds)
    return torch.cat([t.mean(dim=1), t.amax(dim=1)], dim=1)


class _ValueHead(nn.Module):
    """Pooled features → one value."""

    def __init__(self, channels: int, kinds: int, hidden: int = 128) -> None:
        super().__init__()
        self.kinds = kinds
        self.mlp = nn.Sequential(nn.Linear(2 * channels, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.mlp(_pool(h, self.kinds)).squeeze(-1)


class PolicyValueNet(nn.Module):
    """Masked-logit policy and value over one game's observations (see the module docstring)."""

    def __init__(self, obs_planes: int = 73, channels: int = 64, blocks: int = 3, state_planes: int = 0,
                 lookahead: bool = False, game: str = "blood_battle", escape: bool = False,
                 generator: torch.Generator | None = None, rules: BloodBattleRules | None = None,
                 items: bool = False) -> None:
        super().__init__()
        if game not in LAYOUTS:
            raise ValueError(f"unknown game {game!r}; choose one of {sorted(LAYOUTS)}")
        if items and game != "blood_battle":
            raise ValueError(f"items are a rule option of the blood battle only, not of {game!r}")
        for name, value in (("obs_planes", obs_planes), ("channels", channels), ("blocks", blocks),
                            ("state_planes", state_planes)):
            problem = arch_bound_problem(name, value)
            if problem:
                raise ValueError(f"network {problem}")
        self.arch = {"obs_planes": obs_planes, "channels": channels, "blocks": blocks,
                     "state_planes": state_planes, "lookahead": lookahead, "game": game, "escape": escape,
                     "items": items}
        self.layout = layout = LAYOUTS[game]
        self.kinds = layout.n_kinds
        self.has_void = layout.VOID >= 0
        self.lookahead = lookahead
        self.rules = rules  # the table's rules, for the look-ahead planes' wait values (None: default preset)
        in_planes = obs_planes + (lookahead_planes(game) if lookahead else 0)
        self.trunk = _Trunk(in_planes, channels, blocks)
        self.tile_logits = nn.Linear(channels, 2)  # per tile: discard it, kong it
        n_void = N_SUITS if self.has_void else 0
        self.fixed_logits = nn.Linear(2 * channels, layout.n - 2 * self.kinds - n_void)
        if self.has_void:
            # 定缺 per suit from that suit's own pooled features: a pool over all 27 tiles is the
            # same for every suit, so it cannot tell which suit to drop.
            self.void_logit = nn.Linear(2 * channels, 1)
        # The rule option escape's last action (S16 of docs/rules-blood-battle.md, J11 of docs/rules-joy-mahjong.md).
        self.escape = escape
        if escape:
            self.escape_logit = nn.Linear(2 * channels, 1)
        # The rule option items' actions after ESCAPE (S17): use item i, then give / name kind k.
        self.items = items
        if items:
            self.item_logits = nn.Linear(2 * channels, N_ITEMS)
            self.item_tile_logits = nn.Linear(channels, 2)
        self.n_actions = layout.with_options(escape, items).n
        self.oracle = state_planes > 0
        if self.oracle:
            self.critic_trunk = _Trunk(in_planes + state_planes, channels, blocks)
        self.value_head = _ValueHead(channels, self.kinds)
        self.reset_parameters(generator)

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Initialise every weight from ``generator`` (no global RNG); small policy outputs."""
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.kaiming_uniform_(m.weight, nonlinearity="relu", generator=generator)
                nn.init.zeros_(m.bias)
        # A near-uniform initial policy and a near-zero initial value.
        heads = [self.tile_logits, self.fixed_logits, self.value_head.mlp[-1]]
        heads += ([self.void_logit] if self.has_void else []) + ([self.escape_logit] if self.escape else [])
        heads += [self.item_logits, self.item_tile_logits] if self.items else []
        for m in heads:
            nn.init.normal_(m.weight, std=0.01, generator=generator)

    def prepare(self, observations: np.ndarray) -> np.ndarray:
        """The network's input planes for a batch of env observations (look-ahead planes added if used)."""
        if self.lookahead and self.arch["game"] == "joy_mahjong":
            return with_lookahead_joy(observations)
        if self.lookahead:
            return with_lookahead(observations, self.rules)
        return np.asarray(observations, dtype=np.float32)

    def logits(self, obs: torch.Tensor, mask: torch.Tensor, h: torch.Tensor | None = None) -> torch.Tensor:
        """Masked logits ``(N, n_actions)`` of prepared inputs; ``mask`` is boolean (True = legal)."""
        h = self.trunk(obs) if h is None else h
        n = h.shape[0]
        tile = self.tile_logits(_tiles(h, self.kinds)).transpose(1, 2).reshape(n, 2 * self.kinds)  # [discard | kong]
        pooled = _pool(h, self.kinds)
        parts = [tile, self.fixed_logits(pooled)]
        if self.has_void:
            suits = h[:, :N_SUITS]
            parts.append(self.void_logit(torch.cat([suits.mean(dim=2), suits.amax(dim=2)], dim=2)).squeeze(-1))
        if self.escape:
            parts.append(self.escape_logit(pooled))
        if self.items:  # [use item i | give k | name k]
            per_tile = self.item_tile_logits(_tiles(h, self.kinds)).transpose(1, 2).reshape(n, 2 * self.kinds)
            parts += [self.item_logits(pooled), per_tile]
        return torch.cat(parts, dim=1).masked_fill(~mask, MASKED)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor,
                state: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits and values; ``state`` (``env.state()`` planes) is needed by the oracle critic."""
        h = self.trunk(obs)
        if self.oracle:
            if state is None:
                raise ValueError("this network has an oracle critic: pass the env.state() planes")
            value = self.value_head(self.critic_trunk(torch.cat([obs, state], dim=1)))
        else:
            value = self.value_head(h)
        return self.logits(obs, mask, h), value


def masked_argmax(logits: np.ndarray) -> np.ndarray:
    """The most likely legal action per row (masked logits)."""
    return logits.argmax(axis=1)


def masked_sample(logits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A sample of the masked softmax per row, drawn with ``rng`` (Gumbel-max)."""
    return (logits + rng.gumbel(size=logits.shape)).argmax(axis=1)


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """A policy checkpoint as a dict, read and checked (:mod:`agents.checkpoint`: the file, the
    checksums, the field types, the arch, then the weights against a fresh network of that arch);
    CheckpointError naming the file and the reason otherwise."""
    path = Path(path)
    ckpt = read_verified(path)
    check_fields(path, ckpt, FIELDS)
    ckpt["arch"] = arch = check_arch(path, ckpt["arch"])
    # Built on the CPU, within ARCH_BOUNDS (torch's meta device would cost seconds of lazy imports).
    check_model(path, arch, ckpt["model"], PolicyValueNet(**arch).state_dict())
    return ckpt


def net_from_checkpoint(ckpt: dict[str, Any]) -> PolicyValueNet:
    """The network of a checkpoint dict (as :func:`read_checkpoint` returns it), in eval mode."""
    net = PolicyValueNet(**ckpt["arch"])
    net.load_state_dict(ckpt["model"])
    return net.eval()


class NeuralPolicy:
    """A trained :class:`PolicyValueNet` as an agent (the ``agents.base.Policy`` protocol).

    ``greedy=True`` (the default) plays the masked argmax: deterministic, the ``rng`` is unused,
    and usually a little stronger than sampling. ``greedy=False`` samples the masked softmax with
    the given ``rng``, as the trainer does during self-play.
    """

    def __init__(self, net: PolicyValueNet, name: str = "neural", greedy: bool = True) -> None:
        self.net, self.name, self.greedy = net.eval(), name, greedy

    @classmethod
    def load(cls, path: str | Path, name: str | None = None, greedy: bool = True,
             rules: BloodBattleRules | None = None) -> "NeuralPolicy":
        """The policy of a trainer checkpoint; ``name`` defaults to the file name. ``rules``: the
        table's, for the look-ahead planes (default: those of the checkpoint's training env)."""
        ckpt = read_checkpoint(path)
        net = net_from_checkpoint(ckpt)
        if net.lookahead and net.arch["game"] == "blood_battle":  # Joy's planes need no rules
            net.rules = rules or _training_rules(Path(path), ckpt)
        return cls(net, name or Path(path).name, greedy)

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        observations, masks = self._inputs(observations, action_masks)
        obs = torch.from_numpy(self.net.prepare(observations))
        logits = self.net.logits(obs, torch.as_tensor(masks)).numpy()
        return masked_argmax(logits) if self.greedy else masked_sample(logits, rng)

    def _inputs(self, observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The planes and actions the network was trained on (a network trained without the rule
        options reads the default part of an env's batch with them, and never escapes)."""
        planes, n_actions, masks = self.net.arch["obs_planes"], self.net.n_actions, np.asarray(action_masks, dtype=bool)
        if (planes, n_actions) == DEFAULT_SHAPES[self.net.arch["game"]]:  # trained without the rule options
            observations, masks = default_part(observations, masks, planes, n_actions)
        if np.shape(observations)[1] != planes:
            raise ValueError(f"policy {self.name!r} was trained on observations of {planes} planes, got "
                             f"{np.shape(observations)[1]}: the env's encoder differs from the one it was trained on")
        if masks.shape[1] != n_actions:
            raise ValueError(f"policy {self.name!r} was trained with {n_actions} actions, got masks of "
                             f"{masks.shape[1]}: its env had other rule options (escape, items)")
        if not masks.any(axis=1).all():
            raise ValueError("an action mask in the batch has no legal action")
        return observations, masks

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(self.act_batch(observation[None], action_mask[None], rng)[0])

    @torch.no_grad()
    def action_probs(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The masked softmax of the policy for one seat, ``(n_actions,)`` (0 for illegal actions);
        replay logs and the viewer show it beside the action taken."""
        observations, masks = self._inputs(observation[None], action_mask[None])
        logits = self.net.logits(torch.from_numpy(self.net.prepare(observations)), torch.as_tensor(masks))
        probs = torch.softmax(logits, dim=1)[0].numpy()
        return np.pad(probs, (0, len(action_mask) - len(probs)))  # 0 for ESCAPE when the net has none

    def __reduce__(self) -> tuple[Any, ...]:
        # Arena workers are spawned processes: send plain numpy weights, not torch storages.
        weights = {k: v.numpy() for k, v in self.net.state_dict().items()}
        return (_rebuild_policy, (self.net.arch, weights, self.name, self.greedy, self.net.rules))


_PATH_OPTIONS = ("rules_file", "log_path")
"""Env options that name files: refused from a checkpoint's config."""


def _training_rules(path: Path, ckpt: dict[str, Any]) -> BloodBattleRules:
    """The blood-battle rules of the env a checkpoint was trained in (its config's ``env_options``)."""
    from mjenv import blood_battle_v0

    config = ckpt.get("config")
    options = config.get("env_options", {}) if isinstance(config, dict) else {}
    try:
        if not isinstance(options, dict):
            raise TypeError(f"a mapping is needed, got {type(options).__name__}")
        paths = sorted(set(options) & set(_PATH_OPTIONS))
        if paths:  # a checkpoint from elsewhere must not make us open files (a FIFO would hang)
            raise ValueError(f"{paths} name files, which a checkpoint may not: give the rules as fields")
        # The user's validation: types, ranges, upper bounds (issue 47), the env's own checks.
        return blood_battle_v0.raw_env(**options).rules
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{path}: its config's env_options {options!r} are not valid: {exc}") from exc


def _rebuild_policy(arch: dict[str, Any], weights: dict[str, np.ndarray], name: str,
                    greedy: bool, rules: BloodBattleRules | None = None) -> NeuralPolicy:
    """Unpickle a NeuralPolicy (see ``NeuralPolicy.__reduce__``).

    Unpickling happens in a spawned worker (the arena runs one per core), so torch gets one
    thread: several threads per worker oversubscribe the cores and make the batch-of-one
    forward passes several times slower.
    """
    torch.set_num_threads(1)
    net = PolicyValueNet(**arch, rules=rules)
    net.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    return NeuralPolicy(net, name, greedy)
