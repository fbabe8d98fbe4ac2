"""What a player holding the camera should do for a better frame, from what the reader already measured of one
frame: no tile in view, the tiles blurred for their size (the reading's ``blurred_photo``), too small to read,
cut by the frame's edge, or the frame too dark. Each piece of advice is a code (the page words it in Chinese
and English) and a message."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import cv2
import numpy as np

# tiles whose short side measures less than this (frame pixels) are read with errors: the 640x480 hands
# whose 万 numerals are lost have tiles 20-35 px across
SMALL_TILE = 28.0
EDGE = 0.01  # a box within this share of the frame's side of its edge is cut by it
DARK = 50.0  # a frame whose mean grey level is below this is too dark to read
# the long side a frame is best sent at: the least of ``SIDES`` showing its tiles' short side at
# ``TILE_TARGET`` px or more (the largest, where none does); steps, so that the size stays put frame to frame
TILE_TARGET = 40.0
SIDES = (480, 640, 800, 960, 1280)


class Advice(StrEnum):
    NO_HAND = "no_hand"
    HOLD_STILL = "hold_still"
    COME_CLOSER = "come_closer"
    CUT_AT_EDGE = "cut_at_edge"
    TOO_DARK = "too_dark"


MESSAGES = {
    Advice.NO_HAND: "no tile in view: point the camera at the hand",
    Advice.HOLD_STILL: "the tiles are blurred: hold the phone still",
    Advice.COME_CLOSER: "the tiles are too small to read: come closer",
    Advice.CUT_AT_EDGE: "tiles are cut by the edge of the view: move back or centre the hand",
    Advice.TOO_DARK: "the view is too dark: more light on the table",
}


@dataclass(frozen=True)
class Guidance:
    """The advice for one frame (most pressing first) and ``tile``, the median short side of its tiles in the
    frame's pixels (None with no tile)."""

    advice: tuple[Advice, ...]
    tile: float | None

    def to_json(self) -> list[dict[str, str]]:
        return [{"code": a.value, "message": MESSAGES[a]} for a in self.advice]

    def best_side(self, side: int) -> int:
        """The long side to send the next frame at, from a frame sent at ``side``: the least of ``SIDES``
        that shows its tiles at ``TILE_TARGET`` px (``side`` itself when no tile was seen)."""
        if self.tile is None or self.tile <= 0:
            return side
        wanted = side * TILE_TARGET / self.tile
        return next((step for step in SIDES if step >= wanted * 0.98), SIDES[-1])


def frame_guidance(pixels: np.ndarray, boxes: np.ndarray, blurred: bool) -> Guidance:
    """The advice for a frame: ``pixels`` the RGB frame, ``boxes`` the tiles that matter in its pixels (the
    hand's where one is read), ``blurred``: they are, for their size (``vision.detect.sharpness.BLURRED``;
    the reading's ``blurred_photo`` warning)."""
    grey = cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY) if pixels.ndim == 3 else pixels
    advice: list[Advice] = []
    if float(grey.mean()) < DARK:
        advice.append(Advice.TOO_DARK)
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    if not len(boxes):
        advice.append(Advice.NO_HAND)
        return Guidance(tuple(advice), None)
    tile = float(np.median(np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])))
    if blurred:
        advice.append(Advice.HOLD_STILL)
    if tile < SMALL_TILE:
        advice.append(Advice.COME_CLOSER)
    height, width = grey.shape[:2]
    margin_x, margin_y = EDGE * width, EDGE * height
    cut = (
        (boxes[:, 0] <= margin_x)
        | (boxes[:, 1] <= margin_y)
        | (boxes[:, 2] >= width - margin_x)
        | (boxes[:, 3] >= height - margin_y)
    )
    if cut.any():
        advice.append(Advice.CUT_AT_EDGE)
    return Guidance(tuple(advice), tile)
