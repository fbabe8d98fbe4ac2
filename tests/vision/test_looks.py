"""Two-pass detection of full-resolution photos: the geometry of the looks, and a detector running it.

The detector here has a fake localiser that sees only tiles at least ``LEGIBLE_PX`` tall in its
input, as a real one does; everything else (looks, windows, seams, merging, mapping back) is the
product's own code.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vision.detect import looks
from vision.detect.detector import Detector
from vision.detect.letterbox import letterbox, unletterbox
from vision.geometry.boxes import box_iou


def test_whole_photo_look_scales_the_long_side() -> None:
    look = looks.whole_photo(4032, 3024, 384)
    assert look.region == (0, 0, 4032, 3024)
    assert look.input_size == (384, 288)


def test_typical_tile_is_the_median_short_side_of_confident_boxes() -> None:
    boxes = np.array(
        [[0, 0, 40, 50], [0, 0, 30, 60], [0, 0, 100, 20], [0, 0, 35, 45], [0, 0, 25, 45], [0, 0, 500, 500]],
        np.float32,
    )
    scores = np.array([0.9, 0.8, 0.7, 0.9, 0.9, 0.1], np.float32)
    assert looks.typical_tile(boxes, scores) == 30.0  # short sides 40, 30, 20, 35, 25; the weak box ignored
    assert looks.typical_tile(boxes[:0], scores[:0]) is None
    assert looks.typical_tile(boxes, np.full(6, 0.1, np.float32)) is None
    assert looks.typical_tile(boxes[:3], scores[:3]) is None  # too few to say where the hand is


def test_region_is_widened_by_two_tiles_and_kept_in_the_photo() -> None:
    boxes = np.array([[100, 200, 140, 250], [900, 210, 940, 260], [0, 0, 10, 10]], np.float32)
    scores = np.array([0.9, 0.9, 0.05], np.float32)
    assert looks.region_around(boxes, scores, 40.0, 1000, 1000) == (20, 120, 1000, 340)


@pytest.mark.parametrize(("region", "tile"), [((0, 0, 3000, 800), 90.0), ((500, 100, 900, 400), 50.0)])
def test_closer_looks_cover_the_region_at_the_trained_scale(
    region: tuple[int, int, int, int], tile: float
) -> None:
    found = looks.closer_looks(region, tile, max_side=640)
    for look in found:
        assert look.scale == pytest.approx(looks.TILE_PX / tile)
        assert max(look.input_size) <= 640 + 1
    covered = np.zeros((region[3], region[2]), bool)
    for look in found:
        x1, y1, x2, y2 = look.region
        covered[y1:y2, x1:x2] = True
    assert covered[region[1] : region[3], region[0] : region[2]].all()
    # neighbours overlap by at least one tile, so a tile cut by one window is whole in another
    xs = sorted({look.region[0] for look in found})
    rights = sorted({look.region[2] for look in found})
    for left, right in zip(xs[1:], rights[:-1], strict=False):
        assert right - left >= tile


@pytest.mark.parametrize(
    ("width", "height", "side"), [(4032, 3024, 2048), (1512, 2016, 1024), (800, 600, 1024)]
)
def test_a_search_covers_the_whole_photo_at_its_scale_in_overlapping_windows(
    width: int, height: int, side: int
) -> None:
    found = looks.search_looks(width, height, side, max_side=1024)
    scale = side / max(width, height)
    covered = np.zeros((height, width), bool)
    for look in found:
        assert look.scale == pytest.approx(scale)
        assert max(look.input_size) <= 1024 + 1
        x1, y1, x2, y2 = look.region
        covered[y1:y2, x1:x2] = True
    assert covered.all()
    if len(found) > 1:  # neighbours share the overlap's photo pixels
        lefts = sorted({look.region[0] for look in found})
        rights = sorted({look.region[2] for look in found})
        for left, right in zip(lefts[1:], rights[:-1], strict=False):
            assert right - left >= looks.SEARCH_OVERLAP / scale - 1


def test_a_closer_look_never_enlarges_more_than_the_limit() -> None:
    (look,) = looks.closer_looks((0, 0, 100, 100), tile=5.0, max_side=1024)
    assert look.scale == looks.MAX_UPSCALE


def test_boxes_touching_an_inner_edge_are_cut_at_a_seam() -> None:
    look = looks.Look((100, 0, 500, 300), 1.0)
    boxes = np.array([[101, 10, 140, 60], [200, 10, 240, 60], [460, 250, 500, 300]], np.float32)
    # left edge 100 is inside the photo; the right edge 500 is the photo's border
    np.testing.assert_array_equal(looks.cut_at_seam(boxes, look, 500, 300), [True, False, False])
    np.testing.assert_array_equal(looks.cut_at_seam(boxes, look, 800, 300), [True, False, True])


def test_merge_keeps_one_box_per_tile_and_class() -> None:
    boxes = np.array([[0, 0, 40, 50], [1, 1, 41, 51], [0, 0, 40, 50], [100, 0, 140, 50]], np.float32)
    scores = np.array([0.8, 0.9, 0.7, 0.6], np.float32)
    classes = np.array([0, 0, 1, 0])
    np.testing.assert_array_equal(looks.merge(boxes, scores, classes, 0.6), [1, 2, 3])


@pytest.mark.parametrize("shape", [(288, 384), (384, 384), (96, 640)])
def test_letterbox_to_a_rectangle_round_trips(shape: tuple[int, int]) -> None:
    pixels = np.zeros((750, 1000, 3), np.uint8)
    canvas, gain, pad = letterbox(pixels, shape)
    assert canvas.shape[:2] == shape
    box = np.array([[100, 200, 300, 400]], np.float32)
    mapped = box * gain + np.array([pad[0], pad[1], pad[0], pad[1]], np.float32)
    np.testing.assert_allclose(unletterbox(mapped, gain, pad, 1000, 750), box, atol=1.0)


LEGIBLE_PX = 14.0  # the fake localiser misses tiles shorter than this in its input


class _FakeLocaliser(Detector):
    """A Detector whose ONNX run is replaced: it reports the true tiles it can see in its input."""

    def __init__(self, truth: np.ndarray, imgsz: int = 384) -> None:
        self.truth = truth
        self.imgsz = imgsz
        self.dynamic = True

        self.classifier = None
        self.fit_rows = False  # the looks alone (vision.detect.rowfit is tested on drawn rows)
        self.calls: list[tuple[int, int]] = []
        self.scales: list[float] = []  # of each look, photo pixels to input pixels
        self.ious: list[float] = []  # the suppression threshold of each run
        self._origin = (0.0, 0.0)

    def _look(self, pixels, look, conf, iou, *, seams=False):  # type: ignore[no-untyped-def]
        self._origin = (float(look.region[0]), float(look.region[1]))
        self.scales.append(look.scale)
        return super()._look(pixels, look, conf, iou, seams=seams)

    def _infer(self, pixels, shape, conf, iou):  # type: ignore[no-untyped-def]
        self.calls.append(shape)
        self.ious.append(iou)
        height, width = pixels.shape[:2]
        gain = min(shape[0] / height, shape[1] / width)
        ox, oy = self._origin
        boxes = self.truth - np.array([ox, oy, ox, oy], np.float32)
        clipped = boxes.copy()
        clipped[:, [0, 2]] = clipped[:, [0, 2]].clip(0, width)
        clipped[:, [1, 3]] = clipped[:, [1, 3]].clip(0, height)
        visible = (clipped[:, 2] - clipped[:, 0] > 2) & (clipped[:, 3] - clipped[:, 1] > 2)
        legible = (clipped[:, 3] - clipped[:, 1]) * gain >= LEGIBLE_PX
        keep = visible & legible
        found = clipped[keep]
        return found, np.full(len(found), 0.9, np.float32), np.zeros(len(found), np.int64)


def _hand_row(x0: float, y0: float, tile_w: float, count: int = 14) -> np.ndarray:
    return np.array(
        [
            [x0 + i * tile_w * 1.05, y0, x0 + i * tile_w * 1.05 + tile_w, y0 + tile_w * 1.35]
            for i in range(count)
        ],
        np.float32,
    )


def test_a_small_hand_in_a_large_photo_is_found_by_a_closer_look() -> None:
    truth = _hand_row(1400, 1500, 90.0)  # 12 MP photo, the hand a third of its width
    pixels = np.zeros((3024, 4032, 3), np.uint8)
    detector = _FakeLocaliser(truth)
    boxes, _, _, close_up = detector.find_tiles(pixels, 0.25, 0.6)
    assert len(detector.calls) >= 3  # the first look and the search found nothing usable; then closer
    assert not close_up  # its tiles were small: a view of the whole table
    assert len(boxes) == len(truth)
    ious = box_iou(boxes, truth)
    assert (ious.max(axis=1) > 0.95).all() and (ious.max(axis=0) > 0.95).all()


def test_a_photo_whose_tiles_are_large_is_read_as_a_close_up_whatever_else_it_holds() -> None:
    # four large tiles, and small tile-like things (book spines, keys) too small to see at the first look:
    # the route follows the tiles seen, so nothing is searched for behind them
    things = _hand_row(1400, 2500, 30.0)
    large = np.array([[200 + 500 * i, 300, 500 + 500 * i, 700] for i in range(4)], np.float32)
    detector = _FakeLocaliser(np.concatenate([things, large]))
    boxes, _, _, close_up = detector.find_tiles(np.zeros((3024, 4032, 3), np.uint8), 0.25, 0.6)
    assert close_up and len(detector.calls) == 1
    assert len(boxes) == len(large) and (box_iou(boxes, large).max(axis=0) > 0.95).all()


def test_a_photo_of_a_few_large_tiles_is_read_in_its_first_look() -> None:
    tiles = np.array([[600 + 700 * i, 1000, 1100 + 700 * i, 1700] for i in range(4)], np.float32)
    detector = _FakeLocaliser(tiles)
    boxes, _, _, close_up = detector.find_tiles(np.zeros((3024, 4032, 3), np.uint8), 0.25, 0.6)
    assert len(box_iou(boxes, tiles)) == 4 and (box_iou(boxes, tiles).max(axis=0) > 0.95).all()
    # the first look showed them legible: read as a close-up is, no search, no closer look
    assert close_up and [max(shape) for shape in detector.calls] == [looks.close_up_side(384)]


def test_a_hand_cut_into_windows_comes_back_without_duplicates() -> None:
    truth = _hand_row(300, 1500, 70.0, count=40)  # tiles across the table: wider than one window
    pixels = np.zeros((3024, 4032, 3), np.uint8)
    detector = _FakeLocaliser(truth)
    boxes, *_ = detector.find_tiles(pixels, 0.25, 0.6)
    windows = detector.calls[2:]
    assert len(windows) >= 2
    assert len(boxes) == len(truth)
    assert (box_iou(boxes, truth).max(axis=0) > 0.95).all()


def test_a_large_photo_suppresses_overlapping_boxes_harder_than_a_close_up() -> None:
    from vision.detect.detector import DEFAULT_IOU, LARGE_PHOTO_IOU

    close_up = _FakeLocaliser(_hand_row(20, 200, 40.0))
    assert len(close_up.detect(np.zeros((480, 640, 3), np.uint8))) == 14
    large = _FakeLocaliser(_hand_row(1400, 1500, 90.0))
    assert len(large.detect(np.zeros((3024, 4032, 3), np.uint8))) == 14
    assert set(close_up.ious) == {DEFAULT_IOU}
    # the first look at every photo suppresses as a close-up's does; the closer looks at small tiles harder
    assert large.ious[0] == DEFAULT_IOU and set(large.ious[1:]) == {LARGE_PHOTO_IOU} != {DEFAULT_IOU}
    asked = _FakeLocaliser(_hand_row(1400, 1500, 90.0))
    asked.detect(np.zeros((3024, 4032, 3), np.uint8), iou=0.7)
    assert set(asked.ious) == {0.7}


def test_the_detector_looks_only_at_the_view_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    from vision.detect.deskew import turned
    from vision.detect.view import View

    with pytest.raises(ValueError, match="turned or enlarged"):
        View(turn=turned(640, 480, 45.0), enlarged=True)
    pixels = np.zeros((480, 640, 3), np.uint8)
    side = looks.close_up_side(384)
    as_it_is = (looks.round_up(side * 480 / 640), side)  # the look at the photo unturned
    detector = _FakeLocaliser(_hand_row(20, 200, 40.0))
    detector.detect(pixels, View(turn=turned(640, 480, 45.0)))
    assert detector.calls and as_it_is not in detector.calls  # only the turned view was looked at

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the detector decided a turn")

    slanted = _hand_row(1400, 1500, 90.0)
    slanted[:, [1, 3]] += np.arange(len(slanted), dtype=np.float32)[:, None] * 60  # rows running slantwise
    large = _FakeLocaliser(slanted)
    monkeypatch.setattr("vision.detect.deskew.turn_level", never)
    assert len(large.detect(np.zeros((3024, 4032, 3), np.uint8))) == len(slanted)


def test_a_close_up_is_looked_at_larger_than_the_input_size() -> None:
    assert looks.close_up_side(384) == 448 and looks.close_up_side(640) > 640


def test_a_close_up_takes_one_look() -> None:
    truth = _hand_row(20, 200, 40.0)
    detector = _FakeLocaliser(truth)
    boxes, *_ = detector.find_tiles(np.zeros((480, 640, 3), np.uint8), 0.25, 0.6)
    side = looks.close_up_side(384)  # the long side; the short one in proportion, rounded up to the stride
    assert detector.calls == [(looks.round_up(side * 480 / 640), side)]
    assert len(boxes) == len(truth)


def test_an_enlarged_second_look_at_a_close_up_is_one_look_at_512_px() -> None:
    truth = _hand_row(20, 200, 40.0)
    detector = _FakeLocaliser(truth)
    boxes, *_ = detector.find_tiles(np.zeros((480, 640, 3), np.uint8), 0.25, 0.6, enlarged=True)
    assert looks.close_up_side(384, enlarged=True) == 512
    assert detector.calls == [(384, 512)]
    assert len(boxes) == len(truth)


def test_only_a_close_up_can_be_looked_at_again_and_only_by_a_model_of_any_shape() -> None:
    from vision.detect.deskew import turned
    from vision.detect.view import ONE_VIEW, View, Views

    detector = _FakeLocaliser(_hand_row(20, 200, 40.0))
    close_up = detector.locate(np.zeros((480, 640, 3), np.uint8))
    assert close_up.close_up
    assert detector.views(close_up) == Views(second=(looks.SecondLook.TURNED, looks.SecondLook.ENLARGED))
    # the same hand twice as large in a larger photo is a close-up too: the tiles decide, not the pixels
    large = _FakeLocaliser(_hand_row(40, 400, 80.0)).locate(np.zeros((960, 1280, 3), np.uint8))
    assert large.close_up and detector.views(large) == detector.views(close_up)
    whole_table = _FakeLocaliser(_hand_row(1400, 1500, 90.0)).locate(np.zeros((3024, 4032, 3), np.uint8))
    assert not whole_table.close_up
    assert detector.views(whole_table) == Views(level=True)  # read turned level first, and looked at closer
    turned_view = detector.locate(np.zeros((480, 640, 3), np.uint8), View(turn=turned(640, 480, 30.0)))
    assert detector.views(turned_view).second == ()  # a second look is taken of the view as it is only
    detector.dynamic = False
    assert detector.views(close_up) == ONE_VIEW


def test_a_model_of_one_input_shape_looks_at_that_shape() -> None:
    truth = _hand_row(20, 200, 40.0)
    detector = _FakeLocaliser(truth, imgsz=448)
    detector.dynamic = False
    detector.find_tiles(np.zeros((480, 640, 3), np.uint8), 0.25, 0.6)
    assert detector.calls == [(448, 448)] and detector.scales == [448 / 640]  # a close-up: one look
    detector = _FakeLocaliser(truth, imgsz=320)
    detector.dynamic = False
    detector.find_tiles(np.zeros((480, 640, 3), np.uint8), 0.25, 0.6)
    assert detector.calls[0] == (320, 320) and detector.scales[0] == 320 / 640  # not a close-up at 320


def test_a_close_up_of_small_tiles_looks_closer_but_is_never_searched() -> None:
    truth = _hand_row(40, 200, 22.0)  # 22 px tiles in a 640 px photo: 15 px at the close-up look
    detector = _FakeLocaliser(truth)
    boxes, *_ = detector.find_tiles(np.zeros((480, 640, 3), np.uint8), 0.25, 0.6)
    side = looks.close_up_side(384)
    assert detector.calls[0] == (looks.round_up(side * 480 / 640), side)
    assert len(detector.calls) == 2 and max(detector.calls[1]) < 1024  # one closer look at the region
    assert len(boxes) == len(truth)


@pytest.mark.parametrize(
    ("tile", "measured", "scale", "expected"),
    [
        (100.0, 60.0, 0.36, 60.0),  # tiles seen at 21.6 px, not 36: look again sized by the measure
        (100.0, 97.0, 0.36, None),  # seen at 35 px: within SIZE_SLACK, the look stands
        (100.0, None, 0.36, None),  # nothing measured
        (10.0, 8.0, looks.MAX_UPSCALE, None),  # as close as the limit allows already
        (30.0, 30.0 * 1.5, 1.2, 45.0),  # tiles seen larger than trained: a farther look
    ],
    ids=["too-small", "stands", "nothing", "at-the-limit", "too-large"],
)
def test_a_closer_look_is_sized_again_by_the_tiles_it_measured(
    tile: float, measured: float | None, scale: float, expected: float | None
) -> None:
    assert looks.refined_tile(tile, measured, scale) == expected


class _InflatingLocaliser(_FakeLocaliser):
    """Draws a tile's box larger about its centre the smaller the tile is in its input, as the localiser
    does with tiles far below its trained scale (as measured on 12 MP packed rows: 1.4 times at 15 px,
    1.17 at 27 px, true from ``looks.TILE_PX`` on)."""

    def _infer(self, pixels, shape, conf, iou):  # type: ignore[no-untyped-def]
        boxes, scores, classes = super()._infer(pixels, shape, conf, iou)
        gain = min(shape[0] / pixels.shape[0], shape[1] / pixels.shape[1])
        side = (boxes[:, 2] - boxes[:, 0]) * gain
        grow = np.clip(1 + 0.4 * (looks.TILE_PX - side) / 21, 1, 2.5)[:, None]
        centre, half = (boxes[:, :2] + boxes[:, 2:]) / 2, (boxes[:, 2:] - boxes[:, :2]) / 2
        return np.concatenate([centre - half * grow, centre + half * grow], axis=1), scores, classes


def test_tiles_measured_too_large_at_the_first_look_are_looked_at_again_at_the_trained_scale() -> None:
    truth = _hand_row(1400, 1500, 90.0)  # seen 14 px wide at the first look (384 px), drawn too large
    detector = _InflatingLocaliser(truth)
    boxes, *_ = detector.find_tiles(np.zeros((3024, 4032, 3), np.uint8), 0.25, 0.6)
    first_closer, last = 90.0 * detector.scales[2], 90.0 * detector.scales[-1]  # after the look and search
    assert first_closer < 0.8 * looks.TILE_PX  # sized by the inflated boxes of the search
    assert 0.85 * looks.TILE_PX <= last <= looks.TILE_PX * looks.SIZE_SLACK  # its own boxes, barely inflated
    assert (box_iou(truth, boxes).max(axis=1) > 0.8).all()


class _BigTileBlind(_FakeLocaliser):
    """A fake localiser that, like the shipped one on frame-filling close-ups, boxes tiles much larger than it
    trained on two by two (one box spanning a pair) and sees them one by one at the trained scale."""

    def _infer(self, pixels, shape, conf, iou):  # type: ignore[no-untyped-def]
        found, scores, classes = super()._infer(pixels, shape, conf, iou)
        gain = min(shape[0] / pixels.shape[0], shape[1] / pixels.shape[1])
        if len(found) < 2 or float(np.median(found[:, 2] - found[:, 0])) * gain < 80:
            return found, scores, classes
        pairs = [found[i : i + 2] for i in range(0, len(found), 2)]
        merged = np.array([[p[:, 0].min(), p[:, 1].min(), p[:, 2].max(), p[:, 3].max()] for p in pairs])
        return merged.astype(np.float32), scores[: len(merged)], classes[: len(merged)]


def test_tiles_larger_than_trained_on_are_looked_at_again_reduced_to_the_trained_size() -> None:
    big = np.array([[40 + 200 * i, 150, 190 + 200 * i, 350] for i in range(3)], np.float32)  # 150 px wide
    detector = _BigTileBlind(big)
    boxes, *_ = detector.find_tiles(np.zeros((480, 640, 3), np.uint8), 0.25, 0.6)
    assert len(boxes) == 3 and (box_iou(boxes, big).max(axis=0) > 0.9).all()
    farther = detector.scales[-1]
    assert len(detector.scales) == 2 and 150 * farther == pytest.approx(looks.TILE_PX, rel=0.05)


def test_a_farther_look_keeps_a_long_side_the_localiser_can_read() -> None:
    look = looks.farther_look(640, 480, 600.0)  # one tile nearly filling the photo
    assert max(look.input_size) == looks.MIN_LOOK_SIDE
    assert looks.farther_look(640, 480, 120.0).scale == pytest.approx(looks.TILE_PX / 120)


def test_only_tiles_measured_large_at_their_look_ask_for_a_farther_one() -> None:
    boxes = np.array([[0, 0, 100, 140], [200, 0, 300, 140]], np.float32)
    scores = np.array([0.9, 0.9], np.float32)
    assert looks.large_tile(boxes, scores, 0.7) == pytest.approx(100)  # 70 px at that look
    assert looks.large_tile(boxes, scores, 0.5) is None  # 50 px: about the trained size
    assert looks.large_tile(boxes, np.array([0.1, 0.1], np.float32), 0.7) is None  # nothing confident


@settings(max_examples=60, deadline=None)
@given(
    tile=st.floats(20.0, 160.0),
    count=st.integers(3, 18),
    x0=st.floats(0.05, 0.5),
    y0=st.floats(0.1, 0.6),
    factor=st.sampled_from([0.5, 2.0]),
)
def test_a_photo_stored_at_another_size_is_looked_at_the_same_way(
    tile: float, count: int, x0: float, y0: float, factor: float
) -> None:
    """The route follows the tiles, not the pixels: a photo and the same photo scaled (its tiles 20 px or
    more at either size) get the same first look, the same route and the same tiles, scaled."""
    width, height = 2560, 1440
    row = _hand_row(x0 * width, y0 * height, tile, count)
    assume(row[:, 2].max() < width - 1 and row[:, 3].max() < height - 1 and tile * factor >= 20.0)
    found = []
    for scale in (1.0, factor):
        detector = _FakeLocaliser(row * scale)
        pixels = np.zeros((round(height * scale), round(width * scale), 3), np.uint8)
        boxes, _, _, close_up = detector.find_tiles(pixels, 0.25)
        found.append((detector.calls, boxes / scale, close_up))
    (calls, boxes, close_up), (calls_scaled, boxes_scaled, close_up_scaled) = found
    assert close_up == close_up_scaled
    assert calls[0] == calls_scaled[0]  # the first look: the same input
    np.testing.assert_allclose(np.sort(boxes, axis=0), np.sort(boxes_scaled, axis=0), atol=1.5)
