"""The trainer's rollouts (train/vector_rollout.py) on a batched env of either backend (``engine:
compiled`` or ``reference``): every hand replays through the AEC env with the same observations,
masks, rewards and credited beans, and both backends give the same rollout, array for array."""

from __future__ import annotations

import dataclasses
import importlib
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import load_policy
from agents.neural import PolicyValueNet
from mjenv import blood_battle_v0, games
from mjenv.vector.crediting import Ledger
from train.config import make_config
from train.rollout import BASELINE, LEARNER, RolloutWorker, all_weights, credit_rewards, policy_weights
from train.ppo import duplicate_advantages
from train.vector_rollout import DecisionCredits

from tests.train.support import fresh_net, tiny

GAMES = {name: importlib.import_module(g.env_module) for name, g in games.GAMES.items()}  # game -> env module


def test_the_views_rewards_filed_by_decision_equal_credit_rewards_per_hand() -> None:
    """Tables interleaved step by step, hands restarting, seats that receive beans before their first
    decision or never decide: a ledger paid as SelfPlayVectorEnv pays it (the seat to act at each
    step, every seat when a hand ends), filed by DecisionCredits, gives every decision what
    credit_rewards gives it hand by hand."""
    rng = np.random.default_rng(0)
    n_tables, credits, ledger, n_ids = 5, DecisionCredits(5), Ledger(5), 0
    hands: dict[int, list] = {t: [[], [], []] for t in range(n_tables)}  # actors, step rewards, decision ids
    finished = []
    for _step in range(3000):
        tables = np.flatnonzero(rng.random(n_tables) < 0.7)
        if tables.size == 0:
            continue
        seats = rng.choice([0, 1, 2], size=tables.size)  # seat 3 never decides
        ids = n_ids + np.arange(tables.size)
        n_ids += tables.size
        credits.decide(tables, seats, ids, ledger.pay(tables, seats).astype(np.int64))
        rewards = rng.integers(-3, 4, size=(tables.size, 4)) * (rng.random((tables.size, 1)) < 0.4)
        step = np.zeros((n_tables, 4))
        step[tables] = rewards
        ledger.receive(step)
        for j, t in enumerate(tables.tolist()):
            hands[t][0].append(int(seats[j]))
            hands[t][1].append(rewards[j].tolist())
            hands[t][2].append(int(ids[j]))
            if rng.random() < 0.05:  # the hand ends: check it later, start the next
                finished.append(hands[t])
                hands[t] = [[], [], []]
                credits.finish(t, ledger.settle(np.array([t]))[0].astype(np.int64))
    assert len(finished) > 100
    before_first = 0  # hands where a seat received beans before its first decision
    for actors, step_rewards, ids in finished:
        assert credits.credit[ids].tolist() == credit_rewards(actors, step_rewards)
        before_first += any(sum(r[s] for r in step_rewards[:actors.index(s)]) != 0 for s in set(actors))
    assert before_first > 20


def _replay(hand, game: str, env_options: dict) -> tuple[list[int], list[list[int]], list, list]:
    """A hand replayed through the AEC env from its seed and actions: the seat of each decision,
    each step's rewards, and each decision's observation and mask."""
    env = GAMES[game].raw_env(**env_options)
    env.reset(seed=hand.seed)
    actors, rewards, observations, masks = [], [], [], []
    for action in hand.actions:
        agent = env.agent_selection
        o = env.observe(agent)
        actors.append(env.possible_agents.index(agent))
        observations.append(o["observation"])
        masks.append(o["action_mask"])
        env.step(action)  # an illegal action would raise
        rewards.append([int(env.rewards[a]) for a in env.possible_agents])
    assert env.game.over, "the hand's actions stop before its end"
    assert list(env.game.won) == list(hand.won)
    return actors, rewards, observations, masks


def _check_against_aec(r, cfg, worker) -> int:
    """Every hand of a rollout replays through the AEC env; the kept rows equal the replay's
    decisions of the kept seats, with :func:`credit_rewards`'s beans. Returns the seats checked."""
    checked = 0
    for h, hand in enumerate(r.hands):
        actors, rewards, observations, masks = _replay(hand, cfg.game, cfg.env_options)
        credit = credit_rewards(actors, rewards)
        assert [sum(x[s] for x in rewards) for s in range(4)] == list(hand.beans)
        for seat in range(4):
            rows = np.flatnonzero((r.hand == h) & (r.seat == seat))
            steps = [t for t, a in enumerate(actors) if a == seat]
            if hand.lineup[seat] != LEARNER:
                assert rows.size == 0
                continue
            assert rows.size == len(steps) > 0 and np.all(np.diff(rows) == 1)  # contiguous, as many
            assert r.beans[rows].tolist() == [credit[t] for t in steps]  # the AEC path's crediting
            assert r.done[rows].tolist() == [False] * (rows.size - 1) + [True]
            assert r.action[rows].tolist() == [hand.actions[t] for t in steps]
            np.testing.assert_array_equal(r.obs[rows], worker.net.prepare(np.stack([observations[t] for t in steps])))
            np.testing.assert_array_equal(r.mask[rows], np.stack([masks[t] for t in steps]).astype(bool))
            checked += 1
    return checked


@pytest.mark.parametrize("game, options", [("blood_battle", {"preset": "qq", "rake": 3}),
                                           ("joy_mahjong", {"room": "popular"}),
                                           ("blood_battle", {"items": 1})])  # items: their give/name steps credited too
def test_vector_rollout_matches_the_aec_replay_of_every_hand(tmp_path: Path, game: str, options: dict) -> None:
    cfg = tiny(tmp_path, game=game, env_options=options, envs_per_worker=6,
               baseline_opponents=["random"], baseline_prob=0.3)
    worker = RolloutWorker(cfg, 0)
    net = _net(cfg, worker)
    snaps = {7: policy_weights(_net(dataclasses.replace(cfg, seed=9), worker))}
    r = worker.collect(1, all_weights(net), snaps, [(7, 1.0)], 300)
    assert len(r.action) >= 300 and len(r.hands) >= 6
    lineups = {who for h in r.hands for who in h.lineup}
    assert {LEARNER, 7, BASELINE} <= lineups  # the learner, a snapshot and the baseline all played
    assert _check_against_aec(r, cfg, worker) >= 6
    assert r.all_decisions == sum(len(h.actions) for h in r.hands)
    if "items" in options:  # items were used (and their give/name steps), so their crediting was checked
        assert sum(a >= worker.n_actions - 59 for h in r.hands for a in h.actions) > 10
    np.testing.assert_array_equal(r.reward, (r.beans / worker.scale).astype(np.float32))


def _net(cfg, worker) -> PolicyValueNet:
    """A fresh network of the worker's architecture, seeded by the config."""
    return PolicyValueNet(**worker.arch, generator=torch.Generator().manual_seed(cfg.seed))


def test_vector_rollout_stores_what_the_network_computed_and_gae_inputs_are_well_formed(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, envs_per_worker=5, oracle_critic=True)
    worker = RolloutWorker(cfg, 0)
    net = fresh_net(cfg, state_planes=worker.net.arch["state_planes"])
    r = worker.collect(3, all_weights(net), {}, [], 250)
    n = len(r.action)
    for name in ("obs", "mask", "state", "logprob", "value", "reward", "beans", "done", "hand", "seat"):
        assert len(getattr(r, name)) == n, name
    assert r.obs.dtype == r.state.dtype == r.reward.dtype == r.value.dtype == np.float32
    assert r.mask.dtype == np.bool_ and r.action.dtype == np.int64
    assert np.isfinite(r.reward).all() and np.isfinite(r.value).all()
    assert r.mask[np.arange(n), r.action].all()
    # (hand, seat) groups are contiguous and done marks the last row of each, nothing else.
    key = r.hand * 4 + r.seat
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    assert len(starts) == len(set(key.tolist())) == int(r.done.sum())
    assert r.done[np.r_[starts[1:] - 1, n - 1]].all()
    # The stored log-probabilities and values are the network's on the stored inputs (state included).
    with torch.no_grad():
        logits, value = net(torch.from_numpy(r.obs), torch.from_numpy(r.mask), torch.from_numpy(r.state))
    logp = torch.log_softmax(logits, 1).gather(1, torch.from_numpy(r.action)[:, None]).squeeze(1)
    np.testing.assert_allclose(logp.numpy(), r.logprob, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(value.numpy(), r.value, rtol=1e-4, atol=1e-4)
    # The oracle's planes are the AEC env's state() at each decision: check the first hand's first row.
    hand = r.hands[int(r.hand[0])]
    env = blood_battle_v0.raw_env()
    env.reset(seed=hand.seed)
    for action in hand.actions:
        if env.possible_agents.index(env.agent_selection) == r.seat[0]:
            break
        env.step(action)
    np.testing.assert_array_equal(r.state[0], env.state())


def test_bfloat16_rollouts_store_the_sampling_policy_and_stay_close_to_float32(tmp_path: Path) -> None:
    """rollout_dtype: bfloat16 runs the workers' network under autocast and stores the log-probabilities
    of the policy that sampled (the ones PPO's ratio divides by): legal actions, finite values, close
    to the float32 network's on the same inputs. The default stays float32."""
    dtypes: dict[str, list] = {}
    rollouts = {}
    for dtype in ("float32", "bfloat16"):
        worker = RolloutWorker(tiny(tmp_path, envs_per_worker=8, rollout_dtype=dtype), 0)
        worker.net.register_forward_hook(lambda module, inputs, out, seen=dtypes.setdefault(dtype, []):
                                         seen.append(out[0].dtype))
        rollouts[dtype] = worker.collect(1, all_weights(fresh_net(worker.cfg)), {}, [], 300)
    assert set(dtypes["float32"]) == {torch.float32} and set(dtypes["bfloat16"]) == {torch.bfloat16}
    r, net = rollouts["bfloat16"], fresh_net(tiny(tmp_path))
    n = len(r.action)
    assert r.logprob.dtype == r.value.dtype == np.float32
    assert r.mask[np.arange(n), r.action].all()
    assert np.isfinite(r.logprob).all() and (r.logprob <= 0).all() and np.isfinite(r.value).all()
    obs, mask, action = torch.from_numpy(r.obs), torch.from_numpy(r.mask), torch.from_numpy(r.action)[:, None]
    with torch.no_grad():
        logits, value = net(obs, mask)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits16, value16 = net(obs, mask)
    logp32 = torch.log_softmax(logits, 1).gather(1, action).squeeze(1).numpy()
    logp16 = torch.log_softmax(logits16.float(), 1).gather(1, action).squeeze(1).numpy()
    # Batches differ from the test's one batch, and bfloat16 kernels may round by batch shape.
    np.testing.assert_allclose(r.logprob, logp16, atol=2e-3)
    np.testing.assert_allclose(r.value, value16.float().numpy(), atol=2e-3)
    np.testing.assert_allclose(r.logprob, logp32, atol=0.05)
    np.testing.assert_allclose(r.value, value.numpy(), atol=0.05)
    for field in ("rollout_dtype", "learner_dtype"):
        with pytest.raises(ValueError, match=f"config field '{field}' must be one of"):
            make_config({field: "float16"})


def test_vector_rollouts_replay_exactly_and_differ_per_update(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, envs_per_worker=4)
    weights = all_weights(fresh_net(cfg))
    a = RolloutWorker(cfg, 0).collect(2, weights, {}, [], 150)
    worker = RolloutWorker(cfg, 0)
    worker.collect(1, weights, {}, [], 150)  # an earlier update in the same worker leaves no trace
    b = worker.collect(2, weights, {}, [], 150)
    c = worker.collect(3, weights, {}, [], 150)
    assert [h.actions for h in a.hands] == [h.actions for h in b.hands]
    np.testing.assert_array_equal(a.obs, b.obs)
    assert [h.seed for h in a.hands] != [h.seed for h in c.hands]


def test_a_deterministic_teacher_plays_the_same_hands_and_credits_in_both_engines(tmp_path: Path) -> None:
    """The heuristic (deterministic) on the hand seeds of a vector rollout, played through the AEC
    env: the same actions, and the per-seat credited beans and sample counts of the AEC crediting."""
    cfg = tiny(tmp_path, envs_per_worker=3)
    vector = RolloutWorker(cfg, 0).collect(1, all_weights(fresh_net(cfg)), {}, [], 100, imitate=True)
    teacher, rng = load_policy("heuristic"), np.random.default_rng(0)
    for h, hand in enumerate(vector.hands):
        env = blood_battle_v0.raw_env()
        env.reset(seed=hand.seed)
        actors, rewards, actions = [], [], []
        while not env.game.over:
            o = env.observe(env.agent_selection)
            actors.append(env.possible_agents.index(env.agent_selection))
            actions.append(teacher.act(o["observation"], o["action_mask"], rng))
            env.step(actions[-1])
            rewards.append([int(env.rewards[a]) for a in env.possible_agents])
        assert actions == hand.actions
        credit = credit_rewards(actors, rewards)
        for seat in range(4):
            rows = (vector.hand == h) & (vector.seat == seat)
            assert vector.beans[rows].tolist() == [c for c, a in zip(credit, actors) if a == seat]
            assert sum(credit[t] for t, a in enumerate(actors) if a == seat) == hand.beans[seat]


def test_engine_field_is_checked() -> None:
    assert make_config({}).engine == "compiled"
    with pytest.raises(ValueError, match="config field 'engine' must be one of"):
        make_config({"engine": "jax"})


@pytest.mark.parametrize("old, new", [("vector", "compiled"), ("aec", "reference")])
def test_the_old_engine_names_load_as_the_backends_with_a_warning(old: str, new: str, tmp_path: Path) -> None:
    """Config files and runs before the backends (``engine: vector | aec``) still load."""
    old_file = tmp_path / "old.yaml"
    old_file.write_text(f"engine: {old}\nworkers: 1\n")
    from train.config import load_yaml, parse_args

    with pytest.warns(FutureWarning, match=f"'engine': '{old}' is the deprecated name of '{new}'"):
        assert make_config(load_yaml(old_file)).engine == new
    with pytest.warns(FutureWarning, match=f"write engine: {new}"):
        assert parse_args(["--engine", old])[0].engine == new
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert make_config({"engine": new}).engine == new


def test_both_backends_give_the_same_rollout(tmp_path: Path) -> None:
    """The learner (with the oracle critic's state planes), a pool snapshot and a baseline, duplicate
    deals: the compiled and the reference backend play the same hands and return the same arrays
    (the networks see the same batches)."""
    cfg = tiny(tmp_path, envs_per_worker=8, duplicate_rollouts=True, baseline_opponents=["heuristic"],
               baseline_prob=0.5, bc_coef=0.5, oracle_critic=True)
    rollouts = []
    for engine in ("compiled", "reference"):
        worker = RolloutWorker(dataclasses.replace(cfg, engine=engine), 0)
        learner = PolicyValueNet(**worker.arch, state_planes=worker.net.arch["state_planes"],
                                 generator=torch.Generator().manual_seed(cfg.seed))
        snaps = {7: policy_weights(_net(dataclasses.replace(cfg, seed=9), worker))}
        rollouts.append(worker.collect(2, all_weights(learner), snaps, [(7, 1.0)], 300))  # update 2: all three sit
    com, ref = rollouts
    assert com.hands == ref.hands and len(com.hands) >= 8
    assert {LEARNER, 7, BASELINE} <= {who for h in com.hands for who in h.lineup}
    for name in ("obs", "mask", "state", "action", "logprob", "value", "reward", "beans", "done", "hand", "seat",
                 "par"):
        np.testing.assert_array_equal(getattr(com, name), getattr(ref, name), err_msg=name)
    assert len(com.demos.action) > 0
    for name in ("obs", "mask", "action"):  # the baseline's decisions, kept for bc_coef
        np.testing.assert_array_equal(getattr(com.demos, name), getattr(ref.demos, name), err_msg=name)
    assert com.all_decisions == ref.all_decisions


def test_device_auto_picks_cuda_when_present_and_an_absent_cuda_fails_up_front() -> None:
    from train.ppo import check_device

    assert make_config({}).device == "auto"
    assert check_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if torch.cuda.is_available():
        assert check_device("cuda").type == "cuda"
    else:
        with pytest.raises(ValueError, match="config field 'device': no cuda device on this machine; use --device auto"):
            check_device("cuda")


@pytest.mark.parametrize("overlap", [True, False])
def test_overlap_collects_the_next_rollouts_with_the_weights_before_the_update(tmp_path: Path, overlap: bool,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import train.ppo as ppo
    from train.backends import InlineWorkers

    submitted, before_update = {}, {}

    class Recording(InlineWorkers):
        def submit(self, update, weights, snapshots, pool, imitate=False):
            submitted[update] = {k: v.copy() for k, v in weights.items()}
            super().submit(update, weights, snapshots, pool, imitate)

    real_update = ppo.ppo_update

    def recording_update(net, optimizer, batch, cfg, rng):
        before_update[len(before_update) + 1] = all_weights(net)
        return real_update(net, optimizer, batch, cfg, rng)

    monkeypatch.setattr(ppo, "make_workers", Recording)
    monkeypatch.setattr(ppo, "ppo_update", recording_update)
    ppo.train(tiny(tmp_path, total_decisions=450, overlap=overlap))
    updates = sorted(before_update)
    assert len(updates) >= 3 and sorted(submitted) == updates  # no request left over at the end
    for u in updates:
        # overlap: update u's hands were played with the weights before update u - 1 (a lag of one)
        lagged = before_update[u - 1] if overlap and u > 1 else before_update[u]
        for k, v in lagged.items():
            np.testing.assert_array_equal(submitted[u][k], v, err_msg=f"update {u}, {k}")
    assert not np.array_equal(before_update[1]["trunk.stem.linear.weight"], before_update[2]["trunk.stem.linear.weight"])


def test_duplicate_rollouts_play_each_deal_in_four_rotations_and_subtract_the_par(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, envs_per_worker=8, duplicate_rollouts=True, baseline_opponents=["heuristic"],
               baseline_prob=0.5)
    worker = RolloutWorker(cfg, 0)
    net = _net(cfg, worker)
    snaps = {7: policy_weights(_net(dataclasses.replace(cfg, seed=9), worker))}
    r = worker.collect(1, all_weights(net), snaps, [(7, 1.0)], 400)
    assert _check_against_aec(r, cfg, worker) >= 8  # every hand is a real hand of its seed, credited as before
    sets: dict[int, list[int]] = {}
    for h, hand in enumerate(r.hands):
        sets.setdefault(hand.seed, []).append(h)
    assert len(sets) >= 3 and all(len(hs) == 4 for hs in sets.values())  # every started deal: four rotations
    for hs in sets.values():
        lineups = [r.hands[h].lineup for h in hs]
        first = lineups[0]  # the four rotations of one lineup: every policy plays every seat of the deal
        assert sorted(lineups) == sorted(first[-k:] + first[:-k] for k in range(4))
        for h in hs:
            beans = np.array([r.hands[o].beans for o in hs if o != h], dtype=np.float64)
            for seat in range(4):
                rows = np.flatnonzero((r.hand == h) & (r.seat == seat))
                if rows.size == 0:
                    continue
                par = beans[:, seat].mean() / worker.scale  # what the others made of this seat's cards
                np.testing.assert_allclose(r.par[rows], par, rtol=1e-6, atol=1e-7)
                advantage = duplicate_advantages(r.reward, r.done, r.par)[rows]
                np.testing.assert_allclose(advantage, r.beans[rows].sum() / worker.scale - par, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(r.reward, (r.beans / worker.scale).astype(np.float32))  # rewards stay the beans
    with pytest.raises(ValueError, match="'duplicate_rollouts' needs envs_per_worker a multiple of 4"):
        tiny(tmp_path, duplicate_rollouts=True, envs_per_worker=6)
