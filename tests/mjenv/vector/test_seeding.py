"""The compiled seeded shuffle (mjenv.vector.seeding) draws exactly numpy's numbers.

The batched env deals every hand from it, so parity with the reference engine depends on it
matching ``np.random.default_rng([seed, hand])``'s permutation and integer rolls bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from mjenv.engine.blood_battle import SUIT_TILES
from mjenv.engine.core import shuffled as reference_shuffled
from mjenv.engine.joy_mahjong import JOY_TILES
from mjenv.vector.seeding import generator, next_seeds, shuffled, streams

EDGE_SEEDS = [0, 1, 2**31 - 1, 2**32 - 1, 2**32, 2**32 + 1, 2**53 + 7, 2**63 - 1]


def seeds(n: int) -> list[int]:
    rng = np.random.default_rng(2026)
    return EDGE_SEEDS + [int(s) for s in rng.integers(0, 2**63, n)] + [int(s) for s in rng.integers(0, 2**32, n)]


@pytest.mark.parametrize("tiles, rolls", [(SUIT_TILES, 1), (JOY_TILES, 2)], ids=["blood_battle", "joy_mahjong"])
def test_walls_and_rolls_equal_numpy(tiles, rolls):
    tile_array = np.array(tiles, dtype=np.int8)
    wall, out = np.empty(len(tiles), dtype=np.int8), np.empty(rolls, dtype=np.int64)
    for seed in seeds(1500):
        for hand in (0, 1, 3, 15):
            shuffled(tile_array, seed, hand, wall, out)
            want_wall, want_rolls = reference_shuffled(tiles, seed, hand, rolls)
            assert wall.tolist() == want_wall and out.tolist() == want_rolls, (seed, hand)


def test_generator_state_equals_pcg64_seeding():
    """The PCG64 state and increment after seeding, word for word."""
    for seed in seeds(200):
        g = generator(seed, 5)
        state = np.random.default_rng([seed, 5]).bit_generator.state["state"]
        assert (int(g[0]) << 64 | int(g[1])) == state["state"]
        assert (int(g[2]) << 64 | int(g[3])) == state["inc"]


def test_streams_draw_the_aec_envs_episode_seeds():
    """Row t of ``streams(seeds)`` draws what ``default_rng(seeds[t]).integers(2**63)`` draws,
    call after call (the AEC env's unseeded ``reset()``), and only the listed rows advance."""
    table_seeds = np.array(seeds(300), dtype=np.int64)
    state, out = streams(table_seeds), np.full(len(table_seeds), -1, dtype=np.int64)
    rngs = [np.random.default_rng(int(s)) for s in table_seeds]
    odd = np.arange(1, len(table_seeds), 2)
    for _ in range(4):
        next_seeds(state, odd, out)
        assert out[odd].tolist() == [int(rngs[t].integers(2**63)) for t in odd]
        assert (out[::2] == -1).all()
    next_seeds(state, np.arange(len(table_seeds)), out)  # the odd rows' fifth draw, the even rows' first
    assert out.tolist() == [int(r.integers(2**63)) for r in rngs]


def test_many_rolls_share_the_buffered_half_word():
    """Rolls after the permutation use PCG64's buffered upper 32 bits, as numpy's do."""
    tiles = np.arange(5, dtype=np.int8)
    wall, out = np.empty(5, dtype=np.int8), np.empty(9, dtype=np.int64)
    for seed in range(300):
        shuffled(tiles, seed, 0, wall, out)
        rng = np.random.default_rng([seed, 0])
        assert wall.tolist() == rng.permutation(5).tolist()
        assert out.tolist() == [int(rng.integers(4)) for _ in range(9)]


def test_random_actions_are_legal_and_cover_every_legal_action():
    from mjenv.vector import random_actions

    rng = np.random.default_rng(1)
    mask = (rng.random((64, 20)) < 0.3).astype(np.int8)
    mask[0] = 0  # no legal action: -1
    mask[1] = 0
    mask[1, 7] = 1
    seen = np.zeros_like(mask)
    for _ in range(400):
        a = random_actions(mask, rng)
        assert a[0] == -1 and a[1] == 7
        rows = np.arange(2, 64)
        assert (mask[rows, a[rows]] == 1).all()
        seen[rows, a[rows]] = 1
    assert (seen[2:] == mask[2:]).all()  # every legal action is drawn
    with pytest.raises(ValueError, match="2-D"):
        random_actions(mask[0], rng)
