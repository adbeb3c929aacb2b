"""Benchmark the compiled batched engine (``mjenv.vector``) against RLCard's mahjong, in one run.

    pip install -e ".[bench]"
    python bench/bench_vector.py --tables 1024 --steps 200 --repeats 3
    python bench/bench_vector.py --game joy_mahjong

The same as ``mjenv bench --vector`` (same arguments): decisions/s of random masked play with
observations on one and two threads, the engine alone, RLCard's decisions/s and the ratio, the
resident memory of 10,000 tables, and the seconds to a first step, cold compile and cached.
"""

import sys

from mjenv.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "--vector", *sys.argv[1:]]))
