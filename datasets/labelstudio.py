"""Label Studio tasks: export a dataset (or the detector's guesses) for review, read reviewed tasks back.

A task is ``{"data": {"image": URL, "split": ..., "source": ...}, "predictions"|"annotations": [{"result":
[...]}]}``; each result is a ``rectanglelabels`` region with ``x``, ``y``, ``width``, ``height`` in percent
of the image, ``from_name: "label"`` and ``to_name: "image"``, matching ``label_config()``.

Image URLs are ``PREFIX + path relative to the dataset folder``. The default prefix serves files through
Label Studio's local storage with ``LOCAL_FILES_DOCUMENT_ROOT=/`` (``/data/local-files/?d=<absolute
folder>/``); pass ``image_root`` for any other set-up (another document root, an http server).

Reading accepts Label Studio's JSON export (and JSON-MIN): for each task the latest annotation that was
not cancelled, else the latest prediction. Tasks with neither come back marked
``meta["labelstudio"] == "unlabelled"`` so a caller can leave them out rather than learn them as empty.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, unquote, urlparse
from xml.sax.saxutils import quoteattr

from datasets.labels import Box, DatasetError, LabelledImage, map_class_names, mapped_class_id

if TYPE_CHECKING:
    from datasets.problems import ImportProblems
from datasets.yolo import IMAGE_SUFFIXES, checked_image_size, source_of
from vision.detections import BACK, DETECTOR_CLASSES, HONOUR

LOCAL_FILES = "/data/local-files/?d="
FROM_NAME, TO_NAME = "label", "image"
TASKS_JSON, CONFIG_XML = "tasks.json", "label_config.xml"
_SUIT_COLOURS = {"m": "#d62728", "p": "#1f77b4", "s": "#2ca02c"}
_UPLOAD_PREFIX = re.compile(r"^[0-9a-f]{8}-(?P<name>.+)$")


def label_config() -> str:
    """The labelling interface: one image, a rectangle tool with the 29 detector classes."""
    labels = []
    for class_id, name in enumerate(DETECTOR_CLASSES):
        colour = (
            "#555555" if class_id == BACK else "#9467bd" if class_id == HONOUR else _SUIT_COLOURS[name[0]]
        )
        labels.append(f"    <Label value={quoteattr(name)} background={quoteattr(colour)}/>")
    return (
        "<View>\n"
        f'  <Image name="{TO_NAME}" value="$image" zoom="true" zoomControl="true" rotateControl="false"/>\n'
        f'  <RectangleLabels name="{FROM_NAME}" toName="{TO_NAME}" strokeWidth="2" opacity="0.25">\n'
        + "\n".join(labels)
        + "\n  </RectangleLabels>\n</View>\n"
    )


def image_url(image: Path, root: Path, image_root: str | None = None) -> str:
    """``image_root`` + the image's path relative to ``root`` (see the module docstring for the default)."""
    image, root = image.resolve(), root.resolve()
    relative = (
        image.relative_to(root).as_posix() if image.is_relative_to(root) else image.as_posix().lstrip("/")
    )
    if image_root is None:
        image_root = LOCAL_FILES + quote(root.as_posix().lstrip("/") + "/", safe="/")
        if not image.is_relative_to(root):
            image_root = LOCAL_FILES
    return image_root + quote(relative, safe="/")


def region(box: Box, width: int, height: int, index: int, score: float | None = None) -> dict[str, Any]:
    """One ``rectanglelabels`` result for a box."""
    result: dict[str, Any] = {
        "id": f"b{index}",
        "type": "rectanglelabels",
        "from_name": FROM_NAME,
        "to_name": TO_NAME,
        "original_width": width,
        "original_height": height,
        "image_rotation": 0,
        "value": {
            "x": (box.xc - box.w / 2) * 100,
            "y": (box.yc - box.h / 2) * 100,
            "width": box.w * 100,
            "height": box.h * 100,
            "rotation": 0,
            "rectanglelabels": [box.name],
        },
    }
    if score is not None:
        result["score"] = round(float(score), 4)
    return result


def as_task(
    item: LabelledImage,
    url: str,
    *,
    kind: str = "predictions",
    scores: Sequence[float] | None = None,
    model_version: str = "",
) -> dict[str, Any]:
    """One task with the image's boxes as ``predictions`` (to review) or ``annotations`` (done)."""
    if kind not in ("predictions", "annotations"):
        raise ValueError(f"kind must be 'predictions' or 'annotations', got {kind!r}")
    if scores is not None and len(scores) != len(item.boxes):
        raise ValueError(f"{len(scores)} scores for {len(item.boxes)} boxes")
    results = [
        region(box, item.width, item.height, i, None if scores is None else scores[i])
        for i, box in enumerate(item.boxes)
    ]
    entry: dict[str, Any] = {"result": results}
    if kind == "predictions":
        entry["model_version"] = model_version or "smj"
        if scores is not None:
            entry["score"] = round(sum(scores) / len(scores), 4) if scores else 0.0
    data = {"image": url, "source": item.source or source_of(item.stem)}
    if item.split:
        data["split"] = item.split
    return {"data": data, kind: [entry]}


def write_labelstudio(
    images: Sequence[LabelledImage],
    out: Path | str,
    *,
    root: Path,
    image_root: str | None = None,
    kind: str = "predictions",
    scores: Sequence[Sequence[float]] | None = None,
    model_version: str = "",
) -> tuple[Path, Path]:
    """``OUT/tasks.json`` and ``OUT/label_config.xml``; image URLs are relative to ``root``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = [
        as_task(
            item,
            image_url(item.image, root, image_root),
            kind=kind,
            scores=None if scores is None else scores[i],
            model_version=model_version,
        )
        for i, item in enumerate(images)
    ]
    tasks_path, config_path = out / TASKS_JSON, out / CONFIG_XML
    tasks_path.write_text(json.dumps(tasks, ensure_ascii=False, indent=1), encoding="utf-8")
    config_path.write_text(label_config(), encoding="utf-8")
    return tasks_path, config_path


def read_labelstudio(
    path: Path | str,
    mapping: dict[str, str] | None = None,
    images_dir: Path | str | None = None,
    problems: ImportProblems | None = None,
) -> list[LabelledImage]:
    """The tasks of a Label Studio JSON (or JSON-MIN) export; ``images_dir`` helps find the image files.

    With ``problems`` (an import), polygons become their bounding boxes and turned rectangles the
    upright box around them, and boxes reaching outside the image are clipped, each reported there;
    without it polygons are left out, as before.
    """
    path = Path(path).resolve()
    if path.is_dir():
        path = path / TASKS_JSON
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not a UTF-8 text file") from None
    if isinstance(tasks, dict):
        tasks = [tasks]
    if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        raise DatasetError(f"{path}: not Label Studio tasks: expected a list of task objects")
    first_use: dict[str, str] = {}
    for number, task in enumerate(tasks, 1):
        for label in sorted(_labels_in(task)):
            first_use.setdefault(label, f"task {task.get('id', number)}")
    try:
        map_class_names(sorted(first_use), mapping, first_use)  # every unknown name at once
    except DatasetError as error:
        raise DatasetError(f"{path}: {error}") from None
    finder = _ImageFinder(path.parent, Path(images_dir).resolve() if images_dir else None)
    read = [_read_task(task, number, path, finder, mapping, problems) for number, task in enumerate(tasks, 1)]
    images = [image for image in read if image is not None]  # None: its image does not decode (reported)
    if not images:
        raise DatasetError(f"{path}: no tasks")
    return images


def _labels_in(value: Any) -> set[str]:
    """Every label a ``rectanglelabels`` or ``polygonlabels`` list names anywhere in the tasks."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key in ("rectanglelabels", "polygonlabels"):
            labels = value.get(key)
            if isinstance(labels, list):
                found.update(str(label) for label in labels)
        for item in value.values():
            found |= _labels_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _labels_in(item)
    return found


def _read_task(
    task: dict[str, Any],
    number: int,
    path: Path,
    finder: _ImageFinder,
    mapping: dict[str, str] | None,
    problems: ImportProblems | None = None,
) -> LabelledImage | None:
    where = f"{path}: task {task.get('id', number)}"
    data: dict[str, Any] = task["data"] if isinstance(task.get("data"), dict) else task  # JSON-MIN: no "data"
    reference = data.get("image") or next(
        (v for v in data.values() if isinstance(v, str) and _looks_like_image(v)), None
    )
    if not isinstance(reference, str) or not reference:
        raise DatasetError(f"{where}: no image in its data")
    image = finder.find(reference, where)
    results, origin = _chosen_results(task, where)
    size = checked_image_size(image, problems)
    if size is None:
        return None
    width, height = size
    boxes: list[Box] = []
    task_name = where.removeprefix(f"{path}: ")
    for result in results:
        kind = result.get("type", "rectanglelabels") if isinstance(result, dict) else None
        if problems is not None and kind == "polygonlabels":
            polygon = _polygon_box(result, where, mapping)
            if polygon is not None:
                problems.add(
                    path, 0, "polygon", f"{task_name}: a polygon, imported as its bounding box", "convert"
                )
                boxes.append(polygon)
            continue
        if not isinstance(result, dict) or kind != "rectanglelabels":
            continue
        value = result.get("value", result)  # JSON-MIN puts the value's keys on the region itself
        labels = value.get("rectanglelabels") if isinstance(value, dict) else None
        if not labels:
            continue
        if problems is not None and _number(value, "rotation", where) % 360:
            angle = f"{_number(value, 'rotation', where):g}"
            message = (
                f"{task_name}: a rectangle turned {angle} degrees, imported as the upright box around it"
            )
            problems.add(path, 0, "rotated", message, "convert")
        if len(labels) != 1:
            raise DatasetError(f"{where}: a region has {len(labels)} labels {labels}; give each box one")
        try:
            class_id = mapped_class_id(str(labels[0]), mapping)
        except DatasetError as error:
            raise DatasetError(f"{where}: {error}") from None
        if class_id is not None:
            original = (result.get("original_width", width), result.get("original_height", height))
            box: Box | None = _box(class_id, value, original, where)
            if problems is not None and box is not None:
                box = problems.clipped(box, path, 0, f"{task_name}: ")
            if box is not None:
                boxes.append(box)
    return LabelledImage(
        image=image,
        boxes=tuple(boxes),
        width=width,
        height=height,
        source=str(data.get("source") or source_of(image.stem)),
        split=str(data.get("split") or ""),
        meta={"labelstudio": origin},
    )


def _looks_like_image(text: str) -> bool:
    return Path(urlparse(text).path or text).suffix.lower() in IMAGE_SUFFIXES or "?d=" in text


def _chosen_results(task: dict[str, Any], where: str) -> tuple[list[Any], str]:
    """The regions of the latest live annotation, else of the latest prediction."""
    for key in ("annotations", "completions", "predictions"):
        entries = task.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise DatasetError(f"{where}: '{key}' must be a list")
        live = [e for e in entries if isinstance(e, dict) and not e.get("was_cancelled")]
        if live:
            result = live[-1].get("result", [])
            if not isinstance(result, list):
                raise DatasetError(f"{where}: the 'result' of its {key} must be a list")
            return result, "predictions" if key == "predictions" else "annotations"
    # JSON-MIN: the regions sit under the control's name, e.g. "label": [...]
    for value in task.values():
        if (
            isinstance(value, list)
            and value
            and all(isinstance(r, dict) and "rectanglelabels" in r for r in value)
        ):
            return value, "annotations"
    return [], "unlabelled"


def _number(value: dict[str, Any], key: str, where: str) -> float:
    number = value.get(key, 0.0 if key == "rotation" else None)
    if not isinstance(number, int | float) or isinstance(number, bool) or not math.isfinite(number):
        raise DatasetError(f"{where}: a region's {key!r} must be a number, got {number!r}")
    return float(number)


def _polygon_box(result: dict[str, Any], where: str, mapping: dict[str, str] | None) -> Box | None:
    """A ``polygonlabels`` region's bounding box (points in percent of the image), or ``None`` when
    its class is dropped."""
    value = result.get("value", result)
    labels = value.get("polygonlabels") if isinstance(value, dict) else None
    points = value.get("points") if isinstance(value, dict) else None
    if not labels or len(labels) != 1:
        raise DatasetError(f"{where}: a polygon needs exactly one label, got {labels!r}")
    try:
        xs, ys = zip(*((float(x) / 100, float(y) / 100) for x, y in points or ()), strict=True)
    except (TypeError, ValueError):
        raise DatasetError(f"{where}: a polygon's points must be [x, y] pairs of numbers") from None
    if len(xs) < 3:
        raise DatasetError(f"{where}: a polygon needs at least 3 points, got {len(xs)}")
    try:
        class_id = mapped_class_id(str(labels[0]), mapping)
    except DatasetError as error:
        raise DatasetError(f"{where}: {error}") from None
    if class_id is None:
        return None
    x1, y1, x2, y2 = min(xs), min(ys), max(xs), max(ys)
    return Box(class_id, (x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1)


def _box(class_id: int, value: dict[str, Any], original: tuple[Any, Any], where: str) -> Box:
    x, y, w, h = (_number(value, key, where) / 100 for key in ("x", "y", "width", "height"))
    rotation = _number(value, "rotation", where)
    if rotation % 360 == 0:
        return Box(class_id, x + w / 2, y + h / 2, w, h)
    # Label Studio turns a region about its top-left corner, in pixels: keep the upright box around it.
    try:
        width, height = (float(v) for v in original)
    except (TypeError, ValueError):
        raise DatasetError(f"{where}: a turned region needs numeric original_width/height") from None
    angle = math.radians(rotation)
    cos, sin = math.cos(angle), math.sin(angle)
    corners = [(dx * w * width, dy * h * height) for dx, dy in ((0, 0), (1, 0), (0, 1), (1, 1))]
    xs = [x * width + cx * cos - cy * sin for cx, cy in corners]
    ys = [y * height + cx * sin + cy * cos for cx, cy in corners]
    return Box.from_xyxy(class_id, (min(xs), min(ys), max(xs), max(ys)), int(width), int(height))


class _ImageFinder:
    """Finds the file behind a task's image URL: local-files paths, plain paths, or by file name."""

    def __init__(self, json_dir: Path, images_dir: Path | None) -> None:
        self.bases = [d for d in (images_dir, json_dir) if d is not None]
        self._by_name: dict[str, Path] | None = None

    def find(self, reference: str, where: str) -> Path:
        parsed = urlparse(reference)
        query = parse_qs(parsed.query)
        if "d" in query:
            text = query["d"][0]
        elif parsed.scheme in ("http", "https", "file", "s3", "gs"):
            text = unquote(parsed.path)
        else:
            text = reference
        candidates = [Path(text), Path(unquote(text))]
        for relative in list(candidates):
            if not relative.is_absolute():
                candidates.append(Path("/") / relative)
            candidates += [base / str(relative).lstrip("/") for base in self.bases]
        for candidate in candidates:
            if candidate.is_file():
                return candidate.resolve()
        name = Path(unquote(text)).name
        match = _UPLOAD_PREFIX.match(name)
        for key in (name, match.group("name") if match else None):
            if key and key in self.by_name:
                return self.by_name[key]
        hint = "" if len(self.bases) > 1 else " (give the folder of the images with --images)"
        raise DatasetError(f"{where}: image {reference!r} not found{hint}")

    @property
    def by_name(self) -> dict[str, Path]:
        if self._by_name is None:
            self._by_name = {}
            for base in self.bases:
                for file in sorted(base.rglob("*")):
                    if file.suffix.lower() in IMAGE_SUFFIXES:
                        self._by_name.setdefault(file.name, file.resolve())
        return self._by_name
