"""Measuring the detector on a labelled dataset, through the same ``Detector`` users get.

mAP50 and mAP50-95 over the 27 suited classes (COCO-style, 101-point interpolation), mAP30 (matched at
IoU 0.3: a tile found and read right with a box unlike its label), per-class AP,
precision and recall at the operating threshold, the exact-tiles rate (images whose detected multiset
of suited tiles equals the multiset of every suited tile labelled in them: on a photo of a hand with
discards or other players' tiles beside it, all of those too, not the hand alone; ``smj score``'s reading of
the hand itself is ``benchmarks/bench_real_hands.py``'s), honours read as suited tiles, a confusion matrix,
and the slowest and worst images.

Ignore regions: a prediction whose box lies mostly inside a labelled honour tile (not a Sichuan
tile), and more inside it than inside any labelled suited tile, is neither a true nor a false positive
for mAP; it is counted apart as ``honour_as_suited``. (Rotated copies in the real set are labelled with
the envelope of each rotated box, often three times the tile: an honour's envelope then covers half of
a suited neighbour, which lies wholly in its own label.)

The labelled photos are any values shaped as ``datasets.labels.LabelledImage`` (``LabelledPhoto``): the
datasets layer reads them and calls in here, never the other way.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from vision.detections import BACK, DETECTOR_CLASSES, HONOUR, Detections
from vision.geometry.boxes import box_iou, inside_fraction
from vision.pipeline import decode_photo
from vision.reading import Reader, first_detections

# a box matches a label at IoU 0.5 (mAP50) and up to 0.95 (mAP50-95); and, loosely, at 0.3 (mAP30): some
# labels are not the tile's box (the shared real set's sheared and rotated copies carry envelopes, shifted),
# and mAP30 tells a tile found and read right with a box unlike its label from a tile missed or misread
LOOSE_IOU = 0.3
IOU_THRESHOLDS = np.array([LOOSE_IOU, *np.linspace(0.5, 0.95, 10)])
AT_50 = int(np.flatnonzero(np.isclose(IOU_THRESHOLDS, 0.5))[0])  # mAP50's column
SUITED = range(27)


class LabelledBox(Protocol):
    """One labelled tile: its detector class and its box in pixels of the photo. What is read of the one
    label model, ``datasets.labels.Box`` (vision does not import datasets: this names the contract)."""

    @property
    def class_id(self) -> int: ...

    def xyxy(self, width: int, height: int) -> tuple[float, float, float, float]: ...


class LabelledPhoto(Protocol):
    """A photo and its labelled tiles (``datasets.labels.LabelledImage`` is one)."""

    @property
    def image(self) -> Path: ...

    @property
    def boxes(self) -> Sequence[LabelledBox]: ...


def average_precision(recall: np.ndarray, precision: np.ndarray) -> float:
    """COCO 101-point interpolated AP of a precision/recall curve."""
    r = np.concatenate([[0.0], recall, [1.0]])
    p = np.concatenate([[1.0], precision, [0.0]])
    p = np.flip(np.maximum.accumulate(np.flip(p)))
    points = np.linspace(0, 1, 101)
    return float(np.mean(p[np.searchsorted(r, points, side="left").clip(0, len(p) - 1)]))


@dataclass
class ImageResult:
    image: Path
    seconds: float
    truth: Counter[int]
    found: Counter[int]
    errors: int  # missed + extra suited tiles
    found_near_labels: Counter[int] = field(default_factory=Counter)  # found within a tile of a label

    @property
    def exact(self) -> bool:
        return self.truth == self.found

    @property
    def exact_near_labels(self) -> bool:
        return self.truth == self.found_near_labels


@dataclass
class Evaluation:
    map50: float
    map50_95: float
    map30: float  # matched at IoU 0.3 (``LOOSE_IOU``): found and read right, whatever the box's shape
    per_class_ap50: dict[str, float]
    precision: float
    recall: float
    exact_tiles_rate: float  # photos whose every labelled suited tile was found and read (a multiset)
    honour_as_suited: int
    # the exact-tiles rate counting only tiles found within a tile of a labelled one: photos whose labels
    # cover the hand but not the discards around it
    exact_near_labels_rate: float
    back_ap50: float | None
    # precision and recall at the operating point matched at IoU 0.3: a box on a tile, read right, whatever
    # its shape (the real photos box a tile's face, the shipped localiser all of the tile that shows)
    precision30: float = 0.0
    recall30: float = 0.0
    images: list[ImageResult] = field(default_factory=list)
    confusion: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    conf: float = 0.55

    def summary(self, worst: int = 5) -> dict[str, object]:
        slowest = sorted(self.images, key=lambda r: -r.seconds)[:worst]
        worst_images = sorted(self.images, key=lambda r: -r.errors)[:worst]
        times = [r.seconds for r in self.images]
        return {
            "images": len(self.images),
            "map50": round(self.map50, 4),
            "map50_95": round(self.map50_95, 4),
            "map30": round(self.map30, 4),
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "precision30": round(self.precision30, 4),
            "recall30": round(self.recall30, 4),
            "conf": self.conf,
            "exact_tiles_rate": round(self.exact_tiles_rate, 4),
            "exact_near_labels_rate": round(self.exact_near_labels_rate, 4),
            "honour_as_suited": self.honour_as_suited,
            "back_ap50": None if self.back_ap50 is None else round(self.back_ap50, 4),
            "median_ms": round(1000 * float(np.median(times)), 1) if times else None,
            "per_class_ap50": {k: round(v, 4) for k, v in self.per_class_ap50.items()},
            "slowest": [{"image": r.image.name, "ms": round(1000 * r.seconds, 1)} for r in slowest],
            "worst": [{"image": r.image.name, "errors": r.errors} for r in worst_images if r.errors],
        }


def evaluate(
    detector: Reader, images: Sequence[LabelledPhoto], *, conf: float = 0.55, min_conf: float = 0.01
) -> Evaluation:
    """Detect the tiles of every image as a reading first sees them (``vision.reading.first_detections``) and
    score them against the labels.

    Each image is detected twice: with every box the detector can rank (``min_conf``, localiser floor
    included) for average precision, and as a user gets it at ``conf`` for precision, recall, the
    exact-tiles rate, honours read as suited tiles, the confusion matrix and the latency.
    """
    classes = [*SUITED, BACK]
    # per class: list of (score, tp flags per IoU threshold); count of ground truths
    scored: dict[int, list[tuple[float, np.ndarray]]] = {c: [] for c in classes}
    truth_count: Counter[int] = Counter()
    results: list[ImageResult] = []
    confusion = np.zeros(
        (len(DETECTOR_CLASSES) + 1, len(DETECTOR_CLASSES) + 1), np.int64
    )  # last = background
    honour_as_suited = 0
    tp_at_conf = fp_at_conf = tp30 = 0
    for item in images:
        photo = decode_photo(item.image)  # as every entry point decodes it: a large JPEG reduced
        # every box, ranked, for average precision; then what a user gets at the operating point
        found = first_detections(photo, detector, conf=min_conf, box_conf=min_conf)
        start = time.perf_counter()
        operating = first_detections(photo, detector, conf=conf)
        seconds = time.perf_counter() - start
        found, operating = found.scaled(photo.scale), operating.scaled(photo.scale)
        width, height = photo.original_size
        gt_boxes = np.array([b.xyxy(width, height) for b in item.boxes], np.float32).reshape(-1, 4)
        gt_classes = np.array([b.class_id for b in item.boxes], np.int64)
        honour_boxes, suited_boxes = gt_boxes[gt_classes == HONOUR], gt_boxes[gt_classes < BACK]
        ignored = on_honours(found.boxes, honour_boxes, suited_boxes)
        for c in classes:
            gt = gt_boxes[gt_classes == c]
            truth_count[c] += len(gt)
            mask = (found.class_ids == c) & ~ignored
            scored[c].extend(_ranked_matches(found.boxes[mask], found.confidences[mask], gt))
        # the operating point: what a user gets
        ignored = on_honours(operating.boxes, honour_boxes, suited_boxes)
        honour_as_suited += int(np.sum(ignored & (operating.class_ids < 27)))
        for c in SUITED:
            mask = (operating.class_ids == c) & ~ignored
            gt = gt_boxes[gt_classes == c]
            matches = _ranked_matches(operating.boxes[mask], operating.confidences[mask], gt)
            hits = sum(bool(flags[AT_50]) for _, flags in matches)
            tp_at_conf += hits
            fp_at_conf += int(mask.sum()) - hits
            tp30 += sum(bool(flags[0]) for _, flags in matches)
        _add_confusion(confusion, operating, gt_boxes, gt_classes, ignored)
        truth = Counter(int(c) for c in gt_classes if c < 27)
        found_tiles = Counter(int(c) for c in operating.class_ids[~ignored] if c < 27)
        errors = sum(((truth - found_tiles) + (found_tiles - truth)).values())
        near = ~ignored & _near_labels(operating.boxes, gt_boxes)
        found_near = Counter(int(c) for c in operating.class_ids[near] if c < 27)
        results.append(ImageResult(item.image, seconds, truth, found_tiles, errors, found_near))
    found_aps = {c: _class_ap(scored[c], truth_count[c]) for c in classes}
    aps = {c: ap for c, ap in found_aps.items() if ap is not None}
    suited_aps = [aps[c] for c in SUITED if c in aps]
    total_truth = sum(truth_count[c] for c in SUITED)
    return Evaluation(
        map50=float(np.mean([ap[AT_50] for ap in suited_aps])) if suited_aps else 0.0,
        map50_95=float(np.mean([ap[AT_50:].mean() for ap in suited_aps])) if suited_aps else 0.0,
        map30=float(np.mean([ap[0] for ap in suited_aps])) if suited_aps else 0.0,
        per_class_ap50={DETECTOR_CLASSES[c]: float(aps[c][AT_50]) for c in SUITED if c in aps},
        precision=tp_at_conf / max(tp_at_conf + fp_at_conf, 1),
        recall=tp_at_conf / max(total_truth, 1),
        precision30=tp30 / max(tp_at_conf + fp_at_conf, 1),
        recall30=tp30 / max(total_truth, 1),
        exact_tiles_rate=sum(r.exact for r in results) / max(len(results), 1),
        exact_near_labels_rate=sum(r.exact_near_labels for r in results) / max(len(results), 1),
        honour_as_suited=honour_as_suited,
        back_ap50=float(aps[BACK][AT_50]) if BACK in aps else None,
        images=results,
        confusion=confusion,
        conf=conf,
    )


def _class_ap(entries: list[tuple[float, np.ndarray]], n_truth: int) -> np.ndarray | None:
    """AP at each IoU threshold, or None for a class absent from the truth."""
    if n_truth == 0:
        return None
    if not entries:
        return np.zeros(len(IOU_THRESHOLDS))
    entries = sorted(entries, key=lambda e: -e[0])
    flags = np.array([e[1] for e in entries])  # (D, T)
    tp = np.cumsum(flags, axis=0)
    fp = np.cumsum(~flags, axis=0)
    recall = tp / n_truth
    precision = tp / np.maximum(tp + fp, 1e-9)
    return np.array([average_precision(recall[:, t], precision[:, t]) for t in range(len(IOU_THRESHOLDS))])


def on_honours(boxes: np.ndarray, honour_boxes: np.ndarray, suited_boxes: np.ndarray) -> np.ndarray:
    """Which boxes lie mostly on an honour tile's box, and more than on any suited tile's box: don't-care
    regions."""
    if not len(honour_boxes) or not len(boxes):
        return np.zeros(len(boxes), bool)
    on_honour = inside_fraction(boxes, honour_boxes).max(axis=1)
    on_suited = inside_fraction(boxes, suited_boxes).max(axis=1) if len(suited_boxes) else 0.0
    return np.asarray((on_honour > 0.5) & (on_honour > on_suited))


def _near_labels(boxes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Which boxes have their centre within one tile (the label's own size) of a labelled box."""
    if not len(labels) or not len(boxes):
        return np.zeros(len(boxes), bool)
    cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    w, h = labels[:, 2] - labels[:, 0], labels[:, 3] - labels[:, 1]
    inside_x = (cx[:, None] >= labels[None, :, 0] - w) & (cx[:, None] <= labels[None, :, 2] + w)
    inside_y = (cy[:, None] >= labels[None, :, 1] - h) & (cy[:, None] <= labels[None, :, 3] + h)
    return np.asarray((inside_x & inside_y).any(axis=1))


def _ranked_matches(boxes: np.ndarray, scores: np.ndarray, gt: np.ndarray) -> list[tuple[float, np.ndarray]]:
    """One class's boxes, most confident first, each with whether it matches a truth box not taken by
    a more confident one, at every IoU threshold."""
    order = np.argsort(-scores)
    boxes, scores = boxes[order], scores[order]
    ious = box_iou(boxes, gt)
    taken = np.zeros((len(IOU_THRESHOLDS), len(gt)), bool)
    matches = []
    for i in range(len(boxes)):
        flags = np.zeros(len(IOU_THRESHOLDS), bool)
        for t, threshold in enumerate(IOU_THRESHOLDS):
            candidates = np.where((ious[i] >= threshold) & ~taken[t])[0]
            if len(candidates):
                taken[t, candidates[np.argmax(ious[i, candidates])]] = True
                flags[t] = True
        matches.append((float(scores[i]), flags))
    return matches


def _add_confusion(
    matrix: np.ndarray,
    found: Detections,
    gt_boxes: np.ndarray,
    gt_classes: np.ndarray,
    ignored: np.ndarray,
) -> None:
    """Rows: truth class (last = background); columns: predicted class (last = missed)."""
    background = matrix.shape[0] - 1
    keep = ~ignored
    boxes, classes = found.boxes[keep], found.class_ids[keep]
    ious = box_iou(gt_boxes, boxes)
    matched_pred: set[int] = set()
    for g in np.argsort(-ious.max(axis=1)) if ious.size else range(len(gt_boxes)):
        candidates = (
            [p for p in np.argsort(-ious[g]) if ious[g, p] >= 0.5 and p not in matched_pred]
            if ious.size
            else []
        )
        if candidates:
            matched_pred.add(int(candidates[0]))
            matrix[gt_classes[g], classes[candidates[0]]] += 1
        else:
            matrix[gt_classes[g], background] += 1
    for p in range(len(boxes)):
        if p not in matched_pred:
            matrix[background, classes[p]] += 1


def save_confusion_png(matrix: np.ndarray, path: Path) -> Path:
    """A confusion matrix image: rows the true class, columns the class read (``none``: no box there, or a
    box on nothing), each cell shaded by the share of its row and holding its count; the axes titled, every
    class named along both."""
    from PIL import Image, ImageDraw

    from vision.annotate import pil_font as font

    labels = [*DETECTOR_CLASSES, "none"]
    n, cell, left, top = len(labels), 28, 120, 124
    size = (left + n * cell + 20, top + n * cell + 20)
    image = Image.new("RGB", size, (255, 255, 255))
    draw = ImageDraw.Draw(image)
    small, name, title = font(11), font(14), font(16)
    draw.text(
        (left, 8),
        "Confusion: each true tile (row) by what it was read as (column)",
        fill=(0, 0, 0),
        font=title,
    )
    draw.text((left, 30), "cell: count; shade: share of its row", fill=(90, 90, 90), font=small)
    draw.text((left + n * cell // 2 - 60, top - 78), "read as (predicted)", fill=(0, 0, 0), font=name)
    across = Image.new("RGB", (n * cell // 2, 20), (255, 255, 255))
    ImageDraw.Draw(across).text((0, 0), "true tile (labelled)", fill=(0, 0, 0), font=name)
    image.paste(across.rotate(90, expand=True), (4, top + (n * cell - across.width) // 2))
    totals = matrix.sum(axis=1, keepdims=True).clip(1)
    shares = matrix / totals
    for r in range(n):
        for c in range(n):
            shade = int(255 * (1 - shares[r, c]))
            x, y = left + c * cell, top + r * cell
            fill = (shade, 255, shade) if r == c else (255, shade, shade)
            draw.rectangle((x, y, x + cell - 2, y + cell - 2), fill=fill, outline=(225, 225, 225))
            if matrix[r, c]:
                draw.text((x + 2, y + 7), str(int(matrix[r, c])), fill=(0, 0, 0), font=small)
        draw.text((left - 52, top + r * cell + 6), labels[r], fill=(0, 0, 0), font=name)
        column = Image.new("RGB", (50, cell), (255, 255, 255))
        ImageDraw.Draw(column).text((2, 6), labels[r], fill=(0, 0, 0), font=name)
        image.paste(column.rotate(90, expand=True), (left + r * cell, top - 52))
    image.save(path)
    return path
