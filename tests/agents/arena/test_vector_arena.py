"""The duplicate arena (agents/arena/vector.py) on both backends of ``mjenv.vector`` against each
other and against the AEC env hand by hand (agents/arena/aec.py, the protocol's reference): the
same records and byte-identical replay logs; the deprecated ``engine=``; and what the arena needs
from ``mjenv.vector``: per-table seeds, the hands' wins."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import agents.arena.vector
from agents.arena import aec as aec_arena
import mjenv.vector as mv
from agents.arena import ArenaResult, run_arena
from agents.base import RandomPolicy
from agents.registry import load_policy
from mjenv import blood_battle_v0, joy_mahjong_v0
from mjenv.cli import main


def _both(game: str, agents: list, deals: int, seed: int, options: dict) -> tuple[ArenaResult, ArenaResult]:
    """The same arena run on the reference and on the compiled backend."""
    ref = run_arena(game, agents, deals=deals, seed=seed, env_options=options, progress=False, backend="reference")
    com = run_arena(game, agents, deals=deals, seed=seed, env_options=options, progress=False, backend="compiled")
    return ref, com


def _without_run_facts(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in ("elapsed_s", "workers", "backend")}


@pytest.mark.parametrize("game, options, agents, deals, seed", [
    ("blood_battle", {"preset": "happy"}, ["heuristic", "random"], 20, 1),
    ("blood_battle", {"preset": "qq"}, ["heuristic", "heuristic"], 12, 2),
    ("blood_battle", {"preset": "qq", "mode": "classic", "rake": 10}, ["random", "heuristic", "random", "heuristic"],
     16, 3),
    ("joy_mahjong", {}, ["heuristic", "random"], 16, 4),
    # Deal 22 ends in a 海底 discard win: the bird is the last tile drawn (J8 of
    # docs/rules-joy-mahjong.md); the compiled engine used to take the winning tile and paid twice the beans.
    ("joy_mahjong", {"room": "eight_fan"}, ["heuristic", "random"], 30, 5),
    ("joy_mahjong", {"room": "no_fan"}, ["heuristic", "random", "random", "heuristic"], 10, 6),
    ("blood_battle", {"preset": "qq", "items": 1}, ["heuristic", "random"], 6, 7),  # records with item_uses
])
def test_both_backends_play_the_same_arena(game: str, options: dict, agents: list, deals: int, seed: int) -> None:
    ref, com = _both(game, agents, deals, seed, options)
    assert (ref.backend, com.backend) == ("reference", "compiled")
    assert com.records == ref.records  # walls, dealers, beans, every win's seat, source and fans
    assert sum(len(r.wins) for r in com.records) > deals  # hands are won, so the fans are compared
    assert _without_run_facts(com.to_dict()) == _without_run_facts(ref.to_dict())
    assert com.to_dict()["backend"] == "compiled"


@pytest.mark.parametrize("game, options, agents", [
    # random escapes at once (ESCAPE is one of its uniform picks), the heuristics play the hand out
    ("blood_battle", {"preset": "happy", "escape": True, "bankroll": 2000}, ["heuristic", "heuristic", "heuristic",
                                                                           "random"]),
    ("joy_mahjong", {"room": "eight_fan"}, ["random", "heuristic", "random", "heuristic"]),
    ("blood_battle", {"preset": "happy", "items": 2}, ["heuristic", "random", "heuristic", "random"]),
])
def test_the_reference_backend_writes_the_aec_envs_records_and_logs_byte_for_byte(
        game: str, options: dict, agents: list, tmp_path) -> None:
    """The arena on the reference backend against the AEC env hand by hand (the protocol's
    reference): the same records, and each deal's replay log the same bytes."""
    (tmp_path / "aec").mkdir()
    want = aec_arena.play_deals(game, agents, options, 3, 0, 3, log_dir=tmp_path / "aec")
    got = run_arena(game, agents, deals=3, seed=3, env_options=options, progress=False, log_dir=tmp_path / "ref")
    assert got.backend == "reference" and got.records == want
    assert sum(len(r.wins) for r in got.records) >= 3  # the logs hold wins (and escapes, birds)
    for d in range(3):
        logged = (tmp_path / "ref" / f"deal_{d:05d}.jsonl").read_bytes()
        assert logged == (tmp_path / "aec" / f"deal_{d:05d}.jsonl").read_bytes()
        assert logged.count(b'"type": "header"') == 4 and b'"legal": [' in logged


def test_the_logs_carry_a_neural_policys_probabilities_as_the_aec_env_logs_them(tmp_path) -> None:
    (tmp_path / "aec").mkdir()
    aec_arena.play_deals("blood_battle", ["ppo", "random"], {}, 1, 0, 1, log_dir=tmp_path / "aec")
    run_arena(agents=["ppo", "random"], deals=1, seed=1, progress=False, log_dir=tmp_path / "ref")
    logged = (tmp_path / "ref" / "deal_00000.jsonl").read_bytes()
    assert logged == (tmp_path / "aec" / "deal_00000.jsonl").read_bytes() and b'"probs": [' in logged


def test_a_random_policy_keeps_its_per_seat_generators_in_the_batched_arena() -> None:
    """Random draws from its generator: the arena then calls it row by row with
    decision_rng(seed, deal, rotation, seat), so four random seats replay the reference exactly."""
    aec, vec = _both("blood_battle", ["random", "random", "random", "random"], 10, 8, {})
    assert vec.records == aec.records
    # Each rotation draws from other generators: the same wall plays out differently.
    differ = [len({r.beans for r in vec.records if r.deal == d}) > 1 for d in range(10)]
    assert sum(differ) >= 5


def test_the_records_do_not_depend_on_how_many_tables_share_an_env(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = run_arena(agents=["heuristic", "random"], deals=6, seed=2, progress=False)
    monkeypatch.setattr(agents.arena.vector, "TABLES_PER_ENV", 8)  # deals played two at a time
    told: list[int] = []
    policies = [load_policy("heuristic"), RandomPolicy()]
    pieces = agents.arena.vector.play_deals("blood_battle", policies, {}, 2, 0, 6, on_deal=told.append)
    assert pieces == whole.records
    assert sum(told) == 6 and len(told) >= 3  # each deal told once, as it finishes


def test_workers_split_the_deals_without_changing_the_records() -> None:
    one = run_arena(agents=["heuristic", "random"], deals=5, seed=6, progress=False)
    two = run_arena(agents=["heuristic", "random"], deals=5, seed=6, workers=2, progress=False)
    assert two.records == one.records


class _Stubborn:
    """Always the first legal action, batched: deterministic, its generator untouched."""

    name = "first"

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(np.flatnonzero(action_mask)[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        self.batch_sizes.append(len(observations))
        return np.asarray(action_masks).argmax(axis=1)


def test_a_deterministic_policy_is_called_once_per_step_for_all_its_tables() -> None:
    policy = _Stubborn()
    res = run_arena(agents=[policy, "random"], deals=8, seed=1, progress=False)
    assert max(policy.batch_sizes) > 4  # several of the 32 tables in one call
    assert sum(policy.batch_sizes) < 32 * 40  # not row by row: far fewer calls than decisions
    assert len(policy.batch_sizes) < 400
    assert res.records == run_arena(agents=[policy, "random"], deals=8, seed=1, progress=False,
                                    backend="reference").records


def test_the_backend_is_compiled_by_default_and_reference_for_replay_logs(tmp_path) -> None:
    assert run_arena(agents=["random", "random"], deals=1, progress=False).backend == "compiled"
    logged = run_arena(agents=["random", "random"], deals=1, progress=False, log_dir=tmp_path / "logs")
    assert logged.backend == "reference" and (tmp_path / "logs" / "deal_00000.jsonl").is_file()
    with pytest.raises(ValueError, match="kept by the readable engine: use backend 'reference'"):
        run_arena(agents=["random", "random"], deals=1, progress=False, log_dir=tmp_path / "v", backend="compiled")
    assert not (tmp_path / "v").exists()
    with pytest.raises(ValueError, match=r"unknown backend 'gpu'; choose one of \['compiled', 'reference'\]"):
        run_arena(agents=["random", "random"], deals=1, progress=False, backend="gpu")


def test_engine_is_a_deprecated_name_of_the_backend() -> None:
    with pytest.warns(DeprecationWarning, match=r"engine= is deprecated .* use backend="):
        old = run_arena(agents=["heuristic", "random"], deals=2, seed=4, progress=False, engine="aec")
    assert old.backend == "reference"
    with pytest.warns(DeprecationWarning, match=r"ArenaResult.engine is deprecated .* \.backend"):
        assert old.engine == "aec"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # backend= alone warns nothing
        new = run_arena(agents=["heuristic", "random"], deals=2, seed=4, progress=False, backend="compiled")
    assert new.records == old.records
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="contradicts backend='compiled'"):
        run_arena(agents=["random", "random"], deals=1, progress=False, engine="aec", backend="compiled")
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match=r"unknown engine 'gpu'; choose one of "
                                                                           r"\['vector', 'aec'\]"):
        run_arena(agents=["random", "random"], deals=1, progress=False, engine="gpu")


def test_mjenv_eval_takes_the_backend_and_writes_it_in_the_json(tmp_path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "r.json"
    assert main(["eval", "--agents", "heuristic", "random", "--deals", "2", "--backend", "reference",
                 "--no-progress", "--out", str(out)]) == 0
    assert "reference backend" in capsys.readouterr().out
    assert '"backend": "reference"' in out.read_text()
    assert main(["eval", "--agents", "heuristic", "random", "--deals", "2", "--engine", "vector",
                 "--no-progress"]) == 0  # the deprecated flag, mapped
    captured = capsys.readouterr()
    assert "compiled backend" in captured.out and "--engine is deprecated" in captured.err
    assert "use --backend compiled" in captured.err
    assert main(["eval", "--engine", "aec", "--backend", "compiled", "--deals", "1", "--no-progress"]) == 2
    assert "contradicts" in capsys.readouterr().err
    for flag in ("--backend", "--engine"):
        with pytest.raises(SystemExit):
            main(["eval", flag, "gpu"])
        assert "invalid choice: 'gpu'" in capsys.readouterr().err


# ---------------------------------------------------------------- mjenv.vector: per-table seeds, wins


@pytest.mark.parametrize("game, module", [("blood_battle", blood_battle_v0), ("joy_mahjong", joy_mahjong_v0)])
def test_reset_with_one_seed_per_table_deals_what_the_aec_env_deals(game: str, module) -> None:
    seeds = [2**62 + 5, 7, 7, 123456789]
    venv = mv.make(game, 4)
    obs, info = venv.reset(seed=np.array(seeds, dtype=np.uint64))
    for t, s in enumerate(seeds):
        raw = module.raw_env()
        raw.reset(seed=s)
        ref = raw.observe(raw.agent_selection)
        assert info["seat"][t] == raw.possible_agents.index(raw.agent_selection)
        np.testing.assert_array_equal(obs["observation"][t], ref["observation"])
        np.testing.assert_array_equal(obs["action_mask"][t], ref["action_mask"])
    np.testing.assert_array_equal(obs["observation"][1], obs["observation"][2])  # equal seeds, equal tables


@pytest.mark.parametrize("bad", [[1, 2, 3], [1, 2, 3, -4], [0.5, 1, 2, 3], [True, False, True, True],
                                 np.array([2**63, 0, 0, 0], dtype=np.uint64), "abcd"])
def test_bad_per_table_seeds_are_refused_and_change_nothing(bad) -> None:
    venv = mv.make("blood_battle", 4)
    obs, _ = venv.reset(seed=3)
    with pytest.raises(ValueError, match=r"seed must be an int >= 0, None, or 4 ints in \[0, 2\*\*63\) "
                                         r"\(one per table\)"):
        venv.reset(seed=bad)
    np.testing.assert_array_equal(venv.action_masks(), obs["action_mask"])


def test_a_finished_blood_battle_hand_reports_each_win_in_info() -> None:
    """info's win fields agree with the beans: a seat with a win order has won; sources are other seats."""
    venv = mv.make("blood_battle", 64)
    obs, info = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    seen = 0
    while seen < 64:
        mask = obs["action_mask"].astype(bool)
        hu = mask[:, venv.backend.layout.HU]
        actions = np.where(hu, venv.backend.layout.HU, RandomPolicy().act_batch(obs["observation"], mask, rng))
        obs, _, terminated, _, info = venv.step(actions)
        for t in np.flatnonzero(terminated):
            seen += 1
            order, src, fan = info["win_order"][t], info["win_from"][t], info["fan"][t]
            np.testing.assert_array_equal(order > 0, info["won"][t])
            assert sorted(order[order > 0].tolist()) == list(range(1, int((order > 0).sum()) + 1))
            for s in np.flatnonzero(order):
                assert fan[s] >= 1 and src[s] != s and src[s] >= -1
