"""Agents for mjenv: the Policy protocol, the baselines and the trained policies, by name.

The duplicate-format arena that evaluates them is the wing :mod:`agents.arena` (``mjenv eval``).

``load_policy("random")``, ``load_policy("heuristic")``, or a Policy object / callable.
"""

from .base import BatchByLoop, Policy, RandomPolicy
from .registry import load_policy, policy_names

__all__ = ["BatchByLoop", "Policy", "RandomPolicy", "load_policy", "policy_names"]
