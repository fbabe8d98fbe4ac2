"""A stand-in detector and a matching photo, for tests, the page's browser test and ``bench_api --fake``.

``FakeDetector`` answers every photo with the same hand laid out as a camera would see it: the concealed
tiles standing in a row with the winning tile set apart at its right end, the melds in a row below. Its
boxes are fractions of the photo's size, so any photo works. ``fake_photo`` draws that hand (a green
table, white tiles with their names) so that the boxes sit on something when the page shows them.

``create_fake_app`` is ``api.app.create_app`` with the fake detector loaded in the lifespan:

    uvicorn --factory api.fakes:create_fake_app --no-proxy-headers
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from fastapi import FastAPI

from api.settings import Settings
from scoring.tiles import parse_tile
from vision.detect.looks import SecondLook
from vision.detect.view import AS_IS, Located, View, Views
from vision.detections import BACK, CLASS_IDS, Detections
from vision.images import Photo

# 123345m66999p with an exposed kong of 2p, won on 6p: 根 1 fan under chengdu (x2).
DEFAULT_ROWS: tuple[tuple[str, ...], ...] = (("1m2m3m3m4m5m6p9p9p9p", "6p"), ("2p2p2p2p",))
TILE_W = 0.055  # of the photo's width
TILE_ASPECT = 1.35  # height / width, of the photo's pixels when the photo is 4:3


def _classes(group: str) -> list[int]:
    """``"1m2mB"`` -> detector class ids, ``B`` a face-down tile."""
    classes, index = [], 0
    while index < len(group):
        if group[index] == "B":
            classes.append(BACK)
            index += 1
        else:
            classes.append(parse_tile(group[index : index + 2]))
            index += 2
    return classes


@dataclass(frozen=True)
class Placed:
    class_id: int
    box: tuple[float, float, float, float]  # xyxy, fractions of the photo's width and height


def layout(rows: Sequence[Sequence[str]] = DEFAULT_ROWS, *, aspect: float = 4 / 3) -> list[Placed]:
    """Rows of groups (one gap of a tile width between groups), centred, as fractions of the photo."""
    width = TILE_W
    height = TILE_W * TILE_ASPECT * aspect
    placed: list[Placed] = []
    y = 0.32
    for row in rows:
        groups = [_classes(group) for group in row]
        span = sum(len(group) for group in groups) * width + (len(groups) - 1) * width
        x = (1 - span) / 2
        for group in groups:
            for class_id in group:
                placed.append(Placed(class_id, (x, y, x + width * 0.98, y + height)))
                x += width
            x += width
        y += height * 1.6
    return placed


class OneStep:
    """A reader (``vision.reading.Reader``) that names a photo's tiles in one step, ``answer``: it locates
    nothing of its own (``Located.nothing``) and takes the views it is given. One view of any photo, unless a
    subclass names ``second`` looks (taken at photos whose long side is at most ``close_up``). The base of
    the fake and of the tests' stand-ins."""

    second: tuple[SecondLook, ...] = ()
    close_up = 10**9

    def views(self, located: Located) -> Views:
        return Views(second=self.second if max(located.size) <= self.close_up else ())

    def locate(self, photo: Photo | np.ndarray, view: View = AS_IS, **_: object) -> Located:
        return Located.nothing(photo, view)

    def read(self, located: Located, *, conf: float = 0.25, **_: object) -> Detections:
        return self.answer(located, conf)

    def answer(self, located: Located, conf: float) -> Detections:
        """What the reader finds in ``located.view`` of a photo of ``located.size`` at ``conf``."""
        raise NotImplementedError


class FakeDetector(OneStep):
    """A reader as ``vision.detect.detector.Detector`` is one: always the same hand, scaled to the photo."""

    weights = "fake"

    def __init__(
        self,
        rows: Sequence[Sequence[str]] = DEFAULT_ROWS,
        confidence: float = 0.9,
        alternatives: Mapping[int, tuple[str, float]] | None = None,
    ) -> None:
        """``alternatives``: a second reading (suited class name, confidence) for some tiles, by index."""
        self.rows = tuple(tuple(row) for row in rows)
        self.confidence = confidence
        self.alternatives = dict(alternatives or {})

    def answer(self, located: Located, conf: float) -> Detections:
        """The fake hand laid out over the photo; it has one view and no classifier: a set changes nothing."""
        width, height = located.size
        placed = layout(self.rows, aspect=width / height)
        if not placed or self.confidence < conf:
            return Detections.empty((width, height))
        scale = np.array([width, height, width, height], np.float32)
        found = Detections(
            np.array([p.box for p in placed], np.float32) * scale,
            np.array([p.class_id for p in placed], np.int64),
            np.full(len(placed), self.confidence, np.float32),
            (width, height),
        )
        if not self.alternatives:
            return found
        others = np.zeros((len(placed), 1), np.int64)
        other_confidences = np.zeros((len(placed), 1), np.float32)  # 0: never taken
        for index, (name, confidence) in self.alternatives.items():
            others[index, 0], other_confidences[index, 0] = CLASS_IDS[name], confidence
        return replace(found, alternatives=others, alternative_confidences=other_confidences)


def fake_photo(
    size: tuple[int, int] = (1200, 900), rows: Sequence[Sequence[str]] = DEFAULT_ROWS, *, fmt: str = "JPEG"
) -> bytes:
    """A photo-like image of the fake hand: white tiles named in black on a green table."""
    from PIL import Image, ImageDraw, ImageFont

    from vision.detections import DETECTOR_CLASSES

    width, height = size
    image = Image.new("RGB", size, (34, 110, 70))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=max(10, int(width * TILE_W * 0.4)))
    for tile in layout(rows, aspect=width / height):
        x1, y1, x2, y2 = (
            tile.box[0] * width,
            tile.box[1] * height,
            tile.box[2] * width,
            tile.box[3] * height,
        )
        face = (40, 90, 160) if tile.class_id == BACK else (245, 243, 232)
        draw.rounded_rectangle(
            (x1, y1, x2, y2), radius=int((x2 - x1) * 0.12), fill=face, outline=(90, 90, 80)
        )
        if tile.class_id != BACK:
            name = DETECTOR_CLASSES[tile.class_id]
            draw.text(
                ((x1 + x2) / 2, (y1 + y2) / 2), name[1] + name[0], fill=(20, 20, 20), font=font, anchor="mm"
            )
    out = io.BytesIO()
    image.save(out, format=fmt, quality=90)
    return out.getvalue()


def create_fake_app(settings: Settings | None = None) -> FastAPI:
    """The real app with ``FakeDetector`` as its model (``uvicorn --factory api.fakes:create_fake_app``)."""
    from api.app import create_app

    return create_app(settings, load_detector=lambda _settings: FakeDetector())
