"""``datasets.check``: each kind of planted label error is found at its file and line; clean sets pass."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from dataset_builders import make_image
from PIL import Image

from datasets.check import ERROR_KINDS, check_dataset, contact_sheet
from datasets.labels import Box, LabelledImage
from datasets.yolo import write_yolo
from vision.detections import DETECTOR_CLASSES


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    """Three sources in three splits, two images each, boxes of classes 0, 13 and 28."""
    items = []
    for s, split in enumerate(("train", "val", "test")):
        for copy in range(2):
            stem = f"src{s}" if copy == 0 else f"src{s}__aug{copy}"
            image = make_image(tmp_path / "raw" / f"{stem}.png", (100, 80), seed=s * 2 + copy)
            boxes = (Box(0, 0.2, 0.5, 0.2, 0.5), Box(13, 0.5, 0.5, 0.2, 0.5), Box(28, 0.8, 0.5, 0.2, 0.5))
            items.append(LabelledImage(image, boxes[: 1 + copy * 2], 100, 80, source=f"src{s}", split=split))
    root = tmp_path / "set"
    write_yolo(items, root)
    return root


def test_clean_dataset_passes_with_statistics(clean: Path):
    report = check_dataset(clean)
    assert report.ok and report.errors == ()
    # a set this small trains few classes and measures nothing: warned, not fatal
    untrained = {w.message.split()[1] for w in report.warnings if w.kind == "class_not_trained"}
    assert untrained == set(DETECTOR_CLASSES) - {"m1", "p5", "honour"}
    small = [w.message for w in report.warnings if w.kind == "small_split"]
    assert small and all("2 images" in message for message in small) and len(small) == 2
    assert {w.kind for w in report.warnings} == {"class_not_trained", "small_split"}
    assert report.images == {"train": 2, "val": 2, "test": 2}
    counts = report.counts()
    assert counts["m1"] == {"train": 2, "val": 2, "test": 2}
    assert (
        counts["p5"]["train"] == 1
        and counts["honour"]["test"] == 1
        and counts["s9"] == dict.fromkeys(counts["m1"], 0)
    )
    assert report.per_image_stats()["all"] == {"min": 1, "median": 2, "max": 3}
    # every box is 20 x 40 pixels: sqrt = 28.3 -> the 16-32 bin
    assert dict(report.size_histogram())["16-32"] == 12
    text = report.as_text()
    assert "no label errors" in text and "16-32" in text and "honour" in text


PLANTS = [
    # kind, label line(s) written to labels/train/src0.txt, the line number expected
    pytest.param("malformed", "0 0.5 0.5 0.2\n", 1, id="too-few-fields"),
    pytest.param("malformed", "0 0.5 abc 0.2 0.2\n", 1, id="not-a-number"),
    pytest.param("malformed", "zero 0.5 0.5 0.2 0.2\n", 1, id="class-not-int"),
    pytest.param("malformed", "0 0.5 nan 0.2 0.2\n", 1, id="nan"),
    pytest.param("unknown_class", "0 0.5 0.5 0.2 0.2\n29 0.5 0.5 0.2 0.2\n", 2, id="class-29"),
    pytest.param("unknown_class", "-1 0.5 0.5 0.2 0.2\n", 1, id="class-negative"),
    pytest.param("out_of_range", "0 1.2 0.5 0.2 0.2\n", 1, id="centre-outside"),
    pytest.param("out_of_range", "0 0.05 0.5 0.2 0.2\n", 1, id="edge-outside"),
    pytest.param("degenerate", "0 0.5 0.5 0 0.2\n", 1, id="zero-width"),
    pytest.param("degenerate", "0 0.5 0.5 0.005 0.2\n", 1, id="under-a-pixel"),
    pytest.param(
        "duplicate", "0 0.5 0.5 0.2 0.2\n3 0.5 0.5 0.2 0.2\n0 0.501 0.5 0.2 0.2\n", 3, id="duplicate"
    ),
]


@pytest.mark.parametrize(("kind", "lines", "line"), PLANTS)
def test_planted_label_error_is_found_with_file_and_line(clean: Path, kind: str, lines: str, line: int):
    label = clean / "labels" / "train" / "src0.txt"
    label.write_text(lines)
    report = check_dataset(clean)
    assert not report.ok
    assert [(e.kind, e.path, e.line) for e in report.errors] == [(kind, label, line)]
    assert f"{label}:{line}: {kind}:" in report.as_text()


def test_same_box_of_another_class_is_not_a_duplicate(clean: Path):
    (clean / "labels" / "train" / "src0.txt").write_text("0 0.5 0.5 0.2 0.2\n1 0.5 0.5 0.2 0.2\n")
    assert check_dataset(clean).ok


def test_edge_rounding_is_tolerated(clean: Path):
    (clean / "labels" / "train" / "src0.txt").write_text("0 0.1002 0.5 0.2 0.2\n0 0.9 0.5 0.2 0.2\n")
    assert check_dataset(clean).ok


def test_file_level_errors(clean: Path):
    (clean / "labels" / "val" / "src1.txt").unlink()
    (clean / "labels" / "val" / "stray.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    corrupt = clean / "images" / "test" / "src2.png"
    corrupt.write_bytes(corrupt.read_bytes()[:100])
    report = check_dataset(clean)
    found = {(e.kind, e.path.name) for e in report.errors}
    assert found == {("missing_label", "src1.png"), ("orphan_label", "stray.txt"), ("bad_image", "src2.png")}
    assert {e.kind for e in report.errors} <= set(ERROR_KINDS)


def test_split_leak_and_odd_names_are_warnings(clean: Path):
    (clean / "images" / "train" / "src0__aug1.png").rename(clean / "images" / "val" / "src0__aug1.png")
    (clean / "labels" / "train" / "src0__aug1.txt").rename(clean / "labels" / "val" / "src0__aug1.txt")
    (clean / "data.yaml").write_text("names: [a, b, c]\n")
    report = check_dataset(clean)
    assert {w.kind for w in report.warnings} - {"class_not_trained", "small_split"} == {
        "split_leak",
        "class_names",
    }
    # with 3 names, classes 13 and 28 are unknown
    assert {e.kind for e in report.errors} == {"unknown_class"}


def test_contact_sheet_has_a_row_per_class(clean: Path, tmp_path: Path):
    report = check_dataset(clean)
    sheet = contact_sheet(report, tmp_path / "sheet.png", per_class=3, cell=40)
    with Image.open(sheet) as image:
        assert image.size == (96 + 3 * 44 + 4, 3 * (40 + 13 + 4) + 4)  # m1, p5, honour; a caption a crop
        pixels = np.asarray(image.convert("RGB"))
    first_crop = pixels[4:44, 100:140]
    assert first_crop.std() > 20  # a noisy crop was pasted, not the background


def test_contact_sheet_is_seeded(clean: Path, tmp_path: Path):
    report = check_dataset(clean)
    a = contact_sheet(report, tmp_path / "a.png", per_class=1, seed=3).read_bytes()
    b = contact_sheet(report, tmp_path / "b.png", per_class=1, seed=3).read_bytes()
    assert a == b


def test_each_crop_of_the_contact_sheet_is_named_by_its_file_and_line(clean: Path) -> None:
    from datasets.check import _fitted
    from vision.annotate import pil_font as _font

    report = check_dataset(clean)
    for item in report.boxes:
        label = clean / "labels" / item.split / f"{item.image.stem}.txt"
        line = label.read_text().splitlines()[item.line - 1]
        assert int(line.split()[0]) == item.box.class_id
    font = _font(10)
    assert _fitted("a.jpg:3", 72, font) == "a.jpg:3"
    long = _fitted("IMG_20261206_203015_hand_of_the_east.jpg:12", 72, font)
    assert long.startswith("…") and long.endswith(".jpg:12") and font.getlength(long) <= 72
