"""The compiled batch policies (agents.compiled) against their Python references.

Decisions come from seeded play of both games (blood battle: both presets) with a mix of heuristic
and random seats, so every decision kind shows up: 定缺, discards, claims (碰, 直杠, 吃, pass), own
kongs, 胡. The default run checks a few thousand; ``-m slow`` checks 100,000.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.compiled import features as compiled_features
from agents.compiled import heuristic as compiled_heuristic
from agents.compiled import heuristic_joy as compiled_heuristic_joy
from agents.features import HandEval, improve_masks, suit_costs
from agents.heuristic import VARIANTS as heuristic_variants
from agents.heuristic import HeuristicPolicy, win_points
from agents.heuristic_joy import VARIANTS as joy_variants
from agents.heuristic_joy import JoyHeuristicPolicy
from agents.heuristic_joy import distance as joy_distance
from agents.lookahead import LOOKAHEAD_PLANES, lookahead, with_lookahead
from agents.lookahead_joy import JOY_LOOKAHEAD_PLANES, lookahead_joy, with_lookahead_joy
from mjenv import blood_battle_v0, joy_mahjong_v0
from mjenv.actions import BLOOD_BATTLE as B
from mjenv.actions import JOY_MAHJONG as J
from mjenv.config import BloodBattleRules, blood_battle_rules
from mjenv.melds import parse_meld
from mjenv.rules.shapes import _group_costs

# Rules whose plain-win points differ from both presets' (which agree on them): every win is worth
# the same, so a compiled path that ignored its rules would value waits, and choose, differently.
ODD_RULES = BloodBattleRules(base_points=2, cap_fan=1, gen_counts_kongs=False)


def play_decisions(game: str, preset: str, hands: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (observation, mask) met in ``hands`` seeded hands; about three seats in four play the
    heuristic (batch path), the others uniformly random."""
    raw = blood_battle_v0.raw_env(preset=preset) if game == "blood_battle" else joy_mahjong_v0.raw_env()
    policy = HeuristicPolicy(rules=raw.rules) if game == "blood_battle" else JoyHeuristicPolicy()
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    for h in range(hands):
        raw.reset(seed=seed * 100_003 + h)
        heuristic_seats = rng.random(4) < 0.75
        while not raw.game.over:
            agent = raw.agent_selection
            o = raw.observe(agent)
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            if heuristic_seats[raw.possible_agents.index(agent)]:
                action = int(policy.act_batch(obs[-1][None], masks[-1][None], rng)[0])
            else:
                legal = np.flatnonzero(masks[-1])
                action = int(legal[rng.integers(legal.size)])
            raw.step(action)
    return np.stack(obs), np.stack(masks)


def decision_kinds(actions: np.ndarray, layout) -> set[str]:
    """Names of the decision kinds among ``actions``."""
    kinds = set()
    for a in set(actions.tolist()):
        if a < layout.KONG:
            kinds.add("discard")
        elif a < 2 * layout.KONG:
            kinds.add("kong")
        elif layout.CHOW >= 0 and layout.CHOW <= a < layout.CHOW + 3:
            kinds.add("chow")
        elif layout.VOID >= 0 and a >= layout.VOID:
            kinds.add("void")
        else:
            kinds.add({layout.PONG: "pong", layout.DIRECT_KONG: "direct_kong", layout.HU: "hu",
                       layout.ROB_KONG: "rob_kong", layout.PASS: "pass"}[a])
    return kinds


def assert_same_choices(policy, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The compiled batch equals ``act`` row by row, with one generator that neither consumes."""
    rng = np.random.default_rng(11)
    state = rng.bit_generator.state
    batch = policy.act_batch(obs, masks, rng)
    reference = np.array([policy.act(o, m, rng) for o, m in zip(obs, masks)])
    assert rng.bit_generator.state == state  # neither heuristic draws from rng
    wrong = np.flatnonzero(batch != reference)
    assert wrong.size == 0, f"{wrong.size} of {len(obs)} differ, first row {wrong[:1]}: " \
                            f"compiled {batch[wrong[:1]]}, python {reference[wrong[:1]]}"
    return reference


def assert_same_planes(obs: np.ndarray, rules: BloodBattleRules) -> np.ndarray:
    """The compiled look-ahead planes equal the Python ones exactly."""
    planes = with_lookahead(obs, rules)[:, obs.shape[1]:]
    reference = np.stack([lookahead(o, rules) for o in obs])
    wrong = np.flatnonzero((planes != reference).any(axis=(1, 2)))
    assert wrong.size == 0, f"{wrong.size} of {len(obs)} rows differ, first {wrong[:1]}"
    return reference


def assert_same_joy_planes(obs: np.ndarray) -> np.ndarray:
    """The compiled Joy look-ahead planes equal the Python ones exactly."""
    planes = with_lookahead_joy(obs)[:, obs.shape[1]:]
    reference = np.stack([lookahead_joy(o) for o in obs])
    wrong = np.flatnonzero((planes != reference).any(axis=(1, 2)))
    assert wrong.size == 0, f"{wrong.size} of {len(obs)} rows differ, first {wrong[:1]}: planes " \
        f"{np.flatnonzero((planes[wrong[0]] != reference[wrong[0]]).any(axis=1)) if wrong.size else ''}"
    return reference


@pytest.fixture(scope="module")
def blood() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Decisions of both presets (compiles the blood-battle paths once for the module)."""
    return {"happy": play_decisions("blood_battle", "happy", 40, 1),
            "qq": play_decisions("blood_battle", "qq", 40, 2)}


@pytest.fixture(scope="module")
def joy() -> tuple[np.ndarray, np.ndarray]:
    """Joy Mahjong decisions (compiles the Joy path once for the module)."""
    return play_decisions("joy_mahjong", "popular", 20, 5)


# ---------------------------------------------------------------------------- building blocks


def test_group_costs_and_improve_masks_equal_the_python_tables() -> None:
    rng = np.random.default_rng(0)
    suits, honours = compiled_features.suit_table(), compiled_features.honour_table()
    for _ in range(3000):
        c = rng.integers(0, 5, 9) * (rng.random(9) < 0.4)
        key = compiled_features.group_key(c, 0, 9)
        python_key = int.from_bytes(bytes(c.tolist()), "little")
        assert tuple(compiled_features.group_costs(suits, key, 9, True)) == suit_costs(python_key)
        assert tuple(compiled_features.improve_masks(suits, key, 9, True)) == improve_masks(python_key)
        h = c[:7]
        key = compiled_features.group_key(h, 0, 7)
        assert tuple(compiled_features.group_costs(honours, key, 7, False)) == \
            _group_costs(int.from_bytes(bytes(h.tolist()), "little"), 7, False)


def test_joy_distance_and_acceptance_equal_the_python_heuristics() -> None:
    """The compiled distance and 受入 count (one suit group recomputed per draw) against the readable
    ones (the whole distance per draw), on random hands: every meld count, wildcards, hands near
    seven pairs."""
    rng = np.random.default_rng(3)
    suits, honours = compiled_features.suit_table(), compiled_features.honour_table()
    policy = JoyHeuristicPolicy()
    checked = 0
    for _ in range(4000):
        n_melds = int(rng.integers(0, 5))
        size = 14 - 3 * n_melds
        if rng.random() < 0.3:  # pairs-heavy hands exercise the seven-pairs count
            kinds = rng.choice(34, size=(size + 1) // 2, replace=False)
            real = np.bincount(np.repeat(kinds, 2)[:size], minlength=34)
        else:
            real = np.bincount(rng.choice(np.repeat(np.arange(34), 4), size=size, replace=False), minlength=34)
        wild = int(rng.integers(0, 34))
        wilds = int(real[wild])
        real[wild] = 0
        unseen = np.maximum(0, 4 - real - rng.integers(0, 3, 34))
        dist = int(compiled_heuristic_joy.distance(real, n_melds, wilds, suits, honours))
        assert dist == joy_distance(bytearray(real.tolist()), n_melds, wilds)
        for k in np.flatnonzero(real):
            d = dist + int(rng.integers(0, 2))
            want = policy._acceptance(bytearray(real.tolist()), int(k), n_melds, wilds, d, unseen.tolist(), wild)
            got = compiled_heuristic_joy._acceptance(real, int(k), n_melds, wilds, d, unseen, wild, suits, honours)
            assert got == want, (real.tolist(), int(k), n_melds, wilds, d, wild)
            checked += want > 0
    assert checked > 10_000


def test_shanten_and_useful_draws_equal_hand_eval() -> None:
    rng = np.random.default_rng(1)
    table = compiled_features.suit_table()
    for _ in range(3000):
        n_melds = int(rng.integers(0, 5))
        counts = np.zeros(27, dtype=np.int64)
        for k in rng.choice(108, 14 - 3 * n_melds - int(rng.integers(0, 2)), replace=False):
            counts[k // 4] += 1
        void = int(rng.integers(-1, 3))
        ev = HandEval(counts.tolist(), void, n_melds)
        assert compiled_features.shanten(counts, void, n_melds, table) == ev.shanten
        assert compiled_features.useful_masks(counts, void, n_melds, table) == ev.useful_masks()


@pytest.mark.parametrize("rules", [BloodBattleRules(),
                                   BloodBattleRules(base_points=2, cap_fan=3, gen_counts_kongs=False)])
def test_win_points_equal_the_scorer(rules: BloodBattleRules) -> None:
    """Winning hands (flushes, pungs, 带幺九, 将对, seven pairs, roots, melds) and near misses."""
    hands = {
        "11122233344455m": [], "11123456789999m": [], "11223344556677p": [], "11112233445566s": [],
        "222555888m22255p": [], "123789m123789p99m": [], "12345678999m": ["pong:1s"],
        "22555m": ["pong:2p", "kong:5p", "ankan:8m"], "11m999p123m": ["pong:9m", "kong:1p"],
        "11122233m444p": [], "11123455678999m": [], "123456789m1199p": [], "11223344556677m": [],
        "111999m111999p11s": [], "123m456p789s11m55p": [],  # three suits: not a win
    }
    scoring = compiled_heuristic.scoring(rules)
    seen = set()
    for text, meld_texts in hands.items():
        counts = _counts(text)
        melds = tuple(parse_meld(t) for t in meld_texts)
        view = compiled_features.new_view()
        for m in melds:
            row = {"pong": compiled_features.PONG, "kong": compiled_features.KONG,
                   "ankan": compiled_features.OWN_ANKAN}[m.kind]
            view[row, m.tile] = 1
        view[compiled_features.SCALARS, compiled_features.S_N_MELDS] = len(melds)
        for void in (-1, 0, 1, 2):
            expected = win_points(bytes(counts.tolist()), melds, void, rules)
            assert compiled_heuristic.win_points(counts, view, void, scoring) == expected, (text, void)
            seen.add(expected)
    assert len(seen) >= 3  # several fan levels, and 0 for the non-wins


def _counts(text: str) -> np.ndarray:
    """27 suited counts from text like ``123m456p``."""
    counts = np.zeros(27, dtype=np.int64)
    digits = []
    for ch in text:
        if ch.isdigit():
            digits.append(int(ch))
        else:
            for d in digits:
                counts[9 * "mps".index(ch) + d - 1] += 1
            digits = []
    return counts


# ---------------------------------------------------------------------------- whole decisions


@pytest.mark.parametrize("preset", ["happy", "qq"])
def test_blood_battle_batch_chooses_what_act_chooses(blood, preset: str) -> None:
    obs, masks = blood[preset]
    chosen = assert_same_choices(HeuristicPolicy(rules=blood_battle_rules(preset)), obs, masks)
    assert decision_kinds(chosen, B) >= {"void", "discard", "kong", "pong", "pass", "hu"}


@pytest.mark.parametrize("name", ["heuristic-nodefence", "heuristic-plain", "heuristic-greedy", "heuristic-novoid"])
def test_blood_battle_variants_batch_chooses_what_act_chooses(blood, name: str) -> None:
    """Each weaker variant (a ladder rung): compiled and readable agree, and it plays otherwise than
    the full heuristic somewhere in the sample."""
    obs, masks = blood["happy"]
    variant = HeuristicPolicy(flags=heuristic_variants[name])
    chosen = assert_same_choices(variant, obs, masks)
    assert (chosen != HeuristicPolicy().act_batch(obs, masks, np.random.default_rng(0))).any()
    voids = masks[:, B.VOID:B.VOID + 3].any(axis=1)
    first_offered = B.VOID + masks[voids, B.VOID:B.VOID + 3].argmax(axis=1)
    if name == "heuristic-novoid":  # 定缺 the first suit offered, whatever the hand
        assert voids.any() and (chosen[voids] == first_offered).all()
    else:
        assert (chosen[voids] != first_offered).any()


def test_blood_battle_batch_uses_its_rules(blood) -> None:
    obs, masks = blood["happy"]
    odd = assert_same_choices(HeuristicPolicy(rules=ODD_RULES), obs, masks)
    rng = np.random.default_rng(0)
    # The rules matter in this sample: the default ones choose otherwise somewhere.
    assert any(HeuristicPolicy().act(o, m, rng) != a for o, m, a in zip(obs, masks, odd))


def test_joy_batch_chooses_what_act_chooses(joy) -> None:
    chosen = assert_same_choices(JoyHeuristicPolicy(), *joy)
    assert decision_kinds(chosen, J) >= {"discard", "kong", "chow", "pong", "pass", "hu"}


@pytest.mark.parametrize("name", ["heuristic-nocalls", "heuristic-greedy"])
def test_joy_variants_batch_chooses_what_act_chooses(joy, name: str) -> None:
    obs, masks = joy
    chosen = assert_same_choices(JoyHeuristicPolicy(joy_variants[name]), obs, masks)
    assert (chosen != JoyHeuristicPolicy().act_batch(obs, masks, np.random.default_rng(0))).any()
    assert not decision_kinds(chosen, J) & {"chow", "pong"}  # neither variant calls 碰 or 吃


def test_variant_flags_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown heuristic flags 0x10"):
        HeuristicPolicy(flags=16)
    with pytest.raises(ValueError, match="unknown Joy heuristic flags 0x4"):
        JoyHeuristicPolicy(4)


@pytest.mark.parametrize("preset", ["happy", "qq"])
def test_lookahead_planes_equal_the_python_planes(blood, preset: str) -> None:
    obs, _ = blood[preset]
    assert_same_planes(obs, blood_battle_rules(preset))


def test_joy_lookahead_planes_equal_the_python_planes_and_lead_to_the_heuristics_discard(joy) -> None:
    obs, masks = joy
    planes = assert_same_joy_planes(obs)
    for p in (0, 3, 4, 8, 9, 12, 13):  # each kind of plane is set somewhere in these hands
        assert planes[:, p].any(), p
    chosen = JoyHeuristicPolicy().act_batch(obs, masks, np.random.default_rng(0))
    rows = np.flatnonzero((chosen < J.KONG) & (masks[:, J.PASS] == 0))  # the heuristic's own-turn discards
    assert rows.size > 100
    for i in rows:
        k = chosen[i]
        # the heuristic discards a tile at the lowest distance with the most 受入 among those
        assert planes[i, 0, k] == 1 and planes[i, 2, k] == planes[i, 2][planes[i, 0] == 1].max(), i
    assert with_lookahead_joy(obs[:0]).shape == (0, obs.shape[1] + JOY_LOOKAHEAD_PLANES, 34)


def test_lookahead_planes_value_waits_with_the_rules_given(blood) -> None:
    obs, _ = blood["happy"]
    odd = assert_same_planes(obs, ODD_RULES)
    default = with_lookahead(obs)[:, obs.shape[1]:]
    assert (odd[:, 2] != default[:, 2]).any()  # the rules change some wait values
    assert (odd[:, [0, 1, 3, 4]] == default[:, [0, 1, 3, 4]]).all()  # and nothing else


def test_batch_of_one_and_empty_batch(blood) -> None:
    obs, masks = blood["qq"]
    policy, rng = HeuristicPolicy(), np.random.default_rng(0)
    assert [int(policy.act_batch(o[None], m[None], rng)[0]) for o, m in zip(obs[:50], masks[:50])] == \
        [policy.act(o, m, rng) for o, m in zip(obs[:50], masks[:50])]
    assert policy.act_batch(obs[:0], masks[:0], rng).shape == (0,)
    assert with_lookahead(obs[:0]).shape == (0, obs.shape[1] + LOOKAHEAD_PLANES, 27)


# ---------------------------------------------------------------------------- bad input


def test_bad_batches_are_refused_with_the_reason(blood, joy) -> None:
    obs, masks = blood["happy"]
    rng = np.random.default_rng(0)
    empty = masks[:3].copy()
    empty[1] = 0
    with pytest.raises(ValueError, match="row 1 has no legal action"):
        HeuristicPolicy().act_batch(obs[:3], empty, rng)
    with pytest.raises(ValueError, match=r"observations must have shape \(N, 73, 27\) for blood_battle"):
        HeuristicPolicy().act_batch(joy[0][:3], masks[:3], rng)
    with pytest.raises(ValueError, match=r"action_masks must have shape \(3, 76\) for joy_mahjong"):
        JoyHeuristicPolicy().act_batch(joy[0][:3], masks[:3], rng)
    with pytest.raises(ValueError, match="with_lookahead needs blood-battle observations"):
        with_lookahead(joy[0][:3])
    with pytest.raises(ValueError, match="with_lookahead_joy needs Joy Mahjong observations"):
        with_lookahead_joy(obs[:3])


# ---------------------------------------------------------------------------- 100,000 decisions


@pytest.mark.slow
def test_100k_decisions_and_planes_agree() -> None:
    """About 36k + 36k blood-battle decisions (happy, qq) and 32k Joy ones; look-ahead planes on every one."""
    total = 0
    for preset, hands, seed in (("happy", 750, 21), ("qq", 750, 22)):
        obs, masks = play_decisions("blood_battle", preset, hands, seed)
        chosen = assert_same_choices(HeuristicPolicy(rules=blood_battle_rules(preset)), obs, masks)
        assert decision_kinds(chosen, B) >= {"void", "discard", "kong", "pong", "direct_kong", "pass", "hu"}
        assert_same_planes(obs, blood_battle_rules(preset))
        total += len(obs)
    obs, masks = play_decisions("joy_mahjong", "popular", 800, 23)
    chosen = assert_same_choices(JoyHeuristicPolicy(), obs, masks)
    assert decision_kinds(chosen, J) >= {"discard", "kong", "chow", "pong", "direct_kong", "pass", "hu"}
    assert_same_joy_planes(obs)
    total += len(obs)
    print(f"{total} decisions agree")
    assert total >= 100_000
