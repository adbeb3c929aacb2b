"""Parity harness: random legal play through ``mjenv.vector`` and ``blood_battle_v0.raw_env`` side by side.

Table ``i`` of a vector env reset with seed ``s`` is replayed by one ``raw_env`` reset with ``s + i``
and unseeded after each episode; at every step both must agree on the seat to act, the mask, the
observation, the rewards and (``check_state``) ``state()``; at each episode end on the beans, the
winners and the end reason.
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
    """Play until every table has finished ``episodes`` episodes; assert parity at every step."""
    n = venv.num_envs
    refs = [blood_battle_v0.raw_env(**options) for _ in range(n)]
    for i, e in enumerate(refs):
        e.reset(seed=seed + i)
    obs, info = venv.reset(seed=seed)
    rng = np.random.default_rng(rng_seed)
    finished = np.zeros(n, dtype=np.int64)
    steps = 0
    ends: dict[str, int] = {}
    while finished.min() < episodes:
        _compare(refs, obs, info, venv.state() if check_state else None, steps)
        actions = mixed_actions(obs, rng)
        obs, rewards, term, trunc, info = venv.step(actions)
        steps += 1
        for i, e in enumerate(refs):
            e.step(int(actions[i]))
            want = [e.rewards[a] for a in e.possible_agents]
            assert rewards[i].tolist() == want, f"step {steps} table {i}: rewards {rewards[i]} != {want}"
            done = all(e.terminations.values())
            assert bool(term[i]) == done, f"step {steps} table {i}: terminated {term[i]} != {done}"
            if done:
                beans = [e.infos[a]["beans"] for a in e.possible_agents]
                assert info["beans"][i].tolist() == beans, f"table {i}: beans {info['beans'][i]} != {beans}"
                reason = e.infos["player_0"]["end_reason"]
                assert info["end_reason"][i] == reason, f"table {i}: end {info['end_reason'][i]} != {reason}"
                assert info["won"][i].tolist() == list(e.game.won), f"table {i}: won {info['won'][i]}"
                ends[reason] = ends.get(reason, 0) + 1
                finished[i] += 1
                e.reset()
    _compare(refs, obs, info, venv.state() if check_state else None, steps)
    return {"steps": steps, "episodes": int(finished.sum()), **ends}


def _compare(refs: list, obs: dict[str, np.ndarray], info: dict[str, Any], state: np.ndarray | None,
             steps: int) -> None:
    for i, e in enumerate(refs):
        seat = e.game.current_player
        assert info["seat"][i] == seat, f"step {steps} table {i}: seat {info['seat'][i]} != {seat}"
        ref = e.observe(e.agent_selection)
        np.testing.assert_array_equal(obs["action_mask"][i], ref["action_mask"],
                                      err_msg=f"step {steps} table {i}: mask")
        np.testing.assert_array_equal(obs["observation"][i], ref["observation"],
                                      err_msg=f"step {steps} table {i}: observation")
        if state is not None:
            np.testing.assert_array_equal(state[i], e.state(), err_msg=f"step {steps} table {i}: state")
