"""Labels from the id buffer: the tight visible box of every tile, its class, and what it belongs to.

A face-up tile is boxed by what shows of its face, as the real photos' labels box a tile's printed face; a
face-down tile by all of it that shows (its back, and its top or side where seen)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from datasets.synth.camera import Camera
from datasets.synth.layout import Placed
from datasets.synth.tile_body import Body, Canvas
from scoring.tiles import CLASS_NAMES
from vision.detections import BACK, HONOUR

MIN_VISIBLE = 0.25  # share of a tile's silhouette (face up: and of its face) that must show to be labelled


@dataclass(frozen=True)
class SceneBox:
    """One labelled tile. ``tile`` is what the tile is (``m1``.., an honour key), even when face down."""

    class_id: int
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in pixels: the visible face (face down: tile)
    role: str  # hand | meld | discard | opponent | wall | stray
    group: int  # meld index for role 'meld', else -1
    tile: str
    win: bool
    face: tuple[tuple[float, float], ...] | None  # face corners in the image (TL, TR, BR, BL) when face up
    visible: float  # visible pixels / full silhouette area
    face_visible: float  # visible face pixels / face area (0 when face down)
    outline: tuple[float, float, float, float]  # all of the tile that shows (face down: ``box``)

    def to_json(self) -> dict[str, object]:
        return {
            "cls": self.class_id,
            "box": [round(v, 1) for v in self.box],
            "role": self.role,
            "group": self.group,
            "tile": self.tile,
            "win": self.win,
            "outline": [round(v, 1) for v in self.outline],
        }


def label_tiles(
    canvas: Canvas, camera: Camera, tiles: list[Placed], bodies: list[Body]
) -> list[SceneBox | None]:
    boxes: list[SceneBox | None] = []
    for i, (tile, body) in enumerate(zip(tiles, bodies, strict=True)):
        boxes.append(_label(canvas, camera, i, tile, body))
    return boxes


def _label(canvas: Canvas, camera: Camera, i: int, tile: Placed, body: Body) -> SceneBox | None:
    corners = body.corners()
    if np.min(camera.to_camera(corners)[:, 2]) < 5.0:
        return None
    points = camera.project(corners)
    x0 = max(0, int(np.floor(points[:, 0].min())) - 1)
    y0 = max(0, int(np.floor(points[:, 1].min())) - 1)
    x1 = min(canvas.width, int(np.ceil(points[:, 0].max())) + 2)
    y1 = min(canvas.height, int(np.ceil(points[:, 1].max())) + 2)
    if x1 <= x0 or y1 <= y0:
        return None
    ids = canvas.ids[y0:y1, x0:x1]
    mine = (ids == 2 * i + 1) | (ids == 2 * i + 2)
    outline = _bounds(mine, x0, y0)
    if outline is None:
        return None
    hull = cv2.convexHull(points.astype(np.float32))
    silhouette = max(float(cv2.contourArea(hull)), 1.0)
    visible = float(np.count_nonzero(mine)) / silhouette
    c = body.axes[2]
    face_up = camera.sees_front(body.point(body.size[0] / 2, body.size[1] / 2, 0), -c) > 0.05
    face = None
    face_visible = 0.0
    box = outline
    if face_up:
        quad = camera.project(body.front_corners())
        face = tuple((round(float(x), 2), round(float(y), 2)) for x, y in quad)
        face_area = max(float(cv2.contourArea(quad.astype(np.float32))), 1.0)
        front = ids == 2 * i + 2
        face_visible = min(1.0, float(np.count_nonzero(front)) / face_area)
        box = _bounds(front, x0, y0) or outline
    name = tile.key if isinstance(tile.key, str) else CLASS_NAMES[tile.key]
    if not face_up:
        class_id = BACK
    elif isinstance(tile.key, str):
        class_id = HONOUR
    else:
        class_id = int(tile.key)
    return SceneBox(
        class_id,
        box,
        tile.role,
        tile.group,
        name,
        tile.win,
        face,
        round(visible, 3),
        round(face_visible, 3),
        outline,
    )


def _bounds(mask: np.ndarray, x0: int, y0: int) -> tuple[float, float, float, float] | None:
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero(mask.any(axis=0))
    return (float(x0 + cols[0]), float(y0 + rows[0]), float(x0 + cols[-1] + 1), float(y0 + rows[-1] + 1))


def is_labelled(box: SceneBox) -> bool:
    """Label a tile when enough of it (face up: of its face) shows; slivers (mostly hidden or cut off) become
    ``ignored``."""
    x1, y1, x2, y2 = box.box
    face_shows = box.face is None or box.face_visible >= MIN_VISIBLE
    return box.visible >= MIN_VISIBLE and face_shows and x2 - x1 >= 3 and y2 - y1 >= 3
