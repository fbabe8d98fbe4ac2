"""Reading a hand live: the frames of one phone's camera read one by one, followed into a steady reading
(``vision.steady``), and the hand locked once that reading holds and makes a winning hand.

A frame's answer is what the page draws and says: the frame's own tiles (boxes in its pixels, to draw over
the live view), the advice for a better frame (``vision.guidance``), how long the voted reading has held,
and, once locked, the hand (``Hand.to_json``: what ``/score`` and a table's win take) and its score. A
locked hand stays locked until the view changes (``vision.steady``: the frame's tiles no longer match).
Each frame is read as a photo is, in one look (``vision.pipeline.recognize``: the row its hand is in); the
tiles of its hand and melds, under the faces voted for them, are grouped again into the hand, which is locked
once ``hold`` of the last frames read it (``_settle``), its winning tile set apart, most of those frames not
warned of a blurred tile or one torn between two faces, and a winning hand (the far tiles may come and go
meanwhile). A reading that does not settle says why (``why``): no hand in view, the hand still changing, the
winning tile not set apart (which it is would be a guess), a tile read blurred or torn between two faces, or a
steady hand that is no win (the scorer's reason).

No frame is kept: a frame is read and dropped.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from scoring import Rules, WinContext, score
from vision import pipeline
from vision.detect.sharpness import BLURRED, photo_sharpness
from vision.detect.tileset import TileSet
from vision.detections import DETECTOR_CLASSES
from vision.grouping.grouper import Grouping
from vision.grouping.result import WarningCode
from vision.grouping.search import SEARCH, SearchConfig
from vision.guidance import frame_guidance
from vision.images import Photo
from vision.reading import Reader
from vision.steady import SteadyReading, SteadySettings, Vote

WHY = {
    "no_hand": "no hand in view",
    "changing": "the reading is still changing: hold the phone still over the hand",
    "win_tile_not_apart": "set the winning tile a little apart on the right of the row",
    "unsure_tile": "a tile reads blurred or like another tile: hold the phone still, a little closer",
    "not_a_win": "the steady reading is not a winning hand",
}


# a hand is not locked while most of the recent frames' own readings warn that a tile of the hand is blurred
# or torn between two faces (``blurred_photo``, ``close_faces``): every wrong lock on the rendered videos of
# ``benchmarks/bench_live.py`` was a misread that such frames read alike (models/HISTORY.md)
UNSURE = frozenset({WarningCode.BLURRED_PHOTO, WarningCode.CLOSE_FACES})
# frames the hand read must stay the same to be locked, of the last ``hold + hold // 2``: 3 locked more of the
# rendered videos right than 4 or 5, none wrong, and sooner (3 frames at 640x480 on two cores: about 0.6 s)
HOLD = 3
# each frame is looked at once: a close-up that reads as no win is not looked at again (turned or enlarged)
# as a photo is; the next frame is its second look
LIVE_SEARCH = replace(SEARCH, second_looks=False)


class _Heard(NamedTuple):
    """What one recent frame said of the hand: the hand its vote read (``hand_key``; None: no hand), whether
    its winning tile was set apart, and whether the frame's own reading was unsure (``UNSURE``)."""

    key: str | None
    apart: bool
    unsure: bool


@dataclass
class LiveReading:
    """One phone's live reading, under ``rules`` and the win's ``context`` (and the set on the table,
    ``tile_set``); ``hold``: frames the hand read from the voted tiles must stay the same to be locked."""

    rules: Rules
    context: WinContext
    hold: int = HOLD
    tile_set: TileSet | None = None
    settings: SteadySettings = field(default_factory=SteadySettings)
    reach: SearchConfig = LIVE_SEARCH  # each frame's reading's search (``vision.grouping.search``)
    frames: int = 0
    held: int = 0  # of the recent frames, those that read the latest frame's hand
    locked: dict[str, Any] | None = None  # the locked hand and its score, until the view changes
    steady: SteadyReading = field(init=False)
    lock: threading.Lock = field(default_factory=threading.Lock)  # one frame read at a time
    _recent: deque[_Heard] = field(default_factory=deque)  # the last ``hold + hold // 2`` frames
    # each followed tile's faded count of frames that placed it outside and inside the hand and melds
    _roles: dict[int, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.hold < 1:
            raise ValueError("hold is a count of frames, at least 1")
        self.steady = SteadyReading(self.settings)

    def frame(self, photo: Photo, detector: Reader, conf: float) -> dict[str, Any]:
        """Read one frame and follow it; the frame's answer (see the module)."""
        self.frames += 1
        frame = pipeline.recognize(
            photo,
            detector,
            conf=conf,
            rules=self.rules,
            context=self.context,
            tile_set=self.tile_set,
            reach=self.reach,
        )
        photo, found = frame.photo, frame.detections
        boxes = found.boxes / photo.scale  # in the decoded pixels
        sharpness = photo_sharpness(photo.pixels, boxes) if len(boxes) else None
        vote = self.steady.add(found, sharpness)
        if vote.changed or not len(vote.detections):
            self.locked, self.held = None, 0
            self._recent.clear()
            self._roles.clear()
        # the hand and melds: the followed tiles the recent frames' readings placed in them more often than
        # not (each frame's reading chose the row, as a photo's does), under their voted faces
        placed = np.asarray(frame.grouping.placed, np.int64)
        tiles = vote.detections[self._placed(vote, placed)]
        why = None
        if self.locked is None:
            # a voted face read below the threshold (read two ways) is offered to the search as a photo's
            # unsure box is, not grouped as a tile
            sure = tiles.confidences >= conf
            voted = pipeline.read_hand(
                tiles[sure], tiles[~sure], threshold=conf, rules=self.rules, context=self.context
            )
            why = self._settle(vote, voted.grouping, bool(UNSURE & set(frame.grouping.codes)))
        # the advice is for the hand's tiles where a hand is read (far tiles may be small or cut by the edge),
        # blurred as the reading warned (``blurred_photo``); else for every tile the frame shows
        if len(placed):
            boxes, blurred = boxes[placed], WarningCode.BLURRED_PHOTO in frame.grouping.codes
        else:
            blurred = sharpness is not None and sharpness < BLURRED
        guidance = frame_guidance(photo.pixels, boxes, blurred)
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

    def _placed(self, vote: Vote, placed: np.ndarray) -> np.ndarray:
        """The indices of ``vote``'s tiles placed in the hand or a meld by more of the recent frames' readings
        than not (``placed``: the frame's own tiles so placed), each frame's say fading as the faces' votes
        do."""
        fade = self.steady.fade
        in_frame = np.zeros(len(vote.of_frame), bool)
        in_frame[placed] = True
        for key in list(self._roles):
            self._roles[key] *= fade
        for index, followed in enumerate(vote.of_frame):
            if followed < 0:
                continue
            key = int(vote.keys[followed])
            self._roles.setdefault(key, np.zeros(2, np.float64))[int(in_frame[index])] += 1.0
        kept = set(int(k) for k in vote.keys)
        for key in [k for k in self._roles if k not in kept]:
            del self._roles[key]
        return np.array(
            [
                i
                for i, key in enumerate(vote.keys)
                if key in self._roles and self._roles[key][1] > self._roles[key][0]
            ],
            np.int64,
        )

    def _settle(self, vote: Vote, grouping: Grouping, unsure: bool) -> dict[str, str] | None:
        """Lock the hand ``grouping`` makes of the voted tiles when ``hold`` of the last ``hold + hold // 2``
        frames read it (a frame or two reading another hand, a row misplaced, does not start the count again)
        with its winning tile set apart (not the grouper's guess), at most half of those frames ``unsure``
        (their own reading warned of a blurred or torn tile), and it is a winning hand; otherwise why it is
        not locked."""
        hand = grouping.hand
        key = None if hand is None or not len(vote.detections) else hand_key(hand.to_json())
        self._recent.append(_Heard(key, grouping.win_apart, unsure))
        while len(self._recent) > self.hold + self.hold // 2:
            self._recent.popleft()
        self.held = sum(heard.key == key for heard in self._recent) if key is not None else 0
        if hand is None:
            return _why("no_hand")
        if self.held < self.hold:
            return _why("changing")
        if sum(heard.key == key and heard.apart for heard in self._recent) < self.hold:
            return _why("win_tile_not_apart")
        if 2 * sum(heard.unsure for heard in self._recent) > len(self._recent):
            return _why("unsure_tile")
        result = score(hand, self.context, self.rules)
        if not result.valid:
            return _why("not_a_win", result.error.message if result.error is not None else None)
        self.locked = {"hand": hand.to_json(), "score": result.to_json()}
        return None


def hand_key(hand: dict[str, Any]) -> str:
    """A hand's JSON (``Hand.to_json``) as one string, the same whatever order its melds are listed in."""
    melds = sorted(hand["melds"], key=lambda meld: json.dumps(meld, sort_keys=True))
    return json.dumps({**hand, "melds": melds}, sort_keys=True)


def _why(code: str, detail: str | None = None) -> dict[str, str]:
    return {"code": code, "message": WHY[code] + (f": {detail}" if detail else "")}
