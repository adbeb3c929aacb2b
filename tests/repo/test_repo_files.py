"""What a researcher looks for in a repository (issue 51): the licence, how to cite, a changelog,
type information for type checkers, an index of the examples; and the first-use notes."""

from __future__ import annotations

from tests.support import ROOT

import re
import tomllib
from pathlib import Path

import yaml



def test_license_is_the_mit_text_that_pyproject_declares() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "Permission is hereby granted, free of charge" in text


def test_citation_file_names_this_version() -> None:
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["title"].startswith("mjenv") and cff["authors"]
    assert cff["version"] == pyproject["project"]["version"] and cff["license"] == "MIT"


def test_changelog_keeps_a_changelog_with_an_unreleased_section() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "keepachangelog.com" in text and "## [Unreleased]" in text
    sections = re.findall(r"^### (\w+)", text, re.M)
    assert set(sections) <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"} and sections


def test_every_package_ships_py_typed() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    for package in ("mjenv", "agents", "train"):
        assert "py.typed" in data[package] and (ROOT / package / "py.typed").is_file(), package
    assert "fonts/viewer-cjk.woff" in data["mjenv"] and "fonts/OFL.txt" in data["mjenv"]


def test_examples_readme_lists_every_example_with_its_command() -> None:
    index = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")
    for example in sorted((ROOT / "examples").glob("*.py")):
        assert f"]({example.name})" in index and f"python examples/{example.name}" in index, example.name


def test_the_first_use_compile_and_warmup_are_in_the_readme_and_the_integrations_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    assert "mjenv warmup" in readme and "docs/integrations.md#first-use-the-compile" in readme
    assert "## First use: the compile" in page and "mjenv warmup" in page and "2–4 s from the cache" in page
    assert "## Reward scale and normalisation" in page and "bean_scale" in page
