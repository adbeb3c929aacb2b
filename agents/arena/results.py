"""What an arena run produced: its records, the statistics per agent, the results file.

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
``escape_rate`` (and ``escapes``), only with the rule option ``escape``
    hands the agent escaped (逃跑), per hand.
``items_per_hand`` (and ``item_uses``), only with the rule option ``items``
    the agent's item uses (道具, S17 of docs/rules-blood-battle.md) per hand, and its uses of each item over the run
    (item -> count, in :data:`mjenv.config.ITEMS` order; 乾坤大挪移 included).
``draw_rate``
    hands that ended in an exhaustive draw (end reason ``draw``: 流局 / 荒庄, the wall ran out) in
    which the agent had not won; the table's ``流局`` column. Drawing a tile is never counted.
``mean_fan`` / ``mean_capped_fan``
    mean ``total_fan`` / ``capped_fan`` of the agent's wins (``None`` without wins). Joy Mahjong
    has no cap: both are the mean fan, flowers included.
``cumulative_beans``, ``level``
    beans of one seat of the agent over every hand (``mean_beans × hands``) and its level title
    (等级, :func:`agents.arena.levels.level_title`).

**JSON** (:meth:`ArenaResult.to_dict`): ``schema`` (``"mjenv.arena/1"``), ``game``, ``preset``, ``mode``
(``"1v3"`` or ``"4"``), ``agents`` (specs as given), ``labels``, ``seed``, ``deals``,
``hands`` (deals × 4), ``env_options``, ``rules``, ``rake``, ``interval``, ``results``
(label → the statistics above plus ``seats``, ``seat_hands``, ``wins``, ``self_draws``,
``deal_ins``, ``std_per_set``), ``per_set_mean_beans`` (label → list), ``check`` (the mean of the
four seats' bean sum per hand, and the expected ``-4·rake``; less with ``escape``, whose 扣豆 in
``happy`` goes to no one, and a bankroll's short rake more), ``workers``, ``backend`` (``compiled`` or ``reference``; results before mjenv 0.1's backends had ``engine``), ``elapsed_s``.
Two agents' 1-vs-3 runs against the same opponents on the same seeds pair deal for deal
(:mod:`agents.arena.compare`, ``mjenv compare``).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any, Sequence

import numpy as np

from mjenv import games
from mjenv.config import ITEMS
from mjenv.outputs import atomic_write

from .levels import level_legend, level_title
from .protocol import N_SEATS, HandRecord

SCHEMA = "mjenv.arena/1"
INTERVAL = "student_t_95_over_duplicate_sets"

# Two-sided 95% Student t quantiles t(0.975, df) for df = 1..30.
_T975 = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
         2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
         2.160368656, 2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
         2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
         2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456)
_Z975 = 1.959963984540054


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


def spec_name(spec: Any) -> str:
    """A policy name, or the ``name`` of a Policy object (its class name if it has none)."""
    return spec if isinstance(spec, str) else str(getattr(spec, "name", type(spec).__name__))


def agent_labels(agent_specs: Sequence[Any]) -> list[str]:
    """Display names of the agents; repeated names get ``#1``, ``#2`` … suffixes."""
    names = [spec_name(spec) for spec in agent_specs]
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
    backend: str = "reference"
    """The backend that played the hands (``compiled``, ``reference``); the records do not depend on it."""

    @property
    def engine(self) -> str:
        """Deprecated (removed in mjenv 0.2): the old name of :attr:`backend` (``vector``, ``aec``)."""
        warnings.warn("ArenaResult.engine is deprecated and will be removed in mjenv 0.2: read .backend "
                      "('compiled' for 'vector', 'reference' for 'aec')", DeprecationWarning, stacklevel=2)
        return {"compiled": "vector", "reference": "aec"}[self.backend]

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
            seat_hands = wins = self_draws = deal_ins = draws = escapes = 0
            uses = np.zeros(len(ITEMS), dtype=np.int64)
            fans: list[int] = []
            capped: list[int] = []
            for rec in self.records:
                mine = [s for s, agent in enumerate(rec.lineup) if agent == a]
                seat_hands += len(mine)
                escapes += sum(1 for s in rec.escaped if s in mine)
                for s in mine if rec.item_uses else ():
                    uses += rec.item_uses[s]
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
            if self.rules.get("escape"):  # absent otherwise, as the option's rule fields are
                out[label].update(escapes=escapes, escape_rate=escapes / seat_hands)
            if self.rules.get("items") is not None:
                out[label].update(item_uses=dict(zip(ITEMS, uses.tolist())),
                                  items_per_hand=int(uses.sum()) / seat_hands)
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
            "agents": [spec_name(spec) for spec in self.agents],
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
            "backend": self.backend,
            "elapsed_s": self.elapsed_s,
        }
        return _nan_to_none(d)

    @property
    def setting(self) -> str:
        """The rules in a few words: the preset (Joy Mahjong: the room) and the options given."""
        table = games.game(self.game)
        first = f"{table.variant_option} {table.variant(self.preset, self.rules)}"
        rest = [f"{k}={v}" for k, v in self.env_options.items() if k not in ("preset", table.variant_option)]
        return ", ".join([first, *rest])

    def format_table(self) -> str:
        """The per-agent table for the terminal, with a legend of its columns."""
        st = self.stats()
        head = (f"{self.game} ({self.setting}) · {self.mode} duplicate · {self.deals} deals × 4 rotations = "
                f"{self.deals * N_SEATS} hands · seed {self.seed} · {self.workers} worker(s) · "
                f"{self.backend} backend · {self.elapsed_s:.1f} s")
        w = max(len(label) for label in self.labels)
        escape = bool(self.rules.get("escape"))  # the column only where agents may escape
        items = self.rules.get("items") is not None  # and where they hold items
        cols = (f"{'agent':<{w}}  seats  {'beans/hand ± 95% CI (t)':>24}  {'win':>6}  {'deal-in':>7}  "
                f"{'tsumo':>6}  {'流局':>4}  " + f"{'escape':>6}  " * escape + f"{'items':>5}  " * items
                + f"{'fan':>5}  {'cumulative':>11}  level")
        lines = [head, cols, "-" * len(cols)]
        for label, s in st.items():
            fan = f"{s['mean_fan']:.2f}" if s["mean_fan"] is not None else "-"
            ci = f"{s['mean_beans']:+.2f} ± {s['ci_halfwidth']:.2f}"
            escaped = f"{s['escape_rate']:>6.1%}  " if escape else ""
            used = f"{s['items_per_hand']:>5.2f}  " if items else ""
            lines.append(
                f"{label:<{w}}  {s['seats']:>5}  {ci:>24}  {s['win_rate']:>6.1%}  {s['deal_in_rate']:>7.1%}  "
                f"{s['self_draw_rate']:>6.1%}  {s['draw_rate']:>6.1%}  {escaped}{used}{fan:>5}  "
                f"{s['cumulative_beans']:>+11.0f}  {s['level']}"
            )
        lines.append(f"rates are per hand of one seat; CI: Student t over {self.deals} duplicate sets")
        lines.append("win: hands won · deal-in: wins on the agent's discard (or robbed kong) · tsumo: self-drawn "
                     "wins · 流局: exhaustive draws (the wall ran out) the agent had not won"
                     + " · escape: hands the agent escaped (逃跑)" * escape
                     + " · items: item uses (道具) per hand" * items)
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
        with atomic_write(path, "wb") as fh:
            fig.savefig(fh, format="png")


def _nan_to_none(obj: Any) -> Any:
    """Replace float NaN by None recursively (JSON has no NaN)."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nan_to_none(v) for v in obj]
    return obj
