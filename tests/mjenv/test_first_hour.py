"""The first hour of a new user (issue 14): each friction item, checked where it can fail."""

from __future__ import annotations

from tests.support import ROOT

import fnmatch
import re
from pathlib import Path

import numpy as np
import pytest

from agents.arena import run_arena
from mjenv import benchmark, blood_battle_v0, games, narration, replay
from mjenv.cli import build_parser, main
from mjenv.demo import run_demo
from mjenv.play import run_play
from mjenv.scoring import score
from tests.mjenv.test_play import Person



def random_hand_log(path: Path, seed: int = 282, **options) -> None:
    """The README's example hand (qq, seed 282: two wins, then the wall runs out), logged."""
    env = blood_battle_v0.env(log_path=path, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


# ---------------------------------------------------------------- 1. "draw"


def test_a_hand_with_two_wins_then_an_empty_wall_is_told_as_such(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    log = tmp_path / "game.jsonl"
    random_hand_log(log, preset="qq", room_coefficient=200, rake=400)
    assert main(["replay", str(log), "--render"]) == 0
    out = capsys.readouterr().out
    assert "hand over (draw)" not in out
    told = "hand over: 2 wins, then the wall ran out (流局, exhaustive draw)"
    assert out.count(told) == 2  # the end_hand line and the final table
    assert "1 ended in an exhaustive draw (流局)" in out  # the summary line
    assert narration.ending_text("blood_battle", "draw", 0) == "流局, exhaustive draw: the wall ran out with no win"
    # S14 (docs/rules-blood-battle.md): blood mode ends on the third win
    assert narration.ending_text("blood_battle", "win", 3) == "3 wins: three seats have won (S14)"
    assert narration.ending_text("joy_mahjong", "draw", 0).startswith("荒庄, exhaustive draw")


def test_eval_table_names_the_exhaustive_draw_and_explains_level() -> None:
    result = run_arena(game="joy_mahjong", agents=["random", "random"], deals=1, progress=False)
    table = result.format_table()
    header = table.splitlines()[1]
    assert "流局" in header and " draw " not in header
    assert "流局: exhaustive draws (the wall ran out)" in table
    assert "level: the joy_mahjong 等级 title" in table and "not a tile" in table


# ---------------------------------------------------------------- 2. defaults


def test_every_command_defaults_to_the_happy_preset(capsys: pytest.CaptureFixture) -> None:
    parser = build_parser()
    assert parser.parse_args(["demo"]).preset is None  # run_demo's default: the game's first variant
    hand = ["--hand", "11114444557799m", "--win-tile", "9m", "--self-drawn"]
    assert score(hand="11114444557799m", win_tile="9m", self_drawn=True).X == \
        score(hand="11114444557799m", win_tile="9m", self_drawn=True, preset="happy").X != \
        score(hand="11114444557799m", win_tile="9m", self_drawn=True, preset="qq").X
    assert main(["score", *hand]) == 0
    assert "blood_battle (happy)" in capsys.readouterr().out
    assert games.game("blood_battle").variant_options() == {"preset": "happy"}  # mjenv bench's default
    result = run_arena(agents=["random", "random"], deals=1, progress=False)
    assert result.format_table().startswith("blood_battle (preset happy) ·")
    assert run_arena(agents=["random", "random"], deals=1, progress=False,
                     env_options={"preset": "qq", "rake": 3}).setting == "preset qq, rake=3"
    person = Person(quit_after=0)
    run_play(opponents="random", seed=1, input_fn=person.input, print_fn=person.print)
    assert person.text.startswith("blood battle (happy), seed 1:")


# ---------------------------------------------------------------- 3. demo


def test_demo_tells_every_draw_discard_and_claim_with_its_source(tmp_path: Path) -> None:
    log = tmp_path / "demo.jsonl"
    text = run_demo(seed=0, log_path=log)
    events = [ll.record for ll in replay.read_log(log)[0].lines if ll.record["type"] != "action"]
    lines = text.splitlines()
    for kind, n in (("dahai", " 打 "), ("tsumo", " 摸 ")):
        for seat in range(4):
            logged = sum(1 for e in events if e["type"] == kind and e["actor"] == seat)
            told = sum(1 for line in lines if line.startswith(f"player_{seat}{n}"))
            assert told == logged > 5, (kind, seat)
    claims = [e for e in events if e["type"] in ("pon", "daiminkan")]
    assert claims  # seed 0 has a 碰
    for e in claims:
        assert any(line.endswith(f"from player_{e['target']}") and line.startswith(f"player_{e['actor']} ")
                   for line in lines)
    assert any(line.endswith("(forced)") for line in lines)  # a lone void-suit discard, played unasked


@pytest.mark.parametrize("game, head", [("blood_battle", "blood battle, preset 'happy', seed 138"),
                                        ("joy_mahjong", "Joy Mahjong, room 'popular', seed 6")])
def test_the_default_demo_of_each_game_shows_a_win_and_payments(game: str, head: str,
                                                                capsys: pytest.CaptureFixture) -> None:
    argv = ["demo"] if game == "blood_battle" else ["demo", "--game", game]  # the README's commands
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(head), out[:80]
    assert re.search(r"^胡 player_\d on ", out, re.M) and re.search(r"pays player_\d \d+ beans", out)
    beans = [int(line.split()[1]) for line in out.splitlines() if re.match(r"player_\d +[+-]\d+ ", line)]
    assert len(beans) == 4 and any(beans) and sum(beans) == 0


# ---------------------------------------------------------------- 5. progress and workers


def test_bench_reports_progress_on_stderr(capsys: pytest.CaptureFixture) -> None:
    benchmark.run(decisions=200, repeats=1, memory=False, progress=True)
    err = capsys.readouterr().err
    assert "warm-up raw_env" in err and "repeat 1/1 env" in err


def test_final_evaluation_shows_progress_on_the_configured_workers(tmp_path: Path, monkeypatch,
                                                                    capsys: pytest.CaptureFixture) -> None:
    import agents.arena as arena
    from train.config import make_config
    from train.ppo import train

    asked = []
    real = arena.run_arena

    def spy(*args, **kwargs):
        asked.append((kwargs["workers"], kwargs["progress"]))
        return real(*args, **{**kwargs, "workers": 1})  # one process keeps the test short

    monkeypatch.setattr(arena, "run_arena", spy)
    cfg = make_config({"backend": "inline", "workers": 2, "envs_per_worker": 2, "decisions_per_worker": 60,
                       "channels": 8, "blocks": 1, "minibatch_size": 32, "update_epochs": 1,
                       "total_decisions": 120, "eval_opponents": ["random"], "eval_deals": 1,
                       "torch_threads": 1, "runs_dir": str(tmp_path / "runs")})
    train(cfg)
    assert asked == [(2, True)]
    assert "1 duplicate deals × 4 rotations each, 2 worker(s)" in capsys.readouterr().out


# ---------------------------------------------------------------- 6. play


def test_play_prints_its_seed_and_the_end_once(tmp_path: Path) -> None:
    person = Person()
    result = run_play(opponents="random", input_fn=person.input, print_fn=person.print)
    assert result.finished
    seed = re.match(r"blood battle \(happy\), seed (\d+) \(drawn at random; --seed \1 deals it again\)", person.text)
    assert seed, person.text[:200]
    assert person.text.count("hand over:") == 1


def test_quitting_play_says_that_no_log_was_written(tmp_path: Path) -> None:
    person = Person(quit_after=1)
    log = tmp_path / "game.jsonl"
    result = run_play(opponents="random", seed=4, log_path=log, input_fn=person.input, print_fn=person.print)
    assert not result.finished and not log.exists()
    assert f"no log written to {log}: a replay log holds whole hands only" in person.text


def test_joy_play_marks_the_wildcard_and_spells_out_honour_letters() -> None:
    person = Person(quit_after=3)  # seed 5: player_0 deals, holding a 财神 and honours
    run_play(game="joy_mahjong", opponents="random", seed=5, input_fn=person.input, print_fn=person.print)
    assert re.search(r"your hand: .*\S\*.*\(\* = 财神, the wildcard\)", person.text)
    assert re.search(r"\] discard [ESWNCFP] \((east|south|west|north|red dragon|green dragon|white dragon)\)",
                     person.text)


# ---------------------------------------------------------------- 8. .gitignore


def test_the_readme_commands_outputs_are_ignored_by_git() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.search(r"## Commands\n\n```bash\n(.*?)```", readme, re.S).group(1)
    outputs = set(re.findall(r"(?:--out|--plot|-o|--log) (\S+)", commands))
    assert {"r.json", "r.png", "game.jsonl", "game.html", "eval-logs"} <= outputs
    patterns = [p.strip().rstrip("/") for p in (ROOT / ".gitignore").read_text().splitlines() if p.strip()]
    for out in outputs:
        assert any(fnmatch.fnmatch(out, p) for p in patterns), out


# ---------------------------------------------------------------- issue 51: what the output means


def test_score_says_what_x_means_and_eval_help_names_every_policy(capsys: pytest.CaptureFixture) -> None:
    from agents.registry import policy_names

    assert main(["score", "--hand", "11224444557799m", "--win-tile", "9m", "--preset", "qq"]) == 0
    assert main(["score", "--game", "joy_mahjong", "--hand", "11122233344455m", "--win-tile", "5m"]) == 0
    out = capsys.readouterr().out
    assert out.count("X: the points each payer owes the winner") == 2 and "X · room_coefficient beans (B1)" in out
    eval_help = " ".join(build_parser()._subparsers._group_actions[0].choices["eval"].format_help().split())
    assert all(re.search(rf"\b{re.escape(name)}\b", eval_help.replace("heuristic- ", "heuristic-"))
               for name in policy_names())
