"""Does escaping (逃跑) ever pay? Scripted escapers against three heuristics, in duplicate.

The seeds price an escape so that it should never pay (S16 of docs/rules-blood-battle.md, J11 of
docs/rules-joy-mahjong.md). This script tests that claim with the arena: each escaper is the
game's heuristic plus a trigger that makes it escape, played 1-vs-3 against three heuristics on
the same deals as the plain heuristic. Because the four seats of the plain run are the same
policy, its beans per hand are the table's baseline; the escaper's difference from it, deal for
deal, is what escaping gained or lost.

Triggers (each escapes at the first decision where it holds):

- ``at_once``: always (the escaper leaves at its first decision);
- ``late_not_ready`` (blood battle): the wall holds at most 4 tiles and the hand is not ready,
  i.e. just before the exhaustive draw's 查大叫 would make it pay;
- ``far_from_ready`` (blood battle): from the middle of the hand on (wall ≤ 30), the hand is
  two or more tiles from ready (shanten ≥ 2).

    python examples/escape_study.py                      # blood battle happy and qq, Joy popular
    python examples/escape_study.py --deals 200 --configs happy

docs/experiments/2026-12-05-does-escaping-pay.md records the result with a trained agent's.
"""

from __future__ import annotations

import argparse
from typing import Callable

import numpy as np

from agents import load_policy
from agents.arena import run_arena
from agents.features import HandEval, decode
from agents.neural import NeuralPolicy

CONFIGS = {
    "happy": ("blood_battle", {"preset": "happy", "escape": True}),
    "qq": ("blood_battle", {"preset": "qq", "escape": True}),
    "joy": ("joy_mahjong", {"room": "popular", "escape": True}),
}


def _late_not_ready(obs: np.ndarray) -> bool:
    view = decode(obs)
    return view.wall <= 4 and HandEval(view.hand, view.void[0], view.n_melds).shanten >= 1


def _far_from_ready(obs: np.ndarray) -> bool:
    view = decode(obs)
    return view.wall <= 30 and HandEval(view.hand, view.void[0], view.n_melds).shanten >= 2


TRIGGERS: dict[str, Callable[[np.ndarray], bool]] = {
    "at_once": lambda obs: True,
    "late_not_ready": _late_not_ready,
    "far_from_ready": _far_from_ready,
}
BLOOD_BATTLE_ONLY = ("late_not_ready", "far_from_ready")


class Escaper:
    """The heuristic of ``game``, escaping at the first decision where ``trigger`` holds."""

    def __init__(self, game: str, trigger: str) -> None:
        self.base, self.trigger, self.name = load_policy("heuristic", game), TRIGGERS[trigger], f"escape_{trigger}"

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        actions = np.asarray(self.base.act_batch(observations, action_masks, rng)).copy()
        escape = action_masks.shape[1] - 1  # ESCAPE is the last action
        for i, obs in enumerate(observations):
            if action_masks[i, escape] and self.trigger(obs):
                actions[i] = escape
        return actions

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(self.act_batch(observation[None], action_mask[None], rng)[0])


def study(config: str, deals: int, seed: int, extra: list[str]) -> list[str]:
    """Markdown rows: each escaper's beans/hand against three heuristics, its gain over the plain
    heuristic on the same deals (mean ± 95% CI over duplicate sets) and its escape rate."""
    game, options = CONFIGS[config]
    plain = run_arena(game, ["heuristic", "heuristic"], deals=deals, seed=seed, env_options=options, progress=False)
    base = plain.per_set_means()[0]
    agents: list = [Escaper(game, t) for t in TRIGGERS if game == "blood_battle" or t not in BLOOD_BATTLE_ONLY]
    if game == "blood_battle" and config == "happy":
        for path in extra:  # greedy, as evaluated, and sampling, as trained
            agents += [NeuralPolicy.load(path, name="trained"), NeuralPolicy.load(path, name="trained_sampling",
                                                                               greedy=False)]
    rows = []
    for agent in agents:
        res = run_arena(game, [agent, "heuristic"], deals=deals, seed=seed, env_options=options, progress=False)
        label = res.labels[0]
        gain = res.per_set_means()[0] - base
        half = 1.96 * gain.std(ddof=1) / np.sqrt(deals)
        s = res.stats()[label]
        rows.append(f"| {config} | {label} | {s['mean_beans']:+.1f} | {gain.mean():+.1f} ± {half:.1f} | "
                    f"{s['escape_rate']:.1%} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=500, help="duplicate sets per run (each 4 hands)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--agents", nargs="*", default=[],
                        help="checkpoints for the happy preset, e.g. one trained with escape=true")
    args = parser.parse_args()
    print("| config | agent | beans/hand vs 3 × heuristic | gain over the heuristic (95% CI) | escape rate |")
    print("|---|---|---|---|---|")
    for config in args.configs:
        for row in study(config, args.deals, args.seed, args.agents):
            print(row, flush=True)


if __name__ == "__main__":
    main()
