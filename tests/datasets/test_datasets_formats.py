"""Dataset formats: YOLO <-> COCO <-> Label Studio keep every box; readers of other layouts, their errors."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from dataset_builders import make_image
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from datasets.coco import as_coco, read_coco, write_coco
from datasets.labels import Box, DatasetError, LabelledImage
from datasets.labelstudio import (
    _box,
    as_task,
    image_url,
    label_config,
    read_labelstudio,
    region,
    write_labelstudio,
)
from datasets.yolo import image_size, read_yolo, write_yolo
from vision.detections import BACK, DETECTOR_CLASSES, HONOUR

TOLERANCE = 1e-4


# --- builders -------------------------------------------------------------------------------------------


def sample_images(folder: Path, sources: int = 4, copies: int = 2, size: tuple[int, int] = (64, 48)):
    """``sources`` photos with ``copies`` images each (augmented copies share the source), 3 boxes each."""
    rng = np.random.default_rng(1)
    items = []
    for s in range(sources):
        for c in range(copies):
            stem = f"photo{s}" if c == 0 else f"photo{s}__aug{c}"
            image = make_image(folder / f"{stem}.png", size, seed=s * 10 + c)
            boxes = tuple(
                Box(
                    int(rng.integers(0, 29)),
                    float(0.15 + 0.3 * k + rng.uniform(-0.05, 0.05)),
                    float(rng.uniform(0.3, 0.7)),
                    float(rng.uniform(0.1, 0.25)),
                    float(rng.uniform(0.2, 0.5)),
                )
                for k in range(3)
            )
            split = ("train", "val", "test")[s % 3]
            items.append(LabelledImage(image, boxes, size[0], size[1], source=f"photo{s}", split=split))
    return items


def boxes_by_stem(images) -> dict[str, list[Box]]:
    return {item.stem: sorted(item.boxes, key=lambda b: (b.class_id, b.xc, b.yc)) for item in images}


def assert_same_boxes(left, right) -> None:
    a, b = boxes_by_stem(left), boxes_by_stem(right)
    assert a.keys() == b.keys()
    for stem in a:
        assert len(a[stem]) == len(b[stem]), stem
        for x, y in zip(a[stem], b[stem], strict=True):
            assert x.class_id == y.class_id, stem
            for field in ("xc", "yc", "w", "h"):
                assert abs(getattr(x, field) - getattr(y, field)) < TOLERANCE, (stem, field)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "ours"
    write_yolo(sample_images(tmp_path / "raw"), root)
    return root


# --- round trips ----------------------------------------------------------------------------------------


def test_yolo_round_trip_keeps_boxes_sources_and_splits(dataset: Path, tmp_path: Path):
    original = read_yolo(dataset)
    write_yolo(original, tmp_path / "copy")
    again = read_yolo(tmp_path / "copy")
    assert_same_boxes(original, again)
    assert {(i.stem, i.source, i.split) for i in again} == {(i.stem, i.source, i.split) for i in original}


def test_yolo_coco_yolo_keeps_every_box(dataset: Path, tmp_path: Path):
    original = read_yolo(dataset)
    written = write_coco(original, tmp_path / "coco")
    assert sorted(p.parent.name for p in written) == ["test", "train", "val"]
    from_coco = read_coco(tmp_path / "coco")
    assert_same_boxes(original, from_coco)
    assert {(i.stem, i.split, i.source) for i in from_coco} == {(i.stem, i.split, i.source) for i in original}
    write_yolo(from_coco, tmp_path / "back")
    assert_same_boxes(original, read_yolo(tmp_path / "back"))


def test_yolo_labelstudio_yolo_keeps_every_box(dataset: Path, tmp_path: Path):
    original = read_yolo(dataset)
    tasks, config = write_labelstudio(original, tmp_path / "ls", root=dataset)
    assert config.read_text(encoding="utf-8").count("<Label ") == len(DETECTOR_CLASSES)
    from_ls = read_labelstudio(tasks)
    assert_same_boxes(original, from_ls)
    assert {(i.stem, i.split, i.source) for i in from_ls} == {(i.stem, i.split, i.source) for i in original}
    assert {i.image for i in from_ls} == {i.image for i in original}


def test_coco_labelstudio_coco_keeps_every_box(dataset: Path, tmp_path: Path):
    write_coco(read_yolo(dataset), tmp_path / "coco")
    from_coco = read_coco(tmp_path / "coco")
    tasks, _ = write_labelstudio(from_coco, tmp_path / "ls", root=tmp_path / "coco", kind="annotations")
    from_ls = read_labelstudio(tasks)
    write_coco(from_ls, tmp_path / "coco2")
    assert_same_boxes(from_coco, read_coco(tmp_path / "coco2"))


@settings(max_examples=60, deadline=None)
@given(
    xc=st.floats(0.01, 0.99),
    yc=st.floats(0.01, 0.99),
    w=st.floats(0.001, 1),
    h=st.floats(0.001, 1),
    width=st.integers(16, 6000),
    height=st.integers(16, 6000),
    class_id=st.integers(0, 28),
)
def test_box_conversions_round_trip(xc, yc, w, h, width, height, class_id):
    box = Box(class_id, xc, yc, w, h)
    # Label Studio: percent of the image
    back = _box(class_id, region(box, width, height, 0)["value"], (width, height), "test")
    assert max(abs(a - b) for a, b in zip(vars(box).values(), vars(back).values(), strict=True)) < 1e-9
    # COCO: pixels, rounded to 1e-4 px
    item = LabelledImage(Path("x.png"), (box,), width, height)
    x, y, bw, bh = as_coco([item])["annotations"][0]["bbox"]
    coco = Box.from_xyxy(class_id, (x, y, x + bw, y + bh), width, height)
    for field in ("xc", "yc", "w", "h"):
        assert abs(getattr(box, field) - getattr(coco, field)) < TOLERANCE


# --- COCO reader ----------------------------------------------------------------------------------------


def coco_doc(images: list[tuple[str, int, int]], annotations: list[tuple[int, int, list[float]]], categories):
    return {
        "images": [
            {"id": i, "file_name": name, "width": w, "height": h} for i, (name, w, h) in enumerate(images)
        ],
        "annotations": [
            {"id": n, "image_id": image_id, "category_id": cat, "bbox": bbox, "area": 1, "iscrowd": 0}
            for n, (image_id, cat, bbox) in enumerate(annotations)
        ],
        "categories": [{"id": i, "name": name, "supercategory": "none"} for i, name in enumerate(categories)],
    }


def test_roboflow_coco_folder_maps_names_and_keeps_honours(tmp_path: Path):
    src = tmp_path / "rf"
    for split in ("train", "valid"):
        make_image(src / split / f"{split}_a_jpg.rf.0123456789abcdef0123.jpg", (100, 50))
        doc = coco_doc(
            [(f"{split}_a_jpg.rf.0123456789abcdef0123.jpg", 100, 50)],
            [(0, 1, [10, 5, 20, 30]), (0, 2, [40, 5, 20, 30]), (0, 3, [70, 5, 20, 30])],
            ["mahjong-unused-supercategory", "5 dots", "East Wind", "Back"],
        )
        (src / split / "_annotations.coco.json").write_text(json.dumps(doc))
    images = read_coco(src)
    assert sorted(i.split for i in images) == ["train", "val"]
    train = next(i for i in images if i.split == "train")
    assert [b.class_id for b in train.boxes] == [DETECTOR_CLASSES.index("p5"), HONOUR, BACK]
    assert train.boxes[0] == Box(DETECTOR_CLASSES.index("p5"), 0.2, 0.4, 0.2, 0.6)
    assert train.source == "train_a"


def test_coco_instances_layout_with_images_folder(tmp_path: Path):
    src = tmp_path / "cocoset"
    make_image(src / "images" / "val2017" / "000001.jpg", (80, 40))
    doc = coco_doc([("000001.jpg", 80, 40)], [(0, 0, [0, 0, 8, 4])], ["1m"])
    (src / "annotations").mkdir(parents=True)
    (src / "annotations" / "instances_val2017.json").write_text(json.dumps(doc))
    (only,) = read_coco(src)
    assert only.split == "val" and only.boxes == (Box(0, 0.05, 0.05, 0.1, 0.1),)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        pytest.param(
            lambda d: d["annotations"][0].update(iscrowd=1),
            "crowd or RLE region of category 'm1'",
            id="iscrowd",
        ),
        pytest.param(
            lambda d: d["categories"][0].update(name="coffee cup"), "'coffee cup'", id="unknown-name"
        ),
        pytest.param(lambda d: d["annotations"][0].update(bbox=[1, 2]), "'bbox' must be", id="bad-bbox"),
        pytest.param(lambda d: d["annotations"][0].update(image_id=99), "image_id 99", id="bad-image-id"),
        pytest.param(lambda d: d["annotations"][0].update(category_id=7), "category_id 7", id="bad-category"),
        pytest.param(lambda d: d.pop("images"), "'images' must be a list", id="no-images"),
        pytest.param(
            lambda d: d["images"][0].update(file_name="gone.jpg"), "'gone.jpg' not found", id="no-file"
        ),
    ],
)
def test_coco_bad_input_names_the_problem(tmp_path: Path, mutate, message):
    make_image(tmp_path / "a.jpg")
    doc = coco_doc([("a.jpg", 64, 48)], [(0, 0, [1, 1, 10, 10])], ["m1"])
    mutate(doc)
    (tmp_path / "x.json").write_text(json.dumps(doc))
    with pytest.raises(DatasetError, match=re.escape(message)):
        read_coco(tmp_path / "x.json")


def test_coco_map_resolves_unknown_names_and_drop_leaves_boxes_out(tmp_path: Path):
    make_image(tmp_path / "a.jpg")
    doc = coco_doc(
        [("a.jpg", 64, 48)], [(0, 0, [1, 1, 10, 10]), (0, 1, [20, 1, 10, 10])], ["coffee cup", "tiles"]
    )
    doc["annotations"][1]["iscrowd"] = 1
    (tmp_path / "x.json").write_text(json.dumps(doc))
    with pytest.raises(DatasetError, match="coffee cup"):
        read_coco(tmp_path / "x.json", {"tiles": "drop"})
    (item,) = read_coco(tmp_path / "x.json", {"coffee cup": "honour", "tiles": "drop"})
    assert [b.class_id for b in item.boxes] == [HONOUR]


def test_coco_malformed_json_gives_line(tmp_path: Path):
    (tmp_path / "x.json").write_text('{"images": [\n  oops\n]}')
    with pytest.raises(DatasetError, match=r"x\.json:2: not valid JSON"):
        read_coco(tmp_path / "x.json")


# --- Label Studio reader --------------------------------------------------------------------------------


def test_labelstudio_prefers_latest_live_annotation_over_predictions(tmp_path: Path):
    image = make_image(tmp_path / "img" / "a.png", (200, 100))
    prediction = region(Box(0, 0.5, 0.5, 0.2, 0.2), 200, 100, 0)
    first = region(Box(1, 0.5, 0.5, 0.2, 0.2), 200, 100, 0)
    latest = region(Box(2, 0.25, 0.5, 0.1, 0.2), 200, 100, 0)
    tasks = [
        {
            "id": 7,
            "data": {"image": "/data/upload/3/0a1b2c3d-a.png"},
            "annotations": [{"result": [first]}, {"result": [latest]}, {"result": [], "was_cancelled": True}],
            "predictions": [{"result": [prediction]}],
        },
        {
            "id": 8,
            "data": {"image": "/data/upload/3/0a1b2c3d-a.png"},
            "predictions": [{"result": [prediction]}],
        },
        {"id": 9, "data": {"image": "/data/upload/3/0a1b2c3d-a.png"}},
    ]
    (tmp_path / "export.json").write_text(json.dumps(tasks))
    reviewed, predicted, unlabelled = read_labelstudio(tmp_path / "export.json", images_dir=tmp_path / "img")
    assert reviewed.image == image.resolve() and reviewed.boxes == (Box(2, 0.25, 0.5, 0.1, 0.2),)
    assert reviewed.meta["labelstudio"] == "annotations"
    assert predicted.boxes[0].class_id == 0 and predicted.meta["labelstudio"] == "predictions"
    assert unlabelled.boxes == () and unlabelled.meta["labelstudio"] == "unlabelled"


def test_labelstudio_json_min_and_turned_regions(tmp_path: Path):
    make_image(tmp_path / "b.png", (100, 100))
    tasks = [
        {
            "image": "http://localhost:8080/data/local-files/?d=elsewhere/b.png",
            "label": [
                {
                    "x": 10,
                    "y": 10,
                    "width": 20,
                    "height": 10,
                    "rotation": 90,
                    "rectanglelabels": ["7s"],
                    "original_width": 100,
                    "original_height": 100,
                },
            ],
        }
    ]
    (tmp_path / "min.json").write_text(json.dumps(tasks))
    (item,) = read_labelstudio(tmp_path / "min.json")
    (box,) = item.boxes
    # turned 90 degrees about its top-left corner (10, 10): x from 0 to 10, y from 10 to 30 pixels
    assert box.class_id == DETECTOR_CLASSES.index("s7")
    assert box.xyxy(100, 100) == pytest.approx((0, 10, 10, 30), abs=1e-6)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("[{]", "not valid JSON", id="malformed"),
        pytest.param('{"a": 1}', "no image in its data", id="no-image"),
        pytest.param('"hello"', "expected a list of task objects", id="not-tasks"),
        pytest.param(
            '[{"data": {"image": "/nowhere/x.png"}}]', "'/nowhere/x.png' not found", id="missing-image"
        ),
    ],
)
def test_labelstudio_bad_input(tmp_path: Path, content: str, message: str):
    (tmp_path / "t.json").write_text(content)
    with pytest.raises(DatasetError, match=message):
        read_labelstudio(tmp_path / "t.json")


def test_labelstudio_unknown_label_names_the_task(tmp_path: Path):
    make_image(tmp_path / "a.png")
    result = region(Box(0, 0.5, 0.5, 0.2, 0.2), 64, 48, 0)
    result["value"]["rectanglelabels"] = ["mystery"]
    (tmp_path / "t.json").write_text(
        json.dumps([{"id": 3, "data": {"image": "a.png"}, "annotations": [{"result": [result]}]}])
    )
    with pytest.raises(DatasetError, match=r"unknown class name 'mystery' \(task 3\)"):
        read_labelstudio(tmp_path / "t.json")


def test_task_layout_matches_the_label_config(tmp_path: Path):
    image = make_image(tmp_path / "data" / "images" / "train" / "a b.png")
    item = LabelledImage(image, (Box(HONOUR, 0.5, 0.5, 0.25, 0.5),), 64, 48, source="a b", split="train")
    task = as_task(item, image_url(image, tmp_path / "data", "/data/local-files/?d=set/"), scores=[0.87654])
    assert task["data"]["image"] == "/data/local-files/?d=set/images/train/a%20b.png"
    (result,) = task["predictions"][0]["result"]
    assert (result["from_name"], result["to_name"], result["type"]) == ("label", "image", "rectanglelabels")
    assert result["value"] == {
        "x": 37.5,
        "y": 25.0,
        "width": 25.0,
        "height": 50.0,
        "rotation": 0,
        "rectanglelabels": ["honour"],
    }
    assert (result["original_width"], result["original_height"], result["score"]) == (64, 48, 0.8765)
    config = label_config()
    assert 'name="label" toName="image"' in config and 'name="image" value="$image"' in config


# --- YOLO reader and writer fixes -----------------------------------------------------------------------


def test_read_yolo_takes_sources_from_sources_csv(dataset: Path):
    rows = (
        (dataset / "sources.csv").read_text().replace(",photo1,", ",shared,").replace(",photo2,", ",shared,")
    )
    (dataset / "sources.csv").write_text(rows)
    sources = {i.stem: i.source for i in read_yolo(dataset)}
    assert sources["photo1__aug1"] == sources["photo2"] == "shared" and sources["photo3"] == "photo3"


def test_image_size_follows_exif_rotation(tmp_path: Path):
    exif = Image.Exif()
    exif[0x0112] = 6  # stored landscape, shown portrait
    Image.new("RGB", (40, 20)).save(tmp_path / "turned.jpg", exif=exif)
    assert image_size(tmp_path / "turned.jpg") == (20, 40)


def test_write_yolo_refuses_two_images_with_one_name(tmp_path: Path):
    a, b = make_image(tmp_path / "a" / "x.png"), make_image(tmp_path / "b" / "x.jpg")
    items = [LabelledImage(a, (), 64, 48, split="train"), LabelledImage(b, (), 64, 48, split="train")]
    with pytest.raises(DatasetError, match="same name"):
        write_yolo(items, tmp_path / "out")


def test_yolo_map_drop_leaves_a_class_out(tmp_path: Path):
    src = tmp_path / "rf"
    make_image(src / "images" / "a.png")
    (src / "labels").mkdir(parents=True)
    (src / "labels" / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n1 0.3 0.3 0.1 0.1\n")
    (src / "data.yaml").write_text("names: ['coffee cup', 'Bamboo 3']\n")
    with pytest.raises(DatasetError, match="coffee cup"):
        read_yolo(src)
    (item,) = read_yolo(src, {"coffee cup": "drop"})
    assert [b.class_id for b in item.boxes] == [DETECTOR_CLASSES.index("s3")]
    assert math.isclose(item.boxes[0].w, 0.1)
