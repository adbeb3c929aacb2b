"""One module per toolkit view, each with ``measure(game, quick) -> list[dict]`` (bench_toolkits.py)."""
