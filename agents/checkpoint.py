"""The checkpoint format of the neural policies and the trainer, in one place: what a file holds,
how it is written and every check made when it is read.

A checkpoint is a dict of ``state_dict`` tensors and plain values only, written atomically by
:func:`save_checkpoint` and read with ``torch.load(weights_only=True)``:

- ``format`` (:data:`CHECKPOINT_FORMAT`), ``arch`` (the network's shape: :data:`ARCH_BOUNDS`,
  :data:`ARCH_FLAGS`, ``game``) and ``model`` (its weights): every policy checkpoint (a trainer's,
  or ``python -m train.export``'s);
- ``encoder_version``, ``config`` and the counters (:data:`FIELDS`);
- what a trainer's run needs to continue (:data:`RESUME_KEYS`, :data:`RESUME_FIELDS`): the optimiser
  state, the opponent pool, the rollout request in flight, the imitation anchor;
- ``sha256``, a checksum of every tensor (:func:`tensor_checksum`), and ``sha256_all``, one of the
  whole dict, tensors and plain values (:func:`checkpoint_checksum`).

:func:`read_verified` turns every bad file into a :class:`CheckpointError` naming the file and the
reason: not a torch zip archive, not an mjenv checkpoint, a checksum that does not match (damaged
bytes). Then :func:`check_fields` (a plain field of the wrong type), :func:`check_arch` (unknown
keys or out of bounds, checked before anything is allocated), :func:`check_model` (weights that do
not fit the arch, or non-finite) and, to resume, :func:`check_resumable`. Checkpoints written
before a checksum existed still load: without ``sha256_all`` (the shipped ones) only the tensors are
checked against ``sha256``, and without ``sha256`` neither; the field types are checked in all.
``agents.neural.read_checkpoint`` runs the policy's checks; the trainer adds the resume checks.
"""

from __future__ import annotations

import hashlib
import pickle
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import torch

from mjenv.games import GAME_NAMES
from mjenv.outputs import atomic_write

CHECKPOINT_FORMAT = "mjenv.ppo/1"
ARCH_BOUNDS: dict[str, tuple[int, int]] = {"obs_planes": (1, 1024), "channels": (1, 512), "blocks": (1, 32),
                                            "state_planes": (0, 1024)}
"""Inclusive bounds of the integer ``arch`` fields: at the top, about 60 M parameters (240 MB) per trunk."""
ARCH_FLAGS = ("lookahead", "escape", "items")
"""The boolean ``arch`` fields (``game`` is the only other one)."""
CHECKSUM_KEY = "sha256"
"""The checksum of the tensors (:func:`tensor_checksum`)."""
FULL_CHECKSUM_KEY = "sha256_all"
"""The checksum of the whole checkpoint, tensors and plain values (:func:`checkpoint_checksum`)."""


class CheckpointError(ValueError):
    """A checkpoint file that cannot be read or is not an mjenv PPO checkpoint."""


def arch_bound_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is not allowed for the integer arch field ``name`` (see ARCH_BOUNDS); None if it is."""
    low, high = ARCH_BOUNDS[name]
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return None
    return f"{name} must be an int in [{low}, {high}], got {value!r}"


def named_tensors(node: Any, where: str = "") -> Iterator[tuple[str, torch.Tensor]]:
    """Every tensor in nested dicts (keys in sorted order) and lists, with its path."""
    if isinstance(node, torch.Tensor):
        yield where, node
    elif isinstance(node, dict):
        for key in sorted(node, key=str):
            yield from named_tensors(node[key], f"{where}/{key}")
    elif isinstance(node, (list, tuple)):
        for i, item in enumerate(node):
            yield from named_tensors(item, f"{where}/{i}")


def tensor_checksum(payload: dict[str, Any]) -> str:
    """SHA-256 over every tensor of a checkpoint dict (paths, dtypes, shapes, bytes), its own
    ``sha256`` excluded; the plain values are guarded by the pickle's own parsing."""
    digest = hashlib.sha256()
    for where, tensor in named_tensors({k: v for k, v in payload.items() if k != CHECKSUM_KEY}):
        flat = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{where}|{flat.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def _plain_lines(node: Any, where: str = "") -> Iterator[str]:
    """Every container and plain value in nested dicts and lists, one line each with its path and
    type (tensors are left to :func:`tensor_checksum`)."""
    if isinstance(node, torch.Tensor):
        return
    if isinstance(node, dict):
        yield f"{where}|{type(node).__name__}|{len(node)}"
        for key in sorted(node, key=repr):
            yield from _plain_lines(node[key], f"{where}/{key!r}")
    elif isinstance(node, (list, tuple)):
        yield f"{where}|{type(node).__name__}|{len(node)}"
        for i, item in enumerate(node):
            yield from _plain_lines(item, f"{where}/{i}")
    else:
        yield f"{where}|{type(node).__name__}|{node!r}"


def checkpoint_checksum(payload: dict[str, Any], tensors: str | None = None) -> str:
    """SHA-256 over a whole checkpoint dict: its tensors' checksum (``tensors``, computed when not
    given) and every plain value with its path and type; its own ``sha256_all`` excluded."""
    digest = hashlib.sha256((tensors or tensor_checksum(payload)).encode())
    for line in _plain_lines({k: v for k, v in payload.items() if k != FULL_CHECKSUM_KEY}):
        digest.update(line.encode() + b"\n")
    return digest.hexdigest()


def with_checksums(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with both checksums, as checkpoints are written."""
    out = {k: v for k, v in payload.items() if k not in (CHECKSUM_KEY, FULL_CHECKSUM_KEY)}
    out[CHECKSUM_KEY] = tensors = tensor_checksum(out)
    out[FULL_CHECKSUM_KEY] = checkpoint_checksum(out, tensors)
    return out


def is_count(v: Any) -> bool:
    """An int >= 0 (not a bool)."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def is_number(v: Any) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and bool(np.isfinite(v))


def is_tensors(v: Any) -> bool:
    """A mapping of names to tensors (a state dict)."""
    return isinstance(v, dict) and all(isinstance(x, torch.Tensor) for x in v.values())


FieldCheck = tuple[Callable[[Any], bool], str]

FIELDS: dict[str, FieldCheck] = {
    "encoder_version": (is_count, "an int >= 0"),
    "config": (lambda v: isinstance(v, dict), "a mapping of config fields"),
    "update": (is_count, "an int >= 0"),
    "global_step": (is_count, "an int >= 0"),
    "hands": (is_count, "an int >= 0"),
    "demonstrations": (is_count, "an int >= 0"),
    "elapsed_s": (lambda v: is_number(v) and v >= 0, "a number of seconds >= 0"),
}
"""The plain fields a policy checkpoint may have besides ``format``, ``arch`` and ``model``: (check, what)."""


def check_fields(path: Path, ckpt: dict[str, Any], fields: dict[str, FieldCheck]) -> None:
    """CheckpointError naming the file and the field unless each of ``fields`` that ``ckpt`` has passes its check."""
    for name, (check, what) in fields.items():
        if name in ckpt and not check(ckpt[name]):
            shown = repr(ckpt[name]) if not isinstance(ckpt[name], (dict, list, tuple)) else type(ckpt[name]).__name__
            raise CheckpointError(f"{path}: field {name!r} must be {what}, got {shown[:60]}")


def non_finite_tensors(tensors: dict[str, Any]) -> list[str]:
    """Names of the floating-point tensors of a state dict that hold NaN or infinity."""
    return [k for k, v in tensors.items()
            if isinstance(v, torch.Tensor) and v.is_floating_point() and not bool(torch.isfinite(v).all())]


def check_arch(path: Path, arch: Any) -> dict[str, Any]:
    """The checkpoint's ``arch`` with known keys, types and bounds (nothing allocated yet)."""
    if not isinstance(arch, dict):
        raise CheckpointError(f"{path}: 'arch' must be a mapping, got {type(arch).__name__}")
    # Checkpoints written before Joy Mahjong existed have no "game" in their arch: all are blood battle.
    # Those written before the escape option have no "escape", before items no "items": none has their logits.
    arch = {"game": "blood_battle", "escape": False, "items": False, **arch}
    known = (*ARCH_BOUNDS, *ARCH_FLAGS, "game")
    unknown = sorted(str(k) for k in arch if k not in known)
    missing = [k for k in known if k not in arch]
    if unknown or missing:
        raise CheckpointError(f"{path}: 'arch' must hold exactly {list(known)}; unknown {unknown}, missing {missing}")
    for name in ARCH_BOUNDS:
        problem = arch_bound_problem(name, arch[name])
        if problem:
            raise CheckpointError(f"{path}: arch {problem}")
    for name in ARCH_FLAGS:
        if not isinstance(arch[name], bool):
            raise CheckpointError(f"{path}: arch {name} must be true or false, got {arch[name]!r}")
    if arch["game"] not in GAME_NAMES:
        raise CheckpointError(f"{path}: arch game must be one of {sorted(GAME_NAMES)}, got {arch['game']!r}")
    if arch["items"] and arch["game"] != "blood_battle":  # S17 of docs/rules-blood-battle.md: blood battle only
        raise CheckpointError(f"{path}: arch items needs game blood_battle, got {arch['game']!r}")
    return arch


def check_model(path: Path, arch: dict[str, Any], model: Any, expected: dict[str, torch.Tensor]) -> None:
    """The weights are exactly ``expected``'s, those of a fresh network of ``arch`` (names, shapes,
    dtypes), and finite."""
    if not isinstance(model, dict) or not all(isinstance(v, torch.Tensor) for v in model.values()):
        raise CheckpointError(f"{path}: 'model' must be a mapping of tensors")
    missing, unexpected = sorted(set(expected) - set(model)), sorted(set(model) - set(expected))
    if missing or unexpected:
        raise CheckpointError(f"{path}: the weights do not fit its arch {arch}: missing {missing[:5]}, "
                              f"unexpected {unexpected[:5]}")
    for k, v in expected.items():
        if model[k].shape != v.shape or model[k].dtype != v.dtype:
            raise CheckpointError(f"{path}: weight {k} is {model[k].dtype} {tuple(model[k].shape)}, its arch "
                                  f"{arch} needs {v.dtype} {tuple(v.shape)}")
    bad = non_finite_tensors(model)
    if bad:
        raise CheckpointError(f"{path}: non-finite weights (NaN or infinity) in {bad[:5]}: "
                              "the training that wrote it diverged; use an earlier checkpoint")


def read_verified(path: str | Path, fmt: str = CHECKPOINT_FORMAT, kind: str = "PPO") -> dict[str, Any]:
    """A checkpoint dict of format ``fmt`` (an mjenv ``kind`` checkpoint: PPO, ...) with an ``arch``
    and a ``model``, read with ``weights_only=True`` and its checksums verified; the caller checks
    its fields, arch and weights. CheckpointError naming the file and the reason otherwise."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    if not zipfile.is_zipfile(path):  # torch.save writes a zip archive; text or a truncated file is not one
        raise CheckpointError(f"{path}: not a readable torch checkpoint (not the zip archive torch.save writes: "
                              "a truncated copy, or another kind of file)")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, OSError, EOFError, KeyError, IndexError, pickle.UnpicklingError) as exc:
        # What torch.load raises for a damaged zip (RuntimeError, OSError), a damaged pickle inside it,
        # or a pickle of something other than tensors and plain values.
        first_line = (str(exc).strip().splitlines() or [""])[0][:200]
        raise CheckpointError(
            f"{path}: not a readable torch checkpoint ({type(exc).__name__}: {first_line})") from exc
    if not isinstance(ckpt, dict) or ckpt.get("format") != fmt:
        found = ckpt.get("format") if isinstance(ckpt, dict) else type(ckpt).__name__
        raise CheckpointError(f"{path}: not an mjenv {kind} checkpoint (format {found!r}, expected {fmt!r})")
    missing = [k for k in ("arch", "model") if k not in ckpt]
    if missing:
        raise CheckpointError(f"{path}: checkpoint lacks {missing}")
    tensors = tensor_checksum(ckpt)
    if CHECKSUM_KEY in ckpt and ckpt[CHECKSUM_KEY] != tensors:
        raise CheckpointError(f"{path}: the tensors do not match the checkpoint's sha256 checksum: the file is "
                              "damaged; use another copy")
    if FULL_CHECKSUM_KEY in ckpt and ckpt[FULL_CHECKSUM_KEY] != checkpoint_checksum(ckpt, tensors):
        raise CheckpointError(f"{path}: the checkpoint's values do not match its sha256_all checksum: the file "
                              "is damaged or was edited; use another copy")
    return ckpt


RESUME_KEYS = ("optimizer", "pool", "update", "global_step", "hands", "demonstrations", "elapsed_s")
"""What a checkpoint needs besides the weights to continue its run."""


def _is_snapshots(v: Any, counters: tuple[str, ...] = ("id",), numbers: tuple[str, ...] = ()) -> bool:
    """A list of weight snapshots: dicts with tensors under ``weights``, ints >= 0 under ``counters``
    and finite numbers under ``numbers``."""
    return isinstance(v, list) and all(
        isinstance(s, dict) and is_tensors(s.get("weights")) and all(is_count(s.get(k)) for k in counters)
        and all(is_number(s.get(k)) for k in numbers) for s in v)


def _is_pool(v: Any) -> bool:
    """``OpponentPool.state_dict()``."""
    return (isinstance(v, dict) and is_count(v.get("next_id"))
            and _is_snapshots(v.get("snapshots"), ("id", "update"), ("games", "beats")))


def _is_request(v: Any) -> bool:
    """None or ``request_state()`` of a rollout request."""
    return v is None or (
        isinstance(v, dict) and is_count(v.get("update")) and is_tensors(v.get("weights"))
        and _is_snapshots(v.get("snapshots")) and isinstance(v.get("imitate", False), bool)
        and isinstance(v.get("pool"), list)
        and all(isinstance(p, (list, tuple)) and len(p) == 2 and is_count(p[0]) and is_number(p[1]) for p in v["pool"]))


RESUME_FIELDS: dict[str, FieldCheck] = {
    "optimizer": (lambda v: isinstance(v, dict) and isinstance(v.get("state"), dict)
                  and isinstance(v.get("param_groups"), list) and all(isinstance(g, dict) for g in v["param_groups"]),
                  "an optimiser state dict (state, param_groups)"),
    "pool": (_is_pool, "an opponent pool state (next_id, snapshots of id, update, games, beats, weights)"),
    "inflight": (_is_request, "null or a rollout request (update, weights, snapshots, pool, imitate)"),
    "anchor": (lambda v: v is None or is_tensors(v), "null or a mapping of tensors"),
}
"""The fields only a trainer checkpoint has (:data:`FIELDS` checks the others): (check, what)."""


def check_resumable(path: Path, ckpt: dict[str, Any], arch: dict[str, Any]) -> None:
    """CheckpointError naming the file unless the policy checkpoint ``ckpt`` (as :func:`read_verified`
    and the policy checks left it) can continue a run of network ``arch``: the trainer's fields, of
    their types, the same network, a finite optimiser state."""
    lacking = [k for k in RESUME_KEYS if k not in ckpt]
    if lacking:
        raise CheckpointError(f"{path}: lacks {lacking}, so it is not a trainer checkpoint "
                              "(python -m train.export keeps only the policy)")
    check_fields(path, ckpt, RESUME_FIELDS)
    if ckpt["arch"] != arch:
        raise CheckpointError(f"{path}: network {ckpt['arch']} differs from the config's {arch}; "
                              "resume with the run's own config.yaml")
    bad = non_finite_tensors(dict(named_tensors(ckpt["optimizer"])))
    if bad:
        raise CheckpointError(f"{path}: non-finite optimiser state in {bad[:3]}; use an earlier checkpoint")


def save_checkpoint(path: Path, payload: dict[str, Any]) -> None:
    """Write with its checksums (:func:`with_checksums`), atomically: a temporary file in
    the same folder, flushed, then renamed over ``path`` (``mjenv.outputs.atomic_write``)."""
    with atomic_write(path, "wb") as fh:
        torch.save(with_checksums(payload), fh)
