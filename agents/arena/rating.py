"""Ratings from duplicate 1-vs-3 matches: a Bradley–Terry fit (choix) on an Elo-like scale.

**Outcome of a deal.** In a 1-vs-3 match the candidate plays every seat of the deal once (four
rotations). It *beats* the field on that deal when its beans over the four hands exceed the
average field seat's, loses when they fall short, and ties when they are equal (deterministic
players often replay a deal identically). :func:`deal_outcomes` reads them from an arena result.

**Fit.** Every match between agents i (candidate) and j (field) adds its deals to a comparison
matrix ``M[i, j]`` (wins of i over j) and ``M[j, i]``; a tie counts half to each side, and every
match adds :data:`PRIOR_TIES` tie as a prior, so a rung that never wins still gets a finite rating
(a lower bound of the gap). ``choix.ilsr_pairwise_dense`` fits the log-strengths; a rating is a
log-strength times :data:`ELO` (400 / ln 10, so 400 points are odds of 10 to 1), shifted so that
the anchor agent has its fixed rating.

**Confidence intervals.** 95% percentile bootstrap over deals: all matches are played on the same
seeded deals, so a resample draws deal indices once and takes them from every match (a deal's
luck is shared across matches), and refits with choix each time.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

ELO = 400 / math.log(10)
"""Rating points per unit of log-strength: a 400-point gap is a 10 : 1 win ratio."""
PRIOR_TIES = 1.0
"""Ties added to every match as a prior (half a win each way)."""
BOOTSTRAP = 200
"""Bootstrap refits behind every confidence interval."""
WIN, TIE, LOSS = "W", "T", "L"


def deal_outcomes(candidate_means: np.ndarray, field_means: np.ndarray) -> str:
    """Per deal, ``W`` / ``T`` / ``L``: the candidate's mean beans per hand over its four hands
    against the mean of the field's seats (arena ``per_set_means`` rows)."""
    diff = np.asarray(candidate_means, dtype=np.float64) - np.asarray(field_means, dtype=np.float64)
    return "".join(WIN if d > 1e-9 else LOSS if d < -1e-9 else TIE for d in diff)


def outcome_array(outcomes: str) -> np.ndarray:
    """``W`` / ``T`` / ``L`` as 1 / 0.5 / 0 (the candidate's score per deal)."""
    table = {WIN: 1.0, TIE: 0.5, LOSS: 0.0}
    try:
        return np.array([table[c] for c in outcomes], dtype=np.float64)
    except KeyError as exc:
        raise ValueError(f"deal outcomes are W, T or L, got {exc.args[0]!r}") from None


Match = tuple[int, int, np.ndarray]
"""(candidate index, field index, the candidate's score per deal: 1, 0.5 or 0)."""


def comparison_matrix(n: int, matches: Sequence[Match], deals: np.ndarray | None = None) -> np.ndarray:
    """``M[i, j]``: wins of agent i over agent j over every match (ties half each, plus the prior);
    ``deals``: the deal indices to count (a bootstrap resample), default all."""
    m = np.zeros((n, n))
    for i, j, score in matches:
        s = score if deals is None else score[deals]
        won = float(s.sum())
        m[i, j] += won + PRIOR_TIES / 2
        m[j, i] += len(s) - won + PRIOR_TIES / 2
    return m


def fit(comparisons: np.ndarray, anchor: int, anchor_rating: float) -> np.ndarray:
    """Ratings of every agent from a comparison matrix (choix's Bradley–Terry fit), the anchor at
    ``anchor_rating``."""
    import choix  # lazily: only rating needs it

    params = choix.ilsr_pairwise_dense(comparisons, max_iter=1000, tol=1e-10)
    return (params - params[anchor]) * ELO + anchor_rating


def percentile_interval(samples: np.ndarray) -> np.ndarray:
    """The 95% percentile interval of bootstrap samples along axis 0: shape (2, ...)."""
    return np.percentile(samples, [2.5, 97.5], axis=0)


def fit_ladder(n: int, matches: Sequence[Match], deals: int, anchor: int, anchor_rating: float,
               seed: int, bootstrap: int = BOOTSTRAP) -> tuple[np.ndarray, np.ndarray]:
    """Ratings of ``n`` agents and their bootstrap samples ``(bootstrap, n)``: every match over the
    same ``deals`` deals, resampled jointly."""
    ratings = fit(comparison_matrix(n, matches), anchor, anchor_rating)
    rng = np.random.default_rng(seed)
    samples = np.array([fit(comparison_matrix(n, matches, rng.integers(0, deals, deals)), anchor, anchor_rating)
                        for _ in range(bootstrap)])
    return ratings, samples


def place(rung_ratings: np.ndarray, rung_matches: Sequence[Match], new_matches: Sequence[Match],
          seed: int, bootstrap: int = BOOTSTRAP) -> tuple[float, np.ndarray]:
    """The rating of a new agent against fixed rungs, and its bootstrap samples.

    ``new_matches``: the new agent's matches, the agent as index ``len(rung_ratings)`` (candidate or
    field), all over the same deals. The rungs' stored matches and the new ones are fitted together
    (choix); the result is shifted so that the rungs' fitted ratings match ``rung_ratings`` on
    average, so the rungs stay where the ladder put them. The bootstrap resamples the new agent's
    deals only (the rungs are fixed)."""
    k = len(rung_ratings)
    deals = len(new_matches[0][2])

    def rated(resample: np.ndarray | None) -> float:
        m = comparison_matrix(k + 1, rung_matches) + comparison_matrix(k + 1, new_matches, resample)
        r = fit(m, 0, 0.0)
        return float(r[k] + np.mean(rung_ratings - r[:k]))

    rng = np.random.default_rng(seed)
    return rated(None), np.array([rated(rng.integers(0, deals, deals)) for _ in range(bootstrap)])
