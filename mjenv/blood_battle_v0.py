"""Sichuan blood battle (血战到底) as a PettingZoo AEC environment.

======================  =====================================================================
Import                  ``from mjenv import blood_battle_v0``
Make                    ``blood_battle_v0.env(preset="happy"|"qq", **options)``; ``raw_env`` unwrapped
Agents                  ``player_0`` … ``player_3`` (seats; the dealer is rolled by seeded dice)
Action space            ``Discrete(62)``, the same for every seat (see below)
Observation space       ``Dict(observation=Box(-inf, inf, (73, 27), float32), action_mask=Box(0, 1, (62,), int8))``
State space             ``Box((134, 27), float32)``: every hand, chosen voids, the wall order
Rewards                 bean deltas (欢乐豆) at the step they happen (RULES.md B1–B2)
Render modes            ``ansi`` (returns a str), ``human`` (prints)
======================  =====================================================================

**Options.** ``preset``: ``happy`` (seed 002) or ``qq`` (seed 004); ``mode``: ``blood`` or
``classic`` (first win ends the hand); any field of :class:`mjenv.config.BloodBattleRules` by
name (``cap_fan=8``, ``room_coefficient=200``, ``rake=400`` …); ``rules_file``: a YAML file of
``configs/``; ``match_hands`` (default 1): hands per episode, the dealer passing per S1;
``render_mode``; ``tile_style``: ``zh`` or ``unicode``; ``log_path`` (default None): append a
JSON-lines replay log of every finished hand to this file (a header with the rules and seed,
then every event and decision; see :mod:`mjenv.replay`, verify with ``mjenv replay FILE``).
Unknown options and bad values raise at construction, naming the field.

**Actions** (``env.unwrapped.action_name(a)``)::

    [ 0, 27)  discard kind k (0-8 1m-9m, 9-17 1p-9p, 18-26 1s-9s)
    [27, 54)  kong of kind k on one's own turn: 暗杠 if four in hand, else 面下杠 onto one's 碰
    54 碰 · 55 直杠 (kong on the discard) · 56 胡 · 57 抢杠胡 · 58 pass (过)
    [59, 62)  定缺 void suit m, p, s

**Action mask.** ``int8``; only the seat to act has ones. 定缺 phase: the three suits. Own
turn: 胡 when the hand wins (never while holding a void tile); discards, limited to the void
suit while any is held; kongs (never of the void suit, never with an empty wall). Claim on a
discard: 胡 / 直杠 / 碰 / pass, asked seat by seat in turn order and resolved after all have
answered (一炮多响). Rob window after a 面下杠: 抢杠胡 / pass. qq's forced win (S13): once a draw
has taken one of the wall's last four tiles, 胡 / 抢杠胡 is the only action of a seat that can
win. A seat with no choice is never asked: a decision with one legal action (a lone void-suit
discard, a forced win) is played at once, and its effects land in the same step.

**Observation** (see :class:`mjenv.encoding.BloodBattleObserver` for the named plane ranges):
own hand, drawn tile, the claimable tile, each seat's melds, discards (counts and the last 4),
void suits once all four are chosen, wins and winning tiles, 暗杠 counts, dealer, beans, the
observer's seat, the phase, the wall count, whether the current draw is a kong replacement,
and the rule flags that change play (add_base bonus, 杠上炮 transfer, forced win, classic mode).
Seat-relative order.

**Rewards and episode end.** A seat's reward at a step is its bean change at that step: kong
payments and wins settle at once (实时结算), the draw checks (查花猪, 查大叫, 退税) and the rake at
the end. Seats that have won stay in ``agents`` (never selected) until the hand ends; every seat
terminates together. ``infos`` hold ``beans`` and ``end_reason`` at the end.

**Version history.** v0 (mjenv 0.1.0): first release, encoder v0; ``log_path`` replay logs;
the adapter now shared with ``joy_mahjong_v0`` (:mod:`mjenv.aec`), same behaviour.
"""

from __future__ import annotations

import os
from typing import Any

from pettingzoo import AECEnv

from . import replay
from .actions import BLOOD_BATTLE as LAYOUT
from .aec import MahjongAECEnv, wrap
from .config import BloodBattleRules, blood_battle_rules, load_rules_file
from .encoding import BloodBattleObserver
from .engine.blood_battle import N_SEATS, BloodBattleGame, IllegalActionError, seeded_wall

__all__ = ["LAYOUT", "N_SEATS", "BloodBattleGame", "IllegalActionError", "env", "raw_env", "seeded_wall"]


def env(**options: Any) -> AECEnv:
    """The wrapped environment (order enforcing)."""
    return wrap(raw_env(**options))


class raw_env(MahjongAECEnv):
    """Blood battle AEC environment; see the module docstring for the reference table."""

    metadata = {"name": "blood_battle_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False}
    layout = LAYOUT
    script_keys = ("wall", "dealer")
    """``reset(options=...)``: ``wall`` (108 kinds, head first) and ``dealer`` script the first hand."""

    def __init__(self, preset: str = "happy", render_mode: str | None = None, match_hands: int = 1,
                 tile_style: str = "zh", rules_file: str | None = None,
                 log_path: str | os.PathLike | None = None, **rule_overrides: Any) -> None:
        super().__init__()
        if rules_file is not None:
            spec = load_rules_file(rules_file)
            if spec["game"] != "blood_battle":
                raise ValueError(f"{rules_file}: game {spec['game']!r} is not blood_battle")
            preset, rule_overrides = spec["preset"], {**spec["rules"], **rule_overrides}
        self.rules: BloodBattleRules = blood_battle_rules(preset, **rule_overrides)
        self.preset = preset
        r = self.rules
        observer = BloodBattleObserver(
            # One capped win's worth of beans: keeps the bean planes near [-3, 3].
            bean_scale=r.base_points * 2 ** (r.cap_fan - 1) * r.room_coefficient,
            rule_flags=(r.self_draw_bonus == "add_base", r.gang_pao_transfer, r.forced_win_last_four,
                        r.mode == "classic"),
        )
        self._setup(observer, render_mode, match_hands, tile_style, log_path)
        self.game: BloodBattleGame | None = None

    def _new_game(self, hand_index: int, previous: BloodBattleGame | None) -> BloodBattleGame:
        """Hand ``hand_index`` of the seed; the dealer: scripted (first hand), the last dealer-in
        in classic mode (S1), else the seeded dice."""
        wall, dice = seeded_wall(self._hand_seed, hand_index)
        if previous is None:
            dealer = self._script.get("dealer")
            wall = self._script.get("wall", wall)
        else:
            dealer = previous.next_dealer if self.rules.mode == "classic" else None
        return BloodBattleGame(self.rules, wall, dice if dealer is None else dealer)

    def _log_header(self) -> dict[str, Any]:
        return replay.hand_header(self.preset, self.rules, self._hand_seed, self.hand_index)
