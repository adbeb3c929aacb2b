"""The ``mjenv`` command.

Each subcommand is one ``_add_<name>_parser(sub)`` function that adds its parser and sets
``func`` (the handler: ``args -> exit status``) and ``refuse`` (the exceptions that mean bad input:
:func:`main` reports them as every error is reported, :func:`_error`); list it in ``_SUBCOMMANDS``
to enable it. The game options (``--game``, ``--preset``, ``--room``, ``--mode``, ``--rule``) are
declared once, in the parent parsers ``_GAME``, ``_VARIANT``, ``_MODE`` and ``_RULE``.
Help texts cite rules by ID (docs/rules-blood-battle.md for S and B, docs/rules-joy-mahjong.md for J).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import unicodedata
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional, Sequence

from . import __version__, games
from .outputs import (OutputError, atomic_write, check_appendable, check_not_input, check_output, same_file,
                      write_json)
from .scoring import score


# ---------------------------------------------------------------- score


def _rule_arg(text: str) -> tuple[str, Any]:
    """``--rule key=value``: the value as bool (true/false), int, or else str."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    low = raw.strip().lower()
    if low in ("true", "false"):
        return key.strip(), low == "true"
    try:
        return key.strip(), int(raw)
    except ValueError:
        return key.strip(), raw.strip()


def _int_at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type=``: an int >= ``low``, every violation told with the same bound."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an int >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an int >= {low}, got {value}")
        return value

    parse.__name__ = f"int >= {low}"  # argparse names the type in some messages
    return parse


_non_negative_int = _int_at_least(0)
_positive_int = _int_at_least(1)
_TILE_STYLES = ("zh", "unicode")
_PRESETS = (*games.GAMES["blood_battle"].variants, games.GAMES["joy_mahjong"].preset)


def _options_parser() -> argparse.ArgumentParser:
    """A parent parser (``parents=[...]`` copies its options into a subcommand's)."""
    return argparse.ArgumentParser(add_help=False)


# The game options, declared once: each subcommand takes the parents it needs.
_GAME = _options_parser()
_GAME.add_argument("--game", default="blood_battle", choices=games.GAME_NAMES, help="game (default blood_battle)")
_VARIANT = _options_parser()
_VARIANT.add_argument("--preset", choices=_PRESETS,
                      help="blood_battle: rule preset, happy (default) or qq (joy_mahjong has one, standard, "
                           "its default; its tables differ by --room)")
_VARIANT.add_argument("--room", choices=games.GAMES["joy_mahjong"].variants,
                      help="joy_mahjong: room, popular (default), eight_fan or no_fan")
_MODE = _options_parser()
_MODE.add_argument("--mode", choices=("blood", "classic"), help="blood_battle: blood (default) or classic")
_RULE = _options_parser()
_RULE.add_argument("--rule", action="append", default=[], type=_rule_arg, metavar="KEY=VALUE",
                   help="rule field override, repeatable, e.g. cap_fan=8")


def _table_options(args: argparse.Namespace, names: Sequence[str] = ("preset", "mode", "room")) -> dict[str, Any]:
    """The table options given (``--rule`` fields, then those of ``names`` that were set): the rest
    stay the game's defaults, and each game refuses the ones it does not know."""
    options = dict(getattr(args, "rule", []))
    options.update({key: getattr(args, key) for key in names if getattr(args, key, None) is not None})
    return options


def _error(command: str, problem: object, status: int = 2) -> int:
    """Report bad input as every subcommand does: one line ``mjenv COMMAND: error: ...`` on stderr;
    the exit status (2: bad input). An OSError of an input file reads ``cannot read FILE: reason``."""
    message = _cannot_read(problem) if isinstance(problem, OSError) else problem
    print(f"mjenv {command}: error: {message}", file=sys.stderr)
    return status


def _cannot_read(exc: OSError) -> str:
    """An input file's OSError in words: ``cannot read FILE: No such file or directory``."""
    return f"cannot read {exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else str(exc)


def _output_file(text: str) -> str:
    """An argparse ``type=``: a file path that can be written (:func:`mjenv.outputs.check_output`),
    checked before any work is done."""
    try:
        check_output(text)
    except OutputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _log_file(text: str) -> str:
    """An argparse ``type=``: a replay log to append to (:func:`mjenv.outputs.check_appendable`)."""
    try:
        check_appendable(text)
    except OutputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _policy_files(specs: Sequence[Any]) -> list[str]:
    """The policy specs that are files (checkpoints): inputs an output must not overwrite."""
    return [str(s) for s in specs if isinstance(s, str) and Path(s).is_file()]


def _width(text: str) -> int:
    """Terminal columns of a string (CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    """Left-align ``text`` in ``width`` terminal columns."""
    return text + " " * max(0, width - _width(text))


def _score_table(result: Any, rules_text: str) -> str:
    """Readable fan table: Chinese name, English name, fan; then the totals."""
    # Joy fans carry a count (花牌 ×3, 幺九刻 ×2): shown as "1 x3".
    rows = [(f.name, f.name_en, str(f.fan) + (f" x{f.count}" if getattr(f, "count", 1) > 1 else ""))
            for f in result.fans]
    w0 = max(_width(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    lines = [rules_text]
    lines += [f"  {_pad(a, w0)}  {_pad(b, w1)}  {c:>2}" for a, b, c in rows]
    if hasattr(result, "substitution"):  # joy_mahjong: no cap, no multiplier; wildcards shown
        data = result.to_dict()
        subst = ", ".join(f"{w}->{t}" for w, t in data["substitution"]) or "none"
        lines.append(f"total fan {result.fan} ({result.fan_without_flowers} without flowers), "
                     f"X = {result.X}, shape {result.shape}, wildcards: {subst}")
        lines.append("X: the points each payer owes the winner before the bird and dealer doubling (J5), "
                     "paid as X · room_coefficient beans (B1)")
    else:
        lines.append(f"total fan {result.total_fan}, capped {result.capped_fan}, "
                     f"multiplier {result.multiplier}, X = {result.X}")
        lines.append("X: the points each payer owes the winner (a discard: the discarder; a self-draw: every "
                     "seat still in play), paid as X · room_coefficient beans (B1)")
    return "\n".join(lines)



def _run_score(args: argparse.Namespace) -> int:
    """Handler of ``mjenv score``."""
    # Only the options given are passed: each game rejects the ones it does not know.
    options = _table_options(args, ("preset", "void", "room", "wild", "flowers", "seat_wind", "prevailing_wind"))
    for key in ("first_turn", "dealer", "fourth_tile"):
        if getattr(args, key):
            options[key] = True
    result = score(game=args.game, hand=args.hand, win_tile=args.win_tile,
                   melds=tuple(args.meld), self_drawn=args.self_drawn,
                   after_kong=args.after_kong, rob_kong=args.rob_kong,
                   last_tile=args.last_tile, **options)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        melds = " ".join(args.meld)
        setting = args.room or args.preset or games.game(args.game).variants[0]
        head = (f"{args.game} ({setting}): {args.hand}{' + ' + melds if melds else ''}, "
                f"win {args.win_tile}")
        print(_score_table(result, head))
    return 0


def _add_score_parser(sub: Any) -> None:
    """``mjenv score``: a hand -> fans and points."""
    p = sub.add_parser("score", help="score a winning hand (fans and points)", parents=[_VARIANT, _RULE],
                       description="Score one winning hand. Exit status 2 on an invalid hand.")
    # Not _GAME: score checks the name itself, so that an unknown game is a handler error like a bad hand.
    p.add_argument("--game", default="blood_battle", metavar="{" + ",".join(games.GAME_NAMES) + "}",
                   help="game (default blood_battle)")
    p.add_argument("--hand", required=True,
                   help="concealed tiles including the winning tile, e.g. 11224444557799m")
    p.add_argument("--win-tile", required=True, help="the winning tile, e.g. 9m")
    p.add_argument("--meld", action="append", default=[], metavar="MELD",
                   help="declared meld, repeatable: chow:345m, pong:5p, kong:5p, addkong:5p, ankan:5p")
    p.add_argument("--self-drawn", action="store_true", help="won on one's own draw (自摸)")
    p.add_argument("--after-kong", action="store_true",
                   help="won on a kong replacement (杠上花) or the discard after a kong (杠上炮)")
    p.add_argument("--rob-kong", action="store_true", help="robbed an added kong (抢杠胡)")
    p.add_argument("--first-turn", action="store_true", help="天胡 with --dealer, else 地胡")
    p.add_argument("--last-tile", action="store_true", help="won on the last tile")
    p.add_argument("--dealer", action="store_true", help="the winner is the dealer")
    p.add_argument("--void", choices=("m", "p", "s"), help="the void suit (定缺)")
    joy_flags = p.add_argument_group("joy_mahjong")
    joy_flags.add_argument("--wild", metavar="TILE",
                           help="the wildcard 财神, e.g. 6m (J2); default none")
    joy_flags.add_argument("--flowers", type=int, help="flowers set aside (花牌, 1 fan each)")
    joy_flags.add_argument("--fourth-tile", action="store_true",
                           help="the other three copies of the winning tile are visible (和绝张)")
    joy_flags.add_argument("--seat-wind", choices=("E", "S", "W", "N"), help="seat wind (default E)")
    joy_flags.add_argument("--prevailing-wind", choices=("E", "S", "W", "N"),
                           help="prevailing wind (default E)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_run_score, refuse=(ValueError, TypeError))  # TypeError: a --rule of the wrong type


# ---------------------------------------------------------------- demo


def _run_demo(args: argparse.Namespace) -> int:
    """Handler of ``mjenv demo``."""
    from .demo import run_demo

    if args.game == "blood_battle" and args.room or args.game == "joy_mahjong" and args.preset:
        other = "--room" if args.room else "--preset"
        return _error("demo", f"{other} is not an option of {args.game} (blood_battle: --preset, joy_mahjong: --room)")
    print(run_demo(seed=args.seed, preset=args.preset or args.room, tile_style=args.tiles, every=args.every,
                   log_path=args.log, game=args.game))
    if args.log:
        print(f"appended the hand to {args.log}: mjenv view {args.log} draws it")
    return 0


def _add_demo_parser(sub: Any) -> None:
    from .demo import DEMO_SEEDS

    p = sub.add_parser("demo", help="play and render one seeded hand between random agents", parents=[_GAME, _VARIANT])
    p.add_argument("--seed", type=_non_negative_int, default=None,
                   help="seed of the wall and the agents (>= 0; default: a hand with a win, "
                        + ", ".join(f"{g} {s}" for g, s in DEMO_SEEDS.items()) + ")")
    p.add_argument("--tiles", default="zh", choices=_TILE_STYLES, help="tile style")
    p.add_argument("--every", type=_non_negative_int, default=0,
                   help="also render the table every N decisions (0: only at the end)")
    p.add_argument("--log", metavar="FILE", type=_log_file,
                   help="append the hand's replay log to FILE (for mjenv view)")
    p.set_defaults(func=_run_demo, refuse=(ValueError,))  # a preset of the other game


# ---------------------------------------------------------------- bench


def _run_bench(args: argparse.Namespace) -> int:
    """Handler of ``mjenv bench``."""
    from . import benchmark

    if args.vector:
        result = benchmark.run_vector(args.game, args.preset, args.tables, args.steps, args.repeats,
                                      args.decisions, memory=not args.no_memory,
                                      compile_times=not args.no_compile, progress=not args.no_progress)
    else:
        result = benchmark.run(args.game, args.preset, args.decisions, args.repeats, memory=not args.no_memory,
                               progress=not args.no_progress)
    text = benchmark.format_vector(result) if args.vector else benchmark.format_result(result)
    print(json.dumps(result, indent=2) if args.json else text)
    return 0


def _add_bench_parser(sub: Any) -> None:
    p = sub.add_parser("bench", help="decisions/s of the envs vs RLCard mahjong (extra 'bench')",
                       description="Random legal play, observation at every decision: median decisions/s "
                                   "of raw_env and env() and RLCard's mahjong, measured in the same run.",
                       parents=[_GAME])
    # One option for either game's variant (not _VARIANT): the benchmark's results name it "preset".
    p.add_argument("--preset", default=None,
                   help="blood_battle: the preset, happy (default) or qq; joy_mahjong: the room, "
                        "popular (default), eight_fan or no_fan")
    p.add_argument("--decisions", type=int, default=20000, help="decisions per repeat")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-memory", action="store_true", help="skip the memory figure")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (it goes to stderr)")
    p.add_argument("--vector", action="store_true",
                   help="the compiled batched engine (mjenv.vector): 1 and 2 threads, engine alone, "
                        "10,000-table memory, JIT start cold and cached; --decisions sets RLCard's")
    p.add_argument("--tables", type=int, default=1024, help="--vector: tables played in lockstep")
    p.add_argument("--steps", type=int, default=200, help="--vector: batched steps per repeat")
    p.add_argument("--no-compile", action="store_true", help="--vector: skip the JIT start figures")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_bench, refuse=(ValueError,))  # bad preset / room, decisions or repeats


# ---------------------------------------------------------------- eval


def _write_json(command: str, path: str, data: dict[str, Any]) -> int:
    """Write ``data`` as indented UTF-8 JSON, atomically, and say so; the exit status (1: the
    write failed although the path was checked, e.g. a full disk)."""
    try:
        write_json(path, data)
    except OSError as exc:
        return _error(command, f"cannot write {path}: {exc}", status=1)
    print(f"wrote {path}")
    return 0


def _write_outputs(command: str, args: argparse.Namespace, data: dict[str, Any], plot: Callable[[str], None]) -> int:
    """Write ``--out`` (``data`` as JSON) and ``--plot`` (with ``plot(path)``) where given; the exit status."""
    status = _write_json(command, args.out, data) if args.out else 0
    if args.plot:
        try:
            plot(args.plot)
        except OSError as exc:
            return _error(command, f"cannot write {args.plot}: {exc}", status=1)
        print(f"wrote {args.plot}")
    return status


def _check_outputs(args: argparse.Namespace, inputs: list[str], what: str) -> None:
    """--out and --plot (where given) overwrite none of ``inputs`` and are not one file: an OutputError."""
    for out in (args.out, args.plot):
        if out:
            check_not_input(out, inputs, what)
    if args.out and args.plot and same_file(args.out, args.plot):
        raise OutputError(f"--out and --plot name the same file {args.out}: give each its own path")


def _run_eval(args: argparse.Namespace) -> int:
    """Handler of ``mjenv eval``."""
    import importlib.util

    from agents.arena import run_arena  # lazily: mjenv never imports agents at module level

    if args.plot and importlib.util.find_spec("matplotlib") is None:  # fail before the run, not after
        return _error("eval", "--plot needs matplotlib: pip install 'mjenv[eval]'")
    # Outputs must not overwrite a policy checkpoint played, nor each other.
    _check_outputs(args, _policy_files(args.agents), "policy checkpoint")
    if args.engine is not None:  # run_arena maps it (and refuses a contradicting --backend)
        from agents.arena import ENGINES

        print(f"mjenv eval: --engine is deprecated (removed in mjenv 0.2): use --backend {ENGINES[args.engine]}",
              file=sys.stderr)
    result = run_arena(game=args.game, agents=args.agents, deals=args.deals, seed=args.seed,
                       workers=args.workers, env_options=_table_options(args), progress=not args.no_progress,
                       log_dir=args.log, backend=args.backend, engine=args.engine)
    print(result.format_table())
    if args.log:
        print(f"wrote {args.deals} replay log(s) to {args.log}/ (mjenv view {args.log}/deal_00000.jsonl)")
    return _write_outputs("eval", args, result.to_dict(), result.plot)


def _policy_help() -> str:
    """How a policy is named on the command line, with every built-in name."""
    from agents.registry import policy_names  # 10 ms; the policies themselves load on use

    return (f"a name ({', '.join(policy_names())}; ppo: the game's shipped trained policy), a checkpoint "
            "FILE.pt or module:Class")


def _add_eval_parser(sub: Any) -> None:
    """``mjenv eval``: duplicate-format arena between agents."""
    p = sub.add_parser("eval", help="duplicate arena: agents rotated over the same seeded deals",
                       description="Every deal is played 4 times with the agents rotated through the "
                                   "seats. Two agents: the first plays one seat, the second three (1-vs-3); "
                                   "four agents: cyclic rotations. Exit status 2 on bad arguments.",
                       parents=[_GAME, _VARIANT, _RULE])
    p.add_argument("--agents", nargs="+", default=["heuristic", "random"], metavar="AGENT",
                   help=f"2 or 4 policies (default: heuristic random), each {_policy_help()}")
    p.add_argument("--deals", type=int, default=100, help="duplicate sets: deals, each played 4 times")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and of every decision")
    p.add_argument("--workers", type=int, default=1, help="processes (results do not depend on it)")
    p.add_argument("--out", metavar="JSON", type=_output_file, help="write the results as JSON")
    p.add_argument("--plot", metavar="PNG", type=_output_file,
                   help="plot cumulative beans with 95%% confidence bands")
    p.add_argument("--log", metavar="DIR", help="write a replay log per deal into DIR (deal_00000.jsonl …) with "
                                                "every decision's legal actions and, for neural agents, their "
                                                "probabilities: view one with mjenv view")
    p.add_argument("--backend", choices=["compiled", "reference"], default=None,
                   help="the engine under the arena's batched env, every table of a worker in lockstep: compiled "
                        "(default) or reference, the readable engine (the default with --log, which needs it); "
                        "the results are the same")
    p.add_argument("--engine", choices=["vector", "aec"], default=None,
                   help="deprecated (removed in mjenv 0.2): vector is --backend compiled, aec --backend reference")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    # Bad game, agent, count, rule or output; TypeError: a --rule of the wrong type.
    p.set_defaults(func=_run_eval, refuse=(ValueError, TypeError))


# ---------------------------------------------------------------- compare


def _run_compare(args: argparse.Namespace) -> int:
    """Handler of ``mjenv compare``: 0 compared, 2 unreadable or unpaired results."""
    from agents.arena.compare import compare, load_result  # lazily: mjenv never imports agents at module level

    if args.out:
        check_not_input(args.out, [*args.base, *args.new], "results file")
    result = compare([load_result(f) for f in args.base], [load_result(f) for f in args.new])
    print(result.format())
    return _write_json("compare", args.out, result.to_dict()) if args.out else 0


def _add_compare_parser(sub: Any) -> None:
    """``mjenv compare``: paired difference of two agents from 1-vs-3 ``mjenv eval --out`` runs."""
    p = sub.add_parser("compare", help="paired per-deal difference of two agents from mjenv eval --out runs",
                       description="Each side: 1-vs-3 runs (mjenv eval --agents A OPPONENT --out F.json), one "
                                   "per seed. The two sides must cover the same seeds with the same game, "
                                   "rules and opponents; deals are paired one for one. Exit status 2 on "
                                   "results that do not pair.")
    p.add_argument("--base", nargs="+", required=True, metavar="JSON", help="the runs of the agent to beat")
    p.add_argument("--new", nargs="+", required=True, metavar="JSON", help="the runs of the challenger")
    p.add_argument("--out", metavar="JSON", type=_output_file, help="write the comparison as JSON")
    p.set_defaults(func=_run_compare, refuse=(OSError, ValueError))


# ---------------------------------------------------------------- rate and ladder


def _positive_float(text: str) -> float:
    """An argparse ``type=``: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def _run_rate(args: argparse.Namespace) -> int:
    """Handler of ``mjenv rate``."""
    import importlib.util

    from agents.arena import ladder, rate  # lazily: mjenv never imports agents at module level
    from agents.registry import load_policy

    if args.plot and importlib.util.find_spec("matplotlib") is None:  # fail before the run, not after
        return _error("rate", "--plot needs matplotlib: pip install 'mjenv[eval]'")
    rate.check_size(args.hands, args.budget_s)  # a run beyond reason is refused before any play
    spec = ladder.ladder_for(args.game, _table_options(args))
    ladder.load(spec)
    _check_outputs(args, [*_policy_files([args.agent]), str(ladder.data_path(spec.key, spec.version))], "input")
    load_policy(args.agent, args.game)
    seed = rate.RATE_SEED if args.seed is None else args.seed
    note = rate.hands_note(args.hands) if args.hands else None
    if note:
        print(f"mjenv rate: {note}", file=sys.stderr)
    deals = (rate.deals_for_budget(args.agent, spec, ladder.load(spec), args.budget_s, seed, args.workers)
             if args.budget_s else rate.hands_to_deals(args.hands or rate.DEFAULT_HANDS))
    warning = rate.too_few_deals(deals)
    if warning:
        print(f"mjenv rate: warning: {warning}", file=sys.stderr)
    result = rate.rate(args.agent, spec, deals, seed, args.workers, log=None if args.quiet else sys.stderr)
    print(rate.format_rating(result))
    return _write_outputs("rate", args, result, lambda path: rate.plot(result, path))


def _add_rate_parser(sub: Any) -> None:
    """``mjenv rate``: place a policy on its configuration's reference ladder."""
    p = sub.add_parser("rate", help="rate a policy on the reference ladder of its game configuration",
                       description="Play AGENT against every rung of the ladder both ways (in one seat against "
                                   "three copies of the rung, then in three seats against one; duplicate deals, 4 "
                                   "rotations each), fit its rating with the rungs' stored "
                                   "ratings fixed, and print it with its 95% interval, the rungs it lies between "
                                   "and its beans per hand against each rung (a progress bar per match on "
                                   "stderr). Ladders: mjenv ladder --all. Exit "
                                   "status 2 on bad arguments.", parents=[_GAME, _VARIANT, _MODE])
    p.add_argument("agent", metavar="AGENT", help="a policy name (mjenv eval's), a checkpoint .pt or module:Class")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--hands", type=_positive_int,
                      help="hands of each match, two matches per rung: the agent in one seat, then in three "
                           "(default 2000: 500 deals × 4 rotations; rounded up to whole deals; at least 40 "
                           "for an interval)")
    size.add_argument("--budget-s", type=_positive_float, metavar="S",
                      help="instead of --hands: as many deals as fit about S seconds in all (timed on two short runs)")
    p.add_argument("--seed", type=_non_negative_int, help="seed of the deals (default 4044, not the ladders' own)")
    p.add_argument("--workers", type=_positive_int, default=1, help="processes (results do not depend on it)")
    p.add_argument("--out", metavar="JSON", type=_output_file, help="write the rating and every match as JSON")
    p.add_argument("--plot", metavar="PNG", type=_output_file, help="plot the rating among the rungs (matplotlib)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no line per match on stderr")
    # Unknown agent or configuration, stale ladder, bad output.
    p.set_defaults(func=_run_rate, refuse=(ValueError, TypeError))


def _ladder_version(text: str) -> int:
    """An argparse ``type=``: a ladder version, ``2`` or ``v2``."""
    digits = text[1:] if text[:1] in ("v", "V") else text
    if not digits.isdigit() or int(digits) < 1:
        raise argparse.ArgumentTypeError(f"expected a ladder version such as 1 or v1, got {text!r}")
    return int(digits)


def _run_ladder(args: argparse.Namespace) -> int:
    """Handler of ``mjenv ladder``."""
    from agents.arena import ladder  # lazily: mjenv never imports agents at module level

    if args.all and _table_options(args):
        return _error("ladder", "--all prints every ladder: give it no --preset, --mode or --room")
    current = list(ladder.LADDERS.values()) if args.all else [ladder.ladder_for(args.game, _table_options(args))]
    if args.all and args.version is not None:  # the ladders that have that version
        specs = [v for s in current for v in ladder.versions(s.key) if v.version == args.version]
        if not specs:
            return _error("ladder", f"no ladder has a version {args.version}")
        missing = [s.key for s in current if s.key not in {v.key for v in specs}]
        if missing:
            print(f"mjenv ladder: no v{args.version} of {', '.join(missing)}: left out", file=sys.stderr)
    else:
        specs = [ladder.version_of(s, args.version) for s in current]
    stored = [ladder.data_path(s.key, s.version) for s in specs]
    for out in (args.json, args.html):
        if out:
            check_not_input(out, stored, "stored ladder")
    if args.json and args.html and same_file(args.json, args.html):
        raise OutputError(f"--json and --html name the same file {args.json}: give each its own path")
    tables = [ladder.load(s) for s in specs]
    print("\n\n".join(ladder.format_table(t) for t in tables))
    status = 0
    if args.json:
        data = ladder.table_json(tables[0]) if len(tables) == 1 else {"ladders": [ladder.table_json(t) for t in tables]}
        status = _write_json("ladder", args.json, data)
    if args.html:
        status = max(status, _write_html("ladder", args.html, tables))
    return status


def _write_html(command: str, path: str, tables: list[dict[str, Any]]) -> int:
    """Write the ladders' page, atomically, and say so; the exit status (1: the write failed
    although the path was checked)."""
    from agents.arena.ladder_html import render_page  # lazily: mjenv never imports agents at module level

    try:
        with atomic_write(path) as fh:
            fh.write(render_page(tables))
    except OSError as exc:
        return _error(command, f"cannot write {path}: {exc}", status=1)
    print(f"wrote {path}: {len(tables)} ladder(s), a table and a rating plot each; it opens offline in a browser")
    return 0


def _add_ladder_parser(sub: Any) -> None:
    """``mjenv ladder``: the stored reference ladder of a configuration."""
    p = sub.add_parser("ladder", help="print the reference ladder of a game configuration",
                       description="The stored reference ladder: every rung's rating (heuristic = 1000) with "
                                   "its 95% interval, its beans per hand against three random and three "
                                   "heuristic agents, and its win, deal-in and mean fan over its matches. "
                                   "Exit status 2 on bad arguments.", parents=[_GAME, _VARIANT, _MODE])
    p.add_argument("--all", action="store_true", help="every ladder")
    p.add_argument("--version", metavar="N", type=_ladder_version,
                   help="the ladder's version N (or vN; default: the current one); with --all, every ladder "
                        "that has that version")
    p.add_argument("--json", metavar="FILE", type=_output_file, help="also write the table as JSON")
    p.add_argument("--html", metavar="FILE", type=_output_file,
                   help="also write the ladders as one HTML page (a table and a rating plot each; opens offline)")
    p.set_defaults(func=_run_ladder, refuse=(OSError, ValueError))


# ---------------------------------------------------------------- replay


def _log_failed(command: str, exc: Any) -> int:
    """Report a :class:`~mjenv.replay.ReplayError`: 1 for a mismatch, 2 for a malformed log or a file
    that is no log at all."""
    from . import replay

    if isinstance(exc, replay.NotALogError):
        return _error(command, f"{exc.path} is {exc.detail}")
    what = "mismatch" if isinstance(exc, replay.ReplayMismatch) else "malformed log"
    print(f"mjenv {command}: {what} at line {exc.line}: {exc.detail}", file=sys.stderr)
    return 1 if isinstance(exc, replay.ReplayMismatch) else 2


def _run_replay(args: argparse.Namespace) -> int:
    """Handler of ``mjenv replay``: 0 verified, 1 mismatch, 2 malformed or unreadable log."""
    from . import narration, replay
    from .render import render_table

    def show(ll: Any, game: Any) -> None:
        """--render: one line per event and claim answer, the whole table at each hand's end."""
        rec = ll.record
        if rec["type"] != "action":
            text = narration.describe_event(rec, args.tiles, game=narration.game_of(game), wins=len(game.wins),
                                            escapes=sum(game.escaped))
        else:  # claim answers; other actions show as their events
            text = narration.describe_action(rec, game.layout)
        if text is not None:
            print(f"{ll.line:>6}  {text}")
        if rec["type"] == "end_hand":
            print(render_table(game, args.tiles))

    def failed(exc: Any) -> int:
        return _log_failed("replay", exc)

    try:
        hands = replay.read_log(args.file)
    except OSError as exc:  # missing or unreadable file
        return _error("replay", exc)
    except replay.ReplayError as exc:
        return failed(exc)
    try:
        result = replay.replay_hands(args.file, hands, on_line=show if args.render else None)
    except replay.ReplayError as exc:
        return failed(exc)
    print(result.summary())
    return 0


def _add_replay_parser(sub: Any) -> None:
    """``mjenv replay``: re-simulate and verify a JSON-lines game log."""
    p = sub.add_parser("replay", help="re-simulate a game log and check every event",
                       description="Re-simulate every hand of a JSON-lines log (env option log_path) "
                                   "and compare each line. Exit 0 verified, 1 mismatch, 2 malformed log.")
    p.add_argument("file", help="the log file")
    p.add_argument("--render", action="store_true", help="print the game turn by turn")
    p.add_argument("--tiles", default="zh", choices=_TILE_STYLES, help="tile style for --render")
    p.set_defaults(func=_run_replay)


# ---------------------------------------------------------------- view


def _run_view(args: argparse.Namespace) -> int:
    """Handler of ``mjenv view``: 0 written, 1 mismatch, 2 malformed or unreadable log or bad output."""
    from . import replay
    from .viewer import write_view

    out = args.out or _default_view_path(args.file)
    try:
        check_output(out)  # -o was checked by argparse; the default path is checked here
        check_not_input(out, [args.file], "log")
        done = write_view(args.file, out, args.hands)
    except OSError as exc:  # missing or unreadable log, or an output that failed after its check
        return _error("view", exc if exc.filename == args.file else str(exc))
    except replay.ReplayError as exc:
        return _log_failed("view", exc)
    except ValueError as exc:  # an output that is the log, too many hands, --hands not in the log
        return _error("view", exc)
    last = done.first + done.hands - 1
    which = "" if done.hands == done.log_hands else f" (hands {done.first}-{last} of {done.log_hands})"
    print(f"wrote {out}: {done.hands} hand(s){which}, {done.steps} steps; open it in a browser "
          f"(arrow keys step, t / 0-3 switch views)")
    return 0


def _default_view_path(log: str) -> str:
    """``game.jsonl`` -> ``game.html``."""
    stem = log[: -len(".jsonl")] if log.endswith(".jsonl") else log
    return stem + ".html"


def _hands_arg(text: str) -> tuple[int, int | None]:
    """An argparse ``type=``: ``--hands`` of ``mjenv view``."""
    from .viewer import parse_hands

    try:
        return parse_hands(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_view_parser(sub: Any) -> None:
    """``mjenv view``: a log as a self-contained HTML replay viewer."""
    from .viewer import MAX_HANDS, PAGE_KB_PER_HAND

    p = sub.add_parser("view", help="write a replay log as an offline HTML page to step through",
                       description="Verify a JSON-lines log (as mjenv replay does) and write one self-contained "
                                   "HTML file: the four hands, melds, rivers, wall, wins and payments at every "
                                   "step, arrow keys or a slider to step, the whole table or one seat's view. "
                                   f"A page takes about {PAGE_KB_PER_HAND} KB per hand; a log of more than "
                                   f"{MAX_HANDS} hands is refused unless --hands chooses the hands of the page "
                                   "(only those are re-simulated; the rest of the log is checked for format). "
                                   "The log is read one hand at a time, so memory does not grow with its size. "
                                   "Exit 0 written, 1 mismatch, 2 malformed log or bad output path.")
    p.add_argument("file", help="the log file (env option log_path, mjenv play --log, mjenv eval --log)")
    p.add_argument("-o", "--out", metavar="HTML", type=_output_file,
                   help="output file (default: the log's name with .html); never the log itself")
    p.add_argument("--hands", metavar="A:B", type=_hands_arg,
                   help=f"the hands of the page, counted from 1 in the log: N, A:B (inclusive), A: or :B "
                        f"(default: all, at most {MAX_HANDS})")
    p.set_defaults(func=_run_view)


# ---------------------------------------------------------------- play


def _run_play(args: argparse.Namespace) -> int:
    """Handler of ``mjenv play``."""
    from .play import run_play

    try:
        if args.log:
            check_not_input(args.log, _policy_files(args.opponents.split(",")), "policy checkpoint")
        run_play(seat=args.seat, opponents=args.opponents, preset=args.preset, seed=args.seed,
                 tile_style=args.tiles, log_path=args.log, game=args.game, **_table_options(args, ("mode", "room")))
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    return 0


def _add_play_parser(sub: Any) -> None:
    """``mjenv play``: a person plays one seat against agents."""
    p = sub.add_parser("play", help="play one seat in the terminal against agents",
                       description="Play one blood-battle or Joy Mahjong hand in the terminal. Enter an "
                                   "action's number; q or end of input quits. Exit status 2 on bad arguments.",
                       parents=[_GAME, _VARIANT, _MODE, _RULE])
    p.add_argument("--seat", type=int, default=0, choices=range(4), help="your seat 0-3 (default 0)")
    p.add_argument("--opponents", default="random",
                   help="policy for the other seats, or three comma-separated (random, heuristic)")
    p.add_argument("--seed", type=int, default=None, help="wall and opponents' seed (default random)")
    p.add_argument("--tiles", default="zh", choices=_TILE_STYLES, help="tile style")
    p.add_argument("--log", metavar="FILE", type=_log_file, help="append a replay log of the hand to FILE")
    # Unknown policy, bad rule option, a log that is a policy file.
    p.set_defaults(func=_run_play, refuse=(ValueError, TypeError))


# ---------------------------------------------------------------- warmup


def _run_warmup(args: argparse.Namespace) -> int:
    """Handler of ``mjenv warmup``."""
    import time

    from .warmup import cache_folders, warmup

    names = args.game or list(games.GAME_NAMES)
    print(f"compiling the batched engine and the compiled heuristics for {', '.join(names)} "
          "(a minute or two per game when nothing is cached; the games in parallel processes)",
          file=sys.stderr, flush=True)
    start = time.perf_counter()
    warmup(names, jobs=args.jobs)
    print(f"warm in {time.perf_counter() - start:.0f} s: later processes load the compiled code from "
          f"{' and '.join(dict.fromkeys(cache_folders()))}")
    return 0


def _add_warmup_parser(sub: Any) -> None:
    """``mjenv warmup``: fill numba's cache ahead of the runs that need it."""
    p = sub.add_parser("warmup", help="compile the batched engine now (for cluster nodes that start cold)",
                       description="Compile the batched engine, its encoders and the compiled heuristics of "
                                   "the games into numba's on-disk cache, so that later processes (cluster "
                                   "nodes sharing this install, a container built once) start in seconds "
                                   "instead of compiling for a minute or two each. Run it after installing "
                                   "or upgrading mjenv; an edited source drops the cache again.")
    p.add_argument("--game", action="append", choices=games.GAME_NAMES,
                   help="a game to compile, repeatable (default: both)")
    p.add_argument("--jobs", type=_positive_int, default=None,
                   help="processes compiling at once, one game each (default: one per core)")
    p.set_defaults(func=_run_warmup)


_SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (_add_score_parser, _add_demo_parser, _add_bench_parser,
                                                     _add_eval_parser, _add_compare_parser, _add_rate_parser,
                                                     _add_ladder_parser,
                                                     _add_replay_parser, _add_view_parser, _add_play_parser,
                                                     _add_warmup_parser)


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr and exit status 2, as every handler's
    own errors are (argparse would print the usage first: ``--help`` shows it)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``mjenv`` argument parser with every subcommand."""
    parser = _Parser(prog="mjenv", description="Chinese mahjong RL environments and tools.")
    parser.add_argument("--version", action="version", version=f"mjenv {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in _SUBCOMMANDS:
        add(sub)
    parser.set_defaults(refuse=())
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``mjenv`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        status = int(args.func(args))
        sys.stdout.flush()  # here, so that a closed pipe is met inside the try
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: end quietly, as `cat | head` does.
        # stdout is pointed at /dev/null so that the interpreter's own flush at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, a shell's status for a writer killed by a closed pipe
    except args.refuse as exc:  # the bad input a subcommand names in its defaults: one line, exit 2
        return _error(args.command, exc)
    return status
