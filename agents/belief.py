"""A belief model of the blood battle: from what one seat observes at its own turn, where every
unseen tile lies and how close each opponent is to a win.

**What it predicts** (for the seat to act, opponents in relative order 1, 2, 3):

- ``locations`` (N, 27, 4): for one unseen copy of kind k, the probability that it lies in the
  live wall (column 0) or in opponent r's concealed tiles (column r; an opponent's 暗杠 counts as
  concealed: the observation shows only how many it has). The logits are added to the log of
  each location's size (tiles in the wall, concealed tiles of each opponent: both public), so an
  untrained model deals uniformly, and a location of size 0 gets nothing.
- ``shanten`` (N, 3, 8): each opponent's shanten, -1 (complete) to 6 (column shanten + 1); column
  1 is ready (听牌). Undefined for an opponent out of play (won).
- ``waits`` (N, 3, 27): the probability that opponent r, still in play, wins on a discard of kind
  k; ``danger`` (N, 27) = 1 − Π_r (1 − waits) over the opponents in play: the chance a discard
  of k deals in (点炮) if they take every win.

**Unseen** copies of a kind: 4 minus those the seat sees (its hand, every river, the 碰 and exposed
kongs, its own 暗杠, the tiles won on); they lie in the wall or the opponents' concealed tiles
(:func:`unseen_counts`, :func:`location_sizes`). The cross-entropy of the true locations, summed
over the unseen copies, is the model's loss in nats per observation; dealing uniformly scores
:func:`location_nats` with zero logits.

**Network** (:class:`BeliefNet`): the 73 observation planes plus the unseen counts, as
``(channels, 3 suits, 9 ranks)``; 1-d convolutions along the ranks of a suit (same weights for
every suit) with a pooled context per block, then per-kind heads (4 location logits, 3 wait
logits) and a pooled head (3 × 8 shanten logits). Defaults: C = 64, B = 3 (about 0.1 M
parameters, under 1 MB).

**Checkpoints** (``train.belief`` writes them): format ``mjenv.belief/1``, read with the policies'
integrity checks (:func:`agents.neural.read_verified`: a torch zip archive, ``weights_only``,
both sha256 checksums, which a belief checkpoint must carry), then its ``arch`` within
:data:`ARCH_BOUNDS` and weights that fit it and are finite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from mjenv.encoding import BloodBattleObserver

from .neural import (CHECKSUM_KEY, FULL_CHECKSUM_KEY, CheckpointError, check_fields, is_count, is_number,
                     non_finite_tensors, read_verified, with_checksums)

BELIEF_FORMAT = "mjenv.belief/1"
V = BloodBattleObserver.views
OBS_PLANES = BloodBattleObserver.planes
KINDS = 27
LOCATIONS = 4  # the live wall, then the opponents in relative order
SHANTEN_CLASSES = 8  # shanten -1 .. 6
MASKED = -1e9
ARCH_BOUNDS = {"channels": (8, 256), "blocks": (1, 8)}


def _per_seat(obs: np.ndarray, view: str) -> np.ndarray:
    """(N, 4, 27) planes of a per-relative-seat view."""
    return obs[:, V[view]]


def unseen_counts(obs: np.ndarray) -> np.ndarray:
    """(N, 27) copies of each kind the observer cannot see (module docstring)."""
    seen = (obs[:, V["hand"]] > 0.5).sum(axis=1).astype(np.float64)
    seen += 4 * obs[:, V["river"]].sum(axis=1)
    seen += 3 * _per_seat(obs, "pong").sum(axis=1) + 4 * _per_seat(obs, "kong").sum(axis=1)
    seen += 4 * obs[:, V["own_ankan"].start] + _per_seat(obs, "won_tile").sum(axis=1)
    return np.clip(np.rint(4 - seen), 0, 4)


def location_sizes(obs: np.ndarray) -> np.ndarray:
    """(N, 4) tiles in the live wall and each opponent's concealed tiles with its 暗杠 (all public)."""
    wall = np.rint(obs[:, V["wall"].start, 0] * 108)
    melds = (_per_seat(obs, "pong").sum(axis=2) + _per_seat(obs, "kong").sum(axis=2)
             + np.rint(obs[:, V["ankan_count"], 0] * 4))
    ankans = np.rint(obs[:, V["ankan_count"], 0] * 4)
    concealed = 13 - 3 * melds + 4 * ankans  # a seat not to act holds 13 - 3 per meld
    return np.concatenate([wall[:, None], concealed[:, 1:]], axis=1).clip(min=0)


def opponents_in_play(obs: np.ndarray) -> np.ndarray:
    """(N, 3) bool: opponent r (1-3) has not won."""
    return obs[:, V["won"], 0][:, 1:] < 0.5


def location_nats(logits: torch.Tensor, counts: torch.Tensor, sizes: torch.Tensor) -> torch.Tensor:
    """(N,) nats of the true locations ``counts`` (N, 27, 4) under ``logits`` (N, 27, 4) shifted by
    the log location sizes (N, 4); zero logits: uniform dealing."""
    return -(counts * location_log_probs(logits, sizes)).sum(dim=(1, 2))


def location_log_probs(logits: torch.Tensor, sizes: torch.Tensor) -> torch.Tensor:
    """log p(location | kind), (N, 27, 4): ``logits`` plus the log sizes, an empty location masked."""
    prior = torch.where(sizes > 0, torch.log(sizes.clamp(min=1)), torch.full_like(sizes, MASKED))
    return F.log_softmax(logits + prior[:, None, :], dim=2)


def features(obs: np.ndarray) -> np.ndarray:
    """(N, 73 + 1, 27) float32: the observation planes and the unseen counts / 4."""
    obs = np.asarray(obs, dtype=np.float32)[:, :OBS_PLANES]
    return np.concatenate([obs, (unseen_counts(obs) / 4).astype(np.float32)[:, None]], axis=1)


class _Block(nn.Module):
    """x + conv(ReLU(conv(x))) + Linear(mean over the kinds), then ReLU (as the policy's trunk)."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.a, self.b = nn.Conv1d(c, c, 3, padding=1), nn.Conv1d(c, c, 3, padding=1)
        self.ctx = nn.Linear(c, c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (N * 3, C, 9)
        n3, c, _ = x.shape
        pooled = x.reshape(n3 // 3, 3, c, 9).mean(dim=(1, 3))
        ctx = self.ctx(pooled).repeat_interleave(3, dim=0)[:, :, None]
        return F.relu(x + self.b(F.relu(self.a(x))) + ctx)


class BeliefNet(nn.Module):
    """The belief network (module docstring)."""

    def __init__(self, channels: int = 64, blocks: int = 3) -> None:
        super().__init__()
        self.arch = {"channels": channels, "blocks": blocks}
        c_in = OBS_PLANES + 1
        self.stem = nn.Conv1d(c_in, channels, 3, padding=1)
        self.blocks = nn.ModuleList([_Block(channels) for _ in range(blocks)])
        self.per_kind = nn.Conv1d(channels, LOCATIONS + 3, 1)
        self.shanten = nn.Sequential(nn.Linear(2 * channels, 128), nn.ReLU(), nn.Linear(128, 3 * SHANTEN_CLASSES))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Features (N, 74, 27) → location logits (N, 27, 4), shanten logits (N, 3, 8), wait logits (N, 3, 27)."""
        n = x.shape[0]
        h = x.reshape(n, -1, 3, 9).permute(0, 2, 1, 3).reshape(n * 3, -1, 9)
        h = F.relu(self.stem(h))
        for block in self.blocks:
            h = block(h)
        c = h.shape[1]
        per = self.per_kind(h).reshape(n, 3, -1, 9).permute(0, 2, 1, 3).reshape(n, -1, KINDS)
        grid = h.reshape(n, 3, c, 9)
        pooled = torch.cat([grid.mean(dim=(1, 3)), grid.amax(dim=(1, 3))], dim=1)
        shanten = self.shanten(pooled).reshape(n, 3, SHANTEN_CLASSES)
        return per[:, :LOCATIONS].transpose(1, 2), shanten, per[:, LOCATIONS:]


class Belief:
    """A trained :class:`BeliefNet` with the numpy interface the search agent reads."""

    def __init__(self, net: BeliefNet) -> None:
        self.net = net.eval()

    @torch.no_grad()
    def predict(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """``locations`` (N, 27, 4), ``shanten`` (N, 3, 8), ``waits`` (N, 3, 27) and ``danger``
        (N, 27) for a batch of own-turn observations (module docstring)."""
        obs = np.asarray(obs, dtype=np.float32)
        if obs.ndim != 3 or obs.shape[1] < OBS_PLANES or obs.shape[2] != KINDS:
            raise ValueError(f"observations must have shape (N, {OBS_PLANES}, {KINDS}) (blood battle), got {obs.shape}")
        loc, sh, wt = self.net(torch.from_numpy(features(obs)))
        sizes = torch.from_numpy(location_sizes(obs)).float()
        waits = torch.sigmoid(wt).numpy() * opponents_in_play(obs)[:, :, None]
        return {"locations": location_log_probs(loc, sizes).exp().numpy(),
                "shanten": torch.softmax(sh, dim=2).numpy(), "waits": waits,
                "danger": 1 - np.prod(1 - waits, axis=1)}


def save_belief(net: BeliefNet, path: str | Path, **plain: Any) -> None:
    """Write ``net`` as a belief checkpoint with both checksums, plus plain fields (:data:`FIELDS`)."""
    payload = {"format": BELIEF_FORMAT, "arch": dict(net.arch),
               "model": {k: v.detach().clone() for k, v in net.state_dict().items()}, **plain}
    torch.save(with_checksums(payload), Path(path))


FIELDS = {
    "preset": (lambda v: v in ("happy", "qq"), "'happy' or 'qq'"),
    "observations": (is_count, "an int >= 0"),
    "elapsed_s": (lambda v: is_number(v) and v >= 0, "a number of seconds >= 0"),
    "metrics": (lambda v: isinstance(v, dict), "a mapping"),
}
"""The plain fields a belief checkpoint may have besides ``format``, ``arch`` and ``model``."""


def load_belief(path: str | Path) -> Belief:
    """The :class:`Belief` of a checkpoint, checked as the module docstring says; CheckpointError
    naming the file and the reason otherwise."""
    path = Path(path)
    ckpt = read_verified(path, BELIEF_FORMAT, "belief")
    missing = [k for k in (CHECKSUM_KEY, FULL_CHECKSUM_KEY) if k not in ckpt]
    if missing:
        raise CheckpointError(f"{path}: a belief checkpoint must carry its checksums; it lacks {missing}")
    check_fields(path, ckpt, FIELDS)
    arch = ckpt["arch"]
    if not isinstance(arch, dict) or sorted(arch) != sorted(ARCH_BOUNDS):
        raise CheckpointError(f"{path}: 'arch' must hold exactly {sorted(ARCH_BOUNDS)}, got {arch!r}"[:200])
    for name, (lo, hi) in ARCH_BOUNDS.items():
        if not is_count(arch[name]) or not lo <= arch[name] <= hi:
            raise CheckpointError(f"{path}: arch {name} must be an int in [{lo}, {hi}], got {arch[name]!r}")
    net = BeliefNet(**arch)
    model = ckpt["model"]
    expected = net.state_dict()
    if not isinstance(model, dict) or set(model) != set(expected) or any(
            not isinstance(model[k], torch.Tensor) or model[k].shape != v.shape or model[k].dtype != v.dtype
            for k, v in expected.items()):
        raise CheckpointError(f"{path}: the weights do not fit its arch {arch}")
    bad = non_finite_tensors(model)
    if bad:
        raise CheckpointError(f"{path}: non-finite weights (NaN or infinity) in {bad[:5]}")
    net.load_state_dict(model)
    return Belief(net)
