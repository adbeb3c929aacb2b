"""Agents for mjenv: the Policy protocol, baselines, and the duplicate-format arena.

``load_policy("random")``, ``load_policy("heuristic")``, or a Policy object / callable.
"""

from .base import BatchByLoop, Policy, RandomPolicy
from .registry import load_policy, policy_names

__all__ = ["BatchByLoop", "Policy", "RandomPolicy", "load_policy", "policy_names"]
