"""``smj dataset ...`` in-process: import/export round trips, check, split by source, autolabel, bad input."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from dataset_builders import make_image
from PIL import Image

from api.fakes import OneStep
from datasets.autolabel import autolabel
from datasets.labels import Box, LabelledImage
from datasets.labelstudio import read_labelstudio
from datasets.yolo import read_yolo, write_yolo
from vision.detect.view import Located
from vision.detections import Detections

SIBLING_CLIS = ("scoring.cli", "vision.cli", "api.cli")


@pytest.fixture
def smj(monkeypatch: pytest.MonkeyPatch):
    """``smj.main`` with stand-ins for sibling command modules that are not written yet."""
    for name in SIBLING_CLIS:
        if importlib.util.find_spec(name) is None:
            stub = types.ModuleType(name)
            stub.register = lambda commands: None  # type: ignore[attr-defined]
            stub.add_hand_arguments = lambda parser, hand_required=True: None  # type: ignore[attr-defined]
            stub.add_context_arguments = lambda parser: None  # type: ignore[attr-defined]
            monkeypatch.setitem(sys.modules, name, stub)
    import smj as module

    return module.main


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """12 sources (3 images each: the photo and two augmented copies), all in train, 2 boxes per image."""
    items = []
    for s in range(12):
        for copy in range(3):
            stem = f"p{s:02d}" if copy == 0 else f"p{s:02d}__aug{copy}"
            image = make_image(tmp_path / "raw" / f"{stem}.png", seed=s * 3 + copy)
            boxes = (Box(s % 29, 0.25, 0.5, 0.2, 0.5), Box(28, 0.7, 0.5, 0.3, 0.6))
            items.append(LabelledImage(image, boxes, 64, 48, source=f"p{s:02d}", split="train"))
    root = tmp_path / "set"
    write_yolo(items, root)
    return root


def boxes_of(root: Path) -> dict[str, tuple[tuple[int, float, float, float, float], ...]]:
    return {
        i.stem: tuple(
            sorted(
                (b.class_id, round(b.xc, 4), round(b.yc, 4), round(b.w, 4), round(b.h, 4)) for b in i.boxes
            )
        )
        for i in read_yolo(root)
    }


# --- import / export ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["yolo", "coco", "labelstudio"])
def test_export_then_import_keeps_every_box(smj, dataset: Path, tmp_path: Path, fmt: str):
    exported, imported = tmp_path / "exported", tmp_path / "imported"
    assert smj(["dataset", "export", "--format", fmt, str(dataset), "--out", str(exported)]) == 0
    src = exported / "tasks.json" if fmt == "labelstudio" else exported
    assert smj(["dataset", "import", "--format", fmt, str(src), "--out", str(imported)]) == 0
    assert boxes_of(imported) == boxes_of(dataset)
    assert {i.stem: i.source for i in read_yolo(imported)} == {i.stem: i.source for i in read_yolo(dataset)}


def test_import_hard_links_never_moves(smj, dataset: Path, tmp_path: Path):
    before = sorted(p.name for p in (dataset / "images" / "train").iterdir())
    assert smj(["dataset", "import", "--format", "yolo", str(dataset), "--out", str(tmp_path / "b")]) == 0
    assert sorted(p.name for p in (dataset / "images" / "train").iterdir()) == before
    original = dataset / "images" / "train" / "p00.png"
    (linked,) = (tmp_path / "b" / "images").glob("*/p00.png")  # SRC has no val: split by source
    assert linked.stat().st_ino == original.stat().st_ino
    assert (
        smj(["dataset", "import", "--format", "yolo", str(dataset), "--out", str(tmp_path / "c"), "--copy"])
        == 0
    )
    (copied,) = (tmp_path / "c" / "images").glob("*/p00.png")
    assert copied.stat().st_ino != original.stat().st_ino


def test_import_with_ratios_splits_by_source(smj, dataset: Path, tmp_path: Path, capsys):
    out = tmp_path / "b"
    assert (
        smj(
            [
                "dataset",
                "import",
                "--format",
                "yolo",
                str(dataset),
                "--out",
                str(out),
                "--split-ratios",
                "0.5,0.5",
            ]
        )
        == 0
    )
    images = read_yolo(out)
    assert {i.split for i in images} == {"train", "val"}
    assert all(len({i.split for i in images if i.source == s}) == 1 for s in {i.source for i in images})
    assert "train" in capsys.readouterr().out


def test_import_roboflow_yolo_with_map(smj, tmp_path: Path):
    src = tmp_path / "rf"
    make_image(src / "train" / "images" / "a.jpg")
    (src / "train" / "labels").mkdir(parents=True)
    (src / "train" / "labels" / "a.txt").write_text(
        "0 0.5 0.5 0.2 0.2\n1 0.2 0.2 0.1 0.1\n2 0.8 0.8 0.1 0.1\n"
    )
    (src / "data.yaml").write_text("names: ['Red Dragon', 'coffee cup', '9-bamboo']\n")
    out = tmp_path / "out"
    assert (
        smj(
            ["dataset", "import", "--format", "yolo", str(src), "--out", str(out), "--map", "coffee cup=drop"]
        )
        == 0
    )
    (item,) = read_yolo(out)
    assert [b.name for b in item.boxes] == ["honour", "s9"]


def test_labelstudio_export_options(smj, dataset: Path, tmp_path: Path):
    out = tmp_path / "ls"
    args = ["dataset", "export", "--format", "labelstudio", str(dataset), "--out", str(out)]
    assert smj([*args, "--image-root", "/data/local-files/?d=mahjong/", "--as", "annotations"]) == 0
    tasks = json.loads((out / "tasks.json").read_text())
    assert tasks[0]["data"]["image"].startswith("/data/local-files/?d=mahjong/images/train/")
    assert "annotations" in tasks[0] and "predictions" not in tasks[0]
    assert (out / "label_config.xml").read_text().count("<Label ") == 29
    # the custom prefix is resolved against --images when reading back
    imported = tmp_path / "back"
    assert (
        smj(
            [
                "dataset",
                "import",
                "--format",
                "labelstudio",
                str(out / "tasks.json"),
                "--images",
                str(dataset),
                "--out",
                str(imported),
            ]
        )
        == 0
    )
    assert boxes_of(imported) == boxes_of(dataset)


# --- check ----------------------------------------------------------------------------------------------


def test_check_exit_codes_and_json(smj, dataset: Path, tmp_path: Path, capsys):
    sheet = tmp_path / "sheet.png"
    assert smj(["dataset", "check", str(dataset), "--sheet", str(sheet), "--per-class", "2"]) == 0
    assert sheet.is_file() and "no label errors" in capsys.readouterr().out
    label = dataset / "labels" / "train" / "p03.txt"
    label.write_text("0 0.5 0.5 0.2 0.2\n0 0.5 0.5 0.2 0.2\n40 0.5 0.5 0.2 0.2\n")
    assert smj(["dataset", "check", str(dataset)]) == 1
    out = capsys.readouterr().out
    assert f"{label}:2: duplicate:" in out and f"{label}:3: unknown_class:" in out
    assert smj(["dataset", "check", str(dataset), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and {e["kind"] for e in report["errors"]} == {"duplicate", "unknown_class"}
    assert report["images"] == {"train": 36} and report["counts"]["honour"]["train"] == 35


# --- split ----------------------------------------------------------------------------------------------


def test_split_in_place_keeps_sources_together(smj, dataset: Path, capsys):
    before = boxes_of(dataset)
    assert smj(["dataset", "split", str(dataset), "--by", "source", "--ratios", "0.5,0.25,0.25"]) == 0
    printed = capsys.readouterr().out
    images = read_yolo(dataset)
    assert boxes_of(dataset) == before  # labels moved with their images
    parts = {i.split for i in images}
    assert parts == {"train", "val", "test"}
    for source in {i.source for i in images}:
        assert len({i.split for i in images if i.source == source}) == 1
    counts = {s: sum(1 for i in images if i.split == s) for s in parts}
    assert counts == {"train": 18, "val": 9, "test": 9}
    assert "train      18 images" in printed
    for split in parts:  # files really moved: each image sits in its split's folders with its label
        for image in (dataset / "images" / split).iterdir():
            assert (dataset / "labels" / split / f"{image.stem}.txt").is_file()
    assert not (dataset / ".resplit").exists()
    assert "val: images/val" in (dataset / "data.yaml").read_text()


def test_split_is_deterministic_and_stable(smj, dataset: Path, tmp_path: Path):
    assert (
        smj(["dataset", "split", str(dataset), "--ratios", "0.6,0.2,0.2", "--out", str(tmp_path / "a")]) == 0
    )
    assert (
        smj(["dataset", "split", str(dataset), "--ratios", "0.6,0.2,0.2", "--out", str(tmp_path / "b")]) == 0
    )
    a = {i.stem: i.split for i in read_yolo(tmp_path / "a")}
    assert a == {i.stem: i.split for i in read_yolo(tmp_path / "b")}
    assert {i.split for i in read_yolo(dataset)} == {"train"}  # --out leaves DIR alone
    # splitting in place twice gives the same parts (files swap back and forth without loss)
    assert smj(["dataset", "split", str(dataset), "--ratios", "0.6,0.2,0.2"]) == 0
    assert smj(["dataset", "split", str(dataset), "--ratios", "0.6,0.2,0.2"]) == 0
    assert {i.stem: i.split for i in read_yolo(dataset)} == a


def test_split_keeps_a_synthetic_dataset_s_scenes_pointing_at_their_images(smj, tmp_path: Path, capsys):
    """The benchmarks read each scene's truth from scenes.jsonl: after a split, in place or to a copy, every
    scene names its image where it now lies."""
    import json

    scenes = tmp_path / "scenes"
    rendered = ["dataset", "synth", "--out", str(scenes), "--n", "6", "--seed", "3", "--size", "160x120"]
    assert smj(rendered) == 0
    copy = tmp_path / "copy"
    assert smj(["dataset", "split", str(scenes), "--ratios", "0.5,0.5", "--out", str(copy)]) == 0
    assert smj(["dataset", "split", str(scenes), "--ratios", "0.5,0.5"]) == 0
    for root in (scenes, copy):
        rows = [json.loads(line) for line in (root / "scenes.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(rows) == 6 and {Path(row["image"]).parts[1] for row in rows} == {"train", "val"}
        assert all((root / row["image"]).is_file() for row in rows)
    capsys.readouterr()


def test_a_broken_scenes_file_is_refused_naming_its_line(tmp_path: Path) -> None:
    from datasets.labels import DatasetError
    from datasets.scenes import scene_rows

    assert list(scene_rows(tmp_path)) == []  # a dataset without scenes (real photos)
    for text, line in (('{"image": "a.jpg"}\n\n{"image"\n', 3), ('["a.jpg"]\n', 1)):
        (tmp_path / "scenes.jsonl").write_text(text, encoding="utf-8")
        with pytest.raises(DatasetError, match=rf"scenes.jsonl:{line}: not a JSON scene"):
            list(scene_rows(tmp_path))


def test_split_follows_sources_csv(smj, dataset: Path):
    text = (dataset / "sources.csv").read_text()
    for s in range(1, 12):  # every image now comes from one photo: all must land together
        text = text.replace(f",p{s:02d},", ",p00,")
    (dataset / "sources.csv").write_text(text)
    assert smj(["dataset", "split", str(dataset), "--ratios", "0.5,0.5"]) == 0
    assert len({i.split for i in read_yolo(dataset)}) == 1


# --- autolabel ------------------------------------------------------------------------------------------


class FakeDetector(OneStep):
    """Finds one s5 and one honour tile in every photo, whatever its size."""

    weights = Path("fake.onnx")

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[int, int], float]] = []

    def answer(self, located: Located, conf: float) -> Detections:
        width, height = located.size
        self.calls.append(((width, height), conf))
        boxes = [
            [0.1 * width, 0.2 * height, 0.3 * width, 0.6 * height],
            [0.5 * width, 0.2 * height, 0.7 * width, 0.6 * height],
        ]
        return Detections(
            np.array(boxes, np.float32), np.array([22, 28]), np.array([0.9, 0.6], np.float32), (width, height)
        )


def test_autolabel_writes_labels_and_review_tasks(tmp_path: Path):
    photos = [
        make_image(tmp_path / "new" / "a.jpg", (80, 60)),
        make_image(tmp_path / "new" / "b.png", (60, 80)),
    ]
    exif = Image.Exif()
    exif[0x0112] = 6  # stored turned: must come out upright
    Image.new("RGB", (80, 40), (200, 10, 10)).save(tmp_path / "new" / "turned.jpg", exif=exif)
    detector = FakeDetector()
    result = autolabel([tmp_path / "new"], tmp_path / "out", detector, conf=0.4)
    assert (result.images, result.boxes) == (3, 6)
    assert sorted(detector.calls) == [((40, 80), 0.4), ((60, 80), 0.4), ((80, 60), 0.4)]
    images = read_yolo(tmp_path / "out")
    assert all([b.name for b in i.boxes] == ["s5", "honour"] for i in images)
    assert images[0].boxes[0].xyxy(1, 1) == pytest.approx((0.1, 0.2, 0.3, 0.6), abs=1e-6)
    turned = next(i for i in images if i.stem == "turned")
    assert (turned.width, turned.height) == (
        40,
        80,
    ) and turned.image.parent == tmp_path / "out" / "images" / "train"
    with Image.open(turned.image) as upright:
        assert upright.size == (40, 80)
    tasks = json.loads(result.tasks.read_text())
    assert [t["predictions"][0]["model_version"] for t in tasks] == ["fake.onnx"] * 3
    assert [r["score"] for r in tasks[0]["predictions"][0]["result"]] == [0.9, 0.6]
    assert {i.stem: i.boxes for i in read_labelstudio(result.tasks)} == {i.stem: i.boxes for i in images}
    assert photos[0].is_file() and photos[1].is_file()
    previews = sorted(result.previews.glob("*.jpg"))
    assert [p.stem for p in previews] == ["a", "b", "turned"]
    with Image.open(result.previews / "turned.jpg") as preview:
        assert preview.size == (40, 80)  # upright, as the labels are
    with Image.open(result.previews / "a.jpg") as preview:
        drawn = np.asarray(preview.convert("RGB")).astype(int)
    with Image.open(photos[0]) as original:
        assert (
            np.abs(drawn - np.asarray(original.convert("RGB")).astype(int)).max() > 100
        )  # boxes drawn on it


def test_autolabel_cli_with_a_stand_in_detector(smj, tmp_path: Path, monkeypatch, capsys):
    import vision.detect.detector

    monkeypatch.setattr(vision.detect.detector, "Detector", lambda weights: FakeDetector())
    weights = tmp_path / "w.onnx"
    weights.write_bytes(b"not used")
    make_image(tmp_path / "a.png")
    assert (
        smj(
            [
                "dataset",
                "autolabel",
                str(tmp_path / "a.png"),
                "--out",
                str(tmp_path / "out"),
                "--weights",
                str(weights),
                "--conf",
                "0.5",
            ]
        )
        == 0
    )
    assert "labelled 1 photos, 2 boxes" in capsys.readouterr().out
    assert (tmp_path / "out" / "tasks.json").is_file() and (
        tmp_path / "out" / "labels" / "train" / "a.txt"
    ).is_file()


# --- eval -----------------------------------------------------------------------------------------------


class LabelReader(FakeDetector):
    """Finds exactly the tiles of ``labelled_photo``: an s5 and an honour tile."""


def labelled_photo(root: Path) -> Path:
    """One photo in val whose labels are what ``LabelReader`` finds."""
    image = make_image(root / "raw" / "hand.png", (80, 60))
    boxes = (Box(22, 0.2, 0.4, 0.2, 0.4), Box(28, 0.6, 0.4, 0.2, 0.4))
    write_yolo([LabelledImage(image, boxes, 80, 60, source="hand", split="val")], root / "set")
    return root / "set"


def test_eval_measures_a_detector_on_a_labelled_dataset(smj, tmp_path: Path, monkeypatch, capsys):
    import vision.factory.torch_models

    monkeypatch.setattr(vision.factory.torch_models, "reader", lambda weights, classifier=None: LabelReader())
    data = labelled_photo(tmp_path)
    assert smj(["eval", "--data", str(data), "--json", "--out", str(tmp_path / "eval")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["images"] == 1 and summary["data"] == f"{data} [val]"
    assert summary["map50"] == 1.0 and summary["exact_tiles_rate"] == 1.0 and summary["recall"] == 1.0
    assert summary["per_class_ap50"] == {"s5": 1.0} and summary["honour_as_suited"] == 0
    assert (tmp_path / "eval" / "confusion.png").is_file()
    assert json.loads((tmp_path / "eval" / "metrics.json").read_text())["map50"] == 1.0


def test_eval_leaves_out_the_photos_named(smj, tmp_path: Path, monkeypatch, capsys):
    import vision.factory.torch_models

    monkeypatch.setattr(vision.factory.torch_models, "reader", lambda weights, classifier=None: LabelReader())
    boxes = (Box(22, 0.2, 0.4, 0.2, 0.4), Box(28, 0.6, 0.4, 0.2, 0.4))
    photos = [
        LabelledImage(
            make_image(tmp_path / "raw" / f"{name}.png", (80, 60)), boxes, 80, 60, source=name, split="val"
        )
        for name in ("hand", "off_labels")
    ]
    write_yolo(photos, tmp_path / "set")
    data = tmp_path / "set"
    assert smj(["eval", "--data", str(data), "--json", "--leave-out", "off_"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["images"] == 1 and [Path(name).stem for name in summary["left_out"]] == ["off_labels"]
    assert smj(["eval", "--data", str(data), "--leave-out", "nowhere"]) == 2
    assert "--leave-out nowhere: no such image in the split" in capsys.readouterr().err


def test_eval_of_a_split_with_no_photos_is_refused(smj, tmp_path: Path, monkeypatch, capsys):
    import vision.factory.torch_models

    monkeypatch.setattr(vision.factory.torch_models, "reader", lambda weights, classifier=None: LabelReader())
    data = labelled_photo(tmp_path)
    assert smj(["eval", "--data", str(data), "--split", "test"]) == 2
    assert capsys.readouterr().err.strip() == f"smj eval: {data}: no images in split 'test'"


# --- bad input: one line on stderr, exit code 2 ---------------------------------------------------------


def bad_inputs(tmp: Path, dataset: Path) -> dict[str, tuple[list[str], str]]:
    (tmp / "bad.json").write_text("{not json")
    (tmp / "coco.json").write_text(
        json.dumps(
            {
                "images": [{"id": 1, "file_name": "x.png", "width": 64, "height": 48}],
                "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 1, 5, 5]}],
                "categories": [{"id": 1, "name": "coffee cup"}],
            }
        )
    )
    make_image(tmp / "x.png")
    (tmp / "corrupt.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    (tmp / "full").mkdir()
    (tmp / "full" / "something").write_text("x")
    out = str(tmp / "out")
    imp = ["dataset", "import", "--format"]
    return {
        "missing-folder": ([*imp, "yolo", str(tmp / "nowhere"), "--out", out], "no such file or folder"),
        "not-a-dataset": ([*imp, "yolo", str(tmp / "full"), "--out", out], "no data.yaml or classes.txt"),
        "malformed-json": ([*imp, "coco", str(tmp / "bad.json"), "--out", out], "bad.json:1: not valid JSON"),
        "malformed-ls-json": ([*imp, "labelstudio", str(tmp / "bad.json"), "--out", out], "not valid JSON"),
        "unknown-class": (
            [*imp, "coco", str(tmp / "coco.json"), "--out", out],
            "unknown class name 'coffee cup'",
        ),
        "bad-map": (
            [*imp, "coco", str(tmp / "coco.json"), "--out", out, "--map", "coffee cup=m10"],
            "not one of our",
        ),
        "map-without-equals": (
            [*imp, "coco", str(tmp / "coco.json"), "--out", out, "--map", "cup"],
            "NAME=CLASS",
        ),
        "bad-ratios": (
            [*imp, "yolo", str(dataset), "--out", out, "--split-ratios", "0.5,0.1"],
            "summing to 1",
        ),
        "out-not-empty": ([*imp, "yolo", str(dataset), "--out", str(tmp / "full")], "not empty"),
        "out-inside-src": ([*imp, "yolo", str(dataset), "--out", str(dataset / "x")], "inside"),
        "export-missing": (
            ["dataset", "export", "--format", "coco", str(tmp / "nowhere"), "--out", out],
            "no such folder",
        ),
        "check-missing": (["dataset", "check", str(tmp / "nowhere")], "no such folder"),
        "split-missing": (["dataset", "split", str(tmp / "nowhere")], "no such folder"),
        "autolabel-missing-photo": (
            ["dataset", "autolabel", str(tmp / "nope.jpg"), "--out", out],
            "no such file",
        ),
        "autolabel-no-weights": (
            ["dataset", "autolabel", str(tmp / "x.png"), "--out", out, "--weights", str(tmp / "w.onnx")],
            "w.onnx: no such weights file",
        ),
        "autolabel-bad-conf": (
            ["dataset", "autolabel", str(tmp / "x.png"), "--out", out, "--conf", "3"],
            "--conf",
        ),
    }


CASES = [
    "missing-folder",
    "not-a-dataset",
    "malformed-json",
    "malformed-ls-json",
    "unknown-class",
    "bad-map",
    "map-without-equals",
    "bad-ratios",
    "out-not-empty",
    "out-inside-src",
    "export-missing",
    "check-missing",
    "split-missing",
    "autolabel-missing-photo",
    "autolabel-no-weights",
    "autolabel-bad-conf",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_and_exit_2(smj, dataset: Path, tmp_path: Path, capsys, case: str):
    argv, message = bad_inputs(tmp_path, dataset)[case]
    assert smj(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("smj dataset ") and message in err, err
    assert "Traceback" not in err


def test_corrupt_photo_in_autolabel_is_a_clear_error(dataset: Path, tmp_path: Path, smj, monkeypatch, capsys):
    import vision.detect.detector

    monkeypatch.setattr(vision.detect.detector, "Detector", lambda weights: FakeDetector())
    (tmp_path / "w.onnx").write_bytes(b"x")
    (tmp_path / "corrupt.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    argv = [
        "dataset",
        "autolabel",
        str(tmp_path / "corrupt.jpg"),
        "--out",
        str(tmp_path / "o"),
        "--weights",
        str(tmp_path / "w.onnx"),
    ]
    assert smj(argv) == 2
    err = capsys.readouterr().err
    assert "corrupt.jpg" in err and err.count("\n") == 1


def test_corrupt_image_in_import_is_a_clear_error(smj, dataset: Path, tmp_path: Path, capsys):
    (dataset / "images" / "train" / "p00.png").write_bytes(b"garbage")
    assert smj(["dataset", "import", "--format", "yolo", str(dataset), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "p00.png: bad_image: not a readable image" in err and "nothing was written" in err
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_dataset_commands_are_listed(smj, capsys):
    with pytest.raises(SystemExit):
        smj(["dataset", "--help"])
    out = capsys.readouterr().out
    for command in ("import", "export", "check", "split", "autolabel"):
        assert command in out


def test_cli_module_imports_only_light_modules():
    # datasets.synth is another package (and pays for its own imports): stand in a light one for it.
    code = (
        "import sys, types, argparse; "
        "stub = types.ModuleType('datasets.synth.cli'); stub.register_synth = lambda sub: None; "
        "sys.modules['datasets.synth.cli'] = stub; "
        "import datasets.cli as c; "
        "p = argparse.ArgumentParser(); c.register(p.add_subparsers()); "
        "heavy = [m for m in ('numpy', 'PIL', 'cv2', 'yaml', 'onnxruntime', 'torch') if m in sys.modules]; "
        "print(heavy)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_synth_commands_are_wired_in_when_present(smj, monkeypatch, capsys):
    synth = types.ModuleType("datasets.synth.cli")

    def register_synth(sub):
        parser = sub.add_parser("synth", help="render synthetic photos")
        parser.add_argument("--count", type=int, default=1)
        parser.set_defaults(func=lambda args: print(f"synth {args.count}") or 0)

    synth.register_synth = register_synth  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "datasets.synth.cli", synth)
    assert smj(["dataset", "synth", "--count", "3"]) == 0
    assert capsys.readouterr().out == "synth 3\n"


def test_crops_skip_tiles_under_min_side(smj, dataset: Path, tmp_path: Path, capsys):
    out = tmp_path / "crops"
    # each 64x48 image holds a tile 12.8 px wide and an honour 19.2 px wide
    assert smj(["dataset", "crops", str(dataset), "--out", str(out), "--size", "32", "--min-side", "16"]) == 0
    assert "train: " in capsys.readouterr().out
    cut = {folder.name: len(list(folder.glob("*.png"))) for folder in (out / "train").iterdir()}
    assert cut["honour"] == 36
    assert sum(n for name, n in cut.items() if name not in ("honour", "none")) == 0


def test_crops_add_rendered_training_crops(smj, dataset: Path, tmp_path: Path, capsys):
    out = tmp_path / "crops"
    assert smj(["dataset", "crops", str(dataset), "--out", str(out), "--size", "32", "--rendered", "15"]) == 0
    assert "train: " in capsys.readouterr().out
    rendered = list((out / "train").glob("*/rendered_*.png"))
    assert len(rendered) == 15
    assert not list((out / "val").glob("*/rendered_*.png"))


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--rendered", "-1"], "--rendered -1"),
        (["--rendered", "2", "--art", "no/such/art"], "no/such/art"),
        (["--rendered", "2", "--red-fives", "1.5"], "--red-fives 1.5: a share from 0 to 1"),
        (["--rendered", "2", "--one-ink", "-0.1"], "--one-ink -0.1: a share from 0 to 1"),
    ],
)
def test_crops_refuse_bad_rendering_options(smj, dataset: Path, tmp_path: Path, capsys, flags, message):
    assert smj(["dataset", "crops", str(dataset), "--out", str(tmp_path / "crops"), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("smj dataset crops: ") and message in err


def test_crops_cut_the_shipped_localisers_false_alarms_on_a_table_of_no_tile(smj, tmp_path: Path, capsys):
    from datasets.synth.scene import SceneOptions
    from datasets.synth.writer import write_dataset

    write_dataset(
        tmp_path / "empty", 2, seed=4, options=SceneOptions(size=(640, 480), kind="empty"), progress=False
    )
    argv = ["dataset", "crops", str(tmp_path / "empty"), "--false-alarms", "5", "--quiet"]
    assert smj([*argv, "--out", str(tmp_path / "crops")]) == 0
    assert "train: " in capsys.readouterr().out
    none = list((tmp_path / "crops" / "train" / "none").glob("*.png"))
    assert 0 < len(none) <= 10  # its false alarms on the keyboards and dominoes, at most 5 a photo
    tiles = [p for p in (tmp_path / "crops" / "train").glob("*/*.png") if p.parent.name != "none"]
    assert tiles == []  # nothing labelled: no tile crops
    assert smj([*argv, "--weights", str(tmp_path / "none.onnx"), "--out", str(tmp_path / "c2")]) == 2
    assert "none.onnx: no such weights file" in capsys.readouterr().err
    assert smj([*argv, "--as-found", "-1", "--out", str(tmp_path / "c3")]) == 2
    assert "--as-found -1: a number of crops, 0 or more" in capsys.readouterr().err
