"""Speed of Joy Mahjong scoring with 0-4 wildcards and of the can_win shape check.

    python bench/bench_joy_scoring.py --hands 200 --repeats 5

Hands: seeded random complete hands of every J2 shape (docs/rules-joy-mahjong.md: regular with
random melds, 七对, 十三幺,
全不靠 / 七星不靠, 组合龙) in which w tiles are turned into the wildcard; random win flags. Every
repeat draws fresh hands and times each once, so no hand is scored twice (the per-group tables
stay warm, as in a long run; a warm-up pass on other hands comes first). The table shows the
median over all hands and repeats, the spread of the per-repeat medians, the 90th percentile and
the maximum. can_win runs on a mix of complete hands and the same hands with one tile swapped
(mostly not winning). The reference is one raw PyMahjongGB call on the wildcard-free hands,
measured in the same run (score_win makes one or more such calls per hand).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from itertools import permutations
from typing import Callable

import numpy as np

from mjenv.config import JoyMahjongRules
from mjenv.melds import Meld
from mjenv.rules.joy import JoyContext, can_win, mcr_fans, score_win

KNITTED = [tuple(9 * s + cls[s] + 3 * j for s in range(3) for j in range(3))
           for cls in permutations(range(3))]
ORPHANS = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)


def _set(rng: random.Random) -> list[int]:
    """A random chow or pung."""
    if rng.random() < 0.5:
        t = rng.choice((0, 9, 18)) + rng.randrange(7)
        return [t, t + 1, t + 2]
    return [rng.randrange(34)] * 3


def complete_hand(rng: random.Random) -> tuple[list[int], list[Meld]]:
    """A random complete wildcard-free hand: concealed counts and melds."""
    while True:
        c, melds, r = [0] * 34, [], rng.random()
        if r < 0.6:  # regular, 0-4 declared melds
            n = rng.choice((0, 0, 1, 1, 2, 3, 4))
            for i in range(4):
                ks = _set(rng)
                if i < n:
                    kind = "chow" if ks[0] != ks[1] else rng.choice(("pong", "kong", "ankan"))
                    melds.append(Meld(kind, ks[0]))
                else:
                    for k in ks:
                        c[k] += 1
            c[rng.randrange(34)] += 2
        elif r < 0.72:  # 七对
            for _ in range(7):
                c[rng.randrange(34)] += 2
        elif r < 0.76:  # 十三幺
            for k in ORPHANS:
                c[k] = 1
            c[rng.choice(ORPHANS)] += 1
        elif r < 0.88:  # 全不靠 / 七星不靠
            for k in rng.sample(list(rng.choice(KNITTED)) + list(range(27, 34)), 14):
                c[k] = 1
        else:  # 组合龙 + a set + a pair
            for k in rng.choice(KNITTED) + tuple(_set(rng)):
                c[k] += 1
            c[rng.randrange(34)] += 2
        owned = c[:]
        for m in melds:
            for k in m.kinds():
                owned[k] += 1
        if max(owned) <= 4:
            return c, melds


def hand_with_wildcards(rng: random.Random, w: int) -> tuple[list[int], list[Meld], int]:
    """A complete hand with ``w`` of its tiles turned into the wildcard kind."""
    while True:
        c, melds = complete_hand(rng)
        in_melds = {k for m in melds for k in m.kinds()}
        wild = rng.choice([k for k in range(34) if k not in in_melds])
        others = [k for k in range(34) if k != wild for _ in range(c[k])]
        if c[wild] > w or w - c[wild] > len(others):
            continue
        for k in rng.sample(others, w - c[wild]):
            c[k] -= 1
            c[wild] += 1
        return c, melds, wild


def once(fn: Callable[[], object]) -> float:
    """Seconds of one call."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def summary(runs: list[list[float]]) -> str:
    """Median over everything, range of the per-repeat medians, p90 and max, in ms."""
    flat = sorted(t for run in runs for t in run)
    medians = [statistics.median(run) for run in runs]
    return (f"median {1e3 * statistics.median(flat):6.3f} ms (repeats {1e3 * min(medians):.3f}"
            f"-{1e3 * max(medians):.3f})  p90 {1e3 * flat[int(0.9 * len(flat))]:6.3f} ms"
            f"  max {1e3 * flat[-1]:6.3f} ms")


def make_hands(rng: random.Random, w: int, n: int) -> list[tuple]:
    """``n`` hands with ``w`` wildcards: (concealed, melds, win tile, wild, context)."""
    hands = []
    for _ in range(n):
        c, melds, wild = hand_with_wildcards(rng, w)
        win = rng.choice([k for k in range(34) if c[k]])
        ctx = JoyContext(self_drawn=win == wild or rng.random() < 0.5,
                         seat_wind=rng.randrange(4), flowers=rng.randrange(3))
        hands.append((c, melds, win, wild, ctx))
    return hands


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=200, help="hands per wildcard count and repeat")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rules = JoyMahjongRules()
    for w in range(5):  # warm-up on hands that are not timed
        for h in make_hands(rng, w, args.hands):
            score_win(*h, rules)
    print(f"score_win: {args.hands} fresh hands per repeat, {args.repeats} repeats")
    for w in range(5):
        runs, raw = [], []
        for _ in range(args.repeats):
            hands = make_hands(rng, w, args.hands)
            runs.append([once(lambda h=h: score_win(*h, rules)) for h in hands])
            if w == 0:
                raw.append([once(lambda h=h: mcr_fans(h[0], h[1], h[2], h[4])) for h in hands])
        print(f"  {w} wildcards: {summary(runs)}")
        if w == 0:
            ratio = statistics.median(sum(runs, [])) / statistics.median(sum(raw, []))
            print(f"  reference, one raw PyMahjongGB call, same hands: {summary(raw)}"
                  f"  (score_win {ratio:.1f}x)")
    # can_win: complete hands and the same with one tile swapped.
    mix = []
    for i in range(2000):
        c, melds, wild = hand_with_wildcards(rng, rng.choice((0, 0, 0, 1, 1, 2, 3, 4)))
        if i % 2:
            a = rng.choice([k for k in range(34) if c[k]])
            b = rng.randrange(34)
            if c[b] < 4:
                c[a] -= 1
                c[b] += 1
        mix.append((np.array(c, dtype=np.int8), len(melds), wild))
    for h in mix:
        can_win(*h)  # warm the tables
    per_call = [once(lambda: [can_win(*h) for h in mix]) / len(mix) for _ in range(args.repeats)]
    wins = sum(can_win(*h) for h in mix)
    print(f"can_win: {len(mix)} int8 count arrays ({wins} winning), median of {args.repeats} "
          f"repeats: {1e6 * statistics.median(per_call):.2f} us per call")


if __name__ == "__main__":
    main()
