"""Parity harness: random legal play through ``mjenv.vector`` and ``blood_battle_v0.raw_env`` side by side.

Table ``i`` of a vector env reset with seed ``s`` is replayed by one ``raw_env`` reset with ``s + i``
and unseeded after each episode; at every step both must agree on the seat to act, the mask, the
observation, the rewards and (``check_state``) ``state()``; at each episode end on the beans, the
winners, the end reason and (for an env made with ``final_observations=True``) every seat's view
of the finished table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjenv import blood_battle_v0


L = blood_battle_v0.LAYOUT
_EAGER = (L.HU, L.ROB_KONG, L.DIRECT_KONG, L.PONG)


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask``."""
    u = rng.random(mask.shape) * mask
    return u.argmax(axis=1)


def mixed_actions(obs: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """Every third table plays uniformly at random; the others take 胡, 抢杠, 杠, 碰 and own kongs when
    legal and discard their most isolated tile, so that hands are won (every scoring path is met)."""
    mask = obs["action_mask"]
    actions = random_actions(mask, rng)
    hand = obs["observation"][:, :4].sum(axis=1)  # (N, 27) counts
    padded = np.zeros((len(hand), 3, 13))
    padded[:, :, 2:11] = hand.reshape(-1, 3, 9)
    near = (2 * padded[:, :, 1:12] + padded[:, :, :11] + padded[:, :, 2:13]).reshape(-1, 3, 11)[:, :, 1:10]
    value = 3 * hand + near.reshape(-1, 27) + rng.random(hand.shape)
    discard = np.where(mask[:, L.DISCARD:L.DISCARD + 27] > 0, value, np.inf).argmin(axis=1)
    for i in np.flatnonzero(np.arange(len(mask)) % 3 != 0):
        row = mask[i]
        kongs = np.flatnonzero(row[L.KONG:L.KONG + 27])
        pick = next((a for a in _EAGER if row[a]), None)
        if pick is not None:
            actions[i] = pick
        elif kongs.size:
            actions[i] = L.KONG + kongs[0]
        elif row[L.DISCARD + discard[i]]:
            actions[i] = L.DISCARD + discard[i]
    return actions


def check_parity(venv: Any, options: dict[str, Any], seed: int, episodes: int, check_state: bool = True,
                 rng_seed: int = 0) -> dict[str, int]:
    """Play until ``episodes`` episodes have finished over all tables; assert parity at every step
    (tables keep playing until the total is reached, so every table contributes)."""
    n = venv.num_envs
    refs = [blood_battle_v0.raw_env(**options) for _ in range(n)]
    for i, e in enumerate(refs):
        e.reset(seed=seed + i)
    obs, info = venv.reset(seed=seed)
    rng = np.random.default_rng(rng_seed)
    finished, steps = 0, 0
    ends: dict[str, int] = {}
    while finished < episodes:
        _compare(refs, obs, info, venv.state() if check_state else None, steps)
        actions = mixed_actions(obs, rng)
        obs, rewards, term, trunc, info = venv.step(actions)
        steps += 1
        want = np.zeros((n, 4), dtype=np.float32)
        for i, e in enumerate(refs):
            e.step(int(actions[i]))
            want[i] = [e.rewards[a] for a in e.possible_agents]
            done = all(e.terminations.values())
            assert bool(term[i]) == done, f"step {steps} table {i}: terminated {term[i]} != {done}"
            if done:
                if venv.final_observations:  # every seat's view of the finished table
                    views = np.array([e.observe_seat(s) for s in range(4)])
                    _same(info["final_obs"][i], views, f"table {i}: final observations", steps)
                beans = [e.infos[a]["beans"] for a in e.possible_agents]
                assert info["beans"][i].tolist() == beans, f"table {i}: beans {info['beans'][i]} != {beans}"
                reason = e.infos["player_0"]["end_reason"]
                assert info["end_reason"][i] == reason, f"table {i}: end {info['end_reason'][i]} != {reason}"
                assert info["won"][i].tolist() == list(e.game.won), f"table {i}: won {info['won'][i]}"
                ends[reason] = ends.get(reason, 0) + 1
                finished += 1
                e.reset()
        _same(rewards, want, "rewards", steps)
    _compare(refs, obs, info, venv.state() if check_state else None, steps)
    return {"steps": steps, "episodes": finished, **ends}


def _same(got: np.ndarray, want: np.ndarray, what: str, steps: int) -> None:
    """Assert equal arrays over all tables; on a difference name the first table that differs."""
    if not np.array_equal(got, want):
        i = next(i for i in range(len(got)) if not np.array_equal(got[i], want[i]))
        np.testing.assert_array_equal(got[i], want[i], err_msg=f"step {steps} table {i}: {what}")


def _compare(refs: list, obs: dict[str, np.ndarray], info: dict[str, Any], state: np.ndarray | None,
             steps: int) -> None:
    seats = np.array([e.game.current_player for e in refs])
    _same(info["seat"], seats, "seat", steps)
    ref_obs = [e.observe(e.agent_selection) for e in refs]
    _same(obs["action_mask"], np.array([o["action_mask"] for o in ref_obs]), "mask", steps)
    _same(obs["observation"], np.array([o["observation"] for o in ref_obs]), "observation", steps)
    if state is not None:
        _same(state, np.array([e.state() for e in refs]), "state", steps)
