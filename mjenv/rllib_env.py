"""Deprecated: RLlib's multi-agent view moved to :mod:`mjenv.integrations.rllib` (mjenv 0.1). Its
names import from here for one more minor version, each with a DeprecationWarning naming its new
place; removed in mjenv 0.2. Nothing (ray included) is imported until a name is used."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_NEW = "mjenv.integrations.rllib"


def __getattr__(name: str) -> Any:
    if name.startswith("__"):  # module dunders (__path__, __file__ ...): not moved names
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_NEW), name)  # an AttributeError names a missing one
    warnings.warn(f"mjenv.rllib_env.{name} is deprecated and will be removed in mjenv 0.2: import it from {_NEW}",
                  DeprecationWarning, stacklevel=2)
    return value
