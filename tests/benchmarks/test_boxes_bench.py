"""The box-fit benchmark's measures on hand-built rows: direction, best-box IoU, shift and width."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from bench_loader import load_benchmark

bench = load_benchmark("bench_boxes")

ROW = np.array([[100 + 40 * i, 50, 140 + 40 * i, 110] for i in range(4)], np.float64)  # touching, 40 wide


def test_a_row_runs_from_its_first_tile_to_its_last() -> None:
    np.testing.assert_allclose(bench.row_direction(ROW), [1.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(bench.row_direction(ROW[::-1]), [-1.0, 0.0], atol=1e-9)
    column = ROW[:, [1, 0, 3, 2]]  # the same row standing on end
    np.testing.assert_allclose(bench.row_direction(column), [0.0, 1.0], atol=1e-9)


def test_boxes_shifted_toward_the_start_and_widened_are_measured_so() -> None:
    found = ROW.copy()
    found[:, 0] -= 20  # half a tile wider on the row's start side: centre 10 px (0.25 W) back, 1.5 wide
    fit = bench.best_boxes(ROW, found, np.array([1.0, 0.0]))
    np.testing.assert_allclose(fit.shift, -0.25)
    np.testing.assert_allclose(fit.width_ratio, 1.5)
    np.testing.assert_allclose(fit.iou, 40 / 60)


def test_a_tile_no_box_touches_has_iou_zero_and_no_shift() -> None:
    fit = bench.best_boxes(ROW, ROW[:3], np.array([1.0, 0.0]))
    np.testing.assert_allclose(fit.iou, [1, 1, 1, 0])
    assert np.isnan(fit.shift[3]) and np.isnan(fit.width_ratio[3]) and fit.shift[0] == 0
    assert (bench.best_boxes(ROW, np.zeros((0, 4)), np.array([1.0, 0.0])).iou == 0).all()


@pytest.mark.parametrize(
    ("found", "classes", "expected"),
    [
        (ROW, [1, 2, 3, 4], Counter({1: 1, 2: 1, 4: 1})),  # the third tile is not the player's
        (ROW + np.array([300, 0, 300, 0]), [1, 2, 3, 4], Counter()),  # boxes on no tile count nowhere
        (ROW[:1] + np.array([0, 0, 20, 0]), [5], Counter({5: 1})),  # over two tiles: on the likelier
    ],
    ids=["on-tiles", "elsewhere", "straddling"],
)
def test_found_boxes_count_on_the_players_tiles_they_overlap_most(found, classes, expected) -> None:  # type: ignore[no-untyped-def]
    player = np.array([True, True, False, True])
    assert bench.player_classes(ROW, player, np.asarray(found, np.float64), np.array(classes)) == expected


def test_scenes_rendered_without_outlines_are_refused_when_measured_against_them(tmp_path: Path) -> None:
    box = {"cls": 0, "box": [10, 10, 40, 50], "role": "hand", "group": -1, "tile": "m1", "win": False}
    (tmp_path / "scenes.jsonl").write_text(json.dumps({"image": "images/a.jpg", "boxes": [box]}) + "\n")
    with pytest.raises(SystemExit, match="no 'outline' boxes"):
        bench.measure(tmp_path, detector=None, truth_box="outline")
