"""Turning a photo whose rows of tiles run slantwise so that they run level, and boxes back.

The localiser draws boxes square to the photo. A row of tiles at 45 degrees gets boxes that each take in
half of both neighbours: neighbours' boxes overlap as much as a tile's box and a second box on it, so
non-maximum suppression keeps doubles or drops tiles, and the classifier reads crops full of the next
tiles. On the synthetic scenes, hands whose row runs 35-90 degrees from level read exactly in 0.51-0.65 of
the scenes, level ones in 0.85. So when the first look at a photo of the whole table (not a close-up)
finds a row that steep, the reading stage (``vision.reading.first_view``) has the detector look at the
photo turned until that row runs level (``Turn``), at the same scale, read the tiles there, and map their
boxes back to the photo as the boxes square to it that hold them (as a label of a turned tile is drawn):
the 12 MP synthetic hands read 52 of 57 against 47. A close-up is turned only when it reads as no win as
it is (``vision.reading``), and then looked at as a photo of the turned size: turning every slantwise
close-up read 14 more of the 289 640x480 synthetic hands, but the real 640 px photos of a hand, turned
copies the localiser trained on, worse (17 of 18 and 12 of 17 against 16 and 14); turned only when they
read as no win, 8 more synthetic hands and the real ones as before.

Geometry only (no model), so it can be tested exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.detect.looks import CONFIDENT, PAD_GREY
from vision.geometry.rows import RowCache

STEEP = 30.0  # degrees from level: a row this steep is looked at turned level
LONG_ROW = 4  # tiles: a row this long says which way the photo's rows run


@dataclass(frozen=True)
class Turn:
    """The photo turned by ``degrees`` (counter-clockwise as seen) about its centre, onto a canvas of
    ``size`` (width, height) that holds all of it. ``matrix`` maps photo pixels to the canvas."""

    degrees: float
    matrix: np.ndarray  # (2, 3)
    size: tuple[int, int]
    photo_size: tuple[int, int]

    def pixels(self, pixels: np.ndarray) -> np.ndarray:
        """The photo's pixels turned."""
        grey = (PAD_GREY,) * 3
        return cv2.warpAffine(pixels, self.matrix, self.size, flags=cv2.INTER_LINEAR, borderValue=grey)

    def boxes_back(self, boxes: np.ndarray) -> np.ndarray:
        """Boxes (N x 4, xyxy) on the turned canvas as the boxes square to the photo that hold them,
        inside the photo."""
        boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
        if not len(boxes):
            return np.zeros((0, 4), np.float32)
        back = cv2.invertAffineTransform(self.matrix)
        corners = boxes[:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(-1, 4, 2)  # each box's four corners
        mapped = corners @ back[:, :2].T + back[:, 2]
        width, height = self.photo_size
        low = np.clip(mapped.min(axis=1), 0, [width, height])
        high = np.clip(mapped.max(axis=1), 0, [width, height])
        return np.concatenate([low, high], axis=1).astype(np.float32)


def row_degrees(boxes: np.ndarray, scores: np.ndarray, rows: RowCache | None = None) -> float | None:
    """Which way the hand's row of confident boxes runs, in degrees from level in (-90, 90] (positive:
    down to the right, as image rows go); None when no row has ``LONG_ROW`` tiles.

    The hand's row is the one whose boxes cover the most of the photo (its tiles times their median
    area): the player's tiles lie nearest the camera, so they are both many and the largest. A far wall
    or a chain of discards can hold more tiles, or a longer run of touching ones, but smaller. On the 12
    MP scenes (seeds 4000, 4300, 5100, 5200; 120 photos) the longest run of touching tiles chose a row
    that turned the photo wrong in 3 photos with a localiser that finds far walls in pieces, and in 10 with
    one that finds them whole; this, in 1 and 2."""
    confident = np.asarray(boxes, np.float64).reshape(-1, 4)[np.asarray(scores) >= CONFIDENT]
    found = (rows or RowCache()).find(confident)
    long = [row for row in found if len(row.members) >= LONG_ROW]
    if not long:
        return None
    sides = confident[:, 2:] - confident[:, :2]
    area = sides[:, 0] * sides[:, 1]
    hand = max(long, key=lambda row: len(row.members) * float(np.median(area[list(row.members)])))
    members = confident[list(hand.members)]
    centres = (members[:, :2] + members[:, 2:]) / 2
    centres -= centres.mean(axis=0)
    direction = np.linalg.svd(centres, full_matrices=False)[2][0]  # the line the centres lie along
    degrees = math.degrees(math.atan2(direction[1], direction[0]))
    return degrees - 180.0 if degrees > 90.0 else degrees + 180.0 if degrees <= -90.0 else degrees


def turn_level(
    boxes: np.ndarray, scores: np.ndarray, width: int, height: int, rows: RowCache | None = None
) -> Turn | None:
    """The turn that lays the photo's rows level when they run ``STEEP`` degrees or more from it (a
    quarter turn or less either way), else None. ``rows``: where rows found before are taken from."""
    degrees = row_degrees(boxes, scores, rows)
    if degrees is None or abs(degrees) < STEEP:
        return None
    return turned(width, height, degrees)


def turned(width: int, height: int, degrees: float) -> Turn:
    """The photo turned counter-clockwise (as seen) by ``degrees`` about its centre, on a canvas that
    holds all of it."""
    matrix = cv2.getRotationMatrix2D((width / 2, height / 2), degrees, 1.0)
    cos, sin = abs(matrix[0, 0]), abs(matrix[0, 1])
    size = (math.ceil(width * cos + height * sin), math.ceil(width * sin + height * cos))
    matrix[:, 2] += (size[0] / 2 - width / 2, size[1] / 2 - height / 2)
    return Turn(degrees, matrix, size, (width, height))
