"""The search agent of the blood battle (``load_policy("search")``): at each own-turn decision with
a real choice, a one-step search over heuristic rollouts in worlds drawn from a belief model.

What it receives is what the seat observes (``act`` / ``act_batch``), nothing else:

1. **A table from the observation** (:func:`table_from_observation`): the seat's hand, every
   river (its counts; the last four discards in order, older ones in kind order), the melds, voids,
   wins, beans, dealer, the wall's length and the rules of the table (the preset whose rule flags
   the observation shows). Another seat's 暗杠 shows only as a count: its kind is drawn among the
   kinds of which no copy is seen. The unseen tiles are put in the other hands and the wall, to be
   redrawn. Kong records (who paid what) are not in the observation: a world has none, so its
   rollouts know no 退税 refund of an earlier kong and no 杠上炮 transfer of one.
2. **K worlds** (:func:`agents.compiled.search.resample`, ``belief`` worlds): each opponent's hand
   drawn with the belief's odds of each kind lying with it, matched to a shanten drawn from the
   belief's prediction for that opponent (:mod:`agents.belief`); the wall is the rest, shuffled.
   Without a belief checkpoint (``belief=None``) the worlds are ``uniform``. With
   ``weighting="actions"`` M = ``candidates`` worlds are drawn this way and K of them kept by how
   likely they make what the seat saw of the others' play under heuristic opponents: each one's
   last discard, and the wins it passed (:func:`agents.compiled.search.world_loglik`; arXiv
   1905.10911).
3. **Rollouts**: every legal action in each world, then four compiled heuristics to the end of the
   hand (the same K worlds for every action: common random numbers).
4. **The gate**: the action with the best mean bean change is played if its lead over the prior
   policy's (the heuristic's) choice exceeds ``z`` standard errors; else the prior's choice.

Other decisions (定缺, claims, 胡 on offer, a single legal action) are the heuristic's.

**Randomness**: the worlds are drawn from a seed made of ``seed`` and a checksum of the
observation, so the agent is a deterministic function of what it observes: the same observation
gives the same action whatever the hidden part of the table (tests/agents/test_search_agent.py redraws it
and checks), and ``act_batch`` leaves its generator alone (the arena batches it).

**Budget**: ``rollouts`` K worlds per searched decision; the default K = 16 costs about 75-150 ms
of one core per searched decision, nearly all of it in the rollouts
(docs/experiments/2026-12-07-belief-and-search.md).
The default rules only (no ``escape``, no ``bankroll``).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np

from mjenv.config import blood_battle_rules
from mjenv.encoding import RECENT, BloodBattleObserver
from mjenv.vector.rules.blood_battle import ANKAN, KONG, PONG

from .base import BatchByLoop, default_part
from .belief import Belief, load_belief, location_sizes, unseen_counts
from .compiled import search as cs
from .heuristic import HeuristicPolicy

V = BloodBattleObserver.views
OBS_PLANES = BloodBattleObserver.planes
DEFAULT_BELIEF = Path(__file__).with_name("checkpoints") / "belief_blood_battle_happy.pt"
"""The shipped belief checkpoint (trained on the happy preset; ``train.belief``)."""
DEFAULT_ROLLOUTS = 16
DEFAULT_Z = 1.0
DEFAULT_EPS = 0.1
"""The opponents' error rate of the ``actions`` weighting (the true hands of four-heuristic tables
explain all the others' observed play at 95% of the decisions: bench/search_worlds.py)."""
WEIGHTINGS = ("none", "actions")


class _Table:
    """The compiled context of one preset and the scratch states of the search."""

    def __init__(self, preset: str, rollouts: int, candidates: int = 0) -> None:
        import mjenv.vector as mv  # lazily: the compiled engine loads on first use
        from mjenv.vector.engine import blood_battle as eng

        backend = mv.make("blood_battle", 1, preset=preset).backend
        self.eng, self.rules, self.bean_scale = eng, backend.rules, backend.bean_scale
        self.ctx = cs.context(backend)
        self.st, self.arrays = eng.new_state(1)
        self.scratch = eng.new_state(max(eng.N_ACTIONS * max(rollouts, 1), candidates))


def preset_of(observation: np.ndarray) -> str:
    """The blood-battle preset whose rule flags the observation shows (ValueError if none does)."""
    flags = tuple(bool(f) for f in observation[V["rules"], 0] > 0.5)
    for name in ("happy", "qq"):
        r = blood_battle_rules(name)  # the observer's rule flags (mjenv.blood_battle_v0)
        if (r.self_draw_bonus == "add_base", r.gang_pao_transfer, r.forced_win_last_four, r.mode == "classic") == flags:
            return name
    raise ValueError(f"the search agent plays the presets happy and qq; the observation's rule flags {flags} "
                     "match neither")


def table_from_observation(obs: np.ndarray, table: _Table, rng: np.random.Generator) -> bool:
    """Fill row 0 of ``table.arrays`` with a table consistent with what ``obs`` shows (module
    docstring, step 1): the hidden tiles are placed at random, to be redrawn. False when the
    observation's counts do not add up (the rare 抢杠 leaves one tile unaccounted for)."""
    eng, a = table.eng, table.arrays
    for name in eng.FIELDS:
        getattr(a, name)[0] = 0
    seat = int(np.argmax(obs[V["seat"], 0]))
    absolute = [(seat + r) % 4 for r in range(4)]
    hand = (obs[V["hand"]] > 0.5).sum(axis=0).astype(np.int8)
    a.hands[0, seat] = hand
    unseen = unseen_counts(obs[None])[0].astype(np.int64)
    sizes = location_sizes(obs[None])[0].astype(np.int64)
    ankans = np.rint(obs[V["ankan_count"], 0] * 4).astype(np.int64)
    ankans[0] = 0  # the seat's own 暗杠 are seen
    wall_count = int(sizes[0])
    for r, s in enumerate(absolute):
        for k in np.flatnonzero(obs[V["pong"].start + r] > 0.5):
            a.meld[0, s, k] = PONG
        for k in np.flatnonzero(obs[V["kong"].start + r] > 0.5):
            a.meld[0, s, k] = KONG
        if r == 0:
            for k in np.flatnonzero(obs[V["own_ankan"].start] > 0.5):
                a.meld[0, s, k] = ANKAN
        else:
            for _ in range(ankans[r]):  # another seat's 暗杠: a kind none of whose copies is seen
                free = np.flatnonzero(unseen == 4)
                k = int(rng.choice(free)) if len(free) else int(np.argmax(unseen))
                a.meld[0, s, k] = ANKAN
                unseen[k] = 0
        a.n_melds[0, s] = np.count_nonzero(a.meld[0, s])
        counts = np.rint(obs[V["river"].start + r] * 4).astype(np.int64)
        recent = [int(np.argmax(obs[V["recent"].start + RECENT * r + i])) for i in range(RECENT)
                  if obs[V["recent"].start + RECENT * r + i].any()][::-1]
        older = counts.copy()
        for k in recent:
            older[k] -= 1
        river = [k for k in range(27) for _ in range(max(int(older[k]), 0))] + recent
        a.river[0, s, :len(river)] = river
        a.river_len[0, s] = len(river)
        a.river_counts[0, s] = counts
        a.won[0, s] = a.out_of_play[0, s] = obs[V["won"].start + r, 0] > 0.5
        a.win_tile[0, s] = int(np.argmax(obs[V["won_tile"].start + r])) if obs[V["won_tile"].start + r].any() else -1
        a.win_from[0, s] = -1
        void = obs[V["void"].start + r]
        a.void[0, s] = int(np.argmax(void)) // 9 if void.any() else -1
        a.beans[0, s] = int(np.rint(obs[V["beans"].start + r, 0] * table.bean_scale))
        a.discarded[0, s] = len(river) > 0 or a.n_melds[0, s] > 0 or a.won[0, s]
        if obs[V["dealer"].start + r, 0] > 0.5:
            a.dealer[0] = a.next_dealer[0] = s
    a.win_order[0] = np.cumsum(a.won[0]) * a.won[0]
    a.any_call[0] = int(a.n_melds[0].sum() > 0)
    pool = np.repeat(np.arange(27), unseen).astype(np.int8)
    if len(pool) != sizes.sum() - 4 * ankans.sum():  # e.g. after a robbed kong (抢杠): counts off by one
        return False
    rng.shuffle(pool)
    i = 0
    for r in range(1, 4):
        n = int(sizes[r]) - 4 * int(ankans[r])
        np.add.at(a.hands[0, absolute[r]], pool[i:i + n], 1)
        i += n
    a.head[0], a.tail[0] = eng.N_TILES - wall_count, eng.N_TILES
    a.wall[0, eng.N_TILES - wall_count:] = pool[i:i + wall_count]
    drawn = obs[V["drawn"].start]
    a.phase[0], a.current[0] = eng.TURN, seat
    a.drawn[0] = int(np.argmax(drawn)) if drawn.any() else -1
    a.after_kong[0] = obs[V["after_kong"].start, 0] > 0.5
    a.last_kong[0] = a.kong_discard[0] = -1
    a.claim_tile[0] = a.claim_from[0] = -1
    return True


class SearchPolicy(BatchByLoop):
    """The search agent (module docstring). ``belief``: a :class:`agents.belief.Belief`, a
    checkpoint path, or None for uniform worlds; ``rollouts``: K worlds per searched decision;
    ``z``: the significance gate; ``seed``: mixed into every decision's seed; ``safety``: with a
    belief, never switch to a discard whose deal-in danger exceeds the prior's by more than this
    (None: no such gate); ``weighting``: ``"none"``, or ``"actions"`` to draw ``candidates`` worlds
    (default 2 K) and keep K of them by how likely they make the opponents' observed play under
    heuristic opponents that err with probability ``eps``
    (:func:`agents.compiled.search.world_loglik`)."""

    def __init__(self, belief: Belief | str | Path | None = DEFAULT_BELIEF, rollouts: int = DEFAULT_ROLLOUTS,
                 z: float = DEFAULT_Z, seed: int = 0, name: str = "search",
                 safety: float | None = None, weighting: str = "none", candidates: int | None = None,
                 eps: float = DEFAULT_EPS) -> None:
        if not isinstance(rollouts, int) or rollouts < 2:
            raise ValueError(f"rollouts must be an int >= 2 (a standard error needs two worlds), got {rollouts!r}")
        if z < 0:
            raise ValueError(f"z must be >= 0, got {z!r}")
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
        candidates = 2 * rollouts if candidates is None else candidates
        if weighting == "actions" and (not isinstance(candidates, int) or candidates <= rollouts):
            raise ValueError(f"candidates must be an int > rollouts ({rollouts}), got {candidates!r}")
        if not 0 < eps < 1:
            raise ValueError(f"eps must lie in (0, 1), got {eps!r}")
        self.weighting, self.eps = weighting, float(eps)
        self.candidates = candidates if weighting == "actions" else 0
        self.belief = load_belief(belief) if isinstance(belief, (str, Path)) else belief
        self.rollouts, self.z, self.seed, self.name = rollouts, float(z), int(seed), name
        self.safety = safety
        self._tables: dict[str, _Table] = {}
        self._priors: dict[str, HeuristicPolicy] = {}
        self.searched = self.changed = 0

    def _table(self, preset: str) -> _Table:
        if preset not in self._tables:
            self._tables[preset] = _Table(preset, self.rollouts, self.candidates)
            self._priors[preset] = HeuristicPolicy(rules=self._tables[preset].rules)
        return self._tables[preset]

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        obs, masks = default_part(np.asarray(observation)[None], np.asarray(action_mask)[None], OBS_PLANES,
                                  len(action_mask))
        obs = np.ascontiguousarray(obs[0], dtype=np.float32)
        if obs.shape != (OBS_PLANES, 27):
            raise ValueError(f"the search agent plays the blood battle: observations of shape ({OBS_PLANES}, 27), "
                             f"got {obs.shape}")
        preset = preset_of(obs)
        table = self._table(preset)
        prior = int(self._priors[preset].act(obs, masks[0], rng))
        mask = masks[0][:table.eng.N_ACTIONS]
        legal = np.flatnonzero(mask)
        turn = obs[V["phase"].start + table.eng.TURN, 0] > 0.5
        if not turn or len(legal) < 2 or mask[table.eng.HU_A]:
            return prior
        return self._search(obs, mask, legal, prior, table)

    def _search(self, obs: np.ndarray, mask: np.ndarray, legal: np.ndarray, prior: int, table: _Table) -> int:
        key = zlib.crc32(obs.tobytes(), self.seed & 0xFFFFFFFF)
        if not table_from_observation(obs, table, np.random.default_rng(key)):
            return prior
        eng, a = table.eng, table.arrays
        eng.compute_mask(table.st, 0, table.ctx[0], table.ctx[1])
        if not np.array_equal(a.mask[0, :len(mask)], mask):  # a table the engine reads otherwise: no search
            return prior
        seat = int(a.current[0])
        profile = np.full((4, cs.SHANTEN_COLS), 1.0)
        weights = np.ones((4, 27))
        worlds = cs.UNIFORM
        danger = np.zeros(eng.N_ACTIONS)
        if self.belief is not None:
            p = self.belief.predict(obs[None])
            for r in range(1, 4):
                profile[(seat + r) % 4] = p["shanten"][0, r - 1]
                weights[(seat + r) % 4] = p["locations"][0, :, r]
            worlds = cs.BELIEF
            danger[eng.DISCARD_A:eng.DISCARD_A + 27] = p["danger"][0]
        values = cs.action_values(a, 0, legal, worlds, self.rollouts, key, profile, table.ctx, table.scratch, weights,
                                  self.candidates, self.eps)
        lead = values - values[:, [int(np.flatnonzero(legal == prior)[0])]]
        mean, se = lead.mean(axis=0), lead.std(axis=0, ddof=1) / np.sqrt(self.rollouts)
        score = np.where(mean > self.z * se, mean, 0.0)
        if self.safety is not None:  # no switch to a discard the belief finds riskier than the prior's
            score[danger[legal] > danger[prior] + self.safety] = 0.0
        self.searched += 1
        if score.max() > 0:
            self.changed += 1
            return int(legal[int(np.argmax(score))])
        return prior


def search_policy(game: str) -> SearchPolicy:
    """``load_policy("search", game)``: the blood battle's search agent with its defaults."""
    if game != "blood_battle":
        raise ValueError(f"the policy 'search' plays blood_battle, not {game!r}")
    return SearchPolicy(DEFAULT_BELIEF if DEFAULT_BELIEF.is_file() else None)
