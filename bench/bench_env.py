"""Benchmark the envs against RLCard's mahjong, measured in the same run.

    pip install -e ".[bench]"
    python bench/bench_env.py --preset happy --decisions 20000 --repeats 3
    python bench/bench_env.py --game joy_mahjong --preset popular   # Joy Mahjong (preset = room)

The same as ``mjenv bench`` (same arguments): decisions/s (median of the repeats) for raw_env
and env() on the readable engine, raw_env(backend="compiled") on the compiled one, RLCard
mahjong's decisions/s and the ratios, and the RSS of 1,000 live raw_env.
"""

import sys

from mjenv.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
