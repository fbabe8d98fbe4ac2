"""Reading a photo for the API: a photo decoded once (``vision.pipeline.decode_photo``: EXIF orientation
applied, the pixel limit enforced, a large JPEG decoded reduced) read, grouped and scored; boxes in the pixels
of the upright full-resolution photo, whose size is ``width`` / ``height`` in every answer.

A photo's hand is read, not given: its answer is whatever was read, its score (``valid: false`` with the
reason when it is not a win, e.g. a tile missed) and the grouper's warnings naming the tiles to check.
"""

from __future__ import annotations

from typing import Any

from scoring import Rules, WinContext
from vision import pipeline
from vision.detect.tileset import TileSet
from vision.detections import Detections
from vision.images import Photo
from vision.reading import Reader


def recognition_json(
    photo: Photo, detector: Reader, conf: float, tile_set: TileSet | None = None
) -> dict[str, Any]:
    """The tiles read and their grouping (``vision.pipeline.recognition_json``), the faces read with
    ``tile_set`` when given."""
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
    """``recognition_json`` plus the ``score`` (null when no tile was read) and the ``waits`` of a hand one
    tile short of a win (``vision.pipeline.score_photo``)."""
    return pipeline.score_photo(photo, detector, context, rules, conf=conf, tile_set=tile_set).to_json()


def group_json(detections: Detections, rules: Rules, context: WinContext) -> dict[str, Any]:
    """Detections (corrected by a player) grouped as a photo's are: searched for a winning reading under
    ``rules`` and ``context`` (some re-read, some left out); the detections as grouped and the grouping."""
    read = pipeline.read_hand(detections, rules=rules, context=context)
    return {"detections": read.detections.to_json(), **read.grouping.to_json()}
