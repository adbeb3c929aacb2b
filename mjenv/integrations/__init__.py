"""One module per RL toolkit, on the compiled engine where the toolkit batches (docs/integrations.md).

- :mod:`.gymnasium`: ``SingleSeatVectorEnv`` (``gymnasium.make_vec("mjenv/BloodBattle-v0", ...)``)
  and ``SingleSeatEnv`` (``gymnasium.make``);
- :mod:`.opponents`: the opponents of the single-seat views (names, policies, mixtures, frozen networks);
- :mod:`.sb3`: a Stable-Baselines3 ``VecEnv``;
- :mod:`.torchrl`: a batched TorchRL ``EnvBase``;
- :mod:`.rllib`: ready ``PPOConfig`` objects for RLlib (single seat and multi-agent self-play).

These modules sit above :mod:`agents` (they resolve opponents by name) and import their toolkit
when imported; ``import mjenv`` imports none of them.
"""
