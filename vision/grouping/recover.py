"""Unsure tiles taken back: a photographed winning hand a tile or two short holds a tile the detector
found but was not sure enough of.

The detector keeps a tile when its confidence reaches the operating threshold; below it (down to
``UNSURE_CONF``) it still found boxes it read as suited tiles, the *unsure* ones. When the grouped hand
is one or two tiles short (``tile_count``) and no re-reading can mend that, the likeliest set of unsure
tiles that makes a legal win is added: those that overlap no kept tile, the ``MAX_UNSURE`` most
confident, most confident sets first, each try re-grouped and re-read (``vision.grouping.reread``), at
most ``MAX_TRIES`` tries. An ``unsure_tile`` warning names every tile taken back, so nothing is added
silently. Photos of other things than a winning hand (a hand short by more, a tray of tiles) are left
as they were.
"""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import combinations

from scoring import score
from scoring.tiles import CLASS_NAMES
from vision.detections import BACK, Detections
from vision.evaluate import box_iou
from vision.grouper import group_detections
from vision.grouping.reread import reread
from vision.grouping.result import Grouping, GroupingWarning, WarningCode

UNSURE_CONF = 0.2  # unsure tiles are found down to this confidence
MAX_SHORT = 2  # a hand short by more is not mended from unsure tiles
MAX_UNSURE = 6  # the most confident unsure tiles considered
MAX_TRIES = 16  # sets of unsure tiles re-grouped, at most
OVERLAP_IOU = 0.3  # an unsure box overlapping a kept one this much is the same tile


def recover(detections: Detections, unsure: Detections, grouping: Grouping) -> tuple[Detections, Grouping]:
    """The detections and grouping with the likeliest unsure tiles that make a legal win, or unchanged.

    ``unsure``: boxes found below the threshold (any class; only suited ones are taken). Tiles taken
    back follow the kept ones in the returned detections.
    """
    short = _short_by(grouping)
    if not 1 <= short <= MAX_SHORT or not len(unsure):
        return detections, grouping
    suited = unsure.class_ids < BACK
    if len(detections):
        suited &= box_iou(unsure.boxes, detections.boxes).max(axis=1) < OVERLAP_IOU
    candidates = unsure[suited]
    order = [int(i) for i in candidates.confidences.argsort()[::-1][:MAX_UNSURE]]
    sets = sorted(
        combinations(order, short),
        key=lambda chosen: -math.fsum(math.log(float(candidates.confidences[i])) for i in chosen),
    )
    for chosen in sets[:MAX_TRIES]:
        joined = detections.joined(candidates[list(chosen)])
        found, grouped = reread(joined, group_detections(joined))
        if grouped.hand is not None and score(grouped.hand).valid:
            return found, _with_warning(grouped, found, len(detections), short)
    return detections, grouping


def _short_by(grouping: Grouping) -> int:
    """How many tiles the grouped hand lacks (0 when it has enough, or none was read)."""
    hand = grouping.hand
    if hand is None or WarningCode.TILE_COUNT not in grouping.codes:
        return 0
    kongs = sum(meld.kind.is_kong for meld in hand.melds)
    held = len(hand.concealed) + sum(meld.kind.size for meld in hand.melds)
    return 14 + kongs - held


def _with_warning(grouping: Grouping, found: Detections, kept: int, short: int) -> Grouping:
    indices = tuple(range(kept, len(found)))
    tiles = tuple(CLASS_NAMES[int(found.class_ids[i])] for i in indices)
    what = ", ".join(
        f"{tile} ({float(found.confidences[i]):.2f})" for tile, i in zip(tiles, indices, strict=True)
    )
    warning = GroupingWarning(
        WarningCode.UNSURE_TILE,
        f"the hand was {short} tile{'s' if short > 1 else ''} short; took back {what}, found but below "
        "the confidence threshold",
        indices,
        tiles,
    )
    return replace(grouping, warnings=(*grouping.warnings, warning))
