"""Reference ladders and ratings (agents/arena/ladder.py, rating.py, rate.py; ``mjenv ladder``, ``mjenv rate``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from agents.arena import ladder, rate, rating
from agents.registry import SHIPPED_CHECKPOINTS, load_policy
from mjenv.cli import main

TINY = ladder.LadderSpec("tiny", "blood_battle", (("preset", "qq"),), ("random", "heuristic-novoid", "heuristic"), 24)
"""A ladder small enough to build in a test."""


@pytest.fixture(scope="module")
def tiny() -> dict:
    return ladder.build(TINY)


# ---------------------------------------------------------------- the stored ladders


@pytest.mark.parametrize("key", list(ladder.LADDERS))
def test_stored_ladder_is_its_definition(key: str) -> None:
    spec = ladder.LADDERS[key]
    data = ladder.load(spec)  # refuses a file whose rungs or checkpoints differ from the spec's
    assert (data["schema"], data["ladder"], data["seed"], data["deals"]) == (ladder.SCHEMA, spec.name, spec.seed,
                                                                           spec.deals)
    assert data["game"] == spec.game and data["env_options"] == spec.env_options
    assert [r["name"] for r in data["rungs"]] == list(spec.rungs)
    for r in data["rungs"]:
        load_policy(r["name"], spec.game)  # every rung loads by name
        if r["name"] in SHIPPED_CHECKPOINTS:
            assert r["sha256"] == hashlib.sha256(SHIPPED_CHECKPOINTS[r["name"]].read_bytes()).hexdigest()
    assert [(m["candidate"], m["field"]) for m in data["matches"]] == ladder.pairings(spec.rungs)
    for m in data["matches"]:
        assert len(m["outcomes"]) == spec.deals == m["wins"] + m["ties"] + m["losses"]
        assert m["hands"] == 4 * spec.deals
    assert data["hands"] == 4 * spec.deals * len(data["matches"])


@pytest.mark.parametrize("key", list(ladder.LADDERS))
def test_stored_ladder_meets_the_bars(key: str) -> None:
    """Ratings rise along the rungs, every adjacent gap's 95% interval is above zero, random is at
    the bottom, and adjacent rungs' matches go the same way in beans."""
    data = ladder.load(ladder.LADDERS[key])
    assert ladder.check_bars(data) == []
    anchor = next(r for r in data["rungs"] if r["name"] == ladder.ANCHOR)
    assert anchor["rating"] == ladder.ANCHOR_RATING
    for r in data["rungs"]:
        assert r["ci"][0] <= r["rating"] <= r["ci"][1]


@pytest.mark.parametrize("key", list(ladder.LADDERS))
def test_stored_ratings_are_the_fit_of_the_stored_matches(key: str) -> None:
    spec = ladder.LADDERS[key]
    data = ladder.load(spec)
    again = ladder.summarize(spec, data["matches"], data["deals"])
    assert [r["rating"] for r in again["rungs"]] == pytest.approx([r["rating"] for r in data["rungs"]])
    assert [r["ci"] for r in again["rungs"]] == [pytest.approx(r["ci"]) for r in data["rungs"]]


def test_blood_battle_networks_are_above_the_heuristic() -> None:
    for key in ("blood_battle-happy", "blood_battle-qq", "blood_battle-qq-classic"):
        data = ladder.load(ladder.LADDERS[key])
        assert data["rungs"][-1]["kind"] == "network" and data["rungs"][-2]["name"] == "heuristic"


def test_a_changed_checkpoint_makes_the_stored_ladder_stale(tmp_path: Path, monkeypatch) -> None:
    spec = ladder.LADDERS["blood_battle-happy"]
    data = json.loads(ladder.data_path(spec.key).read_text(encoding="utf-8"))
    data["rungs"][-1]["sha256"] = "0" * 64
    (tmp_path / f"{spec.key}.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(ladder, "DATA_DIR", tmp_path)
    with pytest.raises(ValueError, match="new ladder version and a rebuild"):
        ladder.load(spec)


@pytest.mark.slow
@pytest.mark.parametrize("key", list(ladder.LADDERS))
def test_rebuilding_a_ladder_reproduces_its_ratings_within_their_intervals(key: str) -> None:
    """What ``python -m agents.arena.ladder build KEY`` recomputes lies within the stored intervals."""
    spec = ladder.LADDERS[key]
    stored = ladder.load(spec)
    again = ladder.build(spec)
    for old, new in zip(stored["rungs"], again["rungs"]):
        assert old["ci"][0] <= new["rating"] <= old["ci"][1], (old, new["rating"])


# ---------------------------------------------------------------- building and fitting


def test_a_tiny_ladder_builds_in_order(tiny: dict) -> None:
    assert tiny["ladder"] == "tiny/v1" and tiny["deals"] == 24 and len(tiny["matches"]) == 6
    ratings = [r["rating"] for r in tiny["rungs"]]
    assert ratings == sorted(ratings) and ratings[2] == ladder.ANCHOR_RATING
    assert ratings[1] - ratings[0] > 200  # random loses nearly every deal to a heuristic
    assert [g["lower"] for g in tiny["gaps"]] == ["random", "heuristic-novoid"]
    assert tiny["rungs"][0]["vs_random"] is None and tiny["rungs"][2]["vs_heuristic"] is None
    assert tiny["rungs"][2]["vs_random"]["mean_beans"] > 10
    table = ladder.format_table(tiny)
    assert table.index("`heuristic`") < table.index("`heuristic-novoid`") < table.index("`random`")
    assert "outcomes" not in json.dumps(ladder.table_json(tiny))


def test_the_build_command_writes_a_ladder_file(tmp_path: Path, capsys) -> None:
    assert ladder.main(["build", "joy_mahjong-no_fan", "--deals", "3", "--out-dir", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "joy_mahjong-no_fan.json").read_text(encoding="utf-8"))
    assert data["ladder"] == "joy_mahjong-no_fan/v1" and data["deals"] == 3 and len(data["matches"]) == 12
    assert "**joy_mahjong-no_fan/v1**" in capsys.readouterr().out
    for argv in (["build"], ["build", "nope"], ["build", "--all", "joy_mahjong-no_fan"],
                 ["build", "--all", "--out-dir", str(tmp_path / "missing")]):
        with pytest.raises(SystemExit) as exc:
            ladder.main(argv)
        assert exc.value.code == 2
    assert [p.name for p in tmp_path.iterdir()] == ["joy_mahjong-no_fan.json"]


def test_pairings_meet_both_ways() -> None:
    pairs = ladder.pairings(("random", "heuristic", "blood_battle_qq"))
    assert pairs == [("random", "heuristic"), ("random", "blood_battle_qq"), ("heuristic", "random"),
                     ("heuristic", "blood_battle_qq"), ("blood_battle_qq", "random"), ("blood_battle_qq", "heuristic")]


def test_deal_outcomes_and_scores() -> None:
    assert rating.deal_outcomes(np.array([3.0, 0.0, -1.0]), np.array([-1.0, 0.0, 1 / 3])) == "WTL"
    assert rating.outcome_array("WTL").tolist() == [1.0, 0.5, 0.0]
    with pytest.raises(ValueError, match="W, T or L"):
        rating.outcome_array("WX")


def test_fit_gives_the_elo_scale_and_the_anchor() -> None:
    # 0 beats 1 on 10 deals of 11 (plus the prior tie, half a win each way): odds 10.5 : 1.5.
    m = rating.comparison_matrix(2, [(0, 1, np.array([1.0] * 10 + [0.0]))])
    assert m.tolist() == [[0, 10.5], [1.5, 0]]
    r = rating.fit(m, 1, 1000.0)
    assert r[1] == pytest.approx(1000.0) and r[0] - r[1] == pytest.approx(400 * np.log10(10.5 / 1.5), abs=0.5)


def test_place_puts_an_agent_that_plays_like_a_rung_at_that_rung() -> None:
    """Three rungs whose matches go both ways (1 beats 0 on 90% of deals, 2 beats 1 on 70%); an agent
    that scores as rung 1 does against every field lands on rung 1's rating, within its interval."""
    rng = np.random.default_rng(0)
    deals = 400
    scores = {(1, 0): (rng.random(deals) < 0.9) * 1.0, (2, 1): (rng.random(deals) < 0.7) * 1.0,
              (2, 0): (rng.random(deals) < 0.97) * 1.0}
    matches = [m for (i, j), s in scores.items() for m in ((i, j, s), (j, i, 1 - s))]
    ratings = rating.fit(rating.comparison_matrix(3, matches), 2, 1000.0)
    tie = np.full(deals, 0.5)
    like = [(3, 0, scores[(1, 0)]), (0, 3, 1 - scores[(1, 0)]), (3, 1, tie), (1, 3, tie),
            (3, 2, 1 - scores[(2, 1)]), (2, 3, scores[(2, 1)])]  # index 3 plays both ways as rung 1 does
    value, samples = rating.place(ratings, matches, like, seed=1)
    assert ratings[0] < ratings[1] < ratings[2] == pytest.approx(1000.0)
    assert value == pytest.approx(ratings[1], abs=5)
    low, high = rating.percentile_interval(samples)
    assert low < ratings[1] < high and high - low < 100


# ---------------------------------------------------------------- mjenv rate


def test_rate_places_a_variant_at_its_own_rung() -> None:
    spec = ladder.LADDERS["joy_mahjong-popular"]
    result = rate.rate("heuristic-nocalls", spec, deals=40)
    rung = next(r for r in result["rungs"] if r["name"] == "heuristic-nocalls")
    assert abs(result["rating"] - rung["rating"]) < 40 and result["ci"][0] < result["rating"] < result["ci"][1]
    assert rung["vs"]["ties"] == rung["rung_vs_agent"]["ties"] == 40  # its own copies replay every deal
    by_name = {r["name"]: r["rating"] for r in result["rungs"]}
    assert by_name[result["nearest"]["below"]] <= result["rating"] < by_name[result["nearest"]["above"]]
    assert "heuristic-nocalls" not in result["nearest"].values()  # its own rung is not its neighbour
    assert {"agent", "ladder", "rating", "ci", "rungs"} <= set(result) and len(result["matches"]) == 8


def test_cli_rate_writes_json_and_prints_the_rating(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.json"
    assert main(["rate", "agents.base:RandomPolicy", "--game", "joy_mahjong", "--room", "no_fan", "--hands", "40",
                 "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["agent"] == "agents.base:RandomPolicy" and result["ladder"] == "joy_mahjong-no_fan/v1"
    assert result["deals"] == 10 and len(result["matches"]) == 8
    assert result["nearest"]["below"] in (None, "random") and result["nearest"]["above"] in ("random", "heuristic-greedy")
    assert f"rating {result['rating']:.0f}" in text and "`heuristic-nocalls`" in text
    assert [r["name"] for r in result["rungs"]] == list(ladder.LADDERS["joy_mahjong-no_fan"].rungs)


def test_cli_rate_budget_plays_at_least_the_probe_length(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(rate, "PROBE_DEALS", 2)
    out = tmp_path / "r.json"
    assert main(["rate", "heuristic-greedy", "--game", "joy_mahjong", "--room", "no_fan", "--budget-s", "0.001",
                 "--quiet", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["deals"] == 2  # no time left after the probes


@pytest.mark.parametrize("argv, message", [
    (["rate", "no_such_policy"], "unknown policy 'no_such_policy'"),
    (["rate", "heuristic", "--game", "joy_mahjong", "--preset", "qq"], "chosen by ['room'] only"),
    (["rate", "heuristic", "--mode", "classic"], "no reference ladder for blood_battle"),
    (["rate", "agents.no_such_module:Policy"], "cannot import module"),
    (["rate", str(SHIPPED_CHECKPOINTS["joy_mahjong_popular"]), "--hands", "4"], "trained on observations"),
    (["ladder", "--all", "--room", "popular"], "--all prints every ladder"),
])
def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path: Path, capsys, argv: list, message: str) -> None:
    out = tmp_path / "r.json"
    assert main([*argv, "--json" if argv[0] == "ladder" else "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [["--hands", "0"], ["--hands", "8", "--budget-s", "5"], ["--budget-s", "nan"],
                                  ["--out", "/no/such/folder/r.json"]])
def test_cli_rate_bad_options_exit_2(capsys, argv: list) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["rate", "heuristic", *argv])
    assert exc.value.code == 2 and "error" in capsys.readouterr().err


def test_cli_rate_refuses_to_overwrite_its_inputs(tmp_path: Path, capsys) -> None:
    checkpoint = tmp_path / "mine.pt"
    checkpoint.write_bytes(SHIPPED_CHECKPOINTS["blood_battle_happy"].read_bytes())
    before = checkpoint.read_bytes()
    assert main(["rate", str(checkpoint), "--out", str(checkpoint)]) == 2
    assert "same file" in capsys.readouterr().err and checkpoint.read_bytes() == before
    stored = ladder.data_path("blood_battle-happy")
    assert main(["rate", "heuristic", "--out", str(stored)]) == 2
    assert "same file" in capsys.readouterr().err
    assert main(["rate", "heuristic", "--out", str(tmp_path / "a"), "--plot", str(tmp_path / "a")]) == 2
    assert list(tmp_path.iterdir()) == [checkpoint]


def test_cli_rate_plot_needs_matplotlib(tmp_path: Path, capsys, monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert main(["rate", "heuristic", "--plot", str(tmp_path / "r.png")]) == 2
    assert "--plot needs matplotlib" in capsys.readouterr().err and list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- mjenv ladder


def test_cli_ladder_prints_the_table_and_writes_json(tmp_path: Path, capsys) -> None:
    out = tmp_path / "l.json"
    assert main(["ladder", "--game", "blood_battle", "--preset", "qq", "--mode", "classic", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "**blood_battle-qq-classic/v1**" in text and "| `blood_battle_qq` |" in text
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["ladder"] == "blood_battle-qq-classic/v1" and [r["name"] for r in data["rungs"]][0] == "random"
    assert main(["ladder", "--all"]) == 0
    assert capsys.readouterr().out.count("| rung | rating") == len(ladder.LADDERS)
