"""``Detections``: what the detector found in one image, carried unchanged through every later stage.

Boxes are ``x1, y1, x2, y2`` in pixels of the original image (after EXIF orientation), class ids index
``DETECTOR_CLASSES``: 0..26 are the suited tiles of ``scoring.tiles`` (same ids), then ``back`` (a
face-down tile) and ``honour`` (a wind, dragon, flower or blank tile: not a Sichuan tile).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from scoring.tiles import CLASS_NAMES

BACK = 27
HONOUR = 28
DETECTOR_CLASSES: tuple[str, ...] = (*CLASS_NAMES, "back", "honour")
# The classes the shipped detector is trained on (see models/manifest.json for the weights actually loaded).
CLASS_IDS = {name: index for index, name in enumerate(DETECTOR_CLASSES)}


def class_id(name: str) -> int:
    try:
        return CLASS_IDS[name]
    except KeyError:
        raise ValueError(
            f"unknown detector class {name!r}; expected one of {', '.join(DETECTOR_CLASSES)}"
        ) from None


@dataclass(frozen=True)
class Detection:
    """One box, for code that wants to iterate rather than vectorise."""

    box: tuple[float, float, float, float]
    class_id: int
    confidence: float

    @property
    def name(self) -> str:
        return DETECTOR_CLASSES[self.class_id]

    @property
    def is_suited(self) -> bool:
        return self.class_id < 27


@dataclass(frozen=True, eq=False)
class Detections:
    boxes: np.ndarray  # (N, 4) float32, xyxy in original-image pixels
    class_ids: np.ndarray  # (N,) int64
    confidences: np.ndarray  # (N,) float32
    image_size: tuple[int, int]  # (width, height) of the oriented image
    # the classifier's other readings of each box: the likeliest other suited tiles, likeliest first,
    # with confidences on the same scale as ``confidences``, 0 for a reading less likely than an honour
    # tile or no tile (None without a classifier, or for tiles a user entered)
    alternatives: np.ndarray | None = None  # (N, K) int64
    alternative_confidences: np.ndarray | None = None  # (N, K) float32

    def __post_init__(self) -> None:
        boxes = (
            np.asarray(self.boxes, dtype=np.float32).reshape(-1, 4)
            if len(self.boxes)
            else np.zeros((0, 4), np.float32)
        )
        class_ids = np.asarray(self.class_ids, dtype=np.int64).reshape(-1)
        confidences = np.asarray(self.confidences, dtype=np.float32).reshape(-1)
        n = boxes.shape[0]
        if class_ids.shape != (n,) or confidences.shape != (n,):
            raise ValueError(
                f"Detections: expected {n} class ids and confidences for {n} boxes, "
                f"got shapes {class_ids.shape} and {confidences.shape}"
            )
        if n and (class_ids.min() < 0 or class_ids.max() >= len(DETECTOR_CLASSES)):
            raise ValueError(f"Detections: class ids must be in 0..{len(DETECTOR_CLASSES) - 1}")
        if n and not np.all(np.isfinite(boxes)):
            raise ValueError("Detections: boxes must be finite")
        if n and np.any(boxes[:, 2:] < boxes[:, :2]):
            raise ValueError("Detections: boxes must be x1 <= x2 and y1 <= y2")
        if n and ((confidences < 0) | (confidences > 1)).any():
            raise ValueError("Detections: confidences must be in [0, 1]")
        width, height = self.image_size
        if width <= 0 or height <= 0:
            raise ValueError(f"Detections: image size must be positive, got {self.image_size}")
        if (self.alternatives is None) != (self.alternative_confidences is None):
            raise ValueError("Detections: alternatives and alternative_confidences go together")
        others: tuple[np.ndarray, ...] = ()
        if self.alternatives is not None and self.alternative_confidences is not None:
            others = (
                np.asarray(self.alternatives, dtype=np.int64),
                np.asarray(self.alternative_confidences, dtype=np.float32),
            )
            if others[0].ndim != 2 or others[0].shape[0] != n or others[0].shape != others[1].shape:
                raise ValueError(f"Detections: expected (N, K) alternative readings and confidences, N = {n}")
            if others[0].size and (others[0].min() < 0 or others[0].max() >= 27):
                raise ValueError("Detections: an alternative reading must be a suited tile (0..26)")
            object.__setattr__(self, "alternatives", others[0])
            object.__setattr__(self, "alternative_confidences", others[1])
        arrays: tuple[np.ndarray, ...] = (boxes, class_ids, confidences, *others)
        for array in arrays:
            array.setflags(write=False)
        object.__setattr__(self, "boxes", boxes)
        object.__setattr__(self, "class_ids", class_ids)
        object.__setattr__(self, "confidences", confidences)
        object.__setattr__(self, "image_size", (int(width), int(height)))

    @classmethod
    def empty(cls, image_size: tuple[int, int]) -> Detections:
        return cls(np.zeros((0, 4), np.float32), np.zeros(0, np.int64), np.zeros(0, np.float32), image_size)

    def __len__(self) -> int:
        return int(self.boxes.shape[0])

    def __iter__(self) -> Iterator[Detection]:
        for box, cid, conf in zip(self.boxes, self.class_ids, self.confidences, strict=True):
            yield Detection(tuple(float(v) for v in box), int(cid), float(conf))  # type: ignore[arg-type]

    def __getitem__(self, index: np.ndarray | slice | list[int]) -> Detections:
        """A subset, by boolean mask, index array or slice."""
        others: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
        if self.alternatives is not None and self.alternative_confidences is not None:
            others = (self.alternatives[index], self.alternative_confidences[index])
        return Detections(
            self.boxes[index], self.class_ids[index], self.confidences[index], self.image_size, *others
        )

    @property
    def presences(self) -> np.ndarray:
        """How sure the detector is that each box holds a tile, whichever of its readings it is: the first
        and the other readings' confidences pooled (each is sqrt(box x face), so this is sqrt(box x
        their summed face probability)); the confidences themselves without alternatives."""
        if self.alternative_confidences is None:
            return self.confidences
        pooled = self.confidences**2 + (self.alternative_confidences**2).sum(axis=1)
        return np.sqrt(np.minimum(pooled, 1.0)).astype(np.float32)

    def joined(self, other: Detections) -> Detections:
        """These detections followed by ``other``'s (same photo); alternatives kept when both have
        them, as many per box as the fewer of the two."""
        if other.image_size != self.image_size:
            raise ValueError("Detections: only detections of one photo can be joined")
        others: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
        if self.alternatives is not None and other.alternatives is not None:
            assert self.alternative_confidences is not None and other.alternative_confidences is not None
            k = min(self.alternatives.shape[1], other.alternatives.shape[1])
            others = (
                np.concatenate([self.alternatives[:, :k], other.alternatives[:, :k]]),
                np.concatenate([self.alternative_confidences[:, :k], other.alternative_confidences[:, :k]]),
            )
        return Detections(
            np.concatenate([self.boxes, other.boxes]),
            np.concatenate([self.class_ids, other.class_ids]),
            np.concatenate([self.confidences, other.confidences]),
            self.image_size,
            *others,
        )

    def reread(self, index: int, rank: int = 0) -> Detections:
        """The same detections with box ``index`` read as its alternative ``rank`` (0: the runner-up),
        the first reading taking that alternative's place."""
        if self.alternatives is None or self.alternative_confidences is None:
            raise ValueError("Detections: no alternative readings to swap in")
        if self.class_ids[index] >= len(CLASS_NAMES):
            raise ValueError("Detections: only a suited tile is re-read as one of its alternatives")
        class_ids, confidences = self.class_ids.copy(), self.confidences.copy()
        others, other_conf = self.alternatives.copy(), self.alternative_confidences.copy()
        class_ids[index], others[index, rank] = others[index, rank], class_ids[index]
        confidences[index], other_conf[index, rank] = other_conf[index, rank], confidences[index]
        return Detections(self.boxes, class_ids, confidences, self.image_size, others, other_conf)

    def scaled(self, factor: float) -> Detections:
        """The same detections in an image resized by ``factor`` (e.g. a reduced decode of the photo)."""
        if factor == 1:
            return self
        width, height = self.image_size
        size = (max(1, round(width * factor)), max(1, round(height * factor)))
        return replace(self, boxes=self.boxes * factor, image_size=size)

    @property
    def names(self) -> list[str]:
        return [DETECTOR_CLASSES[c] for c in self.class_ids]

    def to_json(self) -> list[dict[str, object]]:
        """One object per box: ``tile``, ``confidence``, ``box`` and, when the classifier gave them,
        ``alternatives``: its next readings ``{tile, confidence}``, likeliest first (those of confidence 0
        left out)."""
        rows: list[dict[str, object]] = [
            {
                "tile": DETECTOR_CLASSES[int(c)],
                "confidence": round(float(p), 4),
                "box": [round(float(v), 1) for v in b],
            }
            for b, c, p in zip(self.boxes, self.class_ids, self.confidences, strict=True)
        ]
        if self.alternatives is not None and self.alternative_confidences is not None:
            for row, others, confidences in zip(
                rows, self.alternatives, self.alternative_confidences, strict=True
            ):
                row["alternatives"] = [
                    {"tile": DETECTOR_CLASSES[int(c)], "confidence": round(float(p), 4)}
                    for c, p in zip(others, confidences, strict=True)
                    if p > 0  # a place kept for a reading there is none of (e.g. a tile a user named)
                ]
        return rows
