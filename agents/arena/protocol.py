"""The duplicate protocol: who sits where, which wall each deal is, which randomness each seat draws.

The luck of the deal cancels because each agent plays every seat of the same wall once:

- **1-vs-3** (``agents=[a, b]``): ``a`` sits in one seat and ``b`` in the other three; rotation
  ``r`` puts ``a`` in seat ``r``.
- **four agents** (``agents=[a, b, c, d]``): rotation ``r`` seats agent ``i`` at seat ``(i + r) % 4``.

A *duplicate set* is one deal and its four rotations (four hands on the same wall and dealer).
Deal ``d`` uses env seed ``deal_seed(seed, d)``, so the first ``k`` deals of a run are the same
for any ``deals >= k``. The policy seated at ``seat`` draws its randomness from
``decision_rng(seed, d, rotation, seat)`` only, so a run is a pure function of its arguments,
whatever the number of workers. Policies must not carry state from one hand to the next: a
worker reuses one policy object for all the hands of its chunk.

Both arenas (:mod:`agents.arena.aec`, :mod:`agents.arena.vector`) follow it and return one
:class:`HandRecord` per hand.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

N_SEATS = 4


class HandRecord(NamedTuple):
    """What one hand of the arena produced (compact, for pickling between processes)."""

    deal: int
    rotation: int
    lineup: tuple[int, ...]
    """Agent index seated at each seat."""
    wall_digest: int
    """CRC-32 of the dealt wall: equal across the four rotations of a deal."""
    dealer: int
    beans: tuple[int, ...]
    wins: tuple[tuple[int, int | None, int | None, int | None], ...]
    """(seat, source, total_fan, capped_fan) per win, in order."""
    end_reason: str
    escaped: tuple[int, ...] = ()
    """Seats that escaped (逃跑, rule option ``escape``), in seat order."""
    item_uses: tuple[tuple[int, ...], ...] = ()
    """Per seat, its uses of each item this hand (rule option ``items``, S17 of
    docs/rules-blood-battle.md; items in
    :data:`mjenv.config.ITEMS` order); empty without the option."""


class PolicyOutputError(ValueError):
    """A policy's output that is not one legal integer action per decision."""


def checked_actions(agent: str, actions: Any, masks: np.ndarray) -> np.ndarray:
    """``actions``, a policy's choice for the decisions whose masks are the rows of ``masks``, as
    an int64 array: refused (:class:`PolicyOutputError` naming ``agent``) unless it is an integer
    array of one action per row (no floats, strings, bools or ints beyond int64, no broadcasting)
    with a legal action in each row. Both arenas check every output here, so none is coerced."""
    chosen = np.asarray(actions)
    n, width = masks.shape
    if chosen.shape != (n,) or chosen.dtype == np.bool_ or not np.issubdtype(chosen.dtype, np.integer):
        shown = repr(actions) if chosen.size <= 4 else f"{chosen.dtype} array of shape {chosen.shape}"
        raise PolicyOutputError(f"agent {agent!r} returned {shown[:120]} for {n} decision(s): a policy must "
                                f"return one int action per decision (act: an int; act_batch: an int array of "
                                f"length {n})")
    legal = (chosen >= 0) & (chosen < width)
    legal[legal] = masks[np.flatnonzero(legal), chosen[legal]] > 0
    if not legal.all():
        row = int(np.argmin(legal))
        raise PolicyOutputError(f"agent {agent!r} chose illegal action {int(chosen[row])}; legal there: "
                                f"{np.flatnonzero(masks[row]).tolist()}")
    return chosen.astype(np.int64)


def lineup(n_agents: int, rotation: int) -> tuple[int, ...]:
    """Agent index at each seat in ``rotation`` (0-3) for 2 agents (1-vs-3) or 4 agents."""
    if n_agents == 2:
        base = (0, 1, 1, 1)
    elif n_agents == 4:
        base = (0, 1, 2, 3)
    else:
        raise ValueError(f"the arena takes 2 agents (1-vs-3) or 4 agents, got {n_agents}")
    return tuple(base[(seat - rotation) % N_SEATS] for seat in range(N_SEATS))


def deal_seed(seed: int, deal: int) -> int:
    """The env seed of deal ``deal``: independent of the number of deals and of other seeds."""
    return int(np.random.SeedSequence([seed, deal]).generate_state(1, dtype=np.uint64)[0] >> 1)


def decision_rng(seed: int, deal: int, rotation: int, seat: int) -> np.random.Generator:
    """The generator the policy at ``seat`` uses for one hand: a function of these four only."""
    return np.random.default_rng([seed, deal, rotation, seat])
