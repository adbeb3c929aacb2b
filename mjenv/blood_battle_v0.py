"""Sichuan blood battle (血战到底) as a PettingZoo AEC environment.

======================  =====================================================================
Import                  ``from mjenv import blood_battle_v0``
Make                    ``blood_battle_v0.env(preset="happy"|"qq", **options)``; ``raw_env`` unwrapped
Parallel API            ``blood_battle_v0.parallel_env(**options)``: every seat that must decide acts in one
                        step (定缺 of all four, a claim or rob window); the others' mask is PASS alone (below)
Agents                  ``player_0`` … ``player_3`` (seats; the dealer is rolled by seeded dice)
Action space            ``Discrete(62)``, the same for every seat (see below); ``Discrete(63)`` with ``escape``
Observation space       ``Dict(observation=Box(low, high, (73, 27), float32), action_mask=Box(0, 1, (62,), int8))``;
                        finite bounds per plane: ``docs/observations.md``; +4 planes each with
                        ``escape`` (``escaped``) and ``bankroll`` (``balance``): up to (81, 27)
State space             ``Box((134, 27), float32)``: every hand, chosen voids, the wall order; +4 planes
                        each with ``escape`` and ``bankroll``
Rewards                 bean deltas (欢乐豆) at the step they happen (B1–B2)
Render modes            ``ansi`` (the table, a str), ``human`` (prints it), ``seat`` (a str: what the seat
                        to act observes); ``metadata["render_fps"]`` 4
Illegal actions         ``illegal_action="raise"`` (default), ``"first_legal"`` or ``"terminate"`` (below)
Threads                 one instance per thread: an instance is not thread-safe (below)
======================  =====================================================================

Rule IDs (S1–S15, B1–B2) are anchors of ``docs/rules-blood-battle.md``.

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
with ``escape``, who has escaped; with ``bankroll``, every seat's balance / bean_scale. Seat-relative
order.

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
``parallel_env``, the PettingZoo Parallel API on the same engine (:mod:`mjenv.parallel`).
"""

from __future__ import annotations

import os
from typing import Any

from pettingzoo import AECEnv

from . import replay
from .actions import BLOOD_BATTLE as LAYOUT
from .aec import RENDER_FPS, RENDER_MODES, MahjongAECEnv, wrap
from .parallel import MahjongParallelEnv
from .config import BloodBattleRules, blood_battle_rules, check_episode_beans, load_rules_file
from .rules import beans as bean_rules
from .rules import escape as escape_rules
from .encoding import BloodBattleObserver
from .engine.blood_battle import N_SEATS, BloodBattleGame, IllegalActionError, seeded_wall

__all__ = ["LAYOUT", "N_SEATS", "BloodBattleGame", "IllegalActionError", "env", "parallel_env", "raw_env",
           "seeded_wall"]


def hand_bean_bound(r: BloodBattleRules) -> int:
    """More beans than one seat can win or lose in one hand (the range of the bean planes): three
    capped wins (S11), three 查大叫 payments and three 花猪 payments (S15), and the income of every
    kong a table can make (at most 12 by others or 4 of one's own, 3 payers each), once more as
    杠上炮 transfers (S12) and once as 退税; then the rake; with ``escape``, three escapes' worth
    (:func:`escape_bean_bound`)."""
    win = r.base_points * 2 ** (r.cap_fan - 1) + (r.base_points if r.self_draw_bonus == "add_base" else 0)
    kong = r.base_points * max(r.direct_kong_units, r.added_kong_units, r.concealed_kong_units)
    points = 3 * win + 3 * win + 3 * r.flower_pig_points + (12 + 9 + 12) * kong
    return points * r.room_coefficient + r.rake + (3 * escape_bean_bound(r) if r.escape else 0)


def escape_bean_bound(r: BloodBattleRules) -> int:
    """More beans than one escape moves (S16): the escaper's 扣豆 and 赔偿 to three seats, each C_j at
    most the larger of a 花猪 payment and a capped win (happy); 16倍 or a capped win to three (qq)."""
    claim = max(r.flower_pig_points, r.cap_points)
    if r.escape_rule == "qq":
        return 3 * max(escape_rules.QQ_ESCAPE_UNITS * r.base_points, r.cap_points) * r.room_coefficient
    n, x = r.room_coefficient, r.escape_factor
    penalty = max(r.escape_penalty_floor, n * (3 * r.cap_points + 3 * x * claim))
    return penalty + 3 * max(r.escape_compensation_floor, n * x * claim)



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
                 **rule_overrides: Any) -> None:
        super().__init__()
        if rules_file is not None:
            spec = load_rules_file(rules_file)
            if spec["game"] != "blood_battle":
                raise ValueError(f"{rules_file}: game {spec['game']!r} is not blood_battle")
            preset, rule_overrides = spec["preset"], {**spec["rules"], **rule_overrides}
        self.rules: BloodBattleRules = blood_battle_rules(preset, **rule_overrides)
        self.preset = preset
        r = self.rules
        if isinstance(match_hands, int):  # else _setup names the bad match_hands
            check_episode_beans(hand_bean_bound(r), match_hands, "room_coefficient, base_points, cap_fan, the kong "
                                "and flower-pig units, rake and the escape fields")
        self.layout = LAYOUT.with_escape(r.escape)
        scale = r.base_points * 2 ** (r.cap_fan - 1) * r.room_coefficient
        observer = BloodBattleObserver(
            # One capped win's worth of beans: keeps the bean planes near [-3, 3].
            bean_scale=scale,
            rule_flags=(r.self_draw_bonus == "add_base", r.gang_pao_transfer, r.forced_win_last_four,
                        r.mode == "classic"),
            bean_bound=hand_bean_bound(r) / scale,
            escape=r.escape,
            balance_bound=None if r.bankroll is None else bean_rules.balance_bound(r.bankroll) / scale,
        )
        self._setup(observer, render_mode, match_hands, tile_style, log_path, illegal_action, illegal_reward,
                    observation_dtype)
        self.game: BloodBattleGame | None = None

    def _new_game(self, seed: int, hand_index: int, previous: BloodBattleGame | None,
                  script: dict[str, Any]) -> BloodBattleGame:
        """Hand ``hand_index`` of ``seed``; the dealer: scripted (first hand), the last dealer-in
        in classic mode (S1), else the seeded dice."""
        wall, dice = seeded_wall(seed, hand_index)
        if previous is None:
            dealer = script.get("dealer")
            wall = script.get("wall", wall)
        else:
            dealer = previous.next_dealer if self.rules.mode == "classic" else None
        balances = None if previous is None else previous.balances  # B4: they carry over a match
        return BloodBattleGame(self.rules, wall, dice if dealer is None else dealer, balances=balances)

    def _log_header(self) -> dict[str, Any]:
        return replay.hand_header(self.preset, self.rules, self._hand_seed, self.hand_index,
                                  scripted=self._script if self.hand_index == 0 else ())
