"""The tile count mended: a hand a tile or two short takes back tiles found below the threshold; one
a tile or two over leaves out its least sure tiles."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.tiles import parse_tiles
from tests.detection_builders import TILE_H, lay_hand, lay_row, make_detections
from vision import pipeline
from vision.detections import BACK, HONOUR, Detections
from vision.grouper import WarningCode, group_detections
from vision.grouping.recover import mend_count
from vision.grouping.result import warning_name
from vision.images import Photo

WIN = "123m456m789m234p5p 5p"  # 14 tiles, the last set apart


def _split(dets: Detections, unsure_at: dict[int, float]) -> tuple[Detections, Detections]:
    """(kept, unsure): the boxes of ``unsure_at`` given those confidences and moved to ``unsure``."""
    mask = np.zeros(len(dets), bool)
    mask[list(unsure_at)] = True
    confidences = dets.confidences.copy()
    confidences[list(unsure_at)] = list(unsure_at.values())
    lowered = Detections(dets.boxes, dets.class_ids, confidences, dets.image_size)
    return lowered[~mask], lowered[mask]


def _whole() -> Detections:
    # room below the row for a stray tile
    dets = make_detections(lay_row(WIN, gap=1.0))
    return Detections(dets.boxes, dets.class_ids, dets.confidences, (dets.image_size[0], 1000))


def test_a_tile_found_below_the_threshold_is_taken_back_when_the_hand_is_one_short() -> None:
    whole = _whole()
    kept, unsure = _split(whole, {4: 0.4})  # the 5m, found at 0.4
    grouping = group_detections(kept)
    assert WarningCode.TILE_COUNT in grouping.codes
    found, mended = mend_count(kept, unsure, grouping)
    truth = group_detections(whole).hand
    assert mended.hand is not None and truth is not None
    assert sorted(mended.hand.concealed) == sorted(truth.concealed)
    assert mended.hand.win_tile == truth.win_tile
    assert WarningCode.TILE_COUNT not in mended.codes
    warning = next(w for w in mended.warnings if w.code is WarningCode.UNSURE_TILE)
    assert warning.indices == (13,) and warning.tiles == ("5m",) and "(40%)" in warning.message
    assert len(found) == 14 and found.names[13] == "m5" and float(found.confidences[13]) == pytest.approx(0.4)


def test_the_likeliest_unsure_tiles_that_make_a_win_are_taken() -> None:
    whole = _whole()
    kept, unsure = _split(whole, {4: 0.3, 8: 0.25})  # two tiles short: 5m and 9m
    stray = make_detections(lay_row("8m", origin=(0.0, 10 * TILE_H), confidence=0.45))
    stray = Detections(stray.boxes, stray.class_ids, stray.confidences, unsure.image_size)
    # the more confident stray 8m makes no win with either, so the pair 5m + 9m is taken
    found, mended = mend_count(kept, unsure.joined(stray), group_detections(kept))
    warning = next(w for w in mended.warnings if w.code is WarningCode.UNSURE_TILE)
    assert sorted(warning.tiles) == ["5m", "9m"]
    assert mended.hand is not None and len(found) == 14


@pytest.mark.parametrize(
    ("unsure_at", "overlapping"),
    [
        ({}, False),  # the hand is whole: nothing to take back
        ({0: 0.4, 4: 0.4, 8: 0.4}, False),  # three tiles short: not mended from unsure tiles
        ({4: 0.4}, True),  # the only unsure box lies on a kept tile: the same tile, not another
    ],
)
def test_nothing_is_taken_back_without_cause(unsure_at: dict[int, float], overlapping: bool) -> None:
    kept, unsure = _split(_whole(), unsure_at)
    if overlapping:  # the 5m's box moved onto the 6m's
        boxes = unsure.boxes.copy()
        boxes[0] = kept.boxes[4]
        unsure = Detections(boxes, unsure.class_ids, unsure.confidences, unsure.image_size)
    grouping = group_detections(kept)
    found, mended = mend_count(kept, unsure, grouping)
    assert found is kept and mended is grouping


def test_unsure_tiles_that_make_no_win_are_left_out() -> None:
    kept, unsure = _split(_whole(), {4: 0.4})
    unsure = Detections(unsure.boxes, np.array([7], np.int64), unsure.confidences, unsure.image_size)  # 8m
    grouping = group_detections(kept)
    found, mended = mend_count(kept, unsure, grouping)
    assert found is kept and mended is grouping


def _in_one_group_each(found: Detections, grouping: object) -> bool:
    indices = sorted(i for group in grouping.groups for i in group.indices)  # type: ignore[attr-defined]
    return indices == list(range(len(found)))


@pytest.mark.parametrize("first", [0.4, 0.0])  # 0: a tile sent to the API with no confidence
def test_the_least_sure_tile_whose_leaving_out_makes_a_win_is_left_out(first: float) -> None:
    # a 6p in the row (a discard in line, or a duplicate box): 15 tiles; the 1m is less sure still,
    # but only leaving out the 6p makes a win
    confidences = [first] + [0.9] * 12 + [0.5, 0.9]
    dets = make_detections(lay_row("123m456m789m234p5p6p 5p", gap=1.0, confidence=confidences))
    grouping = group_detections(dets)
    assert WarningCode.TILE_COUNT in grouping.codes
    found, mended = mend_count(dets, None, grouping)
    assert mended.hand is not None and WarningCode.TILE_COUNT not in mended.codes
    truth = group_detections(make_detections(lay_row(WIN, gap=1.0))).hand
    assert truth is not None and sorted(mended.hand.concealed) == sorted(truth.concealed)
    warning = next(w for w in mended.warnings if w.code is WarningCode.LEFT_OUT_TILE)
    assert warning.indices == (13,) and warning.tiles == ("6p",) and "(50%)" in warning.message
    assert len(found) == len(dets) and _in_one_group_each(found, mended)  # the box is kept, ignored
    assert mended.win_index is not None and found.names[mended.win_index] == "p5"


def test_a_hand_three_over_is_left_as_it_is() -> None:
    dets = make_detections(
        lay_row("123m456m789m234p5p6p7p8p 5p", gap=1.0, confidence=[0.9] * 13 + [0.3] * 3 + [0.9])
    )
    grouping = group_detections(dets)
    found, mended = mend_count(dets, None, grouping)
    assert found is dets and mended is grouping


class _ThresholdDetector:
    """Answers fixed detections above ``conf``, as the real detector filters by its threshold."""

    def __init__(self, detections: Detections) -> None:
        self.detections = detections

    def detect(self, photo: object, *, conf: float) -> Detections:
        return self.detections[self.detections.confidences >= conf]


def test_the_pipeline_takes_back_an_unsure_tile_and_says_so() -> None:
    whole = _whole()
    confidences = whole.confidences.copy()
    confidences[4] = 0.3  # below the operating threshold, above the unsure floor
    dets = Detections(whole.boxes, whole.class_ids, confidences, whole.image_size)
    width, height = whole.image_size
    photo = Photo(np.zeros((height, width, 3), np.uint8), (width, height))
    _, found, grouping = pipeline.recognize(photo, _ThresholdDetector(dets), conf=0.55)  # type: ignore[arg-type]
    assert grouping.codes == (WarningCode.UNSURE_TILE,)
    assert len(found) == 14 and grouping.hand is not None and len(grouping.hand.concealed) == 14


def test_a_tile_torn_between_two_faces_counts_as_found_and_the_hand_picks_its_face() -> None:
    # the 5m (index 4) read 6m at 0.42 with 5m at 0.4: neither reading reaches 0.55, but the detector is
    # sqrt(0.42^2 + 0.4^2) = 0.58 sure a tile is there, so it is kept and the win reads it as 5m
    whole = _whole()
    others = np.array([[(c + 1) % 27] for c in map(int, whole.class_ids)], np.int64)
    other_confidences = np.full((len(whole), 1), 0.01, np.float32)
    class_ids, confidences = whole.class_ids.copy(), whole.confidences.copy()
    class_ids[4], confidences[4], others[4, 0], other_confidences[4, 0] = 5, 0.42, 4, 0.4
    dets = Detections(whole.boxes, class_ids, confidences, whole.image_size, others, other_confidences)
    assert dets.presences[4] == pytest.approx(0.58, abs=0.01) and dets.presences[0] > dets.confidences[0]
    width, height = whole.image_size
    photo = Photo(np.zeros((height, width, 3), np.uint8), (width, height))
    _, found, grouping = pipeline.recognize(photo, _ThresholdDetector(dets), conf=0.55)  # type: ignore[arg-type]
    assert grouping.codes == (WarningCode.REREAD_TILE,)  # kept, not taken back as unsure
    assert found.names[4] == "m5" and grouping.hand is not None and len(grouping.hand.concealed) == 14


def test_presences_are_the_confidences_without_other_readings() -> None:
    whole = _whole()
    assert whole.presences is whole.confidences


def test_an_unsure_tile_of_the_row_is_taken_back_instead_of_a_lone_tile_apart() -> None:
    # the 5m was found at 0.4 only, and the grouper made up the count with a lone 7s lying below the
    # row (not_a_meld): taking back the 5m makes a win without it, the 7s left out as a stray
    tiles = lay_hand("123m456m789m234p5p", "5p", ["7s"])
    kept, unsure = _split(make_detections(tiles), {4: 0.4})
    grouping = group_detections(kept)
    assert grouping.codes == (WarningCode.NOT_A_MELD,)
    found, mended = mend_count(kept, unsure, grouping)
    assert mended.hand is not None
    assert sorted(mended.hand.concealed) == sorted(parse_tiles("123456789m23455p"))
    assert mended.codes == (WarningCode.STRAY_TILES, WarningCode.UNSURE_TILE)
    warning = next(w for w in mended.warnings if w.code is WarningCode.UNSURE_TILE)
    assert warning.tiles == ("5m",) and "made up its count" in warning.message and len(found) == len(tiles)


def test_a_legal_hand_with_a_lone_tile_apart_is_left_as_read() -> None:
    # 123m456m789m234p with a 5p apart below and the winning 5p: a legal win as read; the unsure 5p in
    # the row would make one too (the lone 5p then a stray), but a legal reading is not second-guessed
    tiles = lay_hand("123m456m789m234p5p", "5p", ["5p"])
    kept, unsure = _split(make_detections(tiles), {12: 0.4})
    grouping = group_detections(kept)
    assert WarningCode.NOT_A_MELD in grouping.codes and WarningCode.TILE_COUNT not in grouping.codes
    found, mended = mend_count(kept, unsure, grouping)
    assert found is kept and mended is grouping


def test_a_lone_tile_apart_stays_when_no_unsure_tile_makes_a_win() -> None:
    tiles = lay_hand("123m456m789m234p5p", "5p", ["7s"])
    kept, unsure = _split(make_detections(tiles), {4: 0.4})
    wrong = Detections(unsure.boxes, np.array([parse_tiles("9s")[0]]), unsure.confidences, unsure.image_size)
    grouping = group_detections(kept)
    found, mended = mend_count(kept, wrong, grouping)
    assert found is kept and mended is grouping


def test_warnings_name_every_kind_of_tile() -> None:
    # a tile taken back or left out may be a back (a concealed kong's) or an honour, not only a suited tile
    assert [warning_name(c) for c in (0, 13, 26, BACK, HONOUR)] == ["1m", "5p", "9s", "back", "honour"]
