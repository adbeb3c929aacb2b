"""The rule options escape (S16, J11) and bankroll/min_beans (B4) of docs/rules-blood-battle.md
and docs/rules-joy-mahjong.md in the compiled engine (mjenv.vector), against the readable one and
on their own.

- Parity: random and eager play through ``mjenv.vector`` and the AEC envs side by side
  (``vector_parity.check_parity`` for the blood battle, ``test_vector_joy_parity.play_parity``
  for Joy), seats escaping now and then, small bankrolls so that payments of every kind are cut
  short, matches stopped by min_beans: every step's seat, mask, observation, rewards, escaped
  seats and balances, and every episode's end, beans, balances and final observations agree.
  The default suite plays 2,000 hands per configuration (without ``state()``, compared in a
  shorter run with uint8 observations); ``-m slow`` 20,000.
- Invariants of the compiled engine alone over random games with escapes: balances never below
  0 and equal to the bankroll plus the rewards, beans conserved apart from the rake and 扣豆, an
  escaper never asked again, ESCAPE and a game action in every mask.
- Threads, the views (SingleSeatVectorEnv, SelfPlayVectorEnv) and the options' info and errors.

The scripted scenarios of test_escape_scenarios.py run on the compiled engine too (vector_twin).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import mjenv.vector as mv
from mjenv import games
from mjenv.integrations.gymnasium import SingleSeatVectorEnv
from mjenv.rules.beans import starting_balances
from mjenv.vector.backend import SPLIT_BOUND
from tests.mjenv.integrations.test_gymnasium_vector import MODES, AECSeat, lowest_legal
from tests.mjenv.vector.test_joy_parity import play_parity
from tests.mjenv.vector.vector_parity import check_parity, mixed_actions

BANKROLL = (60, 150, 400, 1000)  # at N = 3: a few payments drain the small ones
COMMON = {"escape": True, "bankroll": BANKROLL, "room_coefficient": 3, "rake": 7}
MATCH = {"match_hands": 2, "min_beans": 10}
BLOOD = {
    "happy": {**COMMON, **MATCH},
    "qq": {**COMMON, "preset": "qq"},
    "qq_classic": {**COMMON, **MATCH, "preset": "qq", "mode": "classic"},
}
JOY = {
    "popular": {**COMMON, **MATCH, "room": "popular"},
    "eight_fan": {**COMMON, "room": "eight_fan"},
    "no_fan": {**COMMON, **MATCH, "room": "no_fan"},
}


def escape_rates(name: str, tables: int) -> np.ndarray:
    """Each table's chance to escape at a decision: most hands see an escape and end early (the
    harness's cost is per decision). A blood-battle hand is short enough at 3% (5% in happy,
    where a hand needs two or three escapes to end); a Joy hand asks many more decisions, so half
    the tables escape at 10% and half at 0.5%, which play hands to a win or a draw."""
    if name in JOY:
        return np.where(np.arange(tables) % 4 < 2, 0.1, 0.005)  # eager and random tables alike
    return np.full(tables, 0.05 if name == "happy" else 0.03)
HANDS, SLOW_HANDS = 700, 20_000  # CI-sized: every ending and every short payment met
TABLES = 32
SHORT_KINDS = {  # payments a balance cut short, by the reason of their log line (and the rake)
    "blood_battle": {"win", "not_ready", "kong_refund", "escape", "rake"},
    "joy_mahjong": {"win", "escape", "rake"},
}
KONGS = {"direct_kong", "added_kong", "concealed_kong"}
HAPPY_ONLY = {"flower_pig", "penalty"}  # met often enough in happy only (penalty: its 扣豆)


def _check_coverage(game: str, stats: dict[str, int], options: dict[str, Any]) -> None:
    """Every ending, every kind of payment cut short (查花猪 and 扣豆 in happy) and, in matches,
    min_beans stopping some."""
    ends = ("win", "draw", "escape") if game == "blood_battle" else ("wins", "draws", "escapes")
    assert all(stats.get(end, 0) > 0 for end in ends), stats
    shorts = {key[len("short_"):] for key, count in stats.items() if key.startswith("short_") and count}
    want = set(SHORT_KINDS[game])
    if game == "blood_battle":
        assert shorts & KONGS, stats
        if options.get("preset", "happy") == "happy":
            want |= HAPPY_ONLY
    assert want <= shorts, want - shorts
    assert (stats["min_beans"] > 0) == ("min_beans" in options), stats


@pytest.mark.parametrize("name", list(BLOOD))
def test_blood_battle_parity_with_escapes_and_balances(name):
    options = BLOOD[name]
    venv = mv.make("blood_battle", TABLES, final_observations=True, **options)
    stats = check_parity(venv, options, seed=31, episodes=0, hands=HANDS, check_state=False,
                         escape_rate=escape_rates(name, venv.num_envs))
    assert stats["hands"] >= HANDS
    _check_coverage("blood_battle", stats, options)


@pytest.mark.parametrize("room", list(JOY))
def test_joy_parity_with_escapes_and_balances(room):
    stats = play_parity(JOY[room], seed=31, games=0, hands=HANDS, tables=TABLES, check_state=False,
                        final_observations=True, escape_rate=escape_rates(room, TABLES))
    assert stats["hands"] >= HANDS
    _check_coverage("joy_mahjong", stats, JOY[room])


def test_state_and_uint8_observations_with_the_options():
    """``state()`` (the optional planes per absolute seat) and the uint8 planes, every step."""
    options = {**BLOOD["happy"], "observation_dtype": "uint8"}
    venv = mv.make("blood_battle", 16, final_observations=True, **options)
    assert venv.single_observation_space["observation"].shape == (81, 27) and venv.state_shape == (142, 27)
    assert check_parity(venv, options, seed=5, episodes=60, escape_rate=0.03)["escapes"] > 0
    stats = play_parity({**JOY["popular"], "observation_dtype": "uint8"}, seed=5, games=30, tables=16,
                        escape_rate=escape_rates("popular", 16))
    assert stats["escapes"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BLOOD))
def test_blood_battle_parity_with_escapes_and_balances_slow(name):
    venv = mv.make("blood_battle", 256, **BLOOD[name])
    stats = check_parity(venv, BLOOD[name], seed=8_000_000, episodes=0, hands=SLOW_HANDS, check_state=False,
                         rng_seed=8, escape_rate=escape_rates(name, venv.num_envs))
    assert stats["hands"] >= SLOW_HANDS
    _check_coverage("blood_battle", stats, BLOOD[name])


@pytest.mark.slow
@pytest.mark.parametrize("room", list(JOY))
def test_joy_parity_with_escapes_and_balances_slow(room):
    stats = play_parity(JOY[room], seed=8_000_000, games=0, hands=SLOW_HANDS, tables=256, check_state=False,
                        final_observations=True, escape_rate=escape_rates(room, 256))
    assert stats["hands"] >= SLOW_HANDS
    _check_coverage("joy_mahjong", stats, JOY[room])


# ---------------------------------------------------------------- invariants of the compiled engine


def escaping_actions(mask: np.ndarray, rng: np.random.Generator, rate: float = 0.02) -> np.ndarray:
    """A uniformly random game action per table, or ESCAPE (the last column) with probability ``rate``."""
    actions = mv.random_actions(np.ascontiguousarray(mask[:, :-1]), rng)
    actions[rng.random(len(mask)) < rate] = mask.shape[1] - 1
    return actions


class _HandEnds:
    """Records ``hand_result`` of every hand that ends (a match's earlier hands too)."""

    def __init__(self, backend: Any) -> None:
        self.inner, self.seen = backend.hand_result, []
        backend.hand_result = self

    def __call__(self, tables: np.ndarray) -> dict[str, np.ndarray]:
        result = self.inner(tables)
        self.seen.append((tables.copy(), result))
        return result


def check_invariants(game: str, options: dict[str, Any], n_games: int, tables: int = 128, seed: int = 0) -> dict[str, int]:
    """Random games with escapes on the compiled engine alone; every invariant of the module
    docstring checked at every step and hand end. Returns what was met."""
    venv = mv.make(game, tables, **options)
    b = venv.backend
    rake, keep = b.rules.rake, b.keeps_balances
    start = np.array(starting_balances(b.rules.bankroll) or [0] * 4, dtype=np.int64)
    ends = _HandEnds(b)
    obs, info = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows = np.arange(tables)
    episode = np.zeros((tables, 4), dtype=np.int64)
    hand = np.zeros((tables, 4), dtype=np.int64)
    met = {"games": 0, "escapes": 0, "cut_short": 0, "min_beans": 0}
    while met["games"] < n_games:
        mask, seat = obs["action_mask"], info["seat"]
        assert (mask[:, -1] == 1).all() and (mask[:, :-1].sum(axis=1) >= 1).all()  # ESCAPE and a game action
        a = b.arrays
        assert not (a.escaped[rows, seat] | a.won[rows, seat]).any()  # an escaper (or winner) is never asked
        actions = escaping_actions(mask, rng)
        met["escapes"] += int((actions == mask.shape[1] - 1).sum())
        obs, rewards, term, _, info = venv.step(actions)
        r = rewards.astype(np.int64)
        assert (r == rewards).all()
        episode += r
        hand += r
        for done, result in ends.seen:  # beans move between seats but for the rake and 扣豆
            lost = -hand[done].sum(axis=1) - result.get("penalty", np.zeros((len(done), 4), np.int64)).sum(axis=1)
            if keep:
                assert (result["balances"] >= 0).all()
                paid_all = (result["balances"] > 0).sum(axis=1)  # a seat left with beans paid all the rake
                assert ((rake * paid_all <= lost) & (lost <= 4 * rake)).all()
                met["cut_short"] += int((lost < 4 * rake).sum())
            else:
                assert (lost == 4 * rake).all()
            hand[done] = 0
        ends.seen.clear()
        for t in np.flatnonzero(term):  # the episode's beans are its rewards, and its balance change
            assert info["beans"][t].tolist() == episode[t].tolist()
            if keep:
                assert info["balances"][t].tolist() == (start + episode[t]).tolist()
                met["min_beans"] += info["match_end"][t] == "min_beans"
            episode[t] = 0
            met["games"] += 1
        if keep:
            assert (b.arrays.balances >= 0).all()
            np.testing.assert_array_equal(b.arrays.balances, start + episode)  # balances follow the rewards
    return met


INVARIANT_CONFIGS = {**{f"blood_{k}": ("blood_battle", v) for k, v in BLOOD.items()},
                     **{f"joy_{k}": ("joy_mahjong", v) for k, v in JOY.items()},
                     "happy_unlimited": ("blood_battle", {"escape": True, "rake": 7}),
                     "popular_unlimited": ("joy_mahjong", {"escape": True, "room": "popular", "rake": 7})}


@pytest.mark.parametrize("name", list(INVARIANT_CONFIGS))
def test_invariants_of_random_games_with_escapes(name):
    game, options = INVARIANT_CONFIGS[name]
    met = check_invariants(game, options, HANDS)
    assert met["games"] >= HANDS and met["escapes"] > 0
    assert (met["cut_short"] > 0) == ("bankroll" in options)
    assert (met["min_beans"] > 0) == ("min_beans" in options)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(INVARIANT_CONFIGS))
def test_invariants_of_random_games_with_escapes_slow(name):
    game, options = INVARIANT_CONFIGS[name]
    assert check_invariants(game, options, SLOW_HANDS, tables=512, seed=1)["games"] >= SLOW_HANDS


# ---------------------------------------------------------------- threads


def _trace(game: str, threads: int, steps: int, options: dict[str, Any]) -> list:
    venv = mv.make(game, 37, num_threads=threads, **options)
    obs, info = venv.reset(seed=9)
    rng = np.random.default_rng(0)
    trace = []
    for _ in range(steps):
        actions = escaping_actions(obs["action_mask"], rng, 0.05)
        obs, rewards, term, _, info = venv.step(actions)
        trace.append([obs["observation"], obs["action_mask"], info["seat"], rewards, term,
                      *(info[k] for k in ("balances", "match_end", "escaped") if k in info)])
    venv.close()
    return trace


@pytest.mark.parametrize("game,options", [("blood_battle", BLOOD["happy"]), ("joy_mahjong", JOY["popular"])])
def test_results_do_not_depend_on_thread_count_with_the_options(game, options):
    one = _trace(game, 1, 120, options)
    assert sum(step[4].sum() for step in one) > 20  # episodes ended on the way
    for threads in (2, 3):
        for a, b in zip(one, _trace(game, threads, 120, options), strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)


# ---------------------------------------------------------------- the views


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("game,options", [
    ("blood_battle", {"preset": "happy", "escape": True, "bankroll": 400, "room_coefficient": 3, "rake": 7}),
    ("blood_battle", {"preset": "qq", "escape": True, "bankroll": 400, "match_hands": 2, "min_beans": 50}),
    ("joy_mahjong", {"room": "no_fan", "escape": True, "bankroll": [30, 60, 90, 120], "rake": 5}),
])
def test_single_seat_view_with_the_options_is_the_aec_engine(game, options, mode):
    """The learner plays random legal actions, ESCAPE included, against opponents that never escape
    (the lowest legal action): an escape ends its episode when it
    ends the hand (qq, Joy), else the hand plays on without it (happy) and its episode ends with
    the hand; each step equals the AEC engine's and the rewards of an episode sum to its beans."""
    n, seat, seed = 6, 1, 70
    env = SingleSeatVectorEnv(game, n, opponents=lowest_legal, seat=seat, autoreset_mode=mode, **options)
    refs = [AECSeat(game, seat, seed + i, opponent=lowest_legal, **options) for i in range(n)]
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(4)
    returns, finished = np.zeros(n), np.zeros(n, dtype=bool)
    met = {"episodes": 0, "learner_escaped": 0, "played_on": 0}
    for _ in range(150):
        masks = env.action_masks()
        for i, ref in enumerate(refs):
            if not finished[i]:
                np.testing.assert_array_equal(obs[i], ref.observation())
                np.testing.assert_array_equal(masks[i], ref.mask())
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        obs, rewards, term, _, info = env.step(actions)
        final = info if mode == MODES[0] else info.get("final_info", {})
        for i, ref in enumerate(refs):
            if finished[i]:
                ref.restart()
                finished[i] = False
                continue
            reward, done, beans = ref.step(int(actions[i]))
            assert rewards[i] == reward and term[i] == done
            returns[i] += rewards[i]
            if done:
                assert final["beans"][i].tolist() == beans.tolist() and returns[i] == beans[seat]
                g = ref.e.game
                met["episodes"] += 1
                met["learner_escaped"] += g.escaped[seat]
                met["played_on"] += g.escaped[seat] and g.end_reason != "escape"
                returns[i] = 0
                if mode == MODES[0]:
                    finished[i] = True
                else:
                    ref.restart()
    assert met["episodes"] > 10 and met["learner_escaped"] > 3, met
    assert (met["played_on"] > 0) == (options.get("preset") == "happy"), met


def test_self_play_view_credits_every_bean_with_the_options():
    """SelfPlayVectorEnv over happy matches with escapes and balances: an escaper is never the
    seat to act again in its hand, and each seat's credited rewards plus its final rewards sum to
    its beans, whose change is its balance's."""
    options = BLOOD["happy"]
    env = mv.SelfPlayVectorEnv("blood_battle", 24, **options)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    rows = np.arange(24)
    credited = np.zeros((24, 4))
    episodes = escapes = 0
    while episodes < 200:
        arrays = env.venv.backend.arrays
        assert not arrays.escaped[rows, info["seat"]].any()
        actions = escaping_actions(info["action_mask"], rng, 0.05)
        escapes += int((actions == 62).sum())
        obs, reward, term, _, info = env.step(actions)
        for t in np.flatnonzero(term):
            beans = credited[t] + info["final_rewards"][t]
            assert beans.tolist() == info["beans"][t].tolist()
            assert info["balances"][t].tolist() == (np.array(BANKROLL) + info["beans"][t]).tolist()
            credited[t] = 0
            episodes += 1
        credited[rows, info["seat"]] += reward
    assert escapes > 20


# ---------------------------------------------------------------- info, shapes, errors


def test_default_info_and_spaces_are_unchanged_and_the_options_add_theirs():
    for game in games.GAME_NAMES:
        plain = mv.make(game, 4)
        plain.reset(seed=0)
        assert plain.single_action_space.n in (62, 76)
        with_options = mv.make(game, 4, escape=True, bankroll=1000)
        assert with_options.single_action_space.n == plain.single_action_space.n + 1
        planes = 8 if game == "blood_battle" else 4  # Joy has no escaped planes (an escape ends its hand)
        obs_shape = plain.single_observation_space["observation"].shape
        assert with_options.single_observation_space["observation"].shape == (obs_shape[0] + planes, obs_shape[1])
    venv = mv.make("joy_mahjong", 3, escape=True, bankroll=100, escape_x=2)
    obs, info = venv.reset(seed=0)
    obs, rewards, term, _, info = venv.step(np.full(3, 76))  # every dealer escapes: 2 to each other seat
    assert term.all() and (info["end_reason"] == "escape").all() and (info["match_end"] == "hands").all()
    assert sorted(info["balances"][0].tolist()) == [94, 102, 102, 102] and info["escaped"].sum() == 3
    plain = mv.make("joy_mahjong", 3)
    plain.reset(seed=0)
    rng = np.random.default_rng(0)
    while True:
        obs, _, term, _, info = plain.step(mv.random_actions(plain.action_masks(), rng))
        if term.any():
            break
    assert not {"escaped", "penalty", "balances", "match_end"} & set(info)  # as before the options


def test_balances_too_large_for_int64_splits_are_refused():
    assert SPLIT_BOUND == 3_000_000_000
    mv.make("blood_battle", 1, bankroll=10**15, room_coefficient=10**4)  # a bankroll may be large
    big = {"room_coefficient": 10**6, "base_points": 12}  # within the rule bounds, over the split bound
    with pytest.raises(ValueError, match="splits payments in int64"):
        mv.make("blood_battle", 1, bankroll=10**15, **big)
    mv.make("blood_battle", 1, **big)  # without balances nothing is split


def test_mixed_actions_escape_only_with_the_option():
    """The parity policy draws no extra random numbers without ESCAPE (the default parity runs
    keep their games) and escapes at about its rate with it."""
    rng = np.random.default_rng(0)
    mask = np.ones((1000, 62), dtype=np.int8)
    obs = {"observation": np.zeros((1000, 73, 27), np.float32), "action_mask": mask}
    a = mixed_actions(obs, np.random.default_rng(1))
    b = mixed_actions(obs, np.random.default_rng(1), escape_rate=0.5)
    np.testing.assert_array_equal(a, b)
    with_escape = {**obs, "action_mask": np.ones((1000, 63), dtype=np.int8)}
    share = (mixed_actions(with_escape, rng, escape_rate=0.2) == 62).mean()
    assert 0.15 < share < 0.25
