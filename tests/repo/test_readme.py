"""The README's examples, and the docs' examples it points to, run as written."""

import re
from pathlib import Path

import pytest
from tests.support import ROOT

DOCS_WITH_EXAMPLES = ("docs/commands.md", "docs/speed.md")


def python_blocks(path: str) -> list[str]:
    """The fenced Python blocks of a markdown file, in order."""
    return re.findall(r"```python\n(.*?)```", (ROOT / path).read_text(encoding="utf-8"), flags=re.S)


BLOCKS = python_blocks("README.md")
DOC_BLOCKS = [(page, i, code) for page in DOCS_WITH_EXAMPLES for i, code in enumerate(python_blocks(page))]


def test_readme_has_an_example_per_game():
    assert len(BLOCKS) >= 2
    assert "blood_battle_v0.env(" in BLOCKS[0] and "joy_mahjong_v0.env(" in BLOCKS[1]


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_readme_example_runs(i, capsys):
    exec(compile(BLOCKS[i], f"README.md python block {i}", "exec"), {})
    assert capsys.readouterr().out.strip()  # every example prints something


def test_readme_examples_are_at_most_20_lines():
    assert all(len(block.strip().splitlines()) <= 20 for block in BLOCKS)


def test_docs_hold_the_scoring_and_vector_examples():
    codes = [code for _, _, code in DOC_BLOCKS]
    assert any("mjenv.score(" in code for code in codes) and any("mv.make(" in code for code in codes)


@pytest.mark.parametrize("page, i, code", DOC_BLOCKS, ids=[f"{page}:{i}" for page, i, _ in DOC_BLOCKS])
def test_doc_example_runs(page, i, code, capsys):
    exec(compile(code, f"{page} python block {i}", "exec"), {})
    assert capsys.readouterr().out.strip()
