"""Citations and links resolve inside the repository.

Rule IDs (the S and B rules of docs/rules-blood-battle.md, the J rules of
docs/rules-joy-mahjong.md; a sub-ID such as S15.2 is item 2 under its parent) cited in code,
tests, configs and docs must have their anchor on their page, and a file that cites them must
name that page. Nothing may point at the project's private notes outside the repository. Every
relative link of the README and docs/, and every ``docs/….md#anchor`` named in code, must reach
an existing file and anchor.
"""

from __future__ import annotations

from tests.support import ROOT

import io
import re
import tokenize
import unicodedata
from functools import cache
from pathlib import Path

import pytest

TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml"}
SKIPPED_DIRS = {"runs", "build", "dist", "__pycache__", "node_modules"}
BLOOD_BATTLE, JOY = "docs/rules-blood-battle.md", "docs/rules-joy-mahjong.md"
PAGE_OF = {"B": BLOOD_BATTLE, "S": BLOOD_BATTLE, "J": JOY}

# An ID stands alone: not part of a word, and not a quoted token such as PyMahjongGB's tile "B5".
RULE_ID = re.compile(r"(?<![\w\"'])([BSJ])(\d{1,2})(?:\.(\d+))?(?![\w\"'])")
ANCHOR = re.compile(r"<a (?:id|name)=\"([^\"]+)\"></a>")
# Notes that live outside the repository; written so that this file does not match them itself.
OUTSIDE = re.compile(r"RULES\.md|DESIGN\.md|DESIGN \u00a7|\bRULES [BSJ]\d|\.\./shared|/work/share[d]")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
DOC_REF = re.compile(r"(docs/[\w./-]+\.md)(?:#([\w-]+(?:\.[\w-]+)*))?")


def repo_files() -> list[Path]:
    """The repository's text files: hidden folders (.git, .venv), caches and run outputs left out."""
    files = []
    for path in sorted(ROOT.rglob("*")):
        parts = path.relative_to(ROOT).parts
        if any(p.startswith(".") or p in SKIPPED_DIRS or p.endswith(".egg-info") for p in parts[:-1]):
            continue
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            files.append(path)
    return files


FILES = repo_files()


def rel(path: Path) -> str:
    """The path as the repository writes it."""
    return path.relative_to(ROOT).as_posix()


@cache
def read(path: Path) -> str:
    """A file's text, read once."""
    return path.read_text(encoding="utf-8")


def prose(path: Path) -> str:
    """Where a file can cite rules: a Python file's comments and strings (not its code, where ``S9``
    may name a tile), any other file's whole text."""
    if path.suffix != ".py":
        return read(path)
    kinds = {tokenize.COMMENT, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    tokens = tokenize.generate_tokens(io.StringIO(read(path)).readline)
    return "\n".join(t.string for t in tokens if t.type in kinds)


def strip_code(markdown: str) -> str:
    """Markdown without fenced blocks and inline code spans (links there are not links)."""
    markdown = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", markdown)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: the rendered text lower-cased, punctuation and symbols
    dropped (letters of any script, digits, '_' and '-' kept), spaces turned into '-'."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).replace("`", "").lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return kept.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors of a markdown page: explicit ``<a id>`` tags and heading slugs (GitHub numbers
    a repeated slug -1, -2 …)."""
    text = read(page)
    found = set(ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *$", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M),
                              flags=re.M):
        s = slug(heading)
        found.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    return frozenset(found)


def rule_section(rule: str) -> str:
    """The text of a rule, from its anchor to the next rule anchor on its page."""
    text = read(ROOT / PAGE_OF[rule[0]])
    start = text.index(f'<a id="{rule}"></a>')
    following = [m.start() for m in re.finditer(r'<a id="[BSJ]\d+"></a>', text) if m.start() > start]
    return text[start:min(following, default=len(text))]


def citations() -> dict[str, set[str]]:
    """Rule ID (``S15.2`` included) -> the files citing it."""
    cited: dict[str, set[str]] = {}
    for path in FILES:
        for m in RULE_ID.finditer(prose(path)):
            cited.setdefault(m.group(0), set()).add(rel(path))
    return cited


CITED = citations()


def test_the_scan_sees_the_citations_it_must() -> None:
    """The scan is not vacuous: it finds the rules where the code states them, and skips code names."""
    assert "mjenv/rules/blood_battle.py" in CITED["S8"] and "mjenv/rules/joy_settlement.py" in CITED["J8"]
    assert "configs/blood_battle_happy.yaml" in CITED["S15.1"]
    assert "tests/mjenv/rules/test_joy_fans.py" not in CITED.get("B5", set())  # PyMahjongGB's tile "B5"
    assert "tests/mjenv/rules/test_joy_settlement.py" not in CITED.get("S9", set())  # S9 = the tile 9s there


@pytest.mark.parametrize("rule", sorted(CITED))
def test_every_cited_rule_has_its_anchor(rule: str) -> None:
    parent, _, item = rule.partition(".")
    page = ROOT / PAGE_OF[parent[0]]
    assert parent in anchors(page), (
        f"{rule}, cited in {sorted(CITED[rule])}, has no <a id=\"{parent}\"></a> in {rel(page)}")
    if item:
        assert re.search(rf"^\s*{item}\. ", rule_section(parent), flags=re.M), (
            f"{rule}: {parent} in {rel(page)} has no numbered item {item}")


def test_files_that_cite_rules_name_their_page() -> None:
    unnamed = []
    for path in FILES:
        letters = {m.group(1) for m in RULE_ID.finditer(prose(path))}
        named = {page for page in (BLOOD_BATTLE, JOY) if page.split("/")[1] in read(path) or rel(path) == page}
        for letter in letters:
            pages = {BLOOD_BATTLE, JOY} if letter == "B" else {PAGE_OF[letter]}
            if not pages & named:
                unnamed.append(f"{rel(path)} cites {letter} rules without naming {' or '.join(sorted(pages))}")
    assert not unnamed, "\n".join(unnamed)


def test_nothing_points_outside_the_repository() -> None:
    outside = [f"{rel(p)}:{read(p)[:m.start()].count(chr(10)) + 1}: {m.group(0)}"
               for p in FILES for m in OUTSIDE.finditer(read(p))]
    assert not outside, "\n".join(outside)


def broken_link(source: Path, target: str, anchor: str, base: Path | None = None) -> str | None:
    """Why ``target#anchor``, named in ``source`` relative to ``base`` (``source``'s folder by
    default), does not resolve (None when it does)."""
    path = ((base or source.parent) / target).resolve() if target else source
    if not path.exists():
        return f"{rel(source)}: {target} does not exist"
    if anchor and path.suffix == ".md" and anchor not in anchors(path):
        return f"{rel(source)}: {target or rel(source)} has no anchor #{anchor}"
    return None


def test_markdown_links_resolve() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    links = [(page, link) for page in pages for link in MD_LINK.findall(strip_code(read(page)))
             if not re.match(r"[a-z]+:", link)]
    assert len(links) > 20  # the README and docs link to each other
    broken = [why for page, link in links if (why := broken_link(page, *link.partition("#")[::2]))]
    assert not broken, "\n".join(broken)


def test_docs_named_in_code_exist() -> None:
    refs = [(path, m.group(1), m.group(2) or "") for path in FILES if path.suffix != ".md"
            for m in DOC_REF.finditer(read(path))]
    assert len(refs) > 20
    broken = [why for path, target, anchor in refs if (why := broken_link(path, target, anchor, ROOT))]
    assert not broken, "\n".join(broken)
