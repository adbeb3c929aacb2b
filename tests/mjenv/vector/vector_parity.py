"""Parity harness: random legal play through ``mjenv.vector`` and ``blood_battle_v0.raw_env`` side by side.

Table ``i`` of a vector env reset with seed ``s`` is replayed by one ``raw_env`` reset with ``s + i``
and unseeded after each episode; at every step both must agree on the seat to act, the mask, the
observation, the rewards and (``check_state``) ``state()``, and with the rule options on who has
escaped and every seat's balance; at each episode end on the beans, the winners, the end reason,
with the options the seats that escaped, the balances and how the match ended, and (for an env
made with ``final_observations=True``) every seat's view of the finished table. Rule IDs:
docs/rules-blood-battle.md.
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


def mixed_actions(obs: dict[str, np.ndarray], rng: np.random.Generator,
                  escape_rate: float | np.ndarray = 0.0) -> np.ndarray:
    """Every third table plays uniformly at random; the others take 胡, 抢杠, 杠, 碰 and own kongs when
    legal and discard their most isolated tile, so that hands are won (every scoring path is met).
    With the ESCAPE action in the masks (rule option escape), every table escapes with probability
    ``escape_rate`` (one, or one per table) and otherwise plays as above."""
    mask = obs["action_mask"]
    escapes = mask.shape[1] > L.n
    if escapes:  # the game's own actions; ESCAPE is drawn apart
        obs = {"observation": obs["observation"], "action_mask": mask[:, :L.n]}
        actions = mixed_actions(obs, rng)
        actions[rng.random(len(mask)) < escape_rate] = L.n
        return actions
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
                 rng_seed: int = 0, escape_rate: float | np.ndarray = 0.0, hands: int = 0) -> dict[str, int]:
    """Play until ``episodes`` episodes and ``hands`` hands have finished over all tables; assert
    parity at every step (tables keep playing until the totals are reached, so every table
    contributes). Returns counts of the steps, episodes, hands, end reasons (of each episode's last
    hand), and with the options escapes, payments cut short by a balance (``short_<reason>``) and
    matches ended by min_beans."""
    n = venv.num_envs
    refs = [blood_battle_v0.raw_env(**options) for _ in range(n)]
    for i, e in enumerate(refs):
        e.reset(seed=seed + i)
    obs, info = venv.reset(seed=seed)
    rng = np.random.default_rng(rng_seed)
    finished, steps, hands_done = 0, 0, 0
    ends: dict[str, int] = {}
    while finished < episodes or hands_done < hands:
        _compare(refs, obs, info, venv.state() if check_state else None, steps, venv.backend)
        actions = mixed_actions(obs, rng, escape_rate)
        obs, rewards, term, trunc, info = venv.step(actions)
        steps += 1
        want = np.zeros((n, 4), dtype=np.float32)
        for i, e in enumerate(refs):
            g = e.game
            e.step(int(actions[i]))
            hands_done += g.over
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
                _count_options(ends, e, info, i)
                finished += 1
                e.reset()
        _same(rewards, want, "rewards", steps)
    _compare(refs, obs, info, venv.state() if check_state else None, steps, venv.backend)
    return {"steps": steps, "episodes": finished, "hands": hands_done, **ends}


def _count_options(ends: dict[str, int], e: Any, info: dict[str, Any], i: int) -> None:
    """At an episode's end with the rule options: the seats that escaped, the balances and how the
    match ended must agree; count escapes, seats drained to 0 and matches stopped by min_beans."""
    g = e.game
    if e.rules.escape:
        assert info["escaped"][i].tolist() == list(g.escaped), f"table {i}: escaped {info['escaped'][i]}"
        penalty = [sum(x.get("penalty", 0) for x in g.events if x["type"] == "escape" and x["actor"] == s)
                   for s in range(4)]
        assert info["penalty"][i].tolist() == penalty, f"table {i}: 扣豆 {info['penalty'][i]} != {penalty}"
        ends["escapes"] = ends.get("escapes", 0) + sum(g.escaped)
    if e.rules.bankroll is not None:
        balances = [e.infos[a]["balance"] for a in e.possible_agents]
        assert info["balances"][i].tolist() == balances, f"table {i}: balances {info['balances'][i]} != {balances}"
        match_end = e.infos["player_0"]["match_end"]
        assert info["match_end"][i] == match_end, f"table {i}: match end {info['match_end'][i]} != {match_end}"
        ends["min_beans"] = ends.get("min_beans", 0) + (match_end == "min_beans")
        for kind in short_payments(g):
            ends[f"short_{kind}"] = ends.get(f"short_{kind}", 0) + 1


def short_payments(g: Any) -> list[str]:
    """The kinds of payment a balance cut short in the hand ``g`` (B4): each ``pay`` event's reason,
    ``penalty`` for an escaper's 扣豆, ``rake`` when some seat could not pay all of it."""
    kinds = [e["reason"] for e in g.events if e["type"] == "pay" and "owed" in e]
    kinds += ["penalty" for e in g.events if e["type"] == "escape" and "penalty_owed" in e]
    penalty = sum(e.get("penalty", 0) for e in g.events if e["type"] == "escape")
    if -sum(g.beans) - penalty < 4 * g.rules.rake:
        kinds.append("rake")
    return kinds


def _same(got: np.ndarray, want: np.ndarray, what: str, steps: int) -> None:
    """Assert equal arrays over all tables; on a difference name the first table that differs."""
    if not np.array_equal(got, want):
        i = next(i for i in range(len(got)) if not np.array_equal(got[i], want[i]))
        np.testing.assert_array_equal(got[i], want[i], err_msg=f"step {steps} table {i}: {what}")


def _compare(refs: list, obs: dict[str, np.ndarray], info: dict[str, Any], state: np.ndarray | None,
             steps: int, backend: Any) -> None:
    seats = np.array([e.game.current_player for e in refs])
    _same(info["seat"], seats, "seat", steps)
    rules = refs[0].rules
    if rules.escape:
        _same(backend.arrays.escaped != 0, np.array([e.game.escaped for e in refs]), "escaped", steps)
    if rules.bankroll is not None:
        _same(backend.arrays.balances, np.array([e.game.balances for e in refs]), "balances", steps)
    ref_obs = [e.observe(e.agent_selection) for e in refs]
    _same(obs["action_mask"], np.array([o["action_mask"] for o in ref_obs]), "mask", steps)
    _same(obs["observation"], np.array([o["observation"] for o in ref_obs]), "observation", steps)
    if state is not None:
        _same(state, np.array([e.state() for e in refs]), "state", steps)
