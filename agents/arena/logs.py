"""The arena's replay logs (``run_arena(log_dir=...)``): one file per deal, ``deal_00000.jsonl`` …,
holding its four rotations in order, each hand as the AEC env logs it (``mjenv.replay``) with
the agents named by seat in its header. The reference backend keeps the hands' lines
(:meth:`mjenv.vector.reference.ReferenceBackend.keep_logs`); :class:`DealLogs` writes them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from mjenv import replay
from mjenv.outputs import check_output_folder

from .protocol import N_SEATS


def deal_log_path(log_dir: str | os.PathLike, deal: int) -> Path:
    """The replay log of deal ``deal`` (its four rotations) in ``log_dir``."""
    return Path(log_dir) / f"deal_{deal:05d}.jsonl"


def check_log_dir(log_dir: str | os.PathLike) -> None:
    """Create ``log_dir``; refuse one that already holds deal logs (new hands would be appended) or
    that cannot hold files (``mjenv.outputs.OutputError``, a ValueError)."""
    path = Path(log_dir)
    if path.exists() and not path.is_dir():
        raise ValueError(f"log dir {str(path)!r} is a file: give a folder for the replay logs")
    if any(path.glob("deal_*.jsonl")):
        raise ValueError(f"log dir {str(path)!r} already holds deal_*.jsonl logs: choose a new or empty folder")
    check_output_folder(path)


class DealLogs:
    """The finished hands of the deals being played, written a deal at a time once its four
    rotations are done (hands finish in any order; a deal's file holds them in rotation order)."""

    def __init__(self, log_dir: str | os.PathLike) -> None:
        self.log_dir = log_dir
        self._hands: dict[int, dict[int, list[dict[str, Any]]]] = {}

    def add(self, deal: int, rotation: int, lines: list[dict[str, Any]], agents: Sequence[str]) -> None:
        """One finished hand's log lines; ``agents``: the agents' labels by seat (into its header)."""
        lines[0]["agents"] = list(agents)
        hands = self._hands.setdefault(deal, {})
        hands[rotation] = lines
        if len(hands) == N_SEATS:
            path = deal_log_path(self.log_dir, deal)
            for r in range(N_SEATS):
                replay.append_hand(path, hands[r])
            del self._hands[deal]
