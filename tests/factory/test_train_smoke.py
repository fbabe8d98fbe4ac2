"""A tiny smoke run of the whole model workflow: render, train both models, ship, load, detect.

One epoch on four small synthetic scenes: this proves the commands fit together (recipes accepted
by ultralytics, single-class localiser named "tile", dynamic ONNX exports, manifest), not accuracy.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ultralytics")

import onnx
import torch
import yaml

from datasets.crops import CropSource, build_crop_dataset
from datasets.synth.scene import SceneOptions
from datasets.synth.writer import write_dataset
from datasets.yolo import read_yolo
from vision.contract import CLASSIFIER_CLASSES
from vision.detect.detector import Detector
from vision.factory.ship import average_checkpoints, ship
from vision.factory.train import ClassifierRecipe, Recipe, train, train_classifier
from vision.images import load_photo


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.set_num_threads(1)  # as ultralytics leaves it on a 2-core machine; training must undo that
    root = tmp_path_factory.mktemp("smoke")
    scenes = root / "scenes"
    write_dataset(scenes, 4, seed=5, options=SceneOptions(size=(320, 240)), progress=False)
    quick = {"epochs": 1, "batch": 4, "workers": 0}
    localiser = train([scenes], root / "runs" / "loc", replace(Recipe(), imgsz=64, **quick).light())
    build_crop_dataset([CropSource(read_yolo(scenes), per_image=6)], root / "crops")
    # every scene is "train": copy a few crops to val so ultralytics has something to validate on
    for folder in (root / "crops" / "train").iterdir():
        for crop in list(folder.glob("*.png"))[:1]:
            (root / "crops" / "val" / folder.name / crop.name).write_bytes(crop.read_bytes())
    light = replace(ClassifierRecipe(), imgsz=32, cache="", **quick).light()
    faces = train_classifier(root / "crops", root / "runs" / "faces", light)
    used = yaml.safe_load((root / "runs" / "faces" / "args.yaml").read_text())  # as ultralytics ran it
    assert used["auto_augment"] is None and used["erasing"] == 0.0
    assert torch.get_num_threads() == (os.cpu_count() or 1)  # training ran on every core
    models = root / "models"
    ship(localiser, imgsz=64, classifier=faces, classifier_imgsz=32, models_dir=models)
    return models


def test_the_manifest_names_every_shipped_file(shipped: Path) -> None:
    manifest = json.loads((shipped / "manifest.json").read_text())
    assert manifest["classes"] == ["tile"]
    assert sorted(manifest["classifier"]["classes"]) == sorted(CLASSIFIER_CLASSES)
    for name in ("tiles.pt", "tiles.onnx", "tile_faces.pt", "tile_faces.onnx"):
        assert manifest["files"][name]["bytes"] == (shipped / name).stat().st_size
    # the classifier's ONNX is INT8, calibrated on the crops it was trained on
    assert manifest["classifier"]["onnx"].startswith("INT8")
    assert f"crops of {shipped.parent / 'crops'};" in manifest["classifier"]["onnx"]
    operators = {node.op_type for node in onnx.load(str(shipped / "tile_faces.onnx")).graph.node}
    assert "QuantizeLinear" in operators


def test_a_classifier_without_calibration_crops_is_refused_before_anything_is_written(
    shipped: Path, tmp_path: Path
) -> None:
    faces = shipped.parent / "runs" / "faces" / "weights" / "best.pt"
    with pytest.raises(ValueError, match="no crop images to calibrate"):
        ship(None, classifier=faces, calibration=tmp_path / "no_crops", models_dir=tmp_path / "models")
    assert not (tmp_path / "models").exists()


@pytest.mark.parametrize("suffix", [".onnx", ".pt"])
def test_shipped_models_load_and_detect(shipped: Path, suffix: str) -> None:
    from vision.factory.torch_models import reader

    detector = reader(shipped / f"tiles{suffix}", classifier=shipped / f"tile_faces{suffix}")
    assert detector.localiser and detector.classifier is not None
    photo = load_photo(next((shipped.parent / "scenes" / "images").glob("*.jpg")))
    found = detector.detect(photo, conf=0.001)
    assert found.image_size == photo.size
    assert np.all(found.class_ids < len(CLASSIFIER_CLASSES) - 1)  # "none" never reported


def _weights(checkpoint: Path) -> dict[str, torch.Tensor]:
    loaded = torch.load(checkpoint, map_location="cpu", weights_only=False)
    return {k: v.float() for k, v in (loaded.get("ema") or loaded["model"]).state_dict().items()}


def _shifted(checkpoint: Path, by: float, out: Path) -> Path:
    """A copy of ``checkpoint`` with every parameter moved by ``by``."""
    moved = torch.load(checkpoint, map_location="cpu", weights_only=False)
    model = (moved.get("ema") or moved["model"]).float()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(by)
    moved.update(model=model, ema=None)
    torch.save(moved, out)
    return out


def test_a_classifier_is_shipped_alone_and_several_are_averaged(shipped: Path, tmp_path: Path) -> None:
    runs = shipped.parent / "runs"
    first = runs / "faces" / "weights" / "best.pt"
    _shifted(first, 0.02, tmp_path / "moved.pt")  # a second "fine-tune"
    averaged = average_checkpoints([first, tmp_path / "moved.pt"], tmp_path / "soup.pt")
    a, b, mean = _weights(first), _weights(tmp_path / "moved.pt"), _weights(averaged)
    name = next(k for k, v in a.items() if k.endswith("weight") and v.numel() > 1)
    assert torch.allclose(mean[name], (a[name] + b[name]) / 2, atol=1e-4)
    assert torch.allclose(mean[name], a[name] + 0.01, atol=1e-4)

    models = tmp_path / "models"  # a copy of the shipped folder: shipping the classifier alone
    models.mkdir()
    for path in shipped.iterdir():
        (models / path.name).write_bytes(path.read_bytes())
    before = json.loads((models / "manifest.json").read_text())
    ship(None, classifier=averaged, classifier_imgsz=32, models_dir=models)
    after = json.loads((models / "manifest.json").read_text())
    assert {k: after["files"][k] for k in ("tiles.pt", "tiles.onnx")} == {
        k: before["files"][k] for k in ("tiles.pt", "tiles.onnx")
    }  # the localiser untouched
    assert after["files"]["tile_faces.pt"]["bytes"] == (models / "tile_faces.pt").stat().st_size
    assert Detector(models / "tiles.onnx", classifier=models / "tile_faces.onnx").classifier is not None

    with pytest.raises(ValueError, match="not of one architecture"):
        average_checkpoints([first, runs / "loc" / "weights" / "best.pt"], tmp_path / "mixed.pt")


def test_smj_ship_averages_several_localisers_and_refuses_missing_weights(
    shipped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import smj
    import vision.factory.ship

    monkeypatch.setattr(
        vision.factory.ship, "ship", partial(vision.factory.ship.ship, models_dir=tmp_path / "models")
    )
    first = shipped.parent / "runs" / "loc" / "weights" / "best.pt"
    _shifted(first, 0.02, tmp_path / "moved.pt")  # a second "fine-tune"
    assert smj.main(["ship", f"{first},{tmp_path / 'moved.pt'}", "--imgsz", "64"]) == 0
    assert "the average of" in capsys.readouterr().out
    a, mean = _weights(first), _weights(tmp_path / "models" / "tiles.pt")
    name = next(k for k, v in a.items() if k.endswith("weight") and v.numel() > 1)
    assert torch.allclose(mean[name], a[name] + 0.01, atol=1e-4)
    assert smj.main(["ship", str(tmp_path / "missing.pt")]) == 2
    assert "no such weights file" in capsys.readouterr().err
