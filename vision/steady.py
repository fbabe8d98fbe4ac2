"""A steady reading of a hand held in front of a camera: tiles followed from frame to frame, each tile's face
voted over the recent frames.

One frame's reading is not the answer: a frame may be shaken, a tile's face may flip between two readings
from one frame to the next, a tile may be missed once. Each frame's tiles (``Detections``) are matched to the
tiles followed so far by their place: the frame is registered to the last one (a similarity transform, as a
hand-held phone moves: OpenCV's ``estimateAffinePartial2D`` on the tiles the two have nearest each other), and
a tile within ``match`` tile widths of a followed one is that tile. Each followed tile keeps a vote for every
face: a frame adds the confidence of each face it read there (the likeliest and the alternatives) weighted by
the frame's sharpness, and older votes fade (``window``). The voted reading is every tile seen in at least
half its recent frames, each under its likeliest face.
A frame that matches less than ``changed`` of the tiles followed, or whose faces differ from the voted ones on
more than ``1 - changed`` of the tiles it matches, shows another view: everything is forgotten. A frame with
no tile changes nothing but the fading of the votes (a blurred frame, a hand passing in front).

This module neither groups nor scores: whether the reading holds (the hand it groups into, frame after frame)
and what it is worth is its caller's (``usecases.live``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.detect.sharpness import BLURRED
from vision.detections import BACK, DETECTOR_CLASSES, Detections

ALTERNATIVES = 3  # the voted reading's alternatives per tile, likeliest first
SUITED = BACK  # class ids below this are the suited tiles
SHARP = 2 * BLURRED  # a frame at least this sharp votes with its full weight; a blurred one with less
UNMEASURED = 0.5  # the weight of a frame whose sharpness could not be measured (no tile to measure)


@dataclass(frozen=True)
class SteadySettings:
    """How a reading is followed. ``window``: frames over which a vote fades to a third; ``match``: tile
    widths within which a tile is the same tile; ``lost``: frames a tile may go unseen before it is dropped;
    ``changed``: the share of followed tiles a frame must match to show the same view; ``sure``: the share of
    its votes a tile's face needs to be sure."""

    window: int = 6
    match: float = 0.5
    lost: int = 4
    changed: float = 0.5
    sure: float = 0.6

    def __post_init__(self) -> None:
        if self.window < 1 or self.lost < 1:
            raise ValueError("window and lost are counts of frames, at least 1")
        if not (0 < self.match <= 2 and 0 < self.changed <= 1 and 0 < self.sure <= 1):
            raise ValueError("match is in (0, 2] tile widths; changed and sure are shares in (0, 1]")


@dataclass
class _Tile:
    key: int  # which tile, for as long as it is followed
    box: np.ndarray  # (4,) in the latest frame's pixels
    votes: np.ndarray  # (classes,) the faded votes for each face
    confidence: float  # the faded mean confidence of its readings
    weight: float  # the faded sum of the weights of the frames it was seen in
    seen: int  # frames it was seen in, since it was first seen
    first: int  # the frame it was first seen in
    last: int  # the frame it was last seen in


@dataclass(frozen=True)
class Vote:
    """The voted reading after a frame: ``detections`` (the voted tiles, in that frame's pixels, in the order
    they were first seen, each under its likeliest face at its mean confidence over the frames it was seen
    in), ``shares`` (that confidence against its readings' own: 1 where every frame read that face), ``sure``
    (the tiles whose share is at least the settings' ``sure``), ``of_frame`` (for each of the frame's tiles,
    its index in ``detections``, -1 where it is not in the voted reading: seen in too few frames), ``keys``
    (which tile each of ``detections`` is, the same number for as long as it is followed), ``matched`` (the
    frame's tiles matched to followed ones) and ``changed`` (the frame showed another view, and what was
    followed was forgotten)."""

    detections: Detections
    shares: np.ndarray
    sure: np.ndarray
    of_frame: np.ndarray
    keys: np.ndarray
    matched: int
    changed: bool


@dataclass
class SteadyReading:
    """The tiles followed across the frames of one camera view (see the module)."""

    settings: SteadySettings = field(default_factory=SteadySettings)
    _tiles: list[_Tile] = field(default_factory=list)
    _frame: int = 0
    _keys: int = 0

    @property
    def fade(self) -> float:
        """What a vote is worth a frame later: a third after ``window`` frames."""
        return 1.0 - 1.0 / (1.0 + self.settings.window / 2.0)

    def add(self, detections: Detections, sharpness: float | None = None) -> Vote:
        """Follow one frame's tiles (``detections`` with the classifier's alternatives, in the frame's pixels;
        ``sharpness``: ``vision.detect.sharpness.photo_sharpness`` of its tiles); the voted reading."""
        self._frame += 1
        boxes = np.asarray(detections.boxes, np.float32).reshape(-1, 4)
        followed = [t for t in self._tiles if self._frame - t.last <= self.settings.lost]
        pairs = _match(followed, boxes, self.settings.match)
        agree = sum(int(detections.class_ids[i]) == int(followed[j].votes.argmax()) for i, j in pairs)
        few = len(pairs) < self.settings.changed * min(len(followed), max(len(boxes), 1))
        changed = bool(followed) and len(boxes) > 0 and (few or agree < self.settings.changed * len(pairs))
        if changed:  # another view: everything followed is forgotten
            followed, pairs = [], []
        self._tiles = followed
        fade = self.fade
        for tile in self._tiles:
            tile.votes *= fade
            tile.weight *= fade
        weight = UNMEASURED if sharpness is None else min(1.0, max(sharpness, 0.0) / SHARP)
        paired = dict(pairs)
        followed_as: list[_Tile] = []
        for index in range(len(boxes)):
            votes = _votes(detections, index) * weight
            confidence = float(detections.confidences[index])
            if index in paired:
                tile = self._tiles[paired[index]]
                tile.box = boxes[index].copy()
                tile.votes += votes
                tile.weight += weight
                tile.confidence = fade * tile.confidence + (1 - fade) * confidence
                tile.seen += 1
                tile.last = self._frame
            else:
                self._keys += 1
                tile = _Tile(
                    self._keys, boxes[index].copy(), votes, confidence, weight, 1, self._frame, self._frame
                )
                self._tiles.append(tile)
            followed_as.append(tile)
        return self._vote(detections.image_size, len(pairs), changed, followed_as)

    def _vote(self, size: tuple[int, int], matched: int, changed: bool, followed_as: list[_Tile]) -> Vote:
        present = [
            t for t in self._tiles if t.seen * 2 >= min(self._frame - t.first + 1, 2 * self.settings.lost)
        ]
        where = {t.key: i for i, t in enumerate(present)}
        of_frame = np.array([where.get(t.key, -1) for t in followed_as], np.int64)
        boxes = np.array([t.box for t in present], np.float32).reshape(-1, 4)
        faces = np.array([int(t.votes.argmax()) for t in present], np.int64)
        # each face's mean confidence over the frames the tile was seen in (0 in a frame that read it as no
        # face of its readings): what one frame's confidence is, and what the search weighs
        means = np.array([t.votes / max(t.weight, 1e-9) for t in present], np.float32).reshape(
            -1, len(DETECTOR_CLASSES)
        )
        confidences = np.minimum(means[np.arange(len(present)), faces], 1.0)
        scale = np.array([max(t.confidence, 1e-9) for t in present], np.float32)
        shares = np.minimum(confidences / scale, 1.0)
        # the alternatives: the likeliest other suited faces (a face-down tile or an honour is no reading of
        # a suited one), at 0 where nothing voted for them
        others = np.zeros((len(present), ALTERNATIVES), np.int64)
        other_confidences = np.zeros((len(present), ALTERNATIVES), np.float32)
        for row, face in enumerate(faces):
            suited = means[row, :SUITED].copy()
            if face < SUITED:
                suited[face] = -1.0
            likeliest = np.argsort(-suited, kind="stable")[:ALTERNATIVES]
            others[row] = likeliest
            other_confidences[row] = np.clip(suited[likeliest], 0.0, 1.0)
        detections = Detections(
            boxes, faces, confidences, size, alternatives=others, alternative_confidences=other_confidences
        )
        keys = np.array([t.key for t in present], np.int64)
        return Vote(detections, shares, shares >= self.settings.sure, of_frame, keys, matched, changed)


def _votes(detections: Detections, index: int) -> np.ndarray:
    """One frame's votes at one tile: the confidence of the face read and of each alternative."""
    votes = np.zeros(len(DETECTOR_CLASSES), np.float32)
    votes[int(detections.class_ids[index])] = float(detections.confidences[index])
    if detections.alternatives is not None and detections.alternative_confidences is not None:
        for face, confidence in zip(
            detections.alternatives[index], detections.alternative_confidences[index], strict=True
        ):
            if confidence > 0 and votes[int(face)] == 0:
                votes[int(face)] = float(confidence)
    return votes


def _centres(boxes: np.ndarray) -> np.ndarray:
    return np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2], axis=1)


def _nearest(a: np.ndarray, b: np.ndarray, within: float) -> list[tuple[int, int]]:
    """Pairs (index in ``a``, index in ``b``) of points nearest each other, each used once, closest first,
    no farther apart than ``within``."""
    if not len(a) or not len(b):
        return []
    distance = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=2)
    pairs, used_a, used_b = [], set(), set()
    for flat in np.argsort(distance, axis=None, kind="stable"):
        i, j = divmod(int(flat), len(b))
        if distance[i, j] > within:
            break
        if i in used_a or j in used_b:
            continue
        pairs.append((i, j))
        used_a.add(i)
        used_b.add(j)
    return pairs


def _match(followed: list[_Tile], boxes: np.ndarray, match: float) -> list[tuple[int, int]]:
    """Pairs (frame tile, followed tile). The frame is registered to the followed tiles' places: scaled by
    the ratio of their tiles' sizes, or not at all (``_registered``: whichever pairs more tiles; the tiles'
    median size alone varies by a tenth from one steady frame to the next, as the boxes of flat melds and far
    tiles come and go, which over a frame's width is more than ``match``), moved by the offset (of one frame
    tile onto one followed tile) that lays most tiles onto followed ones, then by a similarity fitted to the
    pairs that gives (twice, as a turned phone moves the row's ends); tiles within ``match`` tile widths of
    each other are then paired."""
    if not followed or not len(boxes):
        return []
    known = np.array([t.box for t in followed], np.float32)
    width = max(_tile_width(known), 1.0)
    there, within = _centres(known), match * width
    zooms = sorted({1.0, width / max(_tile_width(boxes), 1.0)})
    return max((_registered(_centres(boxes) * zoom, there, within) for zoom in zooms), key=len)


def _registered(here: np.ndarray, there: np.ndarray, within: float) -> list[tuple[int, int]]:
    """Pairs of ``here`` (a frame's tile centres, scaled) and ``there`` (the followed tiles'), within
    ``within`` once ``here`` is moved by the best offset and then by the similarity its pairs fit."""
    offsets = (there[None, :, :] - here[:, None, :]).reshape(-1, 2)
    landed = np.linalg.norm(
        here[None, :, None, :] + offsets[:, None, None, :] - there[None, None, :, :], axis=3
    )
    moved = here + offsets[int((landed.min(axis=2) <= within).sum(axis=1).argmax())]
    for _ in range(2):
        pairs = _nearest(moved, there, within)
        if len(pairs) < 3:
            break
        source = here[[i for i, _ in pairs]].astype(np.float32)
        target = there[[j for _, j in pairs]].astype(np.float32)
        fitted, _ = cv2.estimateAffinePartial2D(source, target, ransacReprojThreshold=within)
        if fitted is None:
            break
        moved = here @ fitted[:, :2].T + fitted[:, 2]
    return _nearest(moved, there, within)


def _tile_width(boxes: np.ndarray) -> float:
    """The median short side of ``boxes``."""
    return float(np.median(np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])))
