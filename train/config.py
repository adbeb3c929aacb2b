"""Training configuration: one dataclass of documented fields, loaded from YAML with command-line overrides.

``python -m train --config configs/quickstart_blood_battle.yaml --total-decisions 20000``: the YAML
file (``yaml.safe_load``, a flat mapping of field names) overrides the defaults below, and each
``--field-name VALUE`` overrides the file. The flags, their parsing (YAML text for mappings and
lists, ``true``/``false`` for switches, the choices of ``Literal`` fields) and ``--help`` (each field's
docstring) come from the dataclass through jsonargparse. Each numeric field declares its range at
the field (``Annotated[int, POSITIVE]``: a :class:`Bounds`; NaN and infinity never pass). An unknown
key, a value of the wrong type or choice, or a number out of range fails at once, naming the field.
The resolved config is saved as ``config.yaml`` in the run directory. ``--resume RUN`` takes the
run's ``config.yaml`` as the base and refuses flags that would change the network or the seed
(:data:`FIXED_ON_RESUME`).
"""

import argparse
import dataclasses
import math
import re
import typing
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml

from agents.checkpoint import ARCH_BOUNDS
from mjenv.games import GAME_NAMES

if TYPE_CHECKING:
    import jsonargparse

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

    __repr__ = __str__  # --help shows a field's type as ``Annotated[int, >= 1]``


POSITIVE = Bounds(1)
COUNT = Bounds(0)
PROBABILITY = Bounds(0, 1)
STEP_SIZE = Bounds(0, 1, low_open=True)
SEED = Bounds(0, MAX_SEED)
Dtype = Literal["float32", "bfloat16"]


@dataclasses.dataclass
class TrainConfig:
    """PPO self-play for one game (one policy shared by the four seats)."""

    # ---------------------------------------------------------------- run
    exp_name: str = "ppo_blood_battle"
    """Name of the experiment; the run directory is ``{runs_dir}/{exp_name}__{seed}__{unix time}``."""
    runs_dir: str = "runs"
    """Folder holding the run directories (TensorBoard events, config.yaml, checkpoint.pt)."""
    seed: Annotated[int, SEED] = 1
    """Seed of everything random: network initialisation, deals, action sampling, minibatches."""
    device: str = "auto"
    """Torch device of the learner: ``auto`` (CUDA when present, else the CPU), ``cpu``, ``cuda``,
    ``cuda:1``; an explicit device that is absent fails before the run starts. Rollout workers
    always run on the CPU."""
    torch_threads: Annotated[int, POSITIVE] = 1
    """Torch threads of the learner process (rollout workers use one each). More help only on idle
    cores: on busy ones small matrix products slow down several times."""
    progress: bool = True
    """Show a tqdm progress bar."""

    # ---------------------------------------------------------------- environment
    game: Literal[GAME_NAMES] = "blood_battle"
    """``blood_battle`` (``mjenv.blood_battle_v0``) or ``joy_mahjong`` (``mjenv.joy_mahjong_v0``)."""
    env_options: dict = dataclasses.field(default_factory=dict)
    """Options of the game's ``raw_env`` (blood battle: ``preset``, …; Joy: ``room``, …; any rule field)."""
    reward_scale: Annotated[float, Bounds(0)] = 0.0
    """Beans per unit of reward; 0 = the scale of the observation's bean planes (blood battle: the
    beans of one capped win, ``base_points · 2^(cap_fan−1) · room_coefficient``, 192 for happy)."""

    # ---------------------------------------------------------------- rollouts
    total_decisions: Annotated[int, COUNT] = 2_000_000
    """Stop after this many decisions of the learning policy (the x axis of every chart); 0 with
    ``imitation_decisions`` trains the behaviour-cloned policy only."""
    engine: Literal["compiled", "reference", "vector", "aec"] = "compiled"
    """The backend of the rollouts' batched env (``mjenv.vector.make(..., backend=...)``, every table
    of a worker in one env, one forward pass per policy per step): ``compiled`` (the compiled engine)
    or ``reference`` (the readable engine, one Python game per table; slower). Both play the same
    hands, lineups and reward crediting. ``vector`` and ``aec`` are the deprecated names of
    ``compiled`` and ``reference`` (old config files load, with a FutureWarning; gone in mjenv 0.2)."""
    backend: Literal["local", "ray", "inline"] = "local"
    """Where rollouts run: ``local`` (worker processes), ``ray`` (Ray actors) or ``inline`` (one worker
    in the learner's process, for debugging)."""
    ray_address: str = ""
    """With ``backend: ray``: the cluster to join (``auto`` after ``ray start --head`` on this node);
    empty starts a local Ray with ``workers`` CPUs."""
    workers: Annotated[int, POSITIVE] = 2
    """Rollout workers (processes or Ray actors)."""
    envs_per_worker: Annotated[int, POSITIVE] = 128
    """Tables each worker plays in lockstep, so that the networks see batches (``engine: compiled``:
    hundreds are cheap; ``reference``: one Python game each, 16 to 32)."""
    decisions_per_worker: Annotated[int, POSITIVE] = 2048
    """Learning-policy decisions each worker collects per update; started hands are always finished."""

    duplicate_rollouts: bool = False
    """Play every deal in four seat rotations (tables in sets of four share their deals; each deal's
    lineup is rotated one seat per table); a decision's advantage is then its seat's hand return less
    the *par*, the mean of what that seat won in the other three rotations: a baseline that removes
    the luck of the deal, in place of GAE (``train/vector_rollout.py``; the critic still trains).
    ``envs_per_worker`` a multiple of 4."""

    rollout_dtype: Dtype = "float32"
    """Precision of the rollout workers' forward passes: ``float32``, or ``bfloat16`` (under
    ``torch.autocast``; 1.7–2× faster for the 64 × 3 network at batches of 64 or more on CPUs with
    AMX or AVX512-BF16, no gain without them). The stored behaviour log-probabilities are those of
    the policy that sampled, so PPO's ratio corrects the small difference; the learner and the
    evaluation stay float32."""

    learner_dtype: Dtype = "float32"
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
    learning_rate: Annotated[float, STEP_SIZE] = 3e-4
    """Adam learning rate."""
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0 over ``total_decisions``."""
    gamma: Annotated[float, PROBABILITY] = 1.0
    """Discount per decision of a seat (1: the objective is the hand's bean total)."""
    gae_lambda: Annotated[float, PROBABILITY] = 0.95
    """GAE λ, over the decisions of one seat in one hand."""
    update_epochs: Annotated[int, POSITIVE] = 4
    """Passes over each batch."""
    minibatch_size: Annotated[int, POSITIVE] = 1024
    """Decisions per gradient step (the batch is split into equal minibatches of about this size)."""
    norm_adv: bool = True
    """Normalise advantages per minibatch."""
    clip_coef: Annotated[float, Bounds(0, 1, low_open=True)] = 0.2
    """PPO ratio clip ε."""
    clip_vloss: bool = True
    """Clip the value update around the rollout's value, as the policy ratio is clipped."""
    ent_coef: Annotated[float, Bounds(0)] = 0.01
    """Entropy bonus coefficient. After imitation of a deterministic teacher about 0.1 (the
    quickstart's): the clone is nearly deterministic and PPO needs the bonus to explore."""
    vf_coef: Annotated[float, Bounds(0)] = 0.5
    """Value loss coefficient."""
    max_grad_norm: Annotated[float, Bounds(0, low_open=True)] = 0.5
    """Gradient norm clip."""
    target_kl: Annotated[float, Bounds(0)] = 0.0
    """Stop an update's epochs early when an epoch's mean approximate KL exceeds this; 0 = never."""
    kl_coef: Annotated[float, Bounds(0)] = 0.0
    """Weight of a KL penalty KL(π_BC ‖ π) towards the policy PPO starts from (the weights at the end
    of the imitation warm start, else ``init_policy``'s; kept in the checkpoint); 0 = none. Needs
    ``imitation_decisions`` or ``init_policy``."""
    bc_coef: Annotated[float, Bounds(0)] = 0.0
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
    imitation_decisions: Annotated[int, COUNT] = 0
    """Before PPO, learn from this many decisions of ``teacher`` playing all four seats (behaviour
    cloning: cross-entropy on its actions, value regression on its seats' bean returns); 0 = none.
    These decisions do not count toward ``total_decisions``."""
    teacher: str = "heuristic"
    """The policy imitated (an ``agents.load_policy`` name or checkpoint)."""
    imitation_learning_rate: Annotated[float, STEP_SIZE] = 1e-3
    """Adam learning rate of the imitation phase (constant)."""
    imitation_epochs: Annotated[int, POSITIVE] = 2
    """Passes over each batch of demonstrations (fresh demonstrations every update)."""

    # ---------------------------------------------------------------- network
    channels: Annotated[int, Bounds(*ARCH_BOUNDS["channels"])] = 64
    """Channels of the residual network (see ``agents.neural``)."""
    blocks: Annotated[int, Bounds(*ARCH_BOUNDS["blocks"])] = 3
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
    pool_size: Annotated[int, COUNT] = 8
    """Snapshots of past policies kept as opponents (the oldest leaves first)."""
    snapshot_every: Annotated[int, POSITIVE] = 10
    """Add a snapshot of the learning policy to the pool every this many updates."""
    latest_prob: Annotated[float, PROBABILITY] = 0.5
    """Chance that a seat besides the learner's own is the current policy instead of a snapshot."""
    snapshots_per_rollout: Annotated[int, POSITIVE] = 2
    """Snapshots a worker draws (by priority, with replacement) for one update; the opponent seats of
    its hands pick among those only. Each snapshot keeps its odds, and the network batches stay large."""
    pfsp_power: Annotated[float, Bounds(0, 10)] = 1.0
    """Prioritised sampling: a snapshot is drawn with weight ``p^power``, p = the smoothed rate at
    which it beat the learner (0 = uniform)."""
    baseline_opponents: list = dataclasses.field(default_factory=list)
    """Fixed opponents besides the pool (``agents.load_policy`` names or checkpoints, e.g. ``[heuristic]``)."""
    baseline_prob: Annotated[float, PROBABILITY] = 0.0
    """Chance that a hand's three other seats are all one of ``baseline_opponents`` (drawn uniformly)."""

    # ---------------------------------------------------------------- checkpoints and evaluation
    checkpoint_every: Annotated[int, POSITIVE] = 10
    """Write ``checkpoint.pt`` every this many updates (and at the end)."""
    eval_every: Annotated[int, COUNT] = 0
    """Evaluate against the baselines every this many updates; 0 = only at the end."""
    eval_deals: Annotated[int, POSITIVE] = 100
    """Duplicate deals per baseline (each played in 4 rotations)."""
    eval_opponents: list = dataclasses.field(default_factory=lambda: ["random", "heuristic"])
    """Baselines for the arena (``agents.load_policy`` names); the policy plays 1 seat vs 3."""
    eval_workers: Annotated[int, POSITIVE] = 1
    """Arena worker processes of the periodic evaluations; each new process pays torch's import, so 1
    is fastest for short evaluations. The final evaluation uses ``max(eval_workers, workers)``."""
    eval_seed: Annotated[int, SEED] = 12345
    """Arena seed: the same deals at every evaluation."""


HINTS: dict[str, Any] = typing.get_type_hints(TrainConfig, include_extras=True)
"""Field name → its annotation (``Annotated[...]`` kept)."""
BOUNDS: dict[str, Bounds] = {name: meta for name, hint in HINTS.items()
                             for meta in getattr(hint, "__metadata__", ()) if isinstance(meta, Bounds)}
"""The allowed range of every int and float field of :class:`TrainConfig`, as declared at the field."""

OLD_ENGINES = {"vector": "compiled", "aec": "reference"}
"""Deprecated values of the field ``engine`` (config files and runs before mjenv's backends) and the
backend each names; a config made from them holds the new name."""

FIXED_ON_RESUME = ("game", "channels", "blocks", "lookahead", "oracle_critic", "oracle_seat_relative", "seed",
                   "init_policy")
"""Fields a resumed run keeps from its config.yaml: they shape the network, set its starting weights or
seed the streams the checkpoint continues. (Other changes that alter the network, e.g. env_options that change the
observation planes, fail the checkpoint's architecture check before any file is written.)"""

def field_docs() -> dict[str, str]:
    """The docstring under each field of TrainConfig (``--help`` shows them)."""
    return {a.dest: " ".join(a.help.split()) for a in build_parser()._actions if a.dest in HINTS}


def _base(hint: Any) -> Any:
    """The type of a field's annotation, its ``Annotated`` metadata dropped."""
    return typing.get_args(hint)[0] if typing.get_origin(hint) is Annotated else hint


def _check_value(name: str, value: Any, hint: Any) -> Any:
    """``value`` as the field's type, or a ValueError naming the field."""
    kind = _base(hint)
    if typing.get_origin(kind) is Literal:
        if value not in typing.get_args(kind):
            raise ValueError(f"config field {name!r} must be one of {typing.get_args(kind)}, got {value!r}")
        return value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if type(value) is not kind:
        what = {dict: "a mapping", list: "a list"}.get(kind, kind.__name__)
        raise ValueError(f"config field {name!r} must be {what}, got {type(value).__name__} {value!r}")
    return value


def _validate(cfg: TrainConfig) -> None:
    """Range checks that the types cannot express: :data:`BOUNDS`, then the pairings of fields."""
    for name, bounds in BOUNDS.items():
        value = getattr(cfg, name)
        if not bounds.admits(value):
            finite = "a finite number " if isinstance(value, float) and not math.isfinite(value) else ""
            raise ValueError(f"config field {name!r} must be {finite}{bounds}, got {value!r}")
    if cfg.baseline_prob > 0 and not cfg.baseline_opponents:
        raise ValueError("config field 'baseline_prob' is > 0 but 'baseline_opponents' is empty")
    if cfg.total_decisions == 0 and cfg.imitation_decisions == 0:
        raise ValueError("config fields 'total_decisions' and 'imitation_decisions' are both 0: nothing to train")
    if cfg.duplicate_rollouts and cfg.envs_per_worker % 4:
        raise ValueError("config field 'duplicate_rollouts' needs envs_per_worker a multiple of 4 (the four "
                         f"rotations of a deal), got {cfg.envs_per_worker}")
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
    unknown = [k for k in values if k not in HINTS]
    if unknown:
        raise ValueError(f"unknown config key {unknown[0]!r}; known keys: {', '.join(HINTS)}")
    checked = {k: _check_value(k, v, HINTS[k]) for k, v in values.items()}
    if checked.get("engine") in OLD_ENGINES:
        new = OLD_ENGINES[checked["engine"]]
        warnings.warn(f"config field 'engine': {checked['engine']!r} is the deprecated name of {new!r} (gone in "
                      f"mjenv 0.2); write engine: {new}", FutureWarning, stacklevel=2)
        checked["engine"] = new
    cfg = TrainConfig(**checked)
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


def _flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def build_parser() -> "jsonargparse.ArgumentParser":
    """``python -m train`` arguments: --config, --resume and one ``--field-name`` per config field."""
    import jsonargparse  # here: 0.3 s of imports that rollout workers, which import this module, never need

    jsonargparse.set_parsing_settings(docstring_parse_attribute_docstrings=True)  # the field docstrings are the help
    parser = jsonargparse.ArgumentParser(
        prog="python -m train", exit_on_error=False,
        description="PPO self-play for the mjenv games. Values: defaults < --config file < --field flags.")
    parser.add_argument("--config", help="YAML file of config fields (configs/*.yaml)")
    parser.add_argument("--resume", metavar="RUN_DIR",
                        help="continue the run in RUN_DIR from its checkpoint.pt (its config.yaml is the base)")
    parser.add_class_arguments(TrainConfig)
    for action in parser._actions:  # the flags are spelled with dashes, as argparse's own are
        if action.dest in HINTS:
            parser._option_string_actions.pop(action.option_strings[0])
            action.option_strings = [_flag(action.dest)]
            if action.metavar is None or _base(HINTS[action.dest]) is list:  # INT, FLOAT, STR, DICT, LIST
                action.metavar = _base(HINTS[action.dest]).__name__.upper()
            parser._option_string_actions[action.option_strings[0]] = action
    return parser


def parse_args(argv: list[str] | None = None) -> tuple[TrainConfig, str | None]:
    """The resolved config and the run directory to resume (or None) from command-line arguments;
    a ValueError naming the flag or field otherwise."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv, defaults=False).as_dict()  # only the flags given
    except argparse.ArgumentError as exc:  # 'Parser key "workers":\n  Expected a <class 'int'>. ...'
        message = re.sub(r'Parser key "(\w+)":', lambda m: f"argument {_flag(m[1])}:", " ".join(str(exc).split()))
        raise ValueError(message) from None
    config_path, resume = args.pop("config", None), args.pop("resume", None)
    if config_path and resume:
        raise ValueError("--resume takes the run's own config.yaml; give --config or --resume, not both")
    values: dict[str, Any] = {}
    if resume:
        if not (Path(resume) / "config.yaml").is_file():
            raise ValueError(f"--resume {resume}: no config.yaml there, so not a run directory")
        values = load_yaml(Path(resume) / "config.yaml")
        changed = [_flag(k) for k in FIXED_ON_RESUME if k in args and args[k] != values.get(k)]
        if changed:
            raise ValueError(f"--resume {resume}: {', '.join(changed)} would change the network, its starting "
                             "weights or the seed of the run, which its checkpoint must keep; drop the flag, or start a new run with "
                             f"--config {Path(resume) / 'config.yaml'} and the flag")
    elif config_path:
        values = load_yaml(config_path)
    values.update(args)
    return make_config(values), resume
