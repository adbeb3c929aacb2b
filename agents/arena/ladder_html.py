"""The reference ladders as one self-contained HTML page (``mjenv ladder --html FILE``).

Per ladder: a title with its version, the setting it was built from (seed, deals, mjenv version as
stored), the table of ``mjenv ladder`` (:func:`agents.arena.ladder.table_rows`, the same cells) and
an inline SVG plot of the ratings, each rung a point with its 95% interval as a bar. No script,
no web font, no link: the page opens offline. Every text is escaped.
"""

from __future__ import annotations

import html
import math
from typing import Any, Sequence

from . import ladder

PLOT_WIDTH, ROW_HEIGHT, LABEL_WIDTH, VALUE_WIDTH, AXIS_HEIGHT = 720, 30, 170, 150, 44
"""The plot's geometry in pixels: rungs are rows, the rating runs left to right."""

STYLE = """body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
section { margin-bottom: 3em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
svg text { font-family: system-ui, sans-serif; font-size: 13px; fill: #222; }
.setting, .gaps { color: #444; }"""


def _esc(text: object) -> str:
    """Text as HTML (quotes too: the same helper serves attributes)."""
    return html.escape(str(text), quote=True)


def _ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Round axis ticks (steps of 1, 2 or 5 × 10^k) covering [low, high], at most ``most`` of them."""
    span = max(high - low, 1.0)
    for exp in range(math.floor(math.log10(span / most)), 12):
        for mult in (1, 2, 5):
            step = mult * 10.0 ** exp
            first, last = math.floor(low / step), math.ceil(high / step)
            if last - first + 1 <= most:
                return [k * step for k in range(first, last + 1)]
    raise ValueError(f"no ticks for the span {low}..{high}")


def rating_plot(data: dict[str, Any]) -> str:
    """An SVG of a ladder's ratings: one row per rung (strongest on top), its point and interval bar."""
    rungs = list(reversed(data["rungs"]))
    ticks = _ticks(min(r["ci"][0] for r in rungs), max(r["ci"][1] for r in rungs))
    left, right = LABEL_WIDTH, PLOT_WIDTH - VALUE_WIDTH
    height = ROW_HEIGHT * len(rungs) + AXIS_HEIGHT

    def x(value: float) -> float:
        return left + (value - ticks[0]) / (ticks[-1] - ticks[0]) * (right - left)

    bottom = ROW_HEIGHT * len(rungs)
    parts = [f'<svg width="{PLOT_WIDTH}" height="{height}" '
             f'viewBox="0 0 {PLOT_WIDTH} {height}" role="img" '
             f'aria-label="{_esc(data["ladder"])}: ratings with 95% intervals">']
    for t in ticks:
        parts.append(f'<line x1="{x(t):.1f}" y1="0" x2="{x(t):.1f}" y2="{bottom}" stroke="#e4e4e4"/>'
                     f'<text x="{x(t):.1f}" y="{bottom + 18}" text-anchor="middle">{t:g}</text>')
    parts.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#888"/>'
                 f'<text x="{(left + right) / 2:.1f}" y="{bottom + 38}" text-anchor="middle">'
                 f'rating ({_esc(ladder.ANCHOR)} = {ladder.ANCHOR_RATING:g}), 95% interval</text>')
    for row, (r, cells) in enumerate(zip(rungs, ladder.table_rows(data))):
        y = row * ROW_HEIGHT + ROW_HEIGHT / 2
        lo, hi, at = x(r["ci"][0]), x(r["ci"][1]), x(r["rating"])
        parts.append(f'<g class="rung" data-rung="{_esc(r["name"])}" data-rating="{r["rating"]:.6g}">'
                     f'<title>{_esc(r["name"])}: {_esc(cells[1])}</title>'
                     f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end">{_esc(r["name"])}</text>'
                     f'<line x1="{lo:.1f}" y1="{y:.1f}" x2="{hi:.1f}" y2="{y:.1f}" stroke="#3465a4" stroke-width="2"/>'
                     f'<line x1="{lo:.1f}" y1="{y - 6:.1f}" x2="{lo:.1f}" y2="{y + 6:.1f}" stroke="#3465a4"/>'
                     f'<line x1="{hi:.1f}" y1="{y - 6:.1f}" x2="{hi:.1f}" y2="{y + 6:.1f}" stroke="#3465a4"/>'
                     f'<circle cx="{at:.1f}" cy="{y:.1f}" r="5" fill="#204a87"/>'
                     f'<text x="{right + 10}" y="{y + 4:.1f}">{_esc(cells[1])}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def ladder_section(data: dict[str, Any]) -> str:
    """One ladder: title with version, its setting, the table, the gaps and the plot."""
    head = "".join(f"<th>{_esc(c)}</th>" for c in ladder.COLUMNS)
    body = "".join("<tr>" + f"<td><code>{_esc(name)}</code></td>" + "".join(f"<td>{_esc(c)}</td>" for c in cells)
                   + "</tr>" for name, *cells in ladder.table_rows(data))
    return (f'<section id="{_esc(data["ladder"])}">'
            f'<h2>{_esc(data["ladder"])}</h2>'
            f'<p class="setting">{_esc(ladder.setting_line(data))}</p>'
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f'<p class="gaps">{_esc(ladder.gaps_line(data))}</p>'
            f"{rating_plot(data)}</section>")


def render_page(tables: Sequence[dict[str, Any]]) -> str:
    """The page of ``tables`` (stored ladders, as :func:`agents.arena.ladder.load` returns them)."""
    if not tables:
        raise ValueError("render_page needs at least one ladder")
    names = ", ".join(t["ladder"] for t in tables)
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            f"<title>Reference ladders: {_esc(names)}</title><style>{STYLE}</style></head><body>"
            "<h1>Reference ladders</h1>"
            f"<p>Ratings on one scale per configuration ({_esc(ladder.ANCHOR)} = {ladder.ANCHOR_RATING:g}; "
            "400 points are odds of 10 to 1 of winning a deal), 95% bootstrap intervals over the deals; "
            "beans per hand with the arena's 95% interval. Written by <code>mjenv ladder --html</code>.</p>"
            + "".join(ladder_section(t) for t in tables) + "</body></html>\n")
