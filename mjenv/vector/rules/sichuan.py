"""Deprecated: the compiled blood-battle scoring is :mod:`mjenv.vector.rules.blood_battle` (one name
per game in every layer). Importing this module warns and gives that module itself."""

import sys
import warnings

from . import blood_battle

warnings.warn("mjenv.vector.rules.sichuan is deprecated and will be removed in mjenv 0.2: import "
              "mjenv.vector.rules.blood_battle", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = blood_battle
