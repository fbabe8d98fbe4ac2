"""Saving a corrected photo as a labelled example (``POST /api/v1/examples``, only when the user opts in).

Layout of the dataset folder (``SMJ_DATASET_DIR``), readable by ``smj dataset check`` and training::

    images/<id>.jpg        the photo, upright (re-encoded only when its EXIF orientation turns it)
    labels/<id>.txt        YOLO lines: class id (``DETECTOR_CLASSES``), x/y centre, width, height in 0..1
    hands.jsonl            one line per example: {id, image, labels, hand, width, height, saved_at}
    data.yaml              written once: the 29 class names

Ids are a UTC timestamp plus random hex; files are created exclusively, so nothing is ever overwritten.
"""

from __future__ import annotations

import contextlib
import io
import json
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from PIL import Image

from datasets.labels import Box
from datasets.yolo import format_label_lines
from scoring import Hand
from vision.detections import DETECTOR_CLASSES, Detections
from vision.images import Photo

_KEEP_FORMATS = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp"}
_hands_lock = threading.Lock()


@dataclass(frozen=True)
class SavedExample:
    id: str
    root: Path
    image: str
    labels: str
    hands: str
    boxes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "saved": True,
            "id": self.id,
            "dataset_dir": str(self.root),
            "image": self.image,
            "labels": self.labels,
            "hands": self.hands,
            "boxes": self.boxes,
        }


def _stored_upright(data: bytes) -> str | None:
    """The suffix to keep the upload as it is (upright pixels in a format YOLO reads), else None."""
    with Image.open(io.BytesIO(data)) as image:
        turned = image.getexif().get(0x0112, 1) not in (1, None)
        return None if turned else _KEEP_FORMATS.get(image.format or "")


def _create(path: Path, data: bytes) -> None:
    with path.open("xb") as handle:  # exclusive: never overwrite
        handle.write(data)


def save_example(root: Path, data: bytes, photo: Photo, detections: Detections, hand: Hand) -> SavedExample:
    """Write the photo, its YOLO labels and the hand; ``photo`` is ``data`` decoded at full resolution."""
    width, height = photo.original_size
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(parents=True, exist_ok=True)
    suffix = _stored_upright(data)
    if suffix is None:
        buffer = io.BytesIO()
        Image.fromarray(photo.pixels).save(buffer, format="JPEG", quality=95)
        data, suffix = buffer.getvalue(), ".jpg"
    while True:
        example_id = f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(4)}"
        image_path = root / "images" / f"{example_id}{suffix}"
        label_path = root / "labels" / f"{example_id}.txt"
        try:
            _create(image_path, data)
        except FileExistsError:
            continue
        break
    boxes = [Box.from_xyxy(d.class_id, d.box, width, height) for d in detections]
    _create(label_path, format_label_lines(boxes).encode())
    record = {
        "id": example_id,
        "image": f"images/{image_path.name}",
        "labels": f"labels/{label_path.name}",
        "hand": hand.to_json(),
        "width": width,
        "height": height,
        "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    with _hands_lock, (root / "hands.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    data_yaml = root / "data.yaml"
    if not data_yaml.exists():
        names = {
            "path": str(root.resolve()),
            "train": "images",
            "val": "images",
            "names": dict(enumerate(DETECTOR_CLASSES)),
        }
        with contextlib.suppress(FileExistsError):  # another request wrote it first
            _create(data_yaml, yaml.safe_dump(names, allow_unicode=True, sort_keys=False).encode())
    return SavedExample(
        example_id, root, f"images/{image_path.name}", f"labels/{label_path.name}", "hands.jsonl", len(boxes)
    )
