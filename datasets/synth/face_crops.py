"""Classifier crops rendered directly: one tile between its neighbours, without a whole scene.

A scene (``datasets.synth.scene``) shows a few dozen tiles of one set; the classifier needs many more
sets to learn the faces themselves (a 万's numeral, not the colours of a few sets' 萬). Each look here
is a fresh procedural face style (``random_face_style``: fonts, ink colours, layouts) or one of the
``--art`` sets. A crop shows one tile of it between up to two neighbours, its ivory and coloured
layers showing below its face, lit unevenly, seen in perspective, its row level or at any angle (the
box of a tile in a tilted row takes in slices of its neighbours), photographed at a photo's scale (a
box of 26-110 px) with blur, noise and JPEG, and cut as training crops are cut from photos
(``datasets.crops``: the box widened by a loose margin on each side, squashed square). Crops are
upright; ``datasets.crops`` turns them as it turns crops cut from photos.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from datasets.synth import art
from datasets.synth.faces import HONOUR_KEYS, FaceKey, random_face_style, render_face
from datasets.synth.ink import in_ink
from datasets.synth.look import (
    BACKS,
    BODIES,
    FIVES,
    RED_FIVES_P,
    TEX_H,
    TEX_W,
    jitter,
    random_one_ink,
    random_red_five,
)
from datasets.synth.tile_body import face_base, face_texture, plain_texture
from scoring.tiles import CLASS_NAMES
from vision.contract import BOX_MARGINS, CROP_SIZE, tile_crops

# crops per class, relatively: 万 faces (told apart by their numeral alone) twice as often
CLASS_WEIGHTS = {name: 2.0 if name[0] == "m" else 1.0 for name in CLASS_NAMES} | {"honour": 1.5, "back": 0.5}
LOOK_TILES = 27  # crops drawn from one look before the next
ART_P = 0.35  # share of looks drawn from the art sets, when there are any
TILTED_ROWS = 0.4  # share of crops whose row runs at any angle (the rest within a few degrees of level)
BOX_PX = (26.0, 110.0)  # the box's longer side in the photo, drawn log-uniformly
_TABLES = ((40, 120, 60), (30, 60, 140), (120, 80, 50), (200, 200, 190), (60, 60, 60))
_PAD = 90  # canvas pixels around the row of tiles (a row turned 45 degrees still fills the crop)
_BELOW = math.ceil(0.45 * TEX_H)  # the deepest the layers under a face may show
BACK_KEY = "back"  # the face key of a tile lying face down


class _Look:
    """One set's look: body and back colours, rounded corners, and its faces (procedural or art)."""

    def __init__(
        self,
        rng: np.random.Generator,
        art_sets: Sequence[art.ArtSet],
        art_p: float,
        red_five_p: float,
        one_ink_p: float = 0.0,
    ) -> None:
        self.body = jitter(rng, BODIES[int(rng.integers(len(BODIES)))], 8)
        self.back = jitter(rng, BACKS[int(rng.integers(len(BACKS)))], 20)
        self.corner = round(float(rng.uniform(0.08, 0.16)), 2)
        self.art = art_sets[int(rng.integers(len(art_sets)))] if art_sets and rng.random() < art_p else None
        if self.art is not None:
            self.body = self.art.body or self.body
            self.back = self.art.back if self.art.back is not None and rng.random() < 0.5 else self.back
        self.style = random_face_style(rng)
        self.red_five = random_red_five(rng, red_five_p)
        self.one_ink = random_one_ink(rng, one_ink_p)
        bevel = round(float(rng.uniform(0.05, 0.16)), 2)
        gain = rng.uniform(0.88, 1.12, 3).astype(np.float32)
        self._base = face_base(TEX_W, TEX_H, self.body, self.corner, bevel, gain)
        self._faces: dict[FaceKey, np.ndarray] = {}

    def face(self, key: FaceKey) -> np.ndarray:
        """Premultiplied float RGBA of a face, or of the tile's back (``BACK_KEY``)."""
        if key not in self._faces:
            if key == BACK_KEY:
                texture = plain_texture(TEX_W, TEX_H, self.back, self.corner, 0.08)
            else:
                faces = self.art.faces if self.art is not None else {}
                ink = faces[key] if key in faces else render_face(self.style, key, TEX_W, TEX_H)
                if self.one_ink is not None:
                    ink = in_ink(ink, self.one_ink)
                if self.red_five is not None and key in FIVES:
                    ink = in_ink(ink, self.red_five)
                texture = face_texture(ink, self._base)
            self._faces[key] = texture.levels[0]
        return self._faces[key]

    def slab(self, colour: tuple[int, int, int]) -> np.ndarray:
        return plain_texture(TEX_W, TEX_H, colour, self.corner, 0.05).levels[0]


def _shaded(colour: tuple[int, int, int], shade: float) -> tuple[int, int, int]:
    r, g, b = (round(c * shade) for c in colour)
    return r, g, b


def _over(canvas: np.ndarray, layer: np.ndarray, x: int, y: int) -> None:
    """Premultiplied RGBA ``layer`` over the float RGB ``canvas`` with its top-left at (x, y)."""
    h, w = layer.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, canvas.shape[1]), min(y + h, canvas.shape[0])
    if x1 > x0 and y1 > y0:
        part = layer[y0 - y : y1 - y, x0 - x : x1 - x]
        canvas[y0:y1, x0:x1] = part[..., :3] + canvas[y0:y1, x0:x1] * (1 - part[..., 3:4])


@dataclass(frozen=True)
class _Row:
    canvas: np.ndarray  # float32 RGB
    quad: np.ndarray  # (4, 2) the middle tile's outline: its face and the layers showing below it


def _lay_row(
    rng: np.random.Generator, look: _Look, key: FaceKey, neighbours: Sequence[FaceKey | None]
) -> _Row:
    """The tile ``key`` in the middle of a row of up to three (``neighbours``, left and right; None: no
    tile there), seen face on."""
    width, height = 3 * TEX_W + 2 * _PAD, TEX_H + 2 * _PAD + _BELOW
    canvas = np.empty((height, width, 3), np.float32)
    canvas[:] = jitter(rng, _TABLES[int(rng.integers(len(_TABLES)))], 30)
    dx, dy = int(rng.uniform(-0.12, 0.12) * TEX_W), int(rng.uniform(0.0, 0.45) * TEX_H)
    split, shade = float(rng.uniform(0.4, 0.7)), float(rng.uniform(0.6, 0.9))
    gap = int(rng.uniform(0, 0.06) * TEX_W)
    tiles = [(neighbours[0], -1), (key, 0), (neighbours[1], 1)]
    shown = [(k, _PAD + TEX_W + place * (TEX_W + gap)) for k, place in tiles if k is not None]
    back_slab = look.slab(_shaded(look.back, shade))
    ivory_slab = look.slab(_shaded(look.body, shade))
    for _, x in shown:
        _over(canvas, back_slab, x + dx, _PAD + dy)
        _over(canvas, ivory_slab, x + int(dx * split), _PAD + int(dy * split))
    for face, x in shown:
        _over(canvas, look.face(face), x, _PAD)
    x0 = _PAD + TEX_W
    quad = np.array(
        [
            [x0, _PAD],
            [x0 + TEX_W, _PAD],
            [x0 + TEX_W + max(dx, 0), _PAD + TEX_H + dy],
            [x0 + min(dx, 0), _PAD + TEX_H + dy],
        ],
        np.float32,
    )
    return _Row(canvas, quad)


def _light(rng: np.random.Generator, canvas: np.ndarray) -> np.ndarray:
    height, width = canvas.shape[:2]
    left, right = rng.uniform(0.65, 1.15, 2)
    top, bottom = rng.uniform(0.8, 1.1, 2)
    across = np.linspace(left, right, width, dtype=np.float32)[None, :, None]
    down = np.linspace(top, bottom, height, dtype=np.float32)[:, None, None]
    lit = canvas * across * down * rng.uniform(0.85, 1.12, 3).astype(np.float32)
    if rng.random() < 0.15:  # a glare spot
        cx, cy, radius = rng.uniform(0, width), rng.uniform(0, height), rng.uniform(20, 80)
        yy, xx = np.mgrid[:height, :width]
        spot = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * radius**2)).astype(np.float32)
        lit += rng.uniform(40, 140) * spot[..., None]
    return lit


def _photograph(rng: np.random.Generator, row: _Row, size: int) -> np.ndarray:
    """Perspective, a small turn, the photo's scale and its camera, then the classifier's cut."""
    height, width = row.canvas.shape[:2]
    corners = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    moved = corners + (rng.uniform(-0.12, 0.12, (4, 2)) * (TEX_W, TEX_H)).astype(np.float32)
    # a row at any angle (crops are turned by quarter turns later): the box of a tile in a tilted row
    # takes in slices of its neighbours, as the localiser's boxes do
    angle = rng.uniform(-45, 45) if rng.random() < TILTED_ROWS else rng.normal(0, 6)
    turn = np.vstack([cv2.getRotationMatrix2D((width / 2, height / 2), angle, 1.0), [0, 0, 1]])
    view = turn @ cv2.getPerspectiveTransform(corners, moved)
    outline = cv2.perspectiveTransform(row.quad[None], view)[0]
    low, high = outline.min(0), outline.max(0)
    margins = rng.uniform(*BOX_MARGINS, 4)  # left, top, right, bottom: loose as the localiser's boxes
    low, high = low - margins[:2] * (high - low), high + margins[2:] * (high - low)
    scale = float(np.exp(rng.uniform(*np.log(BOX_PX)))) / float(max(high - low))
    out_w, out_h = (max(4, round(float(side) * scale)) for side in high - low)
    # drawn at twice the size and shrunk by area: no aliasing
    to_crop = np.array([[2 * scale, 0, -2 * scale * low[0]], [0, 2 * scale, -2 * scale * low[1]], [0, 0, 1]])
    image = cv2.warpPerspective(
        _light(rng, row.canvas), to_crop @ view, (2 * out_w, 2 * out_h), borderMode=cv2.BORDER_REPLICATE
    )
    image = cv2.resize(image, (out_w, out_h), interpolation=cv2.INTER_AREA)
    blur = float(rng.choice([0.0, rng.uniform(0.3, 0.8), rng.uniform(0.8, 1.2)], p=(0.35, 0.5, 0.15)))
    if blur > 0:
        image = cv2.GaussianBlur(image, (0, 0), blur)
    image += np.asarray(rng.normal(0, rng.uniform(1, 6), image.shape), np.float32)
    bgr = cv2.cvtColor(np.clip(image, 0, 255).astype(np.uint8), cv2.COLOR_RGB2BGR)
    _, jpeg = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(65, 96))])
    shot = cv2.cvtColor(np.asarray(cv2.imdecode(jpeg, cv2.IMREAD_COLOR)), cv2.COLOR_BGR2RGB)
    whole = np.array([[0, 0, out_w, out_h]], np.float32)
    return tile_crops(shot, whole, size, 0.0)[0]  # squashed square as the classifier squashes a box


def art_sets_in(folders: list[str] | tuple[str, ...], *, held_out: bool = False) -> list[art.ArtSet]:
    """The art sets in ``folders`` (the held-out ones alone, or all but them: ``art.discover``), loaded
    at the faces' texture size; raises ``art.ArtError``."""
    return [art.load(source, TEX_W, TEX_H) for source in art.discover(folders, held_out=held_out)]


def rendered_crops(
    n: int,
    *,
    seed: int,
    art_sets: Sequence[art.ArtSet] = (),
    size: int = CROP_SIZE,
    art_p: float = ART_P,
    red_five_p: float = RED_FIVES_P,
    one_ink_p: float = 0.0,
    classes: Sequence[str] = (),
) -> Iterator[tuple[str, np.ndarray]]:
    """``n`` (class name, (size, size, 3) uint8 RGB crop) pairs, the same for the same seed.

    ``art_p``: the share of looks drawn from ``art_sets``; ``red_five_p``: of sets whose fives are red
    (labelled as plain fives); ``one_ink_p``: of sets printing every face in one ink (the fives of a
    red-five set then red over it); ``classes``: only these (default: every class, 万 twice as often).
    """
    rng = np.random.default_rng([0xFACE, seed])
    weighted = {name: w for name, w in CLASS_WEIGHTS.items() if not classes or name in classes}
    names = list(weighted)
    weights = np.array(list(weighted.values()))
    shares = weights / weights.sum()

    def new_look() -> _Look:
        return _Look(rng, art_sets, art_p, red_five_p, one_ink_p)

    look = new_look()
    for number in range(n):
        if number and number % LOOK_TILES == 0:
            look = new_look()
        name = names[int(rng.choice(len(names), p=shares))]
        key: FaceKey
        if name == "back":
            key = BACK_KEY
        elif name == "honour":
            key = HONOUR_KEYS[int(rng.integers(len(HONOUR_KEYS)))]
        else:
            key = CLASS_NAMES.index(name)
        neighbours = [_neighbour(rng, key) for _ in range(2)]
        yield name, _photograph(rng, _lay_row(rng, look, key, neighbours), size)


def _neighbour(rng: np.random.Generator, key: FaceKey) -> FaceKey | None:
    """A neighbour's face, None for no neighbour; a back is often beside another (a concealed kong)."""
    if rng.random() < 0.3:
        return None
    return BACK_KEY if key == BACK_KEY and rng.random() < 0.5 else int(rng.integers(len(CLASS_NAMES)))
