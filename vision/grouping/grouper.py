"""The grouper: from the tiles a detector found in a photo to the hand the scoring core reads.

``group_detections(detections) -> Grouping`` is a pure function of the boxes. The photo shows the
concealed tiles standing in a row (the winning tile often set a little apart at its right end) and the
revealed melds laid down as separate groups, in a second row or on the same line past a gap:

* rows and clusters come from the boxes' geometry alone (``vision.geometry.rows``), in tile widths, so
  that perspective, a photo rotated up to 90 degrees either way, uneven gaps and tiles lying flat or
  turned in a meld are all one case;
* a cluster apart from the hand reads as melds (``vision.grouping.melds``): 3 identical tiles a pong,
  4 a kong (``kong_exposed``: a photo cannot tell it from an added kong), 4 with 1-3 backs a concealed
  kong; touching melds (``555p6666s``) are split, and so are backs touching the end of face-up tiles
  that no meld explains (another player's wall); neighbouring pieces that make a meld only together
  (``66s`` and ``6s`` a little apart: loose boxes split a flat meld) are joined;
* the hand's row is the one whose reading is best supported (``vision.grouping.plan``): most standing
  tiles and melds on its line, a count of 14 plus one per kong; melds near it are the player's, other
  players' melds and discards farther off count only when the hand needs them. Four identical tiles
  inside the standing row are concealed tiles, not a kong; a lone tile on the row's line set apart past
  its end, or a cluster there holding an honour tile, is left out when only that makes the count
  (``vision.grouping.concealed``);
* the winning tile is a lone tile past a gap at the right end of the hand's row, or an end tile set off
  by a gap far wider than the others (at either end of a vertical row: the one further apart);
* honours, duplicate boxes and backs outside melds (other players' walls) are left out.

Every threshold is a field of ``GrouperConfig`` (``group_detections(detections, config)``; the defaults,
``GROUPER``, when none is given), one frozen part per stage that uses it: ``RowsConfig``,
``LayoutConfig``, ``PlanConfig``, ``ConcealedConfig``, ``AssemblyConfig``, each field with its unit and
why it is what it is.

Nothing is guessed silently: a tile is never gained or lost without a warning naming it. Every
detection is in exactly one ``Group``; every suited detection is in the hand, in a meld, or named in a
warning. Warnings name the tiles concerned, least confident first:

======================  ==================================================================================
``duplicate_box``        two boxes cover one of the player's tiles (or the dropped one read suited); the less
                         confident was dropped (a second box on another player's back is dropped unsaid)
``honour_tile``          honour tiles (winds, dragons, flowers) are not Sichuan tiles; left out of the hand
``not_a_meld``           face-up tiles apart from the hand that are no pong or kong; counted as concealed
``stray_tiles``          face-up tiles or melds away from the hand that it does not need; left out
``win_tile_not_apart``   no tile set apart: the last tile of the row was taken as the winning tile
``fifth_copy``           a tile appears more than 4 times
``tile_count``           not 14 tiles plus one per kong (names the 3 least sure tiles)
``no_tiles``             no suited tile at all: ``hand`` is None
``reread_tile``          the first reading was no winning hand: up to three tiles read as the classifier's
                         second or third choice (the search for a winning reading, ``vision.grouping.search``)
``unsure_tile``          the hand was a tile or two short, or lone tiles apart made up its count: tiles found
                         below the confidence threshold were taken back (``vision.grouping.search``)
``left_out_tile``        the hand had a tile or two too many: the least sure ones whose leaving out makes a
                         win were left out (``vision.grouping.search``)
``other_row``            the likeliest row for the hand read as no win; the hand was read from the next
                         likeliest row that is one as read (``vision.grouping.search``)
``blurred_photo``        the hand's tiles are blurred for their size: faces may be misread; names no tile
                         (``vision.detect.sharpness``, in ``vision.pipeline``)
======================  ==================================================================================
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from vision.detections import BACK, Detections
from vision.geometry.boxes import drop_duplicates
from vision.geometry.rows import ROWS, RowCache, RowsConfig
from vision.grouping.assemble import ASSEMBLY, Assembly, AssemblyConfig
from vision.grouping.concealed import CONCEALED, ConcealedConfig
from vision.grouping.layout import LAYOUT, LayoutConfig, lay_out
from vision.grouping.plan import PLAN, PlanConfig, ranked_plans
from vision.grouping.result import Group, Grouping, GroupingWarning, GroupRole, WarningCode

__all__ = [
    "AssemblyConfig",
    "ConcealedConfig",
    "Group",
    "GroupRole",
    "GrouperConfig",
    "Grouping",
    "GroupingWarning",
    "LayoutConfig",
    "PlanConfig",
    "RowsConfig",
    "WarningCode",
    "group_detections",
    "ranked_groupings",
]


@dataclass(frozen=True)
class GrouperConfig:
    """Every setting of the grouper, one part per stage that uses it (see each part for its fields).

    ``rows``: rows and clusters (``vision.geometry.rows``); ``layout``: melds cut off and joined
    (``vision.grouping.layout``); ``plan``: which row is the hand and what counts towards it
    (``vision.grouping.plan``); ``concealed``: which clusters of that row are concealed tiles
    (``vision.grouping.concealed``); ``assembly``: the winning tile, the hand and its groups
    (``vision.grouping.assemble``).
    The fields of its own: duplicate boxes and the weight of backs, overlaps as ratios.
    """

    rows: RowsConfig = ROWS
    layout: LayoutConfig = LAYOUT
    plan: PlanConfig = PLAN
    concealed: ConcealedConfig = CONCEALED
    assembly: AssemblyConfig = ASSEMBLY
    # ratio: two boxes overlapping this much (intersection over union) ... (two labelled tiles of the
    # synthetic scenes hardly ever overlap so much; a second box the detector puts over a gap in a meld
    # lying flat often does; models/HISTORY.md)
    duplicate_iou: float = 0.5
    duplicate_cover: float = 0.85  # ratio: ... or one covering this much of the other are one tile
    # weight of a back in the photo's direction (any other tile: 1): backs may be other players' walls,
    # at any angle, so they have less say
    back_weight: float = 0.25


GROUPER = GrouperConfig()


def group_detections(
    detections: Detections, config: GrouperConfig | None = None, rows: RowCache | None = None
) -> Grouping:
    """Read the hand in one photo's detections (see the module docstring) with ``config`` (default:
    ``GROUPER``, every setting at its default): a pure function of the detections, their rows and the
    config. ``rows``: where the rows of a set of boxes found before are taken from (the search hands one to
    every grouping of a photo), else they are found here."""
    return next(ranked_groupings(detections, config, rows))


def ranked_groupings(
    detections: Detections, config: GrouperConfig | None = None, rows: RowCache | None = None
) -> Iterator[Grouping]:
    """The readings of the detections with each row of upright tiles as the hand's, best first: the first
    is ``group_detections``'; the others are what the search for a winning reading tries when the likeliest
    row's is no win (``vision.grouping.search``). The rows and clusters are found once for all of them."""
    config = GROUPER if config is None else config
    kept, duplicates = drop_duplicates(
        detections.boxes, detections.confidences, iou=config.duplicate_iou, cover=config.duplicate_cover
    )
    class_ids = [int(c) for c in detections.class_ids]
    found = (rows or RowCache()).find(
        detections.boxes[kept],
        weights=np.where(detections.class_ids[kept] == BACK, config.back_weight, 1.0),
        config=config.rows,
    )
    layout = lay_out(found, kept, class_ids, config=config.layout)
    reading_known = [row.reading_known for row in found]
    boxes = detections.boxes.astype(np.float64)
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    scale = np.sqrt(np.prod(np.maximum(boxes[:, 2:] - boxes[:, :2], 1e-6), axis=1))  # the root of the area
    plans = ranked_plans(
        layout, reading_known, centres, scale, config=config.plan, concealed=config.concealed
    )
    for chosen in plans:
        yield Assembly(
            detections, layout, reading_known, duplicates, chosen, config=config.assembly
        ).grouping()
