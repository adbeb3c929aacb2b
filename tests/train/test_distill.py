"""Search distillation (train/distill.py): the labels, the tilted target, the run folder and its
resume, and the errors a bad command gets."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.registry import load_policy
from mjenv.vector.engine import blood_battle as eng
from mjenv.vector.engine import joy_mahjong as joy
from train import distill
from tests.support import ROOT

CHECKPOINTS = ROOT / "agents" / "checkpoints"
HAPPY = str(CHECKPOINTS / "blood_battle_happy.pt")
JOY = str(CHECKPOINTS / "joy_mahjong_popular.pt")


@pytest.fixture(scope="module")
def block():
    """The labels of one deal in four rotations, two worlds per decision."""
    return distill.label_block(HAPPY, "blood_battle", {"preset": "happy"}, 7, 0, 1, 2)


def test_labels_value_exactly_the_legal_actions_of_real_choices(block):
    x, mask, q = block["x"], block["mask"], block["q"]
    assert len(q) > 10 and x.shape == (len(q), 87, 27) and x.dtype == np.float16
    assert np.array_equal(~np.isnan(q), mask)
    assert (mask.sum(axis=1) >= 2).all() and not mask[:, eng.HU_A].any()
    assert np.unique(q[mask]).size > 1  # the actions lead to different outcomes


def test_the_half_values_are_the_first_half_of_the_worlds(block):
    q, q_half = block["q"], block["q_half"]  # two worlds: the first, and the mean of both
    assert np.array_equal(np.isnan(q_half), np.isnan(q))
    assert not np.allclose(q_half[block["mask"]], q[block["mask"]])


def test_label_reliability_compares_the_two_halves_of_the_worlds():
    first = np.array([[1.0, 3.0, np.nan], [2.0, 0.0, 1.0]], dtype=np.float32)
    agree = distill.label_reliability((first + 2 * first) / 2, first, 2)  # second half = 2 × first
    assert agree["best_action_agreement"] == 1.0 and agree["value_correlation"] == pytest.approx(1.0)
    opposite = distill.label_reliability((first - first) / 2, first, 2)  # second half = −first
    assert opposite["best_action_agreement"] == 0.0 and opposite["value_correlation"] == pytest.approx(-1.0)
    uneven = distill.label_reliability((first + 2 * 2 * first) / 3, first, 3)  # 1 world, then 2 with 2 × first
    assert uneven["value_correlation"] == pytest.approx(1.0)


def test_labels_are_reproducible(block):
    again = distill.label_block(HAPPY, "blood_battle", {"preset": "happy"}, 7, 0, 1, 2)
    assert all(np.array_equal(block[k], again[k], equal_nan=True) for k in ("x", "mask", "q"))


def test_phase_names_are_the_engines_phase_codes():
    assert distill.PHASES == {"void": eng.VOID_PHASE, "turn": eng.TURN, "claim": eng.CLAIM}


def test_claim_and_void_labels_add_to_the_own_turn_labels_without_changing_them(block):
    every = distill.label_block(HAPPY, "blood_battle", {"preset": "happy"}, 7, 0, 1, 2, ("void", "turn", "claim"))
    phase, mask = every["phase"], every["mask"]
    assert (block["phase"] == distill.PHASES["turn"]).all()
    turn = phase == distill.PHASES["turn"]
    assert all(np.array_equal(every[k][turn], block[k], equal_nan=True) for k in ("x", "mask", "q"))
    void, claim = phase == distill.PHASES["void"], phase == distill.PHASES["claim"]
    assert void.sum() == 4  # one 定缺 per rotation: the student's seat always has three suits to void
    assert (mask[void, eng.VOID_A:eng.VOID_A + 3].sum(axis=1) == 3).all() and mask[void].sum() == 12
    assert claim.sum() > 0 and mask[claim, eng.PASS_A].all() and not mask[claim, eng.DISCARD_A:eng.KONG_A].any()
    assert np.array_equal(~np.isnan(every["q"]), mask) and not mask[:, eng.HU_A].any()


def test_the_target_tilts_the_prior_by_the_search_values():
    prior = torch.log(torch.tensor([[0.5, 0.25, 0.25, 0.0]]).clamp(min=1e-45))
    mask = torch.tensor([[True, True, True, False]])
    q = np.array([[0.0, 2.0, 0.0, np.nan]], dtype=np.float32)
    target = distill.tilted_target(prior, q, mask, tau=1.0)[0].numpy()
    expected = np.array([0.5, 0.25 * np.e ** 2, 0.25])
    assert np.allclose(target[:3], expected / expected.sum()) and target[3] == 0
    flat = distill.tilted_target(prior, q, mask, tau=1e6)[0].numpy()
    assert np.allclose(flat[:3], [0.5, 0.25, 0.25], atol=1e-5)


def test_a_run_writes_a_loadable_policy_and_resumes_without_relabelling(tmp_path, monkeypatch):
    contexts = []

    class RecordingPool(distill.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            contexts.append(kwargs.get("mp_context"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(distill, "ProcessPoolExecutor", RecordingPool)
    out = tmp_path / "run"
    args = ["--policy", HAPPY, "--deals", "2", "--block", "1", "--rollouts", "2", "--workers", "1",
            "--epochs", "2", "--lr", "1e-3", "--out", str(out)]
    assert distill.main(args) == 0
    # The labelling workers are spawned, not forked from a parent that holds torch's and numba's threads.
    assert [c.get_start_method() for c in contexts] == ["spawn"]
    report = json.loads((out / "fit.json").read_text())
    assert report["decisions"] > report["held_out"] > 0
    policy = load_policy(str(out / "checkpoint.pt"))
    before = load_policy(HAPPY).net.state_dict()
    after = policy.net.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    assert set(report["regret_by_phase"]) == {"turn"} and report["decisions_by_phase"]["claim"] == 0
    reliability = report["label_reliability"]
    assert 0 < reliability["best_action_agreement"] <= 1 and -1 <= reliability["value_correlation"] <= 1
    meta = json.loads((out / "labels" / "meta.json").read_text())
    assert meta.pop("phases") == ["turn"] and meta.pop("policy_sha256") == torch.load(HAPPY)["sha256"]
    assert meta.pop("game") == "blood_battle" and meta.pop("room") is None
    (out / "labels" / "meta.json").write_text(json.dumps(meta))  # labels from before --phases, the checksum and Joy
    with np.load(out / "labels" / "block_000001.npz") as z:
        old = {k: z[k] for k in ("x", "mask", "q")}
    np.savez(out / "labels" / "block_000001.npz", **old)  # a block from before phases and half values
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "labels").iterdir()}
    assert sorted(stamps) == ["block_000000.npz", "block_000001.npz", "meta.json"]
    assert distill.main(args) == 0
    assert {p.name: p.stat().st_mtime_ns for p in (out / "labels").iterdir()} == stamps
    assert "label_reliability" not in json.loads((out / "fit.json").read_text())


@pytest.mark.parametrize("argv, message", [
    (["--policy", "no/such.pt"], "no such checkpoint"),
])
def test_a_policy_it_cannot_distill_exits_2_and_writes_nothing(tmp_path, capsys, argv, message):
    out = tmp_path / "run"
    assert distill.main(argv + ["--out", str(out)]) == 2
    assert message in capsys.readouterr().err and not out.exists()


def test_an_out_folder_whose_checkpoint_is_the_policy_is_refused_before_labelling(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(distill, "label", lambda *a: pytest.fail("labelling started"))
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(HAPPY, run / "checkpoint.pt")  # distilling a distilled policy again, into its own folder
    before = (run / "checkpoint.pt").read_bytes()
    assert distill.main(["--policy", str(run / "checkpoint.pt"), "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert "is the same file as the policy (--policy)" in err and "Traceback" not in err
    assert (run / "checkpoint.pt").read_bytes() == before and sorted(p.name for p in run.iterdir()) == ["checkpoint.pt"]


@pytest.mark.parametrize("where, message", [("/proc/run", "cannot create folder /proc/run"), ("file", "is a file")])
def test_an_out_folder_that_cannot_take_files_is_refused_before_labelling(tmp_path, capsys, monkeypatch, where,
                                                                          message):
    monkeypatch.setattr(distill, "label", lambda *a: pytest.fail("labelling started"))
    (tmp_path / "file").write_text("x")
    assert distill.main(["--policy", HAPPY, "--out", str(tmp_path / where)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["--policy", JOY, "--preset", "qq"], "--preset does not apply to"),
    (["--policy", HAPPY, "--room", "popular"], "--room does not apply to"),
    (["--policy", JOY, "--phases", "void,turn"], "joy_mahjong has only turn, claim"),
])
def test_options_of_the_other_game_are_refused(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        distill.main(argv + ["--out", str(tmp_path / "run")])
    assert exc.value.code == 2 and message in capsys.readouterr().err and not (tmp_path / "run").exists()


@pytest.mark.parametrize("flag, value", [("--rollouts", "1"), ("--deals", "0"), ("--tau", "0"), ("--block", "5000"),
                                         ("--phases", "turn,draw"), ("--phases", "turn,turn")])
def test_bad_numbers_are_refused(tmp_path, flag, value):
    with pytest.raises(SystemExit) as exc:
        distill.main(["--policy", HAPPY, "--out", str(tmp_path / "run"), flag, value])
    assert exc.value.code == 2 and not (tmp_path / "run").exists()


def test_labels_of_other_settings_or_damaged_blocks_are_refused(tmp_path, capsys):
    out, policy = tmp_path / "run", tmp_path / "policy.pt"
    shutil.copy(HAPPY, policy)
    args = ["--policy", str(policy), "--deals", "2", "--block", "1", "--rollouts", "2", "--workers", "1",
            "--epochs", "1", "--out", str(out)]
    assert distill.main(args) == 0
    stamp = (out / "checkpoint.pt").stat().st_mtime_ns
    assert distill.main([*args[:-2], "--seed", "5", "--out", str(out)]) == 2
    assert "other settings (seed" in capsys.readouterr().err
    assert distill.main(["--policy", HAPPY, *args[2:-2], "--epochs", "1", "--out", str(out)]) == 0  # same bytes
    shutil.copy(CHECKPOINTS / "blood_battle_qq.pt", policy)  # another policy at the same path
    assert distill.main(args) == 2
    assert "other settings (policy_sha256" in capsys.readouterr().err
    shutil.copy(HAPPY, policy)
    stamp = (out / "checkpoint.pt").stat().st_mtime_ns
    assert distill.main([*args[:-2], "--phases", "turn,claim", "--out", str(out)]) == 2
    assert "other settings (phases" in capsys.readouterr().err
    (out / "labels" / "block_000001.npz").write_bytes(b"not a zip")
    assert distill.main(args) == 2
    assert "block_000001.npz: not a readable label block" in capsys.readouterr().err
    (out / "labels" / "meta.json").write_text("{")
    assert distill.main(args) == 2
    assert "meta.json: not readable JSON" in capsys.readouterr().err
    assert (out / "checkpoint.pt").stat().st_mtime_ns == stamp


@pytest.fixture(scope="module")
def joy_block():
    """Joy Mahjong labels of one deal in four rotations, own turns and claims, two worlds each."""
    return distill.label_block(JOY, "joy_mahjong", {"room": "popular"}, 7, 0, 1, 2, ("turn", "claim"))


def test_joy_labels_value_the_legal_actions_of_own_turns_and_claims(joy_block):
    x, mask, q, phase = joy_block["x"], joy_block["mask"], joy_block["q"], joy_block["phase"]
    assert len(q) > 10 and x.shape[1:] == (load_policy(JOY).net.arch["obs_planes"] + 15, joy.W)
    assert np.array_equal(~np.isnan(q), mask) and (mask.sum(axis=1) >= 2).all() and not mask[:, joy.HU_A].any()
    turn, claim = phase == distill.PHASES["turn"], phase == distill.PHASES["claim"]
    assert (turn | claim).all() and turn.sum() > 0 and claim.sum() > 0
    assert mask[claim, joy.PASS_A].all() and not mask[claim, joy.DISCARD_A:joy.KONG_A].any()
    assert not mask[turn, joy.PASS_A].any() and np.unique(q[mask]).size > 1
    again = distill.label_block(JOY, "joy_mahjong", {"room": "popular"}, 7, 0, 1, 2, ("turn",))
    assert all(np.array_equal(again[k], joy_block[k][turn], equal_nan=True) for k in ("x", "mask", "q"))


def test_a_joy_run_records_its_room_and_writes_a_joy_policy(tmp_path):
    out = tmp_path / "run"
    args = ["--policy", JOY, "--deals", "2", "--block", "1", "--rollouts", "2", "--workers", "1",
            "--epochs", "1", "--phases", "turn,claim", "--out", str(out)]
    assert distill.main(args) == 0
    meta = json.loads((out / "labels" / "meta.json").read_text())
    assert (meta["game"], meta["room"], meta["preset"]) == ("joy_mahjong", "popular", None)
    policy = load_policy(str(out / "checkpoint.pt"))
    assert policy.net.arch["game"] == "joy_mahjong"
    assert torch.load(out / "checkpoint.pt")["distill"]["room"] == "popular"
    assert distill.main([*args[:-2], "--room", "no_fan", "--out", str(out)]) == 2  # labels of another room
