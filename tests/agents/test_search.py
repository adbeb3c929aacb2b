"""The compiled search (agents/compiled/search.py) and its probe (bench/probe_search.py): resampled
worlds keep every tile and what the searcher sees, rollouts replay the real game, action values
are reproducible and leave the table alone, and without rollouts the probe is the heuristic."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import mjenv.vector as mv
from agents.arena import N_SEATS
from agents.compiled import features as cf
from agents.compiled import heuristic as ch
from agents.compiled import search
from agents.heuristic import HeuristicPolicy
from agents.registry import load_policy
from agents.arena.vector import play_deals
from mjenv.vector.encoding import blood_battle as enc
from mjenv.vector.engine import blood_battle as eng
from tests.support import blood_battle_turns, finish_vector_table
from tests.support import ROOT

_spec = importlib.util.spec_from_file_location("probe_search", ROOT / "bench" / "probe_search.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)

PUBLIC = ("head", "tail", "meld", "n_melds", "river", "river_len", "won", "void", "beans", "phase", "current", "drawn")


@pytest.fixture(scope="module")
def ctx():
    """The compiled context of a happy-preset table."""
    return search.context(mv.make("blood_battle", 1, preset="happy").backend)


@pytest.fixture(scope="module")
def profile():
    """The heuristics' shanten by discard count, from 32 hands of four-heuristic play."""
    return probe.shanten_profile("happy", tables=32)


@pytest.fixture(scope="module")
def turns():
    """(arrays, table) snapshots of 16 tables at own-turn decisions, early and late in the hand."""
    snaps = [(fields, int(fields["current"])) for _, _, fields in blood_battle_turns(7, 16, (30, 70, 110))]
    assert len(snaps) >= 20
    return snaps


def _load(snapshot: dict) -> tuple:
    st, arrays = eng.new_state(1)
    for f in eng.FIELDS:
        getattr(arrays, f)[0] = snapshot[f]
    return st, arrays


def _unseen(arrays, s: int) -> np.ndarray:
    counts = np.bincount(arrays.wall[0, arrays.head[0]:arrays.tail[0]], minlength=27)
    return counts + sum(arrays.hands[0, o].astype(np.int64) for o in range(N_SEATS) if o != s)


@pytest.mark.parametrize("worlds", search.WORLDS)
def test_resampled_worlds_keep_every_tile_and_what_the_searcher_sees(turns, ctx, profile, worlds):
    kind, changed = search.WORLDS.index(worlds), 0
    for snap, s in turns:
        st, arrays = _load(snap)
        search.resample(st, 0, s, kind, 11, profile, ctx, search.NO_WEIGHTS)
        assert np.array_equal(_unseen(arrays, s), _unseen(_load(snap)[1], s))
        assert np.array_equal(arrays.hands[0, s], snap["hands"][s])
        assert np.array_equal(arrays.hands[0].sum(axis=1), snap["hands"].sum(axis=1))
        for f in PUBLIC:
            assert np.array_equal(getattr(arrays, f)[0], snap[f]), f
        changed += not np.array_equal(arrays.wall[0], snap["wall"])
        if worlds in ("clairvoyant", "known-hands"):
            assert np.array_equal(arrays.hands[0], snap["hands"])
        for o in range(N_SEATS):
            if o != s and search._hides_no_void(st, 0, o):
                v = arrays.void[0, o]
                assert arrays.hands[0, o, 9 * v:9 * v + 9].sum() == 0
        again, again_arrays = _load(snap)
        search.resample(again, 0, s, kind, 11, profile, ctx, search.NO_WEIGHTS)
        assert np.array_equal(again_arrays.hands, arrays.hands) and np.array_equal(again_arrays.wall, arrays.wall)
    assert (changed == 0) == (worlds == "clairvoyant")


def _share(turns, ctx, profile, worlds: int, seed: int, holds) -> float:
    """The share of opponents still in play, over every snapshot resampled with ``worlds``, for
    which ``holds(st, arrays, o)`` is true."""
    hits = []
    for snap, s in turns:
        st, arrays = _load(snap)
        search.resample(st, 0, s, worlds, seed, profile, ctx, search.NO_WEIGHTS)
        hits += [holds(st, arrays, o) for o in range(N_SEATS) if o != s and not arrays.won[0, o]]
    return float(np.mean(hits))


def test_inferred_worlds_follow_the_shanten_profile(turns, ctx):
    """A profile of ready opponents (shanten 0) makes far more of them ready than uniform worlds."""
    ready = np.zeros((search.MAX_DISCARDS, search.SHANTEN_COLS))
    ready[:, 1] = 1.0
    table = cf.suit_table()

    def is_ready(st, arrays, o):
        return cf.shanten(arrays.hands[0, o], arrays.void[0, o], arrays.n_melds[0, o], table) == 0

    inferred, uniform = (_share(turns, ctx, ready, w, 3, is_ready) for w in (search.INFERRED, search.UNIFORM))
    assert inferred > 0.5 and inferred > 3 * uniform


def test_a_clairvoyant_rollout_replays_the_game(turns):
    """From a snapshot, the heuristic's action played out equals four heuristics in the env."""
    venv = mv.make("blood_battle", 16, copy=False, preset="happy")
    heuristic = HeuristicPolicy(rules=venv.backend.rules)
    be = venv.backend
    obs, _ = venv.reset(seed=7)
    for _ in range(30):
        obs, _, _, _, _ = venv.step(heuristic.act_batch(obs["observation"], obs["action_mask"], None))
    t = int(np.flatnonzero(be.arrays.phase == eng.TURN)[0])
    s, start = int(be.arrays.current[t]), be.arrays.beans[t].copy()
    st, arrays = eng.new_state(1)
    for f in eng.FIELDS:
        getattr(arrays, f)[0] = getattr(be.arrays, f)[t]
    action = int(heuristic.act_batch(obs["observation"][t:t + 1], obs["action_mask"][t:t + 1], None)[0])
    won = search.play_out(st, 0, s, action, search.context(be), np.zeros((1, *enc.OBS_SHAPE), np.float32))
    assert won == finish_vector_table(venv, obs, heuristic, t)[s] - start[s]
    venv.close()


@pytest.mark.parametrize("game, options", [("blood_battle", {"preset": "happy"}), ("joy_mahjong", {"room": "popular"})])
def test_without_rollouts_the_searcher_is_the_heuristic(game, options):
    mine, searched, changed = probe.play(game, options, search.KNOWN_HANDS if game == "joy_mahjong" else search.UNIFORM,
                                         0, 0.0, 5, 0, 6, np.zeros((19, 8)), claims=game == "joy_mahjong")
    h = load_policy("heuristic", game=game)
    records = play_deals(game, [h, h], options, 5, 0, 6)
    expected = [r.beans[r.lineup.index(0)] for r in records]
    assert (searched, changed) == (0, 0)
    assert np.array_equal(mine, expected) and np.any(mine != 0)


def test_searching_claims_adds_claim_windows_and_is_reproducible():
    """With ``claims`` the Joy probe searches strictly more decisions than on own turns alone,
    and the same call plays the same hands."""
    args = ("joy_mahjong", {"room": "popular"}, search.KNOWN_HANDS, 2, 0.0, 5, 0, 1, np.zeros((19, 8)))
    turns = probe.play(*args)
    both, again = probe.play(*args, claims=True), probe.play(*args, claims=True)
    assert turns[1] > 0 and both[1] > turns[1] and both[2] <= both[1]
    assert np.array_equal(both[0], again[0]) and both[1:] == again[1:]


def test_consistent_worlds_explain_each_last_discard_by_the_heuristic(turns, ctx, profile):
    """In ``consistent`` worlds the heuristic, given an opponent's hand and last discard, chooses
    that discard far more often than in uniform worlds, and asking it changes nothing."""
    obs = np.zeros((1, *enc.OBS_SHAPE), np.float32)

    def explained(st, arrays, o):
        if not arrays.river_len[0, o]:
            return True
        before = {f: getattr(arrays, f)[0].copy() for f in eng.FIELDS}
        agrees = search._heuristic_would_discard(arrays.hands[0, o].copy(), st, 0, o, ctx, obs)
        assert all(np.array_equal(getattr(arrays, f)[0], before[f]) for f in eng.FIELDS)
        return agrees

    consistent, uniform = (_share(turns, ctx, profile, w, 5, explained) for w in (search.CONSISTENT, search.UNIFORM))
    assert consistent > 0.8 and consistent > 2 * uniform


def test_action_values_are_reproducible_and_leave_the_table_alone(turns, ctx, profile):
    """Clairvoyant worlds are all the same world, so every row agrees; known-hands worlds differ
    but repeat for a key; the table searched from is not touched."""
    scratch = eng.new_state(eng.N_ACTIONS * 4)
    for snap, s in turns[:6]:
        _, arrays = _load(snap)
        legal = np.flatnonzero(arrays.mask[0])
        same = search.action_values(arrays, 0, legal, search.CLAIRVOYANT, 4, 9, profile, ctx, scratch)
        assert same.shape == (4, len(legal)) and np.all(same == same[0])
        known = search.action_values(arrays, 0, legal, search.KNOWN_HANDS, 4, 9, profile, ctx, scratch)
        again = search.action_values(arrays, 0, legal, search.KNOWN_HANDS, 4, 9, profile, ctx, scratch)
        assert np.array_equal(known, again)
        assert all(np.array_equal(getattr(arrays, f)[0], snap[f]) for f in eng.FIELDS)
