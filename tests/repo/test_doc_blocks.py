"""Every Python block of the docs runs on its own, as a reader copies it: no block uses a name that
only an earlier block defined (the pages' own tests run them, some in one namespace). Checked from
the syntax tree, so that no toolkit has to start here."""

from __future__ import annotations

from tests.support import ROOT

import ast
import builtins
import re
from pathlib import Path

import pytest

PAGES = sorted(["README.md", *(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))])


def _blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(encoding="utf-8"), flags=re.S)


def free_names(code: str) -> set[str]:
    """Names a block reads that it neither binds anywhere (import, assignment, loop, def, with,
    except, comprehension, argument) nor gets from the builtins: a NameError when run alone."""
    tree = ast.parse(code)
    bound: set[str] = set(dir(builtins))
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return loaded - bound


BLOCKS = [(page, i, code) for page in PAGES for i, code in enumerate(_blocks(page))]


def test_the_docs_have_blocks_to_check() -> None:
    assert len(BLOCKS) > 30 and any(page == "docs/integrations/rllib.md" for page, _, _ in BLOCKS)


@pytest.mark.parametrize("page, i, code", BLOCKS, ids=[f"{page}:{i}" for page, i, _ in BLOCKS])
def test_every_doc_block_runs_alone(page: str, i: int, code: str) -> None:
    assert not free_names(code), f"{page} block {i} uses names it does not define: {sorted(free_names(code))}"


def test_the_check_finds_a_name_from_an_earlier_block() -> None:
    assert free_names("config = ppo_config('blood_battle')\nprint([x for x in range(3)])") == {"ppo_config"}


def test_the_parallel_example_shows_beans_moving(capsys: pytest.CaptureFixture) -> None:
    block = next(code for page, _, code in BLOCKS if page == "docs/integrations.md" and "parallel_env" in code)
    exec(compile(block, "docs/integrations.md", "exec"), {})
    totals = ast.literal_eval(capsys.readouterr().out.split("}")[0] + "}")
    assert any(totals.values()) and sum(totals.values()) == 0, totals  # a win paid, no rake
