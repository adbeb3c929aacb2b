"""Resuming a run (``python -m train --resume``): after a kill, after the warm start, with a batch in flight;
flags that would change the run and failed resumes change nothing."""

from __future__ import annotations

from tests.support import ROOT

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from agents.neural import CheckpointError, read_checkpoint
from train.config import parse_args
from train.ppo import main, train

from tests.train.support import ROOT, copy_run, logged_scalars, run_files, tiny


def _start(args: list[str]) -> subprocess.Popen:
    # The repository first, and whatever path the caller set (packages installed with --target) after it.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, "-m", "train", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_resume_after_kill_continues_the_counter_and_matches_an_unbroken_run(tmp_path: Path) -> None:
    flags = ["--backend", "inline", "--envs-per-worker", "4", "--decisions-per-worker", "100",
             "--channels", "16", "--blocks", "1", "--minibatch-size", "64", "--update-epochs", "1",
             "--progress", "false", "--eval-opponents", "[]", "--checkpoint-every", "1",
             "--snapshot-every", "2", "--total-decisions", "1500"]
    proc = _start([*flags, "--runs-dir", str(tmp_path / "killed")])
    deadline = time.monotonic() + 120
    ckpt = None
    while time.monotonic() < deadline and proc.poll() is None:
        found = list((tmp_path / "killed").glob("*/checkpoint.pt"))
        if found:
            ckpt = found[0]
            break
        time.sleep(0.05)
    assert ckpt is not None, proc.communicate()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed = read_checkpoint(ckpt)
    assert killed["global_step"] < 1500, "the run finished before the kill: make it longer"

    resumed = _start(["--resume", str(ckpt.parent)])
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert f"at update {killed['update']}, decision {killed['global_step']}" in out
    final = read_checkpoint(ckpt)
    assert final["update"] > killed["update"] and final["global_step"] >= 1500

    unbroken_run = train(parse_args([*flags, "--runs-dir", str(tmp_path / "unbroken")])[0])
    reference = read_checkpoint(unbroken_run / "checkpoint.pt")
    assert (reference["update"], reference["global_step"], reference["hands"]) == (
        final["update"], final["global_step"], final["hands"])
    for k, v in reference["model"].items():  # nothing lost: the same weights as without the kill
        assert torch.equal(v, final["model"][k]), k


def test_resume_after_the_warm_start_keeps_its_logs_and_does_not_imitate_again(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, imitation_decisions=300, total_decisions=100)
    run_dir = train(cfg)
    first = read_checkpoint(run_dir / "checkpoint.pt")
    accuracy = logged_scalars(run_dir / "imitation")["imitation/accuracy"]
    assert first["demonstrations"] >= 300 and len(accuracy) >= 2
    train(dataclasses.replace(cfg, total_decisions=400), resume=run_dir)
    final = read_checkpoint(run_dir / "checkpoint.pt")
    assert final["demonstrations"] == first["demonstrations"]  # no second warm start
    assert final["global_step"] >= 400 and final["update"] > first["update"]
    assert logged_scalars(run_dir / "imitation")["imitation/accuracy"] == accuracy  # not purged by the resume


class _Stop(RuntimeError):
    """Stands for a crash in the middle of a run."""


def test_overlapped_imitation_plays_ahead_and_learns_exactly_what_the_sequential_one_learns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import train.ppo as ppo
    from train.backends import InlineWorkers

    events: dict[bool, list] = {True: [], False: []}

    class Recording(InlineWorkers):
        def submit(self, update, weights, snapshots, pool, imitate=False):
            events[overlap].append(("submit", update, imitate))
            super().submit(update, weights, snapshots, pool, imitate)

        def receive(self):
            events[overlap].append(("receive",))
            return super().receive()

    real_update = ppo.imitation_update

    def recording_update(*args, **kwargs):
        events[overlap].append(("learn",))
        return real_update(*args, **kwargs)

    monkeypatch.setattr(ppo, "make_workers", Recording)
    monkeypatch.setattr(ppo, "imitation_update", recording_update)
    models = {}
    for overlap in (True, False):
        run = train(tiny(tmp_path / str(overlap), imitation_decisions=450, total_decisions=0, overlap=overlap))
        models[overlap] = read_checkpoint(run / "checkpoint.pt")
    assert models[True]["demonstrations"] == models[False]["demonstrations"] >= 450
    for k, v in models[False]["model"].items():  # the same demonstrations, the same updates
        assert torch.equal(v, models[True]["model"][k]), k
    submits = [e for e in events[True] if e[0] == "submit"]
    assert all(imitate for _, _, imitate in submits) and len(submits) >= 3
    # Overlapped: batch u + 1 is submitted before batch u is learned; in turn: after it.
    assert events[True][:5] == [("submit", 1, True), ("receive",), ("submit", 2, True), ("learn",), ("receive",)]
    assert events[False][:5] == [("submit", 1, True), ("receive",), ("learn",), ("submit", 2, True), ("receive",)]
    n = len(submits)
    assert events[True].count(("receive",)) == events[True].count(("learn",)) == n  # none left over for PPO
    assert [e[0] for e in events[False]] == ["submit", "receive", "learn"] * n


def test_a_run_stopped_in_the_imitation_resumes_its_batch_in_flight_and_matches_an_unbroken_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import train.ppo as ppo

    cfg = tiny(tmp_path, imitation_decisions=600, total_decisions=150, checkpoint_every=1)
    calls = []
    real = ppo.imitation_update

    def stop_at_the_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise _Stop("killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(ppo, "imitation_update", stop_at_the_third)
    with pytest.raises(_Stop):
        train(cfg)
    monkeypatch.setattr(ppo, "imitation_update", real)
    run_dir = next((tmp_path / "runs").iterdir())
    stopped = read_checkpoint(run_dir / "checkpoint.pt")
    assert stopped["update"] == 2 and stopped["inflight"]["imitate"] and stopped["inflight"]["update"] == 3
    train(cfg, resume=run_dir)
    final = read_checkpoint(run_dir / "checkpoint.pt")
    reference = read_checkpoint(train(dataclasses.replace(cfg, runs_dir=str(tmp_path / "unbroken"))) / "checkpoint.pt")
    assert (final["update"], final["demonstrations"], final["global_step"]) == (
        reference["update"], reference["demonstrations"], reference["global_step"])
    for k, v in reference["model"].items():
        assert torch.equal(v, final["model"][k]), k


@pytest.mark.parametrize("flag", [["--channels", "8"], ["--blocks", "2"], ["--seed", "5"], ["--lookahead", "true"],
                                  ["--oracle-critic", "true"], ["--game", "joy_mahjong"],
                                  ["--init-policy", "blood_battle_happy"]])
def test_resume_refuses_flags_that_change_the_network_or_seed(tmp_path: Path, tiny_run: Path, flag: list[str],
                                                              capsys: pytest.CaptureFixture) -> None:
    run = copy_run(tiny_run, tmp_path / "run")
    before = run_files(run)
    assert main(["--resume", str(run), *flag]) == 2
    err = capsys.readouterr().err
    assert f"{flag[0]} would change the network, its starting weights or the seed" in err and "Traceback" not in err
    assert run_files(run) == before  # nothing written, config.yaml included


def test_a_failed_resume_changes_no_file_and_a_plain_resume_still_works(tmp_path: Path, tiny_run: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    run = copy_run(tiny_run, tmp_path / "run")
    before = run_files(run)
    saved = parse_args(["--resume", str(run)])[0]
    with pytest.raises(CheckpointError, match="checkpoint.pt: network .* differs from the config's"):
        train(dataclasses.replace(saved, channels=8), resume=run)  # past the flag check: the arch check
    assert run_files(run) == before
    assert main(["--resume", str(run), "--total-decisions", "300"]) == 0
    assert "resumed" in capsys.readouterr().out
    assert read_checkpoint(run / "checkpoint.pt")["global_step"] >= 300
