"""Bean moves both compiled engines share (B1, B2, B4): payments, settlement events under
balances, and the close of a hand with its rake. Each works on any engine's state with
``beans``/``delta``/``balances`` (int64 (N, 4)), the due queue (``due_n``, ``due_from``,
``due_to``, ``due_beans``), ``end_reason``, ``phase``, ``current``, ``q_len`` and ``q_pos``;
numba compiles one copy per state type. ``keep``: the table keeps balances (rule option
``bankroll``). Rule IDs: docs/rules-blood-battle.md.

Without balances every payment moves at once, as it always did. With them the payments of one
settlement event (the reference's :meth:`mjenv.engine.core.GameCore._settle_event`: a win with
一炮多响 and its 杠上炮 transfers, a kong, each draw check) are queued by :func:`owe` and paid
together by :func:`settle_event`, each payer at most what it held when the event began.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..rules.beans import pay_from_balance

MAX_DUES = 48
"""Payments of one settlement event, at most: 退税 of four kongs per seat with three payers each."""


@njit(cache=True, nogil=True)
def transfer(st, t: int, payer: int, payee: int, beans: int) -> None:
    """Move ``beans`` from ``payer`` to ``payee`` at table ``t``, at once (B2); nothing if <= 0."""
    if beans <= 0:
        return
    st.beans[t, payer] -= beans
    st.beans[t, payee] += beans
    st.delta[t, payer] -= beans
    st.delta[t, payee] += beans
    st.balances[t, payer] -= beans
    st.balances[t, payee] += beans


@njit(cache=True, nogil=True)
def take(st, t: int, payer: int, beans: int) -> None:
    """``beans`` leave ``payer`` to no one (the rake and 扣豆, B1, S16.1)."""
    st.beans[t, payer] -= beans
    st.delta[t, payer] -= beans
    st.balances[t, payer] -= beans


@njit(cache=True, nogil=True)
def owe(st, t: int, payer: int, payee: int, beans: int, keep: bool) -> None:
    """One payment of a settlement event: at once without balances, else queued for
    :func:`settle_event` (a due of 0 beans is dropped, as the reference skips it)."""
    if not keep:
        transfer(st, t, payer, payee, beans)
    elif beans > 0:
        i = st.due_n[t]
        st.due_from[t, i], st.due_to[t, i], st.due_beans[t, i] = payer, payee, beans
        st.due_n[t] = i + 1


@njit(cache=True, nogil=True)
def settle_event(st, t: int, keep: bool) -> int:
    """Pay the queued dues of one settlement event (B4): each payer pays at most what it holds now
    (nothing has moved since the event began), split among its dues in the ratio owed
    (:func:`~mjenv.vector.rules.beans.pay_from_balance`). Leaves the beans paid in
    ``due_beans[t, :n]`` and returns n, the number of dues (0 without balances: nothing queued)."""
    if not keep:
        return 0
    n = st.due_n[t]
    if n == 0:
        return 0
    owed = np.empty(n, np.int64)
    paid = np.empty(n, np.int64)
    for payer in range(4):
        m = 0
        for i in range(n):
            if st.due_from[t, i] == payer:
                owed[m] = st.due_beans[t, i]
                m += 1
        if m == 0:
            continue
        pay_from_balance(st.balances[t, payer], owed, paid[:m])
        m = 0
        for i in range(n):
            if st.due_from[t, i] == payer:
                st.due_beans[t, i] = paid[m]
                m += 1
    for i in range(n):
        transfer(st, t, st.due_from[t, i], st.due_to[t, i], st.due_beans[t, i])
    st.due_n[t] = 0
    return n


@njit(cache=True, nogil=True)
def close_hand(st, t: int, reason: int, rake: int, over: int, keep: bool) -> None:
    """Take the rake from every seat (B1; with balances at most what it holds, B4), record the
    end reason and leave no decision open."""
    for s in range(4):
        take(st, t, s, min(rake, max(st.balances[t, s], 0)) if keep else rake)
    st.end_reason[t] = reason
    st.phase[t] = over
    st.current[t] = -1
    st.q_len[t] = 0
    st.q_pos[t] = 0
