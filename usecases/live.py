"""Reading a hand live: the frames of one phone's camera read one by one, followed into a steady reading
(``vision.steady``), and the hand locked once that reading holds and makes a winning hand.

A frame's answer is what the page draws and says: the frame's own tiles (boxes in its pixels, to draw over
the live view), the advice for a better frame (``vision.guidance``), how long the voted reading has held,
and, once locked, the hand (``Hand.to_json``: what ``/score`` and a table's win take) and its score. A
locked hand stays locked until the view changes (``vision.steady``: the frame's tiles no longer match).
A reading that does not settle says why (``why``): no hand in view, faces still changing, tiles read two
ways, or a steady reading that is no winning hand (the scorer's reason).

No frame is kept: a frame is read and dropped.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from scoring import Rules, WinContext, score
from vision import pipeline
from vision.detect.sharpness import photo_sharpness
from vision.detect.tileset import TileSet
from vision.detections import DETECTOR_CLASSES
from vision.guidance import frame_guidance
from vision.images import Photo
from vision.reading import Reader
from vision.steady import SteadyReading, SteadySettings, Vote

WHY = {
    "no_hand": "no tile in view",
    "changing": "the reading is still changing: hold the phone still over the hand",
    "unsure": "some tiles read two ways from frame to frame",
    "not_a_win": "the steady reading is not a winning hand",
}


@dataclass
class LiveReading:
    """One phone's live reading, under ``rules`` and the win's ``context`` (and the set on the table,
    ``tile_set``)."""

    rules: Rules
    context: WinContext
    settings: SteadySettings = field(default_factory=SteadySettings)
    tile_set: TileSet | None = None
    frames: int = 0
    locked: dict[str, Any] | None = None  # the locked hand and its score, until the view changes
    steady: SteadyReading = field(init=False)
    lock: threading.Lock = field(default_factory=threading.Lock)  # one frame read at a time

    def __post_init__(self) -> None:
        self.steady = SteadyReading(self.settings)

    def frame(self, photo: Photo, detector: Reader, conf: float) -> dict[str, Any]:
        """Read one frame and follow it; the frame's answer (see the module)."""
        self.frames += 1
        photo, found = pipeline.detect_tiles(photo, detector, conf=conf, tile_set=self.tile_set)
        in_pixels = found.scaled(1 / photo.scale)
        sharpness = photo_sharpness(photo.pixels, in_pixels.boxes) if len(found) else None
        guidance = frame_guidance(photo.pixels, in_pixels, sharpness)
        vote = self.steady.add(found, sharpness)
        if vote.changed or not len(vote.detections):
            self.locked = None
        why = None
        if self.locked is None:
            why = self._settle(vote)
        width, height = photo.original_size
        side = max(photo.pixels.shape[:2])
        return {
            "frame": self.frames,
            "width": width,
            "height": height,
            "detections": found.to_json(),
            "guidance": guidance.to_json(),
            "next_side": guidance.best_side(side),
            "steady": {
                "held": vote.held,
                "hold": self.settings.hold,
                "tiles": len(vote.detections),
                "unsure": [
                    DETECTOR_CLASSES[int(c)]
                    for c, s in zip(vote.detections.class_ids, vote.shares, strict=True)
                    if s < self.settings.sure
                ],
            },
            "locked": self.locked is not None,
            "hand": None if self.locked is None else self.locked["hand"],
            "score": None if self.locked is None else self.locked["score"],
            "why": why,
        }

    def _settle(self, vote: Vote) -> dict[str, str] | None:
        """Lock the voted reading when it is steady and a winning hand; otherwise why it is not locked."""
        if not len(vote.detections):
            return _why("no_hand")
        if not vote.steady:
            unsure = vote.held >= self.settings.hold
            return _why("unsure" if unsure else "changing")
        read = pipeline.read_hand(vote.detections, rules=self.rules, context=self.context)
        hand = read.grouping.hand
        result = score(hand, self.context, self.rules) if hand is not None else None
        if hand is None or result is None or not result.valid:
            reason = result.error.message if result is not None and result.error is not None else None
            return _why("not_a_win", reason)
        self.locked = {"hand": hand.to_json(), "score": result.to_json()}
        return None


def _why(code: str, detail: str | None = None) -> dict[str, str]:
    return {"code": code, "message": WHY[code] + (f": {detail}" if detail else "")}
