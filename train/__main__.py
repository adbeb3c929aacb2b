"""``python -m train --config configs/quickstart_blood_battle.yaml``: see ``train/ppo.py``."""

from .ppo import main

if __name__ == "__main__":  # spawned rollout workers re-import this module: do not train there
    raise SystemExit(main())
