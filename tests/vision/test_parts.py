"""Boxes on parts of a tile (``vision.detect.parts``): a pip, a half, a sliver, dropped or joined before
reading."""

from __future__ import annotations

import numpy as np

from vision.detect.parts import join_halves, parts, without_parts


def _row(count: int = 6, width: float = 40.0, height: float = 54.0, x0: float = 100.0, y0: float = 200.0):
    boxes = np.array(
        [[x0 + i * width, y0, x0 + (i + 1) * width - 1, y0 + height] for i in range(count)], np.float32
    )
    return boxes, np.full(count, 0.9, np.float32), np.zeros(count, np.int64)


def _with(boxes, scores, classes, extra, score=0.8):  # type: ignore[no-untyped-def]
    extra = np.asarray(extra, np.float32).reshape(-1, 4)
    return (
        np.concatenate([boxes, extra]),
        np.concatenate([scores, np.full(len(extra), score, np.float32)]),
        np.concatenate([classes, np.zeros(len(extra), np.int64)]),
    )


def test_a_row_of_whole_tiles_is_left_as_it_is() -> None:
    boxes, scores, classes = _row()
    kept = without_parts(boxes, scores, classes)
    np.testing.assert_array_equal(kept[0], boxes)


def test_a_pip_boxed_inside_its_tile_is_no_tile() -> None:
    boxes, scores, classes = _with(*_row(), [[185, 215, 198, 228]])  # a 筒 pip inside the third tile
    assert parts(boxes, scores).tolist() == [False] * 6 + [True]
    kept, _, _ = without_parts(boxes, scores, classes)
    assert len(kept) == 6


def test_a_box_a_fraction_of_its_neighbours_size_is_no_tile() -> None:
    row = _row(count=4)
    boxes, scores, classes = _with(*row, [[262, 220, 276, 236]])  # just past the row's end, a pip's size
    assert parts(boxes, scores)[-1]
    assert len(without_parts(boxes, scores, classes)[0]) == 4


def test_a_lone_small_tile_far_from_others_is_kept() -> None:
    boxes, scores, _ = _with(*_row(count=4), [[600, 500, 614, 518]])  # a far tile, nothing near it
    assert not parts(boxes, scores).any()


def test_a_tile_inside_a_box_over_two_tiles_is_left_to_the_row_fitting() -> None:
    boxes, scores, classes = _row(count=4)
    double = [[100, 200, 179, 254]]  # over the first two tiles: each tile half its area
    boxes, scores, classes = _with(boxes, scores, classes, double)
    assert not parts(boxes, scores).any()


def test_a_four_pin_boxed_as_its_upper_and_lower_halves_is_one_tile() -> None:
    boxes, scores, classes = _row(count=5)
    # the third tile (x 180-219) has no box of its own: two boxes on its halves, each read a 2 筒
    keep = np.array([True, True, False, True, True])
    halves = [[181, 201, 218, 226], [181, 228, 218, 253]]
    boxes, scores, classes = _with(boxes[keep], scores[keep], classes[keep], halves, score=0.7)
    joined, joined_scores, _ = without_parts(boxes, scores, classes)
    assert len(joined) == 5
    tile = joined[np.argmin(np.abs((joined[:, 0] + joined[:, 2]) / 2 - 200))]
    np.testing.assert_allclose(tile, [181, 201, 218, 253])
    assert joined_scores.max() == np.float32(0.9)


def test_two_whole_tiles_stacked_are_not_halves() -> None:
    top, scores, classes = _row(count=4)
    bottom = top + np.array([0, 56, 0, 56], np.float32)  # a second row of whole tiles right under the first
    boxes = np.concatenate([top, bottom])
    joined, _, _ = join_halves(boxes, np.concatenate([scores, scores]), np.concatenate([classes, classes]))
    assert len(joined) == 8


def test_a_tile_turned_sideways_in_a_meld_is_kept() -> None:
    boxes, scores, classes = _with(*_row(count=3), [[221, 214, 275, 254]])  # wider than tall, as large
    assert not parts(boxes, scores).any()
    assert len(without_parts(boxes, scores, classes)[0]) == 4
