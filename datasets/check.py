"""Check a YOLO dataset before training: statistics, label errors, and a contact sheet for a person.

``check_dataset`` reads every label line itself (it does not stop at the first bad one, as the readers
do) and returns a ``CheckReport``: boxes per class and split, boxes per image, a histogram of box sizes
in pixels, and every problem found as an ``Issue`` with its file and line. Errors (``ERROR_KINDS``) make
the dataset unfit to train on; warnings (a source photo in two splits, copies of one photo found by
content, ``datasets.duplicates``, a class with no box in train, a split too small to measure, class
names that are not the detector's) are worth a look but not fatal.

``contact_sheet`` draws random labelled crops, one row per class, so a person sees at a glance whether
the boxes are tight and the classes right.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont, ImageOps

from datasets.duplicates import find_duplicates
from datasets.labels import EDGE_TOLERANCE, Box, DatasetError, repeated_boxes
from datasets.yolo import (
    IMAGE_SUFFIXES,
    image_size,
    read_class_names,
    read_sources,
    source_of,
    split_dirs,
    verify_image,
)
from vision.annotate import pil_font
from vision.detections import DETECTOR_CLASSES

ERROR_KINDS = (
    "malformed",  # not 'class xc yc w h', or not numbers
    "unknown_class",  # a class id outside data.yaml's names
    "out_of_range",  # a coordinate or box edge outside the image (more than EDGE_TOLERANCE)
    "degenerate",  # width or height zero, negative or under one pixel
    "duplicate",  # the same class twice with IoU > DUPLICATE_IOU
    "missing_label",  # an image without a label file (an empty file marks an image with no tiles)
    "orphan_label",  # a label file without an image
    "bad_image",  # an image file that cannot be read
    "no_names",  # no data.yaml / classes.txt naming the classes
)
SIZE_BINS = (8, 16, 32, 64, 128, 256, 512)  # pixel edges of the box size histogram


@dataclass(frozen=True)
class Issue:
    path: Path
    line: int  # 1-based line of a label file; 0 when the issue concerns the whole file
    kind: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.kind}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "line": self.line, "kind": self.kind, "message": self.message}


@dataclass(frozen=True)
class BoxInFile:
    """A label (``datasets.labels.Box``) where it was read: its image, split and label-file line, for the
    statistics and the contact sheet."""

    image: Path
    split: str
    box: Box
    line: int = 0  # of its label file


@dataclass(frozen=True)
class CheckReport:
    root: Path
    class_names: tuple[str, ...]
    images: dict[str, int]  # split -> number of images
    boxes_per_image: dict[str, tuple[int, ...]]  # split -> box count of each image
    box_sizes: tuple[float, ...]  # sqrt(w * h) in pixels of every box whose image size is known
    boxes: tuple[BoxInFile, ...]
    errors: tuple[Issue, ...]
    warnings: tuple[Issue, ...] = field(default=())

    @property
    def splits(self) -> list[str]:
        order = ("train", "val", "test")
        return sorted(self.images, key=lambda s: (order.index(s) if s in order else len(order), s))

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> dict[str, dict[str, int]]:
        """class name -> split -> number of boxes (every class, zeros included)."""
        table = {name: dict.fromkeys(self.splits, 0) for name in self.class_names}
        for item in self.boxes:
            table[self.class_names[item.box.class_id]][item.split] += 1
        return table

    def size_histogram(self) -> list[tuple[str, int]]:
        edges = (0, *SIZE_BINS, math.inf)
        labels = [f"{lo}-{hi}" if hi != math.inf else f">={lo}" for lo, hi in itertools.pairwise(edges)]
        labels[0] = f"<{SIZE_BINS[0]}"
        counts = np.histogram(np.asarray(self.box_sizes, float), bins=np.asarray(edges, float))[0]
        return list(zip(labels, (int(c) for c in counts), strict=True))

    def per_image_stats(self) -> dict[str, dict[str, float]]:
        stats: dict[str, dict[str, float]] = {}
        groups = {"all": [n for split in self.splits for n in self.boxes_per_image[split]]}
        groups.update({split: list(self.boxes_per_image[split]) for split in self.splits})
        for name, values in groups.items():
            if values:
                stats[name] = {"min": min(values), "median": statistics.median(values), "max": max(values)}
        return stats

    def to_json(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "ok": self.ok,
            "images": self.images,
            "boxes": len(self.boxes),
            "counts": self.counts(),
            "boxes_per_image": self.per_image_stats(),
            "box_size_px": dict(self.size_histogram()),
            "errors": [issue.to_json() for issue in self.errors],
            "warnings": [issue.to_json() for issue in self.warnings],
        }

    def as_text(self) -> str:
        splits = self.splits
        lines = [
            f"dataset {self.root}: {sum(self.images.values())} images "
            f"({', '.join(f'{s} {self.images[s]}' for s in splits)}), {len(self.boxes)} boxes",
            "",
            "boxes per class:",
            f"  {'class':<8}" + "".join(f"{s:>8}" for s in splits) + f"{'total':>8}",
        ]
        for name, row in self.counts().items():
            lines.append(f"  {name:<8}" + "".join(f"{row[s]:>8}" for s in splits) + f"{sum(row.values()):>8}")
        lines += ["", "boxes per image (min / median / max):"]
        for name, stat in self.per_image_stats().items():
            lines.append(f"  {name:<8}{stat['min']:>6g} /{stat['median']:>6g} /{stat['max']:>6g}")
        lines += ["", "box size, sqrt(width x height) in pixels:"]
        histogram = self.size_histogram()
        peak = max((count for _, count in histogram), default=0)
        for label, count in histogram:
            bar = "#" * (round(40 * count / peak) if peak else 0)
            lines.append(f"  {label:>8} {count:>7} {bar}".rstrip())
        if self.warnings:
            lines += ["", f"warnings ({len(self.warnings)}):", *(f"  {issue}" for issue in self.warnings)]
        lines.append("")
        if self.errors:
            kinds = Counter(issue.kind for issue in self.errors)
            summary = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))
            lines += [f"errors ({len(self.errors)}: {summary}):", *(str(issue) for issue in self.errors)]
        else:
            lines.append("no label errors")
        return "\n".join(lines)


def check_dataset(root: Path | str) -> CheckReport:
    """Check a YOLO dataset (this project's layout or any layout ``read_yolo`` understands)."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise DatasetError(f"{root}: no such folder")
    errors: list[Issue] = []
    warnings: list[Issue] = []
    try:
        names = tuple(read_class_names(root))
    except DatasetError as error:
        errors.append(Issue(root / "data.yaml", 0, "no_names", str(error)))
        names = DETECTOR_CLASSES
    if names != DETECTOR_CLASSES:
        warnings.append(
            Issue(
                root / "data.yaml",
                0,
                "class_names",
                f"names are not the {len(DETECTOR_CLASSES)} detector classes",
            )
        )
    images: dict[str, int] = defaultdict(int)
    per_image: dict[str, list[int]] = defaultdict(list)
    sizes: list[float] = []
    boxes: list[BoxInFile] = []
    splits_of_source: dict[str, set[str]] = defaultdict(set)
    listed = read_sources(root / "sources.csv")
    image_splits: dict[Path, str] = {}
    for split_name, image_dir, label_dir in split_dirs(root):
        split = split_name or "all"
        image_files = sorted(
            p for p in image_dir.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
        )
        label_files = {p.stem: p for p in label_dir.glob("*.txt")} if label_dir.is_dir() else {}
        label_files.pop("classes", None)
        stems: set[str] = set()
        for image in image_files:
            images[split] += 1
            image_splits[image] = split
            stems.add(image.stem)
            source = listed.get(image.relative_to(root).as_posix(), {}).get("source") or source_of(image.stem)
            splits_of_source[source].add(split)
            try:
                size: tuple[int, int] | None = image_size(image)
                verify_image(image)
            except DatasetError as error:
                errors.append(Issue(image, 0, "bad_image", str(error).removeprefix(f"{image}: ")))
                size = None
            label = label_files.get(image.stem)
            if label is None:
                errors.append(
                    Issue(image, 0, "missing_label", f"no label file {label_dir / (image.stem + '.txt')}")
                )
                per_image[split].append(0)
                continue
            found = _check_label_file(label, names, size, errors)
            per_image[split].append(len(found))
            for line, box in found:
                boxes.append(BoxInFile(image, split, box, line))
                if size:
                    sizes.append(math.sqrt(max(box.w * size[0], 0) * max(box.h * size[1], 0)))
        for stem in sorted(set(label_files) - stems):
            errors.append(
                Issue(label_files[stem], 0, "orphan_label", f"no image named {stem}.* in {image_dir}")
            )
    for source, splits in sorted(splits_of_source.items()):
        if len(splits) > 1:
            warnings.append(
                Issue(root, 0, "split_leak", f"source photo {source!r} is in {' and '.join(sorted(splits))}")
            )
    for group in find_duplicates(image_splits):
        parts = sorted({image_splits[path] for path in group.paths})
        if len(parts) > 1:
            message = f"{group.describe(root)}, in {' and '.join(parts)}"
            warnings.append(Issue(group.paths[0], 0, "split_leak", message))
        else:
            warnings.append(Issue(group.paths[0], 0, "duplicate_image", group.describe(root)))
    warnings += _coverage_warnings(root, names, dict(images), boxes)
    return CheckReport(
        root=root,
        class_names=names,
        images=dict(images),
        boxes_per_image={split: tuple(values) for split, values in per_image.items()},
        box_sizes=tuple(sizes),
        boxes=tuple(boxes),
        errors=tuple(errors),
        warnings=tuple(warnings),
    )


MIN_SPLIT_IMAGES = 20  # fewer images than this in a split measure nothing (one image is 5 %)


def _coverage_warnings(
    root: Path, names: Sequence[str], images: dict[str, int], boxes: Sequence[BoxInFile]
) -> list[Issue]:
    """A detector class with no box to train on, and a split too small to measure anything."""
    warnings: list[Issue] = []
    trained = {labelled.box.class_id for labelled in boxes if labelled.split in ("train", "all")}
    if "train" in images or "all" in images:
        for class_id, name in enumerate(DETECTOR_CLASSES):
            if class_id not in trained:
                warnings.append(
                    Issue(root, 0, "class_not_trained", f"class {name} has no box in the train split")
                )
    for split, count in sorted(images.items()):
        if split in ("val", "test") and count < MIN_SPLIT_IMAGES:
            warnings.append(
                Issue(
                    root,
                    0,
                    "small_split",
                    f"the {split} split has {_plural(count, 'image')}: under {MIN_SPLIT_IMAGES}, it measures "
                    "nothing (one image moves a score by 5 % or more)",
                )
            )
    return warnings


def _check_label_file(
    path: Path, names: Sequence[str], size: tuple[int, int] | None, errors: list[Issue]
) -> list[tuple[int, Box]]:
    """The readable boxes of one label file with their line numbers; every problem is appended to
    ``errors``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        errors.append(Issue(path, 0, "malformed", f"cannot read the label file ({error})"))
        return []
    kept: list[tuple[int, Box]] = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 5:
            errors.append(
                Issue(path, number, "malformed", f"expected 'class xc yc w h', got {line.strip()!r}")
            )
            continue
        try:
            class_id = int(fields[0])
            xc, yc, w, h = (float(v) for v in fields[1:])
        except ValueError:
            errors.append(
                Issue(path, number, "malformed", f"expected an integer class and 4 numbers, got {line!r}")
            )
            continue
        if not all(math.isfinite(v) for v in (xc, yc, w, h)):
            errors.append(Issue(path, number, "malformed", f"coordinates must be finite, got {line!r}"))
            continue
        if not 0 <= class_id < len(names):
            errors.append(
                Issue(path, number, "unknown_class", f"class {class_id} is outside 0..{len(names) - 1}")
            )
            continue
        box = Box(class_id, xc, yc, w, h)
        problem = _box_problem(box, size)
        if problem:
            errors.append(Issue(path, number, *problem))
        kept.append((number, box))
    _find_duplicates(path, kept, names, errors)
    return kept


def _box_problem(box: Box, size: tuple[int, int] | None) -> tuple[str, str] | None:
    if box.w <= 0 or box.h <= 0:
        return "degenerate", f"width {box.w:g} and height {box.h:g} must be positive"
    if size and (box.w * size[0] < 1 or box.h * size[1] < 1):
        return "degenerate", f"{box.w * size[0]:.2f} x {box.h * size[1]:.2f} pixels is smaller than one pixel"
    low, high = -EDGE_TOLERANCE, 1 + EDGE_TOLERANCE
    edges = (box.xc - box.w / 2, box.yc - box.h / 2, box.xc + box.w / 2, box.yc + box.h / 2)
    if not all(low <= v <= high for v in (box.xc, box.yc, *edges)):
        shown = ", ".join(f"{v:.4f}" for v in edges)
        return "out_of_range", f"box x1, y1, x2, y2 = {shown} leaves the image (0..1)"
    return None


def _find_duplicates(
    path: Path, kept: list[tuple[int, Box]], names: Sequence[str], errors: list[Issue]
) -> None:
    lines = [number for number, _ in kept]
    boxes = [box for _, box in kept]
    for later, earlier, iou in repeated_boxes(boxes):
        message = f"repeats line {lines[earlier]} ({names[boxes[later].class_id]}, IoU {iou:.2f})"
        errors.append(Issue(path, lines[later], "duplicate", message))


def contact_sheet(
    report: CheckReport,
    out: Path | str,
    *,
    per_class: int = 8,
    cell: int = 72,
    seed: int = 0,
    margin: float = 0.15,
) -> Path:
    """A PNG grid: one row per class present, ``per_class`` random crops each, the box drawn in green and
    under it the image file and label line it comes from (the end of a long name), to find and fix it."""
    out = Path(out)
    rng = random.Random(seed)
    by_class: dict[int, list[BoxInFile]] = defaultdict(list)
    for item in report.boxes:
        if item.box.w > 0 and item.box.h > 0:
            by_class[item.box.class_id].append(item)
    rows = sorted(by_class)
    chosen = {c: rng.sample(by_class[c], min(per_class, len(by_class[c]))) for c in rows}
    label_width, pad, caption = 96, 4, 13
    row_height = cell + caption + pad
    width = label_width + per_class * (cell + pad) + pad
    height = max(1, len(rows)) * row_height + pad
    sheet = Image.new("RGB", (width, height), (40, 40, 40))
    draw = ImageDraw.Draw(sheet)
    font = pil_font(max(12, cell // 5))
    if not rows:
        draw.text((pad, pad), "no boxes", fill=(255, 255, 255), font=font)
    wanted: dict[Path, list[tuple[int, int, Box]]] = defaultdict(list)
    small = pil_font(10)
    for row, class_id in enumerate(rows):
        y = pad + row * row_height
        name = report.class_names[class_id] if class_id < len(report.class_names) else str(class_id)
        draw.text((pad, y + cell // 2 - 14), name, fill=(255, 255, 255), font=font)
        draw.text(
            (pad, y + cell // 2 + 4),
            _plural(len(by_class[class_id]), "box"),
            fill=(170, 170, 170),
            font=pil_font(11),
        )
        for column, item in enumerate(chosen[class_id]):
            wanted[item.image].append((row, column, item.box))
            x = label_width + pad + column * (cell + pad)
            draw.text(
                (x, y + cell + 1),
                _fitted(f"{item.image.name}:{item.line}", cell, small),
                fill=(200, 200, 200),
                font=small,
            )
    for image_path, crops in wanted.items():
        try:
            with Image.open(image_path) as opened:
                image = ImageOps.exif_transpose(opened).convert("RGB")
        except (OSError, SyntaxError, ValueError, ImportError):
            continue  # reported as bad_image already
        for row, column, box in crops:
            tile = _crop(image, box, cell, margin)
            x = label_width + pad + column * (cell + pad) + (cell - tile.width) // 2
            y = pad + row * row_height + (cell - tile.height) // 2
            sheet.paste(tile, (x, y))
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out)
    return out


def _crop(image: Image.Image, box: Box, cell: int, margin: float) -> Image.Image:
    x1, y1, x2, y2 = box.xyxy(image.width, image.height)
    grow_x, grow_y = (x2 - x1) * margin, (y2 - y1) * margin
    left, top = max(0, math.floor(x1 - grow_x)), max(0, math.floor(y1 - grow_y))
    right, bottom = min(image.width, math.ceil(x2 + grow_x)), min(image.height, math.ceil(y2 + grow_y))
    if right <= left or bottom <= top:
        return Image.new("RGB", (cell, cell), (120, 0, 0))
    crop = image.crop((left, top, right, bottom))
    scale = min(cell / crop.width, cell / crop.height)
    crop = crop.resize(
        (max(1, round(crop.width * scale)), max(1, round(crop.height * scale))), Image.Resampling.LANCZOS
    )
    ImageDraw.Draw(crop).rectangle(
        ((x1 - left) * scale, (y1 - top) * scale, (x2 - left) * scale - 1, (y2 - top) * scale - 1),
        outline=(0, 255, 0),
    )
    return crop


def _fitted(text: str, width: int, font: ImageFont.ImageFont | ImageFont.FreeTypeFont) -> str:
    """``text``, or its end after an ellipsis, as much as fits ``width`` pixels (a file name's end and the
    line tell a photo apart better than its start)."""
    if font.getlength(text) <= width:
        return text
    for start in range(1, len(text)):
        if font.getlength("…" + text[start:]) <= width:
            return "…" + text[start:]
    return text[-1:]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "es" if noun.endswith("x") else "s")
