"""A scripted hand played by the readable engine and the compiled one side by side.

:class:`CompiledTwin` wraps a readable game (:class:`mjenv.engine.core.GameCore`) and a one-table
``mjenv.vector`` env dealt the same wall, dealer and rules (the reset options ``wall``, ``dealer``
and ``prevailing_wind`` script the first hand). A script plays the twin as it plays the game
(``support.play``, ``support.burn``): every action goes to both engines, and the twin returns the
readable engine's bean changes, so a scenario's numbers are checked as they were. At every
decision both engines wait on (the readable one may ask forced moves that the compiled one plays
at once, inside the step before) the twin asserts the same seat, mask, observation, bean changes
so far, balances and escaped seats, and at the end of the hand the same end, beans and balances.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import mjenv.vector as mv
from mjenv import games
from mjenv.config import as_dict
from mjenv.engine.core import GameCore


class CompiledTwin:
    """The readable ``game`` and a compiled table, stepped together; reads go to ``game``."""

    def __init__(self, game: GameCore, game_name: str, preset: str | None = None) -> None:
        self.game = game
        options = as_dict(game.rules)
        if preset is not None:
            options["preset"] = preset
        self.venv = mv.make(game_name, 1, **options)
        self.observer = games.game(game_name).raw_env(**options).observer
        script = {"wall": list(game.wall), "dealer": game.dealer}
        if hasattr(game, "prevailing_wind"):
            script["prevailing_wind"] = game.prevailing_wind
        self.obs, self.info = self.venv.reset(seed=0, options=script)
        self.pending = np.zeros(4, dtype=np.int64)  # the readable engine's bean changes not yet compared
        self.ended = False
        self._check()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.game, name)

    def apply(self, action: int) -> list[int]:
        """Play ``action`` in the readable game and, unless the compiled table already played it (a
        forced move), in the compiled one; compare both where they wait on the same decision."""
        forced = np.count_nonzero(self.game.legal_mask()) == 1
        delta = self.game.apply(action)
        self.pending += delta
        if not forced:
            assert not self.ended, "the compiled hand ended before the readable one"
            self.obs, rewards, term, _, self.info = self.venv.step(np.array([action]))
            self.pending -= rewards[0].astype(np.int64)
            self.ended = bool(term[0])
        if self.game.over or np.count_nonzero(self.game.legal_mask()) > 1:
            self._check()
        return delta

    def _check(self) -> None:
        """Both engines at the same point: the decision asked, or the end of the hand."""
        g, backend = self.game, self.venv.backend
        assert self.pending.tolist() == [0, 0, 0, 0], f"bean changes differ by {self.pending.tolist()}"
        if g.over:
            assert self.ended and self.info["end_reason"][0] == g.end_reason
            assert self.info["beans"][0].tolist() == g.beans
            if g.balances is not None:
                assert self.info["balances"][0].tolist() == g.balances
            if g.rules.escape:
                assert self.info["escaped"][0].tolist() == g.escaped
            return
        assert not self.ended, "the compiled hand ended, the readable one goes on"
        assert self.info["seat"][0] == g.current_player
        np.testing.assert_array_equal(self.obs["action_mask"][0], g.legal_mask())
        np.testing.assert_array_equal(self.obs["observation"][0], self.observer.observe(g, g.current_player))
        assert backend.arrays.beans[0].tolist() == g.beans
        if g.balances is not None:
            assert backend.arrays.balances[0].tolist() == g.balances
        assert (backend.arrays.escaped[0] != 0).tolist() == g.escaped
