"""``smj dataset import`` loses nothing silently: every problem of a source in one pass, refused by
default, fixed and counted with ``--lenient`` (``datasets.problems``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from dataset_builders import make_image
from PIL import Image

import smj
from datasets.labels import Box
from datasets.labelstudio import region
from datasets.yolo import read_yolo
from vision.detections import DETECTOR_CLASSES


def _bad_yolo(tmp_path: Path) -> Path:
    """A Roboflow-style YOLO set (train and valid) with one problem of each kind."""
    root = tmp_path / "src"
    (root).mkdir()
    (root / "data.yaml").write_text(yaml.safe_dump({"names": list(DETECTOR_CLASSES)}))
    for split in ("train", "valid"):
        (root / split / "labels").mkdir(parents=True)
        for index in range(3):
            make_image(root / split / "images" / f"{split}{index}.png", (100, 80), seed=index)
            (root / split / "labels" / f"{split}{index}.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    labels = root / "train" / "labels"
    (labels / "lost.txt").write_text("1 0.5 0.5 0.2 0.2\n")  # its image is missing
    (labels / "train1.txt").write_text("0 0.5 0.5 0.2 0.2\n2 0.95 0.5 0.2 0.2\n")  # reaches x 1.05
    (labels / "train2.txt").write_text("0 0.5 0.5 0.2\n3 0.3 0.3 0.1 0.1\n")  # line 1 is not a box
    jpeg = root / "valid" / "images" / "valid9.jpg"
    Image.new("RGB", (100, 80), (200, 10, 10)).save(jpeg, quality=90)
    jpeg.write_bytes(jpeg.read_bytes()[:300])  # truncated: its header still reads
    (root / "valid" / "labels" / "valid9.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    return root


def test_every_problem_is_listed_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _bad_yolo(tmp_path)
    out = tmp_path / "out"
    assert smj.main(["dataset", "import", "--format", "yolo", str(root), "--out", str(out)]) == 2
    lines = capsys.readouterr().err.splitlines()
    found = sorted(line.split(": ")[1] for line in lines[:-1])
    assert found == ["bad_image", "malformed", "orphan_label", "out_of_range"]
    assert any(
        line.startswith(f"{root / 'train' / 'labels' / 'train1.txt'}:2: out_of_range") for line in lines
    )
    assert any(line.startswith(f"{root / 'train' / 'labels' / 'train2.txt'}:1: malformed") for line in lines)
    assert "4 problems" in lines[-1] and "clipped 1, skipped 3" in lines[-1]
    assert not out.exists()


def test_lenient_clips_skips_and_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _bad_yolo(tmp_path)
    out = tmp_path / "out"
    argv = ["dataset", "import", "--format", "yolo", str(root), "--out", str(out), "--lenient"]
    assert smj.main(argv) == 0
    assert "fixed 4 problems: clipped 1, skipped 3" in capsys.readouterr().out
    images = {item.stem: item for item in read_yolo(out)}
    assert "valid9" not in images and "lost" not in images and len(images) == 6
    clipped = images["train1"].boxes[1]
    assert clipped.xc + clipped.w / 2 == pytest.approx(1.0) and clipped.w == pytest.approx(0.15)
    assert [b.class_id for b in images["train2"].boxes] == [3]  # the bad line left out, the next kept


def _labelstudio(tmp_path: Path) -> Path:
    make_image(tmp_path / "a.png", (200, 100))
    polygon = {
        "type": "polygonlabels",
        "original_width": 200,
        "original_height": 100,
        "value": {"points": [[10, 20], [30, 10], [40, 50], [15, 60]], "polygonlabels": ["p3"]},
    }
    turned = region(Box(0, 0.5, 0.5, 0.2, 0.2), 200, 100, 1)
    turned["value"]["rotation"] = 30
    plain = region(Box(5, 0.8, 0.5, 0.1, 0.2), 200, 100, 2)
    task = {"id": 7, "data": {"image": "a.png"}, "annotations": [{"result": [polygon, turned, plain]}]}
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    return path


def test_label_studio_polygons_and_turned_boxes_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = _labelstudio(tmp_path)
    argv = ["dataset", "import", "--format", "labelstudio", str(tasks), "--out", str(tmp_path / "out")]
    assert smj.main(argv) == 2
    err = capsys.readouterr().err
    assert "polygon: task 7: a polygon" in err and "rotated: task 7: a rectangle turned 30 degrees" in err
    assert smj.main([*argv, "--lenient"]) == 0
    assert "converted 2" in capsys.readouterr().out
    (item,) = read_yolo(tmp_path / "out")
    by_class = {DETECTOR_CLASSES[b.class_id]: b for b in item.boxes}
    assert set(by_class) == {"p3", "m1", "m6"}
    polygon = by_class["p3"]  # the bounding box of the points (percent): x 10..40, y 10..60
    assert (polygon.xc, polygon.yc, polygon.w, polygon.h) == pytest.approx((0.25, 0.35, 0.3, 0.5))
    assert by_class["m1"].w > 0.2  # the upright box around the turned one is wider than it


def _coco(json_path: Path, boxes: dict[int, list[float]], file_name: str = "a.png") -> None:
    """A COCO file of one 100x50 image (``file_name``) and its boxes (annotation id -> bbox), 5m each."""
    coco = {
        "images": [{"id": 1, "file_name": file_name, "width": 100, "height": 50}],
        "categories": [{"id": 1, "name": "5m"}],
        "annotations": [
            {"id": number, "image_id": 1, "category_id": 1, "bbox": bbox} for number, bbox in boxes.items()
        ],
    }
    json_path.write_text(json.dumps(coco))  # Python writes NaN as it is, as some tools do


def _coco_import(tmp_path: Path) -> list[str]:
    """``smj dataset import`` of ``tmp_path/coco.json`` into ``tmp_path/o``."""
    return [
        "dataset",
        "import",
        "--format",
        "coco",
        str(tmp_path / "coco.json"),
        "--out",
        str(tmp_path / "o"),
    ]


def test_coco_boxes_outside_the_image_are_clipped_when_lenient(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_image(tmp_path / "a.png", (100, 50))
    _coco(tmp_path / "coco.json", {9: [-10, 10, 30, 20]})
    argv = _coco_import(tmp_path)
    assert smj.main(argv) == 2
    assert "annotation 9: box reaches outside the image" in capsys.readouterr().err
    assert smj.main([*argv, "--lenient"]) == 0
    ((box,),) = [item.boxes for item in read_yolo(tmp_path / "o")]
    assert (box.xc - box.w / 2, box.w) == pytest.approx((0.0, 0.2))


def test_a_coco_box_that_is_not_finite_is_malformed_never_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_image(tmp_path / "a.png", (100, 50))
    _coco(tmp_path / "coco.json", {7: [float("nan"), 10, 30, 20], 8: [10, 10, 30, 20]})
    argv = _coco_import(tmp_path)
    assert smj.main(argv) == 2
    assert "not finite" in capsys.readouterr().err
    assert smj.main([*argv, "--lenient"]) == 0
    assert "skipped 1" in capsys.readouterr().out  # the malformed box, counted
    labels = "".join(path.read_text() for path in (tmp_path / "o").rglob("labels/**/*.txt"))
    assert "nan" not in labels.lower() and len(labels.splitlines()) == 1


def test_no_label_file_holds_a_number_that_is_not_finite() -> None:
    from datasets.labels import DatasetError
    from datasets.yolo import format_label_lines

    assert format_label_lines([Box(0, 0.5, 0.5, 0.1, 0.1)]) == "0 0.500000 0.500000 0.100000 0.100000\n"
    with pytest.raises(DatasetError, match="not finite"):
        format_label_lines([Box(0, float("nan"), 0.5, 0.1, 0.1)])


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "link"])
def test_a_coco_image_outside_the_dataset_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    outside = tmp_path / "secret.png"
    make_image(outside, (100, 50))
    root = tmp_path / "set" / "annotations"
    root.mkdir(parents=True)
    name = {"dotdot": "../../secret.png", "absolute": str(outside), "link": "linked.png"}[kind]
    if kind == "link":
        (root / "linked.png").symlink_to(outside)
    _coco(root / "coco.json", {1: [10, 10, 30, 20]}, name)
    argv = ["dataset", "import", "--format", "coco", str(root / "coco.json"), "--out", str(tmp_path / "o")]
    assert smj.main(argv) == 2
    assert "outside the dataset" in capsys.readouterr().err
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").rglob("*.png"))


def test_a_label_file_with_a_byte_order_mark_reads_and_one_not_in_utf8_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "src"
    (root / "train" / "labels").mkdir(parents=True)
    (root / "data.yaml").write_text(yaml.safe_dump({"names": list(DETECTOR_CLASSES)}))
    for index in range(2):
        make_image(root / "train" / "images" / f"t{index}.png", (100, 80), seed=index)
    (root / "train" / "labels" / "t0.txt").write_bytes("\ufeff0 0.5 0.5 0.2 0.2\n".encode())  # a BOM
    argv = ["dataset", "import", "--format", "yolo", str(root), "--out", str(tmp_path / "o")]
    assert smj.main(argv) == 0
    (root / "train" / "labels" / "t1.txt").write_bytes("0 0.5 0.5 0.2 0.2\n# étiquette\n".encode("latin-1"))
    argv = ["dataset", "import", "--format", "yolo", str(root), "--out", str(tmp_path / "o2")]
    assert smj.main(argv) == 2
    assert f"{root / 'train' / 'labels' / 't1.txt'}:2: not_utf8: not UTF-8 text" in capsys.readouterr().err
    assert smj.main([*argv[:-1], str(tmp_path / "o3"), "--lenient"]) == 0  # the other photo imported
    assert [item.image.stem for item in read_yolo(tmp_path / "o3")] == ["t0"]


def test_a_yolo_polygon_line_is_refused_or_converted_to_its_box_when_lenient(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "src"
    (root / "train" / "labels").mkdir(parents=True)
    (root / "data.yaml").write_text(yaml.safe_dump({"names": list(DETECTOR_CLASSES)}))
    make_image(root / "train" / "images" / "p.png", (100, 80))
    polygon = "4 0.2 0.3 0.4 0.3 0.4 0.7 0.2 0.7\n"  # a 5m outlined by four points
    (root / "train" / "labels" / "p.txt").write_text(polygon)
    argv = ["dataset", "import", "--format", "yolo", str(root), "--out", str(tmp_path / "o")]
    assert smj.main(argv) == 2
    assert "p.txt:1: polygon" in capsys.readouterr().err
    assert smj.main([*argv, "--lenient"]) == 0
    assert "converted 1" in capsys.readouterr().out
    ((box,),) = [item.boxes for item in read_yolo(tmp_path / "o")]
    assert box.class_id == 4 and (box.xc, box.yc, box.w, box.h) == pytest.approx((0.3, 0.5, 0.2, 0.4))


def _coco_doc(images: list[dict], annotations: list[dict]) -> dict:
    return {"images": images, "categories": [{"id": 1, "name": "5m"}], "annotations": annotations}


def _import(tmp_path: Path, doc: dict, *extra: str) -> list[str]:
    (tmp_path / "coco.json").write_text(json.dumps(doc))
    out = tmp_path / ("o" + "".join(extra))
    return ["dataset", "import", "--format", "coco", str(tmp_path / "coco.json"), "--out", str(out), *extra]


def test_a_coco_image_smaller_than_declared_is_reported_and_rescaled_when_lenient(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_image(tmp_path / "a.png", (320, 240))
    doc = _coco_doc(
        [{"id": 1, "file_name": "a.png", "width": 1000, "height": 1000}],
        [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [500, 500, 100, 100]}],
    )
    assert smj.main(_import(tmp_path, doc)) == 2
    err = capsys.readouterr().err
    assert (
        f"{tmp_path / 'coco.json'}: size_mismatch: image 1: declared 1000x1000, the file 'a.png' is 320x240"
        in err
    )
    assert smj.main(_import(tmp_path, doc, "--lenient")) == 0
    assert "rescaled 1" in capsys.readouterr().out
    ((box,),) = [item.boxes for item in read_yolo(tmp_path / "o--lenient")]
    assert (box.xc, box.yc, box.w, box.h) == pytest.approx((0.55, 0.55, 0.1, 0.1))  # where it was drawn


def test_every_coco_problem_is_reported_in_one_pass_with_its_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a.png", "b.png", "c.png"):
        make_image(tmp_path / name, (100, 50))
    truncated = tmp_path / "t.jpg"
    Image.new("RGB", (100, 50), (200, 10, 10)).save(truncated, quality=90)
    truncated.write_bytes(truncated.read_bytes()[:300])
    images = [
        {"id": 1, "file_name": "a.png", "width": 100, "height": 50},
        {"id": 1, "file_name": "b.png", "width": 100, "height": 50},  # a second image 1
        {"id": 2, "file_name": "gone.png", "width": 100, "height": 50},
        {"id": 3, "file_name": "t.jpg", "width": 100, "height": 50},
        {"id": 4, "file_name": "c.png", "width": 100, "height": 50},
    ]
    box = [10, 10, 20, 20]
    annotations = [
        {"id": 10, "image_id": 1, "category_id": 1, "bbox": box},
        {"id": 10, "image_id": 1, "category_id": 1, "bbox": box},  # the same id again: a box doubled
        {"id": 11, "image_id": 9, "category_id": 1, "bbox": box},  # no image 9
        {"id": 12, "image_id": 4, "category_id": 7, "bbox": box},  # no category 7
        {
            "id": 13,
            "image_id": 4,
            "category_id": 1,
            "bbox": box,
            "segmentation": {"counts": "x", "size": [50, 100]},
        },
        {"id": 14, "image_id": 4, "category_id": 1, "segmentation": [[40, 10, 60, 10, 60, 30, 40, 30]]},
    ]
    assert smj.main(_import(tmp_path, _coco_doc(images, annotations))) == 2
    lines = capsys.readouterr().err.splitlines()
    found = sorted(line.removeprefix(f"{tmp_path / 'coco.json'}: ").split(" (")[0] for line in lines[:-1])
    assert found == [
        f"{truncated}: bad_image: not a readable image",
        "crowd: annotation 13: a crowd or RLE region of category '5m'",
        "duplicate_id: annotation 10: the id appears twice in 'annotations'",
        "duplicate_id: image 1: the id appears twice in 'images'",
        "missing_image: image 2: 'gone.png' not found next to the file or in images/",
        "orphan_annotation: annotation 11: image_id 9 is not an image of the file",
        "polygon: annotation 14: a polygon without a box, imported as its bounding box",
        "unknown_category: annotation 12: category_id 7 is not in 'categories'",
    ]
    assert "8 problems" in lines[-1]
    assert smj.main(_import(tmp_path, _coco_doc(images, annotations), "--lenient")) == 0
    assert "converted 1, skipped 7" in capsys.readouterr().out
    written = {item.image.name: item.boxes for item in read_yolo(tmp_path / "o--lenient")}
    assert sorted(written) == ["a.png", "c.png"]
    assert len(written["a.png"]) == 1  # not doubled
    (polygon,) = written["c.png"]
    assert (polygon.xc, polygon.yc, polygon.w, polygon.h) == pytest.approx((0.5, 0.4, 0.2, 0.4))


def test_a_box_labelled_twice_is_reported_by_import_as_by_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from datasets.check import check_dataset

    root = tmp_path / "src"
    (root / "train" / "labels").mkdir(parents=True)
    (root / "data.yaml").write_text(yaml.safe_dump({"names": list(DETECTOR_CLASSES)}))
    make_image(root / "train" / "images" / "t0.png", (100, 80))
    (root / "train" / "labels" / "t0.txt").write_text(
        "0 0.5 0.5 0.2 0.2\n1 0.2 0.2 0.1 0.1\n0 0.501 0.5 0.2 0.2\n"
    )
    assert [(e.kind, e.line) for e in check_dataset(root).errors] == [("duplicate", 3)]
    argv = ["dataset", "import", "--format", "yolo", str(root), "--out", str(tmp_path / "o")]
    assert smj.main(argv) == 2
    assert (
        f"{root / 'train' / 'labels' / 't0.txt'}:3: duplicate: the same box as line 1"
        in capsys.readouterr().err
    )
    assert smj.main([*argv, "--lenient"]) == 0
    ((first, second),) = [item.boxes for item in read_yolo(tmp_path / "o")]
    assert (first.class_id, second.class_id) == (0, 1)
    assert check_dataset(tmp_path / "o").errors == ()


def test_a_coco_box_given_twice_under_two_ids_is_a_duplicate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_image(tmp_path / "a.png", (100, 50))
    _coco(tmp_path / "coco.json", {1: [10, 10, 30, 20], 2: [10, 10, 30, 20]})
    argv = _coco_import(tmp_path)
    assert smj.main(argv) == 2
    assert "duplicate: annotation 2: the same box as annotation 1 (IoU 1.00)" in capsys.readouterr().err
