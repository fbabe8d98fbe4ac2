"""The detector evaluation: mAP, exact-hand rate and ignore regions, with a fake detector on drawn images."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from api.fakes import OneStep
from datasets.labels import Box, LabelledImage
from vision.detect.view import AS_IS, Located, View
from vision.detections import HONOUR, Detections
from vision.factory.evaluate import average_precision, evaluate, save_confusion_png
from vision.geometry.boxes import box_iou
from vision.images import Photo

SIZE = (200, 100)


class _Replay(OneStep):
    """Answers each image with prepared detections (looked up by image size order)."""

    def __init__(self, answers: list[Detections]) -> None:
        self._answers = answers
        self._calls = 0

    def answer(self, located: Located, conf: float) -> Detections:
        found = self._answers[self._calls // 2]  # evaluate() detects each image twice
        self._calls += 1
        return found[found.confidences >= conf]


def _image(tmp_path: Path, name: str, boxes: list[Box]) -> LabelledImage:
    path = tmp_path / f"{name}.png"
    Image.new("RGB", SIZE, (30, 120, 30)).save(path)
    return LabelledImage(path, tuple(boxes), *SIZE)


def _as_detections(boxes: list[Box], classes: list[int] | None = None, conf: float = 0.9) -> Detections:
    xyxy = np.array([b.xyxy(*SIZE) for b in boxes], np.float32).reshape(-1, 4)
    ids = np.array(classes if classes is not None else [b.class_id for b in boxes], np.int64)
    return Detections(xyxy, ids, np.full(len(boxes), conf, np.float32), SIZE)


TILES = [Box(0, 0.1, 0.5, 0.08, 0.3), Box(13, 0.3, 0.5, 0.08, 0.3), Box(26, 0.5, 0.5, 0.08, 0.3)]


def test_perfect_detections_score_one(tmp_path: Path) -> None:
    images = [_image(tmp_path, "a", TILES), _image(tmp_path, "b", TILES[:2])]
    result = evaluate(_Replay([_as_detections(TILES), _as_detections(TILES[:2])]), images)
    assert result.map50 == pytest.approx(1.0)
    assert result.map50_95 == pytest.approx(1.0) and result.map30 == pytest.approx(1.0)
    assert result.exact_tiles_rate == 1.0
    assert result.precision == 1.0 and result.recall == 1.0


def test_a_box_unlike_its_label_counts_only_in_the_loose_map30(tmp_path: Path) -> None:
    # the right tiles read right, boxes 0.65 of their labels' sides about the same centre: IoU 0.42
    shrunk = [Box(b.class_id, b.xc, b.yc, 0.65 * b.w, 0.65 * b.h) for b in TILES]
    result = evaluate(_Replay([_as_detections(shrunk)]), [_image(tmp_path, "a", TILES)])
    assert result.map30 == pytest.approx(1.0)
    assert result.map50 < 0.02 and result.map50_95 < 0.02  # (the 101-point curve starts at precision 1)
    assert result.precision == 0.0 and result.recall == 0.0  # the operating figures match at IoU 0.5
    assert result.precision30 == 1.0 and result.recall30 == 1.0  # ... and again at IoU 0.3
    assert result.exact_tiles_rate == 1.0  # the multiset of tiles is right
    assert result.summary()["map30"] == pytest.approx(1.0) and result.summary()["precision30"] == 1.0


def test_a_wrong_class_and_a_miss_lower_every_figure(tmp_path: Path) -> None:
    images = [_image(tmp_path, "a", TILES), _image(tmp_path, "b", TILES)]
    wrong = _as_detections(TILES, [0, 14, 26])  # 5p read as 6p
    missing = _as_detections(TILES[:2])
    result = evaluate(_Replay([wrong, missing]), images)
    assert result.exact_tiles_rate == 0.0
    assert result.per_class_ap50["p5"] < 1.0
    assert result.per_class_ap50["m1"] == pytest.approx(1.0)
    assert result.recall == pytest.approx(4 / 6) and result.recall30 == pytest.approx(4 / 6)
    assert result.precision == pytest.approx(4 / 5) and result.precision30 == pytest.approx(4 / 5)
    assert result.map50 < 1.0


def test_suited_guesses_on_honour_tiles_are_ignored_but_counted(tmp_path: Path) -> None:
    honour = Box(HONOUR, 0.8, 0.5, 0.08, 0.3)
    images = [_image(tmp_path, "a", [*TILES, honour])]
    guesses = _as_detections([*TILES, honour], [0, 13, 26, 5])  # the honour read as m6
    result = evaluate(_Replay([guesses]), images)
    assert result.map50 == pytest.approx(1.0)
    assert result.honour_as_suited == 1
    assert result.exact_tiles_rate == 1.0


def test_a_suited_tile_under_a_loose_honour_label_is_no_honour(tmp_path: Path) -> None:
    # rotated copies in the real set label each tile with the envelope of its rotated box: the honour's
    # label beside p5 covers most of it, but p5 lies wholly in its own (loose) label
    loose_p5 = Box(13, 0.3, 0.5, 0.1, 0.4)
    loose_honour = Box(HONOUR, 0.36, 0.5, 0.14, 0.5)
    images = [_image(tmp_path, "a", [TILES[0], loose_p5, TILES[2], loose_honour])]
    tight_p5 = Box(13, 0.3, 0.5, 0.06, 0.28)
    result = evaluate(_Replay([_as_detections([TILES[0], tight_p5, TILES[2]])]), images)
    assert result.honour_as_suited == 0
    assert result.exact_tiles_rate == 1.0  # p5 counts among the tiles found


def test_tiles_found_far_from_every_label_count_only_in_the_strict_exact_tiles_rate(tmp_path: Path) -> None:
    # the labels cover the hand; a discard far off (unlabelled) is found, and so is a duplicate box
    # right beside a labelled tile, which is an error under both rates
    discard = Box(5, 0.9, 0.1, 0.08, 0.3)
    beside = Box(0, 0.18, 0.5, 0.08, 0.3)
    images = [_image(tmp_path, "a", TILES), _image(tmp_path, "b", TILES)]
    answers = [_as_detections([*TILES, discard]), _as_detections([*TILES, beside])]
    result = evaluate(_Replay(answers), images)
    assert [r.exact for r in result.images] == [False, False]
    assert [r.exact_near_labels for r in result.images] == [True, False]
    assert result.exact_tiles_rate == 0.0 and result.exact_near_labels_rate == 0.5
    assert result.summary()["exact_near_labels_rate"] == 0.5


def test_average_precision_and_iou_basics(tmp_path: Path) -> None:
    assert average_precision(np.array([0.5, 1.0]), np.array([1.0, 1.0])) == pytest.approx(1.0)
    assert average_precision(np.array([0.5]), np.array([1.0])) == pytest.approx(51 / 101, abs=0.01)
    a = np.array([[0, 0, 10, 10]], np.float32)
    b = np.array([[5, 0, 15, 10], [20, 20, 30, 30]], np.float32)
    np.testing.assert_allclose(box_iou(a, b), [[1 / 3, 0.0]], atol=1e-6)
    matrix = np.eye(30, dtype=np.int64)
    assert save_confusion_png(matrix, tmp_path / "c.png").stat().st_size > 1000


class _Floored(OneStep):
    """A detector with a localiser floor: below ``floor`` a box is only located when the caller lowers it."""

    def __init__(self, found: Detections, floor: float) -> None:
        self.found, self.floor = found, floor

    def locate(
        self,
        photo: Photo | np.ndarray,
        view: View = AS_IS,
        *,
        conf: float = 0.25,
        box_conf: float | None = None,
    ) -> Located:
        located = self.found[self.found.confidences >= (self.floor if box_conf is None else box_conf)]
        nothing = Located.nothing(photo, view)
        return replace(nothing, boxes=located.boxes, scores=located.confidences, classes=located.class_ids)

    def answer(self, located: Located, conf: float) -> Detections:
        keep = located.scores >= conf
        return Detections(located.boxes[keep], located.classes[keep], located.scores[keep], located.size)


def test_ap_ranks_every_box_and_the_operating_figures_are_what_a_user_gets(tmp_path: Path) -> None:
    # one tile found only at 0.5: under the detector's own floor (0.6), so a user never gets it
    found = _as_detections(TILES)
    found = Detections(found.boxes, found.class_ids, np.array([0.9, 0.9, 0.5], np.float32), SIZE)
    result = evaluate(_Floored(found, floor=0.6), [_image(tmp_path, "a", TILES)], conf=0.3)
    assert result.map50 == pytest.approx(1.0)  # ranked with the floor lowered: every tile is found
    assert result.recall == pytest.approx(2 / 3)  # at the operating point the floor holds
    assert result.exact_tiles_rate == 0.0


def test_the_confusion_image_titles_its_axes_and_shades_each_row_by_its_share(tmp_path: Path) -> None:
    from PIL import Image

    from vision.factory.evaluate import save_confusion_png

    matrix = np.zeros((30, 30), int)
    matrix[0, 0], matrix[0, 1] = 9, 1  # m1: nine read right, one read as m2
    with Image.open(save_confusion_png(matrix, tmp_path / "confusion.png")) as image:
        pixels = np.asarray(image.convert("RGB")).astype(int)
    assert pixels.shape[1] > 30 * 28 and pixels.shape[0] > 30 * 28  # a cell of 28 px for each class
    left, top, cell = 120, 124, 28
    right_cell = pixels[top + 14, left + 20]
    wrong_cell = pixels[top + 14, left + cell + 20]
    assert right_cell[1] == 255 and right_cell[0] < 80  # green, nearly full: 0.9 of its row
    assert wrong_cell[0] == 255 and 200 < wrong_cell[1] < 255  # pale red: 0.1 of its row
    assert (pixels[top + 2 * cell + 14, left + 2 * cell + 20] == 255).all()  # an empty row stays white
