"""The arena with the rule option items (S17 of docs/rules-blood-battle.md): each agent's item
uses counted per hand and per item (results table and JSON), the default policies never using
one and ``random`` using them; ``mjenv eval --rule items=1 --log`` writes logs that verify."""

from __future__ import annotations

import json

import pytest

from agents.arena import run_arena
from mjenv import replay
from mjenv.cli import main
from mjenv.config import ITEMS


def test_each_agents_item_uses_are_counted() -> None:
    res = run_arena(agents=["random", "heuristic"], deals=3, seed=5, env_options={"items": 1}, progress=False)
    st = res.stats()
    uses = [sum(map(sum, (r.item_uses[s] for s, a in enumerate(r.lineup) if a == 0))) for r in res.records]
    assert sum(uses) == sum(st["random"]["item_uses"].values()) > 0
    assert list(st["random"]["item_uses"]) == list(ITEMS)
    assert st["random"]["items_per_hand"] == sum(uses) / st["random"]["seat_hands"] <= len(ITEMS)
    assert st["heuristic"]["item_uses"] == dict.fromkeys(ITEMS, 0)  # keeps 乾坤大挪移, never uses the others
    assert all(max(map(max, r.item_uses)) <= 1 for r in res.records)  # items=1: one of each per hand
    table = res.format_table()
    assert "items" in table.splitlines()[1] and "item uses (道具) per hand" in table
    assert f"{st['random']['items_per_hand']:.2f}" in next(line for line in table.splitlines() if line.startswith("random"))
    plain = run_arena(agents=["random", "heuristic"], deals=1, seed=5, progress=False)
    assert "item_uses" not in plain.stats()["random"] and "items" not in plain.format_table().splitlines()[1]
    assert all(r.item_uses == () for r in plain.records)


def test_the_shipped_network_never_uses_an_item_in_the_arena() -> None:
    res = run_arena(agents=["ppo", "random"], deals=1, seed=2, env_options={"items": 2}, progress=False)
    assert res.stats()["ppo"]["items_per_hand"] == 0 and res.stats()["random"]["items_per_hand"] > 0


def test_eval_with_items_writes_the_counts_and_logs_that_verify(tmp_path, capsys: pytest.CaptureFixture) -> None:
    out, logs = tmp_path / "eval.json", tmp_path / "logs"
    assert main(["eval", "--agents", "random", "heuristic", "--deals", "1", "--rule", "items=1", "--no-progress",
                 "--backend", "reference", "--out", str(out), "--log", str(logs)]) == 0
    assert "items" in capsys.readouterr().out
    results = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert results["random"]["items_per_hand"] > 0 == results["heuristic"]["items_per_hand"]
    log = logs / "deal_00000.jsonl"
    assert len(replay.verify_log(log).hands) == 4
    assert '"type": "item"' in log.read_text(encoding="utf-8")
