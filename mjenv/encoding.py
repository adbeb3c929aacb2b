"""Versioned observation encoders: one flat float32 tensor of shape ``(planes, kinds)``.

Each plane is 27 wide for the blood battle (one column per tile kind). Seat-relative views
put the observing seat first, then 下家 (+1), 对家 (+2), 上家 (+3). Scalars (wall count,
beans, flags) fill a whole plane with one value so a convolution sees them everywhere.
``Observer.views`` names the plane ranges, like OpenSpiel's observer.

A seat's observation holds only what that seat may know (no leak of hidden tiles): its own
hand, every seat's discards and exposed melds, the number (not kinds) of others' 暗杠, void
suits once all four are chosen, who has won and on what, the wall count and the beans.
``state()`` adds every hand, the chosen voids and the wall order, for oracle critics.

Version history: v0 (mjenv 0.1.0) first release.
"""

from __future__ import annotations

import numpy as np

from .engine.blood_battle import N_SEATS, BloodBattleGame

ENCODER_VERSION = 0
RECENT = 4  # last discards shown per seat, most recent first
_THRESH = np.arange(4)[:, None]
_PHASES = ("void", "turn", "claim", "rob")


def _layout(spec: list[tuple[str, int]]) -> dict[str, slice]:
    """Consecutive plane ranges from (name, size) pairs."""
    views, i = {}, 0
    for name, n in spec:
        views[name] = slice(i, i + n)
        i += n
    return views


class BloodBattleObserver:
    """Observation (per seat) and state (perfect information) encoders, version 0."""

    version = ENCODER_VERSION
    width = 27
    views = _layout([
        ("hand", 4),            # own concealed hand, thermometer (>=1 ... >=4)
        ("drawn", 1),           # tile just drawn by the observer
        ("claim", 1),           # discard being claimed, or tile being added to a kong (rob window)
        ("pong", 4),            # per relative seat: 碰 kinds
        ("kong", 4),            # per relative seat: exposed kongs (直杠, 面下杠)
        ("own_ankan", 1),       # observer's own 暗杠 kinds
        ("river", 4),           # per relative seat: discard counts / 4
        ("recent", 4 * RECENT),  # per relative seat: last RECENT discards, one-hot each
        ("won_tile", 4),        # per relative seat: tile won on
        ("void", 4),            # per relative seat: void-suit kinds (others only once revealed)
        ("ankan_count", 4),     # per relative seat: number of 暗杠 / 4
        ("won", 4),             # per relative seat: has won
        ("dealer", 4),          # per relative seat: is the dealer
        ("beans", 4),           # per relative seat: beans / bean_scale
        ("seat", 4),            # absolute seat of the observer, one-hot
        ("phase", 4),           # void / turn / claim / rob
        ("wall", 1),            # tiles left in the wall / 108
    ])
    planes = max(s.stop for s in views.values())
    state_views = _layout([
        ("hands", 16),          # every seat's hand, thermometer, absolute seat order
        ("pong", 4), ("kong", 4), ("ankan", 4),
        ("river", 4), ("recent", 4 * RECENT), ("won_tile", 4),
        ("void", 4),            # chosen voids, revealed or not
        ("won", 4), ("dealer", 4), ("beans", 4),
        ("current", 4),         # seat to act
        ("phase", 4),
        ("claim", 1),
        ("wall_order", 56),     # remaining wall from head to tail, one-hot per row
        ("wall", 1),
    ])
    state_planes = max(s.stop for s in state_views.values())

    def __init__(self, bean_scale: float) -> None:
        self.bean_scale = float(bean_scale)

    def observe(self, g: BloodBattleGame, seat: int) -> np.ndarray:
        """The observation of ``seat``: only what that seat may know."""
        v, w = self.views, self.width
        out = np.zeros((self.planes, w), dtype=np.float32)
        hand = np.asarray(g.hands[seat][:w], dtype=np.int8)
        out[v["hand"]] = hand > _THRESH
        if g.current_player == seat and g.phase == "turn" and g.drawn is not None:
            out[v["drawn"].start, g.drawn] = 1
        if g.phase in ("claim", "rob"):
            out[v["claim"].start, g.claim_tile] = 1
        revealed = g.phase != "void"
        for r in range(N_SEATS):
            s = (seat + r) % N_SEATS
            self._public_seat(out, v, r, s, g)
            if s == seat or revealed:
                if g.void[s] >= 0:
                    out[v["void"].start + r, 9 * g.void[s] : 9 * g.void[s] + 9] = 1
            n_ankan = sum(m.kind == "ankan" for m in g.melds[s])
            out[v["ankan_count"].start + r] = n_ankan / 4
            if s == seat:
                for m in g.melds[s]:
                    if m.kind == "ankan":
                        out[v["own_ankan"].start, m.tile] = 1
            out[v["won"].start + r] = g.won[s]
            out[v["dealer"].start + r] = s == g.dealer
            out[v["beans"].start + r] = g.beans[s] / self.bean_scale
        out[v["seat"].start + seat] = 1
        if g.phase in _PHASES:
            out[v["phase"].start + _PHASES.index(g.phase)] = 1
        out[v["wall"].start] = g.wall_count / 108
        return out

    def _public_seat(self, out: np.ndarray, v: dict[str, slice], r: int, s: int, g: BloodBattleGame) -> None:
        """Fill the public planes of seat ``s`` at relative row ``r``."""
        for m in g.melds[s]:
            if m.kind == "pong":
                out[v["pong"].start + r, m.tile] = 1
            elif m.kind in ("kong", "addkong"):
                out[v["kong"].start + r, m.tile] = 1
        river = g.rivers[s]
        if river:
            out[v["river"].start + r] = np.bincount(river, minlength=self.width)[: self.width] / 4
            base = v["recent"].start + RECENT * r
            for i, k in enumerate(reversed(river[-RECENT:])):
                out[base + i, k] = 1
        for win in g.wins:
            if win.seat == s:
                out[v["won_tile"].start + r, win.tile] = 1

    def state(self, g: BloodBattleGame) -> np.ndarray:
        """Perfect information: every hand, the chosen voids, the wall order (absolute seats)."""
        v, w = self.state_views, self.width
        out = np.zeros((self.state_planes, w), dtype=np.float32)
        for s in range(N_SEATS):
            out[v["hands"].start + 4 * s : v["hands"].start + 4 * s + 4] = (
                np.asarray(g.hands[s][:w], dtype=np.int8) > _THRESH
            )
            for m in g.melds[s]:
                name = "ankan" if m.kind == "ankan" else ("pong" if m.kind == "pong" else "kong")
                out[v[name].start + s, m.tile] = 1
            river = g.rivers[s]
            if river:
                out[v["river"].start + s] = np.bincount(river, minlength=w)[:w] / 4
                base = v["recent"].start + RECENT * s
                for i, k in enumerate(reversed(river[-RECENT:])):
                    out[base + i, k] = 1
            if g.void[s] >= 0:
                out[v["void"].start + s, 9 * g.void[s] : 9 * g.void[s] + 9] = 1
            out[v["won"].start + s] = g.won[s]
            out[v["dealer"].start + s] = s == g.dealer
            out[v["beans"].start + s] = g.beans[s] / self.bean_scale
        for win in g.wins:
            out[v["won_tile"].start + win.seat, win.tile] = 1
        if g.current_player >= 0:
            out[v["current"].start + g.current_player] = 1
        if g.phase in _PHASES:
            out[v["phase"].start + _PHASES.index(g.phase)] = 1
        if g.phase in ("claim", "rob"):
            out[v["claim"].start, g.claim_tile] = 1
        rest = g.wall[g.head : g.tail][: v["wall_order"].stop - v["wall_order"].start]
        if rest:
            out[v["wall_order"].start + np.arange(len(rest)), rest] = 1
        out[v["wall"].start] = g.wall_count / 108
        return out
