"""Combining datasets for training: train parts train, val parts and --val datasets validate."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vision.detections import DETECTOR_CLASSES
from vision.train import combined_data_yaml


def _dataset(root: Path, train: str, val: str, names: list[str] | None = None) -> Path:
    root.mkdir(parents=True)
    names = names or list(DETECTOR_CLASSES)
    data = {"path": str(root), "train": train, "val": val, "names": dict(enumerate(names))}
    (root / "data.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return root


def test_parts_go_where_they_belong(tmp_path: Path) -> None:
    real = _dataset(tmp_path / "real", "images/train", "images/val")
    synth = _dataset(tmp_path / "synth", "images", "images")  # no val part of its own
    held_out = _dataset(tmp_path / "held", "images", "images")
    config = yaml.safe_load(combined_data_yaml([real, synth], tmp_path / "run", [held_out]).read_text())
    assert config["train"] == [str(real / "images/train"), str(synth / "images")]
    assert config["val"] == [str(real / "images/val"), str(held_out / "images")]
    assert list(config["names"].values()) == list(DETECTOR_CLASSES)


def test_other_classes_or_a_missing_dataset_are_refused(tmp_path: Path) -> None:
    other = _dataset(tmp_path / "other", "images", "images", ["a", "b"])
    with pytest.raises(ValueError, match="classes differ"):
        combined_data_yaml([other], tmp_path / "run")
    with pytest.raises(FileNotFoundError, match=r"no data\.yaml"):
        combined_data_yaml([tmp_path / "none"], tmp_path / "run")
