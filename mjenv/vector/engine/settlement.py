"""Bean moves both compiled engines share (B1, B2): a payment between two seats and the close of
a hand with its rake. Each works on any engine's state with ``beans``/``delta`` (int64 (N, 4)),
``end_reason``, ``phase``, ``current``, ``q_len`` and ``q_pos``; numba compiles one copy per
state type. Rule IDs: docs/rules-blood-battle.md."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def transfer(st, t: int, payer: int, payee: int, beans: int) -> None:
    """Move ``beans`` from ``payer`` to ``payee`` at table ``t``, at once (B2); nothing if <= 0."""
    if beans <= 0:
        return
    st.beans[t, payer] -= beans
    st.beans[t, payee] += beans
    st.delta[t, payer] -= beans
    st.delta[t, payee] += beans


@njit(cache=True, nogil=True)
def close_hand(st, t: int, reason: int, rake: int, over: int) -> None:
    """Take the rake from every seat (B1), record the end reason and leave no decision open."""
    for s in range(4):
        st.beans[t, s] -= rake
        st.delta[t, s] -= rake
    st.end_reason[t] = reason
    st.phase[t] = over
    st.current[t] = -1
    st.q_len[t] = 0
    st.q_pos[t] = 0
