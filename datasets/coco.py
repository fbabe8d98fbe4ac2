"""Read and write COCO detection datasets (``bbox`` = ``[x, y, width, height]`` in pixels).

Reads a single COCO JSON file, or a folder as exported by Roboflow (``SRC/<split>/_annotations.coco.json``
with the images next to it) or by the COCO tools (``SRC/annotations/instances_<split>*.json`` with the
images in ``SRC/<split>*/`` or ``SRC/images/<split>/``). Categories are mapped through
``class_id_for_name`` (honours become ``honour``) and only the categories that annotations use have to
be known, so Roboflow's unused super-category does no harm. A crowd annotation (``iscrowd: 1``, a box
round many objects) is refused unless its category is named in ``--map``.

Writes Roboflow's layout, which most tools import: ``OUT/<split>/_annotations.coco.json`` with the
images hard-linked (or copied) beside it; category ids are class id + 1 (COCO keeps 0 for nothing).
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from datasets.labels import Box, DatasetError, LabelledImage, map_class_names
from datasets.yolo import SPLIT_ALIASES, checked_image_size, place_file, source_of
from vision.detections import DETECTOR_CLASSES

if TYPE_CHECKING:
    from datasets.problems import ImportProblems

ROBOFLOW_JSON = "_annotations.coco.json"
_SPLIT_WORD = re.compile(r"(train|validation|valid|val|test)", re.IGNORECASE)


def coco_files(src: Path) -> list[tuple[str, Path]]:
    """(split, JSON path) of every COCO annotation file of a dataset file or folder."""
    if src.is_file():
        return [(_split_of(src), src)]
    if not src.is_dir():
        raise DatasetError(f"{src}: no such file or folder")
    found = [src / ROBOFLOW_JSON] if (src / ROBOFLOW_JSON).is_file() else []
    found += sorted(src.glob(f"*/{ROBOFLOW_JSON}"))
    annotations = src / "annotations"
    if annotations.is_dir():
        found += sorted(annotations.glob("instances*.json")) or sorted(annotations.glob("*.json"))
    if not found:
        found = sorted(src.glob("*.json"))
    if not found:
        raise DatasetError(
            f"{src}: no COCO annotations ({ROBOFLOW_JSON} per split, annotations/instances_*.json or a .json)"
        )
    return [(_split_of(path), path) for path in found]


def _split_of(path: Path) -> str:
    if path.parent.name.lower() in SPLIT_ALIASES:
        return SPLIT_ALIASES[path.parent.name.lower()]
    match = _SPLIT_WORD.search(path.stem)
    return SPLIT_ALIASES[match.group(1).lower()] if match else ""


def read_coco(
    src: Path | str, mapping: dict[str, str] | None = None, problems: ImportProblems | None = None
) -> list[LabelledImage]:
    """Every image of a COCO dataset (file or folder) with its boxes in this project's classes; with
    ``problems`` (an import), a box reaching outside its image is reported there and clipped."""
    src = Path(src).resolve()
    images: list[LabelledImage] = []
    for split, path in coco_files(src):
        images += read_coco_file(path, split, mapping, problems)
    if not images:
        raise DatasetError(f"{src}: no images in the COCO annotations")
    return images


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not a UTF-8 text file") from None


def _list_of_dicts(data: dict[str, Any], key: str, path: Path) -> list[dict[str, Any]]:
    value = data.get(key, [] if key == "annotations" else None)
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DatasetError(f"{path}: not a COCO file: '{key}' must be a list of objects")
    return value


def read_coco_file(
    path: Path, split: str = "", mapping: dict[str, str] | None = None, problems: ImportProblems | None = None
) -> list[LabelledImage]:
    """The images of one COCO file with their boxes in this project's classes.

    With ``problems`` (an import) every defect is reported there in one pass, each with the file and the
    image or annotation id, and fixed as ``--lenient`` would: an image entry without id or file, a second
    entry of an id, a missing or undecodable image, an annotation of no known image or category or a second
    one of an id, a crowd or RLE region, a malformed box are skipped; a polygon without a box becomes the
    box around it; an image whose real size differs from the size declared has its boxes rescaled from
    the declared size to the real one. Without ``problems`` the first defect raises ``DatasetError``.
    """
    data = _load_json(path)
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: not a COCO file: expected an object with 'images' and 'annotations'")
    entries = _list_of_dicts(data, "images", path)
    annotations = _list_of_dicts(data, "annotations", path)
    categories = {c.get("id"): str(c.get("name", "")) for c in _list_of_dicts(data, "categories", path)}

    def report(what: str, kind: str, message: str, fix: str) -> None:
        if problems is None:
            raise DatasetError(f"{path}: {what}: {message}")
        problems.add(path, 0, kind, f"{what}: {message}", fix)

    files: dict[Any, Path] = {}
    sizes: dict[Any, tuple[int, int]] = {}  # the size the boxes are given in (declared, else real)
    real: dict[Any, tuple[int, int]] = {}
    for number, entry in enumerate(entries):
        image_id = entry.get("id")
        what = f"image {image_id!r}" if image_id is not None else f"image entry {number}"
        if "file_name" not in entry or image_id is None:
            report(what, "malformed", f"{json.dumps(entry)[:80]} has no 'id' or 'file_name'", "skip")
            continue
        if image_id in files:
            report(what, "duplicate_id", f"the id appears twice in 'images' ({entry['file_name']!r})", "skip")
            continue
        found = _find_image(path, str(entry["file_name"]), split)
        if found is None:
            report(
                what,
                "missing_image",
                f"{entry['file_name']!r} not found next to the file or in images/",
                "skip",
            )
            continue
        actual = checked_image_size(found, problems)
        if actual is None:
            continue
        declared = _entry_size(entry)
        if declared is not None and declared != actual:
            report(
                what,
                "size_mismatch",
                f"declared {declared[0]}x{declared[1]}, the file {entry['file_name']!r} is "
                f"{actual[0]}x{actual[1]}",
                "rescale",
            )
        files[image_id], sizes[image_id], real[image_id] = found, declared or actual, actual
    used = {categories[a.get("category_id")] for a in annotations if a.get("category_id") in categories}
    try:
        class_of = map_class_names(sorted(used), mapping)  # every unknown name at once, before the first box
    except DatasetError as error:
        raise DatasetError(f"{path}: {error}") from None
    boxes: dict[Any, list[tuple[Box, int, str]]] = defaultdict(list)
    seen: set[Any] = set()
    for number, ann in enumerate(annotations):
        annotation_id = ann.get("id", number)
        what = f"annotation {annotation_id}"
        box = _annotation_box(ann, what, categories, class_of, mapping, sizes, report)
        if box is None:
            continue
        if annotation_id in seen:
            report(what, "duplicate_id", "the id appears twice in 'annotations' (a box doubled)", "skip")
            continue
        seen.add(annotation_id)
        image_id = ann.get("image_id")
        clipped: Box | None = box
        if problems is not None:
            clipped = problems.clipped(box, path, 0, f"{what}: ")
        if clipped is not None:
            boxes[image_id].append((clipped, 0, f"{what}: "))

    images: list[LabelledImage] = []
    for entry in entries:
        image_id = entry.get("id")
        if image_id not in files or entry.get("file_name") is None:
            continue
        width, height = real[image_id]
        image = files[image_id]
        kept = boxes.get(image_id, [])
        unique = problems.without_repeats(kept, path) if problems is not None else [box for box, _, _ in kept]
        source = entry.get("source")
        images.append(
            LabelledImage(
                image=image,
                boxes=tuple(unique),
                width=width,
                height=height,
                source=source if isinstance(source, str) and source else source_of(image.stem),
                split=split,
            )
        )
        del files[image_id]  # a second entry of the id was reported and skipped
    return images


def _annotation_box(
    ann: dict[str, Any],
    what: str,
    categories: dict[Any, str],
    class_of: dict[str, int | None],
    mapping: dict[str, str] | None,
    sizes: dict[Any, tuple[int, int]],
    report: Callable[[str, str, str, str], None],
) -> Box | None:
    """One annotation's box, normalised by the size its image declares; None when it is left out (dropped
    by the class map, or reported)."""
    image_id, category_id = ann.get("image_id"), ann.get("category_id")
    if image_id not in sizes:
        report(what, "orphan_annotation", f"image_id {image_id!r} is not an image of the file", "skip")
        return None
    if category_id not in categories:
        report(what, "unknown_category", f"category_id {category_id!r} is not in 'categories'", "skip")
        return None
    name = categories[category_id]
    segmentation = ann.get("segmentation")
    if (ann.get("iscrowd") or isinstance(segmentation, dict)) and not (mapping and name.strip() in mapping):
        report(
            what,
            "crowd",
            f"a crowd or RLE region of category {name!r} (round many objects, not one tile); "
            f"map it with --map {name}=drop (or =CLASS to keep it as one box)",
            "skip",
        )
        return None
    class_id = class_of[name]
    if class_id is None:
        return None
    width, height = sizes[image_id]
    if ann.get("bbox") in (None, []) and isinstance(segmentation, list) and segmentation:
        xyxy = _polygon_extent(segmentation)
        if xyxy is None:
            report(
                what, "malformed", f"'segmentation' is not a list of polygons: {segmentation!r:.80}", "skip"
            )
            return None
        report(what, "polygon", "a polygon without a box, imported as its bounding box", "convert")
        return Box.from_xyxy(class_id, xyxy, width, height)
    try:
        x, y, w, h = _bbox(ann.get("bbox"))
    except ValueError as error:
        report(what, "malformed", str(error), "skip")
        return None
    if not all(math.isfinite(value) for value in (x, y, w, h)):
        report(what, "malformed", f"box with a number that is not finite: {ann.get('bbox')!r}", "skip")
        return None
    return Box.from_xyxy(class_id, (x, y, x + w, y + h), width, height)


def _polygon_extent(segmentation: list[Any]) -> tuple[float, float, float, float] | None:
    """The box around COCO polygons ``[[x1, y1, x2, y2, ...], ...]``; None when they are not that."""
    points = [
        v
        for polygon in segmentation
        if isinstance(polygon, list)
        for v in polygon
        if isinstance(v, int | float)
    ]
    if len(points) < 6 or len(points) % 2 or not all(math.isfinite(v) for v in points):
        return None
    xs, ys = points[0::2], points[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def _entry_size(entry: dict[str, Any]) -> tuple[int, int] | None:
    width, height = entry.get("width"), entry.get("height")
    if isinstance(width, int | float) and isinstance(height, int | float) and width > 0 and height > 0:
        return int(width), int(height)
    return None


def _bbox(value: Any) -> tuple[float, float, float, float]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 4
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        raise ValueError(f"'bbox' must be [x, y, width, height] in pixels, got {value!r}")
    x, y, w, h = (float(v) for v in value)
    return x, y, w, h


def _find_image(json_path: Path, file_name: str, split: str) -> Path | None:
    """The image a ``file_name`` names, looked for where COCO exports put images; a name that leaves the
    dataset (an absolute path, ``..``, a link pointing out of it) is refused: an import never takes in a
    file from elsewhere on the machine."""
    relative = Path(file_name)
    here, up = json_path.parent, json_path.parent.parent
    dataset = up.resolve()
    if relative.is_absolute() or ".." in relative.parts:
        raise DatasetError(f"{json_path}: image {file_name!r} is outside the dataset (a path of its own)")
    token = json_path.stem.removeprefix("instances_")
    folders = [here, here / "images", up / token, up / "images" / token, up / "images", up]
    if split:
        folders += [up / split, up / "images" / split]
        folders += [up / name for name, alias in SPLIT_ALIASES.items() if alias == split]
    for folder in folders:
        if (folder / relative).is_file():
            found = (folder / relative).resolve()
            if not found.is_relative_to(dataset):
                raise DatasetError(f"{json_path}: image {file_name!r} links to a file outside the dataset")
            return found
    return None


def as_coco(images: Sequence[LabelledImage]) -> dict[str, Any]:
    """One COCO document for ``images`` (file names are the bare image names)."""
    entries: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for image_id, item in enumerate(images, 1):
        entries.append(
            {
                "id": image_id,
                "file_name": item.image.name,
                "width": item.width,
                "height": item.height,
                "source": item.source or source_of(item.stem),
            }
        )
        for box in item.boxes:
            x1, y1, x2, y2 = box.xyxy(item.width, item.height)
            w, h = x2 - x1, y2 - y1
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": image_id,
                    "category_id": box.class_id + 1,
                    "bbox": [round(x1, 4), round(y1, 4), round(w, 4), round(h, 4)],
                    "area": round(w * h, 4),
                    "iscrowd": 0,
                    "segmentation": [],
                }
            )
    return {
        "info": {"description": "Sichuan mahjong tiles (smj dataset export)"},
        "licenses": [],
        "categories": [
            {"id": i + 1, "name": name, "supercategory": "tile"} for i, name in enumerate(DETECTOR_CLASSES)
        ],
        "images": entries,
        "annotations": annotations,
    }


def write_coco(images: Iterable[LabelledImage], out: Path | str, *, link: bool = True) -> list[Path]:
    """Roboflow's layout: ``OUT/<split>/_annotations.coco.json`` and the images; returns the JSON paths."""
    out = Path(out).resolve()
    by_split: dict[str, list[LabelledImage]] = defaultdict(list)
    for item in images:
        by_split[item.split or "train"].append(item)
    written: list[Path] = []
    for split, items in sorted(by_split.items()):
        folder = out / split
        folder.mkdir(parents=True, exist_ok=True)
        names: dict[str, Path] = {}
        for item in items:
            earlier = names.setdefault(item.image.name, item.image)
            if earlier != item.image:
                raise DatasetError(
                    f"{item.image}: same name as {earlier} in split {split!r}; rename one of them"
                )
            if (folder / item.image.name).resolve() != item.image.resolve():
                place_file(item.image, folder / item.image.name, link)
        path = folder / ROBOFLOW_JSON
        path.write_text(json.dumps(as_coco(items), ensure_ascii=False, indent=1), encoding="utf-8")
        written.append(path)
    return written
