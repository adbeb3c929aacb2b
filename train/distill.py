"""Distil a one-step search that knows the other hands (an oracle teacher) into a trained policy
(the student, which sees only its observation), in either game.

    python -m train.distill --policy runs/happy_ppo.pt --preset happy --deals 2000 --seed 4242 \\
        --phases void,turn,claim --out runs/distill_happy
    python -m train.distill --policy agents/checkpoints/joy_mahjong_popular.pt --room popular \\
        --deals 500 --rollouts 16 --phases turn,claim --out runs/distill_joy

The policy's checkpoint names its game; ``--preset`` (blood battle: happy, qq) or ``--room`` (Joy
Mahjong: popular, eight_fan, no_fan) names the table. Two phases, both resumable (a finished
phase is not redone):

1. **Label.** The policy plays one seat against three of its game's heuristics on the arena's
   duplicate deals (``deal_seed(seed, d)``, four rotations); deals are split into blocks of
   ``--block`` and spread over ``--workers`` processes. At each of its decisions with a choice
   (not 胡) in the phases ``--phases`` names (``turn``: its own turn's discards and kongs, the
   default; ``claim``: 吃, 碰, 杠 or pass on another seat's discard; ``void``: 定缺, blood battle
   only), the teacher copies the table ``--rollouts`` times, redraws the live wall's order (the
   other hands stay true: ``known-hands`` worlds), and plays every legal action followed by four
   heuristics to the end of the hand (``agents/compiled/search.py``; Joy:
   ``agents/compiled/search_joy.py``). Each block is written as ``labels/block_<first deal>.npz``:
   the network's input planes (float16), the mask, each legal action's mean bean change ``q``
   (NaN where illegal), the same mean over the first half of the worlds ``q_half`` and the
   decision's phase (``PHASES``).
2. **Fit.** Cross-entropy towards ``softmax(log π₀ + q / tau)``: the policy π₀ tilted by the search
   values, the KL-regularised improvement of π₀ (small ``tau``: the search's best action). Blocks
   whose index is a multiple of 10 are held out. Writes ``checkpoint.pt`` (the policy format
   ``train.export`` writes, loadable with ``agents.load_policy``) and ``fit.json``.

``fit.json`` reports, on the held-out decisions (in all and by phase), each policy's **search regret**: the mean of
``max q − q[chosen action]`` in beans per decision. Differences between policies are unbiased
estimates of how many beans per decision the search prefers one to the other (the maximum itself is
inflated by noise, equally for both). It also reports the labels' **reliability**: how often the
two halves of each decision's worlds pick the same best action, and how well their values
correlate (``label_reliability``); low values mean noisy labels that want more ``--rollouts``.
The last step of the shipped blood-battle policies; what it gains, by phase, preset and game, is
in docs/experiments/2026-12-03-distillation.md.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import zipfile
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np
import torch

from agents.arena import deal_seed, lineup
from agents.checkpoint import save_checkpoint
from agents.neural import CheckpointError, NeuralPolicy, read_checkpoint
from mjenv import games
from mjenv.outputs import OutputError, check_not_input, check_output_folder, write_json

from .export import KEPT

HELD_OUT = 10
"""Every HELD_OUT-th block is held out of the fit."""
MINIBATCH = 512
LABEL_KEYS = ("policy_sha256", "game", "preset", "room", "seed", "rollouts", "block", "phases")
"""What a run's labels depend on, kept in ``labels/meta.json`` with the policy's path: a resumed run
must match them. The policy is named by its checkpoint's checksum, so another file at the same
path is refused and the same file at another path is not."""
PHASES = {"void": 0, "turn": 1, "claim": 2}
"""The decision phases the teacher can label, by the codes label rows record (the blood-battle
engine's ``VOID_PHASE``, ``TURN``, ``CLAIM``, so its rows from before Joy keep their meaning)."""
GAME_PHASES = {"blood_battle": ("void", "turn", "claim"), "joy_mahjong": ("turn", "claim")}
"""The phases each game has (Joy has no 定缺; its 抢杠 windows always offer 胡, which is not labelled)."""


class LabelError(ValueError):
    """A run folder whose labels are damaged or were made with other settings."""


class Teacher(NamedTuple):
    """A game's known-hands search and what the labelling loop needs of its engine."""

    heuristic: Any
    phase_names: dict[int, str]
    """The game's engine phase codes of the labelled phases, to their names."""
    hu: int
    n_actions: int
    values: Callable[[Any, int, np.ndarray, int], np.ndarray]
    """(arrays, table, legal actions, key) → bean changes (rollouts, len(legal))."""


def teacher(game: str, backend: Any, rollouts: int) -> Teacher:
    """The known-hands search of ``game`` over ``rollouts`` worlds, on ``backend``'s table."""
    if game == "joy_mahjong":
        from agents.compiled import search_joy
        from agents.registry import load_policy
        from mjenv.vector.engine import joy_mahjong as joy

        ctx, scratch = search_joy.context(backend), joy.new_state(joy.N_ACTIONS * rollouts)
        return Teacher(load_policy("heuristic", game=game), {joy.TURN: "turn", joy.CLAIM: "claim"}, joy.HU_A,
                       joy.N_ACTIONS, lambda arrays, t, legal, key: search_joy.action_values(
                           arrays, t, legal, rollouts, key, ctx, scratch))
    from agents.compiled import search
    from agents.heuristic import HeuristicPolicy
    from mjenv.vector.engine import blood_battle as eng

    ctx, scratch = search.context(backend), eng.new_state(eng.N_ACTIONS * rollouts)
    no_profile = np.zeros((search.MAX_DISCARDS, search.SHANTEN_COLS))
    return Teacher(HeuristicPolicy(rules=backend.rules),
                   {eng.VOID_PHASE: "void", eng.TURN: "turn", eng.CLAIM: "claim"}, eng.HU_A, eng.N_ACTIONS,
                   lambda arrays, t, legal, key: search.action_values(
                       arrays, t, legal, search.KNOWN_HANDS, rollouts, key, no_profile, ctx, scratch))


def label_block(policy: str, game: str, options: dict[str, str], seed: int, start: int, stop: int,
                rollouts: int, phases: tuple[str, ...] = ("turn",)) -> dict[str, np.ndarray]:
    """Deals ``[start, stop)`` × 4 rotations of ``policy`` against three heuristics at a ``game``
    table with ``options``, with the search values of each of the policy's decisions in ``phases``
    (module docstring)."""
    import mjenv.vector as mv

    torch.set_num_threads(1)
    n = 4 * (stop - start)
    deal, rotation = start + np.arange(n) // 4, np.arange(n) % 4
    student_at = np.array([lineup(2, r) for r in range(4)])[rotation] == 0
    venv = mv.make(game, n, copy=False, **options)
    arrays = venv.backend.arrays
    oracle = teacher(game, venv.backend, rollouts)
    student = NeuralPolicy.load(policy, rules=venv.backend.rules)
    obs, info = venv.reset(seed=[deal_seed(seed, int(d)) for d in deal])
    codes = np.array([c for c, name in oracle.phase_names.items() if name in phases])
    active, decisions = np.ones(n, dtype=np.bool_), np.zeros((n, len(PHASES)), dtype=np.int64)
    rows: dict[str, list[Any]] = {"x": [], "mask": [], "q": [], "q_half": [], "phase": []}
    while active.any():
        actions = oracle.heuristic.act_batch(obs["observation"], obs["action_mask"], None)
        mine = np.flatnonzero(active & student_at[np.arange(n), info["seat"]])
        if len(mine):
            actions[mine] = student.act_batch(obs["observation"][mine], obs["action_mask"][mine], None)
        for t in mine[np.isin(arrays.phase[mine], codes)]:
            legal = np.flatnonzero(arrays.mask[t])
            if len(legal) < 2 or arrays.mask[t, oracle.hu]:
                continue
            phase = PHASES[oracle.phase_names[int(arrays.phase[t])]]
            tag = "" if phase == PHASES["turn"] else f"{phase}:"  # own-turn keys as before phases existed
            key = zlib.crc32(f"{seed},{deal[t]},{rotation[t]},{tag}{decisions[t, phase]}".encode())
            decisions[t, phase] += 1
            q, q_half = np.full((2, oracle.n_actions), np.nan, np.float32)
            values = oracle.values(arrays, t, legal, key)
            q[legal], q_half[legal] = values.mean(axis=0), values[:rollouts // 2].mean(axis=0)
            rows["q"].append(q)
            rows["q_half"].append(q_half)
            rows["phase"].append(phase)
            rows["mask"].append(arrays.mask[t].astype(np.bool_))
            rows["x"].append(student.net.prepare(obs["observation"][t:t + 1])[0].astype(np.float16))
        obs, _, terminated, _, info = venv.step(actions, active=active)
        active &= ~terminated
    venv.close()
    if not rows["q"]:  # no choice in these phases in this block
        planes = student.net.prepare(obs["observation"][:1])[0].shape
        return {"x": np.zeros((0, *planes), np.float16), "mask": np.zeros((0, oracle.n_actions), np.bool_),
                "q": np.zeros((0, oracle.n_actions), np.float32), "q_half": np.zeros((0, oracle.n_actions), np.float32),
                "phase": np.zeros(0, np.int8)}
    return {k: np.array(v, dtype=np.int8) if k == "phase" else np.stack(v) for k, v in rows.items()}


def _label_job(args: tuple) -> tuple[int, dict[str, np.ndarray]]:
    """``label_block`` in a worker process, with the block's first deal."""
    return args[4], label_block(*args)


def label(a: argparse.Namespace, out: Path, policy_sha256: str | None) -> list[Path]:
    """Phase 1: write every missing block of labels; the blocks' paths in deal order."""
    from tqdm import tqdm

    folder = out / "labels"
    meta = {"policy": str(a.policy), "policy_sha256": policy_sha256, "game": a.game, "preset": a.preset,
            "room": a.room, "seed": a.seed, "rollouts": a.rollouts, "block": a.block, "phases": list(a.phases)}
    if (folder / "meta.json").exists():
        try:
            kept = json.loads((folder / "meta.json").read_text())
        except ValueError as exc:
            raise LabelError(f"{folder / 'meta.json'}: not readable JSON ({exc}); use another --out") from exc
        kept.setdefault("phases", ["turn"])  # labels from before --phases existed
        kept.setdefault("game", "blood_battle")  # or before Joy
        kept.setdefault("room", None)
        keys = LABEL_KEYS if "policy_sha256" in kept else ("policy", *LABEL_KEYS[1:])  # or before the checksum
        changed = sorted(k for k in keys if kept.get(k) != meta[k])
        if changed:
            raise LabelError(f"{folder} holds labels made with other settings ({', '.join(changed)}: "
                             f"{[kept.get(k) for k in changed]}); use another --out")
    else:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    starts = range(0, a.deals, a.block)
    path = {s: folder / f"block_{s:06d}.npz" for s in starts}
    table = games.game(a.game)
    options = table.variant_options(getattr(a, table.variant_option))
    jobs = [(str(a.policy), a.game, options, a.seed, s, min(s + a.block, a.deals), a.rollouts, tuple(a.phases))
            for s in starts if not path[s].exists()]
    # Spawned, as the arena's workers: a forked child would inherit torch's and numba's threads
    # (their locks may be held at the fork; Python 3.12 warns of it).
    spawn = multiprocessing.get_context("spawn")
    with (ProcessPoolExecutor(a.workers, mp_context=spawn) as pool,
          tqdm(total=len(starts), initial=len(starts) - len(jobs), unit="block", desc="search labels") as bar):
        for s, rows in pool.map(_label_job, jobs):
            tmp = path[s].with_name(path[s].name + ".tmp.npz")
            np.savez(tmp, **rows)
            tmp.replace(path[s])  # a block is there whole or not at all
            bar.update()
    return [path[s] for s in starts]


def read_labels(paths: list[Path]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The labels of every block, and each row's block index; ``q_half`` only when every block has
    it (labels from before it existed do not)."""
    parts, block = [], []
    for i, p in enumerate(paths):
        try:
            with np.load(p) as z:
                part = {k: z[k] for k in ("x", "mask", "q")}
                if "q_half" in z.files:
                    part["q_half"] = z["q_half"]
                part["phase"] = z["phase"] if "phase" in z.files else np.full(len(part["q"]), PHASES["turn"], np.int8)
                parts.append(part)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            raise LabelError(f"{p}: not a readable label block ({type(exc).__name__}); delete it to label it again") from exc
        block.append(np.full(len(parts[-1]["q"]), i))
    keys = ("x", "mask", "q", "phase") + (("q_half",) if all("q_half" in d for d in parts) else ())
    return {k: np.concatenate([d[k] for d in parts]) for k in keys}, np.concatenate(block)


def tilted_target(prior: torch.Tensor, q: np.ndarray, mask: torch.Tensor, tau: float) -> torch.Tensor:
    """``softmax(log π₀ + q / tau)`` over the legal actions (0 elsewhere); ``prior``: log π₀."""
    tilt = torch.from_numpy(np.nan_to_num(q, nan=0.0)) / tau
    return torch.softmax((prior.clamp(min=-30) + tilt).masked_fill(~mask, -torch.inf), dim=1)


def search_regret(net: Any, x: torch.Tensor, mask: torch.Tensor, q: np.ndarray) -> float:
    """Mean of ``max q − q[greedy action]`` over the rows: beans per decision the search prefers."""
    with torch.no_grad():
        act = torch.cat([net.logits(x[i:i + 4096].float(), mask[i:i + 4096]).argmax(1)
                         for i in range(0, len(x), 4096)]).numpy()
    qf = np.where(np.isnan(q), -np.inf, q)
    return float(np.mean(qf.max(axis=1) - qf[np.arange(len(q)), act]))


def held_out_regrets(net: Any, x: torch.Tensor, mask: torch.Tensor, q: np.ndarray, phase: np.ndarray) -> dict[str, float]:
    """``search_regret`` over all the rows (``"all"``) and over each phase's rows."""
    regrets = {"all": search_regret(net, x, mask, q)}
    for name, code in PHASES.items():
        rows = np.flatnonzero(phase == code)
        if len(rows):
            regrets[name] = search_regret(net, x[rows], mask[rows], q[rows])
    return regrets


def label_reliability(q: np.ndarray, q_half: np.ndarray, rollouts: int) -> dict[str, float]:
    """How far two independent halves of each decision's rollouts agree: the share of decisions
    whose best action is the same in both, and the median correlation of their action values. Low
    values say the labels are mostly noise and want more ``--rollouts``."""
    first = rollouts // 2
    second = (rollouts * q - first * q_half) / (rollouts - first)
    a, b = (np.where(np.isnan(v), -np.inf, v) for v in (q_half, second))
    same = float(np.mean(a.argmax(axis=1) == b.argmax(axis=1)))
    corr = []
    for x, y in zip(q_half, second):
        x, y = x[~np.isnan(x)], y[~np.isnan(y)]
        if x.std() > 0 and y.std() > 0:
            corr.append(np.corrcoef(x, y)[0, 1])
    return {"best_action_agreement": same, "value_correlation": float(np.median(corr)) if corr else float("nan")}


def fit(a: argparse.Namespace, ckpt: dict[str, Any], paths: list[Path], out: Path) -> dict[str, Any]:
    """Phase 2: fine-tune the policy on the labels; write ``checkpoint.pt``; the held-out report."""
    from agents.neural import net_from_checkpoint

    data, block = read_labels(paths)
    x, mask = torch.from_numpy(data["x"]), torch.from_numpy(data["mask"])
    q = data["q"]
    held = np.flatnonzero(block % HELD_OUT == 0)
    train_rows = np.flatnonzero(block % HELD_OUT != 0)
    net = net_from_checkpoint(ckpt)
    with torch.no_grad():
        prior = torch.cat([torch.log_softmax(net.logits(x[i:i + 4096].float(), mask[i:i + 4096]), 1)
                           for i in range(0, len(x), 4096)])
    target = tilted_target(prior, q, mask, a.tau)
    phase = data["phase"]
    report: dict[str, Any] = {"decisions": len(q), "held_out": len(held),
                              "decisions_by_phase": {k: int((phase == c).sum()) for k, c in PHASES.items()}}
    if "q_half" in data:
        report["label_reliability"] = label_reliability(q, data["q_half"], a.rollouts)
    before = held_out_regrets(net, x[held], mask[held], q[held], phase[held])
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    optimizer = torch.optim.Adam(net.parameters(), lr=a.lr)
    net.train()
    for _epoch in range(a.epochs):
        order = torch.from_numpy(rng.permutation(train_rows))
        for mb in torch.split(order, MINIBATCH):
            logp = torch.log_softmax(net.logits(x[mb].float(), mask[mb]), dim=1)
            loss = -(target[mb] * logp.masked_fill(~mask[mb], 0.0)).sum(dim=1).mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            optimizer.step()
    net.eval()
    after = held_out_regrets(net, x[held], mask[held], q[held], phase[held])
    report.update(regret_before=before.pop("all"), regret_after=after.pop("all"),
                  regret_by_phase={k: {"before": before[k], "after": after[k]} for k in before})
    payload = {k: ckpt[k] for k in KEPT if k in ckpt}
    payload.update(arch=ckpt["arch"], model=net.state_dict(),
                   distill={"policy": str(a.policy), "game": a.game, "preset": a.preset, "room": a.room,
                            "deals": a.deals, "seed": a.seed,
                            "rollouts": a.rollouts, "phases": list(a.phases), "tau": a.tau, "lr": a.lr, "epochs": a.epochs})
    save_checkpoint(out / "checkpoint.pt", payload)
    return report


def _phases(text: str) -> tuple[str, ...]:
    """``--phases``: known phase names, each once, in PHASES order."""
    names = [t.strip() for t in text.split(",")]
    unknown = [t for t in names if t not in PHASES]
    if unknown or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"{text!r}: give distinct names among {', '.join(PHASES)}")
    return tuple(k for k in PHASES if k in names)


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m train.distill``."""
    p = argparse.ArgumentParser(prog="python -m train.distill", description=" ".join(__doc__.splitlines()[:2]))
    p.add_argument("--policy", required=True, help="a policy checkpoint (.pt) of either game to fine-tune")
    for table in games.GAMES.values():  # --preset (blood battle), --room (Joy Mahjong)
        p.add_argument(f"--{table.variant_option}", choices=table.variants,
                       help=f"{table.title}: the {table.variant_option} (default {table.variants[0]})")
    p.add_argument("--deals", type=int, default=2000, help="deals labelled, each in four rotations")
    p.add_argument("--seed", type=int, default=4242, help="deal seeds deal_seed(seed, d); keep off evaluation seeds")
    p.add_argument("--rollouts", type=int, default=32, help="worlds per searched decision")
    p.add_argument("--phases", type=_phases, default=("turn",),
                   help="comma-separated decision phases the teacher labels: turn (default), claim, "
                        "void (blood battle only)")
    p.add_argument("--block", type=int, default=20, help="deals per label file")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--tau", type=float, default=1.0, help="beans: how far the search values tilt the policy")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--out", required=True, help="the run folder (labels/, checkpoint.pt, fit.json)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Label, then fit; exit status 2 on bad arguments, an unreadable policy or labels of other settings."""
    parser = build_parser()
    a = parser.parse_args(argv)
    for name in ("deals", "rollouts", "block", "workers", "epochs"):
        if getattr(a, name) < (2 if name == "rollouts" else 1):
            parser.error(f"--{name} must be at least {2 if name == 'rollouts' else 1}")
    if a.deals <= a.block:
        parser.error("--deals must exceed --block: the first block is held out of the fit")
    if not a.tau > 0 or not a.lr > 0:
        parser.error("--tau and --lr must be positive")
    try:
        ckpt = read_checkpoint(a.policy)
    except CheckpointError as exc:
        print(f"train.distill: error: {exc}", file=sys.stderr)
        return 2
    a.game = ckpt["arch"]["game"]
    table = games.game(a.game)
    for other in {g.variant_option for g in games.GAMES.values()} - {table.variant_option}:
        if getattr(a, other) is not None:
            parser.error(f"--{other} does not apply to {a.policy}, a {a.game} policy: use --{table.variant_option}")
    setattr(a, table.variant_option, getattr(a, table.variant_option) or table.variants[0])
    missing = [p for p in a.phases if p not in GAME_PHASES[a.game]]
    if missing:
        parser.error(f"--phases {','.join(missing)}: {a.game} has only {', '.join(GAME_PHASES[a.game])}")
    out = Path(a.out)
    try:
        # Before hours of labelling: the folder takes files, and its checkpoint is not the policy.
        check_not_input(out / "checkpoint.pt", [a.policy], "policy (--policy)")
        check_output_folder(out)
    except OutputError as exc:
        print(f"train.distill: error: {exc}", file=sys.stderr)
        return 2
    try:
        report = fit(a, ckpt, label(a, out, ckpt.get("sha256")), out)
    except LabelError as exc:
        print(f"train.distill: error: {exc}", file=sys.stderr)
        return 2
    write_json(out / "fit.json", report)
    print(f"{report['decisions']} decisions labelled; held-out search regret {report['regret_before']:.3f} → "
          f"{report['regret_after']:.3f} beans/decision; wrote {out / 'checkpoint.pt'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
