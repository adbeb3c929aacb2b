"""The README's examples run as written."""

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_readme_example_runs(i, capsys):
    exec(compile(BLOCKS[i], f"README.md python block {i}", "exec"), {})
    assert capsys.readouterr().out.strip()  # every example prints something


def test_readme_example_is_at_most_20_lines():
    assert len(BLOCKS[0].strip().splitlines()) <= 20
