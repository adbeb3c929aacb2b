"""Duplicate-format arena: every seeded deal is replayed with the agents rotated through the seats.

The luck of the deal cancels because each agent plays every seat of the same wall once:

- **1-vs-3** (``agents=[a, b]``): ``a`` sits in one seat and ``b`` in the other three; rotation
  ``r`` puts ``a`` in seat ``r``.
- **four agents** (``agents=[a, b, c, d]``): rotation ``r`` seats agent ``i`` at seat ``(i + r) % 4``.

A *duplicate set* is one deal and its four rotations (four hands on the same wall and dealer).
Deal ``d`` uses env seed ``deal_seed(seed, d)``, so the first ``k`` deals of a run are the same
for any ``deals >= k``. The policy seated at ``seat`` draws its randomness from
``decision_rng(seed, d, rotation, seat)`` only, so a run is a pure function of its arguments,
whatever the number of workers. Policies must not carry state from one hand to the next: a
worker reuses one policy object for all the hands of its chunk.

**Engines.** ``engine="vector"`` (the default) plays on the compiled engine
(:mod:`agents.vector_arena`): a worker's deals are dealt on four tables each and played in
lockstep, each policy choosing for all its tables in one ``act_batch`` call. ``engine="aec"``
plays the reference env one hand at a time (:func:`play_hand`); replay logs (``log_dir``) need it.
Both give the same records for every policy that follows the ``Policy`` protocol (tested).

**Statistics** (per agent label; an agent in three seats is averaged over them):

``mean_beans``
    beans per hand; its 95% confidence interval (``ci_low``, ``ci_high``, ``ci_halfwidth``) is a
    Student t interval over duplicate sets: the sample is the agent's per-set average, n = deals,
    df = n - 1 (exact quantiles for df <= 30, the Abramowitz–Stegun 26.7.5 expansion above).
``win_rate`` / ``self_draw_rate``
    wins / self-drawn wins per hand.
``deal_in_rate``
    wins whose ``source`` (the discarder, or the robbed kong-maker) was the agent, per hand. In
    blood battle one seat can deal in more than once a hand.
``draw_rate``
    hands that ended in an exhaustive draw (end reason ``draw``: 流局 / 荒庄, the wall ran out) in
    which the agent had not won; the table's ``流局`` column. Drawing a tile is never counted.
``mean_fan`` / ``mean_capped_fan``
    mean ``total_fan`` / ``capped_fan`` of the agent's wins (``None`` without wins). Joy Mahjong
    has no cap: both are the mean fan, flowers included.
``cumulative_beans``, ``level``
    beans of one seat of the agent over every hand (``mean_beans × hands``) and its level title
    (等级, :func:`agents.levels.level_title`).

**JSON** (:meth:`ArenaResult.to_dict`): ``schema`` (``"mjenv.arena/1"``), ``game``, ``preset``, ``mode``
(``"1v3"`` or ``"4"``), ``agents`` (specs as given), ``labels``, ``seed``, ``deals``,
``hands`` (deals × 4), ``env_options``, ``rules``, ``rake``, ``interval``, ``results``
(label → the statistics above plus ``seats``, ``seat_hands``, ``wins``, ``self_draws``,
``deal_ins``, ``std_per_set``), ``per_set_mean_beans`` (label → list), ``check`` (the mean of the
four seats' bean sum per hand, and the expected ``-4·rake``), ``workers``, ``engine``, ``elapsed_s``.
Two agents' 1-vs-3 runs against the same opponents on the same seeds pair deal for deal
(:mod:`agents.compare`, ``mjenv compare``).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import multiprocessing
import os
import sys
import time
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from mjenv.config import as_dict

from .levels import level_legend, level_title
from .registry import load_policy

N_SEATS = 4
# Game name -> env module.
GAMES: dict[str, str] = {"blood_battle": "mjenv.blood_battle_v0", "joy_mahjong": "mjenv.joy_mahjong_v0"}
ENGINES = ("vector", "aec")
"""``vector``: the compiled engine (:mod:`agents.vector_arena`); ``aec``: the reference env, hand by hand."""
SCHEMA = "mjenv.arena/1"
INTERVAL = "student_t_95_over_duplicate_sets"

# Two-sided 95% Student t quantiles t(0.975, df) for df = 1..30.
_T975 = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
         2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
         2.160368656, 2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
         2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
         2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456)
_Z975 = 1.959963984540054


class HandRecord(NamedTuple):
    """What one hand of the arena produced (compact, for pickling between processes)."""

    deal: int
    rotation: int
    lineup: tuple[int, ...]
    """Agent index seated at each seat."""
    wall_digest: int
    """CRC-32 of the dealt wall: equal across the four rotations of a deal."""
    dealer: int
    beans: tuple[int, ...]
    wins: tuple[tuple[int, int | None, int | None, int | None], ...]
    """(seat, source, total_fan, capped_fan) per win, in order."""
    end_reason: str


def t_quantile_975(df: int) -> float:
    """t(0.975, df): the half-width factor of a two-sided 95% Student t interval."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z, v = _Z975, float(df)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


def lineup(n_agents: int, rotation: int) -> tuple[int, ...]:
    """Agent index at each seat in ``rotation`` (0-3) for 2 agents (1-vs-3) or 4 agents."""
    if n_agents == 2:
        base = (0, 1, 1, 1)
    elif n_agents == 4:
        base = (0, 1, 2, 3)
    else:
        raise ValueError(f"the arena takes 2 agents (1-vs-3) or 4 agents, got {n_agents}")
    return tuple(base[(seat - rotation) % N_SEATS] for seat in range(N_SEATS))


def deal_seed(seed: int, deal: int) -> int:
    """The env seed of deal ``deal``: independent of the number of deals and of other seeds."""
    return int(np.random.SeedSequence([seed, deal]).generate_state(1, dtype=np.uint64)[0] >> 1)


def decision_rng(seed: int, deal: int, rotation: int, seat: int) -> np.random.Generator:
    """The generator the policy at ``seat`` uses for one hand: a function of these four only."""
    return np.random.default_rng([seed, deal, rotation, seat])


def _env_module(game: str) -> Any:
    """The env module of a game name."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; choose one of {sorted(GAMES)}")
    return importlib.import_module(GAMES[game])


def _make_env(game: str, env_options: dict[str, Any]) -> Any:
    """A raw env for single-hand episodes (the arena's unit is one hand)."""
    if "match_hands" in env_options or "render_mode" in env_options:
        raise ValueError("env_options may not set match_hands or render_mode: the arena plays single hands")
    return _env_module(game).raw_env(**env_options)


def play_hand(raw: Any, policies: Sequence[Any], seats: tuple[int, ...], seed: int, deal: int,
              rotation: int) -> HandRecord:
    """Play deal ``deal`` once with ``policies[seats[s]]`` at seat ``s``; return its record.

    With ``raw.log_path`` set, every decision is logged with its legal actions, and with the
    policy's probabilities when it has ``action_probs`` (neural agents)."""
    raw.reset(seed=deal_seed(seed, deal))
    game = raw.game
    digest = zlib.crc32(np.asarray(game.wall, dtype=np.int16).tobytes())
    rngs = [decision_rng(seed, deal, rotation, s) for s in range(N_SEATS)]
    seat_of = {a: i for i, a in enumerate(raw.possible_agents)}
    logging = raw.log_path is not None
    while not game.over:
        agent = raw.agent_selection
        s = seat_of[agent]
        obs = raw.observe(agent)
        policy = policies[seats[s]]
        if logging:
            probs = getattr(policy, "action_probs", None)
            raw.log_decision(None if probs is None else probs(obs["observation"], obs["action_mask"]))
        raw.step(int(policy.act(obs["observation"], obs["action_mask"], rngs[s])))
    wins = tuple((w.seat, w.source, getattr(w.score, "total_fan", None), getattr(w.score, "capped_fan", None))
                 for w in game.wins)
    return HandRecord(deal, rotation, seats, digest, game.dealer, tuple(int(b) for b in game.beans),
                      wins, game.end_reason)


def deal_log_path(log_dir: str | os.PathLike, deal: int) -> Path:
    """The replay log of deal ``deal`` (its four rotations) in ``log_dir``."""
    return Path(log_dir) / f"deal_{deal:05d}.jsonl"


def _play_deals(game: str, agent_specs: Sequence[Any], env_options: dict[str, Any], seed: int,
                start: int, stop: int, log_dir: str | os.PathLike | None = None) -> list[HandRecord]:
    """Worker entry point (top level, so spawn can pickle it): deals [start, stop), 4 rotations each;
    with ``log_dir``, one replay log per deal."""
    raw = _make_env(game, env_options)
    policies = [load_policy(spec, game) for spec in agent_specs]
    labels = _labels(agent_specs)
    records = []
    for d in range(start, stop):
        for r in range(N_SEATS):
            seats = lineup(len(policies), r)
            if log_dir is not None:
                raw.log_path = deal_log_path(log_dir, d)
                raw.log_agents = [labels[a] for a in seats]
            records.append(play_hand(raw, policies, seats, seed, d, r))
    return records


def _play_deals_vector(game: str, agent_specs: Sequence[Any], env_options: dict[str, Any], seed: int,
                       start: int, stop: int, on_deal: Callable[[int], None] | None = None,
                       worker: bool = False) -> list[HandRecord]:
    """Entry point of the compiled engine: deals [start, stop), 4 rotations each, in lockstep.
    A ``worker`` process runs torch on one thread: the workers are the parallelism."""
    from .vector_arena import play_deals  # lazily: it imports this module

    policies = [load_policy(spec, game) for spec in agent_specs]
    if worker and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    return play_deals(game, policies, env_options, seed, start, stop, on_deal=on_deal)


def _spec_name(spec: Any) -> str:
    """A policy name, or the ``name`` of a Policy object (its class name if it has none)."""
    return spec if isinstance(spec, str) else str(getattr(spec, "name", type(spec).__name__))


def _labels(agent_specs: Sequence[Any]) -> list[str]:
    """Display names of the agents; repeated names get ``#1``, ``#2`` … suffixes."""
    names = [_spec_name(spec) for spec in agent_specs]
    return [f"{n}#{i + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)]


def _mean_or_none(values: list[int]) -> float | None:
    """Mean of a list, None when empty."""
    return float(np.mean(values)) if values else None


@dataclasses.dataclass
class ArenaResult:
    """The records of an arena run and the statistics derived from them."""

    game: str
    agents: list[Any]
    labels: list[str]
    seed: int
    deals: int
    env_options: dict[str, Any]
    rules: dict[str, Any]
    rake: int
    records: list[HandRecord]
    workers: int
    elapsed_s: float
    preset: str = ""
    """The env's rule preset (``happy``, ``qq``; Joy Mahjong ``standard``), given or default."""
    engine: str = "aec"
    """The engine that played the hands (``ENGINES``); the records do not depend on it."""

    @property
    def mode(self) -> str:
        return "1v3" if len(self.labels) == 2 else "4"

    def per_set_means(self) -> np.ndarray:
        """Array (agents, deals): each agent's average beans per hand in each duplicate set."""
        total = np.zeros((len(self.labels), self.deals))
        count = np.zeros((len(self.labels), self.deals))
        for rec in self.records:
            for seat, agent in enumerate(rec.lineup):
                total[agent, rec.deal] += rec.beans[seat]
                count[agent, rec.deal] += 1
        return total / count

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per-agent statistics (see the module docstring), keyed by label."""
        per_set = self.per_set_means()
        n = self.deals
        out: dict[str, dict[str, Any]] = {}
        for a, label in enumerate(self.labels):
            seat_hands = wins = self_draws = deal_ins = draws = 0
            fans: list[int] = []
            capped: list[int] = []
            for rec in self.records:
                mine = [s for s, agent in enumerate(rec.lineup) if agent == a]
                seat_hands += len(mine)
                winners = set()
                for seat, source, fan, cap in rec.wins:
                    if seat in mine:
                        winners.add(seat)
                        wins += 1
                        self_draws += source is None
                        if fan is not None:
                            fans.append(fan)
                        if cap is not None:
                            capped.append(cap)
                    if source is not None and source in mine:
                        deal_ins += 1
                if rec.end_reason == "draw":
                    draws += sum(1 for s in mine if s not in winners)
            mean = float(per_set[a].mean())
            sd = float(per_set[a].std(ddof=1)) if n > 1 else float("nan")
            half = t_quantile_975(n - 1) * sd / math.sqrt(n) if n > 1 else float("nan")
            cumulative = mean * n * N_SEATS
            out[label] = {
                "seats": seat_hands // (n * N_SEATS),
                "seat_hands": seat_hands,
                "mean_beans": mean,
                "ci_low": mean - half,
                "ci_high": mean + half,
                "ci_halfwidth": half,
                "std_per_set": sd,
                "win_rate": wins / seat_hands,
                "deal_in_rate": deal_ins / seat_hands,
                "self_draw_rate": self_draws / seat_hands,
                "draw_rate": draws / seat_hands,
                "wins": wins,
                "self_draws": self_draws,
                "deal_ins": deal_ins,
                "mean_fan": _mean_or_none(fans),
                "mean_capped_fan": _mean_or_none(capped),
                "cumulative_beans": cumulative,
                "level": level_title(self.game, cumulative),
            }
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (keys listed in the module docstring); NaN becomes None."""
        per_set = self.per_set_means()
        all_beans = sum(sum(rec.beans) for rec in self.records)
        d = {
            "schema": SCHEMA,
            "game": self.game,
            "preset": self.preset,
            "mode": self.mode,
            "agents": [_spec_name(spec) for spec in self.agents],
            "labels": list(self.labels),
            "seed": self.seed,
            "deals": self.deals,
            "hands": self.deals * N_SEATS,
            "env_options": dict(self.env_options),
            "rules": dict(self.rules),
            "rake": self.rake,
            "interval": INTERVAL,
            "results": self.stats(),
            "per_set_mean_beans": {label: per_set[a].tolist() for a, label in enumerate(self.labels)},
            "check": {"all_seats_beans_per_hand": all_beans / len(self.records),
                      "expected": -N_SEATS * self.rake},
            "workers": self.workers,
            "engine": self.engine,
            "elapsed_s": self.elapsed_s,
        }
        return _nan_to_none(d)

    @property
    def setting(self) -> str:
        """The rules in a few words: the preset (Joy Mahjong: the room) and the options given."""
        first = f"room {self.rules.get('room')}" if self.game == "joy_mahjong" else f"preset {self.preset}"
        rest = [f"{k}={v}" for k, v in self.env_options.items() if k not in ("preset", "room")]
        return ", ".join([first, *rest])

    def format_table(self) -> str:
        """The per-agent table for the terminal, with a legend of its columns."""
        st = self.stats()
        head = (f"{self.game} ({self.setting}) · {self.mode} duplicate · {self.deals} deals × 4 rotations = "
                f"{self.deals * N_SEATS} hands · seed {self.seed} · {self.workers} worker(s) · "
                f"{self.engine} engine · {self.elapsed_s:.1f} s")
        w = max(len(label) for label in self.labels)
        cols = (f"{'agent':<{w}}  seats  {'beans/hand ± 95% CI (t)':>24}  {'win':>6}  {'deal-in':>7}  "
                f"{'tsumo':>6}  {'流局':>4}  {'fan':>5}  {'cumulative':>11}  level")
        lines = [head, cols, "-" * len(cols)]
        for label, s in st.items():
            fan = f"{s['mean_fan']:.2f}" if s["mean_fan"] is not None else "-"
            ci = f"{s['mean_beans']:+.2f} ± {s['ci_halfwidth']:.2f}"
            lines.append(
                f"{label:<{w}}  {s['seats']:>5}  {ci:>24}  {s['win_rate']:>6.1%}  {s['deal_in_rate']:>7.1%}  "
                f"{s['self_draw_rate']:>6.1%}  {s['draw_rate']:>6.1%}  {fan:>5}  "
                f"{s['cumulative_beans']:>+11.0f}  {s['level']}"
            )
        lines.append(f"rates are per hand of one seat; CI: Student t over {self.deals} duplicate sets")
        lines.append("win: hands won · deal-in: wins on the agent's discard (or robbed kong) · tsumo: self-drawn "
                     "wins · 流局: exhaustive draws (the wall ran out) the agent had not won")
        lines.append("cumulative: beans of one seat over all hands · " + level_legend(self.game))
        return "\n".join(lines)

    def plot(self, path: str) -> None:
        """PNG of each agent's cumulative beans (one seat) over hands, with 95% confidence bands."""
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError("plotting needs matplotlib: pip install 'mjenv[eval]'") from exc

        per_set = self.per_set_means()
        k = np.arange(1, self.deals + 1)
        hands = k * N_SEATS
        fig = Figure(figsize=(8, 5), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        tq = t_quantile_975(self.deals - 1) if self.deals > 1 else float("nan")
        for a, label in enumerate(self.labels):
            cum = np.cumsum(per_set[a]) * N_SEATS
            sd = per_set[a].std(ddof=1) if self.deals > 1 else 0.0
            # The sum of k independent set averages (×4 hands) has sd 4·σ·√k.
            band = tq * sd * N_SEATS * np.sqrt(k) if self.deals > 1 else np.zeros_like(cum)
            (line,) = ax.plot(hands, cum, label=label)
            ax.fill_between(hands, cum - band, cum + band, color=line.get_color(), alpha=0.2)
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xlabel("hands (deals × 4 rotations)")
        ax.set_ylabel("cumulative beans (one seat)")
        ax.set_title(f"{self.game} ({self.setting}) {self.mode} duplicate, {self.deals} deals, "
                     f"seed {self.seed}: 95% t bands", fontsize=10)
        ax.legend()
        fig.savefig(path, format="png")


def _nan_to_none(obj: Any) -> Any:
    """Replace float NaN by None recursively (JSON has no NaN)."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nan_to_none(v) for v in obj]
    return obj


def _check_log_dir(log_dir: str | os.PathLike) -> None:
    """Create ``log_dir``; refuse one that already holds deal logs (new hands would be appended)."""
    path = Path(log_dir)
    if path.exists() and not path.is_dir():
        raise ValueError(f"log dir {str(path)!r} is a file: give a folder for the replay logs")
    if any(path.glob("deal_*.jsonl")):
        raise ValueError(f"log dir {str(path)!r} already holds deal_*.jsonl logs: choose a new or empty folder")
    path.mkdir(parents=True, exist_ok=True)


def run_arena(game: str = "blood_battle", agents: Sequence[Any] = ("heuristic", "random"),
              deals: int = 100, seed: int = 0, workers: int = 1,
              env_options: dict[str, Any] | None = None, progress: bool = True,
              log_dir: str | os.PathLike | None = None, engine: str | None = None) -> ArenaResult:
    """Play ``deals`` duplicate sets (each deal × 4 rotations) and collect the records.

    ``agents``: 2 (1-vs-3) or 4 policy names or picklable Policy objects. ``workers`` > 1 runs
    chunks of deals in spawned processes; the result does not depend on it. ``log_dir``: write
    ``deal_00000.jsonl`` … there, one replay log per deal (its four rotations, agents named in the
    headers, every decision with its legal actions and, for neural agents, their probabilities).
    ``engine``: ``"vector"`` (the compiled engine, all tables of a chunk in lockstep, batched
    policies) or ``"aec"`` (the reference env, one hand at a time); default ``vector``, or ``aec``
    with ``log_dir`` (the logs need the Python game). Both give the same records.
    """
    agents = list(agents)
    env_options = dict(env_options or {})
    lineup(len(agents), 0)  # validates the number of agents
    if not (isinstance(deals, int) and deals >= 1):
        raise ValueError(f"deals must be an int >= 1, got {deals!r}")
    if not (isinstance(seed, int) and seed >= 0):
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if engine is None:
        engine = "aec" if log_dir is not None else "vector"
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {list(ENGINES)}")
    if engine == "vector" and log_dir is not None:
        raise ValueError("replay logs (log_dir) need the Python game: use engine 'aec' to write them")
    raw = _make_env(game, env_options)  # fails fast on bad options, before any worker starts
    if log_dir is not None:
        _check_log_dir(log_dir)
    for spec in agents:
        load_policy(spec, game)
    # as_dict leaves out the option groups that are off (escape, bankroll): results written
    # before those options existed still pair with new ones (mjenv compare).
    rules = as_dict(raw.rules) if dataclasses.is_dataclass(raw.rules) else {}
    rake = int(getattr(raw.rules, "rake", 0))

    from tqdm import tqdm

    start = time.perf_counter()
    records: list[HandRecord] = []
    with tqdm(total=deals, unit="deal", desc=f"{game} arena", disable=not progress) as bar:
        if workers == 1 and engine == "vector":
            records = _play_deals_vector(game, agents, env_options, seed, 0, deals, on_deal=bar.update)
        elif workers == 1:
            step = max(1, deals // 100)
            for lo in range(0, deals, step):
                hi = min(deals, lo + step)
                records += _play_deals(game, agents, env_options, seed, lo, hi, log_dir)
                bar.update(hi - lo)
        else:
            # Small chunks keep both the bar and the load balance smooth; the compiled engine
            # wants large ones (its batches are the chunk's tables).
            if engine == "vector":
                size = math.ceil(deals / (workers * 2))
                play, extra = _play_deals_vector, (None, True)
            else:
                size = max(1, min(25, math.ceil(deals / (workers * 8))))
                play, extra = _play_deals, (log_dir,)
            chunks: dict[int, list[HandRecord]] = {}
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                futures = {pool.submit(play, game, agents, env_options, seed, lo, min(deals, lo + size), *extra): lo
                           for lo in range(0, deals, size)}
                for fut in as_completed(futures):
                    lo = futures[fut]
                    chunks[lo] = fut.result()
                    bar.update(len(chunks[lo]) // N_SEATS)
            records = [rec for lo in sorted(chunks) for rec in chunks[lo]]
    elapsed = time.perf_counter() - start
    return ArenaResult(game, agents, _labels(agents), seed, deals, env_options, rules, rake,
                       records, workers, elapsed, raw.preset, engine)
