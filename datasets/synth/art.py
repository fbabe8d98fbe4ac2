"""Tile artwork folders given with ``--art``: faces named m1..s9 (SVG or PNG), Unicode mahjong fonts, sprites.

Understood layouts (a folder without faces of its own is searched one level down, so the parent of
several art folders works too):

- ``m1.svg`` .. ``s9.svg`` or ``.png`` faces, transparent or not; optional ``front.svg``/``front.png``
  (the tile body: its colour becomes the face colour), ``back.svg``/``back.png`` or ``backs/*.png``
  (the colour of the back layer);
- ``*.otf``/``*.ttf`` fonts with the Unicode Mahjong Tiles block (U+1F000..U+1F02B): one set per font,
  the frame drawn by the font removed, components coloured like real sets;
- one sprite SVG with nested ``<svg id="t_ch1">`` (characters), ``t_do*`` (dots), ``t_ba*`` (bamboo).

Each set is rendered once per process (``functools.cache``) at the face-texture size.
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from datasets.synth.faces import FaceKey
from datasets.synth.ink import Colour
from scoring.tiles import CLASS_NAMES

_UNICODE = {
    **{i: 0x1F007 + i for i in range(9)},
    **{9 + i: 0x1F019 + i for i in range(9)},
    **{18 + i: 0x1F010 + i for i in range(9)},
}
_UNICODE_HONOURS = {
    "E": 0x1F000,
    "S": 0x1F001,
    "W": 0x1F002,
    "N": 0x1F003,
    "C": 0x1F004,
    "F": 0x1F005,
    "P": 0x1F006,
    **{f"f{i}": 0x1F021 + i for i in range(1, 9)},
}
_SPRITE_IDS = {"m": "t_ch", "p": "t_do", "s": "t_ba"}


class ArtError(ValueError):
    """An --art folder could not be used; the message says which and why."""


@dataclass(frozen=True)
class ArtSource:
    """Where one art set comes from: a folder of faces, one font file, or one sprite SVG."""

    kind: str  # faces | font | sprite
    path: str

    @property
    def name(self) -> str:
        return Path(self.path).stem if self.kind != "faces" else Path(self.path).name


@dataclass(frozen=True)
class ArtSet:
    name: str
    faces: dict[FaceKey, np.ndarray]  # premultiplied RGBA uint8 ink, texture-sized
    body: Colour | None  # face colour when the set has its own (e.g. a black body)
    back: Colour | None


# Art sets no model trains on: the honest measure of a set the models have never seen. Training data
# (``smj dataset synth`` and ``crops --rendered``) leaves them out; the benchmarks draw them on request.
HELD_OUT: tuple[str, ...] = ("samoheen_hongkong",)


def discover(folders: list[str] | tuple[str, ...], *, held_out: bool = False) -> tuple[ArtSource, ...]:
    """The art sets in the given folders, in a stable order; raises ArtError for a folder with none.

    ``held_out`` False: every set but the ``HELD_OUT`` ones (what training may use); True: those alone.
    """
    sources: list[ArtSource] = []
    for folder in folders:
        path = Path(folder)
        if not path.is_dir():
            raise ArtError(f"--art {folder}: no such folder")
        found = _sources_in(path)
        if not found:
            for child in sorted(p for p in path.iterdir() if p.is_dir()):
                found += _sources_in(child)
        if not found:
            raise ArtError(f"--art {folder}: no faces m1..s9 (.svg/.png), mahjong fonts or sprite SVG found")
        sources += found
    kept = tuple(source for source in sources if (source.name in HELD_OUT) == held_out)
    if sources and not kept:
        which = "the held-out sets " + ", ".join(HELD_OUT) if held_out else "sets that are not held out"
        raise ArtError(f"--art {', '.join(map(str, folders))}: no {which}")
    return kept


def _sources_in(path: Path) -> list[ArtSource]:
    if all(_face_file(path, name) is not None for name in CLASS_NAMES):
        return [ArtSource("faces", str(path))]
    fonts = sorted(p for p in path.iterdir() if p.suffix.lower() in (".otf", ".ttf"))
    found = [ArtSource("font", str(p)) for p in fonts if _has_mahjong_block(p)]
    for svg in sorted(path.glob("*.svg")):
        if svg.stat().st_size < 5_000_000 and 'id="t_ch1"' in svg.read_text(
            encoding="utf-8", errors="ignore"
        ):
            found.append(ArtSource("sprite", str(svg)))
    return found


def _face_file(folder: Path, name: str) -> Path | None:
    for suffix in (".svg", ".png", ".SVG", ".PNG"):
        candidate = folder / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def _has_mahjong_block(path: Path) -> bool:
    try:
        from fontTools.ttLib import TTFont  # optional: comes with matplotlib/ultralytics installs
    except ImportError:
        return True
    try:
        with TTFont(str(path), lazy=True) as font:
            return 0x1F007 in font.getBestCmap()
    except Exception:  # a broken font file is simply not an art set
        return False


@functools.cache
def load(source: ArtSource, width: int, height: int) -> ArtSet:
    if source.kind == "faces":
        return _load_faces(Path(source.path), width, height)
    if source.kind == "font":
        return _load_font(Path(source.path), width, height)
    return _load_sprite(Path(source.path), width, height)


# --- rendering helpers ----------------------------------------------------------------------------------


def _render_file(path: Path, width: int, height: int) -> np.ndarray:
    """RGBA uint8 (straight alpha), rendered or resized to about ``width`` x ``height``."""
    if path.suffix.lower() == ".svg":
        return _render_svg(path.read_bytes(), width, height)
    with Image.open(path) as image:
        return np.asarray(image.convert("RGBA").resize((width, height), Image.Resampling.LANCZOS))


def _render_svg(data: bytes, width: int, height: int) -> np.ndarray:
    import cairosvg  # imported here: only --art needs cairo

    png = cairosvg.svg2png(bytestring=data, output_width=width, output_height=height)
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGBA"))


def _fit_ink(
    rgba: np.ndarray, width: int, height: int, margin_x: float = 0.1, margin_y: float = 0.08
) -> np.ndarray:
    """Crop art to its ink and centre it in the face's inner box; returns premultiplied RGBA uint8."""
    alpha = rgba[..., 3]
    rows, cols = np.nonzero(alpha > 16)
    out = np.zeros((height, width, 4), np.uint8)
    if rows.size == 0:
        return out
    crop = rgba[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
    box_w, box_h = width * (1 - 2 * margin_x), height * (1 - 2 * margin_y)
    scale = min(box_w / crop.shape[1], box_h / crop.shape[0])
    w, h = max(1, round(crop.shape[1] * scale)), max(1, round(crop.shape[0] * scale))
    premultiplied = crop.astype(np.float32)
    premultiplied[..., :3] *= premultiplied[..., 3:] / 255.0
    resized = cv2.resize(premultiplied, (w, h), interpolation=cv2.INTER_AREA)
    x0, y0 = (width - w) // 2, (height - h) // 2
    out[y0 : y0 + h, x0 : x0 + w] = np.clip(resized + 0.5, 0, 255).astype(np.uint8)
    return out


def _opaque_colour(rgba: np.ndarray) -> Colour | None:
    pixels = rgba[rgba[..., 3] > 200][:, :3]
    if len(pixels) == 0:
        return None
    return tuple(int(v) for v in np.median(pixels, axis=0))  # type: ignore[return-value]


def _remove_background(rgba: np.ndarray, body: Colour | None) -> np.ndarray:
    """Faces drawn on an opaque tile colour (PNG scans): make that colour transparent."""
    if body is None or rgba[..., 3].min() < 250:
        return rgba
    distance = np.abs(rgba[..., :3].astype(np.int16) - np.array(body, np.int16)).sum(axis=2)
    out = rgba.copy()
    out[..., 3] = np.clip((distance - 30) * 6, 0, 255).astype(np.uint8)
    return out


# --- folders of faces ------------------------------------------------------------------------------------


def _load_faces(folder: Path, width: int, height: int) -> ArtSet:
    body: Colour | None = None
    back: Colour | None = None
    front_file = _face_file(folder, "front")
    if front_file is not None:
        body = _opaque_colour(_render_file(front_file, 60, 80))
    back_file = _face_file(folder, "back")
    backs = sorted((folder / "backs").glob("*.png")) if (folder / "backs").is_dir() else []
    if back_file is not None:
        back = _opaque_colour(_render_file(back_file, 60, 80))
    elif backs:
        back = _opaque_colour(_render_file(backs[0], 60, 80))
    faces: dict[FaceKey, np.ndarray] = {}
    for tile, name in enumerate(CLASS_NAMES):
        path = _face_file(folder, name)
        if path is None:
            raise ArtError(f"{folder}: no face {name}.svg or {name}.png")
        rgba = _render_file(path, width * 2, height * 2)
        if rgba[..., 3].min() >= 250:  # an opaque face: its own corner colour is the body colour
            body = body or tuple(int(v) for v in rgba[2, rgba.shape[1] // 2, :3])  # type: ignore[assignment]
            rgba = _remove_background(rgba, body)
        faces[tile] = _fit_ink(rgba, width, height)
    return ArtSet(folder.name, faces, body, back)


# --- Unicode mahjong fonts -------------------------------------------------------------------------------


def _load_font(path: Path, width: int, height: int) -> ArtSet:
    font = ImageFont.truetype(str(path), height * 2)
    palette = {"red": (200, 35, 40), "green": (20, 125, 60), "blue": (30, 55, 160), "black": (25, 25, 30)}
    faces: dict[FaceKey, np.ndarray] = {}
    for key, codepoint in list(_UNICODE.items()) + list(_UNICODE_HONOURS.items()):
        mask = _font_glyph(font, chr(codepoint), height * 2)
        if mask is None:
            continue
        faces[key] = _fit_ink(_colour_components(mask, key, palette), width, height)
    return ArtSet(path.stem, faces, None, None)


def _font_glyph(font: ImageFont.FreeTypeFont, char: str, size: int) -> np.ndarray | None:
    """The glyph without the tile outline the font draws around it (uint8 mask)."""
    image = Image.new("L", (size * 2, size * 2), 0)
    ImageDraw.Draw(image).text((size // 4, size // 4), char, font=font, fill=255)
    mask = np.asarray(image)
    count, labels, stats, _ = cv2.connectedComponentsWithStats((mask > 100).astype(np.uint8), connectivity=8)
    if count <= 1:
        return None
    # The outline is the component with the largest bounding box.
    big = int(np.argmax(stats[1:, cv2.CC_STAT_WIDTH] * stats[1:, cv2.CC_STAT_HEIGHT])) + 1
    x, y, w, h = (int(v) for v in stats[big, :4])
    inner = mask[y : y + h, x : x + w].copy()
    inner[labels[y : y + h, x : x + w] == big] = 0
    pad = max(2, int(0.05 * w))
    inner = inner[pad:-pad, pad:-pad]
    return inner if np.count_nonzero(inner > 100) > 20 else None


def _colour_components(mask: np.ndarray, key: FaceKey, palette: dict[str, Colour]) -> np.ndarray:
    """Colour a monochrome glyph per connected component, roughly like real sets."""
    count, labels, _, centroids = cv2.connectedComponentsWithStats(
        (mask > 60).astype(np.uint8), connectivity=8
    )
    colours = np.zeros((count, 3), np.float32)
    h = mask.shape[0]
    for i in range(1, count):
        cy = centroids[i][1] / h
        if isinstance(key, str):
            name = {"C": "red", "F": "green", "P": "blue"}.get(key, "black" if key in "ESWN" else "red")
        elif key < 9:
            name = "black" if cy < 0.45 else "red"
        elif key < 18:
            name = ("blue", "red", "green")[min(2, int(cy * 3))] if key % 9 else "blue"
        else:
            name = "green" if key % 9 else ("green", "red", "blue")[i % 3]
        colours[i] = palette[name]
    rgb = colours[labels]
    return np.dstack([rgb, mask.astype(np.float32)]).clip(0, 255).astype(np.uint8)


# --- sprite SVGs ------------------------------------------------------------------------------------------


def _load_sprite(path: Path, width: int, height: int) -> ArtSet:
    text = path.read_text(encoding="utf-8")
    end = text.find("</defs>")
    if end < 0:
        raise ArtError(f"{path}: a sprite SVG needs its tiles in <defs>")
    head = text[: end + len("</defs>")]
    faces: dict[FaceKey, np.ndarray] = {}
    for tile in range(27):
        ident = f"{_SPRITE_IDS['mps'[tile // 9]]}{tile % 9 + 1}"
        match = re.search(rf'<svg id="{ident}" viewBox="([^"]+)"', text)
        if not match:
            raise ArtError(f'{path}: no <svg id="{ident}">')
        _, _, vw, vh = (float(v) for v in match.group(1).split())
        root = re.sub(r'viewBox="[^"]*"', f'viewBox="0 0 {vw} {vh}"', head, count=1)
        svg = f'{root}<use xlink:href="#{ident}" width="{vw}" height="{vh}"/></svg>'
        faces[tile] = _fit_ink(_render_svg(svg.encode(), width * 2, height * 2), width, height)
    return ArtSet(path.stem, faces, None, None)
