"""How much a one-step search over heuristic rollouts gains in the blood battle, by what it knows.

    python bench/probe_search.py --deals 100 --rollouts 32 --workers 2

One seat searches, three compiled heuristics play the others, on the duplicate arena's deals
(every deal in four rotations, the arena's seeds). At each own-turn decision with a choice (not
胡, which the heuristic always takes), the searcher copies its table K times, *resamples* what it
must not see, and plays every legal action in each copy followed by four heuristics to the end
of the hand (common random numbers: all actions see the same K worlds). It plays the action with
the best mean bean change when its lead over the heuristic's own choice exceeds ``z`` standard
errors (z = 0: the best mean), else the heuristic's choice. What each ``--worlds`` kind resamples:

- ``clairvoyant``: nothing; the true wall and hands (a cheat: the harness's upper bound);
- ``known-hands``: the live wall's order only, the others' concealed hands stay true (a cheat);
- ``uniform``: the others' concealed hands and the live wall, uniformly from the unseen tiles (a
  seat whose river shows a tile outside its void suit holds no void tiles, rule S2);
- ``inferred``: as ``uniform``, but each opponent's hand is redrawn (up to 300 tries) until its
  shanten matches a value drawn from the heuristics' own shanten by discard count (measured first
  in four-heuristic play) and its last discard did not lower its shanten;
- ``consistent``: as ``inferred``, but the last discard must be the one the heuristic itself
  would have made from the drawn hand plus that tile (the opponents' true policy as their model).

Prints the searcher's beans per hand with the duplicate 95% interval (per-deal means over the
four rotations), the searched and changed decisions, and the time. A research probe, not a
shipped agent: it reads the engine's state, where a ``Policy`` sees only its observation. The
``uniform``, ``inferred`` and ``consistent`` worlds redraw everything the searching seat may not
know but one thing: the kind of another seat's concealed kong (暗杠), which the observation shows
only as a count, stays true. Results are in docs/baselines.md.
"""

from __future__ import annotations

# The compiled functions below are not cached on disk (numba's cache cannot reload functions of a
# module loaded from a file path, as the tests load this script); they compile in about 7 s per process.

import argparse
import time
import zlib
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from numba import njit

import mjenv.vector as mv
from agents.arena import deal_seed, lineup, t_quantile_975
from agents.compiled import features as cf
from agents.compiled import heuristic as ch
from agents.heuristic import HeuristicPolicy
from mjenv.vector.encoding import blood_battle as enc
from mjenv.vector.engine import blood_battle as eng

WORLDS = ("clairvoyant", "known-hands", "uniform", "inferred", "consistent")
CLAIRVOYANT, KNOWN_HANDS, UNIFORM, INFERRED, CONSISTENT = range(5)
MAX_DISCARDS = 19
"""Rows of the shanten profile: discard counts 0-18 (more share the last row)."""
SHANTEN_COLS = 8
"""Columns of the shanten profile: shanten -1 (a complete hand) to 6."""
TRIES = 300
"""Hands drawn per opponent in ``inferred`` worlds before the closest one is kept."""
ATTEMPTS = 64
"""Deals of the hidden hands before a seat without void tiles may be given some."""


# ------------------------------------------------------------------ compiled: worlds and rollouts


@njit(nogil=True)
def _hides_no_void(st: eng.State, u: int, o: int) -> bool:
    """Seat o has discarded a tile outside its void suit, so it holds no void tiles (S2)."""
    v = st.void[u, o]
    for i in range(st.river_len[u, o]):
        if st.river[u, o, i] // 9 != v:
            return True
    return False


@njit(nogil=True)
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


@njit(nogil=True)
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
    enc.observe(st, u, obs[0], bean_scale, rule_flags)
    chosen = ch.act_batch(obs, st.mask[u:u + 1], table, scoring)[0]
    st.hands[u, o, :] = kept_hand
    st.mask[u, :] = kept_mask
    st.river_len[u, o] += 1
    st.river_counts[u, o, d] += 1
    st.current[u], st.phase[u], st.drawn[u] = current, phase, drawn
    return chosen == eng.DISCARD_A + d


@njit(nogil=True)
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


@njit(nogil=True)
def _deal_hands(st: eng.State, u: int, s: int, worlds: int, profile: np.ndarray, ctx: tuple,
                pool: np.ndarray, sizes: np.ndarray, used: np.ndarray, strict: bool) -> bool:
    """Give each other seat ``sizes[o]`` tiles of ``pool`` (marking them ``used``); False, with
    ``strict``, when a seat known to hold no void tiles finds too few others left."""
    table = ctx[4]
    obs = np.zeros((1, *enc.OBS_SHAPE), np.float32)
    n = len(pool)
    idx = np.empty(n, np.int64)
    best = np.empty(14, np.int64)
    hand = np.zeros(27, np.int8)
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
        target = _draw_target(profile, st.river_len[u, o]) if inferred else 0
        best_gap = 1 << 30
        for _ in range(TRIES if inferred else 1):
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


@njit(nogil=True)
def resample(st: eng.State, u: int, s: int, worlds: int, seed: int, profile: np.ndarray,
             ctx: tuple) -> None:
    """Redraw, at table ``u``, what seat ``s`` cannot see (module docstring: ``worlds``); every
    seat keeps its number of concealed tiles and the live wall its length."""
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
        if _deal_hands(st, u, s, worlds, profile, ctx, pool[:n], sizes, used, attempt < ATTEMPTS - 1):
            break
    w = head
    for i in range(n):
        if not used[i]:
            st.wall[u, w] = pool[i]
            w += 1
    for i in range(tail - 1, head, -1):
        j = head + np.random.randint(0, i - head + 1)
        st.wall[u, i], st.wall[u, j] = st.wall[u, j], st.wall[u, i]


@njit(nogil=True)
def play_out(st: eng.State, u: int, s: int, action: int, ctx: tuple, obs: np.ndarray) -> int:
    """Play ``action`` at table ``u``, then four heuristics to the end of the hand; seat s's beans."""
    rules, win_table, bean_scale, rule_flags, table, scoring = ctx
    before = st.beans[u, s]
    over = eng.apply(st, u, action, rules, win_table)
    while not over:
        enc.observe(st, u, obs[0], bean_scale, rule_flags)
        over = eng.apply(st, u, ch.act_batch(obs, st.mask[u:u + 1], table, scoring)[0], rules, win_table)
    return st.beans[u, s] - before


@njit(nogil=True)
def shanten_counts(st: eng.State, profile: np.ndarray, table: np.ndarray) -> None:
    """Add, at every table in its turn phase, each other seat still in play's (discards, shanten)."""
    for u in range(st.phase.shape[0]):
        if st.phase[u] != eng.TURN:
            continue
        for o in range(4):
            if o != st.current[u] and not st.won[u, o]:
                sh = cf.shanten(st.hands[u, o], st.void[u, o], st.n_melds[u, o], table)
                profile[min(st.river_len[u, o], profile.shape[0] - 1), min(sh + 1, profile.shape[1] - 1)] += 1


# ------------------------------------------------------------------ Python: the games


def context(backend) -> tuple:
    """What the compiled engine, encoder and heuristic need of a blood-battle backend's table:
    (engine rules, win shapes, bean scale, rule flags, heuristic table, heuristic scoring)."""
    return (backend._rules, backend._table, backend.bean_scale, backend.rule_flags, cf.suit_table(),
            ch.scoring(backend.rules))


def shanten_profile(preset: str, tables: int = 400, seed: int = 999) -> np.ndarray:
    """Counts of (discards, shanten + 1) of the seats in play over one hand per table of four
    heuristics (the ``inferred`` worlds' opponent model)."""
    venv = mv.make("blood_battle", tables, copy=False, preset=preset)
    heuristic = HeuristicPolicy(rules=venv.backend.rules)
    profile = np.zeros((MAX_DISCARDS, SHANTEN_COLS), np.float64)
    obs, _ = venv.reset(seed=seed)
    active = np.ones(tables, dtype=np.bool_)
    while active.any():
        shanten_counts(venv.backend.st, profile, cf.suit_table())
        actions = heuristic.act_batch(obs["observation"], obs["action_mask"], None)
        obs, _, terminated, _, _ = venv.step(actions, active=active)
        active &= ~terminated
    venv.close()
    return profile


def play(preset: str, worlds: int, rollouts: int, z: float, seed: int, start: int, stop: int,
         profile: np.ndarray) -> tuple[np.ndarray, int, int]:
    """The searcher's beans in each hand of deals ``[start, stop)`` × 4 rotations (deal-major),
    and the decisions searched and changed."""
    n = 4 * (stop - start)
    deal, rotation = start + np.arange(n) // 4, np.arange(n) % 4
    agent_at = np.array([lineup(2, r) for r in range(4)])[rotation]  # 0: the searcher
    venv = mv.make("blood_battle", n, copy=False, preset=preset)
    be, arrays = venv.backend, venv.backend.arrays
    heuristic = HeuristicPolicy(rules=be.rules)
    ctx = context(be)
    scratch, copies = eng.new_state(eng.N_ACTIONS * max(rollouts, 1))
    obs1 = np.zeros((1, *enc.OBS_SHAPE), np.float32)
    obs, info = venv.reset(seed=[deal_seed(seed, int(d)) for d in deal])
    active, beans = np.ones(n, dtype=np.bool_), np.zeros((n, 4))
    decisions = np.zeros(n, dtype=np.int64)
    searched = changed = 0
    while active.any():
        seat = info["seat"]
        actions = heuristic.act_batch(obs["observation"], obs["action_mask"], None)
        turn = active & (agent_at[np.arange(n), seat] == 0) & (arrays.phase == eng.TURN)
        for t in np.flatnonzero(turn) if rollouts else ():
            legal = np.flatnonzero(arrays.mask[t])
            if len(legal) < 2 or arrays.mask[t, eng.HU_A]:
                continue
            s, c = int(seat[t]), len(legal)
            for name in eng.FIELDS:  # K worlds in rows 0..K-1, then each repeated once per action
                getattr(copies, name)[:rollouts] = getattr(arrays, name)[t]
            key = zlib.crc32(f"{seed},{deal[t]},{rotation[t]},{decisions[t]}".encode())
            decisions[t] += 1
            for k in range(rollouts):
                resample(scratch, k, s, worlds, (key * 4099 + k) % 2**31, profile, ctx)
            for name in eng.FIELDS:
                field = getattr(copies, name)
                field[:c * rollouts] = np.repeat(field[:rollouts].copy(), c, axis=0)
            values = np.array([play_out(scratch, r, s, int(legal[r % c]), ctx, obs1) for r in range(c * rollouts)],
                              dtype=np.float64).reshape(rollouts, c)
            lead = values - values[:, [int(np.flatnonzero(legal == actions[t])[0])]]
            mean = lead.mean(axis=0)
            se = lead.std(axis=0, ddof=1) / np.sqrt(rollouts) if rollouts > 1 else np.zeros(c)
            score = np.where(mean > z * se, mean, 0.0)
            searched += 1
            if score.max() > 0:
                actions[t] = legal[int(np.argmax(score))]
                changed += 1
        obs, _, terminated, _, info = venv.step(actions, active=active)
        for t in np.flatnonzero(terminated & active):
            beans[t] = info["beans"][t]
        active &= ~terminated
    venv.close()
    mine = beans[agent_at == 0]  # one searcher seat per table, in table order
    return mine, searched, changed


def _chunk(args: tuple) -> tuple[np.ndarray, int, int]:
    """``play`` in a worker process."""
    return play(*args)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--preset", default="happy", choices=("happy", "qq"))
    p.add_argument("--deals", type=int, default=100)
    p.add_argument("--seed", type=int, default=12345, help="arena seed (deal d: deal_seed(seed, d))")
    p.add_argument("--rollouts", type=int, default=32, help="worlds K per decision (0: the heuristic itself)")
    p.add_argument("--z", type=float, default=0.0, help="standard errors a lead must exceed")
    p.add_argument("--worlds", nargs="+", default=list(WORLDS), choices=WORLDS)
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    if a.deals < 2 or a.rollouts < 0 or a.workers < 1:
        p.error("need --deals >= 2 (for an interval), --rollouts >= 0 and --workers >= 1")
    modelled = {"inferred", "consistent"} & set(a.worlds)
    profile = shanten_profile(a.preset) if modelled else np.zeros((MAX_DISCARDS, SHANTEN_COLS))
    bounds = np.linspace(0, a.deals, a.workers + 1).astype(int)
    print(f"blood battle ({a.preset}), 1 searcher vs 3 heuristics, {a.deals} deals x 4 rotations, "
          f"K = {a.rollouts}, z = {a.z}, arena seed {a.seed}")
    print("| worlds | beans/hand ± 95% CI | searched | changed | seconds |\n|---|---|---|---|---|")
    for name in a.worlds:
        t0 = time.perf_counter()
        jobs = [(a.preset, WORLDS.index(name), a.rollouts, a.z, a.seed, int(lo), int(hi), profile)
                for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
        with ProcessPoolExecutor(len(jobs)) as pool:
            parts = list(pool.map(_chunk, jobs))
        per_deal = np.concatenate([m for m, _, _ in parts]).reshape(-1, 4).mean(axis=1)
        half = t_quantile_975(len(per_deal) - 1) * per_deal.std(ddof=1) / np.sqrt(len(per_deal))
        searched, changed = sum(s for _, s, _ in parts), sum(c for _, _, c in parts)
        print(f"| {name} | {per_deal.mean():+.2f} ± {half:.2f} | {searched} | "
              f"{changed / max(searched, 1):.0%} | {time.perf_counter() - t0:.0f} |", flush=True)


if __name__ == "__main__":
    main()
