"""Corrected photos saved as labelled examples: the writer behind ``POST /api/v1/examples``.

Layout of the folder, readable by ``smj dataset check`` and training::

    images/<id>.jpg        the photo as decoded (upright, at most 4095 pixels long), re-encoded as JPEG
    labels/<id>.txt        YOLO lines: class id (``DETECTOR_CLASSES``), x/y centre, width, height in 0..1
    hands.jsonl            one line per example: {id, image, labels, hand, width, height, saved_at}
    data.yaml              written once: the 29 class names

Only pixels are stored: whatever else the upload carried (padding, metadata, a script after the JPEG's
end) is not. Each example is written as image, then labels, each to a temporary file renamed into place,
then its line in ``hands.jsonl``: the record is the commit, so a crash leaves no record without both
files (at worst two files without a record, which nothing reads). A hand ``smj score`` calls impossible
(a wrong count, a fifth copy, the winning tile not in the hand) is refused as ``CorrectionError`` with
the scoring code, as is an example past the folder's ``Quota`` (``quota_full``). Ids are a UTC
timestamp plus random hex; nothing is ever overwritten. Saves are serialised by a lock file, so several
server processes may share a folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from datasets.labels import Box, DatasetError
from datasets.yolo import data_yaml, format_label_lines
from scoring import Hand, WinContext, score
from scoring.errors import IMPOSSIBLE
from scoring.presets import CHENGDU

__all__ = ["CorrectionError", "Quota", "SavedCorrection", "check_hand", "save_correction"]

JPEG_QUALITY = 92
HANDS = "hands.jsonl"
_lock = threading.Lock()


class CorrectionError(DatasetError):
    """An example that cannot be saved: ``code`` is a scoring ``ErrorCode`` value or ``quota_full``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Quota:
    """The most examples a folder takes, and the most bytes its images and labels may hold."""

    max_examples: int = 2_000
    max_bytes: int = 2_000_000_000


@dataclass(frozen=True)
class SavedCorrection:
    id: str
    image: str  # relative to the folder
    labels: str
    hands: str
    boxes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "saved": True,
            "id": self.id,
            "image": self.image,
            "labels": self.labels,
            "hands": self.hands,
            "boxes": self.boxes,
        }


def check_hand(hand: Hand) -> None:
    """Raises ``CorrectionError`` for a hand ``/score`` refuses as impossible; a hand that is simply
    not a win (three suits, no 4 sets + a pair) is what the photo shows, and is kept."""
    result = score(hand, WinContext(), CHENGDU)
    if result.error is not None and result.error.code in IMPOSSIBLE:
        raise CorrectionError(result.error.code.value, result.error.message)


def save_correction(
    root: Path, pixels: np.ndarray, boxes: Sequence[Box], hand: Hand, quota: Quota | None = None
) -> SavedCorrection:
    """Save ``pixels`` (H, W, 3 uint8, upright) with ``boxes`` (normalised) and ``hand`` under ``root``."""
    check_hand(hand)
    quota = quota or Quota()
    height, width = int(pixels.shape[0]), int(pixels.shape[1])
    encoded = io.BytesIO()
    Image.fromarray(pixels).save(encoded, format="JPEG", quality=JPEG_QUALITY)
    image_bytes = encoded.getvalue()
    label_bytes = format_label_lines(boxes).encode()
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(parents=True, exist_ok=True)
    with _locked(root):
        _remove_leftovers(root)
        _check_quota(root, quota, len(image_bytes) + len(label_bytes))
        while True:
            example_id = f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(4)}"
            image = f"images/{example_id}.jpg"
            labels = f"labels/{example_id}.txt"
            if not (root / image).exists() and not (root / labels).exists():
                break
        try:
            _write_atomic(root / image, image_bytes)
            _write_atomic(root / labels, label_bytes)
            record = {
                "id": example_id,
                "image": image,
                "labels": labels,
                "hand": hand.to_json(),
                "width": width,
                "height": height,
                "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            _append_line(root / HANDS, json.dumps(record, ensure_ascii=False))
        except BaseException:
            for written in (root / image, root / labels):  # no files without their record
                written.unlink(missing_ok=True)
            raise
        if not (root / "data.yaml").exists():  # saved examples train; never their own validation
            _write_atomic(root / "data.yaml", data_yaml(root.resolve(), ["train"], flat=True).encode())
    return SavedCorrection(example_id, image, labels, HANDS, len(boxes))


def _check_quota(root: Path, quota: Quota, adding: int) -> None:
    hands = root / HANDS
    count = 0
    if hands.exists():
        with hands.open("rb") as handle:
            count = sum(1 for line in handle if line.strip())
    if count >= quota.max_examples:
        raise CorrectionError(
            "quota_full",
            f"the examples folder holds {count} examples, the most it takes ({quota.max_examples})",
        )
    used = sum(_folder_bytes(root / folder) for folder in ("images", "labels"))
    if used + adding > quota.max_bytes:
        raise CorrectionError(
            "quota_full",
            f"the examples folder holds {used:,} bytes; this example would pass the {quota.max_bytes:,}",
        )


def _folder_bytes(folder: Path) -> int:
    with os.scandir(folder) as entries:
        return sum(entry.stat().st_size for entry in entries if entry.is_file() and not _leftover(entry.name))


def _leftover(name: str) -> bool:
    """A temporary file of ``_write_atomic`` (``.NAME.HEX.tmp``)."""
    return name.startswith(".") and name.endswith(".tmp")


def remove_leftovers(root: Path) -> int:
    """Remove the temporary files a save killed midway left in ``root`` (none is being written: the folder's
    lock is taken); how many. The service calls it when it starts."""
    if not root.is_dir():
        return 0
    with _locked(root):
        return _remove_leftovers(root)


def _remove_leftovers(root: Path) -> int:
    """Under the folder's lock every temporary file is a leftover: a save holds the lock while it writes."""
    removed = 0
    for folder in (root, root / "images", root / "labels"):
        if not folder.is_dir():
            continue
        for entry in os.scandir(folder):
            if entry.is_file() and _leftover(entry.name):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed += 1
    return removed


def _write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path``, flush it to disk, then rename it into place."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with temporary.open("xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def _append_line(path: Path, line: str) -> None:
    """One write of a whole line with O_APPEND, flushed to disk."""
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, (line + "\n").encode())
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """This process's lock, and a lock file for other processes sharing the folder (where flock exists)."""
    with _lock, (root / ".lock").open("a") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: this process's lock only
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
