"""Procedural tile faces: the ink of every suited tile, honour and flower, in a randomised tile-set style.

A face is drawn as premultiplied RGBA *ink* (transparent where the ivory body shows through), so one
rendering serves any body colour. Layouts follow real Chinese sets: dots in their usual patterns per
rank (colours blue/green/red), bamboo sticks with joints (a bird on 1-bamboo, the 8's M/W shape, red
centre sticks on 5/7/9), and characters as a numeral 一..九 above 萬 or 万 drawn from the system's CJK
fonts. Honour keys: ``E S W N`` winds, ``C`` 中, ``F`` 發, ``P`` 白 (blank, framed or not), ``f1..f8``
flowers and seasons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from datasets.synth.fonts import cjk_fonts, fitted_glyph, glyph_mask, latin_font
from datasets.synth.ink import Colour, Ink
from scoring.tiles import rank_of, suit_of

FaceKey = int | str  # 0..26 suited tile id, or an honour key
WINDS = ("E", "S", "W", "N")
DRAGONS = ("C", "F", "P")
FLOWERS = tuple(f"f{i}" for i in range(1, 9))
HONOUR_KEYS: tuple[str, ...] = WINDS + DRAGONS + FLOWERS
_NUMERALS = "一二三四五六七八九"
_WIND_CHARS = {"E": "東东", "S": "南南", "W": "西西", "N": "北北"}
_FLOWER_CHARS = "梅蘭竹菊春夏秋冬"

# Real sets: blue, green, red and black inks, each in a small range of shades.
_REDS: tuple[Colour, ...] = ((200, 30, 40), (180, 20, 30), (215, 45, 50), (165, 30, 50), (205, 60, 40))
_GREENS: tuple[Colour, ...] = ((10, 120, 60), (20, 140, 70), (0, 100, 60), (40, 130, 40), (10, 110, 90))
_BLUES: tuple[Colour, ...] = ((30, 50, 160), (20, 40, 120), (40, 80, 180), (25, 30, 90), (20, 70, 150))
_BLACKS: tuple[Colour, ...] = ((25, 25, 30), (40, 35, 35), (15, 20, 40))
_ONE_INK_P = 0.08

# Dot layouts: (x, y) in the inner face box (0..1), with colour slots "b", "g", "r".
_DOTS: dict[int, tuple[tuple[float, float, str], ...]] = {
    2: ((0.5, 0.25, "g"), (0.5, 0.75, "b")),
    3: ((0.2, 0.17, "b"), (0.5, 0.5, "r"), (0.8, 0.83, "g")),
    4: ((0.27, 0.25, "b"), (0.73, 0.25, "g"), (0.27, 0.75, "g"), (0.73, 0.75, "b")),
    5: ((0.24, 0.19, "b"), (0.76, 0.19, "g"), (0.5, 0.5, "r"), (0.24, 0.81, "g"), (0.76, 0.81, "b")),
    6: (
        (0.3, 0.15, "g"),
        (0.7, 0.15, "g"),
        (0.3, 0.55, "r"),
        (0.7, 0.55, "r"),
        (0.3, 0.85, "r"),
        (0.7, 0.85, "r"),
    ),
    7: (
        (0.2, 0.1, "g"),
        (0.5, 0.22, "g"),
        (0.8, 0.34, "g"),
        (0.3, 0.6, "r"),
        (0.7, 0.6, "r"),
        (0.3, 0.88, "r"),
        (0.7, 0.88, "r"),
    ),
    8: tuple((x, y, "b") for y in (0.12, 0.375, 0.625, 0.88) for x in (0.3, 0.7)),
    9: tuple((x, y, c) for y, c in ((0.15, "b"), (0.5, "r"), (0.85, "g")) for x in (0.2, 0.5, 0.8)),
}
_DOT_RADIUS = {2: 0.21, 3: 0.17, 4: 0.2, 5: 0.17, 6: 0.15, 7: 0.13, 8: 0.13, 9: 0.15}

# Bamboo layouts: sticks (x0, y0, x1, y1, colour slot) in the inner face box.
_Stick = tuple[float, float, float, float, str]


def _column(x: float, y0: float, y1: float, c: str) -> _Stick:
    return (x, y0, x, y1, c)


_BAMBOO: dict[int, tuple[_Stick, ...]] = {
    2: (_column(0.5, 0.03, 0.45, "g"), _column(0.5, 0.55, 0.97, "b")),
    3: (_column(0.5, 0.03, 0.45, "b"), _column(0.27, 0.55, 0.97, "g"), _column(0.73, 0.55, 0.97, "g")),
    4: (
        _column(0.27, 0.03, 0.45, "b"),
        _column(0.73, 0.03, 0.45, "g"),
        _column(0.27, 0.55, 0.97, "g"),
        _column(0.73, 0.55, 0.97, "b"),
    ),
    5: (
        _column(0.2, 0.03, 0.45, "g"),
        _column(0.8, 0.03, 0.45, "b"),
        _column(0.5, 0.3, 0.7, "r"),
        _column(0.2, 0.55, 0.97, "b"),
        _column(0.8, 0.55, 0.97, "g"),
    ),
    6: tuple(
        _column(x, y0, y1, "g" if y0 < 0.5 else "b")
        for y0, y1 in ((0.03, 0.45), (0.55, 0.97))
        for x in (0.18, 0.5, 0.82)
    ),
    7: (
        _column(0.5, 0.02, 0.3, "r"),
        *(_column(x, y0, y1, "g") for y0, y1 in ((0.36, 0.64), (0.7, 0.98)) for x in (0.18, 0.5, 0.82)),
    ),
    8: (
        _column(0.12, 0.03, 0.45, "g"),
        (0.3, 0.45, 0.45, 0.03, "g"),
        (0.55, 0.03, 0.7, 0.45, "g"),
        _column(0.88, 0.03, 0.45, "g"),
        _column(0.12, 0.55, 0.97, "g"),
        (0.3, 0.55, 0.45, 0.97, "g"),
        (0.55, 0.97, 0.7, 0.55, "g"),
        _column(0.88, 0.55, 0.97, "g"),
    ),
    9: tuple(
        _column(x, y0, y1, "r" if x == 0.5 else "g")
        for y0, y1 in ((0.02, 0.3), (0.36, 0.64), (0.7, 0.98))
        for x in (0.18, 0.5, 0.82)
    ),
}


@dataclass(frozen=True)
class FaceStyle:
    """Everything that differs between tile sets' face artwork."""

    red: Colour
    green: Colour
    blue: Colour
    black: Colour
    numeral_colour: Colour
    wan_colour: Colour
    wind_colour: Colour
    wan_char: str  # 萬 or 万
    five_char: str  # 五 or 伍
    simplified_honours: bool
    font: str | None  # CJK font path
    numeral_font: str | None
    margin_x: float  # inner box margins as fractions of width / height
    margin_y: float
    stroke: float  # stroke width scale
    dot_kind: str  # rings | flower | solid
    dot_scale: float
    dot_swap: bool  # swap the blue and green slots
    stick_width: float
    bird: str  # bird | stick
    corner_index: bool  # a small arabic numeral in the top-left corner
    wan_squash: float  # 萬 width/height stretch
    numeral_size: float
    white_frame: str  # frame | double | blank


def random_face_style(rng: np.random.Generator) -> FaceStyle:
    def pick(options: tuple[Colour, ...]) -> Colour:
        base = options[int(rng.integers(len(options)))]
        return tuple(int(np.clip(v + rng.integers(-12, 13), 0, 255)) for v in base)  # type: ignore[return-value]

    fonts = cjk_fonts()
    font = _pick_font(rng, fonts)
    red, green, blue, black = pick(_REDS), pick(_GREENS), pick(_BLUES), pick(_BLACKS)
    if rng.random() < _ONE_INK_P:  # sets printed in one dark ink besides their red
        green = blue = (blue, black)[int(rng.integers(2))]
    numeral = (blue, black, black, blue, red, green)[int(rng.integers(6))]
    return FaceStyle(
        red=red,
        green=green,
        blue=blue,
        black=black,
        numeral_colour=numeral,
        wan_colour=red if rng.random() < 0.9 else blue,
        wind_colour=(blue, black, black, green)[int(rng.integers(4))],
        wan_char="萬" if rng.random() < 0.6 else "万",
        five_char="伍" if rng.random() < 0.2 else "五",
        simplified_honours=bool(rng.random() < 0.35),
        font=font,
        numeral_font=font if rng.random() < 0.8 else _pick_font(rng, fonts),
        margin_x=float(rng.uniform(0.08, 0.16)),
        margin_y=float(rng.uniform(0.07, 0.13)),
        stroke=float(rng.uniform(0.7, 1.4)),
        dot_kind=("rings", "flower", "solid")[int(rng.choice(3, p=(0.5, 0.3, 0.2)))],
        dot_scale=float(rng.uniform(0.85, 1.08)),
        dot_swap=bool(rng.random() < 0.3),
        stick_width=float(rng.uniform(0.75, 1.3)),
        bird="bird" if rng.random() < 0.85 else "stick",
        corner_index=bool(rng.random() < 0.35),
        wan_squash=float(rng.uniform(0.95, 1.35)),
        numeral_size=float(rng.uniform(0.8, 1.05)),
        white_frame=("frame", "double", "blank")[int(rng.choice(3, p=(0.5, 0.3, 0.2)))],
    )


def _pick_font(rng: np.random.Generator, fonts: tuple[str, ...]) -> str | None:
    if not fonts:
        return None
    # The brush Kai font (first when installed) looks most like real tiles: used for half the sets, the
    # others (Ming, Mincho, sans-serif) for sets whose numerals the classifier must read in other hands
    return fonts[0] if rng.random() < 0.5 or len(fonts) == 1 else fonts[int(rng.integers(1, len(fonts)))]


def render_face(style: FaceStyle, key: FaceKey, width: int, height: int) -> np.ndarray:
    """Premultiplied RGBA ink (uint8, height x width x 4) of one face."""
    ink = Ink(width, height)
    box = _Box(
        style.margin_x * width,
        style.margin_y * height,
        width * (1 - 2 * style.margin_x),
        height * (1 - 2 * style.margin_y),
    )
    if isinstance(key, str):
        _draw_honour(ink, box, style, key)
        return ink.rgba
    suit, rank = suit_of(key), rank_of(key)
    if suit == "p":
        _draw_dots(ink, box, style, rank)
    elif suit == "s":
        _draw_bamboo(ink, box, style, rank)
    else:
        _draw_characters(ink, box, style, rank)
    if style.corner_index:
        _corner_digit(ink, box, style, str(rank))
    return ink.rgba


@dataclass(frozen=True)
class _Box:
    x: float
    y: float
    w: float
    h: float

    def at(self, u: float, v: float) -> tuple[float, float]:
        return self.x + u * self.w, self.y + v * self.h


def _slot(style: FaceStyle, slot: str) -> Colour:
    if style.dot_swap and slot in "bg":
        slot = "g" if slot == "b" else "b"
    return {"b": style.blue, "g": style.green, "r": style.red, "k": style.black}[slot]


# --- dots -------------------------------------------------------------------------------------------


def _draw_dots(ink: Ink, box: _Box, style: FaceStyle, rank: int) -> None:
    if rank == 1:
        x, y = box.at(0.5, 0.5)
        r = min(box.w, box.h) * 0.5 * style.dot_scale
        sw = max(1.0, r * 0.07 * style.stroke)
        ink.circle(x, y, r, style.green, sw * 1.3)
        ink.circle(x, y, r * 0.78, style.blue, sw)
        for k in range(12):
            a = 2 * math.pi * k / 12
            ink.circle(x + 0.62 * r * math.cos(a), y + 0.62 * r * math.sin(a), r * 0.1, style.blue)
        ink.circle(x, y, r * 0.4, style.red)
        for k in range(8):
            a = 2 * math.pi * (k + 0.5) / 8
            ink.circle(x + 0.26 * r * math.cos(a), y + 0.26 * r * math.sin(a), r * 0.08, style.green)
        ink.circle(x, y, r * 0.1, style.green)
        return
    radius = _DOT_RADIUS[rank] * box.w * style.dot_scale
    radius = min(radius, box.h * 0.13 if rank >= 6 else radius)
    for u, v, slot in _DOTS[rank]:
        x, y = box.at(u, v)
        _dot(ink, x, y, radius, _slot(style, slot), style)


def _dot(ink: Ink, x: float, y: float, r: float, colour: Colour, style: FaceStyle) -> None:
    sw = max(1.0, r * 0.16 * style.stroke)
    if style.dot_kind == "solid":
        ink.circle(x, y, r, colour)
        ink.circle(x, y, r * 0.55, _lighten(colour, 0.55))
        ink.circle(x, y, r * 0.25, colour)
    elif style.dot_kind == "flower":
        ink.circle(x, y, r - sw / 2, colour, sw)
        for k in range(8):
            a = 2 * math.pi * k / 8
            ink.circle(x + 0.5 * r * math.cos(a), y + 0.5 * r * math.sin(a), r * 0.17, colour)
        ink.circle(x, y, r * 0.18, colour)
    else:
        ink.circle(x, y, r - sw / 2, colour, sw)
        ink.circle(x, y, r * 0.55, colour, max(1.0, sw * 0.8))
        ink.circle(x, y, r * 0.22, colour)


def _lighten(colour: Colour, amount: float) -> Colour:
    return tuple(int(c + (255 - c) * amount) for c in colour)  # type: ignore[return-value]


def _darken(colour: Colour, amount: float) -> Colour:
    return tuple(int(c * (1 - amount)) for c in colour)  # type: ignore[return-value]


# --- bamboo -----------------------------------------------------------------------------------------


def _draw_bamboo(ink: Ink, box: _Box, style: FaceStyle, rank: int) -> None:
    if rank == 1:
        if style.bird == "bird":
            _bird(ink, box, style)
        else:
            x0, y0 = box.at(0.5, 0.05)
            x1, y1 = box.at(0.5, 0.95)
            _stick(ink, x0, y0, x1, y1, box.w * 0.2 * style.stick_width, style.green, joints=4)
        return
    width = box.w * (0.13 if rank in (2, 3, 4, 5) else 0.11) * style.stick_width
    for u0, v0, u1, v1, slot in _BAMBOO[rank]:
        x0, y0 = box.at(u0, v0)
        x1, y1 = box.at(u1, v1)
        _stick(ink, x0, y0, x1, y1, width, _slot(style, slot), joints=3)


def _stick(
    ink: Ink, x0: float, y0: float, x1: float, y1: float, width: float, colour: Colour, joints: int
) -> None:
    length = math.hypot(x1 - x0, y1 - y0)
    if length < 1:
        return
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    nx, ny = -uy, ux
    inset = width * 0.3
    ink.line(x0 + ux * inset, y0 + uy * inset, x1 - ux * inset, y1 - uy * inset, colour, width)
    dark = _darken(colour, 0.35)
    for j in range(joints):
        t = j / (joints - 1)
        cx, cy = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
        cx, cy = cx + ux * inset * (1 - 2 * t), cy + uy * inset * (1 - 2 * t)
        half = width * 0.72
        ink.line(cx - nx * half, cy - ny * half, cx + nx * half, cy + ny * half, dark, max(1.0, width * 0.32))
    light = _lighten(colour, 0.6)
    ink.line(
        x0 + ux * width, y0 + uy * width, x1 - ux * width, y1 - uy * width, light, max(1.0, width * 0.18)
    )


def _bird(ink: Ink, box: _Box, style: FaceStyle) -> None:
    """A rough sparrow/peacock: tail fan, green body, blue wing, red head, beak and legs."""
    bx, by = box.at(0.5, 0.52)
    s = min(box.w, box.h * 0.75) * 1.3
    sw = max(1.0, s * 0.035 * style.stroke)
    for k in range(5):
        a = math.radians(110 + k * 14)
        ink.line(bx, by, bx + math.cos(a) * s * 0.55, by + math.sin(a) * s * 0.55, style.green, sw)
        ink.circle(bx + math.cos(a) * s * 0.55, by + math.sin(a) * s * 0.55, s * 0.06, style.blue)
    ink.ellipse(bx, by, s * 0.3, s * 0.17, -35, style.green)
    ink.ellipse(bx - s * 0.02, by + s * 0.02, s * 0.17, s * 0.09, -35, style.blue)
    hx, hy = bx + s * 0.24, by - s * 0.25
    ink.circle(hx, hy, s * 0.11, style.red)
    ink.poly(
        [(hx + s * 0.09, hy - s * 0.03), (hx + s * 0.24, hy + s * 0.01), (hx + s * 0.09, hy + s * 0.05)],
        style.black,
    )
    ink.circle(hx + s * 0.03, hy - s * 0.02, max(1.0, s * 0.025), (250, 250, 245))
    for dx in (-0.05, 0.07):
        fx, fy = bx + s * dx, by + s * 0.15
        ink.line(fx, fy, fx - s * 0.03, fy + s * 0.22, style.red, sw)
    ink.line(bx - s * 0.2, by + s * 0.38, bx + s * 0.25, by + s * 0.38, style.black, sw)


# --- characters -------------------------------------------------------------------------------------


def _draw_characters(ink: Ink, box: _Box, style: FaceStyle, rank: int) -> None:
    numeral = style.five_char if rank == 5 else _NUMERALS[rank - 1]
    top_h = box.h * 0.42 * style.numeral_size
    _glyph(
        ink,
        style.numeral_font,
        numeral,
        box.x + box.w / 2,
        box.y + top_h / 2 + box.h * 0.02,
        box.w * 0.9,
        top_h,
        style.numeral_colour,
        squash=1.0,
    )
    bottom_h = box.h * 0.5
    _glyph(
        ink,
        style.font,
        style.wan_char,
        box.x + box.w / 2,
        box.y + box.h - bottom_h / 2,
        box.w,
        bottom_h,
        style.wan_colour,
        squash=style.wan_squash,
    )


def _glyph(
    ink: Ink,
    font: str | None,
    text: str,
    cx: float,
    cy: float,
    max_w: float,
    max_h: float,
    colour: Colour,
    squash: float,
) -> None:
    """Draw ``text`` centred at (cx, cy), as large as fits ``max_w`` x ``max_h`` (``squash`` widens it)."""
    mask = glyph_mask(font, text) if font else None
    if mask is None:
        _fallback_glyph(ink, text, cx, cy, max_w, max_h, colour)
        return
    gh, gw = mask.shape
    aspect = gw / gh * squash
    h = max_h
    w = h * aspect
    if w > max_w:
        w, h = max_w, max_w / aspect
    # Thin glyphs (一, 二) keep their own proportion: never blow a horizontal stroke up to a block.
    h = min(h, w * gh / gw * 1.1) if gh < gw else h
    coverage = fitted_glyph(font, text, max(2, round(w)), max(2, round(h)))
    if coverage is not None:
        ink.coverage(coverage, cx - w / 2, cy - h / 2, colour)


def _fallback_glyph(ink: Ink, text: str, cx: float, cy: float, w: float, h: float, colour: Colour) -> None:
    """Without CJK fonts: arabic digits for numerals and a boxed scribble for other characters."""
    digit = str(_NUMERALS.index(text) + 1) if text in _NUMERALS else None
    latin = latin_font()
    if digit is not None and latin is not None:
        mask = glyph_mask(latin, digit)
        if mask is not None:
            gh, gw = mask.shape
            scale = min(w / gw, h / gh)
            cov = fitted_glyph(latin, digit, max(2, round(gw * scale)), max(2, round(gh * scale)))
            if cov is not None:
                ink.coverage(cov, cx - cov.shape[1] / 2, cy - cov.shape[0] / 2, colour)
                return
    t = max(1.0, min(w, h) * 0.08)
    ink.rect(cx - w * 0.35, cy - h * 0.35, cx + w * 0.35, cy + h * 0.35, colour, t)
    ink.line(cx - w * 0.35, cy, cx + w * 0.35, cy, colour, t)
    ink.line(cx, cy - h * 0.35, cx, cy + h * 0.35, colour, t)


def _corner_digit(ink: Ink, box: _Box, style: FaceStyle, text: str) -> None:
    latin = latin_font()
    if latin is None:
        return
    size = box.h * 0.11
    _glyph(ink, latin, text, box.x + size * 0.35, box.y + size * 0.55, size, size, style.numeral_colour, 1.0)


# --- honours ----------------------------------------------------------------------------------------


def _draw_honour(ink: Ink, box: _Box, style: FaceStyle, key: str) -> None:
    cx, cy = box.at(0.5, 0.5)
    if key in WINDS:
        char = _WIND_CHARS[key][1 if style.simplified_honours else 0]
        _glyph(ink, style.font, char, cx, cy, box.w, box.h * 0.8, style.wind_colour, 1.0)
        if style.corner_index:
            _corner_digit(ink, box, style, key)
    elif key == "C":
        _glyph(ink, style.font, "中", cx, cy, box.w, box.h * 0.85, style.red, 1.0)
    elif key == "F":
        _glyph(
            ink,
            style.font,
            "发" if style.simplified_honours else "發",
            cx,
            cy,
            box.w,
            box.h * 0.8,
            style.green,
            1.0,
        )
    elif key == "P":
        if style.white_frame != "blank":
            t = max(1.0, box.w * 0.07 * style.stroke)
            ink.rect(
                box.x + box.w * 0.08,
                box.y + box.h * 0.1,
                box.x + box.w * 0.92,
                box.y + box.h * 0.9,
                style.blue,
                t,
            )
            if style.white_frame == "double":
                ink.rect(
                    box.x + box.w * 0.22,
                    box.y + box.h * 0.22,
                    box.x + box.w * 0.78,
                    box.y + box.h * 0.78,
                    style.blue,
                    t * 0.6,
                )
    else:
        _flower(ink, box, style, int(key[1:]))


def _flower(ink: Ink, box: _Box, style: FaceStyle, number: int) -> None:
    """A rough flower pictogram (petals, stem, leaves) with its small character and number."""
    fx, fy = box.at(0.55, 0.4)
    s = min(box.w, box.h) * 0.5
    petal = (style.red, style.blue, style.red, style.green)[number % 4]
    sw = max(1.0, s * 0.06)
    ink.line(fx, fy, fx - s * 0.1, fy + s * 1.1, style.green, sw)
    ink.ellipse(fx - s * 0.3, fy + s * 0.7, s * 0.22, s * 0.09, 30, style.green)
    ink.ellipse(fx + s * 0.15, fy + s * 0.85, s * 0.22, s * 0.09, -30, style.green)
    for k in range(5 + number % 3):
        a = 2 * math.pi * k / (5 + number % 3)
        ink.circle(fx + math.cos(a) * s * 0.28, fy + math.sin(a) * s * 0.28, s * 0.2, petal)
    ink.circle(fx, fy, s * 0.14, (230, 180, 30))
    char = _FLOWER_CHARS[number - 1]
    _glyph(
        ink,
        style.font,
        char,
        box.x + box.w * 0.16,
        box.y + box.h * 0.12,
        box.w * 0.3,
        box.h * 0.22,
        style.black,
        1.0,
    )
    _glyph(
        ink,
        latin_font(),
        str((number - 1) % 4 + 1),
        box.x + box.w * 0.86,
        box.y + box.h * 0.1,
        box.w * 0.2,
        box.h * 0.14,
        style.red,
        1.0,
    )
