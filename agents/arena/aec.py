"""The duplicate protocol hand by hand on the PettingZoo AEC env (``raw_env``): the protocol's
reference.

:func:`run_arena` plays the batched arena (:mod:`agents.arena.vector`) on either backend of
:mod:`mjenv.vector`; :func:`play_hand` and :func:`play_deals` play the same deals one hand at a
time through the AEC env, as a player of the PettingZoo API would, and give the same records and
replay logs (``tests/agents/arena/test_vector_arena.py`` holds both arenas to it). :func:`make_env` checks the
arena's env options.
"""

from __future__ import annotations

import os
import zlib
from typing import Any, Sequence

import numpy as np

from agents.registry import load_policy
from mjenv import games

from .logs import deal_log_path
from .protocol import N_SEATS, HandRecord, checked_actions, deal_seed, decision_rng, lineup
from .results import agent_labels, spec_name


def make_env(game: str, env_options: dict[str, Any]) -> Any:
    """A raw env for single-hand episodes (the arena's unit is one hand)."""
    if "match_hands" in env_options or "render_mode" in env_options:
        raise ValueError("env_options may not set match_hands or render_mode: the arena plays single hands")
    return games.game(game).raw_env(**env_options)


def play_hand(raw: Any, policies: Sequence[Any], seats: tuple[int, ...], seed: int, deal: int,
              rotation: int, names: Sequence[str] | None = None) -> HandRecord:
    """Play deal ``deal`` once with ``policies[seats[s]]`` at seat ``s``; return its record.
    Every action is checked (:func:`~.protocol.checked_actions`; ``names``: the agents' labels).

    With ``raw.log_path`` set, every decision is logged with its legal actions, and with the
    policy's probabilities when it has ``action_probs`` (neural agents)."""
    raw.reset(seed=deal_seed(seed, deal))
    game = raw.game
    digest = zlib.crc32(np.asarray(game.wall, dtype=np.int16).tobytes())
    rngs = [decision_rng(seed, deal, rotation, s) for s in range(N_SEATS)]
    seat_of = {a: i for i, a in enumerate(raw.possible_agents)}
    logging = raw.log_path is not None
    while not game.over:
        agent = raw.agent_selection
        s = seat_of[agent]
        obs = raw.observe(agent)
        policy = policies[seats[s]]
        if logging:
            probs = getattr(policy, "action_probs", None)
            raw.log_decision(None if probs is None else probs(obs["observation"], obs["action_mask"]))
        mask = obs["action_mask"]
        action = policy.act(obs["observation"], mask, rngs[s])
        name = names[seats[s]] if names is not None else spec_name(policy)
        raw.step(int(checked_actions(name, [action], mask[None])[0]))
    wins = tuple((w.seat, w.source, getattr(w.score, "total_fan", None), getattr(w.score, "capped_fan", None))
                 for w in game.wins)
    return HandRecord(deal, rotation, seats, digest, game.dealer, tuple(int(b) for b in game.beans),
                      wins, game.end_reason, tuple(s for s in range(N_SEATS) if game.escaped[s]),
                      tuple(map(tuple, game.item_uses)) if getattr(game, "items", False) else ())


def play_deals(game: str, agent_specs: Sequence[Any], env_options: dict[str, Any], seed: int,
                start: int, stop: int, log_dir: str | os.PathLike | None = None) -> list[HandRecord]:
    """Deals [start, stop) × 4 rotations, hand by hand on the AEC env (the records and logs
    :func:`run_arena` gives on either backend); with ``log_dir``, one replay log per deal."""
    raw = make_env(game, env_options)
    policies = [load_policy(spec, game) for spec in agent_specs]
    labels = agent_labels(agent_specs)
    records = []
    for d in range(start, stop):
        for r in range(N_SEATS):
            seats = lineup(len(policies), r)
            if log_dir is not None:
                raw.log_path = deal_log_path(log_dir, d)
                raw.log_agents = [labels[a] for a in seats]
            records.append(play_hand(raw, policies, seats, seed, d, r, labels))
    return records
