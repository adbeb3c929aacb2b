"""The viewer on a machine without Chinese fonts (issue 51): the page carries a subset of Noto Sans
CJK SC (mjenv/fonts/viewer-cjk.woff, made by tools/make_viewer_font.py) that holds every Chinese
character the page can show, and it shows 64-bit seeds as the log writes them."""

from __future__ import annotations

from tests.support import ROOT

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest
from fontTools.ttLib import TTFont

from mjenv import blood_battle_v0, viewer
from mjenv.demo import run_demo
from tests.mjenv.test_viewer import chromium

FONT = ROOT / "mjenv" / viewer.FONT
BIG_SEED = 7896617691693857887  # an eval log's hand seed: 7896617691693858000 as a JavaScript number


def _tool():
    spec = importlib.util.spec_from_file_location("make_viewer_font", ROOT / "tools" / "make_viewer_font.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _font_characters() -> set[str]:
    return {chr(c) for c in TTFont(FONT).getBestCmap()}


def test_the_font_holds_every_chinese_character_the_viewer_can_show() -> None:
    wanted = _tool().viewer_characters()
    assert {"流", "局", "血", "战", "缺", "胡", "杠", "碰", "财", "神", "鸟", "逃", "跑", "九", "莲", "宝", "灯"} <= wanted
    missing = wanted - _font_characters()
    assert not missing, f"the viewer font lacks {''.join(sorted(missing))}: run tools/make_viewer_font.py"
    assert TTFont(FONT)["name"].getDebugName(1) == viewer.FONT_FAMILY  # not the Reserved Font Name (OFL 1.1)
    assert "SIL Open Font License" in (ROOT / "mjenv" / "fonts" / "OFL.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A page of two hands: a blood battle dealt from a 64-bit seed and the Joy Mahjong demo hand."""
    root = tmp_path_factory.mktemp("font")
    log = root / "hands.jsonl"
    env = blood_battle_v0.env(log_path=log)
    env.reset(seed=BIG_SEED)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    run_demo(game="joy_mahjong", log_path=log)
    out = root / "hands.html"
    viewer.write_view(log, out)
    return out


def test_a_page_shows_only_characters_of_its_font(page: Path) -> None:
    data = page.read_text(encoding="utf-8").split('<script id="mjenv-data" type="application/json">')[1]
    shown = set(re.findall("[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]", json.loads(data.split("</script>")[0]).__repr__()))
    assert {"流", "局", "胡"} & shown and not shown - _font_characters(), shown - _font_characters()


# Measures, once the page has settled, how wide the title's 血战到底 is set: four ems in a CJK font;
# narrower where Chromium drew the fallback's boxes (text laid out while a web font was still
# loading keeps them, even after it arrives: 43 px instead of 72 at 18 px, measured).
PROBE = """<script>setTimeout(() => {
  const title = document.getElementById("title"), text = title.firstChild, at = text.textContent.indexOf("血战到底");
  const range = document.createRange(); range.setStart(text, at); range.setEnd(text, at + 4);
  const pre = document.createElement("pre"); pre.id = "probe";
  pre.textContent = JSON.stringify({ems: range.getBoundingClientRect().width / parseFloat(getComputedStyle(title).fontSize),
                                    subtitle: document.getElementById("subtitle").textContent,
                                    seed: DATA.hands[0].seed});
  document.body.appendChild(pre);
}, 1000);</script>"""


def test_chromium_loads_the_embedded_font_and_shows_the_logs_seed(page: Path, tmp_path: Path) -> None:
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                      encoding="utf-8")
    dom = chromium("--virtual-time-budget=5000", "--dump-dom", probed.as_uri(), tmp=tmp_path).stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[:500]
    result = json.loads(found.group(1).replace("&quot;", '"'))
    assert result["ems"] == pytest.approx(4, abs=0.05)  # four CJK glyphs, not four boxes
    assert result["seed"] == str(BIG_SEED) and f"seed {BIG_SEED} ·" in result["subtitle"]
