"""Output files of the commands: checked before the work starts, written atomically.

Every command that writes a file (``mjenv view -o``, ``mjenv eval --out/--plot``, ``mjenv compare
--out``, ``python -m train.export``, ...) first calls :func:`check_output` (the folder exists and a
file can be created in it, the path is not a folder or a device) and :func:`check_not_input` (the
output is none of the command's input files, hard links and symbolic links included), so that a
bad path fails in a second, before any work, and never destroys an input. Then it writes with
:func:`atomic_write`: a temporary file in the same folder, renamed over the path only once it is
complete, so that a failure leaves the old file (or no file) and no temporary file behind.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

PathLike = str | os.PathLike


class OutputError(ValueError):
    """An output path that cannot be written, or that would overwrite an input."""


def _temp_name(path: Path) -> Path:
    """A fresh hidden temporary file name next to ``path``."""
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")


def _target(path: PathLike) -> Path:
    """Where writing ``path`` lands: a symbolic link is followed to the file it names."""
    return Path(os.path.realpath(path))


def check_output(path: PathLike) -> Path:
    """Raise :class:`OutputError` unless a file can be written at ``path``; returns it as a Path.

    The path must not be a folder or anything but a regular file, its folder must exist, and a
    file must be creatable there (checked by creating and removing an empty temporary file)."""
    path = Path(path)
    target = _target(path)
    if target.is_dir():
        raise OutputError(f"{path} is a folder; give a file name in it")
    if target.exists() and not target.is_file():
        raise OutputError(f"{path} is not a regular file (a device or a pipe); give a file name")
    if not target.parent.is_dir():
        raise OutputError(f"folder {str(path.parent)!r} does not exist; create it first")
    _probe(target, path)
    return path


def _probe(target: Path, shown: PathLike) -> None:
    """Create and remove an empty temporary file next to ``target``: OutputError naming ``shown`` if
    that fails (a read-only folder, a file system that takes no files such as /proc)."""
    probe = _temp_name(target)
    try:
        with open(probe, "xb"):
            pass
        probe.unlink()
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {exc.strerror or exc} (in folder {str(target.parent)!r})") from None


def check_output_folder(path: PathLike) -> Path:
    """Create the folder ``path`` (and its parents) if it is missing; raise :class:`OutputError`
    unless it is a folder that files can be created in. Returns it as a Path."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{path} is a file; give a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create folder {path}: {exc.strerror or exc}") from None
    _probe(_target(path) / "probe", path)
    return path


def check_appendable(path: PathLike) -> Path:
    """Like :func:`check_output` for a file that is appended to: an existing one must also open
    for appending (opening it adds nothing)."""
    path = check_output(path)
    if path.exists():
        try:
            with open(path, "ab"):
                pass
        except OSError as exc:
            raise OutputError(f"cannot append to {path}: {exc.strerror or exc}") from None
    return path


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether two paths name the same file: the same existing file (hard links and symbolic
    links included) or, for paths not yet created, the same resolved path."""
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return _target(a) == _target(b)


def check_not_input(path: PathLike, inputs: Iterable[PathLike], what: str = "input") -> None:
    """Raise :class:`OutputError` if the output ``path`` is one of ``inputs`` (writing it would
    destroy that input)."""
    for source in inputs:
        if same_file(path, source):
            raise OutputError(f"output {path} is the same file as the {what} {source}; "
                              "writing it would destroy that file: choose another output path")


@contextmanager
def atomic_write(path: PathLike, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path`` for writing (``mode`` ``"w"``: UTF-8 text, ``"wb"``:
    bytes); when the block ends without an exception, flush it to disk and rename it over ``path``.
    On any failure the temporary file is removed and ``path`` is left as it was."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    target = _target(path)
    tmp = _temp_name(target)
    done = False
    try:
        with open(tmp, "x" + mode[1:], encoding="utf-8" if mode == "w" else None) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        done = True
    finally:
        if not done:
            tmp.unlink(missing_ok=True)


def strict_json(data: Any) -> Any:
    """``data`` with every float that is not finite (NaN, ±inf) as None: JSON has no such numbers,
    and ``json.dump`` would write the non-standard tokens ``NaN`` and ``Infinity``."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: strict_json(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [strict_json(v) for v in data]
    return data


def write_json(path: PathLike, data: Any) -> None:
    """Write ``data`` as indented UTF-8 JSON, atomically; strict JSON (:func:`strict_json`)."""
    with atomic_write(path) as fh:
        json.dump(strict_json(data), fh, ensure_ascii=False, indent=1, allow_nan=False)
