"""Compiled one-step search over heuristic rollouts in Joy Mahjong, the known-hands teacher of
``train.distill``: K copies of the table with the live wall redrawn (flowers, the bird and every
later draw with it; the other seats' hands stay true), and in each copy every legal action
followed by four compiled Joy heuristics to the end of the hand.

The blood battle's search (:mod:`.search`) has more kinds of world; Joy has only the teacher's.
A win's fans come from the reference scorer, as in every Joy hand the compiled engine plays
(:mod:`mjenv.vector.engine.joy_mahjong`), so a rollout costs one scorer call when it ends in a win.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from mjenv.vector.encoding import joy_mahjong as enc
from mjenv.vector.engine import joy_mahjong as eng

from . import features as cf
from . import heuristic_joy as ch
from .search import require_default_rules

TABLE_FIELDS = tuple(f for f in eng.FIELDS if f not in ("suit_need", "honour_need"))
"""The per-table arrays a copy of a table takes (the win check's look-up tables are shared)."""


@njit(cache=True, nogil=True)
def redraw_wall(st: eng.State, u: int, seed: int) -> None:
    """Shuffle the live wall ``wall[head:tail]`` of table ``u`` (what no seat has seen)."""
    np.random.seed(seed)
    head, tail = st.head[u], st.tail[u]
    for i in range(tail - 1, head, -1):
        j = head + np.random.randint(0, i - head + 1)
        st.wall[u, i], st.wall[u, j] = st.wall[u, j], st.wall[u, i]


@njit(cache=True, nogil=True)
def play_out(st: eng.State, u: int, s: int, action: int, ctx: tuple, obs: np.ndarray) -> int:
    """Play ``action`` at table ``u``, then four heuristics to the end of the hand; seat s's beans."""
    rules, bean_scale, rule_flags, suits, honours = ctx
    before = st.beans[u, s]
    over = eng.apply(st, rules, u, action)
    while not over:
        enc.observe(st, u, st.current[u], bean_scale, rule_flags, 0, obs[0])
        over = eng.apply(st, rules, u, ch.act_batch(obs, st.mask[u:u + 1], suits, honours)[0])
    return st.beans[u, s] - before


def context(backend: Any) -> tuple:
    """What the compiled engine, encoder and heuristic need of a Joy backend's table:
    (engine rules, bean scale, rule flags, the heuristic's suit and honour tables)."""
    require_default_rules(backend)
    return backend._rules, backend.bean_scale, backend.rule_flags, cf.suit_table(), cf.honour_table()


def action_values(arrays: Any, t: int, legal: np.ndarray, rollouts: int, key: int, ctx: tuple,
                  scratch: tuple) -> np.ndarray:
    """Bean changes (K, len(legal)) of seat ``arrays.current[t]`` at table ``t``: each legal action
    in each of K = ``rollouts`` redrawn walls from ``key`` (the same walls for every action), then
    four heuristics to the end of the hand. ``scratch``: ``eng.new_state(N_ACTIONS * rollouts)``."""
    st, copies = scratch
    s, c = int(arrays.current[t]), len(legal)
    for name in TABLE_FIELDS:  # K walls in rows 0..K-1, then each repeated once per action
        getattr(copies, name)[:rollouts] = getattr(arrays, name)[t]
    for k in range(rollouts):
        redraw_wall(st, k, (key * 4099 + k) % 2**31)
    for name in TABLE_FIELDS:
        field = getattr(copies, name)
        field[:c * rollouts] = np.repeat(field[:rollouts].copy(), c, axis=0)
    obs = np.zeros((1, enc.OBS_PLANES, eng.W), np.float32)
    values = [play_out(st, r, s, int(legal[r % c]), ctx, obs) for r in range(c * rollouts)]
    return np.array(values, dtype=np.float64).reshape(rollouts, c)
