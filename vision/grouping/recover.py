"""The tile count mended: a photographed winning hand a tile or two short, or a tile or two over.

A hand that won has 14 tiles plus one per kong. When the grouped hand lacks one or two and no re-reading
can mend that, the tiles it lacks were likely found but not kept: the pipeline keeps a tile when the
detector is sure enough that it lies there (``Detections.presences`` reach the operating threshold), and
below it (down to ``UNSURE_CONF``) it found *unsure* boxes too. The likeliest set of unsure suited tiles
that makes a legal win is taken back (those that overlap no kept tile, the ``MAX_UNSURE`` most
confident, most confident sets first). A hand of the right count that is no legal win and took in lone
tiles lying apart from it (``not_a_meld``: a tile of its own was likely missed, and a discard filled its
place) takes back one or two unsure tiles the same way when that makes a legal win without lone tiles.
When the hand has one or two tiles too many (a duplicate box on a tile, a discard in line with the row),
the least sure of its tiles whose leaving out makes a legal win are left out (the ``MAX_UNSURE`` least
confident, least confident sets first). Each try is re-grouped and re-read (``vision.grouping.reread``,
itself up to its ``MAX_REGROUPS`` re-groupings), at most ``MAX_TRIES`` tries; an ``unsure_tile`` or
``left_out_tile`` warning names every tile taken back or left out, so nothing changes silently. A photo
of anything else than a winning hand (a hand off by more, a tray of tiles) is left as it was.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations

import numpy as np

from scoring.hand import tile_count
from vision.boxes import box_iou
from vision.detections import BACK, Detections
from vision.grouper import group_detections
from vision.grouping.reread import is_legal_win, reread
from vision.grouping.result import (
    Group,
    Grouping,
    GroupingWarning,
    GroupRole,
    WarningCode,
    warning_name,
)

UNSURE_CONF = 0.2  # unsure tiles are found down to this confidence
MAX_OFF = 2  # a hand short or over by more is not mended
MAX_UNSURE = 6  # the tiles considered: the most confident unsure ones, or the least confident kept ones
MAX_TRIES = 16  # sets of tiles re-grouped, at most
OVERLAP_IOU = 0.3  # an unsure box overlapping a kept one this much is the same tile


def mend_count(
    detections: Detections, unsure: Detections | None, grouping: Grouping
) -> tuple[Detections, Grouping]:
    """The detections and grouping with the tile count mended (see the module docstring), or unchanged.

    ``unsure``: boxes found below the threshold (any class; only suited ones are taken back), or None.
    Tiles taken back follow the kept ones in the returned detections; a tile left out stays in them, in
    an ``ignored`` group.
    """
    off = _count_off(grouping)
    if -MAX_OFF <= off <= -1 and unsure is not None:
        return _take_back(detections, unsure, grouping, -off)
    if 1 <= off <= MAX_OFF:
        return _leave_out(detections, grouping, off)
    if unsure is not None and _took_in_lone_tiles(grouping):
        for count in range(1, MAX_OFF + 1):
            found, mended = _take_back(detections, unsure, grouping, count, instead_of_lone=True)
            if mended is not grouping:
                return found, mended
    return detections, grouping


def _took_in_lone_tiles(grouping: Grouping) -> bool:
    """A hand of the right count, no legal win, that counts lone tiles lying apart from it as concealed."""
    codes = grouping.codes
    if grouping.hand is None or WarningCode.NOT_A_MELD not in codes or WarningCode.TILE_COUNT in codes:
        return False
    return not is_legal_win(grouping.hand)


def _count_off(grouping: Grouping) -> int:
    """Tiles the grouped hand has over a winning hand's count (negative: short; 0 with no hand)."""
    hand = grouping.hand
    if hand is None or WarningCode.TILE_COUNT not in grouping.codes:
        return 0
    return len(hand.all_tiles) - tile_count(hand.kong_count)


def _take_back(
    detections: Detections,
    unsure: Detections,
    grouping: Grouping,
    short: int,
    *,
    instead_of_lone: bool = False,
) -> tuple[Detections, Grouping]:
    """``short`` unsure tiles that make a legal win taken back (``instead_of_lone``: a win that takes in
    no lone tile apart from the hand), or the detections and grouping unchanged."""
    suited = unsure.class_ids < BACK
    if len(detections) and len(unsure):
        suited &= box_iou(unsure.boxes, detections.boxes).max(axis=1) < OVERLAP_IOU
    candidates = unsure[suited]
    order = [int(i) for i in candidates.confidences.argsort()[::-1][:MAX_UNSURE]]
    for chosen in _likeliest_sets(order, short, candidates.confidences, reverse=True):
        joined = detections.joined(candidates[list(chosen)])
        found, grouped = reread(joined, group_detections(joined))
        if instead_of_lone and WarningCode.NOT_A_MELD in grouped.codes:
            continue
        if grouped.hand is not None and is_legal_win(grouped.hand):
            added = tuple(sorted(range(len(detections), len(found)), key=lambda i: found.confidences[i]))
            off = 0 if instead_of_lone else short
            return found, _with_warning(grouped, found, added, WarningCode.UNSURE_TILE, off)
    return detections, grouping


def _leave_out(detections: Detections, grouping: Grouping, over: int) -> tuple[Detections, Grouping]:
    held = [i for group in grouping.groups if group.role is not GroupRole.IGNORED for i in group.indices]
    order = sorted(held, key=lambda i: (float(detections.confidences[i]), i))[:MAX_UNSURE]
    for chosen in _likeliest_sets(order, over, detections.confidences, reverse=False):
        kept = [i for i in range(len(detections)) if i not in chosen]
        found, grouped = reread(detections[kept], group_detections(detections[kept]))
        if grouped.hand is not None and is_legal_win(grouped.hand):
            every = _scattered(detections, kept, found)
            grouped = _reindexed(grouped, kept)
            left_out = tuple(sorted(chosen, key=lambda i: (float(detections.confidences[i]), i)))
            ignored = tuple(Group(GroupRole.IGNORED, (i,)) for i in sorted(left_out))  # one outline each
            grouped = replace(grouped, groups=(*grouped.groups, *ignored))
            return every, _with_warning(grouped, every, left_out, WarningCode.LEFT_OUT_TILE, over)
    return detections, grouping


def _scattered(detections: Detections, kept: list[int], found: Detections) -> Detections:
    """``detections`` with the rows ``kept`` as ``found`` (re-read) has them."""
    class_ids, confidences = detections.class_ids.copy(), detections.confidences.copy()
    class_ids[kept], confidences[kept] = found.class_ids, found.confidences
    others: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
    if detections.alternatives is not None and found.alternatives is not None:
        assert detections.alternative_confidences is not None and found.alternative_confidences is not None
        others = (detections.alternatives.copy(), detections.alternative_confidences.copy())
        others[0][kept], others[1][kept] = found.alternatives, found.alternative_confidences
    return Detections(detections.boxes, class_ids, confidences, detections.image_size, *others)


def _likeliest_sets(
    order: list[int], size: int, confidences: np.ndarray, *, reverse: bool
) -> list[tuple[int, ...]]:
    """Sets of ``size`` of ``order``, by the product of their confidences (highest first when
    ``reverse``, else lowest first), the first ``MAX_TRIES``. A confidence of 0 (a tile sent to the API
    with no confidence) ranks as the least likely."""
    sets = sorted(
        combinations(order, size),
        key=lambda chosen: math.fsum(math.log(max(float(confidences[i]), 1e-6)) for i in chosen),
        reverse=reverse,
    )
    return sets[:MAX_TRIES]


def _reindexed(grouping: Grouping, mapping: Sequence[int]) -> Grouping:
    """The grouping of a subset of the detections, its indices mapped back (``mapping[i]``)."""

    def mapped(indices: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(mapping[i] for i in indices)

    return replace(
        grouping,
        groups=tuple(replace(group, indices=mapped(group.indices)) for group in grouping.groups),
        win_index=None if grouping.win_index is None else mapping[grouping.win_index],
        warnings=tuple(replace(warning, indices=mapped(warning.indices)) for warning in grouping.warnings),
    )


def _with_warning(
    grouping: Grouping, found: Detections, indices: tuple[int, ...], code: WarningCode, off: int
) -> Grouping:
    """``grouping`` with a warning naming the tiles taken back or left out (least confident first);
    ``off``: how many tiles the hand was short or over (0: it took in lone tiles instead)."""
    tiles = tuple(warning_name(int(found.class_ids[i])) for i in indices)
    what = ", ".join(
        f"{tile} ({float(found.confidences[i]):.0%})" for tile, i in zip(tiles, indices, strict=True)
    )
    plural = "s" if off > 1 else ""
    if code is WarningCode.UNSURE_TILE and off == 0:
        message = (
            f"tiles lying apart from the hand made up its count; took back {what}, found below the "
            "confidence threshold, instead"
        )
    elif code is WarningCode.UNSURE_TILE:
        message = (
            f"the hand was {off} tile{plural} short; took back {what}, found but below the confidence "
            "threshold"
        )
    else:
        message = f"the hand had {off} tile{plural} too many; left out {what}, the least sure reading"
    warning = GroupingWarning(code, message, indices, tiles)
    return grouping.warned(warning)
