"""A shipped blood-battle network whose own-turn discards are reweighted by the belief model's
danger (``agents/belief.py``), one seat against three heuristics in the duplicate arena.

    python bench/danger_guard.py --preset happy --betas 0 10 25 60 --deals 1000 --seed 20261207

The guarded policy plays ``argmax(log p_net(a) + beta * log(1 - danger(a)))`` over the discards at
its own turns (no 胡 on offer), the network's choice elsewhere: ``beta = 0`` is the network itself,
a larger ``beta`` trades the network's preference for the belief's estimate of not dealing in
(点炮). Prints, per ``beta``, the seat's beans per hand with the duplicate 95% interval over
per-deal means and its deal-in rate (hands in which it fed a win at least once), beside the
heuristic's deal-in rate in the same seats on the same deals.
Results: docs/experiments/2026-12-07-belief-and-search.md (the danger guard).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agents.arena import t_quantile_975
from agents.arena.vector import play_deals
from agents.belief import Belief, load_belief
from agents.neural import NeuralPolicy, masked_argmax
from agents.registry import load_policy
from agents.search import DEFAULT_BELIEF
from mjenv.actions import BLOOD_BATTLE


class DangerGuard:
    """A network's discards reweighted by a belief's danger (module docstring)."""

    def __init__(self, net: NeuralPolicy, belief: Belief, beta: float) -> None:
        self.net, self.belief, self.beta, self.name = net, belief, beta, f"{net.name}+guard{beta:g}"

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        obs, legal = self.net._inputs(observations, masks)
        logits = self.net.net.logits(torch.from_numpy(self.net.net.prepare(obs)), torch.as_tensor(legal))
        logp = torch.log_softmax(logits, dim=1).numpy().astype(np.float64)
        turn = legal[:, :BLOOD_BATTLE.KONG].any(axis=1) & ~legal[:, BLOOD_BATTLE.HU]
        if turn.any() and self.beta:
            danger = np.clip(self.belief.predict(observations[turn])["danger"], 0.0, 0.999)
            logp[turn, :BLOOD_BATTLE.KONG] += self.beta * np.log1p(-danger)
        return masked_argmax(np.where(legal, logp, -np.inf))

    def act(self, observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(self.act_batch(observation[None], mask[None], rng)[0])


def seat_stats(records: list) -> tuple[np.ndarray, np.ndarray]:
    """Per hand, agent 0's beans and whether it dealt in (records of a 1-vs-3 match)."""
    beans = np.array([r.beans[r.lineup.index(0)] for r in records], dtype=np.float64)
    dealt = np.array([any(src == r.lineup.index(0) for _, src, _, _ in r.wins) for r in records])
    return beans, dealt


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--preset", default="happy", choices=("happy", "qq"))
    p.add_argument("--betas", type=float, nargs="+", default=[0.0, 10.0, 25.0, 60.0])
    p.add_argument("--deals", type=int, default=1000)
    p.add_argument("--seed", type=int, default=20261207, help="arena seed (never used in training)")
    a = p.parse_args()
    torch.set_num_threads(1)
    net, belief, heuristic = load_policy(f"blood_battle_{a.preset}"), load_belief(DEFAULT_BELIEF), load_policy("heuristic")
    options = {"preset": a.preset}
    _, base_dealt = seat_stats(play_deals("blood_battle", [heuristic, heuristic], options, a.seed, 0, a.deals))
    for beta in a.betas:
        start = time.perf_counter()
        beans, dealt = seat_stats(play_deals("blood_battle", [DangerGuard(net, belief, beta), heuristic], options,
                                             a.seed, 0, a.deals))
        per_deal = beans.reshape(-1, 4).mean(axis=1)
        half = t_quantile_975(len(per_deal) - 1) * per_deal.std(ddof=1) / np.sqrt(len(per_deal))
        print(f"{a.preset} beta={beta:g}: {per_deal.mean():+.2f} [{per_deal.mean() - half:+.2f}, "
              f"{per_deal.mean() + half:+.2f}] beans/hand; deal-in {dealt.mean():.1%} (heuristic in its seats "
              f"{base_dealt.mean():.1%}); {time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
