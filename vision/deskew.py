"""Turning a photo whose rows of tiles run slantwise so that they run level, and boxes back.

The localiser draws boxes square to the photo. A row of tiles at 45 degrees gets boxes that each take in
half of both neighbours: neighbours' boxes overlap as much as a tile's box and a second box on it, so
non-maximum suppression keeps doubles or drops tiles, and the classifier reads crops full of the next
tiles. On the synthetic scenes, hands whose row runs 35-90 degrees from level read exactly in 0.51-0.65
of the scenes, level ones in 0.85. So when the first look at a large photo (not a close-up) finds a row
that steep, the detector looks at the photo turned until that row runs level (``Turn``), at the same
scale, reads the tiles there, and maps their boxes back to the photo as the boxes square to it that hold
the tiles they bound (``BACK_ROUNDNESS``): the 12 MP synthetic hands read 52 of 57 against 47.
A close-up is turned only when it reads as no win as it is (``vision.pipeline``), and then looked at
as a photo of the turned size: turning every slantwise close-up read 14 more of the 289 640x480
synthetic hands, but the real 640 px photos of a hand, turned copies the localiser trained on, worse
(17 of 18 and 12 of 17 against 16 and 14); turned only when they read as no win, 8 more synthetic hands
and the real ones as before.

Geometry only (no model), so it can be tested exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.looks import CONFIDENT, PAD_GREY
from vision.rows import find_rows

STEEP = 30.0  # degrees from level: a row this steep is looked at turned level
LONG_ROW = 4  # tiles: a row this long says which way the photo's rows run
# A box found on the turned canvas bounds a tile whose outline there is not the box: a standing tile's face
# seen from above is sheared and its corners are rounded, so it meets the box's sides short of the box's
# corners. The box square to the photo that holds the box's corners is then too large (on the 12 MP packed
# rows, turned 30-60 degrees, by 10% of the face on every side). So a box comes back as the one holding the
# rounded rectangle |x/a|^p + |y/b|^p <= 1 inscribed in it, p this exponent (infinity: the box's corners,
# 2: an ellipse); how round is measured, not derived. Chosen on packed 12 MP scenes of seed 5300 (hand-row
# tiles with a box of IoU >= 0.7: 0.657 for the box's corners, 0.833-0.843 for p 2.7-4.3, 0.820 for 2.25);
# on the benchmark's scenes of seeds 5100 and 5200, 0.782 and 0.696 became 0.913 and 0.916.
BACK_ROUNDNESS = 3.0


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
        """Boxes (N x 4, xyxy) on the turned canvas as the boxes square to the photo that hold the tiles
        they bound (see ``BACK_ROUNDNESS``), inside the photo."""
        boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
        if not len(boxes):
            return np.zeros((0, 4), np.float32)
        back = cv2.invertAffineTransform(self.matrix)
        centres = ((boxes[:, :2] + boxes[:, 2:]) / 2) @ back[:, :2].T + back[:, 2]
        half = (boxes[:, 2:] - boxes[:, :2]) / 2  # (a, b): the half sides on the canvas
        # the support of |x/a|^p + |y/b|^p <= 1 along each photo axis (u, v in canvas terms):
        # (|a u|^q + |b v|^q)^(1/q), q the dual exponent of p
        q = BACK_ROUNDNESS / (BACK_ROUNDNESS - 1)
        reach = (np.abs(half[:, None, :] * back[None, :, :2]) ** q).sum(axis=2) ** (1 / q)
        width, height = self.photo_size
        low = np.clip(centres - reach, 0, [width, height])
        high = np.clip(centres + reach, 0, [width, height])
        return np.concatenate([low, high], axis=1).astype(np.float32)


def row_degrees(boxes: np.ndarray, scores: np.ndarray) -> float | None:
    """Which way the hand's row of confident boxes runs, in degrees from level in (-90, 90] (positive:
    down to the right, as image rows go); None when no row has ``LONG_ROW`` tiles.

    The hand's row is the one whose boxes cover the most of the photo (its tiles times their median
    area): the player's tiles lie nearest the camera, so they are both many and the largest. A far wall
    or a chain of discards can hold more tiles, or a longer run of touching ones, but smaller. On the 12
    MP scenes (seeds 4000, 4300, 5100, 5200; 120 photos) the longest run of touching tiles chose a row
    that turned the photo wrong in 3 photos with a localiser that finds far walls in pieces, and in 10 with
    one that finds them whole; this, in 1 and 2."""
    confident = np.asarray(boxes, np.float64).reshape(-1, 4)[np.asarray(scores) >= CONFIDENT]
    rows = [row for row in find_rows(confident) if len(row.members) >= LONG_ROW]
    if not rows:
        return None
    sides = confident[:, 2:] - confident[:, :2]
    area = sides[:, 0] * sides[:, 1]
    hand = max(rows, key=lambda row: len(row.members) * float(np.median(area[list(row.members)])))
    members = confident[list(hand.members)]
    centres = (members[:, :2] + members[:, 2:]) / 2
    centres -= centres.mean(axis=0)
    direction = np.linalg.svd(centres, full_matrices=False)[2][0]  # the line the centres lie along
    degrees = math.degrees(math.atan2(direction[1], direction[0]))
    return degrees - 180.0 if degrees > 90.0 else degrees + 180.0 if degrees <= -90.0 else degrees


def turn_level(boxes: np.ndarray, scores: np.ndarray, width: int, height: int) -> Turn | None:
    """The turn that lays the photo's rows level when they run ``STEEP`` degrees or more from it (a
    quarter turn or less either way), else None."""
    degrees = row_degrees(boxes, scores)
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
