"""The opponents of the single-seat views: specs resolved to batched policies, per-table lineups.

An opponent spec is one of:

- a policy name (``"random"``, ``"heuristic"``, ``"ppo"``, a shipped policy such as
  ``"blood_battle_qq"``) or a trainer checkpoint path ending ``.pt``, through
  :func:`agents.load_policy`;
- a policy object with ``act_batch(observations, action_masks, rng)`` (every :mod:`agents` policy);
- a batched callable ``f(observations, action_masks) -> actions``;
- a :class:`FrozenNetwork`: a frozen copy of a torch network the caller trains and refreshes;
- a :class:`Mixture` (or a dict ``{spec: weight}``): each opponent seat of each table draws one
  of its specs per episode, by weight, from the episode's seed.

``opponents`` is one spec for the three opponent seats or a list of three (opponent ``k`` sits
``k + 1`` seats after the learning seat). Each distinct policy is called once per engine step,
over every table where one of its seats is to act.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..vector import random_actions
from ..vector.single_seat import uniform_from_seed  # per-episode draws from a seed, as the view's seat

N_OPPONENTS = 3


class RandomOpponent:
    """Uniform over the legal actions (compiled, one draw per table)."""

    name = "random"

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return random_actions(action_masks, rng)


class BatchedCallable:
    """A batched callable ``f(observations, action_masks) -> actions`` as a policy."""

    def __init__(self, f: Callable[[np.ndarray, np.ndarray], Any]) -> None:
        self.f, self.name = f, getattr(f, "__name__", type(f).__name__)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.f(observations, action_masks)


class FrozenNetwork:
    """A frozen copy of a torch network, for self-play against past versions of the learner.

    ``network(observations) -> logits`` of shape ``(N, n_actions)`` over a float32 batch (or give
    ``forward(network, observations)`` for another call, e.g. a Stable-Baselines3 policy's
    distribution). The copy is taken at construction and again at each :meth:`update`; the live
    network can train meanwhile. Actions are sampled from the masked softmax (``greedy=True``:
    the masked argmax).
    """

    def __init__(self, network: Any, forward: Callable[[Any, Any], Any] | None = None, greedy: bool = False,
                 name: str = "frozen") -> None:
        import torch  # only this opponent needs torch

        if not isinstance(network, torch.nn.Module):
            raise TypeError(f"FrozenNetwork takes a torch.nn.Module, got {type(network).__name__}")
        self._torch, self.name, self.greedy = torch, name, greedy
        self._forward = forward or (lambda net, obs: net(obs))
        self.network = copy.deepcopy(network).eval().requires_grad_(False)
        self.updates = 0

    def update(self, network: Any) -> None:
        """Copy the weights of ``network`` (the live one) into the frozen copy."""
        self.network.load_state_dict(network.state_dict())
        self.updates += 1

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        torch = self._torch
        device = next(self.network.parameters()).device
        with torch.no_grad():
            obs = torch.as_tensor(np.asarray(observations, dtype=np.float32), device=device)
            logits = self._forward(self.network, obs).float().cpu().numpy()
        logits = np.where(action_masks > 0, logits, -np.inf)
        if self.greedy:
            return logits.argmax(axis=1)
        gumbel = -np.log(-np.log(rng.random(logits.shape)))  # sample the softmax: argmax of logits + Gumbel
        return (logits + gumbel).argmax(axis=1)


class Mixture:
    """A per-table mixture of opponents: each opponent seat of each table draws one spec per
    episode with probability proportional to its weight (a pure function of the episode's seed)."""

    def __init__(self, weights: Mapping[Any, float] | Sequence[tuple[Any, float]]) -> None:
        pairs = list(weights.items()) if isinstance(weights, Mapping) else list(weights)
        if not pairs or any(not isinstance(p, tuple) or len(p) != 2 for p in pairs):
            raise ValueError("a Mixture takes {spec: weight} or a list of (spec, weight) pairs, at least one")
        for spec, w in pairs:
            if isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating)) or not w > 0 \
                    or not np.isfinite(w):
                raise ValueError(f"mixture weight of {spec!r} must be a finite number > 0, got {w!r}")
            if isinstance(spec, (Mixture, list, tuple, Mapping)):
                raise ValueError(f"a mixture's entries are single opponent specs, got {spec!r}")
        self.specs = [spec for spec, _ in pairs]
        w = np.array([float(w) for _, w in pairs])
        self.cumulative = np.cumsum(w / w.sum())


def _policy(spec: Any, game: str) -> Any:
    """One policy from a single (non-mixture) spec."""
    if isinstance(spec, str) and spec == "random":
        return RandomOpponent()
    if isinstance(spec, (str, os.PathLike)):
        from agents import load_policy  # the policies: this module sits above them

        return load_policy(spec, game)
    if hasattr(spec, "act_batch"):
        return spec
    if callable(spec):
        return BatchedCallable(spec)
    raise TypeError(f"an opponent is a policy name, a .pt path, an object with act_batch, a batched callable "
                    f"(observations, action_masks) -> actions, a FrozenNetwork or a Mixture; got "
                    f"{type(spec).__name__} {spec!r}"[:300])


class Lineups:
    """The opponents of every table: ``policies`` (distinct, resolved once) and, per table, the
    index of the policy at each of the three opponent seats, drawn per episode for mixtures."""

    def __init__(self, opponents: Any, game: str, num_envs: int) -> None:
        if isinstance(opponents, Mapping):
            opponents = Mixture(opponents)
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != N_OPPONENTS:
                raise ValueError(f"opponents must be one spec or a list of {N_OPPONENTS}, got {len(opponents)}")
            seats = list(opponents)
        elif isinstance(opponents, np.ndarray):
            raise TypeError("opponents must be a spec or a list of three specs, not a numpy array")
        else:
            seats = [opponents] * N_OPPONENTS
        self.policies: list[Any] = []
        keys: dict[Any, int] = {}  # one policy per distinct name, path or object

        def index(spec: Any) -> int:
            key = os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else id(spec)
            if key not in keys:
                keys[key] = len(self.policies)
                self.policies.append(_policy(spec, game))
            return keys[key]

        # seat k: a fixed policy index, or (Mixture, its specs' indices)
        self._seats: list[int | tuple[np.ndarray, np.ndarray]] = []
        for spec in seats:
            if isinstance(spec, Mapping):
                spec = Mixture(spec)
            if isinstance(spec, Mixture):
                self._seats.append((spec.cumulative, np.array([index(s) for s in spec.specs])))
            else:
                self._seats.append(index(spec))
        self.mixed = any(isinstance(s, tuple) for s in self._seats)
        self.lineup = np.zeros((num_envs, N_OPPONENTS), dtype=np.int64)
        for k, s in enumerate(self._seats):
            if not isinstance(s, tuple):
                self.lineup[:, k] = s

    def draw(self, tables: np.ndarray, episode_seeds: np.ndarray) -> None:
        """The listed tables' lineups for their new episodes (mixture seats only)."""
        for k, s in enumerate(self._seats):
            if isinstance(s, tuple):
                cumulative, ids = s
                u = uniform_from_seed(episode_seeds, salt=k + 1)
                self.lineup[tables, k] = ids[np.minimum(np.searchsorted(cumulative, u, side="right"), len(ids) - 1)]
