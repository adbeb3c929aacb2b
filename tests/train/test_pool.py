"""The opponent pool (train/pool.py): prioritised snapshots, the oldest dropped, saved and loaded."""

from __future__ import annotations


import numpy as np

from train.pool import OpponentPool
from train.records import LEARNER, HandSummary



def test_pool_prefers_snapshots_that_beat_the_learner_and_drops_the_oldest() -> None:
    pool = OpponentPool(size=2, power=1.0)
    for update in (1, 2, 3):
        pool.add({"w": np.full(2, update, dtype=np.float32)}, update)
    assert [s.update for s in pool.snapshots] == [2, 3] and pool.next_id == 3
    strong, weak = pool.snapshots[0].id, pool.snapshots[1].id
    hands = [HandSummary(0, (LEARNER, strong, weak, LEARNER), (-10, 30, -20, 0), (False,) * 4, [])] * 5
    pool.record(hands)
    probs = dict(pool.priorities())
    assert probs[strong] > probs[weak] and abs(sum(probs.values()) - 1) < 1e-12
    clone = OpponentPool(size=2, power=1.0)
    clone.load_state_dict(pool.state_dict())
    assert clone.priorities() == pool.priorities()
    np.testing.assert_array_equal(clone.snapshots[1].weights["w"], pool.snapshots[1].weights["w"])
