"""What the routes do, as plain functions of library values (no FastAPI here).

Photo endpoints decode the upload once (``vision.images.load_photo``: EXIF orientation applied, pixel
limit enforced, large JPEGs decoded reduced), detect, and group; boxes come back in the pixels of the
upright full-resolution photo, whose size is ``width`` / ``height`` in every answer.

Scoring a hand given as JSON (``/api/v1/score``):

* a hand that is simply not a win (three suits, a tile of the void suit, not 4 sets + a pair) is a valid
  request: ``200`` with ``valid: false`` and the reason (``error.code`` / ``error.message``), as
  ``smj score --json`` prints it;
* an impossible hand (``IMPOSSIBLE``: a wrong tile count, a fifth copy, a winning tile not in the hand, a
  contradictory win context) is a malformed request: ``422`` with that code.

A photo's hand is different: reading it is the result, so ``/api/v1/score-photo`` answers ``200`` with
whatever was read, its score (``valid: false`` with the reason when it is not a win, e.g. a tile missed)
and the grouper's warnings naming the tiles to check.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from api.errors import ApiError
from scoring import Hand, Rules, Score, WinContext, score, waits
from scoring.errors import IMPOSSIBLE
from scoring.hand import Meld
from scoring.tiles import Tile
from scoring.waits import waits_to_json
from vision import pipeline
from vision.detect.tileset import TileSet
from vision.detections import CLASS_IDS, Detections
from vision.grouping.grouper import Grouping
from vision.images import Photo
from vision.reading import Reader


def decode(data: bytes, max_pixels: int, max_decode_bytes: int | None = None) -> Photo:
    """Decoded for the detector (a large JPEG reduced); raises ``ImageError`` (not_an_image,
    corrupt_image, too_many_pixels: over ``max_pixels`` or taking more than ``max_decode_bytes``)."""
    return pipeline.decode_photo(data, max_pixels=max_pixels, max_decode_bytes=max_decode_bytes)


def decode_to_save(data: bytes, max_pixels: int, max_decode_bytes: int | None = None) -> Photo:
    """As ``decode``: a photo saved as an example is decoded as the reader decodes it (a large JPEG reduced
    by the decoder itself, to the size the reader sees), so a phone photo the reader reads, turned by its
    EXIF tag or not, is never too large to save."""
    return decode(data, max_pixels, max_decode_bytes)


def recognition_json(
    photo: Photo, detector: Reader, conf: float, tile_set: TileSet | None = None
) -> dict[str, Any]:
    """What ``/recognize`` answers (``vision.pipeline.recognition_json``): detections in the full-resolution
    upright photo's pixels and their grouping, the faces read with ``tile_set`` when given."""
    read = pipeline.recognize(photo, detector, conf=conf, tile_set=tile_set)
    return pipeline.recognition_json(photo, read.detections, read.grouping)


def score_photo_json(
    photo: Photo,
    detector: Reader,
    context: WinContext,
    rules: Rules,
    conf: float,
    tile_set: TileSet | None = None,
) -> dict[str, Any]:
    """``vision.pipeline.recognition_json`` plus ``score`` (``vision.pipeline.score_photo``): null when no
    tile was read, and ``waits`` when the hand read is one tile short of a win."""
    return pipeline.score_photo(photo, detector, context, rules, conf=conf, tile_set=tile_set).to_json()


def group(detections: Detections, rules: Rules) -> tuple[Detections, Grouping]:
    """The detections as the search for a winning reading under ``rules`` leaves them, and their grouping."""
    read = pipeline.read_hand(detections, rules=rules)
    return read.detections, read.grouping


def group_json(detections: Detections, rules: Rules) -> dict[str, Any]:
    """What ``/group`` answers: the detections as grouped (re-read, some left out) and the grouping."""
    grouped, grouping = group(detections, rules)
    return {"detections": grouped.to_json(), **grouping.to_json()}


DetectionItem = tuple[str, Sequence[float], float, Sequence[tuple[str, float]]]
"""A detection as the API takes it: class name, box, confidence, alternatives (suited name, confidence)."""


def detections_from(items: Sequence[DetectionItem], size: tuple[int, int]) -> Detections:
    """Detections read from the API (already validated) as ``Detections``.

    Every row gets as many alternatives as the longest list given; the missing ones have confidence 0,
    which the re-reading never takes.
    """
    if not items:
        return Detections.empty(size)
    width = max(len(others) for *_, others in items)
    alternatives = np.zeros((len(items), width), np.int64)
    alternative_confidences = np.zeros((len(items), width), np.float32)
    for row, (*_, others) in enumerate(items):
        for rank, (name, confidence) in enumerate(others):
            alternatives[row, rank] = CLASS_IDS[name]
            alternative_confidences[row, rank] = confidence
    return Detections(
        np.array([box for _, box, _, _ in items], np.float32),
        np.array([CLASS_IDS[name] for name, _, _, _ in items], np.int64),
        np.array([confidence for _, _, confidence, _ in items], np.float32),
        size,
        alternatives if width else None,
        alternative_confidences if width else None,
    )


def detections_in_photo(items: Sequence[DetectionItem], size: tuple[int, int]) -> Detections:
    """As ``detections_from``; a box outside the photo raises ``ApiError`` 422 ``box_outside_image``."""
    width, height = size
    for index, (_, (x1, y1, x2, y2), _, _) in enumerate(items):
        if x1 < 0 or y1 < 0 or x2 > width or y2 > height:
            raise ApiError(
                422, "box_outside_image", f"detections[{index}].box lies outside the {width}x{height} photo"
            )
    return detections_from(items, size)


def score_hand(hand: Hand, context: WinContext, rules: Rules) -> Score:
    """The score; an impossible hand raises ``ApiError`` 422 with the reason code (see the module doc)."""
    result = score(hand, context, rules)
    if result.error is not None and result.error.code in IMPOSSIBLE:
        raise ApiError(422, result.error.code.value, result.error.message)
    return result


def score_json(hand: Hand, context: WinContext, rules: Rules) -> dict[str, Any]:
    """``score_hand(...).to_json()``: what ``/score`` answers."""
    return score_hand(hand, context, rules).to_json()


def waits_json(
    concealed: tuple[Tile, ...], melds: tuple[Meld, ...], context: WinContext, rules: Rules
) -> dict[str, Any]:
    """As ``smj waits --json``; a malformed hand raises ``InvalidHandError`` (mapped to 422)."""
    return waits_to_json(waits(concealed, melds, context, rules), rules)
