"""Issue 47 items 3, 5, 6 and issue 51's ``mjenv rate`` points: stored ladders verified as data
(digest, finite numbers in range, refused with exit 2 naming the file), every error of ``rate`` and
``ladder`` one line with exit 2, strict JSON and no interval from too few deals, the headline
"between X and Y", hands rounded up visibly, a progress bar per match."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

import pytest

from agents.arena import ladder, rate
from mjenv.cli import main

KEY = "joy_mahjong-no_fan"  # no network rung: the quickest ladder to rate against
SPEC = ladder.LADDERS[KEY]


def _shift_ratings(d: dict) -> None:
    for r in d["rungs"]:
        r["rating"] += 500
        r["ci"] = [r["ci"][0] + 500, r["ci"][1] + 500]


def _flip_outcomes(d: dict) -> None:
    m = d["matches"][0]
    w, l_ = m["outcomes"].index("W"), m["outcomes"].index("L")
    chars = list(m["outcomes"])
    chars[w], chars[l_] = "L", "W"  # the counts stay the same: only the digest can tell
    m["outcomes"] = "".join(chars)


EDITS: dict[str, tuple[Callable[[dict], Any], str]] = {
    "ratings+500": (_shift_ratings, "rating"),  # the anchor moves: malformed
    "ratings+500-anchor-kept": (lambda d: [r.__setitem__("rating", r["rating"] + (r["name"] != "heuristic") * 1e-9)
                                           for r in d["rungs"]], "sha256"),
    "nan-rating": (lambda d: d["rungs"][0].__setitem__("rating", math.nan), "not a finite value"),
    "string-rating": (lambda d: d["rungs"][0].__setitem__("rating", "430"), "not a finite value"),
    "flipped-outcomes": (_flip_outcomes, "sha256"),
    "emptied-matches": (lambda d: d.__setitem__("matches", []), "matches is not a list"),
    "counts": (lambda d: d["matches"][0].__setitem__("wins", d["matches"][0]["wins"] + 1), "wins/ties/losses"),
    "missing-key": (lambda d: d.pop("rungs"), "rungs is not a list"),
    "win-rate": (lambda d: d["rungs"][1].__setitem__("win_rate", 1.5), "out of range"),
}


def _store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str | None) -> Path:
    """The ladder folder moved to tmp_path, its KEY file replaced by ``content`` (None: a folder)."""
    monkeypatch.setattr(ladder, "DATA_DIR", tmp_path)
    path = tmp_path / f"{KEY}.json"
    if content is None:
        path.mkdir()
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _stored() -> dict:
    return json.loads(ladder.data_path(KEY).read_text(encoding="utf-8"))


def test_every_ladder_has_its_digest_recorded() -> None:
    assert set(ladder.DIGESTS) == {spec.name for spec in ladder.LADDERS.values()}
    for spec in ladder.LADDERS.values():
        assert ladder.file_digest(ladder.data_path(spec.key).read_bytes()) == ladder.DIGESTS[spec.name]
        assert ladder.check_data(ladder.load(spec)) is None


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_stored_ladder_is_refused_naming_the_file(tmp_path, monkeypatch, capsys, edit) -> None:
    data = _stored()
    change, message = EDITS[edit]
    change(data)
    path = _store(tmp_path, monkeypatch, json.dumps(data, indent=1))
    with pytest.raises(ladder.LadderError, match=message):
        ladder.load(SPEC)
    for argv in (["ladder", "--game", "joy_mahjong", "--room", "no_fan"],
                 ["rate", "random", "--game", "joy_mahjong", "--room", "no_fan", "--quiet"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert str(path) in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("content", [None, "[]", "{", '{"schema": "mjenv.ladder/1"}'],
                         ids=["folder", "list", "bad-json", "no-ladder"])
def test_an_unreadable_ladder_exits_2_in_one_line(tmp_path, monkeypatch, capsys, content) -> None:
    path = _store(tmp_path, monkeypatch, content)
    for argv in (["ladder", "--game", "joy_mahjong", "--room", "no_fan"],
                 ["rate", "random", "--game", "joy_mahjong", "--room", "no_fan"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert str(path) in err and len(err.strip().splitlines()) == 1


def test_a_missing_ladder_exits_2(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(ladder, "DATA_DIR", tmp_path)
    assert main(["rate", "random", "--game", "joy_mahjong", "--room", "no_fan"]) == 2
    assert "cannot read the stored ladder" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [(["--budget-s", "1e308"], "--budget-s must be"),
                                           (["--hands", str(10**12)], "--hands must be between")])
def test_a_run_beyond_reason_is_refused_up_front(capsys, argv, message) -> None:
    assert main(["rate", "random", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_too_few_deals_strict_json_no_interval_and_the_hands_note(tmp_path, capsys) -> None:
    out = tmp_path / "f.json"
    assert main(["rate", "agents.base:RandomPolicy", "--game", "joy_mahjong", "--room", "no_fan", "--hands", "7",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()

    def refuse(token: str) -> None:
        raise ValueError(f"not strict JSON: {token}")

    result = json.loads(out.read_text(encoding="utf-8"), parse_constant=refuse)
    assert result["deals"] == 2 and result["ci"] is None and "too few" in result["interval"]
    assert "7 hands -> 8 (2 deals of 4 rotations)" in captured.err
    assert "too few to bootstrap" in captured.err and "--hands 40" in captured.err
    assert "(no interval: too few deals)" in captured.out and "[95% CI]" in captured.out
    assert "vs 3 x heuristic" in captured.err and "deal/s" in captured.err  # a progress bar per match


def test_the_headline_says_between_which_rungs() -> None:
    rungs = [{"name": n, "rating": r} for n, r in (("random", 39.0), ("heuristic-novoid", 754.0), ("heuristic", 1000.0))]
    result = {"agent": "mine", "rungs": rungs, "nearest": {"below": "random", "above": "heuristic-novoid"}}
    assert rate.placement(result) == "between random (39) and heuristic-novoid (754)"
    assert rate.placement({**result, "nearest": {"below": None, "above": "random"}}) == \
        "below every rung (lowest: random (39))"
    assert rate.placement({**result, "agent": "heuristic", "nearest": {"below": "heuristic-novoid", "above": None}}) \
        == "above every other rung (highest: heuristic-novoid (754))"
    assert rate.hands_note(8) is None and rate.hands_note(1) == "1 hand -> 4 (1 deal of 4 rotations)"
