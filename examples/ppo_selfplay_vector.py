"""PPO self-play on mjenv's compiled engine, in one file (CleanRL style).

One network plays all four seats of every table (parameter sharing). The batched view
``mjenv.vector.SelfPlayVectorEnv`` returns, at each step and table, the seat to act, its
observation and legal actions, and the beans credited to that seat since its previous decision;
when a hand ends, ``info["final_rewards"]`` holds every seat's beans since its last decision. From
these the script builds one trajectory per (table, seat), runs GAE along it, and updates the
network with the clipped PPO objective over masked logits. It then plays the trained network
against three uniformly random players with the single-seat view
``mjenv.integrations.gymnasium.SingleSeatVectorEnv`` and prints the mean beans per hand with a
95% confidence interval.

    python examples/ppo_selfplay_vector.py                        # blood battle, happy preset
    python examples/ppo_selfplay_vector.py --game joy_mahjong --train-seconds 60
    python examples/ppo_selfplay_vector.py --help

Only public mjenv APIs, numpy and torch. docs/integrations/selfplay.md explains the view and the
measured result of this script.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import mjenv.games
from mjenv.integrations.gymnasium import SingleSeatVectorEnv
from mjenv.vector import SelfPlayVectorEnv

# ---------------------------------------------------------------------------- arguments


def arg(default, doc: str):
    """A dataclass field with its command-line help."""
    return field(default=default, metadata={"help": doc})


@dataclass
class Args:
    game: str = arg("blood_battle", "blood_battle or joy_mahjong")
    variant: str = arg("", "the table variant: blood battle happy or qq (preset), Joy Mahjong popular, eight_fan "
                           "or no_fan (room); '' for the game's default")
    seed: int = arg(1, "seeds torch and the deals")
    train_seconds: float = arg(240.0, "stop training after this many seconds of wall time")
    total_decisions: int = arg(50_000_000, "or after this many decisions, whichever comes first")
    num_envs: int = arg(256, "tables played in lockstep (each step: one decision per table)")
    num_steps: int = arg(32, "steps per rollout: num_envs * num_steps decisions per update")
    learning_rate: float = arg(1e-3, "Adam step size (annealed linearly to 0 over train_seconds)")
    gamma: float = arg(1.0, "discount per decision of the same seat (1: beans of the hand, undiscounted)")
    gae_lambda: float = arg(0.95, "GAE lambda along each (table, seat) trajectory")
    reward_scale: float = arg(48.0, "beans per unit of reward (48: a quarter of the happy preset's capped win)")
    update_epochs: int = arg(3, "passes over each rollout")
    num_minibatches: int = arg(4, "minibatches per pass")
    clip_coef: float = arg(0.2, "PPO ratio clip")
    ent_coef: float = arg(0.01, "entropy bonus")
    vf_coef: float = arg(0.5, "value loss weight")
    max_grad_norm: float = arg(0.5, "gradient norm clip")
    hidden: int = arg(256, "width of the MLP's two hidden layers")
    torch_threads: int = arg(1, "torch intra-op threads (1: the engine and the network take turns on one core)")
    eval_hands: int = arg(16384, "hands against 3 x random (rounded up to a multiple of eval_envs)")
    eval_envs: int = arg(256, "tables of the evaluation")
    eval_sample: bool = arg(False, "sample actions in the evaluation (default: the most likely legal action)")
    log_every: int = arg(10, "print a line every this many updates")
    tensorboard: str = arg("", "a TensorBoard log folder (needs the tensorboard package); '' = print only")


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line: one --flag per field (--eval-sample / --no-eval-sample for bools)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.type == "bool":  # a string: annotations are not evaluated (``from __future__``)
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=f.metadata["help"])
        else:
            kind = {"int": int, "float": float, "str": str}[f.type]
            parser.add_argument(flag, type=kind, default=f.default, help=f"{f.metadata['help']} (default {f.default!r})")
    args = Args(**vars(parser.parse_args(argv)))
    for f in dataclasses.fields(Args):  # counts >= 1, the seed >= 0, coefficients >= 0, two of them > 0
        value, bound = getattr(args, f.name), None
        if type(value) is int and value < (0 if f.name == "seed" else 1):
            bound = ">= 0" if f.name == "seed" else ">= 1"
        elif type(value) is float and (value < 0 or (value == 0 and f.name in ("reward_scale", "train_seconds"))):
            bound = "> 0" if f.name in ("reward_scale", "train_seconds") else ">= 0"
        if bound:
            parser.error(f"--{f.name.replace('_', '-')} must be {bound}, got {value}")
    if args.game not in mjenv.games.GAMES:
        parser.error(f"--game must be one of {list(mjenv.games.GAMES)}, got {args.game!r}")
    variants = mjenv.games.game(args.game).variants
    if args.variant and args.variant not in variants:
        parser.error(f"--variant of {args.game} must be one of {list(variants)}, got {args.variant!r}")
    return args


def env_options(args: Args) -> dict:
    """The env keywords of the chosen variant (``preset=`` or ``room=``)."""
    game = mjenv.games.game(args.game)
    return {game.variant_option: args.variant} if args.variant else {}


# ---------------------------------------------------------------------------- network


class Agent(nn.Module):
    """An MLP over the flattened planes with a policy head and a value head."""

    def __init__(self, obs_shape: tuple[int, ...], n_actions: int, hidden: int) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Flatten(), nn.Linear(int(np.prod(obs_shape)), hidden), nn.ReLU(),
                                   nn.Linear(hidden, hidden), nn.ReLU())
        self.actor = nn.Linear(hidden, n_actions)
        self.critic = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.actor.weight, 0.01)  # a near-uniform first policy over the legal actions
        nn.init.zeros_(self.actor.bias)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[Categorical, torch.Tensor]:
        """The policy over the legal actions (illegal logits pushed to -inf) and the value."""
        h = self.trunk(obs)
        logits = self.actor(h).masked_fill(~mask, torch.finfo(torch.float32).min)
        return Categorical(logits=logits), self.critic(h).squeeze(-1)


# ---------------------------------------------------------------------------- trajectories and GAE


def first_decisions(seats: np.ndarray, terminated: np.ndarray, decided: np.ndarray) -> np.ndarray:
    """(T, N) bool: step t's decision is its seat's first of the episode at that table.

    ``seats`` (T, N) the seat that acted, ``terminated`` (T, N) whether that step ended the
    episode; ``decided`` (N, 4), which seats already decided in the running episode, is carried
    from rollout to rollout and updated in place."""
    tables = np.arange(seats.shape[1])
    first = np.zeros(seats.shape, dtype=bool)
    for t in range(len(seats)):
        first[t] = ~decided[tables, seats[t]]
        decided[tables, seats[t]] = True
        decided[terminated[t]] = False
    return first


def seat_gae(seats: np.ndarray, rewards: np.ndarray, first: np.ndarray, terminated: np.ndarray,
             final_rewards: np.ndarray, values: np.ndarray, gamma: float, lam: float
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GAE along each (table, seat) trajectory of a rollout: (advantages, returns, valid), each (T, N).

    Step t's decision (seat ``seats[t]``) is credited with the reward that comes with the same
    seat's next decision in the episode (``rewards[t']``, returned with that observation), or with
    ``final_rewards[t_end, :, seat]`` when the episode ends first; a seat's first decision of an
    episode also keeps the reward that came with it. A decision whose outcome the rollout does not
    show yet (the seat's last one, in an episode still going) is not ``valid``: it is left out of
    the loss, and its value bootstraps the decision before it."""
    T, N = seats.shape
    tables = np.arange(N)
    adv = np.zeros((T, N), dtype=np.float32)
    valid = np.zeros((T, N), dtype=bool)
    # What follows each (table, seat)'s earliest decision seen so far, walking back in time.
    next_reward = np.zeros((N, 4), dtype=np.float32)
    next_value = np.zeros((N, 4), dtype=np.float32)
    next_adv = np.zeros((N, 4), dtype=np.float32)
    known = np.zeros((N, 4), dtype=bool)
    for t in reversed(range(T)):
        ended = terminated[t]  # the episode ended after this step: every seat's outcome is final
        next_reward[ended], next_value[ended], next_adv[ended] = final_rewards[t, ended], 0.0, 0.0
        known[ended] = True
        s = seats[t]
        ok = known[tables, s]
        reward = next_reward[tables, s] + np.where(first[t], rewards[t], 0.0)
        delta = reward + gamma * next_value[tables, s] - values[t]
        adv[t] = np.where(ok, delta + gamma * lam * next_adv[tables, s], 0.0)
        valid[t] = ok
        next_reward[tables, s], next_value[tables, s], next_adv[tables, s] = rewards[t], values[t], adv[t]
        known[tables, s] = True
    return adv, adv + values, valid


# ---------------------------------------------------------------------------- evaluation


def evaluate(agent: Agent, args: Args) -> np.ndarray:
    """Beans per hand of the agent at a random seat against 3 x random: ``eval_envs`` tables play
    the same number of hands each (so that short hands are not over-counted)."""
    env = SingleSeatVectorEnv(args.game, args.eval_envs, opponents="random", seat="random", **env_options(args))
    per_table = -(-args.eval_hands // args.eval_envs)
    obs, info = env.reset(seed=args.seed + 10**6)  # deals the training never saw
    running = np.zeros(args.eval_envs)
    hands: list[list[float]] = [[] for _ in range(args.eval_envs)]
    with torch.no_grad():
        while min(map(len, hands)) < per_table:
            mask = torch.as_tensor(env.action_masks(), dtype=torch.bool)
            dist, _ = agent(torch.as_tensor(obs), mask)
            action = dist.sample() if args.eval_sample else dist.logits.argmax(-1)
            obs, reward, terminated, _, info = env.step(action.numpy())
            running += reward
            for i in np.flatnonzero(terminated):
                if len(hands[i]) < per_table:
                    hands[i].append(running[i])
                running[i] = 0.0
    env.close()
    return np.array(hands).ravel()


def mean_ci95(x: np.ndarray) -> tuple[float, float]:
    """Mean and half-width of its normal 95% confidence interval."""
    return float(x.mean()), float(1.96 * x.std(ddof=1) / np.sqrt(len(x)))


# ---------------------------------------------------------------------------- training


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    start = time.perf_counter()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    writer = None
    if args.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(args.tensorboard)

    envs = SelfPlayVectorEnv(args.game, args.num_envs, **env_options(args))
    obs_shape, n_actions = envs.single_observation_space.shape, envs.single_action_space.n
    agent = Agent(obs_shape, n_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    T, N = args.num_steps, args.num_envs
    obs_buf = torch.zeros((T, N, *obs_shape))
    mask_buf = torch.zeros((T, N, n_actions), dtype=torch.bool)
    action_buf = torch.zeros((T, N), dtype=torch.long)
    logprob_buf = torch.zeros((T, N))
    value_buf = np.zeros((T, N), dtype=np.float32)
    seat_buf = np.zeros((T, N), dtype=np.int64)
    reward_buf = np.zeros((T, N), dtype=np.float32)  # the reward returned with step t's observation
    term_buf = np.zeros((T, N), dtype=bool)
    final_buf = np.zeros((T, N, 4), dtype=np.float32)
    decided = np.zeros((N, 4), dtype=bool)  # seats that decided in each table's running episode

    obs, info = envs.reset(seed=args.seed)
    reward = np.zeros(N, dtype=np.float32)
    decisions = hands = update = 0
    train_start = time.perf_counter()
    print(f"setup {train_start - start:.1f}s: {args.game} {env_options(args) or '(default)'}, "
          f"{N} tables x {T} steps per update, MLP {args.hidden}x2")
    while time.perf_counter() - train_start < args.train_seconds and decisions < args.total_decisions:
        update += 1
        frac = max(0.0, 1.0 - (time.perf_counter() - train_start) / args.train_seconds)
        optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        # ---- rollout: one decision per table per step, every seat played by the same network
        for t in range(T):
            obs_buf[t] = torch.as_tensor(obs)
            mask_buf[t] = torch.as_tensor(info["action_mask"], dtype=torch.bool)
            seat_buf[t], reward_buf[t] = info["seat"], reward
            with torch.no_grad():
                dist, value = agent(obs_buf[t], mask_buf[t])
                action = dist.sample()
            action_buf[t], logprob_buf[t], value_buf[t] = action, dist.log_prob(action), value.numpy()
            obs, reward, terminated, _, info = envs.step(action.numpy())
            term_buf[t] = terminated
            final_buf[t] = info["final_rewards"] if terminated.any() else 0.0
            hands += int(terminated.sum())
        decisions += T * N

        # ---- per-(table, seat) credit and GAE, in reward units
        first = first_decisions(seat_buf, term_buf, decided)
        adv, ret, valid = seat_gae(seat_buf, reward_buf / args.reward_scale, first, term_buf,
                                   final_buf / args.reward_scale, value_buf, args.gamma, args.gae_lambda)

        # ---- PPO update over the valid decisions
        keep = torch.as_tensor(valid.reshape(-1))
        b_obs, b_mask = obs_buf.reshape(T * N, *obs_shape)[keep], mask_buf.reshape(T * N, -1)[keep]
        b_action, b_logprob = action_buf.reshape(-1)[keep], logprob_buf.reshape(-1)[keep]
        b_adv, b_ret = torch.as_tensor(adv.reshape(-1))[keep], torch.as_tensor(ret.reshape(-1))[keep]
        size = len(b_adv)
        mb = -(-size // args.num_minibatches)
        for _ in range(args.update_epochs):
            for idx in torch.randperm(size).split(mb):
                dist, value = agent(b_obs[idx], b_mask[idx])
                logratio = dist.log_prob(b_action[idx]) - b_logprob[idx]
                ratio = logratio.exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((value - b_ret[idx]) ** 2).mean()
                entropy = dist.entropy().mean()
                loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        # ---- logs
        with torch.no_grad():
            approx_kl = ((ratio - 1) - logratio).mean().item()
        explained = 1 - np.var(ret[valid] - value_buf[valid]) / (np.var(ret[valid]) + 1e-8)
        elapsed = time.perf_counter() - train_start
        stats = {"losses/policy": pg_loss.item(), "losses/value": v_loss.item(), "losses/entropy": entropy.item(),
                 "losses/approx_kl": approx_kl, "losses/explained_variance": float(explained),
                 "charts/decisions_per_s": decisions / elapsed, "charts/hands": hands}
        if writer is not None:
            for key, value in stats.items():
                writer.add_scalar(key, value, decisions)
        if update % args.log_every == 1 or args.log_every == 1:
            print(f"update {update:4d}  {elapsed:6.1f}s  decisions {decisions:>9,}  hands {hands:>7,}  "
                  f"{decisions / elapsed:7,.0f}/s  entropy {entropy.item():.3f}  value {v_loss.item():.3f}  "
                  f"kl {approx_kl:.4f}  explained var {explained:.2f}")
    train_time = time.perf_counter() - train_start
    envs.close()

    # ---- evaluation against 3 x random
    eval_start = time.perf_counter()
    beans = evaluate(agent, args)
    mean, half = mean_ci95(beans)
    eval_time = time.perf_counter() - eval_start
    total = time.perf_counter() - start
    print(f"trained {train_time:.0f}s: {update} updates, {decisions:,} decisions, {hands:,} self-play hands")
    print(f"evaluation vs 3 x random ({'sampled' if args.eval_sample else 'greedy'}, random seat): "
          f"{mean:+.2f} beans per hand, 95% CI [{mean - half:+.2f}, {mean + half:+.2f}] over {len(beans):,} hands "
          f"({eval_time:.0f}s)")
    print(f"wall time of main() {total:.0f}s (setup {train_start - start:.0f}s, training {train_time:.0f}s, "
          f"evaluation {eval_time:.0f}s)")
    if writer is not None:
        writer.add_scalar("eval/beans_per_hand", mean, decisions)
        writer.close()
    return {"mean": mean, "ci95": half, "hands": len(beans), "decisions": decisions, "seconds": total}


if __name__ == "__main__":
    main()
