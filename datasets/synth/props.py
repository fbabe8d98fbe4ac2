"""Distractors on the table (never labelled): coins, chips, playing cards, phones, dice, cups, boxes, the
tile-like things a localiser must learn are not tiles (``random_prop(rng, tile_like=True)``): keyboards,
dominoes, printed pages, and rows of books standing with their spines out (``book_row``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from datasets.synth.camera import Camera
from datasets.synth.fonts import cjk_fonts, fitted_glyph
from datasets.synth.ink import Colour, Ink, as_colour, scaled
from datasets.synth.layout import Occupancy, Sampler
from datasets.synth.tile_body import Body, Canvas, Light, Texture, flat_axes, make_texture, stand_axes


@dataclass
class Disc:
    """An upright cylinder: coins, chips, cups."""

    x: float
    y: float
    radius: float
    height: float
    top: Colour
    side: Colour
    inner: Colour
    inner_radius: float  # fraction of the radius
    hole: bool = False  # a square hole, like an old Chinese coin

    def corners(self) -> np.ndarray:
        return np.vstack([self._ring(0.0, self.radius, 8), self._ring(self.height, self.radius, 8)])

    def _ring(self, z: float, radius: float, n: int) -> np.ndarray:
        angles = np.linspace(0, 2 * np.pi, n, endpoint=False)
        return np.column_stack(
            [self.x + radius * np.cos(angles), self.y + radius * np.sin(angles), np.full(n, z)]
        )

    def centre(self) -> np.ndarray:
        return np.array([self.x, self.y, self.height / 2])

    def footprint(self) -> np.ndarray:
        return self._ring(0.0, self.radius, 12)[:, :2]


def draw_disc(canvas: Canvas, camera: Camera, disc: Disc, light: Light) -> None:
    rim = np.vstack([disc._ring(0.0, disc.radius, 32), disc._ring(disc.height, disc.radius, 32)])
    hull = cv2.convexHull(camera.project(rim).astype(np.float32))[:, 0, :].astype(np.float64)
    side_shade = light.shade(np.array([0.0, -1.0, 0.0])) * 0.9
    canvas.fill(hull, scaled(disc.side, side_shade), 0)
    canvas.fill(camera.project(disc._ring(disc.height, disc.radius, 32)), disc.top, 0)
    canvas.fill(camera.project(disc._ring(disc.height, disc.radius * disc.inner_radius, 32)), disc.inner, 0)
    if disc.hole:
        s = disc.radius * 0.22
        square = np.array(
            [
                [disc.x - s, disc.y - s],
                [disc.x + s, disc.y - s],
                [disc.x + s, disc.y + s],
                [disc.x - s, disc.y + s],
            ]
        )
        canvas.fill(camera.project(np.column_stack([square, np.zeros(4)])), scaled(disc.side, 0.6), 0)


Prop = Body | Disc


TILE_LIKE = ("keyboard", "domino", "page", "card", "dice")
_TILE_LIKE_P = (0.3, 0.3, 0.2, 0.1, 0.1)


def random_prop(rng: np.random.Generator, tile_like: bool = False) -> Prop:
    """A prop drawn from ``rng``; ``tile_like``: one of ``TILE_LIKE`` (the draws without it are as they were,
    so seeded scenes stay the same)."""
    if tile_like:
        kind = TILE_LIKE[int(rng.choice(len(TILE_LIKE), p=_TILE_LIKE_P))]
        yaw = float(rng.uniform(0, 2 * math.pi))
        if kind == "keyboard":
            return keyboard(rng, yaw)
        if kind == "domino":
            ivory = rng.random() < 0.6
            body = (242, 238, 225) if ivory else (25, 25, 30)
            return _box(rng, 24, 48, 8, yaw, _domino_texture(rng, ivory), body)
        if kind == "page":
            return _box(rng, 148, 210, 0.4, yaw, _page_texture(rng), (238, 238, 232))
        return _plain_prop(rng, kind, yaw)
    kind = ("coin", "chip", "card", "phone", "dice", "cup", "box")[
        int(rng.choice(7, p=(0.22, 0.12, 0.18, 0.18, 0.14, 0.06, 0.10)))
    ]
    return _plain_prop(rng, kind, float(rng.uniform(0, 2 * math.pi)))


def _plain_prop(rng: np.random.Generator, kind: str, yaw: float) -> Prop:
    if kind == "coin":
        metal = ((205, 170, 80), (190, 190, 195), (180, 110, 60))[int(rng.integers(3))]
        return Disc(
            0,
            0,
            float(rng.uniform(10, 14)),
            1.8,
            metal,
            _scale(metal, 0.8),
            _scale(metal, 1.08),
            0.72,
            hole=bool(rng.random() < 0.3),
        )
    if kind == "chip":
        colour = ((200, 40, 40), (40, 60, 170), (30, 30, 30), (40, 140, 60))[int(rng.integers(4))]
        return Disc(0, 0, float(rng.uniform(17, 20)), 3.3, colour, colour, (240, 240, 235), 0.6)
    if kind == "cup":
        body = ((240, 240, 235), (180, 40, 40), (40, 40, 45), (200, 190, 170))[int(rng.integers(4))]
        liquid = ((90, 55, 30), (150, 120, 50), (30, 20, 15))[int(rng.integers(3))]
        return Disc(0, 0, float(rng.uniform(33, 45)), float(rng.uniform(70, 100)), body, body, liquid, 0.88)
    if kind == "card":
        return _box(rng, 57, 87, 0.5, yaw, _card_texture(rng), (240, 240, 240))
    if kind == "phone":
        return _box(
            rng, 71, 146, 8, yaw, _phone_texture(rng), ((60, 60, 65), (200, 200, 205))[int(rng.integers(2))]
        )
    if kind == "dice":
        s = float(rng.uniform(13, 17))
        return _box(rng, s, s, s, yaw, _dice_texture(rng), (245, 245, 240))
    colour = as_colour(rng.integers(30, 230, 3))
    return _box(
        rng,
        float(rng.uniform(50, 60)),
        float(rng.uniform(85, 95)),
        float(rng.uniform(18, 24)),
        yaw,
        _label_texture(rng, colour),
        colour,
    )


def _scale(colour: Colour, k: float) -> Colour:
    return tuple(int(min(255, c * k)) for c in colour)  # type: ignore[return-value]


def _box(
    rng: np.random.Generator, w: float, h: float, d: float, yaw: float, top: Texture, side: Colour
) -> Body:
    axes = flat_axes(yaw, face_up=True)
    origin = -axes[0] * w / 2 - axes[1] * h / 2 + np.array([0, 0, d])
    return Body(origin, axes, (w, h, d), top, _scale(side, 0.9), side, side, 1.0)


def place_prop(prop: Prop, x: float, y: float) -> Prop:
    if isinstance(prop, Disc):
        return Disc(
            x, y, prop.radius, prop.height, prop.top, prop.side, prop.inner, prop.inner_radius, prop.hole
        )
    centre = prop.corners()[:, :2].mean(axis=0)  # moved over the table to (x, y), its height kept
    origin = prop.origin + np.array([x - centre[0], y - centre[1], 0.0])
    return Body(
        origin, prop.axes, prop.size, prop.front, prop.back, prop.side_front, prop.side_back, prop.split
    )


def place_free(prop: Prop, occupancy: Occupancy, sampler: Sampler, attempts: int) -> Prop | None:
    """``prop`` put down at the first of ``attempts`` spots drawn by ``sampler`` where nothing lies (the spot
    then taken), or None."""
    outline, height = prop_footprint(prop)
    for _ in range(attempts):
        target = sampler()
        if target is None:
            continue
        spot = outline + np.asarray(target)
        if occupancy.free(spot, height):
            occupancy.add(spot, height)
            return place_prop(prop, *target)
    return None


def prop_footprint(prop: Prop) -> tuple[np.ndarray, float]:
    """The prop's outline on the table (around its own centre) and its height."""
    if isinstance(prop, Disc):
        return prop.footprint() - [prop.x, prop.y], prop.height
    corners = prop.corners()
    low = corners[:, 2] <= corners[:, 2].min() + 1e-6  # the four corners on the table, lying or standing
    foot = corners[low, :2] - corners[low, :2].mean(axis=0)
    return foot[np.argsort(np.arctan2(foot[:, 1], foot[:, 0]))], float(np.ptp(corners[:, 2]))


def _card_texture(rng: np.random.Generator) -> Texture:
    ink = Ink(60, 90)
    colour = ((200, 30, 40), (20, 20, 25))[int(rng.integers(2))]
    ink.rect(0, 0, 60, 90, (245, 245, 240))
    ink.rect(4, 4, 56, 86, colour, 1)
    for _ in range(int(rng.integers(1, 6))):
        x, y = rng.uniform(12, 48), rng.uniform(15, 75)
        ink.circle(float(x), float(y), float(rng.uniform(3, 7)), colour)
    return _texture(ink)


def _phone_texture(rng: np.random.Generator) -> Texture:
    ink = Ink(70, 140)
    ink.rect(0, 0, 70, 140, (15, 15, 20))
    if rng.random() < 0.5:
        for _ in range(int(rng.integers(3, 10))):
            x, y = rng.uniform(4, 60), rng.uniform(8, 125)
            colour = tuple(int(v) for v in rng.integers(40, 255, 3))
            ink.rect(float(x), float(y), float(x + rng.uniform(6, 25)), float(y + rng.uniform(6, 20)), colour)  # type: ignore[arg-type]
    else:
        ink.poly([(0, 0), (35, 0), (0, 60)], (45, 45, 55))
    return _texture(ink)


def _dice_texture(rng: np.random.Generator) -> Texture:
    ink = Ink(40, 40)
    ink.rect(0, 0, 40, 40, (245, 245, 240))
    pips = {
        1: [(20, 20)],
        2: [(10, 10), (30, 30)],
        3: [(10, 10), (20, 20), (30, 30)],
        4: [(10, 10), (30, 10), (10, 30), (30, 30)],
        5: [(10, 10), (30, 10), (20, 20), (10, 30), (30, 30)],
        6: [(10, 9), (30, 9), (10, 20), (30, 20), (10, 31), (30, 31)],
    }
    n = int(rng.integers(1, 7))
    for x, y in pips[n]:
        ink.circle(x, y, 4.5 if n == 1 else 3.5, (200, 30, 30) if n in (1, 4) else (20, 20, 20))
    return _texture(ink)


def _label_texture(rng: np.random.Generator, colour: tuple[int, ...]) -> Texture:
    ink = Ink(56, 90)
    ink.rect(0, 0, 56, 90, colour)  # type: ignore[arg-type]
    ink.rect(6, 30, 50, 60, tuple(int(v) for v in rng.integers(0, 255, 3)))  # type: ignore[arg-type]
    return _texture(ink)


_KEY_LABELS = (
    *"QWERTYUIOPASDFGHJKLZXCVBNM1234567890",
    *(f"F{i}" for i in range(1, 13)),
    "Esc",
    "Tab",
    "Ctrl",
    "Alt",
    "Enter",
    "Backspace",
    "Shift",
)


def keyboard(rng: np.random.Generator, yaw: float) -> Body:
    """A laptop's or desk keyboard: rows of square keys (each about 16 mm, near a tile's size), labelled."""
    width, height = float(rng.uniform(270, 360)), float(rng.uniform(95, 130))
    dark = rng.random() < 0.6
    base = (35, 35, 40) if dark else (205, 205, 210)
    key = (20, 20, 24) if dark else (245, 245, 245)
    label = (225, 225, 225) if dark else (30, 30, 35)
    scale = 3  # texture pixels a millimetre
    ink = Ink(int(width * scale), int(height * scale))
    ink.rect(0, 0, ink.width, ink.height, base)
    pitch = float(rng.uniform(17, 19.5))
    rows = max(3, int((height - 8) // pitch))
    for r in range(rows):
        x = 4 + (r % 3) * pitch * 0.25
        y = 4 + r * pitch
        while x + pitch < width - 4:
            wide = rng.random() < 0.08
            w = pitch * (2.0 if wide else 1.0) - 2.5
            ink.rect(x * scale, y * scale, (x + w) * scale, (y + pitch - 2.5) * scale, key)
            text = "Backspace" if wide else _KEY_LABELS[int(rng.integers(len(_KEY_LABELS) - 3))]
            size = 0.9 if len(text) < 3 else 0.5
            cv2.putText(
                ink.rgba,
                text,
                (int((x + 1.5) * scale), int((y + pitch * 0.55) * scale)),
                cv2.FONT_HERSHEY_SIMPLEX,
                size * scale / 3,
                (*label, 255),
                max(1, scale // 2),
                cv2.LINE_AA,
            )
            x += w + 2.5
    return _box(rng, width, height, float(rng.uniform(4, 18)), yaw, _texture(ink), base)


_DOMINO_PIPS = {
    0: (),
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    6: ((0.25, 0.2), (0.75, 0.2), (0.25, 0.5), (0.75, 0.5), (0.25, 0.8), (0.75, 0.8)),
}


def _domino_texture(rng: np.random.Generator, ivory: bool) -> Texture:
    """A domino's face: two squares of pips parted by a line (ivory with dark pips, or black with white)."""
    ink = Ink(48, 96)
    face, pip = ((242, 238, 225), (25, 25, 30)) if ivory else ((25, 25, 30), (240, 240, 235))
    ink.rect(0, 0, 48, 96, face)
    ink.line(6, 48, 42, 48, pip, 2)
    for half in (0, 48):
        for px, py in _DOMINO_PIPS[int(rng.integers(7))]:
            ink.circle(4 + px * 40, half + 4 + py * 40, 4.2, pip)
    return _texture(ink)


_PRINTED = "一二三四五六七八九万筒条萬東南西北中發"


def _page_texture(rng: np.random.Generator) -> Texture:
    """A printed page: lines of words, now and then a tile's name in large CJK type (万, 筒, 条 ...)."""
    ink = Ink(296, 420)
    ink.rect(0, 0, 296, 420, (240, 240, 234))
    fonts = cjk_fonts()
    y = 24.0
    while y < 400:
        if fonts and rng.random() < 0.25:
            for i in range(int(rng.integers(2, 6))):
                char = _PRINTED[int(rng.integers(len(_PRINTED)))]
                glyph = fitted_glyph(fonts[0], char, 34, 34)
                if glyph is not None:
                    ink.coverage(glyph, 20 + i * 44, y, (20, 20, 25))
            y += 48
            continue
        words = "".join(chr(int(c)) for c in rng.integers(97, 123, int(rng.integers(20, 40))))
        cv2.putText(
            ink.rgba, words, (20, int(y)), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (30, 30, 35, 255), 1, cv2.LINE_AA
        )
        y += float(rng.uniform(16, 22))
    return _texture(ink)


def _texture(ink: Ink) -> Texture:
    rgba = ink.rgba.astype(np.float32)
    rgba[..., 3] /= 255.0
    return make_texture(rgba)


_SPINE_CJK = "一二三四五六七八九十万筒条萬中国历史文学小说诗集全书新论语记"
_SPINE_INKS = ((240, 235, 220), (20, 20, 25), (210, 170, 60), (200, 40, 40))


def book_row(rng: np.random.Generator, yaw: float) -> Body:
    """Books standing side by side on the table, their spines facing ``yaw`` (``tile_body.stand_axes``): a
    shelf's row as a webcam at table height sees it behind a hand, each spine a colour, its title in stacked
    CJK type (often a tile's numeral or suit) or Latin type turned along it, now and then a round logo."""
    width, height = float(rng.uniform(180, 420)), float(rng.uniform(150, 260))
    depth = float(rng.uniform(120, 200))
    scale = 3  # texture pixels a millimetre
    ink = Ink(int(width * scale), int(height * scale))
    back = as_colour(rng.integers(25, 90, 3))
    ink.rect(0, 0, ink.width, ink.height, back)
    fonts = cjk_fonts()
    x = 0.0
    while x < width - 6:
        spine = min(float(rng.uniform(12, 45)), width - x)
        tall = height * float(rng.uniform(0.7, 1.0))
        top = height - tall
        colour = as_colour(rng.integers(20, 235, 3))
        x0, x1 = x * scale, (x + spine) * scale
        ink.rect(x0, top * scale, x1, height * scale, colour)
        text_ink = _SPINE_INKS[int(rng.integers(len(_SPINE_INKS)))]
        if rng.random() < 0.4:  # a band across the spine
            y = top + tall * float(rng.uniform(0.05, 0.8))
            ink.rect(x0, y * scale, x1, (y + tall * 0.06) * scale, text_ink)
        side = spine * 0.7
        if fonts and rng.random() < 0.6:
            y = top + tall * 0.12
            for _ in range(int(rng.integers(2, 7))):
                if y + side > height - tall * 0.15:
                    break
                char = _SPINE_CJK[int(rng.integers(len(_SPINE_CJK)))]
                glyph = fitted_glyph(fonts[0], char, int(side * scale), int(side * scale))
                if glyph is not None:
                    ink.coverage(glyph, (x + spine * 0.15) * scale, y * scale, text_ink)
                y += side * 1.15
        else:
            _turned_title(
                ink, rng, x0, x1, (top + tall * 0.1) * scale, (height - tall * 0.15) * scale, text_ink
            )
        if rng.random() < 0.3:  # a publisher's round logo near the foot
            ink.circle((x + spine / 2) * scale, (height - tall * 0.07) * scale, side * 0.3 * scale, text_ink)
        x += spine
    body = _scale(back, 0.8)
    return Body(np.zeros(3), stand_axes(yaw), (width, height, depth), _texture(ink), body, body, body, 1.0)


def _turned_title(
    ink: Ink, rng: np.random.Generator, x0: float, x1: float, y0: float, y1: float, colour: Colour
) -> None:
    """A Latin title written along a spine (x0..x1 across, y0..y1 along it), read with the head tilted."""
    across, along = int(x1 - x0), int(y1 - y0)
    if across < 6 or along < 20:
        return
    strip = np.zeros((across, along), np.uint8)
    words = "".join(chr(int(c)) for c in rng.integers(65, 91, int(rng.integers(6, 16))))
    cv2.putText(
        strip, words, (2, int(across * 0.72)), cv2.FONT_HERSHEY_SIMPLEX, across / 40, 255, 2, cv2.LINE_AA
    )
    turned = np.rot90(strip, -1 if rng.random() < 0.5 else 1).astype(np.float32) / 255.0
    ink.coverage(turned, x0, y0, colour)
