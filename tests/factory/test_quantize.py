"""The classifier's INT8 form (``smj ship`` without ``--float``): it reads tiles and gives features as the
float weights do; its calibration crops. The shipped ONNX is float32 and reads as its torch weights."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision.contract import tile_crops
from vision.detect.classifier import TileClassifier
from vision.detect.detector import MODELS_DIR
from vision.factory.quantize import calibration_crops, quantize_classifier
from vision.images import load_photo

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SHIPPED = MODELS_DIR / "tile_faces.onnx"


def _example_crops() -> tuple[np.ndarray, np.ndarray]:
    crops, classes = [], []
    for name in ("hand", "hand_melds", "hand_rotated"):
        scene = json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
        boxes = np.array([b["box"] for b in scene["boxes"]], np.float32)
        crops.append(tile_crops(load_photo(EXAMPLES / f"{name}.jpg").pixels, boxes, 128))
        classes += [b["cls"] for b in scene["boxes"]]
    return np.concatenate(crops), np.array(classes)


@pytest.fixture(scope="module")
def int8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped classifier (float32) quantized as ``smj ship`` does without ``--float``, calibrated on
    the example photos' crops."""
    pytest.importorskip("onnx")
    copy = tmp_path_factory.mktemp("int8") / "tile_faces.onnx"
    copy.write_bytes(SHIPPED.read_bytes())
    crops, _ = _example_crops()
    return quantize_classifier(
        copy, np.stack([np.asarray(Image.fromarray(c).resize((96, 96))) for c in crops])
    )


@pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped classifier")
def test_the_int8_classifier_reads_as_the_float_weights_do(int8: Path) -> None:
    """On any x86 CPU, VNNI or not (7-bit weights: AVX2's u8 x s8 products saturate at 8)."""
    import onnx

    operators = {node.op_type for node in onnx.load(str(int8)).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= operators
    crops, truth = _example_crops()
    quantized = TileClassifier(int8).probabilities(crops)
    float32 = TileClassifier(SHIPPED).probabilities(crops)
    assert (quantized.argmax(1) == float32.argmax(1)).mean() >= 0.95
    assert np.abs(quantized - float32).max(axis=1).mean() < 0.05
    assert (quantized.argmax(1) == truth).mean() >= (float32.argmax(1) == truth).mean() - 0.05
    # the head is left in floating point: the next likeliest faces (a re-reading's choices) keep a rank
    assert (np.sort(quantized, axis=1)[:, -3:] > 0).all()


@pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped classifier")
def test_the_shipped_onnx_reads_as_its_torch_weights() -> None:
    pytest.importorskip("torch")
    from vision.factory.torch_models import TorchClassifier

    crops, _ = _example_crops()
    (onnx_probs, onnx_features), (torch_probs, torch_features) = (
        TileClassifier(SHIPPED).infer(crops),
        TorchClassifier(MODELS_DIR / "tile_faces.pt").infer(crops),
    )
    assert onnx_features is not None and torch_features is not None
    assert np.abs(onnx_probs - torch_probs).max() < 1e-3
    assert np.median((onnx_features * torch_features).sum(1)) > 0.999


def test_calibration_crops_are_sampled_from_a_crop_dataset(tmp_path: Path) -> None:
    for split, name, colour in (("train", "m1", 40), ("train", "p2", 120), ("val", "s3", 200)):
        folder = tmp_path / split / name
        folder.mkdir(parents=True)
        for i in range(3):
            Image.new("RGB", (50, 70), (colour, i, 0)).save(folder / f"{i}.png")
    crops = calibration_crops(tmp_path, 32, count=5)
    assert crops.shape == (5, 32, 32, 3) and crops.dtype == np.uint8
    assert set(crops[:, 0, 0, 0]) <= {40, 120, 200}
    assert np.array_equal(crops, calibration_crops(tmp_path, 32, count=5))  # seeded
    assert len(calibration_crops(tmp_path, 32)) == 9  # never more than there are


def test_no_calibration_crops_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "empty", tmp_path / "missing"):
        with pytest.raises(ValueError, match="no crop images to calibrate"):
            calibration_crops(folder, 32)


@pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped classifier")
def test_the_int8_classifiers_features_keep_their_neighbours(int8: Path) -> None:
    """Each example crop's nearest other crop by the INT8 model's features shows the face that the float
    model's features find nearest, and the two models' features of a crop point the same way."""
    crops, truth = _example_crops()
    (_, a), (_, b) = TileClassifier(int8).infer(crops), TileClassifier(SHIPPED).infer(crops)
    assert a is not None and b is not None
    assert np.median((a * b).sum(1)) > 0.98
    nearest = []
    for features in (a, b):
        cosines = features @ features.T
        np.fill_diagonal(cosines, -1.0)
        nearest.append(truth[cosines.argmax(1)])
    assert (nearest[0] == nearest[1]).mean() >= 0.95


def test_a_features_output_is_added_once(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from vision.factory.face_net import add_features_output

    copy = tmp_path / "faces.onnx"
    copy.write_bytes(SHIPPED.read_bytes())
    add_features_output(copy)
    outputs = [output.name for output in onnx.load(str(copy)).graph.output]
    assert outputs == ["output0", "features"]
