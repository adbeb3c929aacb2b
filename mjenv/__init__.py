"""mjenv: PettingZoo environments for Chinese mahjong with rule-accurate bean rewards.

``mjenv.blood_battle_v0`` is Sichuan blood battle (血战到底), ``mjenv.joy_mahjong_v0`` Joy Mahjong
(欢乐麻将); ``mjenv.score`` scores a hand.
Importing mjenv registers the environments with PettingZoo's registry where it has one (the AEC
envs and the Parallel ones, ``pettingzoo.make("parallel", "mjenv/blood_battle_v0")``), and the
single-seat views (:mod:`mjenv.integrations.gymnasium`) with Gymnasium's: ``mjenv/BloodBattle-v0``
and ``mjenv/JoyMahjong-v0`` (``gymnasium.make``: one table on the AEC engine; ``make_vec``: the
compiled engine), and ``mjenv/SingleSeat-v0`` (``game=`` chooses).
"""

import gymnasium as _gymnasium
import pettingzoo as _pettingzoo

from . import games as _games
from .scoring import score

__version__ = "0.1.0"
__all__ = ["score", "__version__"]

if hasattr(_pettingzoo, "register"):  # the registry exists from PettingZoo 1.27
    for _game in _games.GAMES.values():
        _id = f"mjenv/{_game.env_name}".replace("_v0", "-v0")
        if _id not in _pettingzoo.aec_registry:
            _pettingzoo.register("aec", f"mjenv/{_game.env_name}", entry_point=f"{_game.env_module}:env")
        if _id not in _pettingzoo.parallel_registry:
            _pettingzoo.register("parallel", f"mjenv/{_game.env_name}", entry_point=f"{_game.env_module}:parallel_env")

# The single-seat Gymnasium views (mjenv.integrations.gymnasium), by entry point: nothing imported.
_VIEWS = "mjenv.integrations.gymnasium"
for _game in _games.GAMES.values():
    if _game.gym_id not in _gymnasium.registry:
        _gymnasium.register(_game.gym_id, entry_point=f"{_VIEWS}:SingleSeatEnv",
                            vector_entry_point=f"{_VIEWS}:SingleSeatVectorEnv", kwargs={"game": _game.name})
if "mjenv/SingleSeat-v0" not in _gymnasium.registry:
    _gymnasium.register("mjenv/SingleSeat-v0", entry_point=f"{_VIEWS}:SingleSeatEnv",
                        vector_entry_point=f"{_VIEWS}:SingleSeatVectorEnv")
