"""Joy Mahjong (欢乐麻将) as a PettingZoo AEC environment.

======================  =====================================================================
Import                  ``from mjenv import joy_mahjong_v0``
Make                    ``joy_mahjong_v0.env(room="popular"|"eight_fan"|"no_fan", **options)``; ``raw_env`` unwrapped
Parallel API            ``joy_mahjong_v0.parallel_env(**options)``: every seat that must decide acts in one
                        step (a claim or rob window); the others' mask is PASS alone (below)
Agents                  ``player_0`` … ``player_3`` (seats; dealer and prevailing wind seeded)
Action space            ``Discrete(76)``, the same for every seat (see below); ``Discrete(77)`` with ``escape``
Observation space       ``Dict(observation=Box(low, high, (82, 34), float32), action_mask=Box(0, 1, (76,), int8))``;
                        finite bounds per plane: ``docs/observations.md``; (86, 34) with ``bankroll``
                        (the ``balance`` planes)
State space             ``Box((176, 34), float32)``: every hand, the wall order with its flowers; (180, 34)
                        with ``bankroll``
Rewards                 bean deltas (欢乐豆) at the step they happen (B1–B2)
Render modes            ``ansi`` (the table, a str), ``human`` (prints it), ``seat`` (a str: what the seat
                        to act observes); ``metadata["render_fps"]`` 4
Illegal actions         ``illegal_action="raise"`` (default), ``"first_legal"`` or ``"terminate"`` (below)
Threads                 one instance per thread: an instance is not thread-safe (below)
Backend                 ``backend="reference"`` (default: the readable engine, the specification) or
                        ``"compiled"`` (one table of the compiled engine of ``mjenv.vector``: the same game
                        step for step, faster; no ``ansi``/``human`` render, ``log_path`` or ``parallel_env``)
======================  =====================================================================

Rule IDs (J1–J10, B1–B2) are anchors of ``docs/rules-joy-mahjong.md``.

**Options.** ``room``: ``popular`` 大众场, ``eight_fan`` 8番场 (a 胡 needs >= 8 fan without flowers)
or ``no_fan`` 无番场 (J5); any field of :class:`mjenv.config.JoyMahjongRules` by name
(``discard_payers="all_mcr"``, ``room_coefficient=200``, ``rake=20`` …); ``rules_file``: a YAML
file with ``game: joy_mahjong``; ``match_hands`` (default 1): hands per episode — the deal passes
to the next seat every hand and the prevailing wind advances every four hands from East (J10;
16 = a full match); ``render_mode``; ``tile_style``: ``zh`` or ``unicode``; ``log_path`` (default
None): append a JSON-lines replay log of every finished hand to this file (a header naming the
game, its rules and seed, then every event — 补花, the 财神 indicator, the bird included — and
decision; see :mod:`mjenv.replay`, verify with ``mjenv replay FILE``, draw with ``mjenv view FILE``;
``env.unwrapped.log_decision(probs)`` before a step adds the legal actions and a policy's
probabilities to that decision's line). Unknown options and
bad values raise at construction, naming the field; ``log_path``'s folder must exist;
``illegal_action`` and ``illegal_reward`` (below). ``reset(seed, options)`` accepts ``wall``
(144 kinds, head first), ``dealer`` and ``prevailing_wind`` (0-3 = E S W N) for the first hand;
without them the wall, the dealer and (single-hand episodes) the prevailing wind come from the
seed, a pure function of (seed, hand index). A bad seed or option raises before anything changes.

**Escape and balances** (rule fields, off by default; ``docs/rules-joy-mahjong.md`` §13):

==========================  ==========================================================================
``escape`` (False)          J11: ESCAPE (逃跑), action 76, at every decision; it ends the hand at once
``escape_x`` (None)         J11: X_e, points the escaper pays each other seat (·N); None: the room's X of
                            an 8-fan win, no bird, no dealer (popular 8, eight_fan 16, no_fan 10)
``bankroll`` (None)         B4: beans each seat holds (an int or four); None: unlimited. No payment takes
                            a seat below 0 (a short payer pays what it holds, split in the ratio owed);
                            balances carry over a match
``min_beans`` (0)           B4: 场次下限; a seat below it after a hand ends the match
==========================  ==========================================================================

**Actions** (``env.unwrapped.action_name(a)``, ``action_name_zh(a)``)::

    [ 0, 34)  discard kind k (0-8 1m-9m, 9-17 1p-9p, 18-26 1s-9s, 27-30 E S W N, 31-33 C F P)
    [34, 68)  kong of kind k on one's own turn: 暗杠 if four in hand, else 加杠 onto one's 碰
    [68, 71)  吃 the discard of the seat on one's left; the claimed tile is the lowest / middle /
              highest tile of the chow
    71 碰 · 72 直杠 (kong on the discard) · 73 胡 · 74 抢杠胡 · 75 pass (过)
    76        escape (逃跑), only with ``escape=True``

**Action mask.** ``int8``; only the seat to act has ones. Own turn: 胡 when the hand wins (in
the eight_fan room only with >= 8 fan without flowers), every held kind as a discard (a
wildcard may be discarded), kongs (never of the wildcard, never when nothing but flowers is left
to draw, J8). Claim on a discard: 胡 / 直杠 / 碰 / 吃 (from the left seat only, J3) / pass, asked
seat by seat in turn order and resolved after all have answered: 胡 > 杠/碰 > 吃, and of several
胡 only the first in turn order from the discarder wins (截和). A discarded wildcard cannot be claimed at all, so
nobody is asked (J2). Rob window after a 加杠: 抢杠胡 / pass. A seat with no choice is never
asked: a decision with one legal action is played at once. Flowers are set aside and replaced
automatically (补花, J1): no decision. With ``escape`` every seat asked may also escape.

**Observation** (see :class:`mjenv.encoding.JoyMahjongObserver` for the named plane ranges):
own hand, drawn tile, the claimable tile, each seat's 吃/碰/exposed kongs, discards (counts and
the last 4), the 财神 and its indicator, the winning tile, each seat's flower count and 暗杠
count, dealer, beans, the observer's seat, seat wind and the prevailing wind, the phase, the wall
count, whether the current draw is a kong replacement, and the room and payer rule; with
``bankroll``, every seat's balance / bean_scale. Seat-relative order. Other seats' concealed tiles and 暗杠 kinds are never shown.

**Illegal actions** (``illegal_action``). ``"raise"`` (default): an action outside the mask, or
``None`` for a seat that must act, raises ``IllegalActionError`` naming the legal actions and
changes nothing; a non-integer (``True`` included) raises ``TypeError``. ``"first_legal"``: the
lowest legal action is played instead. ``"terminate"`` (as PettingZoo classic envs): the episode
ends at once, every seat terminated; the offender's reward is ``illegal_reward`` (default: minus
a big win doubled by the bird and the dealer, ``4 * 16 / 24 / 10 * room_coefficient`` beans in
the popular / eight_fan / no_fan room: -64, -96, -40), every other seat's 0; ``infos`` hold
``beans`` (the beans so far, the penalty not included) and ``end_reason="illegal_action"``, and
the unfinished hand writes no log. The two last modes set ``infos[agent]["illegal_action"]``
until the seat's next step; they let samplers that ignore the mask (PettingZoo's state test,
RLlib's env pre-check, TorchRL's default collector policy) run. Train with the mask and the
default.

**Rewards and episode end.** A seat's reward at a step is its bean change at that step: the
hand ends at the first win (paid at once: J5–J8, the bird and dealer doubling included) or when
the wall is empty (荒庄, J10: nobody pays); the rake is taken from every seat at the end of every
hand; an escape ends it too (J11). Every seat terminates together; ``infos`` hold ``beans`` (of the
episode) and ``end_reason`` (``win``, ``draw``, ``escape``) at the end; with ``bankroll`` also
``balance`` and ``match_end`` (``hands``, or ``min_beans`` when a seat fell below it and the match
stopped early).

**Parallel API** (``parallel_env``, :mod:`mjenv.parallel`, ``docs/integrations/pettingzoo.md``).
The same table and options (``render_mode``: ``ansi`` or ``human``). Each step takes the actions of
every seat that must decide: the seat to act on its turn; every seat asked about a discard or
an added kong, fed to the engine in the order it asks them (turn order from the discarder),
so the claims resolve exactly as here (of several 胡, the first in turn order wins). Every
other seat's mask has one legal action, PASS (75), the no-op (PASS, ``None`` or no
action). After an escape in a window the later seats are asked again at the next step and
their actions are ignored (``infos[agent]["action_ignored"]``). Rewards: each seat's bean
change during the step; every seat terminates together. ``metadata["is_parallelizable"]``
stays False: PettingZoo's ``aec_to_parallel`` expects each agent once per cycle in agent order.

**Threads.** One env instance is not thread-safe: step, observe and reset it from one thread
at a time. Separate instances are independent (they share only the thread-safe lookup caches
of the rules) and may run in parallel threads.

**Version history.** v0 (mjenv 0.1.0): first release, encoder v0; ``log_path`` replay logs;
``illegal_action`` / ``illegal_reward``; ``reset`` checks its arguments before it changes
anything; ``log_path`` checked at construction, and a failed log write leaves the env consistent;
finite observation and state bounds (``hand_bean_bound``), ``render_fps``, the ``seat`` render mode;
the ``escape`` and ``bankroll`` options (off by default: the default spaces are unchanged);
``parallel_env``, the PettingZoo Parallel API on the same engine (:mod:`mjenv.parallel`);
``backend="compiled"``, the same env on the compiled engine (:mod:`mjenv.compiled_table`), the
readable engine staying the default; the options checked once into a game spec (:mod:`mjenv.spec`).
"""

from __future__ import annotations

import os
from typing import Any

from pettingzoo import AECEnv

from . import replay
from .actions import JOY_MAHJONG as LAYOUT
from .aec import RENDER_FPS, RENDER_MODES, MahjongAECEnv, wrap
from .parallel import MahjongParallelEnv
from .spec import MAX_FAN, spec
from .spec import joy_mahjong_bean_bound as hand_bean_bound
from .engine.joy_mahjong import N_SEATS, IllegalActionError, JoyMahjongGame, seeded_wall

__all__ = ["LAYOUT", "MAX_FAN", "N_SEATS", "IllegalActionError", "JoyMahjongGame", "env", "hand_bean_bound",
           "parallel_env", "raw_env", "seeded_wall"]


def env(**options: Any) -> AECEnv:
    """The wrapped environment (order enforcing)."""
    return wrap(raw_env(**options))


def parallel_env(render_mode: str | None = None, **options: Any) -> MahjongParallelEnv:
    """The PettingZoo Parallel environment (:mod:`mjenv.parallel`): every seat that must decide
    acts in the same step; ``options`` as ``env``'s; ``render_mode`` ``ansi`` or ``human``."""
    return MahjongParallelEnv(raw_env(**options), render_mode)


class raw_env(MahjongAECEnv):
    """Joy Mahjong AEC environment; see the module docstring for the reference table."""

    metadata = {"name": "joy_mahjong_v0", "render_modes": RENDER_MODES, "render_fps": RENDER_FPS,
                "is_parallelizable": False}
    layout = LAYOUT
    script_keys = ("wall", "dealer", "prevailing_wind")
    """``reset(options=...)``: ``wall`` (144 kinds, head first), ``dealer`` and ``prevailing_wind``
    script the first hand."""

    def __init__(self, room: str | None = None, render_mode: str | None = None, match_hands: int = 1,
                 tile_style: str = "zh", rules_file: str | None = None, preset: str = "standard",
                 log_path: str | os.PathLike | None = None, illegal_action: str = "raise",
                 illegal_reward: float | None = None, observation_dtype: str = "float32",
                 backend: str = "reference", **rule_overrides: Any) -> None:
        super().__init__()
        self._setup(spec("joy_mahjong", preset, room=room, rules_file=rules_file, match_hands=match_hands,
                         illegal_action=illegal_action, illegal_reward=illegal_reward,
                         observation_dtype=observation_dtype, **rule_overrides),
                    render_mode, tile_style, log_path, backend)
        self.game: JoyMahjongGame | None = None

    def _log_header(self) -> dict[str, Any]:
        return replay.hand_header(self.preset, self.rules, self._hand_seed, self.hand_index, game="joy_mahjong",
                                  scripted=self._script if self.hand_index == 0 else ())
