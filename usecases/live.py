"""Reading a hand live: the frames of one phone's camera read one by one, followed into a steady reading
(``vision.steady``), and the hand locked once that reading holds and makes a winning hand.

A frame's answer is what the page draws and says: the frame's own tiles (boxes in its pixels, to draw over
the live view), the advice for a better frame (``vision.guidance``), how long the voted reading has held,
and, once locked, the hand (``Hand.to_json``: what ``/score`` and a table's win take) and its score. A
locked hand stays locked until the view changes (``vision.steady``: the frame's tiles no longer match).
The voted tiles are grouped into a hand as a photo's are; the hand is locked once it has been the same for
``hold`` frames and is a winning hand (the far tiles the grouper leaves out may come and go meanwhile). A
reading that does not settle says why (``why``): no hand in view, the hand still changing, or a steady hand
that is no win (the scorer's reason).

No frame is kept: a frame is read and dropped.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scoring import Rules, WinContext, score
from scoring.hand import Hand
from vision import pipeline
from vision.detect.sharpness import photo_sharpness
from vision.detect.tileset import TileSet
from vision.detections import DETECTOR_CLASSES
from vision.grouping.result import GroupRole
from vision.guidance import frame_guidance
from vision.images import Photo
from vision.reading import Reader
from vision.steady import SteadyReading, SteadySettings, Vote

WHY = {
    "no_hand": "no hand in view",
    "changing": "the reading is still changing: hold the phone still over the hand",
    "not_a_win": "the steady reading is not a winning hand",
}


HOLD = 5  # frames the hand read must stay the same to be locked (about a second at 640x480 on two cores)


@dataclass
class LiveReading:
    """One phone's live reading, under ``rules`` and the win's ``context`` (and the set on the table,
    ``tile_set``); ``hold``: frames the hand read from the voted tiles must stay the same to be locked."""

    rules: Rules
    context: WinContext
    hold: int = HOLD
    tile_set: TileSet | None = None
    settings: SteadySettings = field(default_factory=SteadySettings)
    frames: int = 0
    held: int = 0  # frames the hand read has stayed the same
    locked: dict[str, Any] | None = None  # the locked hand and its score, until the view changes
    steady: SteadyReading = field(init=False)
    lock: threading.Lock = field(default_factory=threading.Lock)  # one frame read at a time
    _hand: str | None = None  # the hand read from the last frame's vote, as JSON

    def __post_init__(self) -> None:
        if self.hold < 1:
            raise ValueError("hold is a count of frames, at least 1")
        self.steady = SteadyReading(self.settings)

    def frame(self, photo: Photo, detector: Reader, conf: float) -> dict[str, Any]:
        """Read one frame and follow it; the frame's answer (see the module)."""
        self.frames += 1
        photo, found = pipeline.detect_tiles(photo, detector, conf=conf, tile_set=self.tile_set)
        boxes = found.boxes / photo.scale  # in the decoded pixels
        vote = self.steady.add(found, photo_sharpness(photo.pixels, boxes) if len(found) else None)
        if vote.changed or not len(vote.detections):
            self.locked, self._hand, self.held = None, None, 0
        read = pipeline.read_hand(vote.detections, rules=self.rules, context=self.context)
        why = None if self.locked is not None else self._settle(vote, read.grouping.hand)
        # the advice is for the hand's tiles where a hand is read (far tiles may be small or cut by the edge)
        placed = [
            i for group in read.grouping.groups if group.role is not GroupRole.IGNORED for i in group.indices
        ]
        if placed:
            boxes = read.detections.boxes[np.asarray(placed)] / photo.scale
        sharpness = photo_sharpness(photo.pixels, boxes) if len(boxes) else None
        guidance = frame_guidance(photo.pixels, boxes, sharpness)
        width, height = photo.original_size
        side = max(photo.pixels.shape[:2])
        unsure = vote.detections.class_ids[~vote.sure]
        return {
            "frame": self.frames,
            "width": width,
            "height": height,
            "detections": found.to_json(),
            "guidance": guidance.to_json(),
            "next_side": guidance.best_side(side),
            "steady": {
                "held": self.held,
                "hold": self.hold,
                "tiles": len(vote.detections),
                "unsure": [DETECTOR_CLASSES[int(c)] for c in unsure],
            },
            "locked": self.locked is not None,
            "hand": None if self.locked is None else self.locked["hand"],
            "score": None if self.locked is None else self.locked["score"],
            "why": why,
        }

    def _settle(self, vote: Vote, hand: Hand | None) -> dict[str, str] | None:
        """Lock the ``hand`` grouped from the voted tiles (as a photo's are, ``vision.pipeline.read_hand``)
        when it has been the same for ``hold`` frames and is a winning hand; otherwise why it is not
        locked."""
        if not len(vote.detections) or hand is None:
            self._hand, self.held = None, 0
            return _why("no_hand")
        key = json.dumps(hand.to_json(), sort_keys=True)
        self.held = self.held + 1 if key == self._hand else 1
        self._hand = key
        if self.held < self.hold:
            return _why("changing")
        result = score(hand, self.context, self.rules)
        if not result.valid:
            return _why("not_a_win", result.error.message if result.error is not None else None)
        self.locked = {"hand": hand.to_json(), "score": result.to_json()}
        return None


def _why(code: str, detail: str | None = None) -> dict[str, str]:
    return {"code": code, "message": WHY[code] + (f": {detail}" if detail else "")}
