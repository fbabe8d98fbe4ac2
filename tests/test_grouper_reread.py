"""Second readings: a hand that is no legal win is re-read with the classifier's next choices."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scoring.hand import Hand
from scoring.tiles import CLASS_NAMES
from tests.detection_builders import lay_row, make_detections
from vision.detections import Detections
from vision.grouper import WarningCode, group_detections
from vision.grouping.reread import MAX_COST, reread

Readings = dict[int, tuple[str, float]]  # detection index -> (tile, confidence)


def _with_alternatives(dets: Detections, seconds: Readings, thirds: Readings | None = None) -> Detections:
    """Give each box two other readings: the tiles named in ``seconds`` and ``thirds``, else the next
    tiles of its suit at low confidences."""
    others = np.array([[(c + 1) % 27, (c + 2) % 27] for c in map(int, dets.class_ids)], np.int64)
    confidences = np.tile(np.array([0.01, 0.005], np.float32), (len(dets), 1))
    for rank, chosen in enumerate((seconds, thirds or {})):
        for index, (tile, confidence) in chosen.items():
            others[index, rank] = CLASS_NAMES.index(tile)
            confidences[index, rank] = confidence
    return replace(dets, alternatives=others, alternative_confidences=confidences)


def test_a_misread_tile_is_read_as_its_second_choice_when_only_that_makes_a_win() -> None:
    # truth 123m 456m 789m 234p 5p + 5p: the 5m (index 4) was read 6m, with 5m a close second
    dets = make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0))
    dets = _with_alternatives(dets, {4: ("m5", 0.6)})
    grouping = group_detections(dets)
    assert grouping.hand is not None
    fixed, regrouped = reread(dets, grouping)
    assert WarningCode.REREAD_TILE in regrouped.codes
    assert fixed.names[4] == "m5" and fixed.alternatives is not None
    assert CLASS_NAMES[fixed.alternatives[4, 0]] == "m6"
    assert regrouped.hand is not None and regrouped.hand.win_tile == grouping.hand.win_tile
    warning = next(w for w in regrouped.warnings if w.code is WarningCode.REREAD_TILE)
    assert warning.indices == (4,) and warning.tiles == ("5m",) and "6m as 5m" in warning.message
    assert len(fixed) == len(dets)  # no tile gained or lost


def test_the_cheapest_re_reading_wins() -> None:
    # either 6m (index 4 or 5) read as 5m makes the win: the one whose runner-up is the closer second
    dets = make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0))
    dets = _with_alternatives(dets, {4: ("m5", 0.5), 5: ("m5", 0.85)})
    fixed, regrouped = reread(dets, group_detections(dets))
    assert fixed.names.count("m5") == 1 and fixed.names.count("m6") == 1
    assert [w.indices for w in regrouped.warnings if w.code is WarningCode.REREAD_TILE] == [(5,)]


def test_two_tiles_are_re_read_when_one_is_not_enough() -> None:
    dets = make_detections(lay_row("123m466m799m234p5p 5p", gap=1.0))
    dets = _with_alternatives(dets, {4: ("m5", 0.5), 8: ("m8", 0.5)})
    _, regrouped = reread(dets, group_detections(dets))
    truth = group_detections(make_detections(lay_row("123m456m789m234p5p 5p", gap=1.0))).hand
    assert regrouped.hand is not None and truth is not None
    assert sorted(regrouped.hand.concealed) == sorted(truth.concealed)
    warning = next(w for w in regrouped.warnings if w.code is WarningCode.REREAD_TILE)
    assert sorted(warning.indices) == [4, 8]


@pytest.mark.parametrize(
    ("layout", "seconds"),
    [
        ("123m456m789m234p5p 5p", {4: ("m6", 0.8)}),  # already a win: nothing changes
        ("123m466m789m234p5p 5p", {4: ("m5", 0.9 / np.exp(MAX_COST) / 2)}),  # runner-up far too unlikely
        ("123m466m789m234p 5p", {4: ("m5", 0.6)}),  # a tile missing: no re-reading mends the count
    ],
)
def test_nothing_is_re_read_without_cause(layout: str, seconds: dict[int, tuple[str, float]]) -> None:
    dets = _with_alternatives(make_detections(lay_row(layout, gap=1.0)), seconds)
    grouping = group_detections(dets)
    fixed, regrouped = reread(dets, grouping)
    assert fixed is dets and regrouped is grouping


def test_detections_without_alternatives_are_left_as_read() -> None:
    dets = make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0))
    grouping = group_detections(dets)
    assert reread(dets, grouping) == (dets, grouping)


def test_three_tiles_are_re_read_when_two_are_not_enough() -> None:
    dets = make_detections(lay_row("123m466m799m234p6p 5p", gap=1.0))
    dets = _with_alternatives(dets, {4: ("m5", 0.5), 8: ("m8", 0.5), 12: ("p5", 0.4)})
    _, regrouped = reread(dets, group_detections(dets))
    assert regrouped.hand is not None
    assert sorted(regrouped.hand.concealed) == sorted(Hand.parse("123m456m789m234p5p5p").concealed)
    warning = next(w for w in regrouped.warnings if w.code is WarningCode.REREAD_TILE)
    assert sorted(warning.indices) == [4, 8, 12]


def test_a_tile_is_re_read_as_its_third_choice_when_the_second_makes_no_win() -> None:
    dets = make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0))
    dets = _with_alternatives(dets, {4: ("m7", 0.6)}, {4: ("m5", 0.3)})
    fixed, regrouped = reread(dets, group_detections(dets))
    assert fixed.names[4] == "m5"
    warning = next(w for w in regrouped.warnings if w.code is WarningCode.REREAD_TILE)
    assert warning.tiles == ("5m",) and "6m as 5m" in warning.message


def test_a_re_read_meld_tile_completes_its_pong() -> None:
    # the pong 777p apart from the hand, one of its tiles misread 1p: read again, the pong is whole
    dets = make_detections(lay_row("123m456m789m5p 5p  717p", gap=1.0))
    before = group_detections(dets)
    assert before.hand is not None and not before.hand.melds
    dets = _with_alternatives(dets, {12: ("p7", 0.4)})
    fixed, regrouped = reread(dets, before)
    assert fixed.names[12] == "p7"
    assert regrouped.hand is not None and [m.tile for m in regrouped.hand.melds] == [CLASS_NAMES.index("p7")]


def test_reread_swaps_first_and_other_readings() -> None:
    dets = _with_alternatives(make_detections(lay_row("123m", gap=1.0)), {1: ("p7", 0.3)}, {1: ("s4", 0.1)})
    swapped = dets.reread(1)
    assert swapped.names == ["m1", "p7", "m3"]
    assert swapped.confidences[1] == pytest.approx(0.3)
    assert swapped.alternatives is not None and CLASS_NAMES[swapped.alternatives[1, 0]] == "m2"
    assert swapped.reread(1).names == dets.names
    third = dets.reread(1, rank=1)
    assert third.names == ["m1", "s4", "m3"] and third.confidences[1] == pytest.approx(0.1)
    assert dets[np.array([True, False, True])].alternatives.shape == (2, 2)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="alternative"):
        make_detections(lay_row("123m")).reread(0)
    with pytest.raises(ValueError, match="go together"):
        replace(dets, alternative_confidences=None)
    with pytest.raises(ValueError, match="alternative"):
        replace(dets, alternatives=np.zeros((3, 2), np.int64), alternative_confidences=np.zeros((3, 1)))
