"""``mjenv play``: a scripted person plays through ``run_play`` and through the CLI."""

import re
import subprocess
import sys

import pytest

from agents.base import RandomPolicy
from mjenv.play import run_play
from mjenv.replay import verify_log

ACTION_ROW = re.compile(r"^\s+\[\s*(\d+)\] ", re.M)


class Person:
    """Scripted input: the given entries first, then the highest-numbered legal action listed
    (胡 when offered, else a kong, else the last discard / pass / 定缺 条)."""

    def __init__(self, script=(), quit_after=None):
        self.script, self.quit_after = list(script), quit_after
        self.out: list[str] = []
        self.typed: list[str] = []

    def print(self, *args):
        self.out.append(" ".join(str(a) for a in args))

    def input(self, prompt):
        self.out.append(prompt)
        if self.script:
            text = self.script.pop(0)
        elif self.quit_after is not None and len(self.typed) >= self.quit_after:
            raise EOFError
        else:
            listed = next(line for line in reversed(self.out) if ACTION_ROW.search(line))
            text = ACTION_ROW.findall(listed)[-1]
        self.typed.append(text)
        return text

    @property
    def text(self) -> str:
        return "\n".join(self.out)


def test_scripted_game_reprompts_and_reaches_the_end(tmp_path):
    person = Person(["abc", "", "99", "-1", "0", "60"])  # the first decision is 定缺 (59-61)
    log = tmp_path / "play.jsonl"
    result = run_play(seat=1, opponents=[RandomPolicy()] * 3, preset="qq", seed=3, log_path=log,
                      input_fn=person.input, print_fn=person.print)
    text = person.text
    assert "not a number: 'abc'. Enter one of [59, 60, 61], or q to quit." in text
    assert "not a number: ''." in text
    assert "99 is out of range: actions are numbered 0-61. Enter one of [59, 60, 61]." in text
    assert "-1 is out of range" in text
    assert "0 (discard 1m) is not legal now. Enter one of [59, 60, 61]." in text
    assert text.count("your action (number, q to quit): ") == len(person.typed)
    assert "player_1 定缺 筒" in text  # the sixth entry was taken
    assert "[59] void m" + " " * 19 + "定缺 万" in text
    assert result.finished and result.end_reason in ("win", "draw")
    assert result.decisions == len(person.typed) - 5
    assert sum(result.beans) == 0
    # The final bean table: one row per seat, then the total.
    table = text[text.rindex("seat            beans  wins"):].splitlines()
    assert table[2].startswith("player_1 (you)") and table[5] == "total               +0"
    for s in range(4):
        assert re.match(rf"player_{s}(?: \(you\))?\s+{re.escape(f'{result.beans[s]:+d}')}\s", table[1 + s])
    assert len(verify_log(log).hands) == 1  # --log writes a verifiable replay


def test_the_person_sees_only_their_seat():
    person = Person()
    run_play(seat=0, opponents="random", preset="happy", seed=8, input_fn=person.input, print_fn=person.print)
    during, _, after = person.text.rpartition("  phase over  dealer")  # the final, face-up table
    assert after, "the final table is printed"
    assert "  hand  " not in during  # render_table's face-up hands appear only after the hand
    assert "  hand  " in after
    assert re.search(r"player_[123] 摸牌", during) and not re.search(r"player_[123] 摸 ", during)
    assert re.search(r"player_[123] chose a void suit", during)
    assert re.search(r"player_0 摸 \S", during)
    # Voids are hidden until all four chose: the first table shows no other seat's 缺.
    first_table = during[during.index("dealer player_"):during.index("legal actions:")]
    assert not re.search(r"player_[123][^\n]*缺", first_table)


@pytest.mark.parametrize("entry", ["q", "Q", "quit"])
def test_quit_prints_the_beans_so_far(entry):
    person = Person(["59", entry])
    result = run_play(seat=2, opponents="random", seed=1, input_fn=person.input, print_fn=person.print)
    assert not result.finished and result.decisions == 1
    assert "quit; the hand is not finished. Beans so far:" in person.text
    assert person.text.rstrip().endswith("total               +0")


def test_end_of_input_quits_cleanly():
    person = Person(quit_after=4)
    result = run_play(seat=3, opponents="random", seed=2, tile_style="unicode",
                      input_fn=person.input, print_fn=person.print)
    assert not result.finished and result.decisions == 4
    assert "quit;" in person.text
    assert re.search("[\U0001F007-\U0001F021]", person.text)  # Unicode tiles were shown


def test_bad_arguments():
    with pytest.raises(ValueError, match="seat must be 0-3"):
        run_play(seat=4, input_fn=Person().input, print_fn=Person().print)
    with pytest.raises(ValueError, match="three"):
        run_play(opponents="random,random", input_fn=Person().input, print_fn=Person().print)
    with pytest.raises(ValueError, match="unknown policy"):
        run_play(opponents="nobody", input_fn=Person().input, print_fn=Person().print)


def test_cli_play_with_stdin(tmp_path):
    """The CLI plays the same game as run_play for the same seed and entries."""
    person = Person(["x"])
    result = run_play(seat=2, opponents="random", preset="qq", seed=5, input_fn=person.input,
                      print_fn=person.print)
    assert result.finished
    stdin = "\n".join(person.typed) + "\n"
    proc = subprocess.run([sys.executable, "-m", "mjenv", "play", "--seat", "2", "--opponents", "random",
                           "--preset", "qq", "--seed", "5"], input=stdin, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "not a number: 'x'." in proc.stdout
    table = proc.stdout[proc.stdout.rindex("seat            beans  wins"):]
    assert table.rstrip() == person.text[person.text.rindex("seat            beans  wins"):].rstrip()

    quit_now = subprocess.run([sys.executable, "-m", "mjenv", "play", "--seed", "5"], input="",
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert quit_now.returncode == 0 and "quit;" in quit_now.stdout

    bad = subprocess.run([sys.executable, "-m", "mjenv", "play", "--rule", "cap_fan=x"], input="",
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert bad.returncode == 2 and "cap_fan" in bad.stderr
