"""Gymnasium views of the mjenv games: one learning seat against three opponents.

:class:`SingleSeatVectorEnv` is a ``gymnasium.vector.VectorEnv`` of ``num_envs`` tables on the
compiled engine (:mod:`mjenv.vector`), :class:`SingleSeatEnv` a ``gymnasium.Env`` of one table on
the readable AEC engine (the reference). The vector env's episode rules (opponents, seats, rewards,
skipped hands, quantisation) are :class:`mjenv.vector.SingleSeatView`'s, on either backend
(``backend="reference"`` among ``env_options``); this module adds Gymnasium's spaces, its two
autoreset modes and the ``_`` info masks. ``import mjenv`` registers both under one id per game::

    gymnasium.make_vec("mjenv/BloodBattle-v0", num_envs=1024, preset="qq", opponents="heuristic")
    gymnasium.make("mjenv/JoyMahjong-v0", room="eight_fan")    # SingleSeatEnv

=====================  ======================================================================
Make                   ``SingleSeatVectorEnv(game, num_envs, *, opponents="random", seat=0,
                       autoreset_mode=NEXT_STEP, illegal_action="raise", illegal_reward=None,
                       observation_dtype="float32", mask_in_observation=False, num_threads=1,
                       **env_options)``;
                       ``SingleSeatEnv(game, opponents="random", seat=0, illegal_action="raise",
                       **env_options)`` (``env_options``: the AEC env's, ``observation_dtype`` too)
Observation            ``(N, *obs_shape)``: the learning seat's view, the AEC encoder's planes;
                       ``(73, 27)`` blood battle, ``(82, 34)`` Joy; float32, or uint8 with
                       ``observation_dtype="uint8"`` (``docs/observations.md``); with
                       ``mask_in_observation=True`` a ``Dict(observations=<the planes flattened
                       to 1-D>, action_mask=<the mask as float32>)``, the layout RLlib's
                       action-masking modules read (:mod:`mjenv.integrations.rllib`)
Action space           ``MultiDiscrete([A] * N)``; ``single_action_space`` ``Discrete(A)``
                       (62 blood battle, 76 Joy; one more with ``escape``)
Action mask            ``action_masks()`` int8 ``(N, A)`` (sb3-contrib reads it) and
                       ``info["action_mask"]``
Reward                 float32 ``(N,)``: the learning seat's bean change since its previous decision
Autoreset              ``NEXT_STEP`` (Gymnasium's default) or ``SAME_STEP``: the keyword
                       ``autoreset_mode``, declared in ``metadata`` and as the attribute
Waiting tables         ``step(actions, active=None)``: ``active`` bool ``(N,)`` limits the tables
                       that play; the others wait on the same decision (reward 0)
Episode end            ``terminated[i]`` (never truncated); the info holds the table's bean table
                       ``beans`` int64 ``(N, 4)``, ``end_reason``, ``won``, ``skipped_hands``
                       (with ``_`` masks); in ``SAME_STEP`` under ``final_info``, with
                       ``final_obs``; with the rule options, the last hand's ``escaped``
                       ``(N, 4)``, ``penalty`` (blood battle's 扣豆), ``balances`` ``(N, 4)`` and
                       ``item_uses`` ``(N, 4, 5)`` (items, S17) as in :mod:`mjenv.vector`, and
                       with ``bankroll`` ``skipped_beans`` ``(N, 4)``
=====================  ======================================================================

**Autoreset.** ``NEXT_STEP`` (default): the step that ends table ``i``'s episode returns the
learning seat's view of the finished table; the next ``step`` ignores table ``i``'s action and
returns the next episode's first decision with reward 0. The mask row of a finished table is all
ones (the action chosen there is ignored). ``SAME_STEP``: the step that ends the episode already
returns the next episode's first decision; ``info["final_obs"]`` (an object array) holds the view
of the finished table and ``info["final_info"]`` its info, each with Gymnasium's ``_`` masks.
Gymnasium's ``RecordEpisodeStatistics`` assumes ``NEXT_STEP``; with it the episode returns it
records are the learning seat's bean deltas exactly.

**Reward.** Every bean change of the learning seat counts, on its own decisions and on the
opponents' between them (kongs, wins it pays, the draw checks and the rake at the end): the
rewards of an episode sum to ``beans[i, seat]``. Bean changes before the seat's first decision of
an episode count with that decision.

**Skipped hands.** A hand can end before the learning seat is ever asked (a win on the dealer's
first discard; with ``escape``, escapes). Without ``bankroll`` it is merged into the table's next
episode: that episode keeps the seat and the opponents of the skipped hand (with ``seat="random"``
the seat is drawn once per episode, from its first hand's seed), its rewards count the skipped
hand's beans, ``beans`` is the sum over its hands and ``skipped_hands`` counts the merged ones.
With ``bankroll`` every hand starts from the bankroll (B4, docs/rules-blood-battle.md), so a
merged episode could lose more than it holds: the skipped hand is left out of the learner's
episodes instead (its rewards dropped), and the next episode's info reports it in
``skipped_hands`` and ``skipped_beans`` (the skipped hands' bean tables, summed). Either way the
rewards of every episode sum to ``beans[i, seat]``, and with ``bankroll`` its ``balances`` are
``bankroll + beans``.

**Opponents and seats.** ``opponents``: see :mod:`mjenv.integrations.opponents` (names, ``.pt``
paths, policy objects whose ``act_batch`` is called once per engine step over all tables, batched
callables, a :class:`~mjenv.integrations.opponents.Mixture` per table, or
:class:`~mjenv.integrations.opponents.FrozenNetwork` copies of a network the caller trains).
``set_opponents(spec)`` replaces them between steps (a curriculum; self-play against a learner built
after the env). ``seat``: 0-3, or ``"random"``: drawn per episode and table from the episode's seed
(``info["seat"]`` says which). An opponent's action is checked strictly: an illegal one raises
``IllegalActionError`` naming the opponent; the env then refuses to step until ``reset``.

**Illegal actions** of the learning seat: ``illegal_action`` as in the AEC env (``"raise"``,
``"first_legal"``, ``"terminate"`` with ``illegal_reward``), flagged in ``info["illegal_action"]``.

**Seeding.** ``reset(seed=s)`` deals table ``i`` the AEC env's ``reset(seed=s + i)``, then the
seeds of that generator; opponents draw from a generator seeded with ``s``. The same seed and
actions give the same episodes.

Version history: v0 (mjenv 0.1.0): ``mjenv.vector.SingleSeatVectorEnv`` (same-step only) became
this ``SingleSeatVectorEnv``: both autoreset modes, opponents by name and mixture, random seats,
``illegal_action``, ``observation_dtype``; ``SingleSeatEnv`` moved here from ``mjenv.wrappers``.
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .. import games
from ..aec import RENDER_FPS, MahjongAECEnv, check_illegal_action_mode, checked_action, compact_repr
from ..describe import describe_observation
from ..engine.core import N_SEATS
from ..vector import make
from ..vector.single_seat import MAX_SKIPPED, SingleSeatView, seat_option
from .opponents import N_OPPONENTS, Lineups

__all__ = ["SingleSeatEnv", "SingleSeatVectorEnv"]

_AUTORESET_NAMES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}
_INFO_FIELDS = ("beans", "end_reason", "won", "skipped_hands", "skipped_beans", "escaped", "penalty", "balances",
                "item_uses")
"""The finished episodes' fields in the info (the last four with the rule options only)."""


def _autoreset_option(mode: Any) -> AutoresetMode:
    """``mode`` as NEXT_STEP or SAME_STEP (the enum, its value, or ``"next_step"`` / ``"same_step"``)."""
    if isinstance(mode, str) and mode.lower() in _AUTORESET_NAMES:
        return _AUTORESET_NAMES[mode.lower()]
    if mode in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, "NextStep", "SameStep"):
        return AutoresetMode(mode)
    raise ValueError("autoreset_mode must be gymnasium.vector.AutoresetMode.NEXT_STEP or SAME_STEP "
                     f"(or 'next_step' / 'same_step'), got {mode!r}")


class SingleSeatVectorEnv(VectorEnv):
    """One learning seat per table against batched opponents; see the module docstring. The
    episode rules are :class:`~mjenv.vector.single_seat.SingleSeatView`'s (``.view``); this class
    adds Gymnasium's spaces, autoreset modes and ``_`` info masks."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["seat"]}

    def __init__(self, game: str = "blood_battle", num_envs: int = 1, *, opponents: Any = "random",
                 seat: int | str = 0, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 illegal_action: str = "raise", illegal_reward: float | None = None,
                 observation_dtype: str = "float32", mask_in_observation: bool = False, num_threads: int = 1,
                 render_mode: str | None = None, **env_options: Any) -> None:
        self.game = games.game(game).name
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        seat_option(seat)
        self.autoreset_mode = _autoreset_option(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        if not isinstance(mask_in_observation, (bool, np.bool_)):
            raise ValueError(f"mask_in_observation must be True or False, got {mask_in_observation!r}")
        self.mask_in_observation = bool(mask_in_observation)
        check_illegal_action_mode(illegal_action)
        venv = make(game, num_envs, num_threads=num_threads, copy=False, final_observations=True,
                    illegal_action=illegal_action, illegal_reward=illegal_reward, **env_options)
        self.view = SingleSeatView(venv, Lineups(opponents, self.game, venv.num_envs), seat=seat,
                                   observation_dtype=observation_dtype)
        """The batched single-seat view underneath: the episode rules (``mjenv.vector.single_seat``)."""
        self.num_envs = n = venv.num_envs
        self.seat_option, self.observation_dtype = self.view.seat_option, self.view.observation_dtype
        self.merges_skipped = self.view.merges_skipped
        planes = self._planes = self.view.single_observation_space
        self.single_action_space = venv.single_action_space
        if self.mask_in_observation:
            self.single_observation_space = spaces.Dict({
                "observations": spaces.Box(planes.low.reshape(-1), planes.high.reshape(-1), dtype=planes.dtype),
                "action_mask": spaces.Box(0.0, 1.0, (self.single_action_space.n,), np.float32)})
        else:
            self.single_observation_space = planes
        compact_repr(self.single_observation_space)
        self.observation_space = compact_repr(batch_space(self.single_observation_space, n))
        self.action_space = spaces.MultiDiscrete(np.full(n, self.single_action_space.n))
        self.render_mode = render_mode
        self.observer = self.view.observer
        """The encoder of the observations (``describe_observation(obs[i], env.unwrapped.observer)``)."""
        self._every = np.ones(n, dtype=np.bool_)
        self._autoreset = np.zeros(n, dtype=np.bool_)  # NEXT_STEP: the table resets at the next step

    @property
    def venv(self) -> Any:
        """The :func:`mjenv.vector.make` env underneath (every seat's view)."""
        return self.view.venv

    @property
    def opponents(self) -> Lineups:
        """The opponents' lineup table (``policies``, ``lineup``)."""
        return self.view.opponents

    # ------------------------------------------------------------------ Gymnasium API

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every table (the engine's seeding) and play the opponents up to the seat's turn.
        ``options`` script every table's first hand (the AEC env's ``wall``, ``dealer`` ...)."""
        obs, info = self.view.reset(seed=seed, options=options)
        self._autoreset[:] = False
        info = self._info(info)
        return self._with_mask(obs, info["action_mask"]), info

    def step(self, actions: Any, active: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learning seat's action at every table, then the opponents up to its next decision.

        ``active`` (bool ``(N,)``, default all): only these tables play; the others wait on the same
        decision (their actions are ignored, reward 0, not terminated; in ``NEXT_STEP`` mode a
        waiting table that has just ended keeps its final view and restarts at its next active step).
        """
        n = self.num_envs
        moving = self._every if active is None else self.view.check_active(active)
        # NEXT_STEP: a table that ended at the previous step only shows the decision it waits on.
        obs, reward, terminated, view_info, final = self.view.step(actions, moving & ~self._autoreset)
        info = self._info(view_info)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._autoreset = terminated | (self._autoreset & ~moving)
            if self._autoreset.any():
                obs[self._autoreset] = self.view.final_obs[self._autoreset]
                info["action_mask"][self._autoreset] = 1
            if final:
                self._add(info, final, terminated)
        elif final:
            info["final_info"] = {}
            self._add(info["final_info"], final, terminated)
            info["_final_info"] = terminated.copy()
            info["final_obs"] = np.full(n, None, dtype=object)
            for i in np.flatnonzero(terminated):  # the mask of a finished table: all ones, as in NEXT_STEP
                info["final_obs"][i] = self._with_mask(final["final_obs"][i].copy(),
                                                       np.ones(len(info["action_mask"][i])))
            info["_final_obs"] = terminated.copy()
        return self._with_mask(obs, info["action_mask"]), reward, terminated, np.zeros(n, dtype=np.bool_), info

    def action_masks(self) -> np.ndarray:
        """int8 ``(N, A)``: the learning seat's legal actions at each table (all ones for a finished
        table in ``NEXT_STEP`` mode, whose next action is ignored)."""
        masks = self.view.action_masks()
        masks[self._autoreset] = 1
        return masks

    def render(self) -> tuple[str, ...] | None:
        """``render_mode="seat"``: each table's learning-seat view as text (:func:`mjenv.describe.describe_observation`),
        the view the last step returned (a finished table's last view in ``NEXT_STEP`` mode)."""
        if self.render_mode is None or not self.view.ready:
            return None
        views = list(self.view.planes())
        for t in np.flatnonzero(self._autoreset):
            views[t] = self.view.final_obs[t]
        return tuple(describe_observation(planes, self.observer) for planes in views)

    def set_opponents(self, opponents: Any) -> None:
        """New opponents (any ``opponents`` spec), from their next decision on; a mixture draws
        the current hands' lineups from their seeds. A bad spec raises and changes nothing."""
        self.view.set_opponents(Lineups(opponents, self.game, self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        if hasattr(self, "view"):  # gymnasium closes in __del__, also after a failed __init__
            self.view.close()

    # ------------------------------------------------------------------ helpers

    def _with_mask(self, planes: np.ndarray, mask: np.ndarray) -> Any:
        """The observation as returned: the planes, or with ``mask_in_observation`` the Dict of the
        flattened planes and the float32 mask (one table's or a batch's)."""
        if not self.mask_in_observation:
            return planes
        flat = planes.reshape(-1) if planes.ndim == len(self._planes.shape) else planes.reshape(len(planes), -1)
        return {"observations": flat, "action_mask": np.asarray(mask, dtype=np.float32)}

    def _info(self, view_info: dict[str, Any]) -> dict[str, Any]:
        """The view's info with Gymnasium's ``_`` masks (every table)."""
        info = {}
        for key, value in view_info.items():
            info[key], info[f"_{key}"] = value, self._every.copy()
        return info

    @staticmethod
    def _add(info: dict[str, Any], final: dict[str, Any], terminated: np.ndarray) -> None:
        """The finished episodes' fields, each with Gymnasium's ``_`` mask."""
        for key in _INFO_FIELDS:
            if key in final:  # the last five with the rule options only
                info[key], info[f"_{key}"] = final[key], terminated.copy()
        info["seat"] = np.where(terminated, final["seat"], info.get("seat", 0))  # the finished episode's
        info["_seat"] = info.get("_seat", terminated).copy()


class SingleSeatEnv(gymnasium.Env):
    """One learning seat of one table (the readable AEC engine) against three opponent policies.

    ``opponents``: one spec or a list of three, each a policy name (``"random"``, ``"heuristic"``,
    ``"ppo"``, a shipped policy's name), a checkpoint path ending ``.pt``, a Policy object
    (``act(observation, action_mask, rng)``) or a callable with that signature. ``seat``: 0-3 or
    ``"random"`` (drawn per episode from the seeded ``np_random``). The observation, action space,
    mask (``action_masks()``, ``info["action_mask"]``), rewards and episode end are those of
    :class:`SingleSeatVectorEnv` for one table; ``illegal_action`` applies to the learning seat
    (an opponent's illegal action always raises). A hand that ends before the learning seat is
    asked is dealt again from the seeded stream by ``reset`` (``info["skipped_episodes"]``); as in
    the vector env it is merged (its beans in the first reward, ``info["carried_reward"]`` at reset,
    and in the final ``beans``), or with ``bankroll`` left out (``info["skipped_beans"]``, the
    seat's, at reset; the final ``balance`` is ``bankroll + beans``). ``reset(seed=s)`` with a fixed
    seat deals the AEC env's ``reset(seed=s)``.
    """

    metadata = {"render_modes": ["ansi", "human", "seat"], "render_fps": RENDER_FPS}

    def __init__(self, game: str = "blood_battle", opponents: Any = "random", seat: int | str = 0,
                 illegal_action: str = "raise", **env_options: Any) -> None:
        self.game = games.game(game).name
        self.illegal_action = check_illegal_action_mode(illegal_action)
        self.aec_env: MahjongAECEnv = games.game(game).raw_env(illegal_action=illegal_action, **env_options)
        """The AEC env underneath (``aec_env.game`` is the engine: wins, events, beans)."""
        specs = opponents if isinstance(opponents, (list, tuple)) else [opponents] * N_OPPONENTS
        if len(specs) != N_OPPONENTS:
            raise ValueError(f"opponents must be one spec or a list of {N_OPPONENTS}, got {len(specs)}")
        cache: dict[Any, Any] = {}  # one policy object per distinct name or path
        self.opponents = []
        for spec in specs:
            key = spec if isinstance(spec, str) else id(spec)
            if key not in cache:
                cache[key] = _aec_opponent(spec, self.game)
            self.opponents.append(cache[key])
        self.seat_option = seat_option(seat)
        agent0 = self.aec_env.possible_agents[0]
        self.observation_space = self.aec_env.observation_space(agent0)["observation"]
        self.action_space = self.aec_env.action_space(agent0)
        self.render_mode = self.aec_env.render_mode
        self.seat = self.seat_option if isinstance(self.seat_option, int) else 0
        self._opponent_at: dict[int, Any] = {}
        self._opp_rng = np.random.default_rng()
        self._done = True
        self._pending = 0.0  # learning-seat beans not yet returned as a reward
        self._carried = 0  # the seat's beans of the hands merged into this episode
        self.merges_skipped = self.aec_env.rules.bankroll is None
        """Whether a hand that ends before the seat acts is merged into the next episode (no bankroll)."""

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Deal an episode and play the opponents until the learning seat must act.

        ``options`` go to the AEC env's ``reset`` (``wall``, ``dealer``… script the first hand).
        """
        super().reset(seed=seed)
        rng = self.np_random
        self.seat = int(rng.integers(N_SEATS)) if self.seat_option == "random" else self.seat_option
        self._agent = self.aec_env.possible_agents[self.seat]
        self._opponent_at = {(self.seat + 1 + i) % N_SEATS: p for i, p in enumerate(self.opponents)}
        self._opp_rng = np.random.default_rng(rng.integers(2**63))
        deal_seed = seed if seed is not None else int(rng.integers(2**63))
        skipped_beans, skipped = 0, 0
        while True:
            self.aec_env.reset(seed=deal_seed, options=options)
            self._pending = 0.0
            if self._play_opponents():
                break
            skipped_beans += int(self.aec_env.infos[self._agent]["beans"])  # the seat's, exactly
            skipped += 1
            if skipped >= MAX_SKIPPED:
                raise RuntimeError(f"{skipped} episodes in a row ended before seat {self.seat} was asked to act")
            deal_seed, options = int(rng.integers(2**63)), None
        # Merged (no bankroll): the skipped hands' beans count in this episode's rewards and beans.
        # With bankroll each hand starts from the bankroll (B4), so they are left out, reported apart.
        self._carried = skipped_beans if self.merges_skipped else 0
        self._pending += self._carried
        self._done = False
        info = self._info()
        if skipped:
            info["skipped_episodes"] = skipped
            if self.merges_skipped:
                info["carried_reward"] = float(skipped_beans)
            else:
                info["skipped_beans"] = skipped_beans
        return self._observe(), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learning seat's ``action``, then the opponents until it must act again or the
        episode ends."""
        if self._done:
            raise RuntimeError("the episode has ended (or reset was never called): call reset() first")
        self._step_aec(action)  # the AEC env applies illegal_action
        asked = self._play_opponents()
        reward, self._pending = float(self._pending), 0.0
        self._done = not asked
        info = self._info()
        aec_info = self.aec_env.infos[self._agent]
        if aec_info.get("illegal_action"):
            info["illegal_action"] = True
        if self._done:
            info["beans"], info["end_reason"] = aec_info["beans"] + self._carried, aec_info["end_reason"]
            if "balance" in aec_info:  # bankroll: the episode's own hand, balance == bankroll + beans
                info["balance"] = aec_info["balance"]
        return self._observe(), reward, self._done, False, info

    def action_masks(self) -> np.ndarray:
        """The learning seat's int8 mask (all zeros once the episode has ended)."""
        if self._done or self.aec_env.game is None:
            return np.zeros(self.action_space.n, dtype=np.int8)
        return self.aec_env.game.legal_mask().copy()

    def action_name(self, action: int) -> str:
        """Name of an action, e.g. ``discard 5m``."""
        return self.aec_env.action_name(action)

    @property
    def observer(self) -> Any:
        """The encoder of the observations (``describe_observation(obs, env.unwrapped.observer)``)."""
        return self.aec_env.observer

    def render(self) -> str | None:
        """The AEC env's render; ``render_mode="seat"``: the learning seat's view as text."""
        if self.render_mode == "seat" and self.aec_env.game is not None:
            return describe_observation(self.aec_env.observer.observe(self.aec_env.game, self.seat), self.observer,
                                        self.aec_env.tile_style)
        return self.aec_env.render()

    def close(self) -> None:
        self.aec_env.close()

    def _step_aec(self, action: Any) -> None:
        """One AEC step; the learning seat's share of its bean deltas goes to ``_pending``."""
        self.aec_env.step(action)
        self._pending += self.aec_env.rewards[self._agent]

    def _play_opponents(self) -> bool:
        """Step opponents until the learning seat must act (True) or the episode ends (False)."""
        env = self.aec_env
        while not env.terminations[self._agent]:
            seat = env.game.current_player
            if seat == self.seat:
                return True
            planes = env.observer.observe(env.game, seat)  # opponents read float32 planes
            mask = env.game.legal_mask()
            policy = self._opponent_at[seat]
            action = policy.act(planes, mask.copy(), self._opp_rng)
            # Checked here, strictly: the env's illegal_action mode is for the learning seat only.
            action, _ = checked_action(action, mask, "raise", env.action_name,
                                       who=f"opponent {getattr(policy, 'name', policy)!r} at seat {seat}",
                                       way_out="an opponent policy must choose from the mask it is given")
            self._step_aec(action)
        return False

    def _observe(self) -> np.ndarray:
        return self.aec_env.observe_seat(self.seat)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "seat": self.seat}


def _aec_opponent(spec: Any, game: str) -> Any:
    """A per-decision policy (``act``) from a name, a checkpoint path, a Policy object or a callable."""
    if hasattr(spec, "act") and not isinstance(spec, str):
        return spec
    from agents import load_policy  # the policies: this module sits above them

    return load_policy(spec, game)
