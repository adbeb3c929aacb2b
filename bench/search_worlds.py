"""How close the search agent's worlds are to the true hands, drawn from the belief and then kept
by the ``actions`` weighting (agents/search.py, ``weighting="actions"``).

    python bench/search_worlds.py --tables 16

At own-turn decisions of four-heuristic tables (happy preset), the search's table is rebuilt from
the observation, M belief worlds are drawn and K of them kept by
:func:`agents.compiled.search.resample_by_actions`. Printed: how often the true hands explain all
the others' observed play (:func:`agents.compiled.search.world_loglik` at its maximum, no miss)
against how often a drawn world does; and, for drawn and for kept worlds, per opponent in play, the
share of its true concealed tiles the world gives it, whether the world gets its readiness right,
and, when it is truly ready, the share of worlds in which it is ready on one of its true waits.
A research probe: it reads the engine's state to compare. Results:
docs/experiments/2026-12-07-belief-and-search.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents.belief import load_belief
from agents.compiled import features as cf
from agents.compiled import search as cs
from agents.search import DEFAULT_BELIEF, DEFAULT_EPS, _Table, table_from_observation
from mjenv.vector.encoding import blood_battle as enc
from mjenv.vector.engine import blood_battle as eng
from tests.support import blood_battle_turns


def belief_odds(belief, obs: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """The shanten profile and location odds of the opponents of seat s, as the agent builds them."""
    p = belief.predict(obs[None])
    profile, weights = np.full((4, cs.SHANTEN_COLS), 1.0), np.ones((4, 27))
    for r in range(1, 4):
        profile[(s + r) % 4] = p["shanten"][0, r - 1]
        weights[(s + r) % 4] = p["locations"][0, :, r]
    return profile, weights


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tables", type=int, default=16)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--rollouts", type=int, default=16, help="K worlds kept")
    p.add_argument("--candidates", type=int, default=32, help="M worlds drawn")
    p.add_argument("--eps", type=float, default=DEFAULT_EPS)
    a = p.parse_args()
    turns = blood_battle_turns(a.seed, a.tables, tuple(range(30, 200, 20)))
    table = _Table("happy", a.rollouts, a.candidates)
    ctx, belief = table.ctx, load_belief(DEFAULT_BELIEF)
    buf = np.zeros((1, *enc.OBS_SHAPE), np.float32)
    full = 3 * np.log(1 - a.eps) - 1e-9
    true_ok, drawn_ok, ll_time, ll_calls = [], [], 0.0, 0
    stats = {"drawn": ([], [], []), "kept": ([], [], [])}
    for obs, _, real in turns:
        s = int(real["current"])
        st, arrays = eng.new_state(1)
        for f in eng.FIELDS:
            getattr(arrays, f)[0] = real[f]
        true_ok.append(cs.world_loglik(st, 0, s, ctx, buf, a.eps) > full)
        if not table_from_observation(obs, table, np.random.default_rng(0)):
            continue
        profile, weights = belief_odds(belief, obs, s)
        st, copies = table.scratch
        for f in eng.FIELDS:
            getattr(copies, f)[:a.candidates] = getattr(table.arrays, f)[0]
        for k in range(a.candidates):
            cs.resample(st, k, s, cs.BELIEF, 1000 + k, profile, ctx, weights)
        drawn = copies.hands[:a.candidates].copy()
        t0 = time.perf_counter()
        ll = cs.resample_by_actions(st, copies, s, a.rollouts, a.candidates, 77, ctx, a.eps)
        ll_time, ll_calls = ll_time + time.perf_counter() - t0, ll_calls + a.candidates
        drawn_ok.extend(ll > full)
        kept = copies.hands[:a.rollouts].copy()
        for name, hands in (("drawn", drawn), ("kept", kept)):
            common, ready_right, on_wait = stats[name]
            for o in range(4):
                if o == s or real["won"][o]:
                    continue
                true, void, melds = real["hands"][o], real["void"][o], real["n_melds"][o]
                true_sh = cf.shanten(true.astype(np.int8), void, melds, ctx[4])
                sh = [cf.shanten(h[o].astype(np.int8), void, melds, ctx[4]) for h in hands]
                common.append(np.mean([np.minimum(h[o], true).sum() / max(true.sum(), 1) for h in hands]))
                ready_right.append(np.mean([(x <= 0) == (true_sh <= 0) for x in sh]))
                if true_sh == 0:
                    waits = [k for k in range(27) if k // 9 != void and eng.suited_is_wait(true, k, ctx[1])]
                    on_wait.append(np.mean([x == 0 and any(eng.suited_is_wait(h[o], k, ctx[1]) for k in waits)
                                            for h, x in zip(hands, sh)]))
    print(f"{len(turns)} decisions: the true hands explain all the observed play in {np.mean(true_ok):.1%}, "
          f"a drawn belief world in {np.mean(drawn_ok):.1%}; {1000 * ll_time / max(ll_calls, 1):.3f} ms per world weighed")
    for name, (common, ready_right, on_wait) in stats.items():
        print(f"{name}: true tiles given {np.mean(common):.3f}; readiness right {np.mean(ready_right):.3f}; "
              f"truly ready opponents ({len(on_wait)}): ready on a true wait in {np.mean(on_wait):.3f} of worlds "
              f"({len(common)} opponents)")


if __name__ == "__main__":
    main()
