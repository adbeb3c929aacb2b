"""Issue 47 item 2: the arena refuses a policy output that is not one legal integer action per
decision, on both engines and through ``mjenv eval`` / ``mjenv rate`` (exit 2, naming the agent)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from agents.arena import run_arena
from agents.arena.protocol import PolicyOutputError, checked_actions

BAD_OUTPUTS = {
    "float": lambda legal, n: legal.astype(np.float64) + 0.9,
    "string": lambda legal, n: np.array([str(a) for a in legal]),
    "wrong_length": lambda legal, n: legal[:1],
    "beyond_int64": lambda legal, n: np.array([2**70] * n, dtype=object),
    "bool": lambda legal, n: np.ones(n, dtype=bool),
    "illegal": lambda legal, n: np.full(n, 10**6),
}

POLICY_MODULE = textwrap.dedent('''
    import numpy as np

    class Bad:
        """The lowest legal action, turned into what KIND names."""
        name = "bad"
        kind = "float"

        def act(self, observation, action_mask, rng):
            return self.act_batch(observation[None], action_mask[None], rng)[0] if self.kind != "wrong_length" \\
                else [0, 1]

        def act_batch(self, observations, action_masks, rng):
            legal = np.asarray(action_masks).argmax(axis=1)
            n = len(legal)
            return {"float": legal + 0.9, "string": np.array([str(a) for a in legal]),
                    "wrong_length": legal[:1]}[self.kind]

    class Float(Bad):
        kind = "float"

    class String(Bad):
        kind = "string"

    class WrongLength(Bad):
        kind = "wrong_length"
''')


@pytest.mark.parametrize("kind", sorted(BAD_OUTPUTS))
def test_checked_actions_refuses_what_is_not_one_legal_int_per_row(kind):
    masks = np.zeros((3, 8), dtype=np.int8)
    masks[:, 2:5] = 1
    legal = masks.argmax(axis=1)
    with pytest.raises(PolicyOutputError, match="agent 'x'"):
        checked_actions("x", BAD_OUTPUTS[kind](legal, 3), masks)
    assert checked_actions("x", legal.tolist(), masks).dtype == np.int64


class _Bad:
    """A picklable policy object returning one kind of bad output."""

    def __init__(self, kind: str) -> None:
        self.kind, self.name = kind, f"bad-{kind}"

    def act(self, observation, action_mask, rng):
        out = self.act_batch(observation[None], action_mask[None], rng)
        return out if self.kind == "wrong_length" else out[0]

    def act_batch(self, observations, action_masks, rng):
        legal = np.asarray(action_masks).argmax(axis=1)
        if self.kind == "wrong_length":
            return np.concatenate([legal, legal])  # one too many: must not be cut or broadcast
        return BAD_OUTPUTS[self.kind](legal, len(legal))


@pytest.mark.parametrize("backend", ["reference", "compiled"])
@pytest.mark.parametrize("kind", ["float", "string", "wrong_length", "beyond_int64"])
def test_the_arena_refuses_bad_outputs_on_both_backends(backend, kind):
    with pytest.raises(PolicyOutputError, match=f"agent 'bad-{kind}'"):
        run_arena("blood_battle", [_Bad(kind), "random"], deals=1, backend=backend, progress=False)


def _cli(tmp_path, *args):
    (tmp_path / "badpolicies.py").write_text(POLICY_MODULE)
    import os

    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run([sys.executable, "-m", "mjenv", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=600)


@pytest.mark.parametrize("cls", ["Float", "String", "WrongLength"])
def test_rate_exits_2_naming_the_agent(tmp_path, cls):
    proc = _cli(tmp_path, "rate", f"badpolicies:{cls}", "--hands", "40", "--quiet")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and f"badpolicies:{cls}" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_eval_exits_2_naming_the_agent(tmp_path):
    proc = _cli(tmp_path, "eval", "--agents", "badpolicies:Float", "random", "--deals", "1", "--no-progress",
                "--backend", "reference")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "badpolicies:Float" in proc.stderr
