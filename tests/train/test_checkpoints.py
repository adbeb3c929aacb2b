"""A trainer run end to end and its checkpoints: TensorBoard logs, loading as an agent, export, checksums,
damaged or foreign files refused with the file and the reason."""

from __future__ import annotations

from tests.support import ROOT

import dataclasses
import math
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import load_policy
from agents.neural import CheckpointError, NeuralPolicy, read_checkpoint
from mjenv import blood_battle_v0
from train.config import make_config, parse_args
from train.ppo import main, train

from tests.train.support import ROOT, STATE_PLANES, copy_run, fresh_net, logged_scalars, run_files, tiny


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trainer run of ~600 decisions with a pool snapshot, a checkpoint and a tiny evaluation."""
    tmp = tmp_path_factory.mktemp("smoke")
    cfg = tiny(tmp, total_decisions=600, snapshot_every=1, checkpoint_every=2, imitation_decisions=300, lookahead=True,
               baseline_opponents=["heuristic"], baseline_prob=0.3,
               eval_opponents=["random"], eval_deals=2, oracle_critic=True)
    return train(cfg)


def test_smoke_run_logs_finite_losses_and_changes_the_parameters(smoke_run: Path) -> None:
    scalars = logged_scalars(smoke_run)
    for tag in ("losses/policy_loss", "losses/value_loss", "losses/entropy", "losses/approx_kl",
                "charts/beans_per_hand", "charts/win_rate", "charts/eval_vs_random_beans_per_hand"):
        assert tag in scalars and all(math.isfinite(v) for v in scalars[tag]), tag
    imitation = logged_scalars(smoke_run / "imitation")
    for tag in ("imitation/policy_loss", "imitation/accuracy", "imitation/explained_variance"):
        assert tag in imitation and all(math.isfinite(v) for v in imitation[tag]), tag
    assert len(scalars["losses/policy_loss"]) >= 3  # several updates
    ckpt = read_checkpoint(smoke_run / "checkpoint.pt")
    assert ckpt["global_step"] >= 600 and ckpt["update"] >= 3 and len(ckpt["pool"]["snapshots"]) >= 1
    assert ckpt["demonstrations"] >= 300
    initial = fresh_net(make_config(ckpt["config"]), state_planes=STATE_PLANES).state_dict()
    changed = [k for k, v in ckpt["model"].items() if not torch.equal(v, initial[k])]
    assert len(changed) == len(initial)
    saved = (smoke_run / "config.yaml").read_text()
    assert "total_decisions: 600" in saved and "oracle_critic: true" in saved
    assert (smoke_run / "eval.json").is_file()


def test_checkpoint_loads_with_weights_only_and_as_an_agent(smoke_run: Path) -> None:
    path = smoke_run / "checkpoint.pt"
    raw = torch.load(path, weights_only=True)
    assert raw["format"] == "mjenv.ppo/1" and not [p for p in os.listdir(smoke_run) if p.endswith(".tmp")]
    policy = load_policy(str(path))
    assert isinstance(policy, NeuralPolicy) and policy.greedy
    env = blood_battle_v0.raw_env()
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    while not env.game.over:  # a whole hand with the neural policy in every seat: only legal actions
        obs = env.observe(env.agent_selection)
        a = policy.act(obs["observation"], obs["action_mask"], rng)
        assert obs["action_mask"][a] == 1
        env.step(a)
    obs = env.observe(env.agent_selection)
    batch_obs = np.stack([obs["observation"]] * 3)
    masks = np.zeros((3, 62), dtype=np.int8)
    masks[:, [3, 20, 59]] = 1
    greedy = policy.act_batch(batch_obs, masks, rng)
    assert (greedy == greedy[0]).all() and set(greedy) <= {3, 20, 59}
    sampler = NeuralPolicy(policy.net, greedy=False)
    assert set(sampler.act_batch(np.stack([obs["observation"]] * 50), np.repeat(masks[:1], 50, 0), rng)) <= {3, 20, 59}
    clone = pickle.loads(pickle.dumps(policy))  # how the arena sends it to its workers
    assert (clone.act_batch(batch_obs, masks, rng) == greedy).all()


def test_export_keeps_only_the_policy_and_plays_the_same(smoke_run: Path, tmp_path: Path) -> None:
    from train.export import main as export_main

    src, dst = smoke_run / "checkpoint.pt", tmp_path / "policy.pt"
    assert export_main([str(src), str(dst)]) == 0
    small = torch.load(dst, weights_only=True)
    assert "optimizer" not in small and "pool" not in small and small["arch"]["state_planes"] == 0
    assert not any(k.startswith("critic_trunk.") for k in small["model"])
    assert dst.stat().st_size < src.stat().st_size
    full, lean = load_policy(str(src)), load_policy(str(dst))
    env = blood_battle_v0.raw_env()
    env.reset(seed=11)
    obs = np.stack([env.observe(a)["observation"] for a in env.agents])
    masks = np.stack([env.observe(a)["action_mask"] for a in env.agents])
    masks[:] = 0
    masks[:, [2, 5, 11, 59, 60, 61]] = 1
    with torch.no_grad():
        a = full.net.logits(torch.from_numpy(full.net.prepare(obs)), torch.from_numpy(masks.astype(bool)))
        b = lean.net.logits(torch.from_numpy(lean.net.prepare(obs)), torch.from_numpy(masks.astype(bool)))
    torch.testing.assert_close(a, b)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    assert export_main([str(tmp_path / "junk.pt"), str(tmp_path / "out.pt")]) == 2
    assert not (tmp_path / "out.pt").exists()


@pytest.mark.parametrize("content", [b"", b"not a checkpoint\n", b"abc", b"PK\x03\x04truncated zip"])
def test_corrupt_checkpoint_gives_a_clear_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.pt"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match="broken.pt: not a readable torch checkpoint"):
        load_policy(str(path))


def test_checkpoint_of_something_else_gives_a_clear_error(tmp_path: Path, smoke_run: Path) -> None:
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(2)}, other)
    with pytest.raises(CheckpointError, match="not an mjenv PPO checkpoint"):
        read_checkpoint(other)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes((smoke_run / "checkpoint.pt").read_bytes()[:5000])
    with pytest.raises(CheckpointError, match="truncated.pt"):
        read_checkpoint(truncated)
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        read_checkpoint(tmp_path / "missing.pt")


def test_resume_from_a_damaged_checkpoint_names_the_file(tmp_path: Path, smoke_run: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text((smoke_run / "config.yaml").read_text())
    (run / "checkpoint.pt").write_bytes((smoke_run / "checkpoint.pt").read_bytes()[:3000])
    assert main(["--resume", str(run)]) == 2
    assert "checkpoint.pt: not a readable torch checkpoint" in capsys.readouterr().err


def test_checkpoint_from_before_joy_mahjong_resumes_and_loads_as_blood_battle(tmp_path: Path,
                                                                              smoke_run: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text((smoke_run / "config.yaml").read_text())
    ckpt = torch.load(smoke_run / "checkpoint.pt", weights_only=True)
    del ckpt["arch"]["game"]  # the arch of checkpoints written before the "game" field existed
    ckpt.pop("sha256_all")  # and before the checksum of the plain values
    torch.save(ckpt, run / "checkpoint.pt")
    assert read_checkpoint(run / "checkpoint.pt")["arch"]["game"] == "blood_battle"
    assert isinstance(load_policy(run / "checkpoint.pt"), NeuralPolicy)
    cfg = make_config({**dataclasses.asdict(parse_args(["--resume", str(run)])[0]),
                       "total_decisions": ckpt["global_step"] + 50, "eval_opponents": []})
    train(cfg, run)
    assert read_checkpoint(run / "checkpoint.pt")["global_step"] > ckpt["global_step"]


def test_checkpoint_values_are_covered_by_the_checksum(tmp_path: Path, tiny_run: Path) -> None:
    ckpt = torch.load(tiny_run / "checkpoint.pt", weights_only=True)
    assert read_checkpoint(tiny_run / "checkpoint.pt")["sha256_all"] == ckpt["sha256_all"]
    for name, value in (("update", ckpt["update"] + 1), ("config", {**ckpt["config"], "seed": 2}),
                        ("pool", {**ckpt["pool"], "next_id": "1"})):
        torch.save({**ckpt, name: value}, tmp_path / "edited.pt")
        with pytest.raises(CheckpointError, match="edited.pt: the checkpoint's values do not match its sha256_all"):
            read_checkpoint(tmp_path / "edited.pt")


@pytest.mark.parametrize("field, value", [("update", "12"), ("global_step", -1), ("hands", 1.5), ("elapsed_s", "1"),
                                          ("config", []), ("pool", []), ("pool", {"next_id": 0, "snapshots": [{}]}),
                                          ("optimizer", []), ("inflight", {"update": "x"}), ("anchor", [1])])
def test_resume_from_a_checkpoint_with_a_field_of_the_wrong_type_exits_2(tmp_path: Path, tiny_run: Path,
                                                                         capsys: pytest.CaptureFixture,
                                                                         field: str, value: object) -> None:
    """A checkpoint written before ``sha256_all`` (its tensors' checksum only) is checked field by field."""
    from agents.neural import tensor_checksum

    run = copy_run(tiny_run, tmp_path / "run")
    ckpt = torch.load(run / "checkpoint.pt", weights_only=True)
    ckpt.pop("sha256_all", None)
    ckpt[field] = value
    ckpt["sha256"] = tensor_checksum(ckpt)
    torch.save(ckpt, run / "checkpoint.pt")
    before = run_files(run)
    assert main(["--resume", str(run), "--total-decisions", "300"]) == 2
    err = capsys.readouterr().err
    assert f"checkpoint.pt: field {field!r} must be" in err and "Traceback" not in err
    assert run_files(run) == before


# Shipped before the whole-checkpoint checksum existed; they must keep loading byte for byte.
FROM_BEFORE_SHA256_ALL = ("blood_battle_happy", "blood_battle_qq", "joy_mahjong_popular")


def test_shipped_checkpoints_from_before_sha256_all_load_and_stay_as_they_are() -> None:
    # The policies; belief_*.pt is the search agent's belief model (tests/agents/test_belief.py checks it).
    shipped = sorted(p for p in (ROOT / "agents" / "checkpoints").glob("*.pt") if not p.stem.startswith("belief_"))
    assert {p.stem for p in shipped} >= set(FROM_BEFORE_SHA256_ALL)
    for path in shipped:
        before = path.read_bytes()
        ckpt = read_checkpoint(path)
        if path.stem in FROM_BEFORE_SHA256_ALL:
            assert "sha256" in ckpt and "sha256_all" not in ckpt  # the tensors-only checksum is still checked
        else:
            assert "sha256_all" in ckpt  # shipped since: the whole checkpoint is covered
        assert isinstance(load_policy(str(path)), NeuralPolicy)
        assert path.read_bytes() == before


@pytest.mark.parametrize("kind", ["same path", "hard link", "symbolic link"])
def test_export_refuses_to_write_over_its_source(tmp_path: Path, tiny_run: Path, capsys: pytest.CaptureFixture,
                                                 kind: str) -> None:
    from train.export import main as export_main

    src = tmp_path / "checkpoint.pt"
    src.write_bytes((tiny_run / "checkpoint.pt").read_bytes())
    dst = src if kind == "same path" else tmp_path / "policy.pt"
    if kind == "hard link":
        os.link(src, dst)
    elif kind == "symbolic link":
        dst.symlink_to(src)
    assert export_main([str(src), str(dst)]) == 2
    err = capsys.readouterr().err
    assert "is the same file as the checkpoint" in err and "Traceback" not in err
    assert src.read_bytes() == (tiny_run / "checkpoint.pt").read_bytes()
    assert "optimizer" in read_checkpoint(src)  # still a trainer checkpoint --resume takes


@pytest.mark.parametrize("where, message", [("folder", "is a folder"), ("missing/p.pt", "does not exist"),
                                            ("/proc/p.pt", "cannot write /proc/p.pt")])
def test_export_to_a_path_that_cannot_take_the_file_exits_2_and_leaves_nothing(
        tmp_path: Path, tiny_run: Path, capsys: pytest.CaptureFixture, where: str, message: str) -> None:
    from train.export import main as export_main

    (tmp_path / "folder").mkdir()
    assert export_main([str(tiny_run / "checkpoint.pt"), str(tmp_path / where)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["folder"] and os.listdir(tmp_path / "folder") == []


def _rewrite(src: Path, dst: Path, edit) -> Path:
    """Copy a checkpoint through ``edit(ckpt)``, saved as the trainer saves (with a fresh checksum)."""
    from train.ppo import save_checkpoint

    ckpt = torch.load(src, weights_only=True)
    edit(ckpt)
    save_checkpoint(dst, ckpt)
    return dst


def test_checkpoint_with_non_finite_weights_is_refused_to_load_and_resume(tmp_path: Path, tiny_run: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    run = copy_run(tiny_run, tmp_path / "run")
    _rewrite(run / "checkpoint.pt", run / "checkpoint.pt",
             lambda c: c["model"]["trunk.stem.linear.weight"].view(-1).__setitem__(3, math.nan))
    before = run_files(run)
    with pytest.raises(CheckpointError, match=r"checkpoint.pt: non-finite weights .*trunk.stem.linear.weight"):
        load_policy(run / "checkpoint.pt")
    assert main(["--resume", str(run)]) == 2
    assert "non-finite weights" in capsys.readouterr().err
    assert run_files(run) == before


def test_checkpoint_errors_name_the_file_and_the_reason(tmp_path: Path, tiny_run: Path) -> None:
    from train.export import main as export_main

    src = tiny_run / "checkpoint.pt"
    cases = {
        "wrong_arch.pt": (lambda c: c["arch"].update(channels=8), "weights do not fit its arch|needs"),
        "unknown_key.pt": (lambda c: c["arch"].update(colour=1), r"unknown \['colour'\]"),
        "huge.pt": (lambda c: c["arch"].update(channels=200_000), r"channels must be an int in \[1, 512\]"),
        "bad_arch.pt": (lambda c: c.update(arch=[16]), "'arch' must be a mapping"),
    }
    for name, (edit, reason) in cases.items():
        path = _rewrite(src, tmp_path / name, edit)
        with pytest.raises(CheckpointError, match=f"{name}: .*({reason})"):
            load_policy(path)
        assert export_main([str(path), str(tmp_path / f"out_{name}")]) == 2
        assert not (tmp_path / f"out_{name}").exists()  # nothing exported


def test_checksum_catches_flipped_bytes_in_the_weights(tmp_path: Path, tiny_run: Path) -> None:
    import zipfile

    src = tiny_run / "checkpoint.pt"
    raw = torch.load(src, weights_only=True)
    from agents.neural import tensor_checksum

    assert raw["sha256"] == tensor_checksum(raw)  # the trainer writes it
    with zipfile.ZipFile(src) as zf:  # torch stores tensors uncompressed: flip 32 bytes of the largest one
        info = max((i for i in zf.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    data = bytearray(src.read_bytes())
    name_len, extra_len = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little"), \
        int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len + info.file_size // 2
    data[start:start + 32] = bytes(b ^ 0xFF for b in data[start:start + 32])
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="damaged.pt: the tensors do not match the checkpoint's sha256"):
        read_checkpoint(damaged)


def test_checkpoints_without_a_checksum_still_load(tmp_path: Path) -> None:
    from agents.registry import SHIPPED_CHECKPOINTS

    ckpt = torch.load(SHIPPED_CHECKPOINTS["blood_battle_happy"], weights_only=True)
    del ckpt["sha256"]  # as written before the checksum existed
    torch.save(ckpt, tmp_path / "old.pt")
    assert isinstance(load_policy(tmp_path / "old.pt"), NeuralPolicy)


def test_the_checkpoint_format_is_one_module_and_agents_neural_keeps_its_names(tmp_path: Path) -> None:
    from agents import checkpoint, neural
    from train import ppo

    # agents.neural's checkpoint names (other branches import them from there) are agents.checkpoint's.
    for name in ("CHECKPOINT_FORMAT", "ARCH_BOUNDS", "CheckpointError", "FIELDS", "check_fields", "read_verified",
                 "with_checksums", "tensor_checksum", "checkpoint_checksum", "non_finite_tensors", "is_count"):
        assert getattr(neural, name) is getattr(checkpoint, name), name
    assert ppo.save_checkpoint is checkpoint.save_checkpoint
    net = fresh_net(make_config({"channels": 8, "blocks": 1}))
    path = tmp_path / "belief.pt"
    checkpoint.save_checkpoint(path, {"format": "mjenv.belief/1", "arch": dict(net.arch), "model": net.state_dict()})
    assert checkpoint.read_verified(path, "mjenv.belief/1", "belief")["format"] == "mjenv.belief/1"
    with pytest.raises(CheckpointError, match="not an mjenv PPO checkpoint"):
        read_checkpoint(path)
    # A policy file lacks what a run needs to continue: the resume checks say so, naming the file.
    with pytest.raises(CheckpointError, match=r"belief.pt: lacks \['optimizer'"):
        checkpoint.check_resumable(path, {"arch": net.arch}, net.arch)
