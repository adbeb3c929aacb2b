"""The Joy Mahjong known-hands search (agents/compiled/search_joy.py): a redraw shuffles only the
live wall, a rollout replays the real game, and action values are reproducible and leave the
table alone."""

import numpy as np
import pytest

import mjenv.vector as mv
from agents.compiled import search_joy
from agents.registry import load_policy
from mjenv.vector.engine import joy_mahjong as eng
from tests.support import finish_vector_table

TABLES = 8


@pytest.fixture(scope="module")
def table():
    """A popular-room env of TABLES tables after 40 steps of four heuristics, its last
    observations and the heuristic."""
    venv = mv.make("joy_mahjong", TABLES, copy=False, room="popular")
    heuristic = load_policy("heuristic", game="joy_mahjong")
    obs, _ = venv.reset(seed=11)
    for _ in range(40):
        obs, _, _, _, _ = venv.step(heuristic.act_batch(obs["observation"], obs["action_mask"], None))
    yield venv, obs, heuristic
    venv.close()


def _copy(arrays, t: int) -> tuple:
    """A one-table state holding table t of ``arrays``."""
    st, copy = eng.new_state(1)
    for f in search_joy.TABLE_FIELDS:
        getattr(copy, f)[0] = getattr(arrays, f)[t]
    return st, copy


def test_a_redraw_shuffles_only_the_live_wall(table):
    venv, _, _ = table
    arrays = venv.backend.arrays
    orders = []
    for seed in (1, 2, 1):
        st, copy = _copy(arrays, 0)
        search_joy.redraw_wall(st, 0, seed)
        head, tail = int(arrays.head[0]), int(arrays.tail[0])
        live = copy.wall[0, head:tail]
        assert np.array_equal(np.sort(live), np.sort(arrays.wall[0, head:tail]))
        assert np.array_equal(copy.wall[0, :head], arrays.wall[0, :head])
        assert np.array_equal(copy.wall[0, tail:], arrays.wall[0, tail:])
        assert all(np.array_equal(getattr(copy, f)[0], getattr(arrays, f)[0])
                   for f in search_joy.TABLE_FIELDS if f != "wall")
        orders.append(live.copy())
    assert np.array_equal(orders[0], orders[2]) and not np.array_equal(orders[0], orders[1])


def test_a_rollout_without_a_redraw_replays_the_game(table):
    """From a copy of a table, the heuristic's action played out equals four heuristics in the env."""
    venv, obs, heuristic = table
    arrays = venv.backend.arrays
    t = int(np.flatnonzero(arrays.phase != eng.OVER)[0])
    s, start = int(arrays.current[t]), arrays.beans[t].copy()
    st, _ = _copy(arrays, t)
    action = int(heuristic.act_batch(obs["observation"][t:t + 1], obs["action_mask"][t:t + 1], None)[0])
    ctx = search_joy.context(venv.backend)
    won = search_joy.play_out(st, 0, s, action, ctx, np.zeros((1, 82, eng.W), np.float32))
    snapshot = {f: getattr(arrays, f).copy() for f in search_joy.TABLE_FIELDS}
    assert won == finish_vector_table(venv, obs, heuristic, t)[s] - start[s]
    for f in search_joy.TABLE_FIELDS:  # put the table back for the other tests
        getattr(arrays, f)[:] = snapshot[f]


def test_action_values_are_reproducible_and_leave_the_table_alone(table):
    venv, _, _ = table
    arrays = venv.backend.arrays
    ctx, scratch = search_joy.context(venv.backend), eng.new_state(eng.N_ACTIONS * 4)
    searched = 0
    for t in range(TABLES):
        legal = np.flatnonzero(arrays.mask[t])
        if arrays.phase[t] == eng.OVER or len(legal) < 2:
            continue
        before = {f: getattr(arrays, f)[t].copy() for f in search_joy.TABLE_FIELDS}
        values = search_joy.action_values(arrays, t, legal, 4, 9, ctx, scratch)
        again = search_joy.action_values(arrays, t, legal, 4, 9, ctx, scratch)
        other = search_joy.action_values(arrays, t, legal, 4, 10, ctx, scratch)
        assert values.shape == (4, len(legal)) and np.array_equal(values, again)
        assert not np.array_equal(values, other)  # other walls
        assert all(np.array_equal(getattr(arrays, f)[t], before[f]) for f in search_joy.TABLE_FIELDS)
        searched += 1
    assert searched >= 3
