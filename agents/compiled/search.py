"""Compiled one-step search over heuristic rollouts in the blood battle: redraw what a seat cannot
see (or, as a training teacher, only the wall), then play each legal action followed by four
compiled heuristics to the end of the hand, in K copies of the table.

Used by ``train.distill`` (the known-hands teacher) and ``bench/probe_search.py`` (every kind of
world; results in docs/experiments/2026-12-03-search-probe.md). The kinds of world (``WORLDS``):

- ``clairvoyant``: nothing is redrawn (a harness check);
- ``known-hands``: the live wall's order only; the others' concealed hands stay true (a teacher
  that sees what a player cannot);
- ``uniform``: the others' concealed hands and the live wall, uniformly from the unseen tiles (a
  seat whose river shows a tile outside its void suit holds no void tiles, rule S2 of
  docs/rules-blood-battle.md);
- ``inferred``: as ``uniform``, but each opponent's hand is redrawn (up to ``TRIES`` times) until
  its shanten matches a value drawn from a shanten profile by discard count, and its last discard
  did not lower its shanten;
- ``consistent``: as ``inferred``, but the heuristic itself must choose the last discard from the
  drawn hand plus that tile;
- ``belief``: as ``inferred``, but the target shanten of opponent o is drawn from row o of
  ``profile`` (a belief model's prediction for this table, :mod:`agents.belief`) and its tiles are
  drawn with the odds ``weights[o, kind]`` (Efraimidis–Spirakis sampling without replacement).

Any kind of guessed world can be weighted (``action_values(candidates=M)``): M worlds are drawn
and K kept, by resampling, with the odds that heuristic opponents who err with probability ``eps``
would have played as the seat saw them play (:func:`world_loglik`).

The guessed worlds keep one thing true that the observation shows only as a count: the kind of
another seat's concealed kong (暗杠).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from mjenv.vector.encoding import blood_battle as enc
from mjenv.vector.engine import blood_battle as eng

from . import features as cf
from . import heuristic as ch

WORLDS = ("clairvoyant", "known-hands", "uniform", "inferred", "consistent", "belief")
CLAIRVOYANT, KNOWN_HANDS, UNIFORM, INFERRED, CONSISTENT, BELIEF = range(6)
MAX_DISCARDS = 19
"""Rows of the shanten profile: discard counts 0-18 (more share the last row)."""
SHANTEN_COLS = 8
"""Columns of the shanten profile: shanten -1 (a complete hand) to 6."""
TRIES = 300
"""Hands drawn per opponent in ``inferred`` worlds before the closest one is kept."""
ATTEMPTS = 64
"""Deals of the hidden hands before a seat without void tiles may be given some."""


@njit(cache=True, nogil=True)
def _hides_no_void(st: eng.State, u: int, o: int) -> bool:
    """Seat o has discarded a tile outside its void suit, so it holds no void tiles (S2)."""
    v = st.void[u, o]
    for i in range(st.river_len[u, o]):
        if st.river[u, o, i] // 9 != v:
            return True
    return False


@njit(cache=True, nogil=True)
def _last_discard_kept_shanten(hand: np.ndarray, st: eng.State, u: int, o: int, sh: int,
                               table: np.ndarray) -> bool:
    """With its last discard back in ``hand``, no other discard would have left a lower shanten."""
    n = st.river_len[u, o]
    if n == 0:
        return True
    d = st.river[u, o, n - 1]
    ok = True
    hand[d] += 1
    for x in range(27):
        if hand[x] and x != d:
            hand[x] -= 1
            lower = cf.shanten(hand, st.void[u, o], st.n_melds[u, o], table) < sh
            hand[x] += 1
            if lower:
                ok = False
                break
    hand[d] -= 1
    return ok


@njit(cache=True, nogil=True)
def _heuristic_would_discard(hand: np.ndarray, st: eng.State, u: int, o: int, ctx: tuple,
                             obs: np.ndarray) -> bool:
    """Seat o, holding ``hand`` plus its last discard and seeing that discard's river, would be
    told by the heuristic to discard that very tile (the table is restored afterwards)."""
    rules, win_table, bean_scale, rule_flags, table, scoring = ctx
    n = st.river_len[u, o]
    if n == 0:
        return True
    d = st.river[u, o, n - 1]
    kept_hand, kept_mask = st.hands[u, o].copy(), st.mask[u].copy()
    current, phase, drawn = st.current[u], st.phase[u], st.drawn[u]
    st.hands[u, o, :] = hand
    st.hands[u, o, d] += 1
    st.river_len[u, o] -= 1
    st.river_counts[u, o, d] -= 1
    st.current[u], st.phase[u], st.drawn[u] = o, eng.TURN, -1
    eng.compute_mask(st, u, rules, win_table)
    enc.observe(st, u, obs[0], bean_scale, rule_flags, 0)
    chosen = ch.act_batch(obs, st.mask[u:u + 1], table, scoring)[0]
    st.hands[u, o, :] = kept_hand
    st.mask[u, :] = kept_mask
    st.river_len[u, o] += 1
    st.river_counts[u, o, d] += 1
    st.current[u], st.phase[u], st.drawn[u] = current, phase, drawn
    return chosen == eng.DISCARD_A + d


@njit(cache=True, nogil=True)
def world_loglik(st: eng.State, u: int, s: int, ctx: tuple, obs: np.ndarray, eps: float) -> float:
    """Log-likelihood, under heuristic opponents that err with probability ``eps``, of what seat s
    saw of the others' play, were table ``u``'s hidden hands the true ones (arXiv 1905.10911):

    - each opponent o in play with a discard: the heuristic holding o's hand plus its last discard
      chooses that discard (1 - eps) or another (eps / (choices - 1)). Approximations: the river
      and the wall are today's, not those of that moment (the discards made since are seen);
    - each later seat's last discard, taken in turn order from o to s (claims can reorder turns:
      an approximation), that o could have won on and did not (the heuristic takes every win):
      eps.
    """
    win_table = ctx[1]
    ll = 0.0
    hand = np.zeros(27, np.int8)
    for r in range(1, 4):
        o = (s + r) % 4
        if st.won[u, o]:
            continue
        n = st.river_len[u, o]
        if n > 0:
            hand[:] = st.hands[u, o]
            d = st.river[u, o, n - 1]
            hand[d] += 1
            choices = 0
            for k in range(27):
                choices += hand[k] > 0
            hand[d] -= 1
            if _heuristic_would_discard(hand, st, u, o, ctx, obs):
                ll += np.log(1.0 - eps)
            else:
                ll += np.log(eps / max(choices - 1, 1))
        for q in range(r + 1, 4):
            p = (s + q) % 4
            m = st.river_len[u, p]
            if m > 0 and not st.won[u, p] and eng.can_win_on(st, u, o, st.river[u, p, m - 1], win_table):
                ll += np.log(eps)
    return ll


@njit(cache=True, nogil=True)
def _draw_target(profile: np.ndarray, discards: int) -> int:
    """A shanten drawn from the profile's row for this many discards."""
    row = profile[min(discards, profile.shape[0] - 1)]
    r = np.random.random() * row.sum()
    col = 0
    acc = row[0]
    while acc < r and col < row.shape[0] - 1:
        col += 1
        acc += row[col]
    return col - 1


@njit(cache=True, nogil=True)
def _weighted_first(idx: np.ndarray, m: int, need: int, pool: np.ndarray, odds: np.ndarray,
                    keys: np.ndarray) -> None:
    """Move to ``idx[:need]`` a draw without replacement of ``need`` of the ``m`` tiles
    ``pool[idx[:m]]`` with the odds ``odds[kind]`` (Efraimidis–Spirakis: the largest
    ``log(u) / odds``)."""
    for i in range(m):
        keys[i] = np.log(np.random.random() + 1e-300) / max(odds[pool[idx[i]]], 1e-9)
    for i in range(need):  # a partial selection sort: need is at most 14
        best = i
        for j in range(i + 1, m):
            if keys[j] > keys[best]:
                best = j
        keys[i], keys[best] = keys[best], keys[i]
        idx[i], idx[best] = idx[best], idx[i]


@njit(cache=True, nogil=True)
def _deal_hands(st: eng.State, u: int, s: int, worlds: int, profile: np.ndarray, ctx: tuple,
                pool: np.ndarray, sizes: np.ndarray, used: np.ndarray, strict: bool,
                weights: np.ndarray) -> bool:
    """Give each other seat ``sizes[o]`` tiles of ``pool`` (marking them ``used``); False, with
    ``strict``, when a seat known to hold no void tiles finds too few others left. ``weights``:
    the odds of each (seat, kind) in ``belief`` worlds."""
    table = ctx[4]
    obs = np.zeros((1, *enc.OBS_SHAPE), np.float32)
    n = len(pool)
    idx = np.empty(n, np.int64)
    best = np.empty(14, np.int64)
    hand = np.zeros(27, np.int8)
    keys = np.empty(n, np.float64)
    for o in range(4):
        need = sizes[o]
        if o == s or need == 0:
            continue
        v, clean = st.void[u, o], _hides_no_void(st, u, o)
        m = 0
        for i in range(n):
            if not used[i] and not (clean and pool[i] // 9 == v):
                idx[m] = i
                m += 1
        if m < need:
            if strict:
                return False
            m = 0
            for i in range(n):
                if not used[i]:
                    idx[m] = i
                    m += 1
        inferred = worlds >= INFERRED and not st.won[u, o]
        row = o if worlds == BELIEF else st.river_len[u, o]
        target = _draw_target(profile, row) if inferred else 0
        best_gap = 1 << 30
        for _ in range(TRIES if inferred else 1):
            if worlds == BELIEF:
                _weighted_first(idx, m, need, pool, weights[o], keys)
            else:
                for i in range(need):  # a partial Fisher-Yates draw of ``need`` eligible tiles
                    j = i + np.random.randint(0, m - i)
                    idx[i], idx[j] = idx[j], idx[i]
            gap = 0
            if inferred:
                hand[:] = 0
                for i in range(need):
                    hand[pool[idx[i]]] += 1
                sh = cf.shanten(hand, v, st.n_melds[u, o], table)
                gap = 2 * abs(sh - target)
                if gap == 0 and worlds == INFERRED and not _last_discard_kept_shanten(hand, st, u, o, sh, table):
                    gap = 1
                if gap == 0 and worlds == CONSISTENT and not _heuristic_would_discard(hand, st, u, o, ctx, obs):
                    gap = 1
            if gap < best_gap:
                best_gap = gap
                best[:need] = idx[:need]
                if gap == 0:
                    break
        for i in range(need):
            used[best[i]] = True
            st.hands[u, o, pool[best[i]]] += 1
    return True


@njit(cache=True, nogil=True)
def resample(st: eng.State, u: int, s: int, worlds: int, seed: int, profile: np.ndarray,
             ctx: tuple, weights: np.ndarray) -> None:
    """Redraw, at table ``u``, what seat ``s`` cannot see (module docstring: ``worlds``; ``weights``
    (4 seats, 27 kinds) are read by ``belief`` worlds only); every seat keeps its number of
    concealed tiles and the live wall its length."""
    np.random.seed(seed)
    if worlds == CLAIRVOYANT:
        return
    head, tail = st.head[u], st.tail[u]
    if worlds == KNOWN_HANDS:
        for i in range(tail - 1, head, -1):
            j = head + np.random.randint(0, i - head + 1)
            st.wall[u, i], st.wall[u, j] = st.wall[u, j], st.wall[u, i]
        return
    pool = np.empty(eng.N_TILES, np.int8)
    n = 0
    sizes = np.zeros(4, np.int64)
    for o in range(4):
        if o != s:
            for k in range(27):
                for _ in range(st.hands[u, o, k]):
                    pool[n] = k
                    n += 1
                sizes[o] += st.hands[u, o, k]
            st.hands[u, o, :] = 0
    for i in range(head, tail):
        pool[n] = st.wall[u, i]
        n += 1
    used = np.zeros(n, np.bool_)
    for attempt in range(ATTEMPTS):  # a seat without void tiles can be left short: deal again
        for o in range(4):
            if o != s:
                st.hands[u, o, :] = 0
        used[:] = False
        if _deal_hands(st, u, s, worlds, profile, ctx, pool[:n], sizes, used, attempt < ATTEMPTS - 1, weights):
            break
    w = head
    for i in range(n):
        if not used[i]:
            st.wall[u, w] = pool[i]
            w += 1
    for i in range(tail - 1, head, -1):
        j = head + np.random.randint(0, i - head + 1)
        st.wall[u, i], st.wall[u, j] = st.wall[u, j], st.wall[u, i]


@njit(cache=True, nogil=True)
def play_out(st: eng.State, u: int, s: int, action: int, ctx: tuple, obs: np.ndarray) -> int:
    """Play ``action`` at table ``u``, then four heuristics to the end of the hand; seat s's beans."""
    rules, win_table, bean_scale, rule_flags, table, scoring = ctx
    before = st.beans[u, s]
    over = eng.apply(st, u, action, rules, win_table)
    while not over:
        enc.observe(st, u, obs[0], bean_scale, rule_flags, 0)
        over = eng.apply(st, u, ch.act_batch(obs, st.mask[u:u + 1], table, scoring)[0], rules, win_table)
    return st.beans[u, s] - before


@njit(cache=True, nogil=True)
def shanten_counts(st: eng.State, profile: np.ndarray, table: np.ndarray) -> None:
    """Add, at every table in its turn phase, each other seat still in play's (discards, shanten)."""
    for u in range(st.phase.shape[0]):
        if st.phase[u] != eng.TURN:
            continue
        for o in range(4):
            if o != st.current[u] and not st.won[u, o]:
                sh = cf.shanten(st.hands[u, o], st.void[u, o], st.n_melds[u, o], table)
                profile[min(st.river_len[u, o], profile.shape[0] - 1), min(sh + 1, profile.shape[1] - 1)] += 1


def require_default_rules(backend: Any) -> None:
    """The search copies tables into default-sized scratch states and observes default planes."""
    if backend.rules.escape or backend.rules.bankroll is not None or getattr(backend.rules, "items", None) is not None:
        raise ValueError("the compiled search plays the default rules only, without the options escape, "
                         "bankroll and items")


def context(backend: Any) -> tuple:
    """What the compiled engine, encoder and heuristic need of a blood-battle backend's table:
    (engine rules, win shapes, bean scale, rule flags, heuristic table, heuristic scoring)."""
    require_default_rules(backend)
    return (backend._rules, backend._table, backend.bean_scale, backend.rule_flags, cf.suit_table(),
            ch.scoring(backend.rules))



NO_WEIGHTS = np.ones((4, 27))
"""The odds of worlds other than ``belief``: unused."""
NO_PROFILE = np.ones((1, SHANTEN_COLS))
"""The shanten profile of worlds that redraw no hand: unused."""


def resample_by_actions(st: eng.State, copies: Any, s: int, rollouts: int, candidates: int, key: int,
                        ctx: tuple, eps: float) -> np.ndarray:
    """Keep K = ``rollouts`` of the ``candidates`` worlds in rows 0..M-1, drawn (systematic
    resampling, with replacement) by their :func:`world_loglik`, in rows 0..K-1; each kept world's
    live wall is shuffled anew, so a world kept twice differs in its wall. The log-likelihoods."""
    obs = np.zeros((1, *enc.OBS_SHAPE), np.float32)
    ll = np.array([world_loglik(st, m, s, ctx, obs, eps) for m in range(candidates)])
    w = np.exp(ll - ll.max())
    edges = np.cumsum(w / w.sum())
    u0 = np.random.default_rng(key).random()
    pick = np.minimum(np.searchsorted(edges, (u0 + np.arange(rollouts)) / rollouts), candidates - 1)
    for name in eng.FIELDS:
        field = getattr(copies, name)
        field[:rollouts] = field[pick].copy()
    for k in range(rollouts):
        resample(st, k, s, KNOWN_HANDS, (key * 4099 + candidates + k) % 2**31, NO_PROFILE, ctx, NO_WEIGHTS)
    return ll


def action_values(arrays: Any, t: int, legal: np.ndarray, worlds: int, rollouts: int, key: int,
                  profile: np.ndarray, ctx: tuple, scratch: tuple,
                  weights: np.ndarray = NO_WEIGHTS, candidates: int = 0, eps: float = 0.1) -> np.ndarray:
    """Bean changes (K, len(legal)) of seat ``arrays.current[t]`` at table ``t``: each legal action
    in each of K = ``rollouts`` worlds drawn from ``key`` (the same worlds for every action), then
    four heuristics to the end of the hand. ``scratch``: ``eng.new_state(N_ACTIONS * rollouts)``
    rows at least, and ``candidates`` at least; ``profile`` and ``weights``: see :func:`resample`.
    ``candidates`` M > K: draw M worlds and keep K of them by how likely they make the others'
    observed play (:func:`resample_by_actions`, ``eps``: the opponents' error rate)."""
    st, copies = scratch
    s, c = int(arrays.current[t]), len(legal)
    drawn = max(candidates, rollouts)
    if drawn > len(copies.phase):
        raise ValueError(f"candidates ({candidates}) exceed the scratch state's {len(copies.phase)} rows")
    for name in eng.FIELDS:  # K worlds in rows 0..K-1, then each repeated once per action
        getattr(copies, name)[:drawn] = getattr(arrays, name)[t]
    for k in range(drawn):
        resample(st, k, s, worlds, (key * 4099 + k) % 2**31, profile, ctx, weights)
    if candidates > rollouts:
        resample_by_actions(st, copies, s, rollouts, candidates, key, ctx, eps)
    for name in eng.FIELDS:
        field = getattr(copies, name)
        field[:c * rollouts] = np.repeat(field[:rollouts].copy(), c, axis=0)
    obs = np.zeros((1, *enc.OBS_SHAPE), np.float32)
    values = [play_out(st, r, s, int(legal[r % c]), ctx, obs) for r in range(c * rollouts)]
    return np.array(values, dtype=np.float64).reshape(rollouts, c)
