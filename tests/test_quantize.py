"""The classifier ships in INT8: it reads tiles as the float weights do, and its calibration crops."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision.classifier import TileClassifier, tile_crops
from vision.detector import MODELS_DIR
from vision.images import load_photo
from vision.quantize import calibration_crops

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SHIPPED = MODELS_DIR / "tile_faces.onnx"


def _example_crops() -> tuple[np.ndarray, np.ndarray]:
    crops, classes = [], []
    for name in ("hand", "hand_melds", "hand_rotated"):
        scene = json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
        boxes = np.array([b["box"] for b in scene["boxes"]], np.float32)
        crops.append(tile_crops(load_photo(EXAMPLES / f"{name}.jpg").pixels, boxes, 128))
        classes += [b["cls"] for b in scene["boxes"]]
    return np.concatenate(crops), np.array(classes)


@pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped classifier")
def test_the_shipped_classifier_is_int8_and_reads_as_the_float_weights_do() -> None:
    onnx = pytest.importorskip("onnx")
    operators = {node.op_type for node in onnx.load(str(SHIPPED)).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= operators
    pytest.importorskip("torch")
    crops, truth = _example_crops()
    int8 = TileClassifier(SHIPPED).probabilities(crops)
    float32 = TileClassifier(MODELS_DIR / "tile_faces.pt").probabilities(crops)
    assert (int8.argmax(1) == float32.argmax(1)).mean() >= 0.95
    assert np.abs(int8 - float32).max(axis=1).mean() < 0.05
    assert (int8.argmax(1) == truth).mean() >= (float32.argmax(1) == truth).mean() - 0.05
    # the head is left in floating point: the next likeliest faces (a re-reading's choices) keep a rank
    assert (np.sort(int8, axis=1)[:, -3:] > 0).all()


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
def test_the_shipped_classifiers_features_keep_their_neighbours_in_int8() -> None:
    """Each example crop's nearest other crop by the INT8 model's features shows the face that the float
    weights' features find nearest, and the two models' features of a crop point the same way."""
    pytest.importorskip("torch")
    crops, truth = _example_crops()
    int8 = TileClassifier(SHIPPED)
    float32 = TileClassifier(MODELS_DIR / "tile_faces.pt")
    assert int8.has_features and float32.has_features
    (_, a), (_, b) = int8.infer(crops), float32.infer(crops)
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
    from vision.face_net import add_features_output

    copy = tmp_path / "faces.onnx"
    copy.write_bytes(SHIPPED.read_bytes())
    add_features_output(copy)
    outputs = [output.name for output in onnx.load(str(copy)).graph.output]
    assert outputs == ["output0", "features"]
