"""Where the localiser looks: the geometry of the looks a photo is read in, chosen by its tiles.

Every photo is first looked at whole at the same size (``close_up_side``), so the same scene stored at any
size shows the localiser the same first look; what follows depends on the size its tiles come out at
there, never on the photo's pixel count. Legible tiles are read from that look (a close-up). Small ones (a
phone photo of the whole table: the hand may fill a third of it or less) are looked at again in the region
around them, at the scale the localiser was trained at (cut into overlapping windows when that region is
still too large). These functions are that geometry, free of any model, so they can be tested exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import cv2
import numpy as np

STRIDE = 32  # the localiser's input sides are multiples of its largest stride
# A close-up is looked at whole with its long side at this many times the localiser's input size (448 px
# for the shipped 384; a model of any input shape). The localiser trains on 384 px windows, but a 640 px
# photo seen at 448 (its tiles 0.7 of their size, within the windows' scales) reads better than at 384, on
# the real photos and the bundled ones alike (models/HISTORY.md, "The reader's constants"). Every photo's
# first look is at this size: it decides the route by the tiles it shows.
CLOSE_UP_GAIN = 448 / 384
# A close-up that reads as no winning hand is looked at again (``SecondLook``) with its long side at this
# many localiser inputs (512 px for 384), its tiles 0.8 of their size in a 640 px photo: the localiser
# finds and bounds some rows differently there, and reads more synthetic hands than at 384 px (576 px: as
# many as 512; models/HISTORY.md, "The reader's constants").
ENLARGED_GAIN = 512 / 384
TILE_PX = 36.0  # a tile's short side in the localiser's input, about as in training
SMALL_TILE_PX = 20.0  # tiles measuring less than this in the first look are looked at again, closer
# tiles measuring less than this in the first look show a view of the whole table: other players' rows may
# face the camera upside down (their tiles read both ways up), the rows may run slantwise (the photo is
# read turned level), boxes of packed discards overlap (``LARGE_PHOTO_IOU``). The threshold lies between
# what the first look measures on 12 MP photos of a table and on 640x480 close-ups (models/HISTORY.md)
FAR_TILE_PX = 13.5
MAX_UPSCALE = 2.0  # a closer look never enlarges the photo more than this
# A first look whose confident tiles measure more than this (a short side in the localiser's input) sees them
# larger than it trained on (frame-filling close-ups of a few big tiles): its boxes may span several tiles.
# The photo is looked at again reduced so they measure ``TILE_PX`` (``farther_look``), never below
# ``MIN_LOOK_SIDE`` input pixels on its long side.
LARGE_TILE_PX = 1.75 * TILE_PX
MIN_LOOK_SIDE = 160
# The first look at a 12 MP photo sees its tiles 6-15 px wide, and its boxes come out 1.1-4 times too large
# (a median 1.3 on packed standing rows): a closer look sized by them sees its tiles at 14-30 px, not
# TILE_PX, where the localiser draws boxes a fifth to a half too wide, shifted along the row. So the
# closer look's own boxes measure the tiles again and, when they put them more than ``SIZE_SLACK`` off
# TILE_PX, the region is looked at once more at the scale they give (``REFINES`` times at most).
SIZE_SLACK = 1.1  # a closer look whose tiles measure within this factor of TILE_PX is kept
REFINES = 2
CONFIDENT = 0.3  # boxes that count when measuring tiles, placing the region and finding the rows' direction
PAD_GREY = 114  # what the localiser sees where the photo is not: letterbox padding, corners a turn brings in
MIN_TILES = 4  # fewer confident boxes than this: no tiles legible at that scale
# A first look that shows no tile (fewer than MIN_TILES) is followed by the whole photo at these long
# sides (those it has the pixels for), in turn, while each shows more tiles and until one shows
# HAND_TILES: a hand too small to see at the first look. A photo smaller than the first side has no finer
# look to give: it is never searched (searched at its own size, a table of keyboards shows more false
# boxes; models/HISTORY.md)
SEARCH_SIDES = (1024, 2048)
HAND_TILES = 10
MAX_LOOK_SIDE = 1024  # a look larger than this (input pixels) is cut into windows
SEARCH_OVERLAP = 96  # input pixels shared by neighbouring windows of a search: a few tiles at that scale


class SecondLook(Enum):
    """How a close-up that reads as no winning hand is looked at again."""

    TURNED = "turned"  # turned level, when its rows run slantwise (``vision.detect.deskew``)
    ENLARGED = "enlarged"  # whole and larger: its long side ``ENLARGED_GAIN`` localiser inputs


@dataclass(frozen=True)
class Look:
    """One run of the localiser: ``region`` (x1, y1, x2, y2 in photo pixels) resized by ``scale``."""

    region: tuple[int, int, int, int]
    scale: float

    @property
    def input_size(self) -> tuple[int, int]:
        """(width, height) of the resized region, before padding to the stride."""
        x1, y1, x2, y2 = self.region
        return max(1, round((x2 - x1) * self.scale)), max(1, round((y2 - y1) * self.scale))


def round_up(value: float, step: int = STRIDE) -> int:
    return max(step, math.ceil(value / step) * step)


def close_up_side(imgsz: int, *, enlarged: bool = False) -> int:
    """The long side of the look at a close-up, for a localiser of input size ``imgsz``: 448 px for 384,
    and 512 px ``enlarged``."""
    return round_up(imgsz * (ENLARGED_GAIN if enlarged else CLOSE_UP_GAIN))


def whole_photo(width: int, height: int, side: int) -> Look:
    """The whole photo with its long side resized to ``side``."""
    return Look((0, 0, width, height), side / max(width, height))


def typical_tile(boxes: np.ndarray, scores: np.ndarray) -> float | None:
    """The median short side of the confident boxes, in photo pixels; None when there are fewer than
    ``MIN_TILES`` (a stray box or two says nothing of where the hand is)."""
    confident = boxes[scores >= CONFIDENT]
    if len(confident) < MIN_TILES:
        return None
    sides = np.minimum(confident[:, 2] - confident[:, 0], confident[:, 3] - confident[:, 1])
    return float(np.median(sides))


def large_tile(boxes: np.ndarray, scores: np.ndarray, scale: float) -> float | None:
    """The median short side (photo pixels) of the confident boxes when, at a look of ``scale``, it comes
    out above ``LARGE_TILE_PX``; None otherwise. One confident box is enough: a close-up may hold two."""
    confident = boxes[scores >= CONFIDENT]
    if len(confident) == 0:
        return None
    tile = float(np.median(np.minimum(confident[:, 2] - confident[:, 0], confident[:, 3] - confident[:, 1])))
    return tile if tile * scale > LARGE_TILE_PX else None


def farther_look(width: int, height: int, tile: float) -> Look:
    """The whole photo reduced so that tiles of ``tile`` photo pixels measure ``TILE_PX``, its long side at
    least ``MIN_LOOK_SIDE`` input pixels."""
    scale = max(TILE_PX / tile, MIN_LOOK_SIDE / max(width, height))
    return Look((0, 0, width, height), scale)


def confident_count(scores: np.ndarray) -> int:
    return int(np.count_nonzero(scores >= CONFIDENT))


def region_around(
    boxes: np.ndarray, scores: np.ndarray, tile: float, width: int, height: int
) -> tuple[int, int, int, int]:
    """The confident boxes' extent widened by two tiles on every side, inside the photo."""
    confident = boxes[scores >= CONFIDENT]
    margin = 2 * tile
    x1, y1 = confident[:, :2].min(axis=0) - margin
    x2, y2 = confident[:, 2:].max(axis=0) + margin
    return (
        int(max(0, math.floor(x1))),
        int(max(0, math.floor(y1))),
        int(min(width, math.ceil(x2))),
        int(min(height, math.ceil(y2))),
    )


def closer_looks(
    region: tuple[int, int, int, int], tile: float, max_side: int, overlap: float | None = None
) -> list[Look]:
    """Looks at ``region`` where its tiles are ``TILE_PX`` tall, each at most ``max_side`` input pixels.

    Neighbouring windows overlap by ``overlap`` photo pixels (default: two tiles), so every tile is
    whole in at least one of them.
    """
    scale = min(TILE_PX / tile, MAX_UPSCALE)
    return windows(region, scale, max_side, 2 * tile if overlap is None else overlap)


def refined_tile(tile: float, measured: float | None, scale: float) -> float | None:
    """The tile size (photo pixels) to look again at, after a closer look at ``scale`` that was sized
    for ``tile`` measured tiles of ``measured``; None when that look stands: its tiles within ``SIZE_SLACK``
    of ``TILE_PX``, nothing measured, or the look already as close as ``MAX_UPSCALE`` allows."""
    if measured is None:
        return None
    seen = measured * scale
    if TILE_PX / SIZE_SLACK <= seen <= TILE_PX * SIZE_SLACK:
        return None
    if seen > TILE_PX and scale >= MAX_UPSCALE - 1e-9:
        return None
    if measured < tile and min(TILE_PX / measured, MAX_UPSCALE) <= scale + 1e-9:
        return None  # a smaller tile asks for a closer look than the cap allows: the look stands
    return measured


def search_looks(width: int, height: int, side: int, max_side: int) -> list[Look]:
    """The whole photo with its long side at ``side`` input pixels, in windows of at most ``max_side``
    overlapping by ``SEARCH_OVERLAP`` input pixels."""
    scale = side / max(width, height)
    return windows((0, 0, width, height), scale, max_side, SEARCH_OVERLAP / scale)


def windows(region: tuple[int, int, int, int], scale: float, max_side: int, overlap: float) -> list[Look]:
    """``region`` resized by ``scale``, cut into looks of at most ``max_side`` input pixels a side whose
    neighbours share ``overlap`` photo pixels."""
    x1, y1, x2, y2 = region
    window = max_side / scale  # photo pixels one look can take in
    looks = []
    for top, bottom in _spans(y1, y2, window, overlap):
        for left, right in _spans(x1, x2, window, overlap):
            looks.append(Look((left, top, right, bottom), scale))
    return looks


def _spans(start: int, stop: int, window: float, overlap: float) -> list[tuple[int, int]]:
    length = stop - start
    if length <= window:
        return [(start, stop)]
    step = max(window - overlap, 1.0)
    count = math.ceil((length - window) / step) + 1
    step = (length - window) / (count - 1)
    size = math.ceil(window)
    spans = []
    for i in range(count):
        left = round(start + i * step)
        spans.append((left, min(stop, left + size)))
    return spans


def inside(boxes: np.ndarray, region: tuple[int, int, int, int]) -> np.ndarray:
    """True for boxes whose centre lies in ``region``."""
    x1, y1, x2, y2 = region
    cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    return (cx >= x1) & (cx < x2) & (cy >= y1) & (cy < y2)


def cut_at_seam(boxes: np.ndarray, look: Look, width: int, height: int, tolerance: float = 2.0) -> np.ndarray:
    """True for boxes touching an edge of the look that is inside the photo: a tile cut by a seam.

    The overlapping neighbour look holds that tile whole.
    """
    x1, y1, x2, y2 = look.region
    cut = np.zeros(len(boxes), bool)
    if x1 > 0:
        cut |= boxes[:, 0] <= x1 + tolerance
    if y1 > 0:
        cut |= boxes[:, 1] <= y1 + tolerance
    if x2 < width:
        cut |= boxes[:, 2] >= x2 - tolerance
    if y2 < height:
        cut |= boxes[:, 3] >= y2 - tolerance
    return cut


def merge(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray, iou: float) -> np.ndarray:
    """Indices kept by class-aware NMS (OpenCV's): one box per tile across looks and windows."""
    if len(boxes) == 0:
        return np.zeros(0, np.int64)
    xywh = np.concatenate([boxes[:, :2], boxes[:, 2:] - boxes[:, :2]], axis=1)
    keep = cv2.dnn.NMSBoxesBatched(xywh.tolist(), scores.tolist(), classes.tolist(), 0.0, iou)
    return np.sort(np.asarray(keep, np.int64).reshape(-1))
