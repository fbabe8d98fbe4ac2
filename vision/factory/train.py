"""Training the tile detector with ultralytics, offline and CPU-friendly.

Every dataset given is a folder in this project's YOLO layout (``smj dataset import`` / ``synth``
write it). Their train and val parts are combined into one ``data.yaml`` under the run folder.
The model is built from a config (``yolo26n.yaml`` by default) or fine-tuned from weights of our own,
never downloaded. Horizontal and vertical flips are off: mirrored tiles don't exist.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from vision.contract import CROP_SIZE
from vision.detections import DETECTOR_CLASSES

os.environ.setdefault("YOLO_OFFLINE", "1")


@dataclass(frozen=True)
class Recipe:
    """The knobs of a training run; written into the run folder and the shipped manifest."""

    model: str = "yolo26n.yaml"  # a config (from scratch) or a .pt of our own (fine-tune)
    epochs: int = 60
    imgsz: int = 384  # on windows at the tiles' real scale (smj dataset windows)
    batch: int = 16
    optimizer: str = "SGD"
    lr0: float = 0.01
    lrf: float = 0.05
    momentum: float = 0.937
    weight_decay: float = 0.0005
    warmup_epochs: float = 2.0
    cos_lr: bool = True
    close_mosaic: int = 2
    mosaic: float = 1.0
    degrees: float = 10.0
    scale: float = 0.3  # the windows already vary the scale
    translate: float = 0.1
    fliplr: float = 0.0
    flipud: float = 0.0
    hsv_h: float = 0.015
    hsv_s: float = 0.5
    hsv_v: float = 0.4
    patience: int = 100
    workers: int = 2
    seed: int = 0
    fraction: float = 1.0
    single_cls: bool = True  # a localiser: every tile one class; the tile classifier reads the face
    time: float | None = None  # hours: train for this long, the epochs (and the schedule) fitted to it
    cache: bool | str = False  # "ram": the windows decoded once (a GPU trains faster than JPEGs decode)
    freeze: int | None = None  # a fine-tune: the first N layers keep their weights (YOLO26n's backbone: 11)

    def light(self) -> Recipe:
        """This recipe without mosaic, for the last epochs of a fine-tune (as ``close_mosaic`` does)."""
        return replace(self, mosaic=0.0, close_mosaic=0)


@dataclass(frozen=True)
class ClassifierRecipe:
    """The knobs of a tile-classifier run (ultralytics YOLO-cls on ``smj dataset crops`` folders)."""

    model: str = "yolo26n-cls.yaml"
    epochs: int = 20
    imgsz: int = CROP_SIZE
    batch: int = 128
    optimizer: str = "SGD"
    lr0: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 0.00005
    warmup_epochs: float = 1.0
    cos_lr: bool = True
    fliplr: float = 0.0  # the crops are already turned by quarter turns; a mirrored tile never exists
    flipud: float = 0.0
    scale: float = 0.15  # random crops keep at least 85% of the tile
    erasing: float = 0.1
    auto_augment: str | None = "randaugment"
    hsv_h: float = 0.015
    hsv_s: float = 0.5
    hsv_v: float = 0.4
    patience: int = 100
    workers: int = 2
    seed: int = 0
    cache: str = "ram"

    def light(self) -> ClassifierRecipe:
        """This recipe without RandAugment and erasing, for the last epochs of a fine-tune: the crops
        keep their own jitter, blur and noise."""
        return replace(self, auto_augment=None, erasing=0.0)


def combined_data_yaml(
    data_dirs: Sequence[Path | str], out: Path, val_dirs: Sequence[Path | str] = ()
) -> Path:
    """One data.yaml naming the train and val image folders of every dataset given.

    A dataset of ``data_dirs`` gives its train part to training and its val part (when it has one
    apart from train) to validation; every image of a dataset of ``val_dirs`` is for validation only.
    """
    train: list[str] = []
    val: list[str] = []
    given = [(Path(d).resolve(), False) for d in data_dirs] + [(Path(d).resolve(), True) for d in val_dirs]
    for data_dir, val_only in given:
        config_path = data_dir / "data.yaml"
        if not config_path.is_file():
            raise FileNotFoundError(
                f"{data_dir}: no data.yaml (build it with 'smj dataset import' or 'synth')"
            )
        config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
        names = config.get("names")
        names = [names[k] for k in sorted(names)] if isinstance(names, dict) else list(names or [])
        if list(names) != list(DETECTOR_CLASSES):
            raise ValueError(
                f"{config_path}: classes differ from the detector's {len(DETECTOR_CLASSES)} classes"
            )
        root = Path(config.get("path") or data_dir)
        root = root if root.is_absolute() else data_dir / root
        train_entry = config.get("train")
        val_entry = config.get("val") if config.get("val") != train_entry else None
        if train_entry:
            (val if val_only else train).append(str(root / train_entry))
        if val_entry:
            val.append(str(root / val_entry))
    if not train:
        raise ValueError("no training images in the datasets given")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "data.yaml"
    data = {"train": train, "val": val or train[:1], "names": dict(enumerate(DETECTOR_CLASSES))}
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _model(source: str, task: str | None = None) -> Any:
    """An ultralytics model that trains on every CPU core.

    ultralytics' ``select_device`` sets torch to ``cpu_count() - 1`` threads for CPU training (one of
    two cores here, half the speed); its module-level thread count is what it reads each time.
    """
    from ultralytics import YOLO
    from ultralytics.utils import torch_utils

    torch_utils.NUM_THREADS = os.cpu_count() or 1
    return YOLO(source, task=task)


def _resume(out: Path) -> Path:
    last = out / "weights" / "last.pt"
    if not last.is_file():
        raise FileNotFoundError(f"{last}: nothing to resume")
    _model(str(last)).train(resume=True)
    return out / "weights" / "best.pt"


def _run(data: Path, out: Path, recipe: Recipe | ClassifierRecipe, task: str, device: str) -> Path:
    """One ultralytics run of ``recipe`` into ``out`` (recipe written beside it); the best weights' path."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "recipe.yaml").write_text(yaml.safe_dump(asdict(recipe), sort_keys=False), encoding="utf-8")
    settings = asdict(recipe)
    model = _model(settings.pop("model"), task)
    model.train(
        data=str(data),
        project=str(out.parent),
        name=out.name,
        exist_ok=True,
        plots=False,
        amp=False,
        device=device,
        **settings,
    )
    return out / "weights" / "best.pt"


def train_classifier(
    data_dir: Path | str,
    out: Path | str,
    recipe: ClassifierRecipe,
    *,
    resume: bool = False,
    device: str = "cpu",
) -> Path:
    """Train (or resume) the tile classifier on a crops folder; returns the path of the best weights."""
    out = Path(out).resolve()
    if resume:
        return _resume(out)
    data = Path(data_dir).resolve()
    if not (data / "train").is_dir() or not (data / "val").is_dir():
        raise FileNotFoundError(
            f"{data}: no train/ and val/ crop folders (build them with 'smj dataset crops')"
        )
    return _run(data, out, recipe, "classify", device)


def train(
    data_dirs: Sequence[Path | str],
    out: Path | str,
    recipe: Recipe,
    *,
    val_dirs: Sequence[Path | str] = (),
    resume: bool = False,
    device: str = "cpu",
) -> Path:
    """Train (or resume) the localiser in ``out``; returns the path of the best weights."""
    out = Path(out).resolve()
    if resume:
        return _resume(out)
    return _run(combined_data_yaml(data_dirs, out, val_dirs), out, recipe, "detect", device)
