"""``mjenv view``: a replay log as one self-contained HTML page (no server, no network).

The log is first verified by re-simulation (:func:`mjenv.replay.verify_log`); then the table is
rebuilt line by line from the logged events (:class:`TableView`), so every line of the log
gets a frame: the four hands, melds with the seat each claimed tile came from, rivers, the wall
count, the voids, the 财神 and its indicator, flowers, the bird, the beans, and with those rule
options the seats that escaped (逃跑) and the balances each seat holds. Action lines become
decision frames with the legal actions and the policy's probabilities when the log has them.
The frames are embedded as JSON into ``viewer_template.html`` (package data), whose script
draws the tiles as inline SVG; ``<``, ``>``, ``&``, U+2028 and U+2029 are written as JSON escapes,
so no text of the log (agent names, the preset) can end or reopen the script element.

:func:`write_view` reads, verifies and writes one hand at a time (memory does not grow with the
log; the page takes about :data:`PAGE_KB_PER_HAND` KB per hand) and writes the page atomically. A
log of more than :data:`MAX_HANDS` hands is refused unless the hands of the page are chosen
(``mjenv view --hands A:B``); only the chosen hands are re-simulated, the others format-checked.

Rule IDs cited here are anchors of docs/rules-blood-battle.md (B, S) and docs/rules-joy-mahjong.md (J).
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from importlib import resources
from typing import Any, Iterator

from . import tiles
from .actions import ActionLayout
from .outputs import atomic_write
from .narration import describe_event, ending_text
from .replay import GAMES, LoggedHand, iter_log, replay_hand

PathLike = str | os.PathLike
DATA_MARK = "/*MJENV_DATA*/null"
"""Where the template takes the page's JSON."""
FONT_MARK = "/*MJENV_FONT*/"
"""Where the template's script takes the embedded CJK font (base64)."""
TEMPLATE = "viewer_template.html"
FONT = "fonts/viewer-cjk.woff"
"""The Chinese the page can show, cut from Noto Sans CJK SC (OFL 1.1, ``fonts/OFL.txt``) by
``tools/make_viewer_font.py``: embedded in every page, so that a machine without Chinese fonts
shows no □ boxes (tests/mjenv/test_viewer_font.py checks it holds every character the page can show)."""
FONT_FAMILY = "mjenv viewer CJK"
_SAFE_INT = 2**53 - 1  # beyond it a JavaScript number is no longer the integer: such ints go as strings
MAX_HANDS = 100
"""Hands a page shows unless ``--hands`` chooses them: a page takes about PAGE_KB_PER_HAND KB
per hand, and a browser opens a page of hundreds of hands slowly."""
PAGE_KB_PER_HAND = 120
"""Page size per hand of a blood-battle log of ``mjenv eval --log`` (legal actions logged), measured."""


class TableView:
    """The table as the log's events leave it: rebuilt event by event, without the engine."""

    def __init__(self, start: dict[str, Any], joy: bool) -> None:
        wall, dealer = start["wall"], start["dealer"]
        self.joy = joy
        self.dealer = dealer
        self.prevailing = start.get("prevailing_wind")
        self._deal(wall)
        if joy and wall[52] >= tiles.N_KINDS:  # the dealer's 14th is a flower: set aside by a hua event
            self.hands[dealer][wall[52]] += 1
        self.wall = len(wall) - 52 - (1 if joy and wall[52] >= tiles.N_KINDS else 0)
        self.drawn: list[int | None] = [None] * 4
        self.melds: list[list[list[Any]]] = [[] for _ in range(4)]  # [kind, tile, source, claimed tile]
        self.rivers: list[list[int]] = [[] for _ in range(4)]
        self.beans = [0] * 4
        self.start_balances: list[int] | None = start.get("balances")  # B4, with a bankroll
        self.escaped = [False] * 4
        self.voids = [-1] * 4
        self.voids_public = False
        self.won_tiles: list[list[int]] = [[] for _ in range(4)]
        self.flowers: list[list[int]] = [[] for _ in range(4)]
        self.wild: int | None = None
        self.indicator: int | None = None
        self.bird: int | None = None
        self.bird_seat: int | None = None
        self.claim: list[int] | None = None  # [tile, seat] on the table: a discard or an added-kong tile
        self._robbable: list[int] | None = None  # [tile, seat, where]: the next 胡 on another's tile takes it
        self.item_uses: list[dict[str, int]] | None = None  # S17: each seat's uses (public), once one is made

    def _deal(self, wall: list[int]) -> None:
        """The deal of GameCore._deal_hands: 13 each from the dealer on."""
        self.hands: list[list[int]] = [[0] * (tiles.N_KINDS + tiles.N_FLOWERS) for _ in range(4)]
        for i in range(4):
            for k in wall[13 * i: 13 * i + 13]:
                self.hands[(self.dealer + i) % 4][k] += 1

    def _use(self, seat: int, item: str) -> None:
        """S17.10: a use of ``item`` by ``seat``, public."""
        if self.item_uses is None:
            self.item_uses = [{} for _ in range(4)]
        self.item_uses[seat][item] = self.item_uses[seat].get(item, 0) + 1

    def apply(self, ev: dict[str, Any]) -> None:
        """Update the table with one logged event."""
        t = ev["type"]
        k = tiles.parse_tile(ev["pai"]) if "pai" in ev else None
        s = ev.get("actor")
        if t in ("tsumo", "indicator_flower", "indicator") or (t == "hua" and not self.hands[s][k]):
            self.wall -= 1  # a flower drawn in play is set aside without a tsumo of its own
        if t == "tsumo":
            self.hands[s][k] += 1
            self.drawn[s] = k
            self.claim = self._robbable = None  # nobody claimed the last discard
        elif t == "hua":
            if self.hands[s][k]:
                self.hands[s][k] -= 1
            self.flowers[s].append(k)
        elif t == "indicator":
            self.indicator, self.wild = k, tiles.parse_tile(ev["wild"])
        elif t == "dahai":
            self.hands[s][k] -= 1
            self.rivers[s].append(k)
            self.drawn[s] = None
            self.claim = [k, s]
            self._robbable = [k, s, 0]
        elif t in ("pon", "daiminkan", "chi"):
            target = ev["target"]
            self.rivers[target].pop()
            used = [tiles.parse_tile(p) for p in ev["consumed"]] if t == "chi" else [k] * (2 if t == "pon" else 3)
            for u in used:
                self.hands[s][u] -= 1
            low = min([k, *used])
            self.melds[s].append([{"pon": "pong", "daiminkan": "kong", "chi": "chow"}[t], low, target, k])
            self.claim = self._robbable = None
            self.drawn[s] = None
        elif t == "ankan":
            self.hands[s][k] -= 4
            self.melds[s].append(["ankan", k, None, None])
            self.drawn[s] = None
        elif t == "kakan_declare":
            self.claim = [k, s]
            self._robbable = [k, s, 1]
            self.drawn[s] = None
        elif t == "kakan":
            self.hands[s][k] -= 1
            for m in self.melds[s]:
                if m[0] == "pong" and m[1] == k:
                    m[0] = "addkong"
            self.claim = self._robbable = None
        elif t == "qiankun_deal":  # S17.3: the hands are dealt from the new wall
            self._deal(ev["wall"])
            for user in ev["users"]:
                self._use(user, "qiankun")
        elif t == "item":
            self._use(s, ev["item"])
            if "give" in ev:  # a swap: the tile taken counts as drawn (S17.8)
                give, take = tiles.parse_tile(ev["give"]), tiles.parse_tile(ev["take"])
                self.hands[s][give] -= 1
                self.hands[s][take] += 1
                self.drawn[s] = take
        elif t == "dingque":
            self.voids[s] = tiles.SUITS.index(ev["suit"])
        elif t == "dingque_reveal":
            self.voids = [-1 if v is None else tiles.SUITS.index(v) for v in ev["voids"]]
            self.voids_public = True
        elif t == "escape":
            self.escaped[s] = True
            self.beans[s] -= ev.get("penalty", 0)  # 扣豆 goes to no one
        elif t == "hora":
            target = ev["target"]
            if target == s:
                self.hands[s][k] -= 1
            elif self._robbable is not None:  # the first winner of a discard or robbed kong takes the tile
                if self._robbable[2]:
                    self.hands[target][k] -= 1
                else:
                    self.rivers[target].pop()
                self._robbable = None
            self.won_tiles[s].append(k)
            self.drawn[s] = None
            self.claim = None
        elif t == "bird":
            self.bird, self.bird_seat = k, ev["seat"]
        elif t == "pay":
            self.beans[ev["from"]] -= ev["beans"]
            self.beans[ev["to"]] += ev["beans"]
        elif t == "end_hand":
            self.beans = list(ev["beans"])  # the rake is taken here, without pay lines

    def snapshot(self) -> dict[str, Any]:
        """The table as plain JSON values."""
        hands = []
        for s in range(4):
            counts = list(self.hands[s])
            if self.drawn[s] is not None:
                counts[self.drawn[s]] -= 1
            hands.append(tiles.from_counts(counts[: tiles.N_KINDS]))
        snap = {"hands": hands, "drawn": list(self.drawn), "melds": [[list(m) for m in ms] for ms in self.melds],
                "rivers": [list(r) for r in self.rivers], "wall": self.wall, "beans": list(self.beans),
                "won": [list(w) for w in self.won_tiles], "claim": self.claim}
        if any(self.escaped):
            snap["escaped"] = list(self.escaped)
        if self.item_uses is not None:
            snap["items"] = [dict(u) for u in self.item_uses]
        if self.start_balances is not None:
            snap["balances"] = [b + d for b, d in zip(self.start_balances, self.beans)]
        if self.joy:
            snap.update(flowers=[list(f) for f in self.flowers], wild=self.wild, indicator=self.indicator,
                        bird=self.bird, bird_seat=self.bird_seat)
        else:
            snap.update(voids=list(self.voids), voids_public=self.voids_public)
        return snap

    def concealed(self, seat: int) -> list[int]:
        """Counts of the concealed suited and honour tiles of ``seat`` (drawn tile included)."""
        return self.hands[seat][: tiles.N_KINDS]


def _decision(rec: dict[str, Any], layout: ActionLayout) -> dict[str, Any]:
    """An action line as the page shows it: the action, and the legal ones with probabilities."""
    legal = rec.get("legal", [])
    probs = rec.get("probs")
    options = [[a, layout.name(a), layout.name_zh(a), None if probs is None else probs[i]]
               for i, a in enumerate(legal)]
    if probs is not None:
        options.sort(key=lambda o: -o[3])
    return {"action": rec["action"], "name": rec["name"], "name_zh": layout.name_zh(rec["action"]),
            "options": options}


def hand_data(hand: LoggedHand) -> dict[str, Any]:
    """The page's data of one verified hand: its header and one frame per log line."""
    h = hand.header.record
    game = h["game"]
    layout = GAMES[game].layout.with_options(h["options"].get("escape", False), "items" in h["options"])
    start = hand.lines[0].record
    view = TableView(start, joy=game == "joy_mahjong")
    frames, wins, pays = [], [], []
    n_wins = n_escapes = 0
    for ll in hand.lines:
        rec = ll.record
        frame: dict[str, Any] = {"line": ll.line, "type": rec["type"], "actor": rec.get("actor")}
        if rec["type"] == "action":
            frame["decision"] = _decision(rec, layout)
            frame["text"] = f"player_{rec['actor']} → {layout.name_zh(rec['action'])} ({rec['name']})"
            frame["hidden"] = f"player_{rec['actor']} decides"  # a pass would tell others a claim was possible
        else:
            view.apply(rec)
            n_wins += rec["type"] == "hora"
            n_escapes += rec["type"] == "escape"
            text = describe_event(rec, "zh", game=game, wins=n_wins, escapes=n_escapes)
            hidden = describe_event(rec, "zh", viewer=-1, game=game, wins=n_wins, escapes=n_escapes)
            frame["text"] = text or rec["type"]
            if hidden != text:
                frame["hidden"] = hidden
            if rec["type"] == "hora":
                wins.append({"frame": len(frames), "seat": rec["actor"], "source": rec["target"],
                             "tile": tiles.parse_tile(rec["pai"]), "fans": rec["fans"], "fan": rec.get("fan"),
                             "X": rec["X"], "multiplier": _multiplier(rec, h["options"])})
            elif rec["type"] == "pay":
                pays.append({"frame": len(frames), "from": rec["from"], "to": rec["to"], "beans": rec["beans"],
                             "points": rec["points"], "reason": rec["reason"], "owed": rec.get("owed")})
            elif rec["type"] == "escape" and "penalty" in rec:  # 扣豆: a payment to no one
                pays.append({"frame": len(frames), "from": rec["actor"], "to": None, "beans": rec["penalty"],
                             "points": 0, "reason": "escape_penalty", "owed": rec.get("penalty_owed")})
        frame["table"] = view.snapshot()
        frames.append(frame)
    end = hand.lines[-1].record
    options = h["options"]
    setting = options.get("room", h["preset"])
    # The seed is a string however small (the page shows it as the log has it); frames hold tile
    # kinds, seats, counts and beans only, far from 2**53.
    head = _exact_in_javascript({
        "game": game, "preset": h["preset"], "setting": setting, "seed": None if h["seed"] is None else str(h["seed"]),
        "hand_index": h["hand_index"], "dealer": start["dealer"], "prevailing": start.get("prevailing_wind"),
        "agents": h.get("agents"), "rake": options.get("rake", 0), "wins": wins, "pays": pays,
        "ending": ending_text(game, end["reason"], n_wins, n_escapes),
        "beans": end["beans"], "balances": end.get("balances")})
    return {**head, "frames": frames}


def _multiplier(rec: dict[str, Any], options: dict[str, Any]) -> str:
    """How the win's X came about, for people: 倍数 (blood battle) or fan × room (Joy)."""
    if "fan" in rec:  # Joy: X = fan (+8) · bird · dealer per pair, here before the bird and dealer
        return f"{rec['fan']} fan → X {rec['X']}"
    fan = sum(f for _, f in rec["fans"])
    capped = min(fan, options["cap_fan"])
    cap = f" (capped at {capped})" if capped < fan else ""
    return f"{fan} fan{cap} → ×{2 ** (capped - 1)}, X {rec['X']}"


HandRange = tuple[int, int | None]
"""The hands of a page: first and last, counted from 1 in the log's order, inclusive (last None: to the end)."""


def parse_hands(text: str) -> HandRange:
    """``--hands``: ``N`` (one hand), ``A:B``, ``A:`` (to the end) or ``:B``, counted from 1."""
    first, sep, last = text.partition(":")
    try:
        a = int(first) if first.strip() else 1
        b = (int(last) if last.strip() else None) if sep else a
    except ValueError:
        raise ValueError(f"expected N, A:B, A: or :B (hands counted from 1), got {text!r}") from None
    if a < 1 or (b is not None and b < a):
        raise ValueError(f"expected hands counted from 1 with A <= B, got {text!r}")
    return a, b


def _chosen(path: PathLike, hands: HandRange | None) -> Iterator[tuple[int, LoggedHand | None]]:
    """Every hand of a log, one at a time, with its number (from 1): the hand if ``hands`` chooses it
    (re-simulated: :class:`~mjenv.replay.ReplayError` if it does not verify), else None (its format
    is checked, nothing more)."""
    first, last = hands or (1, None)
    for number, hand in enumerate(iter_log(path), start=1):
        if first <= number and (last is None or number <= last):
            replay_hand(path, hand)
            yield number, hand
        else:
            yield number, None


def view_data(path: PathLike, hands: HandRange | None = None) -> dict[str, Any]:
    """Verify a log and build the page's data: the ``hands`` chosen (default every hand), each
    with its ``number`` in the log; raises :class:`~mjenv.replay.ReplayError`."""
    page, total = [], 0
    for total, hand in _chosen(path, hands):
        if hand is not None:
            page.append({**hand_data(hand), "number": total})
    return {"source": os.path.basename(os.fspath(path)), "hands": page, "log_hands": total}


# Characters that could end or reopen the script element (``</script>``, ``<!--``) or break old
# JavaScript parsers (U+2028, U+2029), written as JSON escapes: JSON.parse reads them back.
_SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                                 "\u2028": "\\u2028", "\u2029": "\\u2029"})


def script_json(value: Any) -> str:
    """``value`` as compact JSON that is safe inside an HTML ``<script>`` element."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_SCRIPT_ESCAPES)


def _font_base64() -> str:
    """The embedded CJK font as base64 (the page's script makes a FontFace of it)."""
    return base64.b64encode(resources.files("mjenv").joinpath(FONT).read_bytes()).decode("ascii")


def _template() -> tuple[str, str]:
    """The page's template with its font, split at the data mark."""
    template = resources.files("mjenv").joinpath(TEMPLATE).read_text(encoding="utf-8")
    for mark in (DATA_MARK, FONT_MARK):
        if template.count(mark) != 1:
            raise RuntimeError(f"{TEMPLATE} lacks the mark {mark!r}")
    head, tail = template.replace(FONT_MARK, _font_base64()).split(DATA_MARK)
    return head, tail


def _exact_in_javascript(value: Any) -> Any:
    """``value`` with every int a JavaScript number cannot hold exactly (a 64-bit seed) as a string:
    the page then shows the log's digits, not the nearest double's."""
    if isinstance(value, dict):
        return {k: _exact_in_javascript(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_exact_in_javascript(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _SAFE_INT:
        return str(value)
    return value


def render_html(data: dict[str, Any]) -> str:
    """The page: the template with ``data`` embedded as JSON (see :func:`script_json`)."""
    head, tail = _template()
    return head + script_json(data) + tail


class TooManyHands(ValueError):
    """A log of more hands than a page shows unless they are chosen (:data:`MAX_HANDS`)."""


@dataclass(frozen=True)
class ViewSummary:
    """What :func:`write_view` wrote: the hands of the page, their steps, the hands of the log."""

    first: int
    hands: int
    steps: int
    log_hands: int


def write_view(log: PathLike, out: PathLike, hands: HandRange | None = None) -> ViewSummary:
    """Write the HTML page of the ``hands`` of ``log`` (default: every hand, at most
    :data:`MAX_HANDS`) to ``out``, atomically, one hand in memory at a time.

    Raises :class:`~mjenv.replay.ReplayError` for a log that does not verify, :class:`TooManyHands`
    for a log of more than MAX_HANDS hands without ``hands``, ValueError when ``hands`` are not in
    the log; ``out`` is then left as it was."""
    head, tail = _template()
    first, written, steps, total = 0, 0, 0, 0
    with atomic_write(out) as fh:
        fh.write(head + '{"source":' + script_json(os.path.basename(os.fspath(log))) + ',"hands":[')
        for total, hand in _chosen(log, hands):
            if hand is None or (hands is None and written == MAX_HANDS):
                continue  # past MAX_HANDS only counted, for the message
            data = {**hand_data(hand), "number": total}
            fh.write(("," if written else "") + script_json(data))
            first, written, steps = first or total, written + 1, steps + len(data["frames"])
        if hands is None and total > MAX_HANDS:
            raise TooManyHands(f"{log} holds {total} hands, more than the {MAX_HANDS} a page shows unless they are "
                               f"chosen (the page takes about {PAGE_KB_PER_HAND} KB per hand): choose them with "
                               f"--hands, e.g. --hands 1:{MAX_HANDS}, --hands {MAX_HANDS + 1}:{2 * MAX_HANDS}")
        if not written:
            raise ValueError(f"--hands {hands[0]}:{'' if hands[1] is None else hands[1]} chooses no hand: "
                             f"{log} holds {total} hand(s)")
        fh.write(f'],"log_hands":{total}}}' + tail)
    return ViewSummary(first, written, steps, total)
