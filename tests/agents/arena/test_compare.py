"""Paired comparison of two agents from arena results (agents/arena/compare.py, ``mjenv compare``)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from agents.arena import run_arena, t_quantile_975
from agents.arena.compare import compare, load_result, seed_ranges
from mjenv.cli import main

OPTIONS = {"preset": "qq"}
SEEDS = (5, 6)


def _runs(agent: str, deals: int = 8) -> list[dict]:
    """One 1-vs-3 run of ``agent`` against 3 x heuristic per seed, as JSON dicts."""
    return [run_arena(agents=[agent, "heuristic"], deals=deals, seed=s, env_options=OPTIONS,
                      progress=False).to_dict() for s in SEEDS]


@pytest.fixture(scope="module")
def random_runs() -> list[dict]:
    return _runs("random")


@pytest.fixture(scope="module")
def heuristic_runs() -> list[dict]:
    return _runs("heuristic")


def _focal(run: dict) -> np.ndarray:
    return np.array(run["per_set_mean_beans"][run["labels"][0]])


def test_difference_is_the_pooled_per_deal_difference(random_runs, heuristic_runs) -> None:
    got = compare(random_runs, heuristic_runs)
    d = np.concatenate([_focal(b) - _focal(a) for a, b in zip(random_runs, heuristic_runs)])
    assert got.difference.n == 16 and got.seeds == SEEDS
    assert got.difference.mean == pytest.approx(d.mean())
    assert got.difference.halfwidth == pytest.approx(t_quantile_975(15) * d.std(ddof=1) / 4)
    assert got.new_beans.mean == pytest.approx(np.concatenate([_focal(r) for r in heuristic_runs]).mean())
    assert got.per_seed[6].mean == pytest.approx((_focal(heuristic_runs[1]) - _focal(random_runs[1])).mean())
    assert (got.base, got.new, got.opponents) == ("random", "heuristic", "heuristic")
    assert got.difference.mean > 0  # the heuristic beats random play by a wide margin on any seeds


def test_an_agent_against_itself_is_exactly_zero(random_runs) -> None:
    got = compare(random_runs, random_runs)
    assert got.difference.mean == 0 and got.difference.halfwidth == 0


def test_runs_of_different_lengths_pair_over_their_common_deals(random_runs, heuristic_runs) -> None:
    short = _runs("heuristic", deals=3)
    got = compare(random_runs, short)
    assert got.difference.n == 6
    first = (_focal(heuristic_runs[0])[:3] - _focal(random_runs[0])[:3]).mean()
    assert got.per_seed[5].mean == pytest.approx(first)  # deal d is the same wall in both runs


def _with(run: dict, **changes) -> dict:
    out = copy.deepcopy(run)
    out.update(changes)
    return out


@pytest.mark.parametrize("change, message", [
    (lambda r: [_with(r[0], seed=9), r[1]], "different seeds"),
    (lambda r: [r[0], _with(r[1], seed=5)], "two runs on seed 5"),
    (lambda r: [_with(r[0], agents=["random", "random"]), r[1]], "plays against 'random'"),
    (lambda r: [_with(r[0], rules={**r[0]["rules"], "cap_fan": 8}), r[1]], "another rules"),
    (lambda r: [_with(r[0], preset="happy"), r[1]], "another preset"),
    (lambda r: [_with(r[0], mode="4"), r[1]], "1-vs-3"),
    (lambda r: [_with(r[0], schema="other/1"), r[1]], "not an arena result"),
    (lambda r: [_with(r[0], deals=9), r[1]], "one finite number per deal"),
    (lambda r: [_with(r[0], agents=["other.pt", "heuristic"]), r[1]], "different agents"),
])
def test_results_that_do_not_pair_are_refused(random_runs, heuristic_runs, change, message) -> None:
    before = copy.deepcopy(heuristic_runs)
    with pytest.raises(ValueError, match=message):
        compare(random_runs, change(copy.deepcopy(heuristic_runs)))
    assert heuristic_runs == before


def test_seed_ranges() -> None:
    assert seed_ranges([7, 0, 1, 2, 5]) == "0-2, 5, 7"
    assert seed_ranges([3]) == "3"


def test_cli_compare_end_to_end(tmp_path, capsys, random_runs, heuristic_runs) -> None:
    files = {}
    for side, runs in (("base", random_runs), ("new", heuristic_runs)):
        files[side] = []
        for r in runs:
            path = tmp_path / f"{side}_{r['seed']}.json"
            path.write_text(json.dumps(r))
            files[side].append(str(path))
    out = tmp_path / "cmp.json"
    assert main(["compare", "--base", *files["base"], "--new", *files["new"], "--out", str(out)]) == 0
    text = capsys.readouterr().out
    expected = compare(random_runs, heuristic_runs)
    assert f"heuristic - random: {expected.difference}" in text and "seed(s) 5-6" in text
    saved = json.loads(out.read_text())
    assert saved["difference"]["mean"] == pytest.approx(expected.difference.mean)
    assert saved["difference"]["deals"] == 16 and saved["seeds"] == list(SEEDS)


def test_cli_compare_bad_files_exit_2(tmp_path, capsys, random_runs) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(random_runs[0]))
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": ')
    assert main(["compare", "--base", str(good), "--new", str(broken)]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert main(["compare", "--base", str(good), "--new", str(tmp_path / "missing.json")]) == 2
    assert "No such file" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not an arena result"):
        broken.write_text("[1, 2]")
        load_result(broken)


@pytest.mark.parametrize("change, field", [
    (lambda r: r.update(agents=3), "'agents'"),
    (lambda r: r.update(agents=["random"]), "'agents'"),
    (lambda r: r.update(agents=[["random"], "heuristic"]), "'agents'"),
    (lambda r: r.update(seed=[5]), "'seed'"),
    (lambda r: r.update(seed=None), "'seed'"),
    (lambda r: r.update(seed="5"), "'seed'"),
    (lambda r: r.update(seed=5.0), "'seed'"),
    (lambda r: r.update(seed=True), "'seed'"),
    (lambda r: r.update(labels=[["random"], "heuristic"]), "'labels'"),
    (lambda r: r.update(labels=["random"]), "'labels'"),
    (lambda r: r.update(deals=0, per_set_mean_beans={"random": [], "heuristic": []}), "'deals'"),
    (lambda r: r.update(deals="8"), "'deals'"),
    (lambda r: r.update(rules=[]), "'rules'"),
    (lambda r: r.update(rake=None), "'rake'"),
    (lambda r: r.update(game=1), "'game'"),
    (lambda r: r.pop("preset"), "missing field 'preset'"),
    (lambda r: r.update(per_set_mean_beans=[1, 2]), "'per_set_mean_beans'"),
    (lambda r: r["per_set_mean_beans"]["random"].__setitem__(0, True), "'per_set_mean_beans'"),
    (lambda r: r["per_set_mean_beans"]["random"].__setitem__(0, "1.5"), "'per_set_mean_beans'"),
    (lambda r: r["per_set_mean_beans"].pop("random"), "'per_set_mean_beans'"),
])
def test_cli_compare_malformed_results_exit_2_naming_the_file_and_field(tmp_path, capsys, random_runs, change,
                                                                       field) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(random_runs[0]))
    run = copy.deepcopy(random_runs[0])
    change(run)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(run))
    out = tmp_path / "cmp.json"
    assert main(["compare", "--base", str(good), "--new", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: " in err and field in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("content, message", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    (b"\xff\xfe{}", "not UTF-8"),
    ('{"schema": "mjenv.arena/1", "mode": "1v3", "seed": NaN}', "'game'"),
])
def test_cli_compare_unreadable_results_exit_2(tmp_path, capsys, random_runs, content, message) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(random_runs[0]))
    bad = tmp_path / "bad.json"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main(["compare", "--base", str(good), "--new", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: " in err and message in err and "Traceback" not in err
