"""Train the blood battle's belief model (:mod:`agents.belief`) by supervised learning on the
compiled engine's hidden state.

    python -m train.belief --config configs/belief_blood_battle_happy.yaml

**Data.** Tables of mixed play on :mod:`mjenv.vector` (each seat of each table plays a policy drawn
from ``policies`` with weights ``weights``: the heuristic, a weaker variant, the shipped network,
random). At every own-turn decision (the 定缺 is over) a fraction ``keep`` of the tables record the
observation of the seat to act (uint8 form) and the labels the engine's state gives
(:func:`labels`): the copies of each kind in the live wall and in each opponent's concealed tiles
(with its 暗杠), each opponent's shanten, and the kinds it would win on. Training tables are dealt
from ``seed``, held-out ones from ``eval_seed`` (mixed play) and ``eval_seed + 1`` (four heuristics,
the play the search probe's MLP was measured on): seeds the training never sees.

**Fit.** Adam on location nats + shanten cross-entropy + ``wait_weight`` × wait binary
cross-entropy, ``epochs`` passes in minibatches of ``minibatch``.

**Report** (``metrics.json`` and the checkpoint's ``metrics``), on the held-out observations:
location nats per observation of the model and of uniform dealing, shanten accuracy and the AUC of
"ready" (shanten 0), a reliability table of the location probabilities and of the discard danger,
and the AUC of the danger of each discard the seat could make (does some opponent in play win on
it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numba import njit

from agents import belief as bm
from agents.compiled import features as cf
from agents.registry import load_policy
from mjenv.encoding import BloodBattleObserver
from mjenv.outputs import OutputError, check_output_folder, write_json
from mjenv.vector.engine import blood_battle as eng

from .config import load_yaml

DEFAULTS: dict[str, Any] = {
    "preset": "happy", "seed": 1, "eval_seed": 900001, "tables": 256, "observations": 200000,
    "eval_observations": 20000, "keep": 0.25,
    "policies": ["heuristic", "heuristic-nodefence", "blood_battle_happy", "random"],
    "weights": [0.55, 0.15, 0.2, 0.1],
    "channels": 64, "blocks": 3, "epochs": 4, "minibatch": 256, "learning_rate": 0.002, "wait_weight": 1.0,
    "out": "runs/belief_happy",
}
"""Config fields and their defaults (a YAML config overrides them, and ``--field value`` the YAML)."""


@njit(cache=True, nogil=True)
def labels(st: eng.State, tables: np.ndarray, counts: np.ndarray, shanten: np.ndarray, waits: np.ndarray,
           suit_table: np.ndarray, win_table: np.ndarray) -> None:
    """For the seat to act at each of ``tables``: ``counts`` (n, 4, 27) copies of each kind in the
    live wall (row 0) and in opponent r's concealed tiles with its 暗杠 (row r, relative seats;
    a winner's winning tile is shown, not held); ``shanten`` (n, 3) of each
    opponent, -2 for one out of play; ``waits`` (n, 3, 27) the kinds it would win on."""
    for j in range(len(tables)):
        t = tables[j]
        s = st.current[t]
        counts[j] = 0
        for i in range(st.head[t], st.tail[t]):
            counts[j, 0, st.wall[t, i]] += 1
        for r in range(1, 4):
            o = (s + r) % 4
            for k in range(27):
                counts[j, r, k] = st.hands[t, o, k] + (4 if st.meld[t, o, k] == eng.ANKAN else 0)
            waits[j, r - 1] = 0
            if st.won[t, o]:
                shanten[j, r - 1] = -2
                continue
            shanten[j, r - 1] = cf.shanten(st.hands[t, o], st.void[t, o], st.n_melds[t, o], suit_table)
            for k in range(27):
                waits[j, r - 1, k] = eng.can_win_on(st, t, o, k, win_table)


def generate(cfg: dict[str, Any], seed: int, n_obs: int, log: Any = None) -> dict[str, np.ndarray]:
    """``n_obs`` own-turn observations of mixed play dealt from ``seed``, with their labels."""
    import mjenv.vector as mv

    rng = np.random.default_rng(seed)
    n = cfg["tables"]
    venv = mv.make("blood_battle", n, copy=False, preset=cfg["preset"])
    arrays, st = venv.backend.arrays, venv.backend.st
    policies = [load_policy(p) for p in cfg["policies"]]
    weights = np.asarray(cfg["weights"], dtype=np.float64)
    observer = BloodBattleObserver(venv.backend.bean_scale)
    suit_table, win_table = cf.suit_table(), venv.backend._table
    out: dict[str, list[np.ndarray]] = {"obs": [], "counts": [], "shanten": [], "waits": []}
    got, hand = 0, 0
    while got < n_obs:
        who = rng.choice(len(policies), size=(n, 4), p=weights / weights.sum())
        obs, info = venv.reset(seed=seed * 1_000_003 + hand)
        hand += 1
        active = np.ones(n, dtype=np.bool_)
        while active.any() and got < n_obs:
            x, mask, seat = obs["observation"], obs["action_mask"], info["seat"]
            pick = np.flatnonzero(active & (arrays.phase == eng.TURN) & (rng.random(n) < cfg["keep"]))
            if len(pick):
                c, sh, w = (np.zeros((len(pick), 4, 27), np.int8), np.zeros((len(pick), 3), np.int8),
                            np.zeros((len(pick), 3, 27), np.bool_))
                labels(st, pick, c, sh, w, suit_table, win_table)
                # A robbed kong (抢杠) leaves the observation's count of unseen tiles off by one; skip those rows.
                ok = (bm.unseen_counts(x[pick]) == c.sum(axis=1)).all(axis=1)
                out["obs"].append(observer.to_uint8(x[pick][ok]))
                out["counts"].append(c[ok]), out["shanten"].append(sh[ok]), out["waits"].append(w[ok])
                got += int(ok.sum())
            actions = np.zeros(n, dtype=np.int64)
            mover = who[np.arange(n), seat]
            for i, policy in enumerate(policies):
                rows = np.flatnonzero(active & (mover == i))
                if len(rows):
                    actions[rows] = policy.act_batch(x[rows], mask[rows], rng)
            obs, _, terminated, _, info = venv.step(actions, active=active)
            active &= ~terminated
        if log:
            print(f"  {got}/{n_obs} observations ({hand} rounds of {n} tables)", file=log, flush=True)
    venv.close()
    return {k: np.concatenate(v)[:n_obs] for k, v in out.items()}


def _tensors(data: dict[str, np.ndarray], rows: np.ndarray, observer: BloodBattleObserver) -> tuple[torch.Tensor, ...]:
    """(features, counts, sizes, shanten class, in play, waits) of ``rows``."""
    obs = observer.from_uint8(data["obs"][rows])
    sh = data["shanten"][rows].astype(np.int64)
    return (torch.from_numpy(bm.features(obs)), torch.from_numpy(data["counts"][rows].transpose(0, 2, 1).astype(np.float32)),
            torch.from_numpy(bm.location_sizes(obs).astype(np.float32)), torch.from_numpy(np.clip(sh + 1, 0, 7)),
            torch.from_numpy(sh >= -1), torch.from_numpy(data["waits"][rows].astype(np.float32)))


def loss_terms(net: bm.BeliefNet, batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mean location nats, shanten cross-entropy and wait BCE (over opponents in play) of a batch."""
    x, counts, sizes, sh, playing, waits = batch
    loc, sh_logits, wt = net(x)
    nats = bm.location_nats(loc, counts, sizes).mean()
    ce = torch.nn.functional.cross_entropy(sh_logits[playing], sh[playing]) if playing.any() else loc.sum() * 0
    bce = torch.nn.functional.binary_cross_entropy_with_logits(wt, waits, reduction="none")
    bce = (bce * playing[:, :, None]).sum() / playing.sum().clamp(min=1) / 27
    return nats, ce, bce


def fit(cfg: dict[str, Any], data: dict[str, np.ndarray], log: Any = None) -> bm.BeliefNet:
    """A BeliefNet fitted to ``data`` (module docstring)."""
    torch.manual_seed(cfg["seed"])
    observer = BloodBattleObserver(1.0)
    net = bm.BeliefNet(cfg["channels"], cfg["blocks"])
    opt = torch.optim.Adam(net.parameters(), lr=cfg["learning_rate"])
    n = len(data["obs"])
    steps = max(1, cfg["epochs"] * (n // cfg["minibatch"]))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg["learning_rate"], total_steps=steps, pct_start=0.05)
    rng = np.random.default_rng(cfg["seed"])
    step = 0
    for epoch in range(cfg["epochs"]):
        order = rng.permutation(n)
        total = np.zeros(3)
        for b in range(n // cfg["minibatch"]):
            rows = order[b * cfg["minibatch"] : (b + 1) * cfg["minibatch"]]
            nats, ce, bce = loss_terms(net, _tensors(data, rows, observer))
            opt.zero_grad()
            (nats + ce + cfg["wait_weight"] * bce).backward()
            opt.step()
            sched.step()
            step += 1
            total += [float(nats.detach()), float(ce.detach()), float(bce.detach())]
            if log and b % 250 == 249:
                print(f"    step {b + 1}: nats {total[0] / (b + 1):.2f}", file=log, flush=True)
        if log:
            m = total / max(1, n // cfg["minibatch"])
            print(f"  epoch {epoch + 1}: nats {m[0]:.2f}, shanten CE {m[1]:.3f}, wait BCE {m[2]:.4f}", file=log, flush=True)
    return net.eval()


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """The area under the ROC curve (ties counted half), from the ranks."""
    scores, positive = np.asarray(scores, np.float64), np.asarray(positive, bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if not n_pos or not n_neg:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    # average ranks of ties
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    avg = first + (counts - 1) / 2 + 1
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def reliability(p: np.ndarray, y: np.ndarray, w: np.ndarray, bins: int = 10) -> list[dict[str, float]]:
    """Rows (bin, weight, mean predicted, observed frequency) of probabilities ``p`` against outcomes
    ``y`` (frequencies in [0, 1]) with weights ``w``."""
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(p, edges) - 1, 0, bins - 1)
    rows = []
    for b in range(bins):
        m = which == b
        if w[m].sum() > 0:
            rows.append({"bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}", "weight": float(w[m].sum()),
                         "predicted": float(np.average(p[m], weights=w[m])), "observed": float(np.average(y[m], weights=w[m]))})
    return rows


@torch.no_grad()
def evaluate(net: bm.BeliefNet, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """The held-out report (module docstring)."""
    observer = BloodBattleObserver(1.0)
    rows = np.arange(len(data["obs"]))
    x, counts, sizes, sh, playing, waits = _tensors(data, rows, observer)
    loc, sh_logits, wt = net(x)
    nats = bm.location_nats(loc, counts, sizes)
    uniform = bm.location_nats(torch.zeros_like(loc), counts, sizes)
    probs = bm.location_log_probs(loc, sizes).exp().numpy()
    unseen = counts.sum(dim=2).numpy()
    kinds = unseen > 0
    p_loc = probs[kinds]  # (m, 4)
    y_loc = (counts.numpy()[kinds] / unseen[kinds][:, None])
    w_loc = np.repeat(unseen[kinds][:, None], 4, axis=1)
    sh_p = torch.softmax(sh_logits, dim=2).numpy()
    play = playing.numpy()
    ready_p, ready_y = sh_p[:, :, 1][play], (sh.numpy() == 1)[play]
    w_p = torch.sigmoid(wt).numpy() * play[:, :, None]
    danger = 1 - np.prod(1 - w_p, axis=1)
    deal_in = (waits.numpy() * play[:, :, None]).max(axis=1) > 0
    obs = observer.from_uint8(data["obs"])
    can_discard = obs[:, bm.V["hand"].start] > 0.5
    return {
        "observations": int(len(rows)),
        "location_nats": float(nats.mean()), "uniform_nats": float(uniform.mean()),
        "shanten_accuracy": float((sh_logits.argmax(dim=2) == sh)[playing].float().mean()),
        "ready_rate": float(ready_y.mean()), "ready_auc": auc(ready_p, ready_y),
        "deal_in_rate": float(deal_in[can_discard].mean()),
        "deal_in_auc": auc(danger[can_discard], deal_in[can_discard]),
        "location_reliability": reliability(p_loc.reshape(-1), y_loc.reshape(-1), w_loc.reshape(-1)),
        "danger_reliability": reliability(danger[can_discard], deal_in[can_discard].astype(np.float64),
                                          np.ones(int(can_discard.sum()))),
    }


DATA_KEYS = ("preset", "seed", "eval_seed", "tables", "observations", "eval_observations", "keep", "policies",
             "weights")
"""The fields the data depend on: ``data.npz`` in the run folder is reused while they match."""


def _data(cfg: dict[str, Any], out: Path) -> tuple[dict[str, np.ndarray], ...]:
    """The training, held-out (mixed play) and held-out (four heuristics) data of the run folder
    ``out``: generated once and kept in ``data.npz``, reused while :data:`DATA_KEYS` match."""
    path, key = out / "data.npz", json.dumps({k: cfg[k] for k in DATA_KEYS}, sort_keys=True)
    parts = ("train", "held", "held_h")
    if path.is_file():
        with np.load(path) as f:
            if str(f["key"]) == key:
                print(f"reusing {path}", flush=True)
                return tuple({k: f[f"{p}_{k}"] for k in ("obs", "counts", "shanten", "waits")} for p in parts)
    print(f"generating {cfg['observations']} training observations", flush=True)
    train = generate(cfg, cfg["seed"], cfg["observations"], sys.stdout)
    held = generate(cfg, cfg["eval_seed"], cfg["eval_observations"], sys.stdout)
    # The search probe's MLP was measured on four-heuristic play: the same held-out check on that.
    held_h = generate({**cfg, "policies": ["heuristic"], "weights": [1.0]}, cfg["eval_seed"] + 1,
                      cfg["eval_observations"])
    np.savez(path, key=key, **{f"{p}_{k}": v for p, d in zip(parts, (train, held, held_h)) for k, v in d.items()})
    return train, held, held_h


def parse(argv: list[str] | None) -> dict[str, Any]:
    """The config: DEFAULTS, then the YAML of ``--config``, then ``--field value`` flags."""
    p = argparse.ArgumentParser(prog="python -m train.belief", description=__doc__.split("\n")[0])
    p.add_argument("--config", help="YAML file of DEFAULTS fields")
    for key, value in DEFAULTS.items():
        kind = type(value) if not isinstance(value, list) else None
        p.add_argument(f"--{key.replace('_', '-')}", dest=key, type=kind, nargs="+" if kind is None else None)
    a = vars(p.parse_args(argv))
    cfg = dict(DEFAULTS)
    config = a.pop("config")
    if config:
        try:
            found = load_yaml(config)
        except ValueError as exc:
            p.error(str(exc))
        unknown = sorted(set(found) - set(DEFAULTS))
        if unknown:
            p.error(f"{config}: unknown fields {unknown}; known: {sorted(DEFAULTS)}")
        cfg.update(found)
    cfg.update({k: v for k, v in a.items() if v is not None})
    if cfg["preset"] not in ("happy", "qq"):
        p.error(f"preset must be happy or qq, got {cfg['preset']!r}")
    if len(cfg["policies"]) != len(cfg["weights"]):
        p.error("policies and weights must have the same length")
    if cfg["weights"] and min(float(w) for w in cfg["weights"]) < 0:
        p.error("weights must be >= 0")
    cfg["weights"] = [float(w) for w in cfg["weights"]]
    return cfg


def main(argv: list[str] | None = None) -> int:
    cfg = parse(argv)
    torch.set_num_threads(1)
    out = Path(cfg["out"])
    try:
        check_output_folder(out)
    except OutputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    train, held, held_h = _data(cfg, out)
    t1 = time.perf_counter()
    print(f"data: {t1 - t0:.0f} s; fitting", flush=True)
    net = fit(cfg, train, sys.stdout)
    t2 = time.perf_counter()
    metrics = {"config": cfg, "data_s": t1 - t0, "fit_s": t2 - t1, "held_out": evaluate(net, held),
               "held_out_heuristic": evaluate(net, held_h)}
    write_json(out / "metrics.json", metrics)
    bm.save_belief(net, out / "belief.pt", preset=cfg["preset"], observations=len(train["obs"]),
                   elapsed_s=t2 - t0, metrics={k: v for k, v in metrics["held_out"].items() if not isinstance(v, list)})
    h, hh = metrics["held_out"], metrics["held_out_heuristic"]
    print(f"four heuristics: {hh['location_nats']:.2f} nats (uniform {hh['uniform_nats']:.2f})", flush=True)
    print(f"held out: {h['location_nats']:.2f} nats/observation (uniform {h['uniform_nats']:.2f}), ready AUC "
          f"{h['ready_auc']:.3f}, deal-in AUC {h['deal_in_auc']:.3f}; {out / 'belief.pt'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
