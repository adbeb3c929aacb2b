"""The evaluation wing: duplicate-format arenas between policies, their statistics and comparisons.

Every seeded deal is replayed with the agents rotated through the seats, so the luck of the deal
cancels (``mjenv eval``). Policies never import this package; it loads them by name
(:func:`agents.load_policy`).

- :mod:`~agents.arena.protocol`: the duplicate protocol (lineups, deal seeds, decision generators,
  the record of a hand);
- :mod:`~agents.arena.aec` and :mod:`~agents.arena.vector`: the two arenas, on the reference env
  and on the compiled engine, hand for hand the same records;
- :mod:`~agents.arena.run`: :func:`run_arena`, either arena in one process or several;
- :mod:`~agents.arena.results`: :class:`ArenaResult`, the statistics per agent and the results file;
- :mod:`~agents.arena.compare`: the paired comparison of two agents' results (``mjenv compare``);
- :mod:`~agents.arena.levels`: the level titles (等级) of cumulative scores;
- :mod:`~agents.arena.ladder`: the reference ladders, their stored ratings (``mjenv ladder``);
- :mod:`~agents.arena.rating`: ratings from duplicate matches (choix's Bradley–Terry fit);
- :mod:`~agents.arena.rate`: any agent placed on a ladder (``mjenv rate``).
"""

from .aec import deal_log_path, play_hand
from .protocol import N_SEATS, HandRecord, deal_seed, decision_rng, lineup
from .results import SCHEMA, ArenaResult, t_quantile_975
from .run import ENGINES, run_arena

__all__ = ["ENGINES", "N_SEATS", "SCHEMA", "ArenaResult", "HandRecord", "deal_log_path", "deal_seed",
           "decision_rng", "lineup", "play_hand", "run_arena", "t_quantile_975"]
