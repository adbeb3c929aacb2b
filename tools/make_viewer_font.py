"""Regenerate the viewer's CJK font: the characters ``mjenv view`` pages can show, cut from Noto
Sans CJK SC Regular (SIL Open Font License 1.1), so that a page reads the same on a machine
without Chinese fonts (most headless research servers) and stays one offline file.

    apt-get download fonts-noto-cjk && dpkg -x fonts-noto-cjk_*.deb noto     # or any copy of the font
    python tools/make_viewer_font.py noto/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc

Writes ``mjenv/fonts/viewer-cjk.woff`` (package data, embedded in every page by
:mod:`mjenv.viewer`). Run it again whenever a Chinese string is added to mjenv (narration, action
names, fan names, the page template): tests/mjenv/test_viewer_font.py fails until then, naming the
characters the font lacks. Needs fontTools (``pip install fonttools``), this script
only: mjenv itself reads the file as bytes.

This lives in tools/ (maintenance scripts that rebuild files shipped with the package, not part of
it, not benchmarks): bench/ measures, tools/ regenerates.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FONT = ROOT / "mjenv" / "fonts" / "viewer-cjk.woff"
FAMILY = "mjenv viewer CJK"  # a new name: OFL 1.1 asks a modified font not to use the Reserved Font Name
SC_INDEX = 2  # Noto Sans CJK SC in NotoSansCJK-*.ttc (JP, KR, SC, TC, HK, then the Mono ones)
_CJK = re.compile("[\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")
_GLYPH_PATH = re.compile(r'^\s*"\S": "M[^"]*",?$', re.M)  # the tiles' outlines in the template


def viewer_characters(root: Path = ROOT) -> set[str]:
    """Every CJK character a viewer page can show: the template's text, every string of mjenv's
    sources (event narration, action and tile names, the blood battle's fans, endings) and the
    names of the Joy Mahjong fans (the 81 Chinese Official fans, named by PyMahjongGB as the
    rules' fan table of docs/rules-joy-mahjong.md names them)."""
    texts = [_GLYPH_PATH.sub("", (root / "mjenv" / "viewer_template.html").read_text(encoding="utf-8"))]
    texts += [p.read_text(encoding="utf-8") for p in sorted((root / "mjenv").rglob("*.py"))]
    rules = (root / "docs" / "rules-joy-mahjong.md").read_text(encoding="utf-8")
    texts += re.findall(r"^\| \d+ \| ([^|]+) \|", rules, re.M)
    return {c for text in texts for c in _CJK.findall(text)}


def main(argv: list[str] | None = None) -> int:
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", help="NotoSansCJK-Regular.ttc (or NotoSansCJKsc-Regular.otf)")
    parser.add_argument("--out", default=str(FONT))
    args = parser.parse_args(argv)
    font = (TTCollection(args.source).fonts[SC_INDEX] if args.source.endswith(".ttc") else TTFont(args.source))
    chars = viewer_characters()
    options = subset.Options()
    options.flavor = "woff"  # zlib: fontTools reads and writes it without brotli
    options.layout_features = []  # no vertical forms, no locl: the page sets Chinese horizontally
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]  # keep the copyright and the licence
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in chars])
    subsetter.subset(font)
    name = font["name"]
    for record in list(name.names):
        if record.nameID in (1, 4, 16):
            name.setName(FAMILY, record.nameID, record.platformID, record.platEncID, record.langID)
        elif record.nameID == 6:
            name.setName(FAMILY.replace(" ", ""), 6, record.platformID, record.platEncID, record.langID)
        elif record.nameID == 3:
            name.setName(f"{FAMILY}; subset of Noto Sans CJK SC Regular", 3, record.platformID,
                         record.platEncID, record.langID)
    font.flavor = "woff"
    Path(args.out).parent.mkdir(exist_ok=True)
    font.save(args.out)
    print(f"wrote {args.out}: {len(chars)} characters, {Path(args.out).stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
