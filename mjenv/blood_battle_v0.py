"""Sichuan blood battle (血战到底) as a PettingZoo AEC environment.

======================  =====================================================================
Import                  ``from mjenv import blood_battle_v0``
Make                    ``blood_battle_v0.env(preset="happy"|"qq", **options)``; ``raw_env`` unwrapped
Parallel API            ``blood_battle_v0.parallel_env(**options)``: every seat that must decide acts in one
                        step (定缺 of all four, a claim or rob window); the others' mask is PASS alone (below)
Agents                  ``player_0`` … ``player_3`` (seats; the dealer is rolled by seeded dice)
Action space            ``Discrete(62)``, the same for every seat (see below); ``Discrete(63)`` with ``escape``;
                        +59 with ``items`` (121, or 122 with ``escape``)
Observation space       ``Dict(observation=Box(low, high, (73, 27), float32), action_mask=Box(0, 1, (62,), int8))``;
                        finite bounds per plane: ``docs/observations.md``; +4 planes each with
                        ``escape`` (``escaped``) and ``bankroll`` (``balance``): up to (81, 27); +40
                        planes with ``items`` (up to (121, 27))
State space             ``Box((134, 27), float32)``: every hand, chosen voids, the wall order; +4 planes
                        each with ``escape`` and ``bankroll``; +46 with ``items``
Rewards                 bean deltas (欢乐豆) at the step they happen (B1–B2)
Render modes            ``ansi`` (the table, a str), ``human`` (prints it), ``seat`` (a str: what the seat
                        to act observes); ``metadata["render_fps"]`` 4
Illegal actions         ``illegal_action="raise"`` (default), ``"first_legal"`` or ``"terminate"`` (below)
Threads                 one instance per thread: an instance is not thread-safe (below)
Backend                 ``backend="reference"`` (default: the readable engine, the specification) or
                        ``"compiled"`` (one table of the compiled engine of ``mjenv.vector``: the same game
                        step for step, faster; no ``ansi``/``human`` render, ``log_path`` or ``parallel_env``)
======================  =====================================================================

Rule IDs (S1–S17, B1–B4) are anchors of ``docs/rules-blood-battle.md``.

**Options.** ``preset``: ``happy`` (seed 002) or ``qq`` (seed 004); ``mode``: ``blood`` or
``classic`` (first win ends the hand); any field of :class:`mjenv.config.BloodBattleRules` by
name (``cap_fan=8``, ``room_coefficient=200``, ``rake=400`` …); ``rules_file``: a YAML file of
``configs/``; ``match_hands`` (default 1): hands per episode, the dealer passing per S1;
``render_mode``; ``tile_style``: ``zh`` or ``unicode``; ``log_path`` (default None): append a
JSON-lines replay log of every finished hand to this file (a header with the rules and seed,
then every event and decision; see :mod:`mjenv.replay`, verify with ``mjenv replay FILE``, draw
with ``mjenv view FILE``; its folder must exist; ``env.unwrapped.log_decision(probs)`` before a
step adds the legal actions and a policy's probabilities to that decision's line);
``illegal_action`` and ``illegal_reward`` (below). Unknown options and
bad values raise at construction, naming the field (the escape fields need ``escape=True``,
``min_beans`` needs ``bankroll``).

**Escape and balances** (rule fields, off by default; ``docs/rules-blood-battle.md`` §10):

======================================  ==============================================================
``escape`` (False)                      S16: ESCAPE (逃跑/强退), action 62, at every decision of a seat in
                                        play; the escaper never acts again
``escape_rule`` (happy: ``"happy"``,    ``happy``: the hand goes on; 扣豆 to no one + 赔偿 to each seat at
qq: ``"qq"``)                           the table (S16.1). ``qq``: the hand ends; 16倍 to each seat not
                                        won, the larger 查大叫 value in the last four tiles (S16.2)
``escape_factor`` (1)                   S16.1: x, the 修正参数 (``happy`` only)
``escape_min_penalty`` (None)           S16.1: least 扣豆 in beans; None: N·6·2^(cap_fan−1)
``escape_min_compensation`` (None)      S16.1: least 赔偿 in beans; None: N·6
``bankroll`` (None)                     B4: beans each seat holds (an int or four); None: unlimited. No
                                        payment takes a seat below 0 (a short payer pays what it holds,
                                        split in the ratio owed); balances carry over a match
``min_beans`` (0)                       B4: 场次下限; a seat below it after a hand ends the match
``items`` (None)                        S17 (§11): items (道具) per seat and hand: an int, item -> count
                                        or four mappings; on either backend
``qiankun_tiles`` (10)                  S17.3: tiles of one suit a 乾坤大挪移 deal holds at least (1-13)
``qianliyan_parts`` (4)                 S17.6: equal parts of the live wall 千里眼 tells apart (1-55)
======================================  ==============================================================
 ``reset(seed, options)`` accepts ``wall``
(108 kinds, head first) and ``dealer`` (0-3) for the first hand; a bad seed or option raises
before anything changes.

**Actions** (``env.unwrapped.action_name(a)``)::

    [ 0, 27)  discard kind k (0-8 1m-9m, 9-17 1p-9p, 18-26 1s-9s)
    [27, 54)  kong of kind k on one's own turn: 暗杠 if four in hand, else 面下杠 onto one's 碰
    54 碰 · 55 直杠 (kong on the discard) · 56 胡 · 57 抢杠胡 · 58 pass (过)
    [59, 62)  定缺 void suit m, p, s
    62        escape (逃跑/强退), only with ``escape=True``
    with ``items`` (S17), from I = 62 (63 with escape): [I, I+5) use 乾坤大挪移 (before the deal;
    keeping it is pass), 偷天换日, 移花接木, 千里眼, 顺风耳 (own turn, before the discard);
    [I+5, I+32) give kind k; [I+32, I+59) name kind k (the two follow-up decisions, own masks)

**Action mask.** ``int8``; only the seat to act has ones. 定缺 phase: the three suits. Own
turn: 胡 when the hand wins (never while holding a void tile); discards, limited to the void
suit while any is held; kongs (never of the void suit, never with an empty wall). Claim on a
discard: 胡 / 直杠 / 碰 / pass, asked seat by seat in turn order and resolved after all have
answered (一炮多响). Rob window after a 面下杠: 抢杠胡 / pass. qq's forced win (S13): once a draw
has taken one of the wall's last four tiles, 胡 / 抢杠胡 is the only action of a seat that can
win. A seat with no choice is never asked: a decision with one legal action (a lone void-suit
discard, a forced win) is played at once, and its effects land in the same step. With ``escape``
every seat asked may also escape, so every decision is asked.

**Observation** (see :class:`mjenv.encoding.BloodBattleObserver` for the named plane ranges):
own hand, drawn tile, the claimable tile, each seat's melds, discards (counts and the last 4),
void suits once all four are chosen, wins and winning tiles, 暗杠 counts, dealer, beans, the
observer's seat, the phase, the wall count, whether the current draw is a kong replacement,
and the rule flags that change play (add_base bonus, 杠上炮 transfer, forced win, classic mode);
with ``escape``, who has escaped; with ``bankroll``, every seat's balance / bean_scale; with
``items``, the own inventory, every seat's uses this hand, the item step, and the seat's private
knowledge (顺风耳's tile, 千里眼's answers). Seat-relative order.

**Illegal actions** (``illegal_action``). ``"raise"`` (default): an action outside the mask, or
``None`` for a seat that must act, raises ``IllegalActionError`` naming the legal actions and
changes nothing; a non-integer (``True`` included) raises ``TypeError``. ``"first_legal"``: the
lowest legal action is played instead. ``"terminate"`` (as PettingZoo classic envs): the episode
ends at once, every seat terminated; the offender's reward is ``illegal_reward`` (default:
minus one capped win, ``base_points * 2**(cap_fan - 1) * room_coefficient`` beans, -192 in both
presets), every other seat's 0; ``infos`` hold ``beans`` (the beans so far, the penalty
not included) and ``end_reason="illegal_action"``, and the unfinished hand writes no log. The
two last modes set ``infos[agent]["illegal_action"]`` until the seat's next step; they let
samplers that ignore the mask (PettingZoo's state test, RLlib's env pre-check, TorchRL's default
collector policy) run. Train with the mask and the default.

**Rewards and episode end.** A seat's reward at a step is its bean change at that step: kong
payments and wins settle at once (实时结算), the draw checks (查花猪, 查大叫, 退税) and the rake at
the end. Seats that have won or escaped stay in ``agents`` (never selected) until the hand ends; every
seat terminates together. ``infos`` hold ``beans`` and ``end_reason`` (``win``, ``draw``, ``escape``) at
the end; with ``bankroll`` also ``balance`` and ``match_end`` (``hands``, or ``min_beans`` when a seat
fell below it and the match stopped early). An escaper's reward is its bean change (扣豆 included).

**Parallel API** (``parallel_env``, :mod:`mjenv.parallel`, ``docs/integrations/pettingzoo.md``).
The same table and options (``render_mode``: ``ansi`` or ``human``). Each step takes the actions of
every seat that must decide: the seat to act on its turn; every seat choosing its void (定缺, S2:
the four in the first step); every seat asked about a discard or an added kong, fed to the
engine in the order it asks them (turn order from the discarder), so the claims resolve exactly
as here (一炮多响). Every other seat's mask has one legal action, PASS (58), the no-op (PASS,
``None`` or no action). After an escape in a window the later seats are asked again at the next step and
their actions are ignored (``infos[agent]["action_ignored"]``). Rewards: each seat's bean
change during the step; every seat terminates together. ``metadata["is_parallelizable"]``
stays False: PettingZoo's ``aec_to_parallel`` expects each agent once per cycle in agent order.

**Threads.** One env instance is not thread-safe: step, observe and reset it from one thread
at a time. Separate instances are independent (they share only the thread-safe lookup caches
of the rules) and may run in parallel threads.

**Version history.** v0 (mjenv 0.1.0): first release, encoder v0; ``log_path`` replay logs;
the adapter now shared with ``joy_mahjong_v0`` (:mod:`mjenv.aec`), same behaviour;
``illegal_action`` / ``illegal_reward``; ``reset`` checks its arguments before it changes
anything; ``log_path`` checked at construction, and a failed log write leaves the env consistent;
finite observation and state bounds (``hand_bean_bound``), ``render_fps``, the ``seat`` render mode;
the ``escape`` and ``bankroll`` options (off by default: the default spaces are unchanged);
``parallel_env``, the PettingZoo Parallel API on the same engine (:mod:`mjenv.parallel`);
``backend="compiled"``, the same env on the compiled engine (:mod:`mjenv.compiled_table`), the
readable engine staying the default; the options checked once into a game spec (:mod:`mjenv.spec`);
the ``items`` option (S17, off by default: the default spaces are unchanged; either backend).
"""

from __future__ import annotations

import os
from typing import Any

from pettingzoo import AECEnv

from . import replay
from .actions import BLOOD_BATTLE as LAYOUT
from .aec import RENDER_FPS, RENDER_MODES, MahjongAECEnv, wrap
from .parallel import MahjongParallelEnv
from .spec import blood_battle_bean_bound as hand_bean_bound
from .spec import escape_bean_bound, spec
from .engine.blood_battle import N_SEATS, BloodBattleGame, IllegalActionError, seeded_wall

__all__ = ["LAYOUT", "N_SEATS", "BloodBattleGame", "IllegalActionError", "env", "escape_bean_bound",
           "hand_bean_bound", "parallel_env", "raw_env", "seeded_wall"]


def env(**options: Any) -> AECEnv:
    """The wrapped environment (order enforcing)."""
    return wrap(raw_env(**options))


def parallel_env(render_mode: str | None = None, **options: Any) -> MahjongParallelEnv:
    """The PettingZoo Parallel environment (:mod:`mjenv.parallel`): every seat that must decide
    acts in the same step; ``options`` as ``env``'s; ``render_mode`` ``ansi`` or ``human``."""
    return MahjongParallelEnv(raw_env(**options), render_mode)


class raw_env(MahjongAECEnv):
    """Blood battle AEC environment; see the module docstring for the reference table."""

    metadata = {"name": "blood_battle_v0", "render_modes": RENDER_MODES, "render_fps": RENDER_FPS,
                "is_parallelizable": False}
    layout = LAYOUT
    script_keys = ("wall", "dealer")
    """``reset(options=...)``: ``wall`` (108 kinds, head first) and ``dealer`` script the first hand."""

    def __init__(self, preset: str = "happy", render_mode: str | None = None, match_hands: int = 1,
                 tile_style: str = "zh", rules_file: str | None = None,
                 log_path: str | os.PathLike | None = None, illegal_action: str = "raise",
                 illegal_reward: float | None = None, observation_dtype: str = "float32",
                 backend: str = "reference", **rule_overrides: Any) -> None:
        super().__init__()
        self._setup(spec("blood_battle", preset, rules_file=rules_file, match_hands=match_hands,
                         illegal_action=illegal_action, illegal_reward=illegal_reward,
                         observation_dtype=observation_dtype, **rule_overrides),
                    render_mode, tile_style, log_path, backend)
        self.game: BloodBattleGame | None = None

    def _log_header(self) -> dict[str, Any]:
        return replay.hand_header(self.preset, self.rules, self._hand_seed, self.hand_index,
                                  scripted=self._script if self.hand_index == 0 else ())
