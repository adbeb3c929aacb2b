"""``mjenv.vector.single_seat.SingleSeatView`` on its own: the same episodes on both backends, every
episode's rewards summing to its seat's beans, and skipped hands merged (no bankroll) or left out
(bankroll) as the engine's hands say."""

from __future__ import annotations

import numpy as np
import pytest

import mjenv.vector as mv
from mjenv.engine.core import IllegalActionError
from mjenv.vector.single_seat import FINAL_FIELDS, SingleSeatView

OPTIONS = {"blood_battle": {"preset": "qq", "escape": True}, "joy_mahjong": {"escape": True}}
"""Escape (S16 of docs/rules-blood-battle.md, J11 of docs/rules-joy-mahjong.md) ends hands before the
learner acts often: skipped hands in a few steps."""


class UniformOpponent:
    """A uniformly random legal action per table, drawn from the view's generator."""

    name = "uniform"

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        assert observations.dtype == np.float32  # opponents read the engine's planes
        return (rng.random(action_masks.shape) * action_masks).argmax(axis=1)


def _view(game: str, n: int, backend: str = "compiled", seat="random", dtype: str = "float32", **options):
    venv = mv.make(game, n, backend=backend, copy=False, final_observations=True, **OPTIONS[game], **options)
    return SingleSeatView(venv, UniformOpponent(), seat=seat, observation_dtype=dtype)


def _play(view: SingleSeatView, steps: int, seed: int) -> list[tuple]:
    """Every output of ``reset`` and ``steps`` steps of uniformly random learner actions."""
    rng = np.random.default_rng(seed)
    obs, info = view.reset(seed=seed)
    record: list[tuple] = [(obs, info)]
    for _ in range(steps):
        actions = (rng.random(info["action_mask"].shape) * info["action_mask"]).argmax(axis=1)
        obs, reward, terminated, info, final = view.step(actions)
        kept = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in final.items()}
        record.append((obs, reward, terminated, info, kept))
    return record


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) or (isinstance(a, np.ndarray) and a.dtype == object):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b) and np.asarray(a).dtype == np.asarray(b).dtype


@pytest.mark.parametrize("game,options", [("blood_battle", {}), ("joy_mahjong", {"bankroll": 1})])
def test_both_backends_play_the_same_episodes(game, options):
    compiled = _play(_view(game, 4, "compiled", dtype="uint8", **options), 40, seed=3)
    reference = _play(_view(game, 4, "reference", dtype="uint8", **options), 40, seed=3)
    ended = sum(int(step[2].sum()) for step in compiled[1:])
    skipped = sum(int(step[4]["skipped_hands"].sum()) for step in compiled[1:] if step[4])
    assert ended >= 2 and skipped >= 1  # final fields, new seats and skipped hands were compared too
    for k, (c, r) in enumerate(zip(compiled, reference)):
        assert _same(c, r), f"step {k} differs"


def _episodes(game: str, n: int, steps: int, seed: int, **options) -> dict[str, int]:
    """Plays the view, following the engine's hands through a spy on ``venv.step``; counts the
    episodes, the skipped hands and every mismatch with the rules of the module docstring."""
    view = _view(game, n, **options)
    bankroll = options.get("bankroll")
    hands: list[list[np.ndarray]] = [[] for _ in range(n)]  # each table's engine hands not yet in an episode
    engine_step = view.venv.step

    def spy(actions, active=None):
        out = engine_step(actions, active)
        for t in np.flatnonzero(out[2]):
            hands[t].append(out[4]["beans"][t].copy())
        return out

    view.venv.step = spy
    counts = dict(episodes=0, skipped=0, wrong_return=0, wrong_beans=0, wrong_balances=0)
    rng = np.random.default_rng(seed)
    _, info = view.reset(seed=seed)
    returns = np.zeros(n)
    for _ in range(steps):
        actions = (rng.random(info["action_mask"].shape) * info["action_mask"]).argmax(axis=1)
        before = [len(h) for h in hands]  # skipped hands waiting for the learner's episode
        _, reward, terminated, info, final = view.step(actions)
        returns += reward
        for t in np.flatnonzero(terminated):
            # The learner's action starts the step, so the step's first hand to end at the table is the
            # episode's last; hands ending after it in the same step belong to the next episode.
            ours, hands[t] = hands[t][:before[t] + 1], hands[t][before[t] + 1:]
            skipped, seat, beans = ours[:-1], final["seat"][t], final["beans"][t]
            counts["episodes"] += 1
            counts["skipped"] += len(skipped)
            counts["wrong_return"] += returns[t] != beans[seat]
            counts["wrong_beans"] += final["skipped_hands"][t] != len(skipped)
            if bankroll is None:  # merged: the episode's beans are its hands'
                counts["wrong_beans"] += not np.array_equal(beans, np.sum(ours, axis=0))
            else:  # left out: reported apart
                counts["wrong_beans"] += not np.array_equal(beans, ours[-1])
                counts["wrong_beans"] += not np.array_equal(final["skipped_beans"][t], np.sum(ours[:-1], axis=0)
                                                            if skipped else np.zeros(4))
                counts["wrong_balances"] += not np.array_equal(final["balances"][t], bankroll + beans)
            returns[t] = 0
    return counts


# Items without 乾坤大挪移, whose pre-deal decision would ask the learner before any hand could end.
@pytest.mark.parametrize("options", [{}, {"bankroll": 1}, {"items": {"toutian": 1, "yihua": 1, "shunfeng": 2}}],
                         ids=["merged", "left-out", "items"])
def test_skipped_hands_and_rewards_follow_the_engines_hands(options):
    counts = _episodes("blood_battle", 32, 120, seed=5, **options)
    assert counts["episodes"] > 50 and counts["skipped"] > 0, counts
    assert counts["wrong_return"] == counts["wrong_beans"] == counts["wrong_balances"] == 0, counts


def test_final_fields_and_resolved_opponents():
    view = _view("blood_battle", 8, seat=1, bankroll=1, items=1)
    assert view.merges_skipped is False
    obs, info = view.reset(seed=0)
    assert obs.shape == (8, *view.single_observation_space.shape) and (info["seat"] == 1).all()
    for _ in range(30):
        *_, terminated, _, final = view.step(view.action_masks().argmax(axis=1))
        if terminated.any():
            assert set(final) == {"_final", "final_obs", *FINAL_FIELDS}
            assert final["item_uses"].shape == (8, 4, 5) and final["item_uses"].max() <= 1  # items=1
            break
    else:
        raise AssertionError("no episode ended in 30 steps")


def test_bad_opponents_and_failed_opponent():
    venv = mv.make("blood_battle", 2, copy=False, final_observations=True)
    with pytest.raises(TypeError, match="act_batch"):
        SingleSeatView(venv, "random")
    with pytest.raises(ValueError, match="final_observations"):
        SingleSeatView(mv.make("blood_battle", 2), UniformOpponent())

    class Illegal:
        def act_batch(self, observations, action_masks, rng):
            return np.full(len(action_masks), -1)

    uniform = UniformOpponent()
    view = SingleSeatView(venv, [uniform, Illegal(), uniform])
    assert len(view.opponents.policies) == 2
    with pytest.raises(IllegalActionError, match="opponent 'Illegal'"):
        view.reset(seed=0)
    with pytest.raises(RuntimeError, match="call reset"):
        view.step(np.zeros(2, dtype=np.int64))


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_the_gymnasium_env_on_either_backend(mode):
    """The Gymnasium adapter passes ``backend`` to the engine: the same steps on both."""
    from mjenv.integrations.gymnasium import SingleSeatVectorEnv

    def steps(backend: str) -> list:
        env = SingleSeatVectorEnv("blood_battle", 3, opponents=UniformOpponent(), seat="random", autoreset_mode=mode,
                                  backend=backend, **OPTIONS["blood_battle"])
        rng = np.random.default_rng(4)
        out = [env.reset(seed=2)]
        for _ in range(25):
            masks = env.action_masks()
            out.append(env.step((rng.random(masks.shape) * masks).argmax(axis=1)))
        return out

    compiled, reference = steps("compiled"), steps("reference")
    assert any(step[2].any() for step in compiled[1:])
    for k, (c, r) in enumerate(zip(compiled, reference)):
        assert _same(c, r), f"step {k} differs"


def test_the_modules_left_out_of_the_cache_digest_compile_nothing():
    """``mjenv.vector`` keeps numba's cache when its Python-only modules (the views) change: safe
    only while none of them defines a compiled function."""
    from pathlib import Path

    from mjenv.vector import _PYTHON_ONLY

    root = Path(mv.__file__).parent
    for name in _PYTHON_ONLY:
        source = (root / name).read_text(encoding="utf-8")
        assert "njit" not in source and "import numba" not in source and "from numba" not in source, name


def test_the_gymnasium_env_with_items_returns_the_beans():
    """Items (S17 of docs/rules-blood-battle.md) in the Gymnasium view: the learner's actions
    include the item actions, its rewards still sum to its seat's beans, the info counts the uses."""
    from mjenv.integrations.gymnasium import SingleSeatVectorEnv

    env = SingleSeatVectorEnv("blood_battle", 4, opponents=UniformOpponent(), seat="random", autoreset_mode="same_step",
                              items=1)
    assert env.single_action_space.n == 121
    rng = np.random.default_rng(1)
    _, info = env.reset(seed=3)
    returns, ended, used = np.zeros(4), 0, 0
    for _ in range(150):
        masks = env.action_masks()
        used += int(masks[:, 62:].any(axis=1).sum())
        _, reward, terminated, _, info = env.step((rng.random(masks.shape) * masks).argmax(axis=1))
        returns += reward
        for t in np.flatnonzero(terminated):
            final = info["final_info"]
            assert returns[t] == final["beans"][t][final["seat"][t]]
            assert final["item_uses"][t].sum() > 0
            returns[t], ended = 0, ended + 1
    assert ended >= 2 and used > 0
