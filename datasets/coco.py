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
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from datasets.labels import Box, DatasetError, LabelledImage, map_class_names, mapped_class_id
from datasets.yolo import SPLIT_ALIASES, image_size, place_file, source_of
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
    data = _load_json(path)
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: not a COCO file: expected an object with 'images' and 'annotations'")
    entries = _list_of_dicts(data, "images", path)
    annotations = _list_of_dicts(data, "annotations", path)
    categories = {c.get("id"): str(c.get("name", "")) for c in _list_of_dicts(data, "categories", path)}

    class_of: dict[Any, int | None] = {}  # category id -> class id (None: dropped), for used ones only
    boxes: dict[Any, list[Box]] = defaultdict(list)
    files: dict[Any, Path] = {}
    sizes: dict[Any, tuple[int, int]] = {}
    for entry in entries:
        image_id = entry.get("id")
        if "file_name" not in entry or image_id is None:
            raise DatasetError(f"{path}: image entry {json.dumps(entry)[:80]} has no 'id' or 'file_name'")
        if image_id in files:
            raise DatasetError(f"{path}: image id {image_id!r} appears twice in 'images'")
        files[image_id] = _find_image(path, str(entry["file_name"]), split)
        sizes[image_id] = _entry_size(entry) or image_size(files[image_id])
    used = {categories[a.get("category_id")] for a in annotations if a.get("category_id") in categories}
    try:
        map_class_names(sorted(used), mapping)  # every unknown name at once, before the first box
    except DatasetError as error:
        raise DatasetError(f"{path}: {error}") from None
    for number, ann in enumerate(annotations):
        where = f"{path}: annotation {ann.get('id', number)}"
        image_id, category_id = ann.get("image_id"), ann.get("category_id")
        if image_id not in sizes:
            raise DatasetError(f"{where}: image_id {image_id!r} is not in 'images'")
        if category_id not in categories:
            raise DatasetError(f"{where}: category_id {category_id!r} is not in 'categories'")
        name = categories[category_id]
        if ann.get("iscrowd") and not (mapping and name.strip() in mapping):
            raise DatasetError(
                f"{where}: iscrowd box of category {name!r} (a box round many objects, not one tile); "
                f"map it with --map {name}=drop (or =CLASS to keep it as one box)"
            )
        if category_id not in class_of:
            try:
                class_of[category_id] = mapped_class_id(name, mapping)
            except DatasetError as error:
                raise DatasetError(f"{path}: category {category_id} {name!r}: {error}") from None
        class_id = class_of[category_id]
        if class_id is None:
            continue
        x, y, w, h = _bbox(ann.get("bbox"), where)
        if problems is None and not all(math.isfinite(value) for value in (x, y, w, h)):
            raise DatasetError(f"{where}: 'bbox' holds a number that is not finite: {ann.get('bbox')!r}")
        width, height = sizes[image_id]
        box: Box | None = Box.from_xyxy(class_id, (x, y, x + w, y + h), width, height)
        if problems is not None and box is not None:
            box = problems.clipped(box, path, 0, f"annotation {ann.get('id', number)}: ")
        if box is not None:
            boxes[image_id].append(box)

    images: list[LabelledImage] = []
    for entry in entries:
        image_id = entry["id"]
        image, (width, height) = files[image_id], sizes[image_id]
        source = entry.get("source")
        images.append(
            LabelledImage(
                image=image,
                boxes=tuple(boxes.get(image_id, ())),
                width=width,
                height=height,
                source=source if isinstance(source, str) and source else source_of(image.stem),
                split=split,
            )
        )
    return images


def _entry_size(entry: dict[str, Any]) -> tuple[int, int] | None:
    width, height = entry.get("width"), entry.get("height")
    if isinstance(width, int | float) and isinstance(height, int | float) and width > 0 and height > 0:
        return int(width), int(height)
    return None


def _bbox(value: Any, where: str) -> tuple[float, float, float, float]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 4
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        raise DatasetError(f"{where}: 'bbox' must be [x, y, width, height] in pixels, got {value!r}")
    x, y, w, h = (float(v) for v in value)
    return x, y, w, h


def _find_image(json_path: Path, file_name: str, split: str) -> Path:
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
    raise DatasetError(f"{json_path}: image {file_name!r} not found next to it, in images/ or in {token}/")


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
