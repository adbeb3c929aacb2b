"""The evaluation wing: duplicate-format arenas between policies, their statistics and comparisons.

Every seeded deal is replayed with the agents rotated through the seats, so the luck of the deal
cancels (``mjenv eval``). Policies never import this package; it loads them by name
(:func:`agents.load_policy`).

- :mod:`~agents.arena.protocol`: the duplicate protocol (lineups, deal seeds, decision generators,
  the record of a hand);
- :mod:`~agents.arena.vector`: the arena, deals in lockstep on a batched env of either backend
  (compiled, reference); :mod:`~agents.arena.aec`: the same hands one at a time through the AEC
  env (the protocol's reference, hand for hand the same records and logs);
- :mod:`~agents.arena.logs`: the replay logs of ``log_dir``, one file per deal;
- :mod:`~agents.arena.run`: :func:`run_arena`, the arena on either backend in one process or several;
- :mod:`~agents.arena.results`: :class:`ArenaResult`, the statistics per agent and the results file;
- :mod:`~agents.arena.compare`: the paired comparison of two agents' results (``mjenv compare``);
- :mod:`~agents.arena.levels`: the level titles (等级) of cumulative scores;
- :mod:`~agents.arena.ladder`: the reference ladders, their stored ratings (``mjenv ladder``);
- :mod:`~agents.arena.rating`: ratings from duplicate matches (choix's Bradley–Terry fit);
- :mod:`~agents.arena.rate`: any agent placed on a ladder (``mjenv rate``).
"""

from .aec import play_hand
from .logs import deal_log_path
from .protocol import N_SEATS, HandRecord, deal_seed, decision_rng, lineup
from .results import SCHEMA, ArenaResult, t_quantile_975
from .run import BACKENDS, ENGINES, run_arena

__all__ = ["BACKENDS", "ENGINES", "N_SEATS", "SCHEMA", "ArenaResult", "HandRecord", "deal_log_path", "deal_seed",
           "decision_rng", "lineup", "play_hand", "run_arena", "t_quantile_975"]
