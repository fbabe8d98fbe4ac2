"""Second readings: a hand that is no legal win is re-read with the classifier's runner-up choices."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scoring.tiles import CLASS_NAMES
from tests.detection_builders import lay_row, make_detections
from vision.detections import Detections
from vision.grouper import WarningCode, group_detections
from vision.grouping.reread import MAX_COST, reread


def _with_runner_up(dets: Detections, seconds: dict[int, tuple[str, float]]) -> Detections:
    """Give each box a runner-up: the tile named in ``seconds`` (index -> (tile, confidence)), else the
    next tile of its suit at a low confidence."""
    runner = np.array([(int(c) + 1) % 27 for c in dets.class_ids], np.int64)
    runner_conf = np.full(len(dets), 0.01, np.float32)
    for index, (tile, confidence) in seconds.items():
        runner[index] = CLASS_NAMES.index(tile)
        runner_conf[index] = confidence
    return replace(dets, runner_up=runner, runner_up_confidences=runner_conf)


def test_a_misread_tile_is_read_as_its_runner_up_when_only_that_makes_a_win() -> None:
    # truth 123m 456m 789m 234p 5p + 5p: the 5m (index 4) was read 6m, with 5m a close second
    dets = make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0))
    dets = _with_runner_up(dets, {4: ("m5", 0.6)})
    grouping = group_detections(dets)
    assert grouping.hand is not None
    fixed, regrouped = reread(dets, grouping)
    assert WarningCode.REREAD_TILE in regrouped.codes
    assert fixed.names[4] == "m5" and fixed.runner_up is not None and CLASS_NAMES[fixed.runner_up[4]] == "m6"
    assert regrouped.hand is not None and regrouped.hand.win_tile == grouping.hand.win_tile
    warning = next(w for w in regrouped.warnings if w.code is WarningCode.REREAD_TILE)
    assert warning.indices == (4,) and warning.tiles == ("m5",) and "m6 as m5" in warning.message
    assert len(fixed) == len(dets)  # no tile gained or lost


def test_the_cheapest_re_reading_wins() -> None:
    # either 6m (index 4 or 5) read as 5m makes the win: the one whose runner-up is the closer second
    dets = make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0))
    dets = _with_runner_up(dets, {4: ("m5", 0.5), 5: ("m5", 0.85)})
    fixed, regrouped = reread(dets, group_detections(dets))
    assert fixed.names.count("m5") == 1 and fixed.names.count("m6") == 1
    assert [w.indices for w in regrouped.warnings if w.code is WarningCode.REREAD_TILE] == [(5,)]


def test_two_tiles_are_re_read_when_one_is_not_enough() -> None:
    dets = make_detections(lay_row("123m466m799m234p5p 5p", gap=1.0))
    dets = _with_runner_up(dets, {4: ("m5", 0.5), 8: ("m8", 0.5)})
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
    dets = _with_runner_up(make_detections(lay_row(layout, gap=1.0)), seconds)
    grouping = group_detections(dets)
    fixed, regrouped = reread(dets, grouping)
    assert fixed is dets and regrouped is grouping


def test_detections_without_runner_ups_are_left_as_read() -> None:
    dets = make_detections(lay_row("123m466m789m234p5p 5p", gap=1.0))
    grouping = group_detections(dets)
    assert reread(dets, grouping) == (dets, grouping)


def test_reread_swaps_first_and_second_readings() -> None:
    dets = _with_runner_up(make_detections(lay_row("123m", gap=1.0)), {1: ("p7", 0.3)})
    swapped = dets.reread(1)
    assert swapped.names == ["m1", "p7", "m3"]
    assert swapped.confidences[1] == pytest.approx(0.3)
    assert swapped.runner_up is not None and CLASS_NAMES[swapped.runner_up[1]] == "m2"
    assert swapped.reread(1).names == dets.names
    assert len(dets[np.array([True, False, True])].runner_up) == 2  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="runner-up"):
        make_detections(lay_row("123m")).reread(0)
    with pytest.raises(ValueError, match="go together"):
        replace(dets, runner_up_confidences=None)
