"""mjenv: PettingZoo environments for Chinese mahjong with rule-accurate bean rewards.

``mjenv.blood_battle_v0`` is Sichuan blood battle (血战到底), ``mjenv.joy_mahjong_v0`` Joy Mahjong
(欢乐麻将); ``mjenv.score`` scores a hand.
Importing mjenv registers the environments with PettingZoo's registry where it has one, and
``mjenv/SingleSeat-v0`` (:class:`mjenv.wrappers.SingleSeatEnv`) with gymnasium's.
"""

import gymnasium as _gymnasium
import pettingzoo as _pettingzoo

from .scoring import score

__version__ = "0.1.0"
__all__ = ["score", "__version__"]

if hasattr(_pettingzoo, "register"):  # the registry exists from PettingZoo 1.27
    for _name in ("blood_battle_v0", "joy_mahjong_v0"):
        if f"mjenv/{_name}".replace("_v0", "-v0") not in _pettingzoo.aec_registry:
            _pettingzoo.register("aec", f"mjenv/{_name}", entry_point=f"mjenv.{_name}:env")

# The single-seat gymnasium view (mjenv.wrappers): gymnasium.make("mjenv/SingleSeat-v0", game=...).
if "mjenv/SingleSeat-v0" not in _gymnasium.registry:
    _gymnasium.register("mjenv/SingleSeat-v0", entry_point="mjenv.wrappers:SingleSeatEnv")
