"""Issue 48 item 5: ``mjenv ladder --html`` writes the reference ladders as one offline page (a
table and an SVG rating plot per ladder, checked parsed and in headless Chromium); ``--version``
chooses a stored version, a new version sits beside v1, whose files never change."""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from agents.arena import ladder
from agents.arena.ladder_html import render_page
from mjenv.cli import main
from mjenv.outputs import write_json
from tests.mjenv.test_viewer import chromium
from tests.support import ROOT, cli_status

V1_FILES_SHA256 = "ea1bdd973406471d8bfcf3915ba7bacb98e839892d45b8ee4dfef040e7052251"
"""The sha256 of every v1 ladder file's name and digest, one line each: v1 files never change."""


class Page(HTMLParser):
    """What a page holds: per section its title, table rows, SVG rungs; every src/href; text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[dict[str, Any]] = []
        self.links: list[str] = []
        self.tags: list[str] = []
        self.open: list[str] = []
        self._text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.links += [v or "" for k, v in attrs if k in ("src", "href")]
        if tag != "meta":  # the page's one void element (its SVG elements close with />)
            self.open.append(tag)
        a = dict(attrs)
        if tag == "section":
            self.sections.append({"id": a["id"], "rows": [], "svgs": 0, "rungs": [], "title": [], "h2": [], "p": []})
        elif tag == "tr":
            self.sections[-1]["rows"].append([])
        elif tag == "svg":
            self.sections[-1]["svgs"] += 1
        elif tag == "g" and "data-rung" in a:
            self.sections[-1]["rungs"].append(a["data-rung"])
        if tag in ("td", "th", "h2", "title", "p"):
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()
        if self._text is None or tag not in ("td", "th", "h2", "title", "p"):
            return
        text, self._text = "".join(self._text), None
        if not self.sections:  # the page's own title and introduction
            return
        if tag in ("td", "th"):
            self.sections[-1]["rows"][-1].append(text)
        else:
            self.sections[-1][tag].append(text)

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    assert page.open == [], f"unclosed tags {page.open}"
    return page


@pytest.fixture(scope="module")
def tables() -> list[dict[str, Any]]:
    return [ladder.load(s) for s in ladder.LADDERS.values()]


def test_the_page_holds_every_rung_of_every_ladder_with_its_rating(tables: list[dict[str, Any]]) -> None:
    page = parse(render_page(tables))
    assert [s["id"] for s in page.sections] == [t["ladder"] for t in tables]
    for section, data in zip(page.sections, tables):
        assert section["h2"] == [data["ladder"]] and section["p"] == [ladder.setting_line(data), ladder.gaps_line(data)]
        assert f"seed {data['seed']}" in section["p"][0] and f"mjenv {data['mjenv_version']}" in section["p"][0]
        header, *rows = section["rows"]
        assert tuple(header) == ladder.COLUMNS
        assert [tuple(r) for r in rows] == ladder.table_rows(data)
        names = [r["name"] for r in reversed(data["rungs"])]
        assert [r[0] for r in rows] == names and section["svgs"] == 1 and section["rungs"] == names
        assert section["title"] == [f"{name}: {row[1]}" for name, row in zip(names, rows)]
    assert {"1058 [1044, 1071]", "1000 (anchor)", "39 [-3, 78]"} <= {r[1] for r in page.sections[0]["rows"]}
    # Offline: nothing to fetch, nothing to run.
    assert page.links == [] and "http" not in render_page(tables)
    assert not {"script", "link", "img", "iframe", "object"} & set(page.tags)


def test_the_page_escapes_every_text(tables: list[dict[str, Any]]) -> None:
    data = json.loads(json.dumps(tables[-1]))
    data["ladder"] = 'x"><script>alert(1)</script>'
    data["rungs"][0]["name"] = "<b>&weak</b>"
    data["env_options"] = {"room": "<i>no_fan</i>"}
    text = render_page([data])
    page = parse(text)
    assert not {"script", "b", "i"} & set(page.tags)
    assert page.sections[0]["id"] == data["ladder"] and page.sections[0]["h2"] == [data["ladder"]]
    assert page.sections[0]["rows"][-1][0] == "<b>&weak</b>" and "&lt;b&gt;&amp;weak&lt;/b&gt;" in text
    assert page.sections[0]["rungs"][-1] == "<b>&weak</b>"


def test_the_docs_tables_are_the_commands_markdown(tables: list[dict[str, Any]]) -> None:
    """docs/baselines.md quotes ``mjenv ladder --all`` verbatim: its Markdown has not changed."""
    doc = (ROOT / "docs" / "baselines.md").read_text(encoding="utf-8")
    for data in tables:
        assert ladder.format_table(data) in doc, data["ladder"]


# ---------------------------------------------------------------- the command


def test_cli_writes_the_page_of_one_ladder_and_of_all(tmp_path: Path, capsys) -> None:
    one = ["ladder", "--game", "joy_mahjong", "--room", "eight_fan"]
    assert main(one) == 0
    markdown = capsys.readouterr().out
    out = tmp_path / "one.html"
    assert main([*one, "--html", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed == markdown + f"wrote {out}: 1 ladder(s), a table and a rating plot each; it opens offline in " \
                                 "a browser\n"
    assert [s["id"] for s in parse(out.read_text(encoding="utf-8")).sections] == ["joy_mahjong-eight_fan/v1"]
    every = tmp_path / "all.html"
    assert main(["ladder", "--all", "--html", str(every), "--json", str(tmp_path / "all.json")]) == 0
    assert len(parse(every.read_text(encoding="utf-8")).sections) == len(ladder.LADDERS)
    assert len(json.loads((tmp_path / "all.json").read_text(encoding="utf-8"))["ladders"]) == len(ladder.LADDERS)


@pytest.mark.parametrize("where, message", [
    ("missing/page.html", "does not exist; create it first"),
    (".", "is a folder"),
    ("/proc/ladders.html", "cannot write /proc/ladders.html"),  # a file system that takes no files
    ("STORED", "is the same file as the stored ladder"),
])
def test_cli_bad_html_path_exits_2_in_one_line(tmp_path: Path, capsys, where: str, message: str) -> None:
    stored = ladder.data_path("blood_battle-happy")
    before = stored.read_bytes()
    path = {"STORED": str(stored), "/proc/ladders.html": where}.get(where, str(tmp_path / where))
    assert cli_status(["ladder", "--html", path]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("mjenv ladder: error: ") and message in err and len(err.splitlines()) == 1
    assert out == "" and stored.read_bytes() == before and list(tmp_path.iterdir()) == []


def test_the_command_exits_2_without_a_traceback(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "mjenv", "ladder", "--all", "--html", str(tmp_path / "no" / "p.html")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == "" and "Traceback" not in run.stderr
    assert run.stderr.startswith("mjenv ladder: error: argument --html: folder") and len(run.stderr.splitlines()) == 1


# ---------------------------------------------------------------- versions


def test_v1_files_are_unchanged() -> None:
    """A ladder's v1 file never changes (a rebuilt ladder is v2, in ``<key>.v2.json`` beside it)."""
    lines = []
    for spec in ladder.LADDERS.values():
        v1 = ladder.version_of(spec, 1)
        path = ladder.data_path(spec.key, 1)
        assert path == ladder.DATA_DIR / f"{spec.key}.json" and v1.name == f"{spec.key}/v1"
        lines.append(f"{v1.name} {ladder.file_digest(path.read_bytes())}\n")
    assert hashlib.sha256("".join(lines).encode()).hexdigest() == V1_FILES_SHA256


KEY = "blood_battle-happy"  # a network rung: a retired version's checkpoint may have changed


@pytest.fixture
def two_versions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """KEY with a (made-up) v2 stored beside its v1, v1 retired; the ladder folder is tmp_path."""
    v1 = ladder.LADDERS[KEY]
    shutil.copyfile(ladder.data_path(KEY), tmp_path / f"{KEY}.json")
    v2 = dataclasses.replace(v1, version=2)
    data = {**ladder.load(v1), "ladder": v2.name, "version": 2}
    monkeypatch.setattr(ladder, "DATA_DIR", tmp_path)
    write_json(ladder.data_path(KEY, 2), data)
    assert ladder.data_path(KEY, 2) == tmp_path / f"{KEY}.v2.json"
    monkeypatch.setitem(ladder.LADDERS, KEY, v2)
    monkeypatch.setattr(ladder, "RETIRED", (v1,))
    monkeypatch.setitem(ladder.DIGESTS, v2.name, ladder.file_digest(ladder.data_path(KEY, 2).read_bytes()))
    return tmp_path


def test_version_chooses_a_stored_version(two_versions: Path, capsys) -> None:
    v1_bytes = (two_versions / f"{KEY}.json").read_bytes()
    assert [s.version for s in ladder.versions(KEY)] == [1, 2]
    assert main(["ladder"]) == 0 and f"**{KEY}/v2**" in capsys.readouterr().out
    for flag in ("1", "v1"):
        assert main(["ladder", "--version", flag]) == 0 and f"**{KEY}/v1**" in capsys.readouterr().out
    page = two_versions / "page.html"
    assert main(["ladder", "--version", "1", "--html", str(page)]) == 0
    assert [s["id"] for s in parse(page.read_text(encoding="utf-8")).sections] == [f"{KEY}/v1"]
    capsys.readouterr()
    assert main(["ladder", "--version", "3"]) == 2
    assert f"ladder {KEY} has no version 3; its versions: v1, v2" in capsys.readouterr().err
    assert main(["ladder", "--all", "--version", "2"]) == 0
    out, err = capsys.readouterr()
    assert out.count("| rung | rating") == 1 and f"**{KEY}/v2**" in out
    assert "no v2 of blood_battle-qq," in err and "left out" in err
    assert (two_versions / f"{KEY}.json").read_bytes() == v1_bytes


def test_building_a_new_version_leaves_v1s_file(two_versions: Path, monkeypatch, capsys) -> None:
    v1_bytes = (two_versions / f"{KEY}.json").read_bytes()
    built = ladder.load(ladder.LADDERS[KEY])
    monkeypatch.setattr(ladder, "build", lambda spec, *a, **k: {**built, "elapsed_s": 1.0})  # no play: the file
    out = two_versions / "out"
    out.mkdir()
    assert ladder.main(["build", KEY, "--out-dir", str(out)]) == 0
    assert [p.name for p in out.iterdir()] == [f"{KEY}.v2.json"] and f"**{KEY}/v2**" in capsys.readouterr().out
    assert ladder.main(["build", KEY, "--out-dir", str(two_versions)]) == 0
    assert (two_versions / f"{KEY}.json").read_bytes() == v1_bytes


def test_a_retired_version_is_read_after_its_checkpoint_changed(two_versions: Path, monkeypatch, capsys) -> None:
    real = ladder.rung_spec
    monkeypatch.setattr(ladder, "rung_spec", lambda name: {**real(name), **({"sha256": "0" * 64}
                                                                           if "sha256" in real(name) else {})})
    assert main(["ladder"]) == 2 and "a changed rung needs a new ladder version" in capsys.readouterr().err
    assert main(["ladder", "--version", "1"]) == 0 and f"**{KEY}/v1**" in capsys.readouterr().out


# ---------------------------------------------------------------- in Chromium

MEASURE = """<script>(function () {
  const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.width, b.height]; };
  const out = Array.from(document.querySelectorAll("section")).map(s => ({
    title: s.querySelector("h2").innerText,
    table: box(s.querySelector("table")),
    rows: Array.from(s.querySelectorAll("tbody tr")).map(tr => Array.from(tr.cells).map(c => c.innerText)),
    svg: box(s.querySelector("svg")),
    points: Array.from(s.querySelectorAll("g.rung")).map(g => ({
      rung: g.dataset.rung, rating: Number(g.dataset.rating), at: box(g.querySelector("circle")),
      bar: box(g.querySelector("line"))})),
  }));
  const pre = document.createElement("pre"); pre.id = "test-out"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();</script>"""


def test_chromium_shows_every_table_and_plot(tables: list[dict[str, Any]], tmp_path: Path) -> None:
    page = tmp_path / "ladders.html"
    assert main(["ladder", "--all", "--html", str(page)]) == 0
    measured = tmp_path / "measured.html"
    measured.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>", 1), encoding="utf-8")
    # Offline: every host name fails to resolve.
    dom = chromium("--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1200,900", "--dump-dom",
                   measured.as_uri(), tmp=tmp_path).stdout
    found = re.search(r'<pre id="test-out">(.*?)</pre>', dom, re.S)
    assert found, f"the measuring script wrote nothing; DOM starts {dom[:300]!r}"
    shown = json.loads(html.unescape(found.group(1)))
    assert [s["title"] for s in shown] == [t["ladder"] for t in tables]
    for s, data in zip(shown, tables):
        assert s["table"][2] > 300 and s["table"][3] > 20 * (len(data["rungs"]) + 1), s["title"]
        assert [tuple(r) for r in s["rows"]] == ladder.table_rows(data)
        left, top, width, height = s["svg"]
        assert width > 300 and height > 30 * len(data["rungs"]) and top > s["table"][1]
        for p in s["points"]:  # each point inside the plot, on its interval bar
            x = p["at"][0] + p["at"][2] / 2
            assert left < x < left + width and p["bar"][0] - 1 <= x <= p["bar"][0] + p["bar"][2] + 1, p
        by_rating = sorted(s["points"], key=lambda p: p["rating"])
        xs = [p["at"][0] for p in by_rating]
        assert xs == sorted(xs) and xs[-1] - xs[0] > 100, s["title"]  # higher ratings further right
