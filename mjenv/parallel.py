"""The shared PettingZoo Parallel adapter of every mjenv game: ``parallel_env(**options)`` of
``blood_battle_v0`` and ``joy_mahjong_v0`` (the env only adapts the engine: docs/layout.md).

:class:`MahjongParallelEnv` drives one table of the game's AEC env (:mod:`mjenv.aec`, made with
the same options). At each step every seat that must decide acts at once:

- the seat to act, on its turn;
- every seat the engine asks about a discard (claim window) or an added kong (rob window): the
  answers are hidden from one another and resolved together (S4 of docs/rules-blood-battle.md,
  J3 of docs/rules-joy-mahjong.md), so they are taken in one step; the engine asks them in turn
  order from the discarder and this adapter feeds their actions in that order
  (:meth:`~mjenv.engine.core.GameCore.asked_seats`), so 截和 (J3) picks the same winner;
- in the blood battle, every seat still to choose its void suit (定缺: choices hidden until all
  are made, S2).

A seat with a choice is a *deciding* seat: its mask is the engine's. Every other seat's mask has
one legal action, PASS (过), the no-op: it may send PASS, ``None``, or nothing. A seat the engine
would not ask because it has one legal action (S13's forced win) has no decision either: the
engine plays it. The masks and observations of the seats of one window do not depend on one
another's pending answers, with one exception: an escape (S16, J11) changes the table (who has
escaped, the beans). So a step feeds the answers in the engine's order and stops after an
escape; the later seats of the window are asked again at the next step, with what they now
observe, and their actions of this step are ignored (``infos[agent]["action_ignored"]``). The
same holds when the hand ends or the engine stops asking before a seat's turn comes.

Each step's rewards are each seat's bean changes during the step, its observations every seat's
view after it. Every seat terminates at the end of the episode (hand or ``match_hands`` match),
together; ``agents`` is then empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from . import render as render_mod
from .aec import MASK_WAY_OUT, RENDER_FPS, MahjongAECEnv, checked_action
from .engine.core import N_SEATS, IllegalActionError

PARALLEL_RENDER_MODES = ["ansi", "human"]
"""``ansi``: the whole table as a str; ``human``: printed after every step."""


class MahjongParallelEnv(ParallelEnv):
    """One table of four seats where every seat that must decide acts in the same step; see the
    module docstring and the game modules' reference tables."""

    def __init__(self, aec: MahjongAECEnv, render_mode: str | None = None) -> None:
        if render_mode not in (None, *PARALLEL_RENDER_MODES):
            raise ValueError(f"render_mode must be one of {PARALLEL_RENDER_MODES} or None, got {render_mode!r}")
        if aec.backend != "reference":  # the claim windows below read the readable engine's queue
            raise ValueError(f"the Parallel API plays the readable engine only, got backend={aec.backend!r}; "
                             "use the AEC env (env(backend='compiled')) or mjenv.vector for the compiled one")
        self.aec = aec
        """The AEC env that plays the table (made with this env's options)."""
        self.render_mode = render_mode
        self.metadata = {"name": aec.metadata["name"], "render_modes": PARALLEL_RENDER_MODES,
                         "render_fps": RENDER_FPS}
        self.layout = aec.layout
        self.no_op = self.layout.PASS
        """The one legal action of a seat without a decision."""
        self._no_op_mask = np.zeros(self.layout.n, dtype=np.int8)
        self._no_op_mask[self.no_op] = 1
        self.possible_agents = aec.possible_agents[:]
        self.agents: list[str] = []
        self.observation_spaces = aec.observation_spaces
        self.action_spaces = aec.action_spaces
        self.state_space = aec.state_space
        self._deciding: dict[int, np.ndarray] = {}
        """Seat -> mask of every deciding seat, in the order the engine asks them."""

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space:
        return self.aec.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Space:
        return self.aec.action_space(agent)

    def action_name(self, action: int) -> str:
        """Name of an action, e.g. ``discard 5m`` or ``pong``."""
        return self.aec.action_name(action)

    # ------------------------------------------------------------------ Parallel API

    def reset(self, seed: int | None = None, options: dict | None = None
              ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        """Deal a new hand (the AEC env's ``reset``: the same seeds deal the same hands, the same
        ``options`` script it). Bad arguments raise before anything changes."""
        self.aec.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        self._deciding = self._deciding_seats()
        return self._observations(), {agent: {} for agent in self.agents}

    def step(self, actions: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, bool],
                                                        dict[str, bool], dict[str, dict[str, Any]]]:
        """Play the actions of the deciding seats in the engine's order. Every action is checked
        against the mask it was shown before any is played: a bad one raises (``illegal_action=
        "raise"``) and changes nothing."""
        self.aec._require_reset("step")
        if not self.agents:
            raise RuntimeError("the episode is over: call reset() before step()")
        chosen, illegal = self._checked_actions(actions)
        infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.possible_agents}
        for seat in illegal:
            infos[self.possible_agents[seat]]["illegal_action"] = True
        aec = self.aec
        if illegal and aec.illegal_action == "terminate":
            aec._end_for_illegal_action(self.possible_agents[illegal[0]])
            rewards = [aec.rewards[agent] for agent in self.possible_agents]
        else:
            rewards = self._play(chosen)
            for seat in chosen:  # the seats the engine did not ask after all
                infos[self.possible_agents[seat]]["action_ignored"] = True
        over = all(aec.terminations.values())
        if over:
            for agent in self.possible_agents:
                infos[agent] = {**aec.infos[agent], **infos[agent]}
            self.agents = []
        self._deciding = {} if over else self._deciding_seats()
        if self.render_mode == "human":
            self.render()
        return (self._observations(), dict(zip(self.possible_agents, rewards)),
                {agent: over for agent in self.possible_agents}, {agent: False for agent in self.possible_agents},
                infos)

    def state(self) -> np.ndarray:
        """The AEC env's perfect-information state of the table."""
        return self.aec.state()

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        self.aec._require_reset("render")
        text = render_mod.render_table(self.aec.game, self.aec.tile_style)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        self.aec.close()

    # ------------------------------------------------------------------ helpers

    def _deciding_seats(self) -> dict[int, np.ndarray]:
        """Seat -> mask of every seat that must decide now, in the engine's order: the seat to act,
        then the later seats of its window that have a choice (the engine plays a lone action)."""
        g = self.aec.game
        deciding = {}
        for seat in g.asked_seats():
            mask = g.mask_of(seat)
            if seat == g.current_player or np.count_nonzero(mask) > 1:
                deciding[seat] = mask
        return deciding

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        """Every seat's observation now; the mask of a seat without a decision is the no-op's."""
        return {agent: {"observation": self.aec.observe_seat(seat),
                        "action_mask": self._deciding.get(seat, self._no_op_mask).copy()}
                for seat, agent in enumerate(self.possible_agents)}

    def _checked_actions(self, actions: Any) -> tuple[dict[int, int], list[int]]:
        """(seat -> action of every deciding seat, in the engine's order; the seats whose action
        was outside their mask, deciding seats first), under the ``illegal_action`` mode. Raises
        on bad input before anything changes."""
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions must be a dict of agent -> action, got {type(actions).__name__} {actions!r}")
        unknown = [agent for agent in actions if agent not in self.possible_agents]
        if unknown:
            raise ValueError(f"unknown agents {unknown!r} in actions; the agents are {self.possible_agents}")
        mode, name = self.aec.illegal_action, self.aec.action_name
        chosen: dict[int, int] = {}
        illegal: list[int] = []
        others = [seat for seat in range(N_SEATS) if seat not in self._deciding]
        for seat in [*self._deciding, *others]:
            agent = self.possible_agents[seat]
            action = actions.get(agent)
            mask = self._deciding.get(seat)
            if mask is None:
                if action is None:
                    continue  # no decision: nothing sent means the no-op
                mask = self._no_op_mask
            elif action is None:
                legal = ", ".join(f"{int(b)} ({name(b)})" for b in np.flatnonzero(mask))
                raise IllegalActionError(f"{agent} must decide this step (no action or None given); "
                                         f"legal: {legal}; {MASK_WAY_OUT}")
            played, bad = checked_action(action, mask, mode, name, who=agent)
            if bad:
                illegal.append(seat)
            if seat in self._deciding:
                chosen[seat] = played
        return chosen, illegal

    def _play(self, chosen: dict[int, int]) -> list[int]:
        """Feed the chosen actions to the AEC env while the engine asks their seats in the window
        open now; each seat's bean change. Played seats leave ``chosen``; those left over were
        not asked (an escape, the end of the hand or of the window came first)."""
        aec, g = self.aec, self.aec.game
        phase, queue = g.phase, g.queue  # the window: its queue is one list until it resolves
        rewards = [0] * N_SEATS
        while g.current_player in chosen:
            action = chosen.pop(g.current_player)
            aec.step(action)
            for i, agent in enumerate(self.possible_agents):
                rewards[i] += aec.rewards[agent]
            if (action == self.layout.ESCAPE or aec.game is not g or g.phase != phase or g.queue is not queue
                    or all(aec.terminations.values())):
                break
        return rewards
