"""Settings every test shares."""

from __future__ import annotations

import importlib.util

import pytest


@pytest.fixture(autouse=True, scope="session")
def one_torch_thread() -> None:
    """torch on one thread in every test: the suite runs in two worker processes on two cores, and
    torch's default of a thread per core in each makes its threads wait on each other (the tests'
    networks are tiny). Tests that are about threads set their own count."""
    if importlib.util.find_spec("torch") is not None:  # the test extras install it; the views run without
        import torch

        torch.set_num_threads(1)
