"""Reference ladders: named, frozen rungs per game configuration, rated on one scale (``mjenv ladder``).

A ladder (:data:`LADDERS`) is a game configuration (blood battle ``happy``, ``qq``, ``qq`` classic;
Joy Mahjong's ``popular``, ``eight_fan``, ``no_fan`` rooms) and its rungs from weakest to strongest:
``random``, weaker heuristic variants, the heuristic, and the shipped network where it is
separable from the heuristic. Every rung loads by name (:func:`agents.load_policy`).

**Building** (:func:`build`, ``python -m agents.arena.ladder build --all``): every ordered pair of rungs plays a
1-vs-3 duplicate match (candidate in one seat, three copies of the other rung) over the ladder's
``deals`` deals of seed ``seed``, so each pair meets in both directions on the same walls; the
ratings are a Bradley–Terry fit over all of it with bootstrap intervals (:mod:`.rating`), anchored
at ``heuristic`` = :data:`ANCHOR_RATING`.

**Stored ladders** (``agents/arena/ladders/<key>.json``, schema :data:`SCHEMA`): the ladder's
version, the mjenv version, the rung specs (name, kind, a checkpoint's sha256), the seed, deals and
hands, every match (the candidate's outcome per deal as a ``W``/``T``/``L`` string, its beans per
hand with the arena's 95% interval, win, deal-in and fan figures) and the fitted ratings with their
intervals, and each adjacent pair's gap with its interval. A ladder never changes silently: a rung
whose checkpoint or variant changes needs a new ``version`` and a rebuild (tests check the stored
files against :data:`LADDERS` and the checkpoints).

**Versions**: :data:`LADDERS` holds each configuration's current version; older versions stay in
:data:`RETIRED`, readable beside it (:func:`versions`, ``mjenv ladder --version N``). Version 1 of a
ladder is stored as ``<key>.json``, version N > 1 as ``<key>.vN.json`` (:func:`data_path`), so a
new version never touches an older file. A retired version is checked as data and against its
digest, its rungs by name and kind only (its networks' checkpoints may have changed since).

**Verified as data** (:func:`load`): a stored file is read only if every field has its type and
every number is finite and in range (:func:`check_data`), its rungs are the spec's, and its sha256
is the one recorded for its ladder in :data:`DIGESTS`, so an edited file (ratings shifted, outcomes
changed, matches emptied) is refused (:class:`LadderError`, naming the file) rather than cited. A
rebuilt ladder gets a new ``version`` and its digest recorded here; the ratings are the fit of the
stored matches (``tests/agents/arena/test_ladder.py`` fits them again).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from agents.registry import SHIPPED_CHECKPOINTS

from . import rating
from .protocol import N_SEATS
from .results import spec_name
from .run import run_arena

SCHEMA = "mjenv.ladder/1"
ANCHOR, ANCHOR_RATING = "heuristic", 1000.0
"""Every ladder puts its game's heuristic at 1000."""
LADDER_SEED = 2026
"""The arena seed of the ladders' deals (never used in training)."""
DATA_DIR = Path(__file__).with_name("ladders")
DIGESTS = {
    "blood_battle-happy/v1": "73444dc312cb7a924e0ec7160882efcb3e8874e569a4cf9819b406cef88a6bae",
    "blood_battle-qq/v1": "452438b798042006cb1c9d731ab5f14cf2d3113edc2829bcf4bcdf180940e648",
    "blood_battle-qq-classic/v1": "35c95f017e2880a26bcddd151860e110bd94e388917d6b8c57080a5528a9c6c6",
    "joy_mahjong-popular/v1": "84e6585cbc58cba75516f001332f44e44b3a5a6ae5ae21d95356f9059e1d0f57",
    "joy_mahjong-eight_fan/v1": "62b55d0abbf06c55456998383e1f4c13df90f8be258373bb5c7971b91f7e4b26",
    "joy_mahjong-no_fan/v1": "f33ab74d9efc2ce7ba608f08baa7a318459fa10b4e424e9eb2efc1a078e14339",
}
"""The sha256 of every stored ladder file (line ends as LF), by ladder name: a changed file is refused."""
RATING_RANGE = (-10_000.0, 10_000.0)
"""Where every stored rating and interval end must lie (the heuristic is at 1000)."""


class LadderError(ValueError):
    """A stored ladder that cannot be read, is malformed, stale or changed; the message names the file."""


@dataclasses.dataclass(frozen=True)
class LadderSpec:
    """One ladder: a game configuration, its rungs (weakest first), and how they are matched."""

    key: str
    game: str
    options: tuple[tuple[str, str], ...]
    rungs: tuple[str, ...]
    deals: int
    """Deals (× 4 rotations) of every ordered pair's match."""
    version: int = 1
    seed: int = LADDER_SEED

    @property
    def env_options(self) -> dict[str, str]:
        return dict(self.options)

    @property
    def name(self) -> str:
        """The ladder and its version, e.g. ``blood_battle-happy/v1``: cite it with a rating."""
        return f"{self.key}/v{self.version}"

    @property
    def setting(self) -> str:
        """The configuration in words."""
        return f"{self.game} ({', '.join(f'{k} {v}' for k, v in self.options)})"


_BLOOD = ("random", "heuristic-novoid", "heuristic-greedy", "heuristic")
_JOY = ("random", "heuristic-greedy", "heuristic-nocalls", "heuristic")
LADDERS: dict[str, LadderSpec] = {spec.key: spec for spec in (
    LadderSpec("blood_battle-happy", "blood_battle", (("preset", "happy"),), _BLOOD + ("blood_battle_happy",), 1000),
    LadderSpec("blood_battle-qq", "blood_battle", (("preset", "qq"),), _BLOOD + ("blood_battle_qq",), 1000),
    LadderSpec("blood_battle-qq-classic", "blood_battle", (("preset", "qq"), ("mode", "classic")),
               _BLOOD + ("blood_battle_qq",), 1000),
    # joy_mahjong_popular plays level with the heuristic here (docs/baselines.md): no separate rung.
    LadderSpec("joy_mahjong-popular", "joy_mahjong", (("room", "popular"),), _JOY, 4000),
    # In the eight_fan room calling spoils the value a win needs: the variants without 碰 / 吃 play
    # above the heuristic. joy_mahjong_eight_fan plays level with heuristic-nocalls: no separate rung.
    LadderSpec("joy_mahjong-eight_fan", "joy_mahjong", (("room", "eight_fan"),),
               ("random", "heuristic", "heuristic-greedy", "heuristic-nocalls"), 4000),
    LadderSpec("joy_mahjong-no_fan", "joy_mahjong", (("room", "no_fan"),), _JOY, 4000),
)}
"""Every reference ladder by key (the game configurations that ship), rungs weakest first: the
current version of each."""
RETIRED: tuple[LadderSpec, ...] = ()
"""The older versions of ladders, still readable (``mjenv ladder --version N``); when a ladder gets a
new version in :data:`LADDERS`, its old spec moves here unchanged, and so does its digest's entry."""


def versions(key: str) -> list[LadderSpec]:
    """Every stored version of a ladder, oldest first (the last is :data:`LADDERS`' own)."""
    return sorted((s for s in (*RETIRED, *LADDERS.values()) if s.key == key), key=lambda s: s.version)


def version_of(spec: LadderSpec, version: int | None) -> LadderSpec:
    """The ladder ``spec`` at ``version`` (None: the current one); a ValueError naming its versions."""
    if version is None:
        return LADDERS[spec.key]
    for v in versions(spec.key):
        if v.version == version:
            return v
    known = ", ".join(f"v{v.version}" for v in versions(spec.key))
    raise ValueError(f"ladder {spec.key} has no version {version}; its versions: {known}")


LADDER_OPTIONS = {"blood_battle": {"preset": "happy", "mode": "blood"}, "joy_mahjong": {"room": "popular"}}
"""The options that choose a game's ladder, with their defaults."""


def ladder_for(game: str, env_options: dict[str, Any]) -> LadderSpec:
    """The ladder of a game configuration (``preset`` / ``mode`` of the blood battle, ``room`` of
    Joy Mahjong, defaults filled in); a ValueError for an unknown game or one without a ladder."""
    from mjenv import games

    games.game(game)  # a ValueError naming the games
    defaults = LADDER_OPTIONS[game]
    extra = sorted(set(env_options) - set(defaults))
    if extra:
        raise ValueError(f"a {game} ladder is chosen by {sorted(defaults)} only, not {extra}")
    chosen = {**defaults, **env_options}
    for spec in LADDERS.values():
        if spec.game == game and {**defaults, **spec.env_options} == chosen:
            return spec
    known = "; ".join(f"{s.key} ({', '.join(f'{k} {v}' for k, v in s.options)})"
                      for s in LADDERS.values() if s.game == game)
    raise ValueError(f"no reference ladder for {game} with {chosen}; the ladders of {game}: {known}")


def rung_spec(name: str) -> dict[str, Any]:
    """What identifies a rung: its name, its kind, and a network's checkpoint sha256."""
    if name == "random":
        return {"name": name, "kind": "random"}
    if name in SHIPPED_CHECKPOINTS:
        digest = hashlib.sha256(SHIPPED_CHECKPOINTS[name].read_bytes()).hexdigest()
        return {"name": name, "kind": "network", "checkpoint": f"agents/checkpoints/{name}.pt", "sha256": digest}
    return {"name": name, "kind": "heuristic"}


def play_match(spec: LadderSpec, candidate: Any, field: Any, deals: int, seed: int, workers: int,
               progress: bool = False) -> dict[str, Any]:
    """One 1-vs-3 duplicate match: ``candidate`` in one seat, three copies of ``field``; its record
    (a single deal has no beans interval: ``ci_low`` and ``ci_high`` None). ``progress``: a bar on stderr."""
    result = run_arena(game=spec.game, agents=[candidate, field], deals=deals, seed=seed, workers=workers,
                       env_options=spec.env_options, progress=progress,
                       desc=f"{spec_name(candidate)} vs 3 x {spec_name(field)}")
    per_set = result.per_set_means()
    stats = {k: None if isinstance(v, float) and not math.isfinite(v) else v
             for k, v in result.stats()[result.labels[0]].items()}
    outcomes = rating.deal_outcomes(per_set[0], per_set[1])
    return {"candidate": spec_name(candidate), "field": spec_name(field), "deals": deals, "hands": deals * N_SEATS,
            "outcomes": outcomes, "wins": outcomes.count(rating.WIN), "ties": outcomes.count(rating.TIE),
            "losses": outcomes.count(rating.LOSS), "mean_beans": stats["mean_beans"], "ci_low": stats["ci_low"],
            "ci_high": stats["ci_high"], "win_rate": stats["win_rate"], "deal_in_rate": stats["deal_in_rate"],
            "hand_wins": stats["wins"], "mean_fan": stats["mean_fan"], "elapsed_s": result.elapsed_s}


def pairings(rungs: Sequence[str]) -> list[tuple[str, str]]:
    """The (candidate, field) matches of a ladder: every ordered pair of rungs, so that each pair
    meets both ways (in a room of rare large wins the lone candidate loses most deals it does not
    win big, whoever it is; both directions cancel that)."""
    return [(a, b) for a in rungs for b in rungs if a != b]


def play_matches(spec: LadderSpec, rungs: Sequence[str], deals: int, workers: int = 1,
                 log: Any = None) -> list[dict[str, Any]]:
    """Every match of :func:`pairings`, each 1-vs-3 over ``deals`` deals of the ladder's seed."""
    matches = []
    for a, b in pairings(rungs):
        matches.append(play_match(spec, a, b, deals, spec.seed, workers))
        if log is not None:
            m = matches[-1]
            print(f"{spec.key}: {a} vs 3 x {b}: {m['mean_beans']:+.2f} beans/hand, W/T/L {m['wins']}/"
                  f"{m['ties']}/{m['losses']}, {m['elapsed_s']:.0f} s", file=log, flush=True)
    return matches


def score_matches(rungs: Sequence[str], matches: Sequence[dict[str, Any]]) -> list[rating.Match]:
    """The matches among ``rungs`` as (candidate index, field index, scores per deal)."""
    index = {name: i for i, name in enumerate(rungs)}
    return [(index[m["candidate"]], index[m["field"]], rating.outcome_array(m["outcomes"]))
            for m in matches if m["candidate"] in index and m["field"] in index]


def _pooled(matches: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Win and deal-in rates per hand and the mean fan of the wins, over a rung's candidate matches."""
    hands = sum(m["hands"] for m in matches)
    wins = sum(m["hand_wins"] for m in matches)
    fan = sum(m["mean_fan"] * m["hand_wins"] for m in matches if m["mean_fan"] is not None)
    return {"win_rate": wins / hands, "deal_in_rate": sum(m["deal_in_rate"] * m["hands"] for m in matches) / hands,
            "mean_fan": fan / wins if wins else None}


def _versus(matches: Sequence[dict[str, Any]], candidate: str, field: str) -> dict[str, float] | None:
    """The candidate's beans per hand against three copies of ``field``, with its interval."""
    for m in matches:
        if m["candidate"] == candidate and m["field"] == field:
            return {"mean_beans": m["mean_beans"], "ci_low": m["ci_low"], "ci_high": m["ci_high"]}
    return None


def summarize(spec: LadderSpec, matches: Sequence[dict[str, Any]], deals: int) -> dict[str, Any]:
    """The ladder file: rung specs, every match among the spec's rungs (others are left out, so a
    dropped rung needs no replay), the fitted ratings with bootstrap intervals, and each adjacent
    pair's gap with its interval."""
    from mjenv import __version__, games
    from mjenv.config import as_dict

    rungs = list(spec.rungs)
    kept = [m for m in matches if m["candidate"] in rungs and m["field"] in rungs]
    scored = score_matches(rungs, kept)
    anchor = rungs.index(ANCHOR)
    ratings, samples = rating.fit_ladder(len(rungs), scored, deals, anchor, ANCHOR_RATING, spec.seed)
    ci = rating.percentile_interval(samples)
    gaps = rating.percentile_interval(np.diff(samples, axis=1))
    raw = games.game(spec.game).raw_env(**spec.env_options)
    table = []
    for i, name in enumerate(rungs):
        own = [m for m in kept if m["candidate"] == name]
        table.append({**rung_spec(name), "rating": float(ratings[i]), "ci": [float(ci[0, i]), float(ci[1, i])],
                      "vs_random": _versus(kept, name, "random"), "vs_heuristic": _versus(kept, name, ANCHOR),
                      **_pooled(own)})
    return {
        "schema": SCHEMA, "ladder": spec.name, "key": spec.key, "version": spec.version,
        "mjenv_version": __version__, "game": spec.game, "env_options": spec.env_options,
        "rules": as_dict(raw.rules), "seed": spec.seed, "deals": deals, "hands_per_match": deals * N_SEATS,
        "hands": deals * N_SEATS * len(kept),
        "pairings": "every ordered pair of rungs (candidate in one seat, three of the field)",
        "rating_model": {"outcome": "per deal: the candidate's beans over its 4 hands against the mean field seat's",
                         "fit": "choix.ilsr_pairwise_dense (Bradley-Terry)", "prior_ties_per_match": rating.PRIOR_TIES,
                         "scale": "400 / ln 10 points per unit of log-strength", "anchor": {ANCHOR: ANCHOR_RATING},
                         "interval": "95% percentile bootstrap over deals", "bootstrap": rating.BOOTSTRAP,
                         "bootstrap_seed": spec.seed},
        "rungs": table,
        "gaps": [{"lower": rungs[i], "upper": rungs[i + 1], "difference": float(ratings[i + 1] - ratings[i]),
                  "ci": [float(gaps[0, i]), float(gaps[1, i])]} for i in range(len(rungs) - 1)],
        "matches": list(kept),
    }


def build(spec: LadderSpec, deals: int | None = None, workers: int = 1, log: Any = None) -> dict[str, Any]:
    """Play every match of a ladder and fit it (``deals``: fewer than the spec's for a quick check)."""
    deals = deals or spec.deals
    start = time.perf_counter()
    data = summarize(spec, play_matches(spec, spec.rungs, deals, workers, log), deals)
    data["elapsed_s"] = time.perf_counter() - start
    data["workers"] = workers
    return data


def file_name(key: str, version: int = 1) -> str:
    """The file name of a ladder's version: ``<key>.json`` for v1, ``<key>.vN.json`` after it."""
    return f"{key}.json" if version == 1 else f"{key}.v{version}.json"


def data_path(key: str, version: int = 1) -> Path:
    """The stored file of a ladder's version (:func:`file_name` in :data:`DATA_DIR`)."""
    return DATA_DIR / file_name(key, version)


def file_digest(raw: bytes) -> str:
    """The sha256 of a ladder file's bytes, line ends read as LF (a checkout may turn them into CRLF)."""
    return hashlib.sha256(raw.replace(b"\r\n", b"\n")).hexdigest()


def load(spec: LadderSpec) -> dict[str, Any]:
    """A stored ladder, verified (module docstring): well-formed, finite and in range, its rungs the
    spec's (version, rungs, checkpoints), its digest the recorded one; else a :class:`LadderError`."""
    path = data_path(spec.key, spec.version)
    try:
        raw = path.read_bytes()
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise LadderError(f"cannot read the stored ladder {path}: {reason}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or data.get("ladder") != spec.name:
        found = data.get("ladder") if isinstance(data, dict) else type(data).__name__
        raise LadderError(f"{path}: not the stored ladder {spec.name} (found {found!r})")
    problem = check_data(data)
    if problem:
        raise LadderError(f"{path}: malformed stored ladder: {problem}")
    # A retired version's networks may have new checkpoints since: its rungs are checked by name and kind.
    fields = ("name", "kind", "sha256") if LADDERS.get(spec.key) == spec else ("name", "kind")
    stored = [{k: r[k] for k in fields if k in r} for r in data["rungs"]]
    current = [{k: v for k, v in rung_spec(n).items() if k in fields} for n in spec.rungs]
    if stored != current:
        raise LadderError(f"{path}: its rungs {stored} are not the ladder's {current}: a changed rung needs a new "
                          f"ladder version and a rebuild (python -m agents.arena.ladder build {spec.key})")
    digest, recorded = file_digest(raw), DIGESTS.get(spec.name)
    if digest != recorded:
        raise LadderError(f"{path}: its sha256 {digest[:12]}… is not the one recorded for {spec.name} "
                          f"({'none' if recorded is None else recorded[:12] + '…'}): the file was changed; a rebuilt "
                          "ladder needs a new version and its digest in agents.arena.ladder.DIGESTS")
    return data


def _number(value: Any, low: float = -math.inf, high: float = math.inf) -> bool:
    """A finite int or float (not a bool) within [low, high]."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and low <= value <= high)


def _count(value: Any, high: float) -> bool:
    """An int (not a bool) within [0, high]."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= high


def _interval_problem(where: str, value: Any, low: Any, high: Any, bounds: tuple[float, float]) -> str | None:
    """``low <= value <= high``, all finite and within ``bounds``."""
    if not all(_number(x, *bounds) for x in (value, low, high)) or not low <= value <= high:
        return f"{where}: {value!r} in [{low!r}, {high!r}] is not a finite value within its interval"
    return None


def _match_problem(m: Any, deals: int) -> str | None:
    """What is wrong with one stored match (None: nothing)."""
    if not isinstance(m, dict) or not isinstance(m.get("candidate"), str) or not isinstance(m.get("field"), str):
        return f"a match is not a record of a candidate and a field: {str(m)[:80]}"
    name = f"match {m['candidate']} vs 3 x {m['field']}"
    outcomes, kinds = m.get("outcomes"), (rating.WIN, rating.TIE, rating.LOSS)
    if m.get("deals") != deals or m.get("hands") != deals * N_SEATS:
        return (f"{name}: deals {m.get('deals')!r} and hands {m.get('hands')!r} are not the ladder's {deals}, "
                f"{deals * N_SEATS}")
    if not isinstance(outcomes, str) or len(outcomes) != deals or set(outcomes) - set("".join(kinds)):
        return f"{name}: its outcomes are not {deals} of {'/'.join(kinds)}"
    counts = [m.get("wins"), m.get("ties"), m.get("losses")]
    if counts != [outcomes.count(x) for x in kinds]:
        return f"{name}: wins/ties/losses {counts} are not its outcomes' counts"
    beans = _interval_problem(f"{name}: mean_beans", m.get("mean_beans"), m.get("ci_low"), m.get("ci_high"),
                              (-1e12, 1e12))
    if beans:
        return beans
    if not (_number(m.get("win_rate"), 0, 1) and _number(m.get("deal_in_rate"), 0, 1)
            and _count(m.get("hand_wins"), 3 * m["hands"]) and _number(m.get("elapsed_s", 0), 0)
            and (m.get("mean_fan") is None or _number(m["mean_fan"], 0, 1e4))):
        return f"{name}: a rate, win count, mean fan or time is missing, not finite or out of range"
    return None


def check_data(data: dict[str, Any]) -> str | None:
    """What makes a stored ladder malformed (None: nothing): every field of its type, every number
    finite and in range (ratings within :data:`RATING_RANGE`, each within its interval, the anchor
    at :data:`ANCHOR_RATING`, rates in [0, 1]), each match's counts those of its outcomes, and the
    gaps the differences of the ratings."""
    deals, rungs, gaps, matches = (data.get(k) for k in ("deals", "rungs", "gaps", "matches"))
    if not _count(deals, 10**7) or deals < 1:
        return f"deals {deals!r} is not an int >= 1"
    if not isinstance(rungs, list) or not rungs or not all(isinstance(r, dict) and isinstance(r.get("name"), str)
                                                           for r in rungs):
        return "rungs is not a list of named rungs"
    for r in rungs:
        ci = r.get("ci")
        if not isinstance(ci, list) or len(ci) != 2:
            return f"rung {r['name']}: ci {ci!r} is not [low, high]"
        problem = _interval_problem(f"rung {r['name']}: rating", r.get("rating"), *ci, RATING_RANGE)
        if problem:
            return problem
        if r["name"] == ANCHOR and r["rating"] != ANCHOR_RATING:
            return f"rung {ANCHOR}: rating {r['rating']!r} is not the anchor {ANCHOR_RATING}"
        if not (_number(r.get("win_rate"), 0, 1) and _number(r.get("deal_in_rate"), 0, 1)
                and (r.get("mean_fan") is None or _number(r["mean_fan"], 0, 1e4))):
            return f"rung {r['name']}: a rate or mean fan is missing, not finite or out of range"
        for key in ("vs_random", "vs_heuristic"):
            v = r.get(key)
            if v is not None and (not isinstance(v, dict) or _interval_problem(
                    f"rung {r['name']}: {key}", v.get("mean_beans"), v.get("ci_low"), v.get("ci_high"), (-1e12, 1e12))):
                return f"rung {r['name']}: {key} {str(v)[:80]} is not a finite mean within its interval"
    if not isinstance(matches, list) or not matches:
        return "matches is not a list of matches"
    for m in matches:
        problem = _match_problem(m, deals)
        if problem:
            return problem
    if data.get("hands") != deals * N_SEATS * len(matches):
        return f"hands {data.get('hands')!r} is not {deals * N_SEATS} per match × {len(matches)} matches"
    if not isinstance(gaps, list) or len(gaps) != len(rungs) - 1:
        return "gaps is not one record per adjacent pair of rungs"
    for g, lower, upper in zip(gaps, rungs, rungs[1:]):
        if not isinstance(g, dict) or (g.get("lower"), g.get("upper")) != (lower["name"], upper["name"]):
            return f"a gap is not that of {lower['name']} and {upper['name']}"
        ci = g.get("ci")
        span = RATING_RANGE[1] - RATING_RANGE[0]
        if (not isinstance(ci, list) or len(ci) != 2 or not all(_number(x, -span, span) for x in ci)
                or not _number(g.get("difference"), -span, span)
                or not math.isclose(g["difference"], upper["rating"] - lower["rating"], rel_tol=1e-9, abs_tol=1e-6)):
            return f"gap {upper['name']} - {lower['name']}: {g.get('difference')!r} is not their ratings' difference"
    return None


def _interval(v: dict[str, float] | None) -> str:
    """``+1.23 [+0.50, +1.96]`` or a dash."""
    return "—" if v is None else f"{v['mean_beans']:+.2f} [{v['ci_low']:+.2f}, {v['ci_high']:+.2f}]"


COLUMNS = ("rung", "rating [95% CI]", "vs 3 × random", "vs 3 × heuristic", "win", "deal-in", "mean fan")
"""The columns of a ladder's table (:func:`table_rows`)."""


def setting_line(data: dict[str, Any]) -> str:
    """What a ladder was built from: ``(game, options): N matches × deals × 4 rotations, seed, mjenv``."""
    return (f"({data['game']}, {', '.join(f'{k} {v}' for k, v in data['env_options'].items())}): "
            f"{len(data['matches'])} matches × {data['deals']:,} deals × 4 rotations, seed {data['seed']}, "
            f"mjenv {data['mjenv_version']}")


def table_rows(data: dict[str, Any]) -> list[tuple[str, ...]]:
    """The cells of a ladder's table (:data:`COLUMNS`), strongest rung first, as plain text."""
    rows = []
    for r in reversed(data["rungs"]):
        anchor = r["name"] == ANCHOR
        rated = f"{r['rating']:.0f} (anchor)" if anchor else f"{r['rating']:.0f} [{r['ci'][0]:.0f}, {r['ci'][1]:.0f}]"
        fan = "—" if r["mean_fan"] is None else f"{r['mean_fan']:.2f}"
        rows.append((r["name"], rated, _interval(r["vs_random"]), _interval(r["vs_heuristic"]),
                     f"{r['win_rate']:.1%}", f"{r['deal_in_rate']:.1%}", fan))
    return rows


def gaps_line(data: dict[str, Any]) -> str:
    """The gaps between adjacent rungs with their intervals, strongest pair first."""
    gaps = ", ".join(f"{g['upper']} − {g['lower']} {g['difference']:.0f} [{g['ci'][0]:.0f}, {g['ci'][1]:.0f}]"
                     for g in reversed(data["gaps"]))
    return f"Gaps between adjacent rungs: {gaps}."


def format_table(data: dict[str, Any]) -> str:
    """The ladder as a Markdown table, strongest rung first."""
    lines = [f"**{data['ladder']}** {setting_line(data)}", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += [f"| `{name}` | " + " | ".join(cells) + " |" for name, *cells in table_rows(data)]
    lines += ["", gaps_line(data)]
    return "\n".join(lines)


def table_json(data: dict[str, Any]) -> dict[str, Any]:
    """The ladder table as JSON: the stored file without the per-deal outcomes."""
    out = {k: v for k, v in data.items() if k != "matches"}
    out["matches"] = [{k: v for k, v in m.items() if k != "outcomes"} for m in data["matches"]]
    return out


def check_bars(data: dict[str, Any]) -> list[str]:
    """What a stored ladder falls short of (empty when it meets every bar): ratings rise along the
    rungs, each adjacent gap's interval lies above zero, ``random`` is the bottom rung, and every
    match between adjacent rungs goes the way of their order in beans per hand."""
    rungs = data["rungs"]
    problems = []
    if rungs[0]["name"] != "random":
        problems.append(f"the bottom rung is {rungs[0]['name']}, not random")
    for g in data["gaps"]:
        if g["difference"] <= 0:
            problems.append(f"{g['upper']} is rated below {g['lower']} ({g['difference']:+.0f})")
        elif g["ci"][0] <= 0:
            problems.append(f"{g['upper']} - {g['lower']}: {g['difference']:+.0f}, interval "
                            f"[{g['ci'][0]:.0f}, {g['ci'][1]:.0f}] reaches zero")
        for m in data["matches"]:
            sign = {(g["upper"], g["lower"]): 1, (g["lower"], g["upper"]): -1}.get((m["candidate"], m["field"]))
            if sign is not None and sign * m["mean_beans"] <= 0:
                problems.append(f"{m['candidate']} vs 3 x {m['field']}: {m['mean_beans']:+.2f} beans/hand, "
                                f"against the rungs' order")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agents.arena.ladder build (KEY ... | --all)``: rebuild stored ladders."""
    parser = argparse.ArgumentParser(prog="python -m agents.arena.ladder",
                                     description="Rebuild the stored reference ladders: every match of the "
                                                 "rungs (1-vs-3 duplicate), then the rating fit.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("build", help="play and fit ladders, write their files")
    p.add_argument("keys", nargs="*", metavar="KEY", help=f"ladders to rebuild: {', '.join(LADDERS)}")
    p.add_argument("--all", action="store_true", help="every ladder")
    p.add_argument("--workers", type=int, default=1, help="arena processes (results do not depend on it)")
    p.add_argument("--deals", type=int, default=None, help="deals per match (default: each ladder's own)")
    p.add_argument("--out-dir", type=Path, default=DATA_DIR, help="where the files go (default: the package's)")
    args = parser.parse_args(argv)
    unknown = [k for k in args.keys if k not in LADDERS]
    if unknown:
        parser.error(f"unknown ladder(s) {unknown}; choose from {list(LADDERS)}")
    if bool(args.keys) == args.all:
        parser.error("name the ladders to build, or give --all")
    if args.deals is not None and args.deals < 2:
        parser.error("--deals must be >= 2")
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    from mjenv.outputs import OutputError, check_output, write_json

    keys = list(LADDERS) if args.all else args.keys
    # Each ladder's current version, in its own file: a v2 never overwrites the v1 beside it.
    paths = {key: args.out_dir / file_name(key, LADDERS[key].version) for key in keys}
    try:
        for path in paths.values():
            check_output(path)
    except OutputError as exc:
        parser.error(str(exc))
    for key, path in paths.items():
        data = build(LADDERS[key], args.deals, args.workers, log=sys.stderr)
        write_json(path, data)
        problems = check_bars(data)
        print(f"wrote {path} ({data['elapsed_s']:.0f} s)\n{format_table(data)}\n"
              + "".join(f"  bar not met: {p}\n" for p in problems)
              + f"  record its digest: DIGESTS[{data['ladder']!r}] = {file_digest(path.read_bytes())!r}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
