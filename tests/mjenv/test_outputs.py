"""Output paths of the commands (mjenv/outputs.py): checked before the work, written atomically."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mjenv.outputs import (OutputError, atomic_write, check_appendable, check_not_input, check_output,
                           check_output_folder, same_file, write_json)


def _names(folder: Path) -> list[str]:
    """Every entry of a folder, hidden temporary files included."""
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("where, message", [
    ("missing/out.json", "folder .* does not exist; create it first"),
    (".", "is a folder"),
    ("/proc/out.json", "cannot write /proc/out.json"),  # a folder that takes no files, even for root
    ("/dev/null", "not a regular file"),  # replacing it would replace the device
])
def test_check_output_refuses_paths_that_cannot_take_the_file(tmp_path: Path, where: str, message: str) -> None:
    with pytest.raises(OutputError, match=message):
        check_output(tmp_path / where)
    assert _names(tmp_path) == []  # the probe file is gone, nothing made


def test_check_output_accepts_a_new_or_existing_file_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    assert check_output(tmp_path / "new.json") == tmp_path / "new.json"
    (tmp_path / "old.json").write_text("kept")
    check_output(tmp_path / "old.json")
    check_appendable(tmp_path / "old.json")
    assert _names(tmp_path) == ["old.json"] and (tmp_path / "old.json").read_text() == "kept"


def test_an_output_that_is_an_input_is_refused_by_path_hard_link_or_symbolic_link(tmp_path: Path) -> None:
    source = tmp_path / "log.jsonl"
    source.write_text("input")
    os.link(source, tmp_path / "hard.html")
    (tmp_path / "soft.html").symlink_to(source)
    for out in (source, tmp_path / "sub" / ".." / "log.jsonl", tmp_path / "hard.html", tmp_path / "soft.html"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(OutputError, match="is the same file as the log"):
            check_not_input(out, [tmp_path / "other", source], "log")
    check_not_input(tmp_path / "new.html", [source], "log")
    assert not same_file(tmp_path / "new.html", source)
    assert same_file(tmp_path / "a" / ".." / "new.html", tmp_path / "new.html")  # neither exists yet
    assert source.read_text() == "input"


def test_atomic_write_replaces_the_file_only_when_complete(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("old")
    with pytest.raises(ZeroDivisionError):
        with atomic_write(path) as fh:
            fh.write("half of the new")
            1 / 0
    assert path.read_text() == "old" and _names(tmp_path) == ["r.json"]  # no temporary file left
    write_json(path, {"beans": [1, 2], "名": "血战"})
    assert path.read_text(encoding="utf-8") == '{\n "beans": [\n  1,\n  2\n ],\n "名": "血战"\n}'
    assert _names(tmp_path) == ["r.json"]


def test_atomic_write_through_a_symbolic_link_writes_the_file_it_names(tmp_path: Path) -> None:
    (tmp_path / "real.png").write_bytes(b"old")
    (tmp_path / "link.png").symlink_to(tmp_path / "real.png")
    with atomic_write(tmp_path / "link.png", "wb") as fh:
        fh.write(b"new")
    assert (tmp_path / "link.png").is_symlink() and (tmp_path / "real.png").read_bytes() == b"new"


def test_check_output_folder_makes_the_folder_or_says_why_not(tmp_path: Path) -> None:
    assert check_output_folder(tmp_path / "a" / "b").is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="is a file"):
        check_output_folder(tmp_path / "file")
    with pytest.raises(OutputError, match="cannot create folder /proc/logs"):
        check_output_folder("/proc/logs")
    assert _names(tmp_path / "a" / "b") == []


def test_write_json_is_strict_json(tmp_path):
    """Issue 47 item 6: non-finite floats are written as null, never as NaN or Infinity tokens."""
    import json
    import math

    from mjenv.outputs import write_json

    path = tmp_path / "r.json"
    write_json(path, {"ci": [math.nan, math.inf], "nested": [{"x": -math.inf, "y": 1.5}], "t": (math.nan,)})

    def refuse(token):
        raise ValueError(token)

    assert json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse) == {
        "ci": [None, None], "nested": [{"x": None, "y": 1.5}], "t": [None]}
