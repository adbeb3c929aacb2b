"""Helpers shared by the blood-battle and Joy Mahjong tests.

Each helper takes the game, env or env constructor it works on, so one copy serves both games;
the test files keep what is particular to a game (its rules, its scripts, its expected values).
Test modules import it as ``from tests.support import ...`` (``tests/`` is a package, laid out like
the project's packages; the repository root is on ``sys.path`` under pytest).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from pettingzoo import AECEnv

import mjenv
from mjenv import cli, tiles
from mjenv.actions import ActionLayout
from mjenv.config import as_dict
from mjenv.engine.core import N_SEATS, GameCore
from mjenv.engine.joy_mahjong import JoyMahjongGame
from mjenv.replay import read_log, verify_log
from mjenv.rules.shapes import shanten

Script = list[tuple[int, int]]

ROOT = Path(__file__).resolve().parents[1]
"""The repository's root folder."""

# ---------------------------------------------------------------------------- random play on the raw env


def eager_claims(layout: ActionLayout) -> tuple[int, ...]:
    """What eager play takes first when legal: 胡, 抢杠, 直杠, and in a game with 吃 also 碰 and 吃."""
    claims = (layout.HU, layout.ROB_KONG, layout.DIRECT_KONG)
    if layout.CHOW >= 0:  # blood battle leaves 碰 to chance: its logged test games were made so
        claims += (layout.PONG, layout.CHOW, layout.CHOW + 1, layout.CHOW + 2)
    return claims


def pick_action(layout: ActionLayout, mask: np.ndarray, rng: np.random.Generator, eager: bool) -> int:
    """A random legal action; ``eager`` takes the eager claims, then an own kong, when legal."""
    legal = np.flatnonzero(mask)
    if eager:
        for a in eager_claims(layout):
            if mask[a]:
                return a
        kongs = legal[(legal >= layout.KONG) & (legal < 2 * layout.KONG)]
        if kongs.size:
            return int(kongs[0])
    return int(legal[rng.integers(legal.size)])


def finish_hand(e: AECEnv, rng: np.random.Generator, eager: bool = False) -> tuple[list[int], int]:
    """Play a raw env to the end of its episode; return each seat's summed rewards and the steps."""
    totals, steps = [0] * 4, 0
    while not all(e.terminations.values()):
        # The engine's mask is the env's mask; skipping observe() keeps hundreds of games fast.
        e.step(pick_action(e.layout, e.game.legal_mask(), rng, eager))
        steps += 1
        for i, a in enumerate(e.possible_agents):
            totals[i] += e.rewards[a]
    return totals, steps


def play_episode(e: AECEnv, seed: int, eager: bool = False,
                 options: dict | None = None) -> tuple[list[int], int]:
    """Play one episode of a raw env; return each seat's summed rewards and the number of steps."""
    e.reset(seed=seed, options=options)
    return finish_hand(e, np.random.default_rng(seed + 1), eager)


# ---------------------------------------------------------------------------- replay logs


def finish_vector_table(venv: Any, obs: dict, policy: Any, t: int) -> np.ndarray:
    """Step only table ``t`` of a vector env with ``policy`` at every seat to the end of its hand;
    that hand's final beans (per seat)."""
    active = np.zeros(venv.num_envs, dtype=np.bool_)
    active[t] = True
    while active[t]:
        obs, _, terminated, _, info = venv.step(policy.act_batch(obs["observation"], obs["action_mask"], None),
                                                active=active)
        active &= ~terminated
    return info["beans"][t]


def blood_battle_turns(seed: int, tables: int, steps: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray, dict]]:
    """(observation, mask, every state field of the table) at each own-turn decision of
    ``tables`` happy-preset tables of four compiled heuristics, at the ``steps`` given."""
    import mjenv.vector as mv
    from agents.heuristic import HeuristicPolicy
    from mjenv.vector.engine import blood_battle as eng

    venv = mv.make("blood_battle", tables, copy=False, preset="happy")
    heuristic = HeuristicPolicy(rules=venv.backend.rules)
    obs, _ = venv.reset(seed=seed)
    found = []
    for step in range(max(steps) + 1):
        a = venv.backend.arrays
        if step in steps:
            for t in np.flatnonzero(a.phase == eng.TURN):
                found.append((obs["observation"][t].copy(), obs["action_mask"][t].copy(),
                              {f: getattr(a, f)[t].copy() for f in eng.FIELDS}))
        obs, _, _, _, _ = venv.step(heuristic.act_batch(obs["observation"], obs["action_mask"], None))
    venv.close()
    return found


def read_records(path: Path) -> list[dict]:
    """The records of a log file, one per line."""
    return [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines()]


def round_trip(tmp_path: Path, raw_env: Callable, game: str, configs: list[dict], hands: int,
               eager: Callable[[int], bool]) -> tuple[Counter, Counter, int]:
    """Log and verify ``hands`` episodes per config; return the line-type and pay-reason tallies, and games."""
    # Each log must agree with the play: hand indices, game, beans paid and action counts.
    kinds, reasons, games = Counter(), Counter(), 0
    for c, config in enumerate(configs):
        path = tmp_path / f"config{c}.jsonl"
        e = raw_env(log_path=str(path), **config)
        paid, steps = [0] * 4, 0
        for i in range(hands):
            totals, n = play_episode(e, seed=1000 * c + 7 * i, eager=eager(i))
            paid = [p + t for p, t in zip(paid, totals)]
            steps += n
            games += 1

        def count(ll, _game):
            """Tally the verified lines by type and pay reason."""
            kinds[ll.record["type"]] += 1
            if ll.record["type"] == "pay":
                reasons[ll.record["reason"]] += 1
            if ll.record.get("replacement"):
                kinds["replacement draw"] += 1

        result = verify_log(path, on_line=count)
        m = config.get("match_hands", 1)
        assert [h.hand_index for h in result.hands] == [k % m for k in range(hands * m)]
        assert {h.game for h in result.hands} == {game}
        assert result.beans == paid
        assert sum(h.actions for h in result.hands) == steps
    return kinds, reasons, games


def header(e: AECEnv, game: str, preset: str, seed: int, hand_index: int = 0) -> dict:
    """The header line the env ``e`` writes for a hand of ``game``."""
    return {"type": "header", "game": game, "preset": preset, "options": as_dict(e.rules),
            "seed": seed, "hand_index": hand_index, "env_version": f"{game}_v0",
            "mjenv_version": mjenv.__version__}


def action_lines(e: AECEnv, records: list[dict], steps: int) -> list[dict]:
    """The action records, after checking there is one per step, each named as the env names it."""
    actions = [r for r in records if r["type"] == "action"]
    assert len(actions) == steps
    assert all(r["name"] == e.action_name(r["action"]) for r in actions)
    return actions


def check_scripted_wall_replay(tmp_path: Path, raw_env: Callable, seeded_wall: Callable,
                               **options: Any) -> None:
    """A hand dealt from a given wall logs that wall and ``options`` in start_hand, and verifies."""
    path = tmp_path / "g.jsonl"
    wall = list(reversed(seeded_wall(9)[0]))  # not the wall of seed 5
    play_episode(raw_env(log_path=path), seed=5, options={"wall": wall, **options})
    assert read_log(path)[0].lines[0].record == {"type": "start_hand", "wall": wall, **options}
    assert verify_log(path).hands[0].dealer == options["dealer"]


def check_no_log_without_log_path(raw_env: Callable, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An env made without ``log_path`` records nothing and writes no file."""
    monkeypatch.chdir(tmp_path)
    e = raw_env()
    play_episode(e, seed=1)
    assert e._log_actions is None  # nothing recorded on the hot path
    assert list(tmp_path.iterdir()) == []


def write_log(tmp_path: Path, lines: list[str], name: str = "t.jsonl") -> Path:
    """Write ``lines`` (with their newlines) to a log file."""
    path = tmp_path / name
    path.write_text("".join(lines), encoding="utf-8")
    return path


def line_indices(lines: list[str], kind: str) -> list[int]:
    """The 0-based indices of the lines of type ``kind``."""
    return [i for i, t in enumerate(lines) if json.loads(t)["type"] == kind]


def edit_line(lines: list[str], kind: str, change: Callable[[dict], Any],
              nth: int = 0) -> tuple[list[str], int]:
    """Apply ``change`` to the nth line of ``kind``; return the new lines and its 1-based number."""
    idx = line_indices(lines, kind)[nth]
    rec = json.loads(lines[idx])
    change(rec)
    out = list(lines)
    out[idx] = json.dumps(rec, ensure_ascii=False) + "\n"
    return out, idx + 1


def drop_line(lines: list[str], kind: str, nth: int = 0) -> tuple[list[str], int]:
    """Delete the nth line of ``kind``; return the new lines and the 1-based number it had."""
    idx = line_indices(lines, kind)[nth]
    return lines[:idx] + lines[idx + 1:], idx + 1


def expect_log_error(tmp_path: Path, lines: list[str], line: int, error: type[Exception],
                     match: str | None = None, check: Callable = read_log) -> None:
    """``check`` (read_log or verify_log) on ``lines`` raises ``error`` (matching ``match``) at ``line``."""
    with pytest.raises(error, match=match) as err:
        check(write_log(tmp_path, lines))
    assert err.value.line == line


def cli_status(argv: list[str]) -> int:
    """The exit status of ``mjenv ARGV``, whether it returns or argparse exits (a bad argument)."""
    try:
        return cli.main(argv)
    except SystemExit as exc:
        return int(exc.code)


def cli_replay(tmp_path: Path, capsys: pytest.CaptureFixture, lines: list[str], *flags: str,
               name: str = "t.jsonl") -> tuple[int, str, str]:
    """Run ``mjenv replay`` on ``lines``; return its exit code, stdout and stderr."""
    code = cli.main(["replay", *flags, str(write_log(tmp_path, lines, name))])
    out = capsys.readouterr()
    return code, out.out, out.err


# ---------------------------------------------------------------------------- engine invariants


def tile_total(g: GameCore) -> int:
    """Tiles in the wall, hands, melds, rivers and won piles, and in Joy the flowers and indicator."""
    total = (g.wall_count + sum(map(sum, g.hands))
             + sum(len(m.kinds()) for ms in g.melds for m in ms)
             + sum(map(len, g.rivers)) + sum(map(len, g.won_tiles)))
    if isinstance(g, JoyMahjongGame):  # flowers set aside, the indicator and flowers flipped before it
        total += sum(map(len, g.flowers)) + 1 + len(g.indicator_flowers)
    return total


def best_discard(g: GameCore, discards: list[int]) -> int:
    """The discard that leaves the seat asked the lowest shanten (the first on ties)."""
    hand = g.hands[g.current_player]
    n_melds = len(g.melds[g.current_player])

    def after(a: int) -> int:
        hand[a] -= 1
        v = shanten(hand, n_melds)
        hand[a] += 1
        return v
    return min(discards, key=after)


def play_random_game(new_game: Callable, rules: Any, seed: int, n_tiles: int,
                     pick: Callable[[GameCore, list[int], np.random.Generator], int],
                     check: Callable[[GameCore, list[int]], None] | None = None) -> GameCore:
    """Play one hand with ``pick``, checking the tile count, ``check`` and the bean sums (B1-B2)."""
    g = new_game(rules, seed)
    rng = np.random.default_rng(seed + 1)
    totals = [0] * N_SEATS
    steps = 0
    while not g.over:
        assert tile_total(g) == n_tiles
        assert 0 <= g.current_player < N_SEATS
        legal = g.legal_actions()
        assert legal, f"seat {g.current_player} has no legal action in phase {g.phase}"
        # docs/rules-blood-battle.md#forced-moves: a seat with no choice must not be asked.
        assert len(legal) >= 2, f"seat {g.current_player} in phase {g.phase} asked with only {legal}"
        if check is not None:
            check(g, legal)
        delta = g.apply(pick(g, legal, rng))
        totals = [t + d for t, d in zip(totals, delta)]
        steps += 1
        assert steps < 1000
    assert tile_total(g) == n_tiles
    assert totals == g.beans
    assert sum(g.beans) == -4 * rules.rake
    return g


# ---------------------------------------------------------------------------- the AEC env


def play_aec(e: AECEnv, rng: np.random.Generator, choose: Callable | None = None,
             on_turn: Callable | None = None) -> dict[str, int]:
    """Play a reset AEC env to its end; return each agent's summed rewards, checked against its info."""
    # ``choose(legal, rng)`` picks the moves (uniform by default); ``on_turn(e)`` runs before each.
    got = {a: 0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        got[agent] += reward
        if term or trunc:
            assert info["beans"] == got[agent]
            e.step(None)
            continue
        if on_turn is not None:
            on_turn(e)
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) >= 1
        e.step(int(choose(legal, rng) if choose is not None else rng.choice(legal)))
    return got


def check_rewards_sum_to_beans(make_env: Callable, games: int, rake: int,
                               choose: Callable | None = None) -> None:
    """Through the env: each agent's rewards sum to its bean total; the totals sum to -4A."""
    for seed in range(games):
        e = make_env()
        e.reset(seed=seed)
        got = play_aec(e, np.random.default_rng(seed), choose)
        assert sum(got.values()) == -4 * rake
        assert list(got.values()) == e.unwrapped.game.beans


def play_until(e: AECEnv, pred: Callable, rng: np.random.Generator) -> None:
    """Random legal play through a raw env until ``pred(e)`` holds."""
    while not pred(e):
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))


def check_spaces_are_stable(e: AECEnv) -> None:
    """The spaces are cached, the mask is int8, and each observation is a fresh dict in its space."""
    e.reset(seed=3)
    assert e.observation_space("player_0") is e.observation_space("player_0")
    assert e.action_space("player_1") is e.action_space("player_2")
    obs = e.observe(e.agent_selection)
    assert obs["action_mask"].dtype == np.int8
    assert e.observation_space("player_0").contains(obs)
    assert obs is not e.observe(e.agent_selection)  # a fresh dict every call
    assert e.state_space.contains(e.state())


def check_hidden_tiles_do_not_leak(e: AECEnv) -> None:
    """Two states differing only in another seat's concealed tiles look the same to a seat."""
    rng = np.random.default_rng(0)
    e.reset(seed=5)
    play_until(e, lambda e: e.game.phase == "turn" and len(e.game.rivers[e.game.dealer]) >= 3, rng)
    g = e.game
    other = (g.current_player + 2) % 4
    twin = g.clone()
    # Swap one concealed tile of `other` with a different kind deep in the wall (not a flower:
    # flowers are the kinds past the game's n_kinds).
    n = e.layout.n_kinds
    held = next(k for k in range(n) if twin.hands[other][k])
    pos = next(i for i in range(twin.tail - 1, twin.head + 5, -1)
               if twin.wall[i] != held and twin.wall[i] < n)
    swapped = twin.wall[pos]
    twin.hands[other][held] -= 1
    twin.hands[other][swapped] += 1
    twin.wall[pos] = held
    assert not np.array_equal(e.observer.state(g), e.observer.state(twin))
    for seat in range(4):
        if seat != other:
            np.testing.assert_array_equal(e.observer.observe(g, seat), e.observer.observe(twin, seat))
    assert not np.array_equal(e.observer.observe(g, other), e.observer.observe(twin, other))


def check_illegal_action_changes_nothing(e: AECEnv, illegal_match: str, error: type[Exception]) -> None:
    """Masked-out actions, an action outside the space and ``None`` raise and change nothing."""
    e.reset(seed=2)
    agent = e.agent_selection
    before_obs = e.observe(agent)
    before_state = e.state()
    events = len(e.game.events)
    masked = np.flatnonzero(before_obs["action_mask"] == 0)
    for illegal in (masked[0], masked[-1]):
        with pytest.raises(error, match=illegal_match):
            e.step(int(illegal))
    with pytest.raises(error, match="legal"):
        e.step(10_000)
    with pytest.raises(error, match="must act"):
        e.step(None)
    assert e.agent_selection == agent and len(e.game.events) == events
    np.testing.assert_array_equal(e.state(), before_state)
    np.testing.assert_array_equal(e.observe(agent)["observation"], before_obs["observation"])
    np.testing.assert_array_equal(e.observe(agent)["action_mask"], before_obs["action_mask"])


def check_reference_table(e: AECEnv, module: Any) -> None:
    """The env module's docstring states its action, observation and state spaces as they are."""
    doc = module.__doc__
    obs_shape = e.observation_space("player_0")["observation"].shape
    assert f"Discrete({e.action_space('player_0').n})" in doc
    assert f"{obs_shape}, float32" in doc
    assert f"{e.state_space.shape}, float32" in doc


def check_shared_planes(e: AECEnv, obs: np.ndarray, n_tiles: int) -> None:
    """The planes both games have decode to the game, seat-relative (self, +1, +2, +3)."""
    g, v = e.game, e.observer.views
    seat = g.current_player
    n = e.layout.n_kinds
    np.testing.assert_array_equal(obs[v["hand"]].sum(axis=0), g.hands[seat][:n])
    for r in range(4):
        s = (seat + r) % 4
        np.testing.assert_allclose(obs[v["river"]][r] * 4, np.bincount(g.rivers[s], minlength=n))
        assert obs[v["recent"]][4 * r, g.rivers[s][-1]] == 1
        assert obs[v["dealer"]][r, 0] == (s == g.dealer)
    assert obs[v["wall"]][0, 0] == pytest.approx(g.wall_count / n_tiles)
    if g.drawn is not None:
        assert obs[v["drawn"]][0, g.drawn] == 1


# ---------------------------------------------------------------------------- scripted games


def T(tile: str) -> int:
    """The kind of ``tile`` ('5m', 'E', '3f')."""
    return tiles.parse_tile(tile)


def wall_back(tail: str, last: str) -> str:
    """The back of a scripted wall: ``tail`` replacements, then ``last``, the final head draws, in order."""
    return tail + " " + " ".join(tiles.name(k) for k in reversed(tiles.parse(last)))


def legal(g: GameCore) -> set[str]:
    """The legal actions of the seat asked, by name (``hu``, ``pass``, ``discard 5p`` ...)."""
    return {g.layout.name(a) for a in g.legal_actions()}


def play(g: GameCore, script: Script) -> list[int]:
    """Play ``(seat, action)`` steps, checking that ``seat`` is the one asked; the summed deltas."""
    total = [0] * 4
    for seat, action in script:
        assert g.current_player == seat, (
            f"expected seat {seat} to play {g.layout.name(action)}, but seat {g.current_player} is "
            f"asked (phase {g.phase}, legal {sorted(legal(g))})")
        total = [t + d for t, d in zip(total, g.apply(action))]
    return total


def burn(g: GameCore, wall: int | None = None) -> list[int]:
    """Discard each drawn tile and pass every claim until the end or ``wall`` tiles left; the summed deltas."""
    # Hands do not change, so a seat that is not ready stays not ready.
    total = [0] * 4
    while not g.over and not (wall is not None and g.phase == "turn" and g.wall_count == wall):
        if g.phase == "turn":
            assert g.drawn is not None, "burn only runs through plain draws"
            action = g.layout.DISCARD + g.drawn
        else:
            action = g.layout.PASS
        total = [t + d for t, d in zip(total, g.apply(action))]
    return total


def pays(g: GameCore, reason: str = "win") -> list[tuple[int, int, int]]:
    """(payer, payee, beans) of the pay events with ``reason``, sorted."""
    return sorted((e["from"], e["to"], e["beans"]) for e in g.events
                  if e["type"] == "pay" and e["reason"] == reason)
