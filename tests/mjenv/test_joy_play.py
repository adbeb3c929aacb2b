"""``mjenv play --game joy_mahjong``: a scripted person plays through ``run_play`` and the CLI."""

import re
import subprocess
import sys

import pytest

from agents.base import RandomPolicy
from mjenv.play import run_play
from mjenv.replay import verify_log
from tests.mjenv.test_play import Person

GAME = {"game": "joy_mahjong"}


def test_scripted_game_reprompts_and_reaches_the_end(tmp_path):
    person = Person(["abc", "", "99", "-1", "75"])  # the first decision is a discard
    log = tmp_path / "play.jsonl"
    result = run_play(seat=1, opponents=[RandomPolicy()] * 3, seed=3, log_path=log,
                      input_fn=person.input, print_fn=person.print, **GAME)
    text = person.text
    legal = re.search(r"not a number: 'abc'\. Enter one of (\[[\d, ]+\]), or q to quit\.", text)
    assert legal, text[:3000]
    assert "99 is out of range: actions are numbered 0-75." in text
    assert "-1 is out of range" in text
    assert f"75 (pass) is not legal now. Enter one of {legal.group(1)}." in text
    assert text.count("your action (number, q to quit): ") == len(person.typed)
    assert text.startswith("Joy Mahjong (popular), seed 3: you are player_1")
    assert re.search(r"\[\s*\d+\] discard \S+\s+打 \S+", text)  # English and Chinese names
    assert result.finished and result.end_reason in ("win", "draw")
    assert result.decisions == len(person.typed) - 5  # the five entries above are all rejected
    assert sum(result.beans) == 0
    table = text[text.rindex("seat            beans  wins"):].splitlines()
    assert table[2].startswith("player_1 (you)") and table[5] == "total               +0"
    assert verify_log(log).hands[0].game == "joy_mahjong"  # --log writes a verifiable replay


def test_the_person_sees_only_their_seat():
    person = Person()
    run_play(seat=0, opponents="random", seed=8, input_fn=person.input, print_fn=person.print, **GAME)
    during, _, after = person.text.rpartition("  phase over  dealer")  # the final, face-up table
    assert after, "the final table is printed"
    assert "  hand  " not in during and "  hand  " in after
    assert re.search(r"player_[123] 摸牌", during) and not re.search(r"player_[123] 摸 ", during)
    assert re.search(r"player_0 摸 \S", during)
    assert "财神 indicator" in during and "风圈  财神 " in during  # the wildcard is public
    first_table = during[during.index("dealer player_"):during.index("legal actions:")]
    assert re.search(r"player_0 \(you\) [东南西北]", first_table)  # seat winds


def test_flowers_are_public():
    """补花 shows the flower of every seat, and the table lists each seat's flowers."""
    for seed in range(20):
        person = Person(quit_after=3)
        run_play(seat=2, opponents="random", seed=seed, input_fn=person.input, print_fn=person.print, **GAME)
        other = re.search(r"player_[013] 补花 (\S)", person.text)
        if other:
            break
    assert other, "some opponent draws a flower within 20 seeds"
    assert re.search(rf"player_[013] [东南西北][^\n]*花 [^\n]*{other.group(1)}", person.text)


@pytest.mark.parametrize("entry", ["q", "quit"])
def test_quit_prints_the_beans_so_far(entry):
    person = Person([entry])
    result = run_play(seat=2, opponents="random", seed=1, input_fn=person.input, print_fn=person.print, **GAME)
    assert not result.finished and result.decisions == 0
    assert person.text.rstrip().endswith("total               +0")


def test_rooms_and_bad_arguments():
    person = Person(quit_after=1)
    run_play(seat=0, seed=2, room="eight_fan", tile_style="unicode", input_fn=person.input,
             print_fn=person.print, **GAME)
    assert person.text.startswith("Joy Mahjong (eight_fan)")
    assert re.search("[\U0001F000-\U0001F02B]", person.text)  # Unicode tiles
    with pytest.raises(ValueError, match="mode"):
        run_play(mode="classic", input_fn=Person().input, print_fn=Person().print, **GAME)
    with pytest.raises(ValueError, match="unknown game"):
        run_play(game="riichi", input_fn=Person().input, print_fn=Person().print)


def test_cli_play_with_stdin(tmp_path):
    """The CLI plays the same Joy hand as run_play for the same seed and entries."""
    person = Person(["x"])
    result = run_play(seat=3, opponents="random", seed=5, room="no_fan", input_fn=person.input,
                      print_fn=person.print, **GAME)
    assert result.finished
    stdin = "\n".join(person.typed) + "\n"
    log = tmp_path / "cli.jsonl"
    proc = subprocess.run([sys.executable, "-m", "mjenv", "play", "--game", "joy_mahjong", "--room", "no_fan",
                           "--seat", "3", "--opponents", "random", "--seed", "5", "--log", str(log)],
                          input=stdin, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "not a number: 'x'." in proc.stdout
    table = proc.stdout[proc.stdout.rindex("seat            beans  wins"):]
    assert table.rstrip() == person.text[person.text.rindex("seat            beans  wins"):].rstrip()
    assert len(verify_log(log).hands) == 1

    bad = subprocess.run([sys.executable, "-m", "mjenv", "play", "--game", "joy_mahjong", "--mode", "classic"],
                         input="", capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert bad.returncode == 2 and "mode" in bad.stderr
