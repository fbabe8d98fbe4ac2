"""Fitting the boxes of packed standing rows to the seams between their tiles, on rows drawn with cv2."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision.detect import rowfit
from vision.geometry.boxes import box_iou

W, H = 40, 56  # a standing tile's face, pixels


def _draw(
    centres: list[tuple[float, float]], degrees: float = 0.0, sizes: list[tuple[int, int]] | None = None
):
    """A grey table with light tiles (dark seams at their edges, a glyph each); their true boxes."""
    image = np.full((300, 900, 3), 60, np.uint8)
    truth = []
    for i, (cx, cy) in enumerate(centres):
        w, h = sizes[i] if sizes else (W, H)
        corners = cv2.boxPoints(((cx, cy), (w, h), degrees))
        cv2.fillConvexPoly(image, corners.astype(np.int32), (230, 228, 220), lineType=cv2.LINE_AA)
        cv2.polylines(image, [corners.astype(np.int32)], True, (120, 120, 115), 1, cv2.LINE_AA)
        cv2.circle(image, (int(cx), int(cy)), 6, (40, 120, 40), -1)  # the face's ink, off its edges
        truth.append([*corners.min(axis=0), *corners.max(axis=0)])
    return image, np.array(truth, np.float32)


def _widened(truth: np.ndarray, shift: float = -0.2, grow: float = 1.3) -> np.ndarray:
    """Boxes as the localiser draws packed rows: shifted toward the row's start and too wide."""
    w = truth[:, 2] - truth[:, 0]
    centre = (truth[:, 0] + truth[:, 2]) / 2 + shift * w
    return np.stack([centre - w * grow / 2, truth[:, 1], centre + w * grow / 2, truth[:, 3]], axis=1)


def _ious(fitted: np.ndarray, truth: np.ndarray) -> np.ndarray:
    return np.diag(box_iou(fitted, truth))


@pytest.mark.parametrize("square_box", [False, True], ids=["boxes taller than wide", "a box as wide as tall"])
def test_a_touching_row_is_fitted_to_its_seams(square_box: bool) -> None:
    image, truth = _draw([(100 + W * i, 150) for i in range(10)])
    boxes = _widened(truth)
    if square_box:  # the localiser's boxes on a packed row run wide: one of them wider than tall
        boxes[7, 2] += 6  # 58 px wide, 56 tall
        assert boxes[7, 2] - boxes[7, 0] > boxes[7, 3] - boxes[7, 1]
    fitted = rowfit.fit_rows(image, boxes, np.full(len(boxes), 0.9))
    assert _ious(boxes, truth).max() < 0.75
    assert _ious(fitted, truth).min() > 0.85


def test_a_slanted_touching_row_is_fitted_too() -> None:
    slope = math.tan(math.radians(8))
    image, truth = _draw([(100 + W * i, 150 + W * i * slope) for i in range(10)], degrees=8)
    boxes = _widened(truth, shift=-0.15, grow=1.25)
    fitted = rowfit.fit_rows(image, boxes, np.full(len(boxes), 0.9))
    assert _ious(fitted, truth).mean() > _ious(boxes, truth).mean() + 0.1
    assert _ious(fitted, truth).min() > 0.75


def test_a_slanted_row_with_a_box_wider_than_tall_is_left_alone() -> None:
    slope = math.tan(math.radians(15))
    image, truth = _draw([(100 + W * i, 100 + W * i * slope) for i in range(8)], degrees=15)
    boxes = _widened(truth, shift=0.0, grow=1.1)
    boxes[3, 2] = boxes[3, 0] + (boxes[3, 3] - boxes[3, 1]) * 1.1
    np.testing.assert_array_equal(rowfit.fit_rows(image, boxes, np.full(len(boxes), 0.9)), boxes)


def test_ink_beside_a_seam_is_not_taken_for_it() -> None:
    # faces with dark sticks (as bamboo tiles have) a little inside each edge, broken along their length
    image, truth = _draw([(100 + W * i, 150) for i in range(10)])
    for i in range(10):
        for side in (-1, 1):
            x = round(100 + W * i + side * 0.35 * W)
            for top in range(150 - 17, 150 + 17, 13):
                cv2.line(image, (x, top), (x, top + 8), (30, 90, 30), 2)
    boxes = _widened(truth, shift=0.0, grow=1.15)
    fitted = rowfit.fit_rows(image, boxes, np.full(len(boxes), 0.9))
    assert _ious(fitted, truth).min() > 0.85


def test_the_winning_tile_standing_apart_keeps_its_box() -> None:
    centres = [(100 + W * i, 150) for i in range(8)] + [(100 + W * 8 + 30, 150)]  # a gap of 30 px
    image, truth = _draw(centres)
    boxes = _widened(truth, shift=0.0, grow=1.1)
    fitted = rowfit.fit_rows(image, boxes, np.full(len(boxes), 0.9))
    np.testing.assert_array_equal(fitted[-1], boxes[-1])
    assert _ious(fitted[:-1], truth[:-1]).min() > 0.85


def test_a_meld_with_a_tile_turned_sideways_is_left_alone() -> None:
    sizes = [(W, H), (H, W), (W, H)]  # the middle tile of the pong lies turned
    xs = [100.0, 100 + (W + H) / 2, 100 + W + H]
    image, truth = _draw([(x, 150) for x in xs], sizes=sizes)
    boxes = _widened(truth, shift=0.0, grow=1.1)
    fitted = rowfit.fit_rows(image, boxes, np.full(len(boxes), 0.9))
    np.testing.assert_array_equal(fitted, boxes)


@pytest.mark.parametrize("count", [1, 2])
def test_too_short_a_run_is_left_alone(count: int) -> None:
    image, truth = _draw([(100 + W * i, 150) for i in range(count)])
    boxes = _widened(truth)
    np.testing.assert_array_equal(rowfit.fit_rows(image, boxes, np.full(count, 0.9)), boxes)


def test_without_a_seam_in_sight_the_midpoints_split_the_row() -> None:
    image = np.full((300, 900, 3), 200, np.uint8)  # a blank photo: no seam anywhere
    _, truth = _draw([(100 + W * i, 150) for i in range(6)])
    boxes = _widened(truth, shift=0.0, grow=1.3)
    fitted = rowfit.fit_rows(image, boxes, np.full(len(boxes), 0.9))
    np.testing.assert_allclose(fitted[1:-1, 2] - fitted[1:-1, 0], W, atol=0.5)


def _merged(boxes: np.ndarray, first: int) -> np.ndarray:
    """``boxes`` with those of tiles ``first`` and ``first + 1`` drawn as one box across both."""
    pair = boxes[first : first + 2]
    joined = np.array([[pair[:, 0].min(), pair[:, 1].min(), pair[:, 2].max(), pair[:, 3].max()]], np.float32)
    return np.concatenate([boxes[:first], joined, boxes[first + 2 :]])


@pytest.mark.parametrize("first", [0, 3, 8], ids=["row start", "middle", "row end"])
def test_a_box_across_two_touching_tiles_is_split_at_their_seam(first: int) -> None:
    image, truth = _draw([(100 + W * i, 150) for i in range(10)])
    boxes = _merged(_widened(truth, shift=-0.1, grow=1.15), first)
    split, source = rowfit.split_doubles(image, boxes, np.full(len(boxes), 0.9))
    assert len(split) == len(truth)
    np.testing.assert_array_equal(source[first : first + 2], [first, first])
    halves = split[first : first + 2]
    seam = 100 + W * (first + 0.5)  # between the two tiles' faces
    np.testing.assert_allclose([halves[0, 2], halves[1, 0]], seam, atol=2.0)
    fitted = rowfit.fit_rows(image, split, np.full(len(split), 0.9))
    assert _ious(fitted, truth).min() > 0.8


def test_a_half_on_a_tile_with_its_own_box_is_dropped() -> None:
    image, truth = _draw([(100 + W * i, 150) for i in range(10)])
    single = _widened(truth, shift=0.0, grow=1.1)
    boxes = np.concatenate([_merged(single, 4), single[5:6]])  # tile 5 has a box of its own too
    split, source = rowfit.split_doubles(image, boxes, np.full(len(boxes), 0.9))
    assert len(split) == len(truth)
    assert list(source).count(4) == 1  # the double's half on tile 4 only
    assert box_iou(split[source == 4], truth[4:5]).item() > 0.8


def test_boxes_of_single_tiles_are_not_split() -> None:
    image, truth = _draw([(100 + W * i, 150) for i in range(10)])
    boxes = _widened(truth)
    split, source = rowfit.split_doubles(image, boxes, np.full(len(boxes), 0.9))
    np.testing.assert_array_equal(split, boxes)
    np.testing.assert_array_equal(source, np.arange(len(boxes)))
    sizes = [(W, H), (H, W), (W, H)]  # a pong's middle tile lying turned is no double
    xs = [100.0, 100 + (W + H) / 2, 100 + W + H]
    image, truth = _draw([(x, 150) for x in xs], sizes=sizes)
    boxes = _widened(truth, shift=0.0, grow=1.1)
    np.testing.assert_array_equal(rowfit.split_doubles(image, boxes, np.full(3, 0.9))[0], boxes)


def _pong_turned_in_halves(beside_hand: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A pong whose middle tile lies turned, the localiser's boxes on it drawn on its two halves (each as
    tall as the turned face, a little over half its length), two hand tiles beside it on its row or
    none: the photo, the true boxes, the boxes found."""
    sizes = [(W, H), (H, W), (W, H), (W, H), (W, H)]
    xs = [100.0, 100 + (W + H) / 2, 100 + W + H, 300.0, 300.0 + W]
    count = 5 if beside_hand else 3
    image, truth = _draw([(x, 150) for x in xs[:count]], sizes=sizes[:count])
    x0, y0, x1, y1 = truth[1]
    halves = np.array([[x0 - 2, y0, x0 + 0.62 * H, y1], [x1 - 0.62 * H, y0 - 1, x1 + 2, y1 + 1]], np.float32)
    found = np.concatenate([truth[:1], halves, truth[2:]])
    return image, truth, found


@pytest.mark.parametrize("beside_hand", [True, False], ids=["beside the hand", "a row of its own"])
def test_two_boxes_on_the_halves_of_a_turned_meld_tile_are_joined_into_one(beside_hand: bool) -> None:
    image, truth, found = _pong_turned_in_halves(beside_hand)
    scores = np.array([0.9, 0.6, 0.7, 0.9, 0.9, 0.9], np.float32)[: len(found)]
    joined, kept = rowfit.join_halves(image, found, scores)
    others = list(range(3, len(found)))
    np.testing.assert_array_equal(kept, [0, 2, *others])  # the surer half stands for the tile
    assert len(joined) == len(truth)
    assert box_iou(joined[1:2], truth[1:2]).item() > 0.85
    np.testing.assert_array_equal(joined[[0, *range(2, len(joined))]], found[[0, *others]])
    read, source, fitted = rowfit.fit(image, found, scores)  # as the detector takes them
    np.testing.assert_array_equal(source, kept)
    np.testing.assert_array_equal(read, joined)
    np.testing.assert_array_equal(fitted[:3], joined[:3])  # a meld with a turned tile: not snapped to seams


@pytest.mark.parametrize("seam", [True, False], ids=["a seam between them", "no seam in sight"])
def test_two_slim_standing_tiles_boxed_short_and_overlapping_are_told_apart_by_their_seam(seam: bool) -> None:
    width = 24  # slim tiles, half as wide as tall: two of them span about a tile's length
    image, truth = _draw([(100 + width * i, 150) for i in range(6)], sizes=[(width, H)] * 6)
    if not seam:
        image = np.full_like(image, 200)  # a blank photo: nothing to tell the two tiles apart
    boxes = truth.copy()
    pair = _widened(truth[2:4], shift=0.0, grow=1.5)  # 36 px boxes overlapping by 12 ...
    pair[:, 1] += 3
    pair[:, 3] -= 3  # ... and a little short of the others
    boxes[2:4] = pair
    joined, kept = rowfit.join_halves(image, boxes, np.full(len(boxes), 0.9))
    assert list(kept) == ([0, 1, 2, 3, 4, 5] if seam else [0, 1, 2, 4, 5]) and len(joined) == len(kept)


@pytest.mark.parametrize("grow", [1.3, 1.5])
def test_overlapping_boxes_of_a_packed_row_receding_from_the_camera_are_not_joined(grow: float) -> None:
    scales = np.linspace(1.0, 0.7, 10)  # the far tiles smaller, as in a photo taken along the row
    xs = 100 + np.concatenate([[0.0], np.cumsum((scales[:-1] + scales[1:]) / 2 * W)])
    sizes = [(round(W * s), round(H * s)) for s in scales]
    image, truth = _draw([(float(x), 150) for x in xs], sizes=sizes)
    boxes = _widened(truth, shift=0.0, grow=grow)
    joined, kept = rowfit.join_halves(image, boxes, np.full(len(boxes), 0.9))
    np.testing.assert_array_equal(joined, boxes)
    np.testing.assert_array_equal(kept, np.arange(len(boxes)))


@pytest.mark.parametrize("degrees", [0.0, 12.0])
def test_two_boxes_on_the_halves_of_a_flat_meld_tile_in_a_slanted_row_are_joined(degrees: float) -> None:
    """A pong lying flat, seen from the front (each tile about as wide as tall), in a row slanted as a
    meld in front of the hand may lie in a 12 MP photo; its first tile boxed in two short halves."""
    size, turn = (52, 50), math.radians(degrees)
    centres = [(100 + 52 * i * math.cos(turn), 150 + 52 * i * math.sin(turn)) for i in range(3)]
    image, truth = _draw(centres, degrees=degrees, sizes=[size] * 3)
    x0, y0, x1, y1 = truth[0]
    half = 0.62 * (x1 - x0)
    halves = np.array([[x0, y0 + 6, x0 + half, y1 - 6], [x1 - half, y0 + 5, x1, y1 - 5]])
    found = np.concatenate([halves, truth[1:]]).astype(np.float32)
    joined, kept = rowfit.join_halves(image, found, np.array([0.7, 0.6, 0.9, 0.9], np.float32))
    np.testing.assert_array_equal(kept, [0, 2, 3])
    assert box_iou(joined[:1], truth[:1]).item() > 0.8
    np.testing.assert_array_equal(joined[1:], truth[1:])


def test_turning_level_and_fitting_rows_find_the_rows_of_one_set_of_boxes_once() -> None:
    from vision.detect import deskew
    from vision.geometry.rows import RowCache

    image, truth = _draw([(100 + W * i, 150) for i in range(10)])
    boxes, scores = _widened(truth), np.full(len(truth), 0.9, np.float32)
    rows = RowCache()
    assert deskew.turn_level(boxes, scores, 900, 300, rows) is None  # a level row
    shared = rowfit.fit(image, boxes, scores, rows)
    assert rows.found == 1 and rows.asked == 2  # the fitting took the rows the turning found
    alone = rowfit.fit(image, boxes, scores)
    for mine, theirs in zip(shared, alone, strict=True):
        np.testing.assert_array_equal(mine, theirs)
