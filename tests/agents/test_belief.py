"""The belief model (agents/belief.py) and its trainer (train/belief.py): the engine's labels add up
to what the observation leaves unseen, a tiny model learns, untrained logits deal uniformly, and
checkpoints carry the policies' integrity checks."""

import numpy as np
import pytest
import torch

from agents import belief as bm
from agents.neural import CheckpointError, FULL_CHECKSUM_KEY
from mjenv.encoding import BloodBattleObserver
from train import belief as tb


@pytest.fixture(scope="module")
def data():
    """500 own-turn observations of four-heuristic play with their labels."""
    cfg = {**tb.DEFAULTS, "tables": 32, "policies": ["heuristic", "random"], "weights": [0.9, 0.1]}
    return tb.generate(cfg, seed=3, n_obs=500)


def test_labels_add_up_to_the_unseen_tiles_and_the_public_sizes(data):
    obs = BloodBattleObserver(1.0).from_uint8(data["obs"])
    counts = data["counts"].astype(np.int64)
    assert len(obs) == 500
    assert np.array_equal(counts.sum(axis=1), bm.unseen_counts(obs))
    assert np.array_equal(counts.sum(axis=2), bm.location_sizes(obs))
    in_play = bm.opponents_in_play(obs)
    assert np.array_equal(data["shanten"] >= -1, in_play)
    assert not data["waits"][~in_play].any() and data["waits"].any()


def test_zero_logits_deal_uniformly_and_a_tiny_model_learns(data):
    observer = BloodBattleObserver(1.0)
    batch = tb._tensors(data, np.arange(64), observer)
    x, counts, sizes = batch[:3]
    uniform = bm.location_nats(torch.zeros(64, 27, 4), counts, sizes)
    # Uniform dealing: each copy lies in a location with probability size / unseen.
    p = (sizes / sizes.sum(dim=1, keepdim=True))[:, None, :]
    assert torch.allclose(uniform, -(counts * torch.log(p.clamp(min=1e-12))).sum(dim=(1, 2)), rtol=1e-5)
    torch.manual_seed(0)
    net = bm.BeliefNet(channels=8, blocks=1)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    first = None
    for _ in range(20):
        nats, ce, bce = tb.loss_terms(net, batch)
        loss = nats + ce + bce
        first = float(loss.detach()) if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        assert float(sum(tb.loss_terms(net, batch))) < first - 1.0


def test_auc_and_reliability():
    assert tb.auc(np.array([0.1, 0.2, 0.8, 0.9]), np.array([0, 0, 1, 1])) == 1.0
    assert tb.auc(np.array([0.9, 0.8, 0.2, 0.1]), np.array([0, 0, 1, 1])) == 0.0
    assert tb.auc(np.array([0.5, 0.5]), np.array([0, 1])) == 0.5
    rows = tb.reliability(np.array([0.05, 0.05, 0.95]), np.array([0.0, 1.0, 1.0]), np.ones(3))
    assert rows[0]["observed"] == 0.5 and rows[-1]["predicted"] == 0.95


def test_a_checkpoint_round_trips_and_damage_is_refused(tmp_path, data):
    net = bm.BeliefNet(channels=8, blocks=1)
    path = tmp_path / "belief.pt"
    bm.save_belief(net, path, preset="happy", observations=500)
    obs = BloodBattleObserver(1.0).from_uint8(data["obs"][:4])
    loaded = bm.load_belief(path).predict(obs)
    with torch.no_grad():
        expected = bm.Belief(net).predict(obs)
    for key in ("locations", "shanten", "waits", "danger"):
        assert np.allclose(loaded[key], expected[key]), key
    assert np.allclose(loaded["locations"].sum(axis=2)[bm.unseen_counts(obs) > 0], 1.0, atol=1e-5)

    ckpt = torch.load(path, weights_only=True)
    name = next(iter(ckpt["model"]))
    ckpt["model"][name] = ckpt["model"][name] + 1  # a damaged tensor, the checksum left as it was
    torch.save(ckpt, tmp_path / "damaged.pt")
    with pytest.raises(CheckpointError, match="sha256"):
        bm.load_belief(tmp_path / "damaged.pt")
    ckpt = torch.load(path, weights_only=True)
    del ckpt[FULL_CHECKSUM_KEY]
    torch.save(ckpt, tmp_path / "bare.pt")
    with pytest.raises(CheckpointError, match="checksums"):
        bm.load_belief(tmp_path / "bare.pt")
    with pytest.raises(CheckpointError, match="not an mjenv belief checkpoint"):
        bm.load_belief("agents/checkpoints/blood_battle_happy.pt")


def test_the_trainer_refuses_an_unknown_config_field(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("preset: happy\nchanels: 8\n")
    with pytest.raises(SystemExit) as exc:
        tb.parse(["--config", str(bad)])
    assert exc.value.code == 2 and "chanels" in capsys.readouterr().err


def test_the_shipped_belief_is_small_and_beats_uniform_dealing(data):
    from agents.search import DEFAULT_BELIEF

    assert DEFAULT_BELIEF.stat().st_size < 5_000_000
    net = bm.load_belief(DEFAULT_BELIEF).net
    x, counts, sizes = tb._tensors(data, np.arange(len(data["obs"])), BloodBattleObserver(1.0))[:3]
    with torch.no_grad():
        nats = bm.location_nats(net(x)[0], counts, sizes).mean()
    uniform = bm.location_nats(torch.zeros(len(x), 27, 4), counts, sizes).mean()
    assert nats < uniform - 5  # about 10 nats better on 20,000 held-out observations
