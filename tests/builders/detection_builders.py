"""Builders for grouper tests: lay tiles out as a photo would show them, then make ``Detections``.

A tile is a ``PlacedTile``: a detector class and the four corners of its outline. Layouts are built
flat (rows left to right, y down, in pixels), then moved as a camera would: ``perspective`` (tiles
shrink along a direction and rows converge), ``rotate`` (the whole photo), ``jitter`` (detector noise).
``make_detections`` takes each outline's axis-aligned bounding box, as a detector reports it.

Layout text: groups separated by spaces, each group tiles in the usual notation plus ``B`` for a
face-down tile and ``H`` for an honour tile: ``"123m456p 5p"``, ``"B55sB 777m"``.

>>> dets = make_detections(lay_row("123m456m789m1155p 5p", gap=1.0))
>>> len(dets)
14
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from scoring.tiles import parse_tile, parse_tiles
from vision.detections import BACK, CLASS_IDS, HONOUR, Detections

TILE_W = 40.0  # pixels, a standing tile seen from the front
TILE_H = 54.0


@dataclass(frozen=True)
class PlacedTile:
    class_id: int
    corners: np.ndarray  # (4, 2) outline in pixels
    confidence: float = 0.9

    @property
    def centre(self) -> np.ndarray:
        return np.asarray(self.corners.mean(axis=0))

    @property
    def box(self) -> tuple[float, float, float, float]:
        low, high = self.corners.min(axis=0), self.corners.max(axis=0)
        return (float(low[0]), float(low[1]), float(high[0]), float(high[1]))


def parse_group(text: str) -> list[int]:
    """``"B55pB"`` -> [back, 5p, 5p, back] as detector class ids."""
    classes: list[int] = []
    pending = ""
    for char in text:
        if char in "BH":
            if pending:
                raise ValueError(f"digits {pending!r} before {char!r} have no suit in {text!r}")
            classes.append(BACK if char == "B" else HONOUR)
        elif char.isdigit():
            pending += char
        else:
            classes.extend(parse_tiles(pending + char))
            pending = ""
    if pending:
        raise ValueError(f"digits at the end of {text!r} have no suit")
    return classes


def parse_layout(text: str) -> list[list[int]]:
    """Groups of detector class ids, one per space-separated group."""
    return [parse_group(group) for group in text.split()]


def lay_row(
    text: str,
    *,
    origin: tuple[float, float] = (0.0, 0.0),
    tile: tuple[float, float] = (TILE_W, TILE_H),
    gap: float | Sequence[float] = 1.0,
    inner_gaps: float | Sequence[float] = 0.0,
    sideways: Collection[int] = (),
    confidence: float | Sequence[float] = 0.9,
) -> list[PlacedTile]:
    """Tiles left to right from ``origin`` (top left of the first), standing on one line.

    ``gap`` (tile widths) separates the groups of ``text`` (one value, or one per group boundary);
    ``inner_gaps`` is the space after each tile inside a group (one value, or one per tile of the row).
    Tiles whose position in the row is in ``sideways`` are turned 90 degrees (as in a meld).
    """
    width, height = tile
    groups = parse_layout(text)
    count = sum(len(group) for group in groups)
    gaps = _per(gap, max(len(groups) - 1, 0), "gap")
    inner = _per(inner_gaps, count, "inner_gaps")
    confidences = _per(confidence, count, "confidence")
    tiles: list[PlacedTile] = []
    x, y = origin
    for g, group in enumerate(groups):
        for class_id in group:
            position = len(tiles)
            w, h = (height, width) if position in sideways else (width, height)
            corners = np.array(
                [[x, y + height - h], [x + w, y + height - h], [x + w, y + height], [x, y + height]]
            )
            tiles.append(PlacedTile(class_id, corners, confidences[position]))
            x += w + inner[position] * width
        if g < len(gaps):
            x += gaps[g] * width
    return tiles


def _per(value: float | Sequence[float], count: int, name: str) -> list[float]:
    if isinstance(value, int | float):
        return [float(value)] * count
    values = [float(v) for v in value]
    if len(values) < count:
        raise ValueError(f"{name}: expected {count} values, got {len(values)}")
    return values


def lay_hand(
    concealed: str,
    win: str | None = None,
    melds: Sequence[str] = (),
    *,
    melds_at: str = "below",
    win_gap: float = 1.0,
    meld_gap: float | Sequence[float] = 1.0,
    row_gap: float = 0.5,
    inner_gaps: float | Sequence[float] = 0.0,
    tile: tuple[float, float] = (TILE_W, TILE_H),
    meld_tile: tuple[float, float] | None = None,
    sideways: Collection[int] = (),
) -> list[PlacedTile]:
    """A player's hand: the concealed tiles standing in a row, ``win`` (a tile, e.g. ``"5p"``) set
    ``win_gap`` tile widths apart at its right end (appended to the row when ``win_gap`` is 0), and
    ``melds`` (layout groups such as ``"555p"``, ``"B66sB"``) ``meld_gap`` apart (one value, or one per pair),
    ``melds_at`` "below" / "above" the hand (``row_gap`` tile heights between the rows), or on the same
    line "right" of the winning tile or "left" of the hand. Meld tiles may have a size of their own
    (``meld_tile``: lying flat) and be turned (``sideways``: positions among the meld tiles).
    """
    hand = concealed.replace(" ", "")
    if win is not None:
        hand = f"{hand} {win}" if win_gap > 0 else hand + win
    row = lay_row(hand, gap=win_gap, inner_gaps=inner_gaps, tile=tile)
    if not melds:
        return row
    meld_row = lay_row(" ".join(melds), gap=meld_gap, tile=meld_tile or tile, sideways=sideways)
    low = np.concatenate([t.corners for t in meld_row]).min(axis=0)
    high = np.concatenate([t.corners for t in meld_row]).max(axis=0)
    row_low = np.concatenate([t.corners for t in row]).min(axis=0)
    row_high = np.concatenate([t.corners for t in row]).max(axis=0)
    if melds_at == "below":
        shift = (0.0, row_high[1] + row_gap * tile[1] - low[1])
    elif melds_at == "above":
        shift = (0.0, row_low[1] - row_gap * tile[1] - high[1])
    elif melds_at == "right":
        shift = (row_high[0] + meld_gap * tile[0] - low[0], row_high[1] - high[1])
    elif melds_at == "left":
        shift = (row_low[0] - meld_gap * tile[0] - high[0], row_high[1] - high[1])
    else:
        raise ValueError(f"melds_at: expected below, above, right or left, got {melds_at!r}")
    return row + [replace(t, corners=t.corners + shift) for t in meld_row]


def lay_after(
    tiles: Sequence[PlacedTile], text: str, *, gap: float, rise: float = 0.0, **row: Any
) -> list[PlacedTile]:
    """``tiles`` and, after them, the tiles of ``text`` (a ``lay_row`` layout) laid ``gap`` tile widths
    past the last tile's right edge and ``rise`` tile heights higher (a stray tile, a back touching the
    hand's end)."""
    last = tiles[-1].corners
    origin = (float(last[:, 0].max()) + gap * TILE_W, float(last[:, 1].min()) - rise * TILE_H)
    return [*tiles, *lay_row(text, origin=origin, **row)]


def transform(tiles: Iterable[PlacedTile], matrix: np.ndarray) -> list[PlacedTile]:
    """Apply a 3x3 homography to every outline."""
    result = []
    for tile in tiles:
        points = np.c_[tile.corners, np.ones(4)] @ np.asarray(matrix, dtype=np.float64).T
        result.append(replace(tile, corners=points[:, :2] / points[:, 2:]))
    return result


def centroid(tiles: Sequence[PlacedTile]) -> np.ndarray:
    return np.asarray(np.mean([t.centre for t in tiles], axis=0))


def rotate(
    tiles: Sequence[PlacedTile], degrees: float, about: Sequence[float] | None = None
) -> list[PlacedTile]:
    """Turn the whole photo by ``degrees`` (clockwise on screen, y pointing down) about ``about``."""
    cx, cy = centroid(tiles) if about is None else about
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    move = np.array([[1, 0, cx], [0, 1, cy], [0, 0, 1]]) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    return transform(tiles, move @ np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]]))


def perspective(
    tiles: Sequence[PlacedTile], shrink: float, direction: tuple[float, float] = (1.0, 0.0)
) -> list[PlacedTile]:
    """Tile widths shrink by ``shrink`` (0.3: 30%) from one end of the layout to the other along
    ``direction``, and lines along it converge, as when that end is further from the camera."""
    if shrink <= 0:
        return list(tiles)
    a = np.asarray(direction, dtype=np.float64) / math.hypot(*direction)
    cx, cy = centroid(tiles)
    points = np.concatenate([t.corners for t in tiles]) - (cx, cy)
    start, length = float((points @ a).min()), float(np.ptp(points @ a)) or 1.0
    # x' = x / w with w = 1 + p * (along - start): widths along the direction scale by 1 / w**2.
    p = (1 / math.sqrt(1 - shrink) - 1) / length
    matrix = np.array([[1, 0, 0], [0, 1, 0], [p * a[0], p * a[1], 1 - p * start]])
    centre = np.array([[1, 0, cx], [0, 1, cy], [0, 0, 1]])
    return transform(tiles, centre @ matrix @ np.linalg.inv(centre))


def jitter(tiles: Sequence[PlacedTile], amount: float, seed: int = 0) -> list[PlacedTile]:
    """Move each corner by up to ``amount`` of the tile's size, as a detector's boxes wobble."""
    rng = np.random.default_rng(seed)
    result = []
    for tile in tiles:
        size = float(np.ptp(tile.corners, axis=0).min())
        result.append(replace(tile, corners=tile.corners + rng.uniform(-amount, amount, (4, 2)) * size))
    return result


def make_detections(
    tiles: Iterable[PlacedTile | tuple[Sequence[float], str | int, float]],
    image_size: tuple[int, int] | None = None,
    *,
    shuffle_seed: int | None = None,
) -> Detections:
    """Detections of ``tiles`` (``PlacedTile`` or ``(box, class name or id, confidence)``), moved into
    the image (positive coordinates), optionally shuffled as a detector's output order is arbitrary."""
    boxes: list[Sequence[float]] = []
    classes: list[int] = []
    confidences: list[float] = []
    for item in tiles:
        if isinstance(item, PlacedTile):
            boxes.append(item.box)
            classes.append(item.class_id)
            confidences.append(item.confidence)
        else:
            box, name, conf = item
            boxes.append(tuple(float(v) for v in box))
            if isinstance(name, str):
                classes.append(CLASS_IDS[name] if name in CLASS_IDS else parse_tile(name))
            else:
                classes.append(int(name))
            confidences.append(float(conf))
    array = np.array(boxes, dtype=np.float64).reshape(-1, 4)
    if len(array) and array.min() < 0:
        array -= np.tile(array[:, :2].min(axis=0) - 20, 2)
    if image_size is None:
        high = array[:, 2:].max(axis=0) if len(array) else np.zeros(2)
        image_size = (int(high[0]) + 20, int(high[1]) + 20)
    order = np.arange(len(array))
    if shuffle_seed is not None:
        order = np.random.default_rng(shuffle_seed).permutation(len(array))
    return Detections(
        array[order].astype(np.float32),
        np.array(classes, dtype=np.int64)[order],
        np.array(confidences, dtype=np.float32)[order],
        image_size,
    )


def names(detections: Detections, indices: Iterable[int]) -> list[str]:
    return [detections.names[i] for i in indices]
