"""The pretrained-backbone tile classifier: training runs and resumes, its ONNX export reads as torch
does, and it ships (INT8) and serves through ONNX Runtime like the other models."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("efficientnet_lite_pytorch")

from datasets.crops import write_rendered_crops
from datasets.synth.face_crops import rendered_crops
from vision.contract import CLASSIFIER_CLASSES
from vision.detect.classifier import TileClassifier
from vision.detect.detector import MODELS_DIR, Detector
from vision.factory.face_net import FaceNetError, FaceNetRecipe, augment, load_checkpoint, train_face_net
from vision.factory.ship import ship
from vision.factory.torch_models import TorchClassifier

SIZE = 64  # small crops: the smoke run and export take seconds


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("face_net")
    write_rendered_crops(root / "crops", rendered_crops(96, seed=1, size=SIZE), seed=1)
    # rendered crops are all training crops: a few copied to val for the validation top-1
    for folder in (root / "crops" / "train").iterdir():
        for crop in sorted(folder.iterdir())[:1]:
            target = root / "crops" / "val" / folder.name
            target.mkdir(parents=True, exist_ok=True)
            (target / crop.name).write_bytes(crop.read_bytes())
    recipe = FaceNetRecipe(epochs=1, imgsz=SIZE, batch=16, save_every=2, warmup_steps=1)
    train_face_net(root / "crops", root / "run", recipe, log=lambda _: None)
    return root


def test_a_run_writes_its_checkpoints_and_names_every_class(run: Path) -> None:
    weights = run / "run" / "weights"
    assert {"best.pt", "last.pt", "epoch1.pt"} <= {p.name for p in weights.iterdir()}
    model, checkpoint = load_checkpoint(weights / "last.pt")
    assert [model.names[i] for i in sorted(model.names)] == list(CLASSIFIER_CLASSES)
    assert checkpoint["step"] == 96 // 16  # one epoch of whole batches
    assert checkpoint["recipe"]["imgsz"] == SIZE and Path(checkpoint["data"]) == run / "crops"
    assert 0.0 <= checkpoint["val_top1"] <= 1.0
    assert json.loads((run / "run" / "recipe.json").read_text())["batch"] == 16


def test_a_finished_run_resumes_to_its_end_and_a_missing_one_is_refused(run: Path, tmp_path: Path) -> None:
    again = train_face_net(run / "crops", run / "run", FaceNetRecipe(), resume=True, log=lambda _: None)
    _, checkpoint = load_checkpoint(again.parent / "last.pt")
    assert checkpoint["step"] == 96 // 16  # nothing left to do: the recipe in the run is kept
    with pytest.raises(FaceNetError, match="nothing to resume"):
        train_face_net(run / "crops", tmp_path / "none", FaceNetRecipe(), resume=True)


def test_the_onnx_export_reads_crops_as_torch_does(run: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    ship(None, classifier=run / "run" / "weights" / "best.pt", models_dir=models, quantize=False)
    crops = np.stack([c for c in np.random.default_rng(0).integers(0, 255, (6, SIZE, SIZE, 3), np.uint8)])
    onnx = TileClassifier(models / "tile_faces.onnx")
    torch_read = TorchClassifier(models / "tile_faces.pt")
    assert onnx.imgsz == torch_read.imgsz == SIZE
    (a, a_features), (b, b_features) = onnx.infer(crops), torch_read.infer(crops)
    assert np.allclose(a, b, atol=1e-4)
    assert np.allclose(a.sum(1), 1.0, atol=1e-4)  # probabilities, not logits
    assert a_features is not None and b_features is not None and a_features.shape == (6, onnx.feature_size)
    assert np.allclose(a_features, b_features, atol=1e-4)  # the same pooled features, unit length
    assert np.allclose(np.linalg.norm(a_features, axis=1), 1.0, atol=1e-5)
    manifest = json.loads((models / "manifest.json").read_text())
    assert manifest["classifier"]["input_size"] == SIZE
    assert manifest["classifier"]["onnx"].startswith("float32")


def test_it_ships_in_int8_and_serves_beside_the_localiser(run: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    for name in ("tiles.onnx", "manifest.json"):
        (models / name).write_bytes((MODELS_DIR / name).read_bytes())
    ship(None, classifier=run / "run" / "weights" / "best.pt", models_dir=models)
    onnx = pytest.importorskip("onnx")
    operators = {node.op_type for node in onnx.load(str(models / "tile_faces.onnx")).graph.node}
    assert "QuantizeLinear" in operators
    manifest = json.loads((models / "manifest.json").read_text())
    assert manifest["classifier"]["onnx"].startswith("INT8")
    detector = Detector(models / "tiles.onnx", classifier=models / "tile_faces.onnx")
    assert detector.classifier is not None and detector.classifier.imgsz == SIZE


def test_a_start_checkpoint_of_another_crop_size_is_fine_tuned_at_the_recipes_size(
    run: Path, tmp_path: Path
) -> None:
    recipe = replace(FaceNetRecipe(), imgsz=SIZE // 2)
    train_face_net(run / "crops", tmp_path / "run", recipe, start=run / "run" / "weights" / "best.pt")
    model, checkpoint = load_checkpoint(tmp_path / "run" / "weights" / "best.pt")
    assert model.imgsz == checkpoint["imgsz"] == SIZE // 2
    assert TorchClassifier(tmp_path / "run" / "weights" / "best.pt").imgsz == SIZE // 2


def test_low_resolution_crops_lose_the_fine_strokes_a_small_tile_loses() -> None:
    # a crop of one-pixel stripes (a numeral's strokes at full resolution): cut as an 18-36 px tile is, they
    # blur into grey; left alone they stay sharp
    stripes = np.zeros((8, 96, 96, 3), np.uint8)
    stripes[:, :, ::2] = 255
    plain = replace(FaceNetRecipe(), scale=0.0, colour=0.0, blur_p=0.0)

    def detail(recipe: FaceNetRecipe) -> float:
        pixels = augment(stripes, np.random.default_rng(0), recipe).numpy()
        return float(np.abs(np.diff(pixels, axis=3)).mean())

    assert detail(plain) > 0.9
    assert detail(replace(plain, low_res_p=1.0)) < 0.2
    out = augment(stripes, np.random.default_rng(0), replace(plain, low_res_p=1.0))
    assert tuple(out.shape) == (8, 3, 96, 96)


def test_distilling_keeps_what_the_start_read_of_the_tiles_and_leaves_none_crops_to_their_labels(
    run: Path,
) -> None:
    import torch

    from vision.contract import NONE
    from vision.factory.face_net import _kept_reading

    start = run / "run" / "weights" / "best.pt"
    teacher, _ = load_checkpoint(start)
    student, _ = load_checkpoint(start)
    x = torch.rand(6, 3, SIZE, SIZE)
    tiles = torch.tensor([0, 5, 9, 20, 26, 3])
    nones = torch.full((6,), NONE)

    def kept(labels: torch.Tensor) -> float:
        with torch.no_grad():
            return float(_kept_reading(student.logits(x), teacher, x, labels, 2.0))

    assert kept(tiles) == pytest.approx(0.0, abs=1e-6)  # the start itself keeps all it read
    with torch.no_grad():
        for parameter in student.net.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.05)
    assert kept(tiles) > 1e-3
    assert kept(nones) == 0.0  # crops labelled none are taught by their labels alone


def test_a_distilled_fine_tune_needs_its_start_and_resumes_with_it(run: Path, tmp_path: Path) -> None:
    recipe = FaceNetRecipe(epochs=1, imgsz=SIZE, batch=16, save_every=2, warmup_steps=1, distill=1.0)
    with pytest.raises(FaceNetError, match="give the weights to begin from"):
        train_face_net(run / "crops", tmp_path / "alone", recipe, log=lambda _: None)
    start = run / "run" / "weights" / "best.pt"
    train_face_net(run / "crops", tmp_path / "kept", recipe, start=start, log=lambda _: None)
    _, checkpoint = load_checkpoint(tmp_path / "kept" / "weights" / "last.pt")
    assert checkpoint["start"] == str(start.resolve()) and checkpoint["recipe"]["distill"] == 1.0
    train_face_net(run / "crops", tmp_path / "kept", recipe, resume=True, log=lambda _: None)
