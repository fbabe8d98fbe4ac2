"""Read and write YOLO-format datasets.

Reads the usual layouts: ``SRC/images`` + ``SRC/labels`` (flat or with split sub-folders), and
Roboflow's ``SRC/{train,valid,test}/{images,labels}``. Class names come from ``data.yaml`` (``names:``
as a list or a dict) or ``classes.txt``. Two extras of the shared real photo set are understood too:
an ``ignore/`` folder of ``name xc yc w h`` lines (tiles that are not Sichuan tiles) and ``meta.csv``
(the source photo of each image). In this project's own layout ``sources.csv`` names the
source photo of each image.

Writes this project's layout: ``images/<split>/``, ``labels/<split>/``, ``data.yaml`` with the 29
detector classes, and ``sources.csv`` (image, source, split).
"""

from __future__ import annotations

import csv
import math
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from PIL import Image

from datasets.labels import Box, DatasetError, LabelledImage, map_class_names, mapped_class_id
from vision.detections import DETECTOR_CLASSES

if TYPE_CHECKING:
    from datasets.problems import ImportProblems

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp"}
SPLIT_ALIASES = {"train": "train", "valid": "val", "val": "val", "validation": "val", "test": "test"}
_ROBOFLOW_COPY = re.compile(r"^(?P<root>.+?)(?:_(?:jpg|jpeg|png))?\.rf\.[0-9a-f]{16,}$")
_AUGMENTED_COPY = re.compile(r"^(?P<root>.+?)__(?:aug|crop|copy)\w*$")


def source_of(stem: str) -> str:
    """The source photo an image file was made from: Roboflow copies and our own crops share it."""
    for pattern in (_ROBOFLOW_COPY, _AUGMENTED_COPY):
        match = pattern.match(stem)
        if match:
            return match.group("root")
    return stem


def read_class_names(src: Path) -> list[str]:
    for candidate in (src / "data.yaml", src / "dataset.yaml", src.parent / "data.yaml"):
        if candidate.is_file():
            try:
                data = yaml.safe_load(candidate.read_text(encoding="utf-8")) or {}
            except yaml.YAMLError as error:
                raise DatasetError(f"{candidate}: not valid YAML: {error}") from None
            names = data.get("names") if isinstance(data, dict) else None
            if isinstance(names, dict):
                return [str(names[k]) for k in sorted(names, key=int)]
            if isinstance(names, list):
                return [str(n) for n in names]
            raise DatasetError(f"{candidate}: has no 'names:' list")
    classes_txt = src / "classes.txt"
    if classes_txt.is_file():
        return [line.strip() for line in classes_txt.read_text(encoding="utf-8").splitlines() if line.strip()]
    raise DatasetError(f"{src}: no data.yaml or classes.txt to name the classes")


def split_dirs(src: Path) -> list[tuple[str, Path, Path]]:
    """(split, images dir, labels dir) for every layout we understand."""
    found: list[tuple[str, Path, Path]] = []
    for name, split in SPLIT_ALIASES.items():
        if (src / name / "images").is_dir():
            found.append((split, src / name / "images", src / name / "labels"))
    if found:
        return found
    images = src / "images"
    if not images.is_dir():
        raise DatasetError(f"{src}: no images/ folder (nor train/images, valid/images)")
    subdirs = [d for d in sorted(images.iterdir()) if d.is_dir() and d.name in SPLIT_ALIASES]
    if subdirs:
        return [(SPLIT_ALIASES[d.name], d, src / "labels" / d.name) for d in subdirs]
    return [("", images, src / "labels")]


def read_yolo(
    src: Path | str, mapping: dict[str, str] | None = None, problems: ImportProblems | None = None
) -> list[LabelledImage]:
    """Every image of a YOLO dataset with its boxes mapped to this project's classes.

    With ``problems`` (an import), nothing is passed over unsaid: a label without its image, an image
    that does not decode, a line that is not a box, a box reaching outside its image are reported there
    and fixed (skipped or clipped); without it a malformed line raises ``DatasetError``.
    """
    src = Path(src).resolve()
    if not src.is_dir():
        raise DatasetError(f"{src}: no such folder")
    names = read_class_names(src)
    try:
        mapped = map_class_names(names, mapping)  # every unknown name at once
    except DatasetError as error:
        raise DatasetError(f"{src}: {error}") from None
    class_map = [mapped[name] for name in names]
    meta = _read_meta(src / "meta.csv")
    sources = read_sources(src / "sources.csv")
    images: list[LabelledImage] = []
    for split, image_dir, label_dir in split_dirs(src):
        image_paths = sorted(p for p in image_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if problems is not None and label_dir.is_dir():
            stems = {p.stem for p in image_paths}
            for label in sorted(label_dir.glob("*.txt")):
                if label.stem not in stems and label.stem != "classes":
                    problems.add(
                        label, 0, "orphan_label", f"no image named {label.stem}.* in {image_dir}", "skip"
                    )
        for image_path in image_paths:
            size = checked_image_size(image_path, problems)
            if size is None:
                continue
            width, height = size
            label = label_dir / f"{image_path.stem}.txt"
            try:
                boxes = _read_label_file(label, class_map, names, problems)
            except UndecodableText as error:
                if problems is None:
                    raise
                problems.add(label, error.line, "not_utf8", "not UTF-8 text: its image left out", "skip")
                continue
            boxes += _read_ignore_file(src / "ignore" / f"{image_path.stem}.txt", mapping)
            row = meta.get(image_path.name, {})
            listed = sources.get(image_path.relative_to(src).as_posix(), {})
            images.append(
                LabelledImage(
                    image=image_path,
                    boxes=tuple(boxes),
                    width=width,
                    height=height,
                    source=row.get("orig_root") or listed.get("source") or source_of(image_path.stem),
                    split=split or SPLIT_ALIASES.get(row.get("split", ""), ""),
                    meta={
                        k: v
                        for k, v in (listed | row).items()
                        if k not in ("image", "orig_root", "source", "split") and v is not None
                    },
                )
            )
    if not images:
        raise DatasetError(f"{src}: no images found")
    return images


def _read_meta(path: Path) -> dict[str, dict[str, str]]:
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["image"]: row for row in csv.DictReader(handle) if row.get("image")}


def read_sources(path: Path) -> dict[str, dict[str, str]]:
    """This project's ``sources.csv``: image path (relative to the dataset) -> its row."""
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["image"]: row for row in csv.DictReader(handle) if row.get("image")}


def image_size(path: Path) -> tuple[int, int]:
    """(width, height) of the image as a person sees it: EXIF rotations by 90 degrees swap the two."""
    try:
        with Image.open(path) as image:
            width, height = image.size
            orientation = image.getexif().get(0x0112, 1)
            return (height, width) if orientation in (5, 6, 7, 8) else (width, height)
    except (OSError, SyntaxError, ImportError) as error:
        # ImportError: once ultralytics is imported, Pillow retries an unknown file as HEIF and
        # raises it when no HEIF plugin is installed
        raise DatasetError(f"{path}: not a readable image ({error})") from None


def checked_image_size(path: Path, problems: ImportProblems | None) -> tuple[int, int] | None:
    """The image's size as ``image_size`` gives it, after decoding it whole when importing (``problems``
    given): an image that does not decode is reported there (skipped) and None returned. The one image
    check of every reader (YOLO, COCO, Label Studio)."""
    if problems is not None:
        try:
            verify_image(path)
        except DatasetError as error:
            problems.add(path, 0, "bad_image", str(error).removeprefix(f"{path}: "), "skip")
            return None
    return image_size(path)


def verify_image(path: Path) -> None:
    """Decode the image fully: a truncated file passes ``Image.open`` but fails in training."""
    try:
        with Image.open(path) as opened:
            opened.load()
    except (OSError, SyntaxError, ValueError, ImportError, Image.DecompressionBombError) as error:
        raise DatasetError(f"{path}: not a readable image ({error})") from None


def _parse_numbers(path: Path, number: int, fields: Sequence[str]) -> tuple[float, float, float, float]:
    try:
        xc, yc, w, h = (float(v) for v in fields)
    except ValueError:
        raise DatasetError(
            f"{path}:{number}: expected 4 numbers after the class, got {' '.join(fields)!r}"
        ) from None
    return xc, yc, w, h


def read_text_lines(path: Path) -> list[str]:
    """A text file's lines, read as UTF-8 with or without a byte-order mark; a file in another encoding is a
    ``DatasetError`` naming the file and the line that cannot be read."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise UndecodableText(path, line) from None


class UndecodableText(DatasetError):
    """A text file that is not UTF-8: the file and the first line that cannot be read."""

    def __init__(self, path: Path, line: int) -> None:
        self.path, self.line = path, line
        super().__init__(f"{path}:{line}: not UTF-8 text (save it as UTF-8)")


def _read_label_file(
    path: Path, class_map: list[int | None], names: list[str], problems: ImportProblems | None = None
) -> list[Box]:
    if not path.is_file():
        return []
    boxes: list[tuple[Box, int, str]] = []
    for number, line in enumerate(read_text_lines(path), 1):
        try:
            polygon = _polygon_line(path, number, line, class_map, names)
            if polygon is not None:  # a segmentation label: its enclosing box, converted and counted
                if problems is None:
                    raise DatasetError(f"{path}:{number}: a polygon, not a box (--lenient converts it)")
                problems.add(path, number, "polygon", "a polygon, imported as its bounding box", "convert")
            box = polygon if polygon is not None else _label_line(path, number, line, class_map, names)
        except DatasetError as error:
            if problems is None:
                raise
            problems.add(path, number, "malformed", str(error).removeprefix(f"{path}:{number}: "), "skip")
            continue
        if box is not None and problems is not None:
            box = problems.clipped(box, path, number)
        if box is not None:
            boxes.append((box, number, ""))
    if problems is not None:
        return problems.without_repeats(boxes, path)
    return [box for box, _, _ in boxes]


def _polygon_line(
    path: Path, number: int, line: str, class_map: list[int | None], names: list[str]
) -> Box | None:
    """The enclosing box of a YOLO segmentation line (``class x1 y1 x2 y2 x3 y3 ...``: three points or
    more), None for any other line (a box line is ``_label_line``'s)."""
    fields = line.split()
    if len(fields) < 7 or len(fields) % 2 == 0:
        return None
    box = _label_line(path, number, " ".join(fields[:5]), class_map, names)  # the class, checked
    try:
        points = [float(value) for value in fields[1:]]
    except ValueError:
        raise DatasetError(f"{path}:{number}: expected numbers after the class, got {line!r}") from None
    if not all(math.isfinite(value) for value in points):
        raise DatasetError(f"{path}:{number}: coordinates must be finite numbers, got {line!r}")
    if box is None:
        return None
    xs, ys = points[0::2], points[1::2]
    x1, y1, x2, y2 = min(xs), min(ys), max(xs), max(ys)
    return Box(box.class_id, (x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1)


def _label_line(
    path: Path, number: int, line: str, class_map: list[int | None], names: list[str]
) -> Box | None:
    """The box of one label line; ``None`` for a blank line or a dropped class."""
    fields = line.split()
    if not fields:
        return None
    if len(fields) != 5:
        raise DatasetError(f"{path}:{number}: expected 'class xc yc w h', got {line!r}")
    try:
        index = int(fields[0])
    except ValueError:
        raise DatasetError(f"{path}:{number}: class {fields[0]!r} is not an integer") from None
    if not 0 <= index < len(class_map):
        raise DatasetError(f"{path}:{number}: class {index} is outside 0..{len(names) - 1}")
    numbers = _parse_numbers(path, number, fields[1:])
    if not all(math.isfinite(value) for value in numbers):
        raise DatasetError(f"{path}:{number}: coordinates must be finite numbers, got {line!r}")
    class_id = class_map[index]
    return None if class_id is None else Box(class_id, *numbers)


def _read_ignore_file(path: Path, mapping: dict[str, str] | None) -> list[Box]:
    if not path.is_file():
        return []
    boxes: list[Box] = []
    for number, line in enumerate(read_text_lines(path), 1):
        fields = line.split()
        if len(fields) != 5:
            continue
        numbers = _parse_numbers(path, number, fields[1:])
        class_id = mapped_class_id(fields[0], mapping)
        if class_id is not None:
            boxes.append(Box(class_id, *numbers))
    return boxes


def write_yolo(images: Iterable[LabelledImage], out: Path | str, *, link: bool = True) -> Path:
    """Write images (hard-linked or copied) and labels in this project's layout; returns data.yaml.

    Images without a split go to ``train``. Two images that would land on the same label file (same
    stem in one split) raise ``DatasetError`` rather than overwrite each other.
    """
    out = Path(out).resolve()
    rows: list[dict[str, str]] = []
    splits: set[str] = set()
    written: dict[tuple[str, str], Path] = {}
    for item in images:
        split = item.split or "train"
        splits.add(split)
        earlier = written.setdefault((split, item.stem), item.image)
        if earlier != item.image:
            raise DatasetError(f"{item.image}: same name as {earlier} in split {split!r}; rename one of them")
        image_dir, label_dir = out / "images" / split, out / "labels" / split
        image_dir.mkdir(parents=True, exist_ok=True)
        label_dir.mkdir(parents=True, exist_ok=True)
        target = image_dir / item.image.name
        if target.resolve() != item.image.resolve():
            place_file(item.image, target, link)
        (label_dir / f"{item.stem}.txt").write_text(format_label_lines(item.boxes), encoding="utf-8")
        image, source = f"images/{split}/{item.image.name}", item.source or source_of(item.stem)
        rows.append({**item.meta, "image": image, "source": source, "split": split})
    write_sources_csv(out, rows)
    return write_data_yaml(out, sorted(splits))


def write_sources_csv(root: Path, rows: Iterable[dict[str, str]]) -> Path:
    """``sources.csv``: image (relative path), source, split, then any other columns the images carry."""
    rows = sorted(rows, key=lambda row: row["image"])
    extra = sorted({key for row in rows for key in row} - {"image", "source", "split"})
    path = root / "sources.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, ["image", "source", "split", *extra], restval="")
        writer.writeheader()
        writer.writerows(rows)
    return path


def format_label_lines(boxes: Iterable[Box]) -> str:
    """YOLO label lines; a box with a number that is not finite is refused (``DatasetError``): no label file
    ever holds NaN or infinity."""
    lines = []
    for b in boxes:
        if not all(math.isfinite(value) for value in (b.xc, b.yc, b.w, b.h)):
            raise DatasetError(f"a box of class {b.class_id} has a number that is not finite: {b}")
        lines.append(f"{b.class_id} {b.xc:.6f} {b.yc:.6f} {b.w:.6f} {b.h:.6f}\n")
    return "".join(lines)


def data_yaml(root: Path, splits: Sequence[str], *, flat: bool = False) -> str:
    """The text of ``data.yaml`` naming the splits there are: without a val split it names none (never
    train's images as val, which would validate a model on what it trained on). ``flat``: one split whose
    images lie in ``images/`` itself (saved corrections)."""
    data: dict[str, object] = {"path": str(root)}
    for split in ("train", "val", "test"):
        if split in splits:
            data[split] = "images" if flat else f"images/{split}"
    data["names"] = dict(enumerate(DETECTOR_CLASSES))
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


def write_data_yaml(root: Path, splits: Sequence[str], *, flat: bool = False) -> Path:
    """``data.yaml`` (``data_yaml``) written into ``root``: the one writer of it (imported datasets, splits,
    synthetic scenes)."""
    path = root / "data.yaml"
    path.write_text(data_yaml(root, splits, flat=flat), encoding="utf-8")
    return path


def place_file(src: Path, dst: Path, link: bool = True) -> None:
    """Hard-link ``src`` to ``dst`` (a copy where links are not possible); never moves ``src``."""
    if dst.exists():
        dst.unlink()
    if link:
        try:
            os.link(src, dst)
            return
        except OSError:
            pass
    shutil.copy2(src, dst)
