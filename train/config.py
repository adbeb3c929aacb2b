"""Training configuration: one dataclass of documented fields, loaded from YAML with command-line overrides.

``python -m train --config configs/quickstart_blood_battle.yaml --total-decisions 20000``: the YAML
file (``yaml.safe_load``, a flat mapping of field names) overrides the defaults below, and each
``--field-name VALUE`` overrides the file. An unknown key, a value of the wrong type, or a number
outside its field's range (:data:`BOUNDS`, one entry per numeric field; NaN and infinity never
pass) fails at once, naming the field. The resolved config is saved as ``config.yaml`` in the run
directory. ``--resume RUN`` takes the run's ``config.yaml`` as the base and refuses flags that would
change the network or the seed (:data:`FIXED_ON_RESUME`).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import math
import typing
from pathlib import Path
from typing import Any

import yaml

from agents.neural import ARCH_BOUNDS
from mjenv.games import GAME_NAMES


@dataclasses.dataclass
class TrainConfig:
    """PPO self-play for one game (one policy shared by the four seats)."""

    # ---------------------------------------------------------------- run
    exp_name: str = "ppo_blood_battle"
    """Name of the experiment; the run directory is ``{runs_dir}/{exp_name}__{seed}__{unix time}``."""
    runs_dir: str = "runs"
    """Folder holding the run directories (TensorBoard events, config.yaml, checkpoint.pt)."""
    seed: int = 1
    """Seed of everything random: network initialisation, deals, action sampling, minibatches."""
    device: str = "auto"
    """Torch device of the learner: ``auto`` (CUDA when present, else the CPU), ``cpu``, ``cuda``,
    ``cuda:1``; an explicit device that is absent fails before the run starts. Rollout workers
    always run on the CPU."""
    torch_threads: int = 1
    """Torch threads of the learner process (rollout workers use one each). More help only on idle
    cores: on busy ones small matrix products slow down several times."""
    progress: bool = True
    """Show a tqdm progress bar."""

    # ---------------------------------------------------------------- environment
    game: str = "blood_battle"
    """``blood_battle`` (``mjenv.blood_battle_v0``) or ``joy_mahjong`` (``mjenv.joy_mahjong_v0``)."""
    env_options: dict = dataclasses.field(default_factory=dict)
    """Options of the game's ``raw_env`` (blood battle: ``preset``, …; Joy: ``room``, …; any rule field)."""
    reward_scale: float = 0.0
    """Beans per unit of reward; 0 = the scale of the observation's bean planes (blood battle: the
    beans of one capped win, ``base_points · 2^(cap_fan−1) · room_coefficient``, 192 for happy)."""

    # ---------------------------------------------------------------- rollouts
    total_decisions: int = 2_000_000
    """Stop after this many decisions of the learning policy (the x axis of every chart); 0 with
    ``imitation_decisions`` trains the behaviour-cloned policy only."""
    engine: str = "vector"
    """Rollout engine: ``vector`` (the compiled batched env ``mjenv.vector``: every table of a worker in
    one env, one forward pass per policy per step) or ``aec`` (one ``raw_env`` per table, the readable
    reference engine; slower). Both play the same hands, lineups and reward crediting."""
    backend: str = "local"
    """Where rollouts run: ``local`` (worker processes), ``ray`` (Ray actors) or ``inline`` (one worker
    in the learner's process, for debugging)."""
    ray_address: str = ""
    """With ``backend: ray``: the cluster to join (``auto`` after ``ray start --head`` on this node);
    empty starts a local Ray with ``workers`` CPUs."""
    workers: int = 2
    """Rollout workers (processes or Ray actors)."""
    envs_per_worker: int = 128
    """Tables each worker plays in lockstep, so that the networks see batches (``engine: vector``:
    hundreds are cheap; ``aec``: one Python env each, 16 to 32)."""
    decisions_per_worker: int = 2048
    """Learning-policy decisions each worker collects per update; started hands are always finished."""

    duplicate_rollouts: bool = False
    """Play every deal in four seat rotations (tables in sets of four share their deals; each deal's
    lineup is rotated one seat per table); a decision's advantage is then its seat's hand return less
    the *par*, the mean of what that seat won in the other three rotations: a baseline that removes
    the luck of the deal, in place of GAE (``train/vector_rollout.py``; the critic still trains).
    ``engine: vector`` only; ``envs_per_worker`` a multiple of 4."""

    rollout_dtype: str = "float32"
    """Precision of the rollout workers' forward passes: ``float32``, or ``bfloat16`` (under
    ``torch.autocast``; 1.7–2× faster for the 64 × 3 network at batches of 64 or more on CPUs with
    AMX or AVX512-BF16, no gain without them). The stored behaviour log-probabilities are those of
    the policy that sampled, so PPO's ratio corrects the small difference; the learner and the
    evaluation stay float32."""

    learner_dtype: str = "float32"
    """Precision of the learner's forward and backward passes: ``float32``, or ``bfloat16`` (mixed
    precision under ``torch.autocast``: weights, optimizer state and losses stay float32). On CPUs
    with AMX a training step ran 1.67× faster for the 64 × 3 network and 1.22× for the 32 × 2 one."""

    overlap: bool = True
    """Collect the next update's rollouts while the learner updates on this one (the workers would
    otherwise wait): a policy lag of one update, corrected by PPO's ratio to the stored behaviour
    log-probabilities. The imitation warm start overlaps its batches too, with no lag (the teacher's
    hands do not depend on the weights). Deterministic and resumable on every backend; ``inline``
    gains no speed."""

    # ---------------------------------------------------------------- PPO
    learning_rate: float = 3e-4
    """Adam learning rate."""
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0 over ``total_decisions``."""
    gamma: float = 1.0
    """Discount per decision of a seat (1: the objective is the hand's bean total)."""
    gae_lambda: float = 0.95
    """GAE λ, over the decisions of one seat in one hand."""
    update_epochs: int = 4
    """Passes over each batch."""
    minibatch_size: int = 1024
    """Decisions per gradient step (the batch is split into equal minibatches of about this size)."""
    norm_adv: bool = True
    """Normalise advantages per minibatch."""
    clip_coef: float = 0.2
    """PPO ratio clip ε."""
    clip_vloss: bool = True
    """Clip the value update around the rollout's value, as the policy ratio is clipped."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient. After imitation of a deterministic teacher about 0.1 (the
    quickstart's): the clone is nearly deterministic and PPO needs the bonus to explore."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    max_grad_norm: float = 0.5
    """Gradient norm clip."""
    target_kl: float = 0.0
    """Stop an update's epochs early when an epoch's mean approximate KL exceeds this; 0 = never."""
    kl_coef: float = 0.0
    """Weight of a KL penalty KL(π_BC ‖ π) towards the policy PPO starts from (the weights at the end
    of the imitation warm start, else ``init_policy``'s; kept in the checkpoint); 0 = none. Needs
    ``imitation_decisions`` or ``init_policy``."""
    bc_coef: float = 0.0
    """Weight of a behaviour-cloning loss (cross-entropy) on the decisions of ``baseline_opponents``
    in the hands where they sit (otherwise thrown away), each minibatch taking an equal share of them,
    at most one per learning-policy decision; 0 = none. Needs ``baseline_prob`` > 0."""

    # ---------------------------------------------------------------- starting weights, imitation warm start
    init_policy: str = ""
    """Start from this trained policy's weights instead of a fresh network (fine-tuning): a checkpoint
    path (a trainer checkpoint or a ``python -m train.export`` file) or a shipped name such as
    ``blood_battle_happy``. Its network must be the config's (game, observation planes, ``channels``,
    ``blocks``, ``lookahead``); an oracle critic starts fresh unless the policy has one of the same
    planes. "" = a fresh network."""
    imitation_decisions: int = 0
    """Before PPO, learn from this many decisions of ``teacher`` playing all four seats (behaviour
    cloning: cross-entropy on its actions, value regression on its seats' bean returns); 0 = none.
    These decisions do not count toward ``total_decisions``."""
    teacher: str = "heuristic"
    """The policy imitated (an ``agents.load_policy`` name or checkpoint)."""
    imitation_learning_rate: float = 1e-3
    """Adam learning rate of the imitation phase (constant)."""
    imitation_epochs: int = 2
    """Passes over each batch of demonstrations (fresh demonstrations every update)."""

    # ---------------------------------------------------------------- network
    channels: int = 64
    """Channels of the residual network (see ``agents.neural``)."""
    blocks: int = 3
    """Residual blocks."""
    lookahead: bool = False
    """Stack the look-ahead planes (``agents.lookahead``: shanten and useful draws after each discard,
    danger; Joy Mahjong: ``agents.lookahead_joy``) under the observation; about 0.3 ms more per
    decision of every network seat in Python, a small fraction of that compiled."""
    oracle_critic: bool = False
    """Feed the value function ``env.state()`` (all hands, the wall) besides the observation."""
    oracle_seat_relative: bool = False
    """With ``oracle_critic``: reorder the ``state()`` planes kept per seat (hands, melds, rivers, voids,
    wins, beans, …) from absolute seats to self, 下家, 对家, 上家 of the deciding seat, as the
    observation orders them (``train.rollout.relative_state``)."""

    # ---------------------------------------------------------------- opponent pool
    pool_size: int = 8
    """Snapshots of past policies kept as opponents (the oldest leaves first)."""
    snapshot_every: int = 10
    """Add a snapshot of the learning policy to the pool every this many updates."""
    latest_prob: float = 0.5
    """Chance that a seat besides the learner's own is the current policy instead of a snapshot."""
    snapshots_per_rollout: int = 2
    """Snapshots a worker draws (by priority, with replacement) for one update; the opponent seats of
    its hands pick among those only. Each snapshot keeps its odds, and the network batches stay large."""
    pfsp_power: float = 1.0
    """Prioritised sampling: a snapshot is drawn with weight ``p^power``, p = the smoothed rate at
    which it beat the learner (0 = uniform)."""
    baseline_opponents: list = dataclasses.field(default_factory=list)
    """Fixed opponents besides the pool (``agents.load_policy`` names or checkpoints, e.g. ``[heuristic]``)."""
    baseline_prob: float = 0.0
    """Chance that a hand's three other seats are all one of ``baseline_opponents`` (drawn uniformly)."""

    # ---------------------------------------------------------------- checkpoints and evaluation
    checkpoint_every: int = 10
    """Write ``checkpoint.pt`` every this many updates (and at the end)."""
    eval_every: int = 0
    """Evaluate against the baselines every this many updates; 0 = only at the end."""
    eval_deals: int = 100
    """Duplicate deals per baseline (each played in 4 rotations)."""
    eval_opponents: list = dataclasses.field(default_factory=lambda: ["random", "heuristic"])
    """Baselines for the arena (``agents.load_policy`` names); the policy plays 1 seat vs 3."""
    eval_workers: int = 1
    """Arena worker processes of the periodic evaluations; each new process pays torch's import, so 1
    is fastest for short evaluations. The final evaluation uses ``max(eval_workers, workers)``."""
    eval_seed: int = 12345
    """Arena seed: the same deals at every evaluation."""


_SCALARS = (bool, int, float, str)
ENGINES = ("vector", "aec")
DTYPES = ("float32", "bfloat16")
MAX_SEED = 2**63 - 1


@dataclasses.dataclass(frozen=True)
class Bounds:
    """The range of a numeric field: from ``low`` (excluded when ``low_open``) to ``high``, finite."""

    low: float
    high: float = math.inf
    low_open: bool = False

    def admits(self, value: float) -> bool:
        """Whether ``value`` lies in the range (NaN and infinity never do)."""
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return (value > self.low if self.low_open else value >= self.low) and value <= self.high

    def __str__(self) -> str:
        if self.high == math.inf:
            return f"{'>' if self.low_open else '>='} {self.low}"
        return f"in {'(' if self.low_open else '['}{self.low}, {self.high}]"


_POSITIVE_INT = Bounds(1)
_COUNT = Bounds(0)
_PROBABILITY = Bounds(0, 1)
_STEP_SIZE = Bounds(0, 1, low_open=True)
BOUNDS: dict[str, Bounds] = {
    "seed": Bounds(0, MAX_SEED), "torch_threads": _POSITIVE_INT,
    "reward_scale": Bounds(0),  # 0: the observation's bean scale
    "total_decisions": _COUNT, "workers": _POSITIVE_INT, "envs_per_worker": _POSITIVE_INT,
    "decisions_per_worker": _POSITIVE_INT,
    "learning_rate": _STEP_SIZE, "gamma": _PROBABILITY, "gae_lambda": _PROBABILITY,
    "update_epochs": _POSITIVE_INT, "minibatch_size": _POSITIVE_INT,
    "clip_coef": Bounds(0, 1, low_open=True),  # 0 would freeze the policy, < 0 turns the clip inside out
    "ent_coef": Bounds(0), "vf_coef": Bounds(0),
    "max_grad_norm": Bounds(0, low_open=True),  # <= 0 turns clipping into a flipped or zero gradient
    "target_kl": Bounds(0),  # 0: never stop early
    "kl_coef": Bounds(0), "bc_coef": Bounds(0),
    "imitation_decisions": _COUNT, "imitation_learning_rate": _STEP_SIZE, "imitation_epochs": _POSITIVE_INT,
    "channels": Bounds(*ARCH_BOUNDS["channels"]), "blocks": Bounds(*ARCH_BOUNDS["blocks"]),
    "pool_size": _COUNT, "snapshot_every": _POSITIVE_INT, "latest_prob": _PROBABILITY,
    "snapshots_per_rollout": _POSITIVE_INT,
    "pfsp_power": Bounds(0, 10),  # larger powers underflow the snapshot weights to 0
    "baseline_prob": _PROBABILITY,
    "checkpoint_every": _POSITIVE_INT, "eval_every": _COUNT, "eval_deals": _POSITIVE_INT,
    "eval_workers": _POSITIVE_INT, "eval_seed": Bounds(0, MAX_SEED),
}
"""The allowed range of every int and float field of :class:`TrainConfig`."""

FIXED_ON_RESUME = ("game", "channels", "blocks", "lookahead", "oracle_critic", "oracle_seat_relative", "seed",
                   "init_policy")
"""Fields a resumed run keeps from its config.yaml: they shape the network, set its starting weights or
seed the streams the checkpoint continues. (Other changes that alter the network, e.g. env_options that change the
observation planes, fail the checkpoint's architecture check before any file is written.)"""


def field_docs() -> dict[str, str]:
    """The docstring under each field of TrainConfig (for ``--help``), read from the source."""
    tree = ast.parse(inspect.getsource(TrainConfig))
    body = tree.body[0].body
    docs = {}
    for node, nxt in zip(body, body[1:]):
        if (isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)):
            docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def _field_types() -> dict[str, type]:
    """Field name → its type (a class)."""
    hints = typing.get_type_hints(TrainConfig)
    return {f.name: hints[f.name] for f in dataclasses.fields(TrainConfig)}


def _check_value(name: str, value: Any, kind: type) -> Any:
    """``value`` as the field's type, or a ValueError naming the field."""
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind in _SCALARS and (type(value) is not kind):
        raise ValueError(f"config field {name!r} must be {kind.__name__}, got {type(value).__name__} {value!r}")
    if kind is dict and not isinstance(value, dict):
        raise ValueError(f"config field {name!r} must be a mapping, got {value!r}")
    if kind is list and not isinstance(value, list):
        raise ValueError(f"config field {name!r} must be a list, got {value!r}")
    return value


def _validate(cfg: TrainConfig) -> None:
    """Range checks that the types cannot express: :data:`BOUNDS`, then the choices and pairings."""
    for name, bounds in BOUNDS.items():
        value = getattr(cfg, name)
        if not bounds.admits(value):
            finite = "a finite number " if isinstance(value, float) and not math.isfinite(value) else ""
            raise ValueError(f"config field {name!r} must be {finite}{bounds}, got {value!r}")
    if cfg.game not in GAME_NAMES:
        raise ValueError(f"config field 'game' must be one of {GAME_NAMES}, got {cfg.game!r}")
    if cfg.engine not in ENGINES:
        raise ValueError(f"config field 'engine' must be one of {ENGINES}, got {cfg.engine!r}")
    for name in ("rollout_dtype", "learner_dtype"):
        if getattr(cfg, name) not in DTYPES:
            raise ValueError(f"config field {name!r} must be one of {DTYPES}, got {getattr(cfg, name)!r}")
    if cfg.backend not in ("local", "ray", "inline"):
        raise ValueError(f"config field 'backend' must be 'local', 'ray' or 'inline', got {cfg.backend!r}")
    if cfg.baseline_prob > 0 and not cfg.baseline_opponents:
        raise ValueError("config field 'baseline_prob' is > 0 but 'baseline_opponents' is empty")
    if cfg.total_decisions == 0 and cfg.imitation_decisions == 0:
        raise ValueError("config fields 'total_decisions' and 'imitation_decisions' are both 0: nothing to train")
    if cfg.duplicate_rollouts and (cfg.engine != "vector" or cfg.envs_per_worker % 4):
        raise ValueError("config field 'duplicate_rollouts' needs engine: vector and envs_per_worker a multiple "
                         f"of 4 (got engine {cfg.engine!r}, envs_per_worker {cfg.envs_per_worker})")
    if cfg.kl_coef > 0 and cfg.imitation_decisions == 0 and not cfg.init_policy:
        raise ValueError("config field 'kl_coef' is > 0 but 'imitation_decisions' is 0 and 'init_policy' is empty: "
                         "the KL penalty pulls towards the policy PPO starts from, imitated or loaded")
    if cfg.bc_coef > 0 and cfg.baseline_prob == 0:
        raise ValueError("config field 'bc_coef' is > 0 but 'baseline_prob' is 0: no baseline sits in any hand, "
                         "so there are no decisions to clone")
    if cfg.oracle_seat_relative and not cfg.oracle_critic:
        raise ValueError("config field 'oracle_seat_relative' is true but 'oracle_critic' is false")
    if "match_hands" in cfg.env_options or "render_mode" in cfg.env_options:
        raise ValueError("config field 'env_options' may not set match_hands or render_mode: one hand per episode")


def make_config(values: dict[str, Any]) -> TrainConfig:
    """A TrainConfig from a mapping of field values; unknown keys and wrong types fail naming the key."""
    types = _field_types()
    unknown = [k for k in values if k not in types]
    if unknown:
        raise ValueError(f"unknown config key {unknown[0]!r}; known keys: {', '.join(types)}")
    cfg = TrainConfig(**{k: _check_value(k, v, types[k]) for k, v in values.items()})
    _validate(cfg)
    return cfg


def load_yaml(path: str | Path) -> dict[str, Any]:
    """The mapping of a YAML config file (``yaml.safe_load``); ValueError naming the file otherwise."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path}: is a folder; give a YAML config file (configs/*.yaml)")
    if not path.is_file():
        raise ValueError(f"{path}: no such config file (configs/*.yaml lists the shipped ones)")
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except yaml.YAMLError as exc:  # the message names the line and column
        raise ValueError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a training config is a mapping of field names, got {type(data).__name__}")
    return data


def save_yaml(cfg: TrainConfig, path: str | Path) -> None:
    """Write the resolved config (every field) as YAML."""
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(dataclasses.asdict(cfg), fh, sort_keys=False, allow_unicode=True)


def _parse_value(kind: type) -> Any:
    """An argparse ``type=`` for a field type."""
    if kind is bool:
        return _parse_bool
    if kind in (dict, list):
        return yaml.safe_load  # --env-options '{preset: qq}', --eval-opponents '[random]'
    return kind


def _parse_bool(text: str) -> bool:
    """``true``/``false`` (also 1/0, yes/no) as a bool."""
    low = text.lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def build_parser() -> argparse.ArgumentParser:
    """``python -m train`` arguments: --config, --resume and one ``--field-name`` per config field."""
    parser = argparse.ArgumentParser(
        prog="python -m train",
        description="PPO self-play for the mjenv games. Values: defaults < --config file < --field flags.")
    parser.add_argument("--config", help="YAML file of config fields (configs/*.yaml)")
    parser.add_argument("--resume", metavar="RUN_DIR",
                        help="continue the run in RUN_DIR from its checkpoint.pt (its config.yaml is the base)")
    docs = field_docs()
    for name, kind in _field_types().items():
        default = getattr(TrainConfig(), name)
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=_parse_value(kind),
                            default=argparse.SUPPRESS, metavar=kind.__name__.upper(),
                            help=f"{docs.get(name, '')} (default: {default!r})")
    return parser


def parse_args(argv: list[str] | None = None) -> tuple[TrainConfig, str | None]:
    """The resolved config and the run directory to resume (or None) from command-line arguments."""
    parser = build_parser()
    args = vars(parser.parse_args(argv))
    config_path, resume = args.pop("config"), args.pop("resume")
    if config_path and resume:
        parser.error("--resume takes the run's own config.yaml; give --config or --resume, not both")
    values: dict[str, Any] = {}
    if resume:
        if not (Path(resume) / "config.yaml").is_file():
            raise ValueError(f"--resume {resume}: no config.yaml there, so not a run directory")
        values = load_yaml(Path(resume) / "config.yaml")
        changed = [f"--{k.replace('_', '-')}" for k in FIXED_ON_RESUME if k in args and args[k] != values.get(k)]
        if changed:
            raise ValueError(f"--resume {resume}: {', '.join(changed)} would change the network, its starting "
                             "weights or the seed of the run, which its checkpoint must keep; drop the flag, or start a new run with "
                             f"--config {Path(resume) / 'config.yaml'} and the flag")
    elif config_path:
        values = load_yaml(config_path)
    values.update(args)
    return make_config(values), resume
