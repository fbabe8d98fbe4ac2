"""Tile crops: the one crop function (inference and training data), and the crop dataset builder."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from datasets.crops import CropSource, build_crop_dataset
from datasets.labels import Box, DatasetError, LabelledImage
from vision.contract import CLASSIFIER_CLASSES, CROP_SIZE, tile_crops
from vision.detect.classifier import ClassifierError, TileClassifier, Views
from vision.pipeline import decode_photo


def _picture() -> np.ndarray:
    """A grey 200x300 picture with a red tile at (100, 50)-(140, 110) and a blue one at the right edge."""
    pixels = np.full((200, 300, 3), 128, np.uint8)
    pixels[50:110, 100:140] = (255, 0, 0)
    pixels[20:80, 280:300] = (0, 0, 255)
    return pixels


def test_a_crop_is_the_box_squashed_to_a_square() -> None:
    crops = tile_crops(_picture(), np.array([[100, 50, 140, 110]], np.float32), size=32, margins=0.0)
    assert crops.shape == (1, 32, 32, 3) and crops.dtype == np.uint8
    assert (crops[0].reshape(-1, 3) == (255, 0, 0)).all()


def test_margins_take_in_the_surroundings_on_the_sides_asked() -> None:
    box = np.array([[100, 50, 140, 110]], np.float32)
    (even,) = tile_crops(_picture(), box, size=40, margins=0.25)
    assert (even[0, 0] == 128).all() and (even[20, 20] == (255, 0, 0)).all()
    (left_only,) = tile_crops(_picture(), box, size=40, margins=np.array([[0.5, 0, 0, 0]], np.float32))
    assert (left_only[20, 0] == 128).all() and (left_only[20, -1] == (255, 0, 0)).all()


def test_a_box_at_the_border_is_cut_off_at_the_photo() -> None:
    (crop,) = tile_crops(_picture(), np.array([[280, 20, 310, 80]], np.float32), size=16, margins=0.2)
    assert crop.shape == (16, 16, 3)
    assert (crop[8, -1] == (0, 0, 255)).all()


def test_no_boxes_no_crops() -> None:
    assert tile_crops(_picture(), np.zeros((0, 4), np.float32)).shape == (0, CROP_SIZE, CROP_SIZE, 3)


def test_missing_classifier_weights_are_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ClassifierError, match="no such classifier"):
        TileClassifier(tmp_path / "nothing.onnx")


def _labelled(tmp_path: Path, name: str, split: str) -> LabelledImage:
    path = tmp_path / f"{name}.png"
    Image.fromarray(_picture()).save(path)
    boxes = (
        Box.from_xyxy(4, (100, 50, 140, 110), 300, 200),  # m5
        Box.from_xyxy(27, (280, 20, 300, 80), 300, 200),  # back
    )
    return LabelledImage(path, boxes, 300, 200, source=name, split=split)


def test_crop_dataset_has_a_folder_per_class_and_background_away_from_tiles(tmp_path: Path) -> None:
    images = [_labelled(tmp_path, f"t{i}", "train") for i in range(3)] + [_labelled(tmp_path, "v", "val")]
    images.append(_labelled(tmp_path, "x", "test"))
    counts = build_crop_dataset([CropSource(images, copies=2)], tmp_path / "crops", seed=1)
    out = tmp_path / "crops"
    assert sorted(p.name for p in (out / "train").iterdir()) == sorted(CLASSIFIER_CLASSES)
    assert counts["train"]["m5"] == 6 and counts["train"]["back"] == 6  # 3 images x 2 copies
    assert counts["val"]["m5"] == 1 and counts["val"]["back"] == 1  # test images left out
    assert counts["train"]["none"] > 0
    assert len(list((out / "train" / "m5").glob("*.png"))) == 6
    for path in (out / "train" / "none").glob("*.png"):
        pixels = np.asarray(Image.open(path))
        red = (pixels == (255, 0, 0)).all(axis=2).mean()
        assert red < 0.1  # a background crop holds (almost) nothing of a tile
    (val_crop,) = (out / "val" / "m5").glob("*.png")
    assert np.asarray(Image.open(val_crop))[32, 32].tolist() == [255, 0, 0]


def test_per_image_limits_the_boxes_drawn(tmp_path: Path) -> None:
    images = [_labelled(tmp_path, f"t{i}", "train") for i in range(4)]
    counts = build_crop_dataset([CropSource(images, per_image=1)], tmp_path / "crops")
    assert counts["train"]["m5"] + counts["train"]["back"] == 4


def test_training_crops_skip_tiles_too_small_to_read_and_validation_keeps_them(tmp_path: Path) -> None:
    images = [_labelled(tmp_path, f"t{i}", "train") for i in range(2)] + [_labelled(tmp_path, "v", "val")]
    counts = build_crop_dataset([CropSource(images)], tmp_path / "crops", min_side=30)
    # the m5 box is 40 px wide, the back 20 px
    assert counts["train"]["m5"] == 2 and counts["train"]["back"] == 0
    assert counts["val"]["m5"] == 1 and counts["val"]["back"] == 1


@pytest.mark.parametrize(
    ("spec", "copies", "per_image"),
    [("d", 1, None), ("d:3", 3, None), ("d:1:12", 1, 12), ("d::5", 1, 5), ("d:1:0", 1, 0)],
)
def test_crop_source_spec(spec: str, copies: int, per_image: int | None) -> None:
    source = CropSource.parse(spec, [])
    assert (source.copies, source.per_image) == (copies, per_image)


@pytest.mark.parametrize("spec", ["d:x", "d:0", "d:1:-1"])
def test_bad_crop_source_spec_is_refused(spec: str) -> None:
    with pytest.raises(DatasetError):
        CropSource.parse(spec, [])


def test_windows_rescale_clip_and_drop_tiles_mostly_outside(tmp_path: Path) -> None:
    from datasets.windows import write_windows
    from datasets.yolo import read_yolo
    from vision.detections import HONOUR

    path = tmp_path / "photo.png"
    Image.fromarray(np.full((400, 1000, 3), 90, np.uint8)).save(path)
    boxes = (
        Box.from_xyxy(4, (100, 100, 140, 160), 1000, 400),
        Box.from_xyxy(5, (900, 100, 940, 160), 1000, 400),  # far from the first: outside its window
        Box.from_xyxy(HONOUR, (150, 100, 190, 160), 1000, 400),
    )
    item = LabelledImage(path, boxes, 1000, 400, source="photo", split="val")
    written = write_windows([item] * 3, tmp_path / "w", size=128, scale=(0.5, 0.5), per_image=2, seed=3)
    assert len(written) == 6
    for window in written:
        assert (window.width, window.height, window.split) == (128, 128, "val")
        for box in window.boxes:
            x1, y1, x2, y2 = box.xyxy(128, 128)
            assert 0 <= x1 < x2 <= 128 and 0 <= y1 < y2 <= 128
            if box.class_id != HONOUR and x1 > 0 and x2 < 128:
                assert x2 - x1 == pytest.approx(20, abs=1)  # a whole tile, at half scale
        names = {b.class_id for b in window.boxes}
        assert not {4, 5} <= names  # 440 scaled pixels apart: never both in a 128 window
    assert len(read_yolo(tmp_path / "w")) == 6


def _tilted_row(angle: float) -> tuple[np.ndarray, np.ndarray]:
    """A grey picture of three 30x40 tiles in a row turned by ``angle`` degrees (y down), each with a
    red top half and a white bottom half; their axis-aligned boxes."""
    import cv2

    pixels = np.full((300, 300, 3), 128, np.uint8)
    turn = np.radians(angle)
    along, up = np.array([np.cos(turn), np.sin(turn)]), np.array([np.sin(turn), -np.cos(turn)])
    boxes = []
    for k in (-1, 0, 1):
        centre = np.array([150.0, 150.0]) + k * 32 * along
        corners = [centre + sx * 15 * along + sy * 20 * up for sx, sy in ((-1, 1), (1, 1), (1, -1), (-1, -1))]
        middle = [centre - 15 * along, centre + 15 * along]
        cv2.fillPoly(
            pixels, [np.array([corners[0], corners[1], middle[1], middle[0]], np.int32)], (255, 0, 0)
        )
        cv2.fillPoly(
            pixels, [np.array([middle[0], middle[1], corners[2], corners[3]], np.int32)], (255, 255, 255)
        )
        points = np.array(corners)
        boxes.append([*points.min(axis=0), *points.max(axis=0)])
    return pixels, np.array(boxes, np.float32)


@pytest.mark.parametrize("angle", [0.0, 35.0, -50.0])
def test_a_tile_in_a_tilted_row_is_cut_turned_upright(angle: float) -> None:
    from vision.contract import upright_crops
    from vision.geometry.boxes import row_directions

    pixels, boxes = _tilted_row(angle)
    angles, pitches = row_directions(boxes)
    assert angles == pytest.approx([angle] * 3, abs=1.0) and pitches == pytest.approx([32.0] * 3, abs=1.0)
    (crop,) = upright_crops(pixels, boxes[1:2], angles[1:2], pitches[1:2], size=48, margin=0.0)
    # the middle tile fills the crop: red above, white below, no grey table at the sides
    assert (crop[4:20, 6:42] == (255, 0, 0)).all(axis=2).mean() > 0.95
    assert (crop[28:44, 6:42] == (255, 255, 255)).all(axis=2).mean() > 0.95
    # the axis-aligned crop of a tilted tile holds the table and its neighbours as well
    (boxed,) = tile_crops(pixels, boxes[1:2], size=48, margins=0.0)
    assert ((boxed[4:20, 6:42] == (255, 0, 0)).all(axis=2).mean() > 0.95) == (angle == 0.0)


def test_a_box_straddling_two_tiles_is_no_neighbour_and_columns_run_at_90_degrees() -> None:
    from vision.geometry.boxes import row_directions

    row = np.array([[0, 0, 40, 30], [40, 0, 80, 30], [80, 0, 120, 30]], np.float32)  # a flat pong
    straddling = np.array([[28, 0, 68, 30]], np.float32)  # a second box over the first gap
    angles, pitches = row_directions(np.concatenate([row, straddling]))
    assert pitches[:3] == pytest.approx([40.0, 40.0, 40.0]) and angles[:3] == pytest.approx([0.0] * 3)
    column = np.array([[0, 0, 30, 40], [0, 42, 30, 82], [0, 84, 30, 124]], np.float32)
    angles, pitches = row_directions(column)
    assert angles == pytest.approx([90.0] * 3) and pitches == pytest.approx([42.0] * 3)


def test_a_box_without_neighbours_has_no_row() -> None:
    from vision.geometry.boxes import row_directions

    angles, pitches = row_directions(np.array([[0, 0, 10, 14], [100, 100, 110, 114]], np.float32))
    assert np.isnan(angles).all() and np.isnan(pitches).all()
    assert [len(a) for a in row_directions(np.zeros((0, 4), np.float32))] == [0, 0]


def _reads_upright(crop: np.ndarray) -> bool:
    """Whether some quarter turn of ``crop`` shows a red band above a white one, as a tile cut along
    its row does (an axis-aligned crop of a tilted tile has them slanted)."""
    for turn in range(4):
        turned = np.rot90(crop, turn)
        n = turned.shape[0]
        above, below = turned[int(0.3 * n) : int(0.42 * n)].astype(int), turned[int(0.58 * n) : int(0.7 * n)]
        red = ((above[..., 0] > 200) & (above[..., 1:] < 60).all(axis=2)).mean()
        white = (below > 200).all(axis=2).mean()
        if red > 0.75 and white > 0.75:
            return True
    return False


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_training_crops_of_tiles_in_rows_are_cut_along_their_rows_in_share(
    tmp_path: Path, share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets.crops

    monkeypatch.setattr(datasets.crops, "UPRIGHT_SHARE", share)
    pixels, boxes = _tilted_row(35.0)
    Image.fromarray(pixels).save(tmp_path / "row.png")
    labelled = LabelledImage(
        tmp_path / "row.png",
        tuple(Box.from_xyxy(4, tuple(map(float, b)), 300, 300) for b in boxes),  # type: ignore[arg-type]
        300,
        300,
        source="row",
        split="train",
    )
    build_crop_dataset([CropSource([labelled], copies=4)], tmp_path / "crops", seed=3, size=48)
    crops = [np.asarray(Image.open(p)) for p in sorted((tmp_path / "crops" / "train" / "m5").glob("*.png"))]
    assert len(crops) == 12
    assert sum(_reads_upright(c) for c in crops) == (12 if share else 0)


def _read_with(*, flip_row_tiles: bool) -> tuple[list[np.ndarray], np.ndarray]:
    """The crops the shipped classifier reads, call by call, and its readings, for a row of three tilted tiles
    and a tile alone in a corner, its network replaced: every tile's first view in the batch is read as m1 for
    sure, its second as m2."""
    classifier = TileClassifier(Path(__file__).resolve().parents[2] / "models" / "tile_faces.onnx")
    pixels, row = _tilted_row(35.0)
    boxes = np.concatenate([row, [[10, 10, 40, 50]]]).astype(np.float32)
    calls: list[np.ndarray] = []

    def infer(crops: np.ndarray) -> tuple[np.ndarray, None]:
        calls.append(crops)
        probs = np.zeros((len(crops), len(CLASSIFIER_CLASSES)), np.float32)
        probs[: len(boxes), 0] = 1.0
        probs[len(boxes) :, 1] = 1.0
        return probs, None

    classifier.infer = infer  # type: ignore[method-assign]
    return calls, classifier.read(pixels, boxes, flip_row_tiles=flip_row_tiles)


def test_a_close_up_reads_every_tile_twice_in_one_batch_its_row_tiles_turned_along_the_row() -> None:
    calls, read = _read_with(flip_row_tiles=False)
    assert len(calls) == 1 and len(calls[0]) == 8  # one batch: four tiles, two views each
    boxes_view, second = calls[0][:4], calls[0][4:]
    assert np.array_equal(second[3], boxes_view[3, ::-1, ::-1])  # the corner tile upside down
    assert all(_reads_upright(crop) for crop in second[:3])  # the row's three turned upright along it
    assert not any(_reads_upright(crop) for crop in boxes_view[:3])
    assert read[:, :2] == pytest.approx(np.full((4, 2), 0.5))  # the two readings averaged


def test_a_large_photo_reads_its_row_tiles_turned_along_the_row_both_ways_up() -> None:
    calls, read = _read_with(flip_row_tiles=True)
    assert len(calls) == 1 and len(calls[0]) == 8  # one batch: four tiles, two views each
    first, second = calls[0][:4], calls[0][4:]
    assert all(_reads_upright(crop) for crop in second[:3])  # the row's three turned upright along it
    assert all(np.array_equal(first[i], second[i, ::-1, ::-1]) for i in range(4))  # and upside down
    assert read[:, :2] == pytest.approx(np.full((4, 2), 0.5))


def test_no_boxes_are_no_readings() -> None:
    classifier = TileClassifier(Path(__file__).resolve().parents[2] / "models" / "tile_faces.onnx")
    read = classifier.read(np.zeros((40, 40, 3), np.uint8), np.zeros((0, 4), np.float32))
    assert read.shape == (0, len(CLASSIFIER_CLASSES))


def test_a_close_up_reads_its_row_tiles_unflipped_and_a_whole_table_flipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vision.detect.detector import Detector

    detector = Detector()
    assert detector.classifier is not None
    seen: list[bool] = []
    read = detector.classifier.read_views

    def recording(*args: object, flip_row_tiles: bool = True) -> Views:
        seen.append(flip_row_tiles)
        return read(*args, flip_row_tiles=flip_row_tiles)  # type: ignore[arg-type]

    monkeypatch.setattr(detector.classifier, "read_views", recording)
    photo = Image.open(Path(__file__).resolve().parents[2] / "examples" / "hand.jpg").convert("RGB")
    detector.detect(np.asarray(photo.resize((640, 480))))  # a close-up
    detector.detect(np.asarray(photo))  # the same close-up at 1024 px: its tiles decide, not its pixels
    # a phone photo of the whole table, its tiles small: other players' rows may face the camera upside down
    detector.detect(decode_photo(Path(__file__).resolve().parents[2] / "examples" / "hand_phone.jpg"))
    assert seen == [False, False, True]


def test_a_bundled_photo_is_scored_with_one_classifier_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scoring import CHENGDU
    from vision.detect.detector import Detector
    from vision.grouping.search import DISCARD_WIN
    from vision.pipeline import score_photo

    detector = Detector()
    assert detector.classifier is not None
    batches: list[int] = []
    infer = detector.classifier.infer

    def counted_infer(crops: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        batches.append(len(crops))
        return infer(crops)

    monkeypatch.setattr(detector.classifier, "infer", counted_infer)
    result = score_photo(
        (Path(__file__).resolve().parents[2] / "examples" / "hand.jpg").read_bytes(),
        detector,
        DISCARD_WIN,
        CHENGDU,
    )
    assert result.score is not None and result.score.error is None  # read as a win at the first look
    tiles = len(result.detections)
    assert len(batches) == 1 and batches[0] >= 2 * tiles  # every tile read in the one batch, twice


def test_straddling_boxes_sit_on_the_seams_between_neighbours_side_by_side() -> None:
    from datasets.crops import straddling_boxes

    row = np.array([[0, 0, 20, 30], [21, 1, 41, 31], [42, 0, 62, 30]], np.float32)  # touching
    apart = np.array([[200, 0, 220, 30]], np.float32)  # far from the row: no neighbour
    above = np.array([[0, 100, 20, 130]], np.float32)  # below the first tile: not beside it
    found = straddling_boxes(np.concatenate([row, apart, above]))
    assert len(found) == 2
    centres = (found[:, 0] + found[:, 2]) / 2
    assert np.allclose(centres, [20.5, 41.5])  # on the seams
    assert np.allclose(found[:, 2] - found[:, 0], 20.0)  # one tile wide: half of each neighbour
    assert len(straddling_boxes(np.zeros((0, 4), np.float32))) == 0


def test_part_boxes_lie_on_a_half_a_pip_or_a_sliver_of_a_legible_tile() -> None:
    import random

    from datasets.crops import PART_MIN_SIDE, part_boxes

    tile = np.array([[100, 50, 160, 130]], np.float32)  # 60 x 80
    tiny = np.array([[0, 0, PART_MIN_SIDE - 1, 30]], np.float32)  # too small to show a part
    found = part_boxes(random.Random(3), np.concatenate([tile, tiny]), 60)
    assert len(found) == 60
    within = (found[:, :2] >= tile[0, :2] - 1e-3) & (found[:, 2:] <= tile[0, 2:] + 1e-3)
    assert within.all()  # every part on the legible tile, none on the tiny one
    shares = (found[:, 2] - found[:, 0]) * (found[:, 3] - found[:, 1]) / (60 * 80)
    assert shares.max() <= 0.5 + 1e-6  # at most half a tile: never a whole tile's box
    assert (np.isclose(shares, 0.5)).any() and (shares < 0.15).any()  # halves and pips both drawn
    assert len(part_boxes(random.Random(3), tiny, 5)) == 0


def test_crops_of_parts_of_tiles_are_written_as_none(tmp_path: Path) -> None:
    from datasets.crops import write_crops

    path = tmp_path / "tile.png"
    Image.fromarray(np.full((120, 160, 3), 200, np.uint8)).save(path)
    item = LabelledImage(path, (Box(12, 0.5, 0.5, 0.3, 0.5),), 160, 120, split="train")
    counts = write_crops([item], tmp_path / "c", split="train", background=0, parts=4, seed=2)
    assert counts == {"p4": 1, "none": 4}


def test_a_photo_with_no_tile_gives_windows_anywhere_in_it_as_negatives(tmp_path: Path) -> None:
    from datasets.windows import write_windows
    from datasets.yolo import read_yolo

    path = tmp_path / "keyboard.png"
    Image.fromarray(np.full((300, 500, 3), 60, np.uint8)).save(path)
    empty = LabelledImage(path, (), 500, 300, source="keyboard", split="train")
    written = write_windows([empty], tmp_path / "w", size=128, scale=(1.0, 1.0), per_image=3, seed=1)
    assert len(written) == 3 and all(window.boxes == () for window in written)
    assert len(read_yolo(tmp_path / "w")) == 3


def test_the_localisers_boxes_on_no_labelled_tile_are_its_false_alarms() -> None:
    from datasets.crops import false_boxes

    labelled = np.array([[100, 50, 140, 110]], np.float32)
    found = np.array(
        [
            [101, 52, 139, 108],  # the labelled tile
            [95, 45, 180, 115],  # a loose box round it and its neighbour: centred on it
            [200, 100, 240, 160],  # on nothing labelled: a keyboard key
            [130, 50, 170, 110],  # half on the tile (IoU 0.2) but centred off it
        ],
        np.float32,
    )
    assert false_boxes(found, labelled).tolist() == [[200, 100, 240, 160], [130, 50, 170, 110]]
    assert false_boxes(found, np.zeros((0, 4), np.float32)).shape == (4, 4)  # a photo of no tile: all


def test_the_localisers_boxes_on_labelled_tiles_are_named_as_the_tile_they_show() -> None:
    from datasets.crops import found_on_tiles

    labelled = np.array([[100, 50, 140, 110], [140, 50, 180, 110]], np.float32)
    found = np.array(
        [
            [128, 52, 168, 108],  # mostly on the second tile (IoU 0.59 with it, 0.16 with the first)
            [95, 45, 180, 115],  # round both: on neither enough
            [200, 100, 240, 160],  # on nothing
            [102, 49, 141, 112],  # the first tile
        ],
        np.float32,
    )
    boxes, tiles = found_on_tiles(found, labelled)
    assert boxes.tolist() == [[128, 52, 168, 108], [102, 49, 141, 112]] and tiles.tolist() == [1, 0]
    none, _ = found_on_tiles(found, np.zeros((0, 4), np.float32))
    assert none.shape == (0, 4)


def test_boxes_found_on_tiles_are_cut_as_crops_of_those_tiles(tmp_path: Path) -> None:
    tile = _labelled(tmp_path, "t", "train")  # an m5 and a back
    found = np.array([[103, 55, 143, 112], [200, 100, 240, 160], [281, 18, 299, 82]], np.float32)
    plain = build_crop_dataset([CropSource([tile])], tmp_path / "plain", seed=3, quiet=True)

    def cut(as_found: int) -> Counter[str]:
        out = tmp_path / f"found{as_found}"
        source = CropSource([tile], per_image=0)
        done = build_crop_dataset(
            [source], out, seed=3, as_found=as_found, localise=lambda _: found, quiet=True
        )
        return done["train"]

    # no labelled box cut (PER_IMAGE 0): the m5 and the back as the localiser boxed them, the box on nothing
    # not cut (it is no false alarm asked for), and the background crops as before
    counts = cut(5)
    assert counts["m5"] == 1 and counts["back"] == 1 and counts["none"] == plain["train"]["none"]
    one = cut(1)
    assert one["m5"] + one["back"] == 1


def test_false_alarms_are_cut_as_none_crops_even_from_photos_of_no_tile(tmp_path: Path) -> None:
    tile = _labelled(tmp_path, "t", "train")
    path = tmp_path / "keys.png"
    Image.fromarray(np.full((200, 300, 3), 40, np.uint8)).save(path)
    empty = LabelledImage(path, (), 300, 200, source="keys", split="train")
    key = np.array([[20, 20, 60, 70]], np.float32)
    seen: list[tuple[int, ...]] = []

    def localise(pixels: np.ndarray) -> np.ndarray:
        seen.append(pixels.shape)
        return np.concatenate([key, np.array([[100, 50, 140, 110]], np.float32)])  # the key, and the tile

    counts = build_crop_dataset(
        [CropSource([tile, empty])], tmp_path / "crops", false_alarms=3, localise=localise, quiet=True
    )
    assert seen == [(200, 300, 3), (200, 300, 3)]
    background = build_crop_dataset([CropSource([tile, empty])], tmp_path / "plain", quiet=True)
    # the key in each photo, and in the empty photo the tile's box too (nothing is labelled there)
    assert counts["train"]["none"] - background["train"]["none"] == 3
    assert counts["train"]["m5"] == background["train"]["m5"] == 1


def test_a_false_alarm_on_a_dont_care_tile_is_never_cut_as_none(tmp_path: Path) -> None:
    """A box the localiser finds on a tile lying on its long edge (a scene's don't-care outline) is neither
    a tile nor no tile: it is not taught as ``none``, while a box on nothing still is."""
    from datasets.crops import write_crops

    path = tmp_path / "edge.png"
    Image.fromarray(np.full((200, 300, 3), 40, np.uint8)).save(path)
    photo = LabelledImage(path, (), 300, 200, source="edge", split="train")
    on_edge, on_nothing = [20.0, 20.0, 60.0, 70.0], [200.0, 100.0, 240.0, 150.0]

    def localise(pixels: np.ndarray) -> np.ndarray:
        return np.array([on_edge, on_nothing], np.float32)

    def cut(dont_care: dict[str, list[tuple[float, float, float, float]]], out: str) -> int:
        counts = write_crops(
            [photo],
            tmp_path / out,
            split="train",
            background=0,
            false_alarms=5,
            localise=localise,
            dont_care=dont_care,
        )
        return counts["none"]

    assert cut({}, "all") == 2
    assert cut({"edge.png": [(18.0, 18.0, 62.0, 72.0)]}, "kept") == 1  # the box on nothing alone


def test_dont_care_regions_are_greyed_out_of_the_windows_but_never_a_labelled_tile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tile on its long edge is neither a tile nor background: asked to, the windows grey it out, except
    where a labelled tile lies; a dataset with no such outlines, or a broken scenes file, is refused."""
    import json

    import smj
    from datasets.windows import dont_care_regions, write_windows
    from datasets.yolo import write_yolo

    path = tmp_path / "scenes" / "images" / "scene.png"
    path.parent.mkdir(parents=True)
    Image.fromarray(np.full((200, 200, 3), 200, np.uint8)).save(path)
    item = LabelledImage(
        path, (Box.from_xyxy(4, (20, 20, 60, 80), 200, 200),), 200, 200, source="s", split="train"
    )
    scenes = tmp_path / "scenes" / "scenes.jsonl"
    scenes.write_text(json.dumps({"image": "images/scene.png", "ignored": [[50, 50, 120, 120]]}) + "\n\n")
    regions = dont_care_regions(tmp_path / "scenes")
    assert regions == {"scene.png": [(50.0, 50.0, 120.0, 120.0)]}
    for dont_care, middle in ((regions, 114), (None, 200)):
        (window,) = write_windows(
            [item], tmp_path / f"w{middle}", size=200, scale=(1.0, 1.0), dont_care=dont_care
        )
        pixels = np.asarray(Image.open(window.image)).astype(int)
        assert abs(pixels[100, 100, 0] - middle) <= 3  # the don't-care region's middle
        assert abs(pixels[70, 55, 0] - 200) <= 3  # where it covers the labelled tile: the tile stays
        assert len(window.boxes) == 1

    write_yolo([item], tmp_path / "real")  # a dataset with no scenes.jsonl
    assert smj.main(
        ["dataset", "windows", str(tmp_path / "real"), "--out", str(tmp_path / "o"), "--grey-dont-care"]
    )
    assert "has no scenes.jsonl with don't-care outlines" in capsys.readouterr().err
    scenes.write_text('{"image": "images/scene.png", "ignored": [[1, 2]]}\n')
    with pytest.raises(DatasetError, match=r"scenes.jsonl:1: not a scene"):
        dont_care_regions(tmp_path / "scenes")
