"""Export the playing policy of a training checkpoint as a small file.

    python -m train.export runs/<run>/checkpoint.pt agents/checkpoints/blood_battle_happy.pt

A training checkpoint also holds the optimiser, the opponent pool and, with an oracle critic, a
second trunk; none of them is needed to play. The export keeps the policy weights, the
architecture, the config it was trained with and its counters, in the same format (so
``agents.load_policy(path)`` reads it, with ``torch.load(weights_only=True)``), with a fresh
checksums, written atomically. A source that ``agents.neural.read_checkpoint`` refuses (damaged,
weights that do not fit its architecture, non-finite weights), or a destination that cannot be
written (a folder, a missing or read-only folder) or that is the source itself (a hard or symbolic
link to it included), exits with status 2 and writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.checkpoint import save_checkpoint
from agents.neural import CheckpointError, read_checkpoint
from mjenv.outputs import OutputError, check_not_input, check_output


KEPT = ("format", "encoder_version", "config", "update", "global_step", "hands", "demonstrations", "elapsed_s")


def export_policy(src: str | Path, dst: str | Path) -> int:
    """Write the policy of checkpoint ``src`` to ``dst``; return the size of ``dst`` in bytes.
    Raises CheckpointError for a bad source, OutputError for a bad destination (nothing written)."""
    dst = check_output(dst)
    check_not_input(dst, [src], "checkpoint")
    ckpt = read_checkpoint(src)
    policy = {k: v for k, v in ckpt["model"].items() if not k.startswith("critic_trunk.")}
    out = {k: ckpt[k] for k in KEPT if k in ckpt}
    out.update(arch={**ckpt["arch"], "state_planes": 0}, model=policy)
    save_checkpoint(dst, out)
    return dst.stat().st_size


def main(argv: list[str] | None = None) -> int:
    """``python -m train.export SRC DST``; exit status 2 on an unreadable checkpoint or a bad destination."""
    parser = argparse.ArgumentParser(prog="python -m train.export", description=__doc__.splitlines()[0])
    parser.add_argument("src", help="a trainer checkpoint (runs/<run>/checkpoint.pt)")
    parser.add_argument("dst", help="where to write the policy-only checkpoint")
    args = parser.parse_args(argv)
    try:
        size = export_policy(args.src, args.dst)
    except (CheckpointError, OutputError) as exc:
        print(f"python -m train.export: error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.dst}: {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
