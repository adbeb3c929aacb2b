"""Paired comparison of two agents from ``mjenv eval`` results: did the new agent gain on the old?

Two 1-vs-3 arena runs on the same seeds and the same field (game, rules, opponents) play the same
walls, and the opponents draw the same randomness (``decision_rng``), so the difference of the
two focal agents' per-deal results (each deal's average over its four rotations) cancels most of
the luck of the deal. Its mean and Student t 95% interval over all the deals of all the seeds is
the comparison, tighter than the two agents' separate intervals combined (for two distilled
happy policies over 18,000 deals: ±0.29 beans per hand, against ±0.42).

Deal ``d`` of seed ``s`` is the same wall for any run length, so runs of different ``deals`` on a
seed are paired over the deals they share.

``mjenv compare --base A.json [...] --new B.json [...]`` prints it; :func:`compare` returns it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Any, Callable, Sequence

import numpy as np

from .results import SCHEMA, t_quantile_975

FIELD_KEYS = ("game", "preset", "rules", "rake")
"""What must match between every pair of runs besides the seed and the opponents (the resolved
rules, not the options as typed: ``--preset happy`` and the default are the same game)."""


@dataclasses.dataclass(frozen=True)
class Interval:
    """A mean with its two-sided Student t 95% interval over ``n`` deals."""

    mean: float
    halfwidth: float
    n: int

    @classmethod
    def of(cls, values: np.ndarray) -> "Interval":
        """The mean and 95% interval of a sample (half-width NaN for one value)."""
        n = len(values)
        half = t_quantile_975(n - 1) * float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else float("nan")
        return cls(float(values.mean()), half, n)

    def __str__(self) -> str:
        return f"{self.mean:+.2f} ± {self.halfwidth:.2f}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN half-width as None)."""
        half = None if math.isnan(self.halfwidth) else self.halfwidth
        return {"mean": self.mean, "ci_halfwidth": half, "ci_low": None if half is None else self.mean - half,
                "ci_high": None if half is None else self.mean + half, "deals": self.n}


@dataclasses.dataclass(frozen=True)
class Comparison:
    """``new`` minus ``base``, per deal, pooled over seeds; and each agent's own beans per hand."""

    base: str
    new: str
    opponents: str
    game: str
    preset: str
    seeds: tuple[int, ...]
    difference: Interval
    base_beans: Interval
    new_beans: Interval
    per_seed: dict[int, Interval]

    def format(self) -> str:
        """The comparison as a few lines of text."""
        d = self.difference
        lines = [f"{self.game} ({self.preset}), each agent in one seat against 3 x {self.opponents}, "
                 f"{d.n:,} deals, seed(s) {seed_ranges(self.seeds)}",
                 f"  {self.new} - {self.base}: {d} beans per hand, paired "
                 f"[{d.mean - d.halfwidth:+.2f}, {d.mean + d.halfwidth:+.2f}]",
                 f"  {self.new}: {self.new_beans}    {self.base}: {self.base_beans}"]
        if len(self.seeds) > 1:
            items = [f"{s}: {iv}" for s, iv in self.per_seed.items()]
            lines.append("  per seed:")
            lines += ["    " + ", ".join(items[i:i + 6]) for i in range(0, len(items), 6)]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"schema": "mjenv.compare/1", "base": self.base, "new": self.new, "opponents": self.opponents,
                "game": self.game, "preset": self.preset, "seeds": list(self.seeds),
                "difference": self.difference.to_dict(), "base_beans": self.base_beans.to_dict(),
                "new_beans": self.new_beans.to_dict(),
                "per_seed": {str(s): iv.to_dict() for s, iv in self.per_seed.items()}}


def seed_ranges(seeds: Sequence[int]) -> str:
    """Sorted seeds as runs: (0, 1, 2, 5) -> "0-2, 5"."""
    runs: list[list[int]] = []
    for s in sorted(seeds):
        if runs and s == runs[-1][1] + 1:
            runs[-1][1] = s
        else:
            runs.append([s, s])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def load_result(path: str | os.PathLike) -> dict[str, Any]:
    """Read an ``mjenv eval --out`` JSON file, refusing anything a comparison cannot use."""
    try:
        with open(path, encoding="utf-8") as fh:
            result = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except RecursionError as exc:  # e.g. 100,000 nested brackets: no arena result nests that deep
        raise ValueError(f"{path}: JSON nested too deeply to read; not an arena result") from exc
    check_result(result, str(path))
    return result


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    """A finite int or float (JSON's NaN and Infinity, and booleans, are not)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_names(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)


RESULT_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "game": (lambda v: isinstance(v, str), "a string"),
    "preset": (lambda v: isinstance(v, str), "a string"),
    "agents": (_is_names, "two agent names (a 1-vs-3 run)"),
    "labels": (lambda v: _is_names(v) and v[0] != v[1], "two distinct agent labels"),
    "seed": (lambda v: _is_int(v) and v >= 0, "an int >= 0"),
    "deals": (lambda v: _is_int(v) and v >= 1, "an int >= 1"),
    "rules": (lambda v: isinstance(v, dict), "an object of rule fields"),
    "rake": (_is_int, "an int"),
    "per_set_mean_beans": (lambda v: isinstance(v, dict), "an object of agent label -> per-deal means"),
}
"""The fields of an arena result (``ArenaResult.to_dict``) a comparison reads: (check, what it must be)."""


def _shown(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut short."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_result(result: Any, name: str) -> None:
    """Raise ValueError, naming ``name`` and the field, unless ``result`` is a 1-vs-3 arena result
    with one finite mean per deal."""
    if not isinstance(result, dict) or result.get("schema") != SCHEMA:
        raise ValueError(f"{name}: not an arena result (expected schema {SCHEMA!r})")
    if result.get("mode") != "1v3":
        raise ValueError(f"{name}: a comparison needs a 1-vs-3 run (two agents), this one has mode "
                         f"{_shown(result.get('mode'))}")
    for key, (check, what) in RESULT_FIELDS.items():
        if key not in result:
            raise ValueError(f"{name}: missing field {key!r}")
        if not check(result[key]):
            raise ValueError(f"{name}: field {key!r} must be {what}, got {_shown(result[key])}")
    focal = result["labels"][0]
    values = result["per_set_mean_beans"].get(focal)
    if not (isinstance(values, list) and len(values) == result["deals"] and all(_is_number(v) for v in values)):
        raise ValueError(f"{name}: field 'per_set_mean_beans' must hold for {focal!r} one finite number per deal "
                         f"({result['deals']} deals), got {_shown(values)}")


def _one_agent(results: Sequence[dict[str, Any]], side: str) -> str:
    """The focal agent of one side's runs, refusing a side that mixes agents."""
    names = {r["agents"][0] for r in results}
    if len(names) != 1:
        raise ValueError(f"--{side} runs are of different agents: {sorted(names)}")
    return names.pop()


def _by_seed(results: Sequence[dict[str, Any]], side: str) -> dict[int, dict[str, Any]]:
    """One side's runs keyed by seed, refusing a seed given twice."""
    out: dict[int, dict[str, Any]] = {}
    for r in results:
        if r["seed"] in out:
            raise ValueError(f"--{side} has two runs on seed {r['seed']}")
        out[r["seed"]] = r
    return out


def compare(base: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> Comparison:
    """Paired per-deal difference ``new - base`` over runs on the same seeds and field.

    ``base`` and ``new``: arena result dicts (``ArenaResult.to_dict()`` or ``mjenv eval --out``),
    one per seed on each side. Raises ValueError on anything that would not pair deal for deal.
    """
    if not base or not new:
        raise ValueError("compare needs at least one run on each side")
    for side, results in (("base", base), ("new", new)):
        for i, r in enumerate(results):
            check_result(r, f"--{side} run {i + 1}")
    left, right = _by_seed(base, "base"), _by_seed(new, "new")
    if set(left) != set(right):
        raise ValueError(f"the two sides cover different seeds: only in --base {sorted(set(left) - set(right))}, "
                         f"only in --new {sorted(set(right) - set(left))}")
    first = next(iter(left.values()))
    opponents = first["agents"][1]
    for seed in sorted(left):
        for side, r in (("base", left[seed]), ("new", right[seed])):
            if r["agents"][1] != opponents:
                raise ValueError(f"--{side} seed {seed} plays against {r['agents'][1]!r}, not {opponents!r}")
            for key in FIELD_KEYS:
                if r[key] != first[key]:
                    raise ValueError(f"--{side} seed {seed} has another {key}: {r[key]!r} against {first[key]!r}")
    diffs, olds, news, per_seed = [], [], [], {}
    for seed in sorted(left):
        a, b = left[seed], right[seed]
        n = min(a["deals"], b["deals"])
        x = np.asarray(a["per_set_mean_beans"][a["labels"][0]][:n], dtype=np.float64)
        y = np.asarray(b["per_set_mean_beans"][b["labels"][0]][:n], dtype=np.float64)
        diffs.append(y - x)
        olds.append(x)
        news.append(y)
        per_seed[seed] = Interval.of(y - x)
    return Comparison(base=_one_agent(base, "base"), new=_one_agent(new, "new"), opponents=opponents,
                      game=first["game"], preset=first["preset"], seeds=tuple(sorted(left)),
                      difference=Interval.of(np.concatenate(diffs)), base_beans=Interval.of(np.concatenate(olds)),
                      new_beans=Interval.of(np.concatenate(news)), per_seed=per_seed)
