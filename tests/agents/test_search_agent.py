"""The search agent (agents/search.py): the table it rebuilds from an observation is the public part
of the real one, it never reads the hidden part (redrawn, the same choices), and it plays in the
arena like any policy."""

import numpy as np
import pytest

import mjenv.vector as mv
from agents import belief as bm
from agents.arena.vector import play_deals
from agents.compiled import search as cs
from agents.registry import load_policy
from agents.search import SearchPolicy, _Table, preset_of, table_from_observation
from mjenv.vector.encoding import blood_battle as enc
from mjenv.vector.engine import blood_battle as eng
from tests.support import blood_battle_turns

PUBLIC = ("n_melds", "river_len", "river_counts", "won", "void", "dealer", "drawn", "current", "after_kong",
          "win_tile", "phase")


@pytest.fixture(scope="module")
def turns():
    """(observation, mask, state row) at own-turn decisions of 8 tables of four heuristics."""
    found = blood_battle_turns(5, 8, tuple(range(10, 140, 20)))
    assert len(found) >= 30
    return found


def test_the_rebuilt_table_is_the_public_part_of_the_real_one(turns):
    table = _Table("happy", 2)
    rebuilt = 0
    for obs, mask, real in turns:
        if not table_from_observation(obs, table, np.random.default_rng(0)):
            continue
        rebuilt += 1
        a = table.arrays
        for f in PUBLIC:
            assert np.array_equal(getattr(a, f)[0], real[f]), f
        assert np.array_equal(a.hands[0].sum(axis=1), real["hands"].sum(axis=1))
        assert a.tail[0] - a.head[0] == real["tail"] - real["head"]
        assert np.array_equal(a.hands[0, real["current"]], real["hands"][real["current"]])
        assert np.array_equal(a.beans[0] - a.beans[0, 0], real["beans"] - real["beans"][0])
        eng.compute_mask(table.st, 0, table.ctx[0], table.ctx[1])
        assert np.array_equal(a.mask[0], mask)
    assert rebuilt >= len(turns) - 1


@pytest.mark.parametrize("weighting", ["none", "actions"])
def test_a_redrawn_hidden_part_gives_the_same_choices(turns, weighting):
    """The opponents' concealed tiles and the wall's order are redrawn consistently with the
    public record: the seat's observation is unchanged, and so is every choice of the agent."""
    ctx = cs.context(mv.make("blood_battle", 1, preset="happy").backend)
    agent = SearchPolicy(belief=None, rollouts=2, z=0.0, weighting=weighting)
    checked = 0
    for obs, mask, real in turns[::4]:
        st, arrays = eng.new_state(1)
        for f in eng.FIELDS:
            getattr(arrays, f)[0] = real[f]
        cs.resample(st, 0, int(real["current"]), cs.UNIFORM, 99, np.zeros((1, cs.SHANTEN_COLS)), ctx, cs.NO_WEIGHTS)
        assert not np.array_equal(arrays.wall[0], real["wall"])
        again = np.zeros(enc.OBS_SHAPE, np.float32)
        enc.observe(st, 0, again, ctx[2], ctx[3], 0)
        assert np.array_equal(again, obs)
        assert agent.act(again, mask, np.random.default_rng(1)) == agent.act(obs, mask, np.random.default_rng(2))
        checked += 1
    assert checked >= 5 and agent.searched > 0


def test_the_agent_plays_a_duplicate_match_and_loads_by_name():
    agent = SearchPolicy(belief=None, rollouts=2, z=0.0)
    records = play_deals("blood_battle", [agent, load_policy("heuristic")], {"preset": "happy"}, seed=11, start=0, stop=1)
    assert len(records) == 4 and agent.searched > 10
    assert sum(sum(r.beans) for r in records) <= 0  # beans only change hands (less the rake)
    assert isinstance(load_policy("search"), SearchPolicy)
    with pytest.raises(ValueError, match="blood_battle"):
        load_policy("search", game="joy_mahjong")


def test_the_belief_worlds_follow_the_belief(turns):
    """Worlds drawn with a belief that puts every unseen copy of one suit (not its void) in
    opponent 1's hand give it far more of them than uniform worlds."""
    table = _Table("happy", 2)
    obs, mask, real = next(t for t in turns if t[2]["river_len"].sum() < 8)
    assert table_from_observation(obs, table, np.random.default_rng(0))
    s = int(real["current"])
    o = (s + 1) % 4
    suit = slice(9 * ((real["void"][o] + 1) % 3), 9 * ((real["void"][o] + 1) % 3) + 9)
    weights = np.ones((4, 27))
    weights[o, suit] = 1e6
    flat = np.full((4, cs.SHANTEN_COLS), 1.0)
    shares = {}
    for worlds in (cs.UNIFORM, cs.BELIEF):
        got = []
        for seed in range(20):
            st, arrays = eng.new_state(1)
            for f in eng.FIELDS:
                getattr(arrays, f)[0] = getattr(table.arrays, f)[0]
            cs.resample(st, 0, s, worlds, seed, flat, table.ctx, weights)
            got.append(arrays.hands[0, o, suit].sum() / max(arrays.hands[0, o].sum(), 1))
        shares[worlds] = np.mean(got)
    assert shares[cs.BELIEF] > 0.8 > shares[cs.UNIFORM] + 0.3
    assert preset_of(obs) == "happy"


def test_the_safety_gate_never_switches_to_a_riskier_discard(turns):
    from agents.search import DEFAULT_BELIEF

    belief = bm.load_belief(DEFAULT_BELIEF)
    free, safe = (SearchPolicy(belief, rollouts=2, z=0.0, safety=s) for s in (None, 0.0))
    riskier = 0
    for obs, mask, _ in turns[::5]:
        danger = belief.predict(obs[None])["danger"][0]
        a_free, a_safe = free.act(obs, mask, None), safe.act(obs, mask, None)
        prior = safe._priors["happy"].act(obs, mask, None)
        risk = {a: danger[a - eng.DISCARD_A] if eng.DISCARD_A <= a < eng.DISCARD_A + 27 else 0.0
                for a in (prior, a_free, a_safe)}
        assert risk[a_safe] <= risk[prior] + 1e-9
        riskier += risk[a_free] > risk[prior] + 1e-9
    assert safe.searched > 0 and riskier > 0  # without the gate some switches were riskier


def _real_table(real: dict) -> tuple:
    """A one-row state holding the real table ``real``."""
    st, arrays = eng.new_state(1)
    for f in eng.FIELDS:
        getattr(arrays, f)[0] = real[f]
    return st, arrays


def test_a_world_whose_hand_explains_the_last_discard_weighs_more(turns):
    """The true hands (four heuristics played them) make the others' last discards and passed wins
    likely; the same table with one opponent holding more copies of its last discard (three with
    it, a set the heuristic would have kept) is less likely."""
    ctx = cs.context(mv.make("blood_battle", 1, preset="happy").backend)
    obs = np.zeros((1, *enc.OBS_SHAPE), np.float32)
    eps = 0.1
    top, lower, higher, compared = 0, 0, 0, 0
    for _, _, real in turns:
        s = int(real["current"])
        ll = cs.world_loglik(*_real_table(real)[:1], 0, s, ctx, obs, eps)
        top += bool(ll > 3 * np.log(1 - eps) - 1e-9)
        for r in range(1, 4):
            o = (s + r) % 4
            st, arrays = _real_table(real)
            n = real["river_len"][o]
            d = real["river"][o, n - 1] if n else -1
            need = 2 - int(arrays.hands[0, o, d]) if n else 0
            wall = np.flatnonzero(arrays.wall[0, :arrays.tail[0]] == d)
            wall = list(wall[wall >= arrays.head[0]])
            holders = [q for q in range(4) if q not in (s, o) and not real["won"][q] for _ in range(arrays.hands[0, q, d])]
            others = [k for k in np.flatnonzero(arrays.hands[0, o]) if k != d for _ in range(arrays.hands[0, o, k])]
            if real["won"][o] or n == 0 or d // 9 == real["void"][o] or need < 1 or len(wall) + len(holders) < need:
                continue
            for i in range(need):  # o's tiles swap with hidden copies of d (the wall's, then other hands')
                arrays.hands[0, o, others[i]] -= 1
                arrays.hands[0, o, d] += 1
                if wall:
                    arrays.wall[0, wall.pop()] = others[i]
                else:
                    q = holders.pop()
                    arrays.hands[0, q, d] -= 1
                    arrays.hands[0, q, others[i]] += 1
            compared += 1
            altered = cs.world_loglik(st, 0, s, ctx, obs, eps)
            lower += altered < ll - 1
            higher += altered > ll + 1  # beyond the ε / (choices - 1) of a changed number of kinds
    assert top >= 0.8 * len(turns)  # the true hands explain nearly all the play (95% in a larger sample)
    assert compared >= 15 and lower >= 0.7 * compared and higher == 0, (lower, higher, compared)


def test_resampling_by_actions_keeps_the_likelier_worlds(turns):
    """Of M uniform worlds, the K kept are copies of candidates (hands and all), more likely on
    average than the candidates; the walls of a world kept twice differ."""
    table = _Table("happy", 4, 32)
    obs, mask, real = next(t for t in turns if t[2]["river_len"].sum() >= 12)
    assert table_from_observation(obs, table, np.random.default_rng(0))
    st, copies = table.scratch
    s, eps, m, k = int(real["current"]), 0.1, 32, 8
    for f in eng.FIELDS:
        getattr(copies, f)[:m] = getattr(table.arrays, f)[0]
    for i in range(m):
        cs.resample(st, i, s, cs.UNIFORM, 7 + i, cs.NO_PROFILE, table.ctx, cs.NO_WEIGHTS)
    hands = copies.hands[:m].copy()
    buf = np.zeros((1, *enc.OBS_SHAPE), np.float32)
    ll = cs.resample_by_actions(st, copies, s, k, m, 5, table.ctx, eps)
    assert ll.max() - ll.min() > 2  # the candidates differ in how well they explain the play
    kept = np.array([cs.world_loglik(st, i, s, table.ctx, buf, eps) for i in range(k)])
    assert kept.mean() > ll.mean() + 1
    source = [next(j for j in range(m) if np.array_equal(copies.hands[i], hands[j])) for i in range(k)]
    twice = [i for i in range(k) if source.count(source[i]) > 1]
    if twice:
        j = next(i for i in twice if i != twice[0] and source[i] == source[twice[0]])
        assert not np.array_equal(copies.wall[twice[0]], copies.wall[j])


def test_the_weighted_search_is_deterministic_and_checks_its_options(turns):
    a, b = (SearchPolicy(belief=None, rollouts=2, z=0.0, weighting="actions", candidates=6) for _ in range(2))
    picks = [(a.act(o, m, None), b.act(o, m, np.random.default_rng(3))) for o, m, _ in turns[::6]]
    assert all(x == y for x, y in picks) and a.searched == b.searched > 0
    with pytest.raises(ValueError, match="weighting"):
        SearchPolicy(belief=None, weighting="discards")
    with pytest.raises(ValueError, match="candidates"):
        SearchPolicy(belief=None, rollouts=4, weighting="actions", candidates=4)
    with pytest.raises(ValueError, match="eps"):
        SearchPolicy(belief=None, weighting="actions", eps=0.0)
