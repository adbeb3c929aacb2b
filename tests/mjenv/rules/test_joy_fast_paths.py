"""The Joy Mahjong hot paths agree with the slow references, and ``mjenv bench`` covers the game."""

import json
import random

import numpy as np
import pytest

from mjenv import benchmark
from mjenv.cli import main
from mjenv.config import joy_mahjong_rules
from mjenv.engine.joy_mahjong import new_game
from mjenv.rules import joy


def _random_group(rng: random.Random, size: int, with_extra: bool) -> int:
    """A group key: real counts in bytes 0..8, copies held elsewhere in bytes 9..17."""
    h, extra = [0] * size, [0] * size
    for _ in range(rng.randint(0, 12)):
        k = rng.randrange(size)
        h[k] += h[k] < 4
    for _ in range(rng.randint(1, 8) if with_extra else 0):
        k = rng.randrange(size)
        extra[k] += h[k] + extra[k] < 4
    return int.from_bytes(bytes(h), "little") | int.from_bytes(bytes(extra), "little") << 72


def test_group_table_matches_the_completion_search() -> None:
    """can_win's dynamic programme gives the same fewest wildcards as score_win's search."""
    rng = random.Random(11)
    for i in range(3000):
        size = 7 if i % 4 == 3 else 9
        key = _random_group(rng, size, with_extra=i % 3 == 0)
        fills = joy._group_fills(key, size, size == 9)
        melds_only = min((n for n, pair, _ in fills if not pair), default=joy._INF)
        with_pair = min(min((n for n, pair, _ in fills if pair), default=joy._INF), melds_only + 2)
        g = joy._build_group(key, size, size == 9)
        assert (g.need0, g.need0 + g.delta) == (melds_only, with_pair), (key, size)


def test_copies_held_far_from_the_group_tiles_do_not_change_the_entry() -> None:
    """_group drops copies held elsewhere that no wildcard next to a real tile could need."""
    rng = random.Random(12)
    for i in range(3000):
        size = 7 if i % 4 == 3 else 9
        key = _random_group(rng, size, with_extra=True)
        full = joy._build_group(key, size, size == 9)
        raw = key.to_bytes(18, "little")
        g = joy._group(raw[:size] + bytes(34), raw[9:9 + size] + bytes(34), 0, size)
        assert all(getattr(g, f) == getattr(full, f) for f in joy._Group.__slots__), (key, size)


def _near_win(rng: random.Random) -> list[int]:
    """13 tiles close to a winning shape: four melds and a pair, one tile dropped, maybe one
    tile swapped for another."""
    counts = [0] * 34
    shapes = 0
    while shapes < 5:
        k = rng.randrange(34)
        if shapes == 4:
            shape = [k, k]
        elif k >= 27 or rng.random() < 0.4:
            shape = [k, k, k]
        else:
            low = k - k % 9 + min(k % 9, 6)
            shape = [low, low + 1, low + 2]
        if all(counts[t] + shape.count(t) <= 4 for t in shape):
            for t in shape:
                counts[t] += 1
            shapes += 1
    counts[rng.choice([t for t in range(34) if counts[t]])] -= 1
    if rng.random() < 0.5:
        counts[rng.choice([t for t in range(34) if counts[t]])] -= 1
        counts[rng.choice([t for t in range(34) if counts[t] < 4])] += 1
    return counts


def test_ready_precheck_never_rejects_a_win() -> None:
    """A hand that wins on some tile passes the engine's pre-check (four wildcards held too)."""
    rng = random.Random(13)
    wins = 0
    for _ in range(1500):
        hand = _near_win(rng)
        wild = rng.randrange(34)
        ready = joy.can_complete(hand, 0, wild)
        for k in range(34):
            if hand[k] < 4:
                full = bytearray(hand)
                full[k] += 1
                if joy.can_win(full, 0, wild):
                    wins += 1
                    assert ready, (hand, wild, k)
    assert wins > 100


@pytest.mark.parametrize("room", ["popular", "eight_fan"])
def test_engine_plays_the_same_without_the_precheck(room: str) -> None:
    """Whole hands (claims and melds included) have the same masks and events with the ready
    pre-check as with every win tested in full."""
    rules = joy_mahjong_rules(room=room)
    wins = 0
    for seed in range(40):
        fast, full = new_game(rules, seed), new_game(rules, seed)
        full._ready = lambda s: True  # the pre-check always passes: every win is tested in full
        rng = np.random.default_rng(seed)
        while not fast.over:
            mask = fast.legal_mask()
            assert np.array_equal(mask, full.legal_mask()) and fast.queue == full.queue
            claims = [a for a in (73, 74, 72, 71, 68, 69, 70) if mask[a]]
            legal = np.flatnonzero(mask)
            a = claims[0] if claims and rng.random() < 0.8 else int(legal[rng.integers(legal.size)])
            fast.apply(a)
            full.apply(a)
        assert fast.events == full.events
        wins += fast.end_reason == "win"
    assert wins > 0


def test_bench_covers_joy_mahjong(capsys) -> None:
    assert main(["bench", "--game", "joy_mahjong", "--decisions", "300", "--repeats", "1",
                 "--no-memory", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["game"] == "joy_mahjong" and result["preset"] == "popular"
    assert result["raw_env"] > 0 and result["env"] > 0
    if "rlcard_mahjong" in result:
        assert result["raw_env_ratio"] == pytest.approx(result["raw_env"] / result["rlcard_mahjong"])
    assert "joy_mahjong (popular)" in benchmark.format_result(result)
    assert main(["bench", "--game", "joy_mahjong", "--preset", "vip", "--no-memory"]) == 2
    assert "room" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown game"):
        benchmark.run("riichi")
