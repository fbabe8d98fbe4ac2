"""Label new photos with the detector, for a person to correct in Label Studio.

``autolabel(photos, out, detector)`` writes ``OUT`` in this project's layout (every photo in the ``train``
split: divide it with ``smj dataset split`` once reviewed), plus ``OUT/tasks.json`` (the detections as
Label Studio ``predictions``, with their confidences) and ``OUT/label_config.xml``. Import both into Label
Studio, correct the boxes, export the tasks as JSON and read them back with
``smj dataset import --format labelstudio``. ``OUT/previews/`` holds each photo with its boxes drawn and
named (``vision.annotate``), to see at a glance which photos need the most correcting.

The detector is a reader of photos (``vision.reading.Reader``: ``vision.detect.detector.Detector``, or a
stand-in in tests), read in the view a reading first takes (``vision.reading.first_detections``). Photos
are read upright (EXIF applied); one that is stored turned is written upright so its labels and its pixels
agree for every reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from datasets.labels import Box, DatasetError, LabelledImage
from datasets.labelstudio import write_labelstudio
from datasets.yolo import IMAGE_SUFFIXES, source_of, write_yolo
from vision.detections import Detections
from vision.images import ImageError, Photo, load_photo
from vision.progress import progress
from vision.reading import Reader, first_detections

DEFAULT_CONF = 0.4  # below the detector's 0.55: for review, a box to delete costs less than one to draw
SPLIT = "train"
PREVIEWS = "previews"  # OUT/previews/<photo>.jpg: the boxes drawn, for review
PREVIEW_SIDE = 1600


@dataclass(frozen=True)
class AutolabelResult:
    out: Path
    data_yaml: Path
    tasks: Path
    config: Path
    images: int
    boxes: int
    previews: Path


def find_photos(paths: Iterable[Path | str]) -> list[Path]:
    """The photos named, folders expanded to the images directly inside them; raises on a missing path."""
    photos: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
            if not found:
                raise DatasetError(f"{path}: no images in this folder")
            photos += found
        elif path.is_file():
            photos.append(path)
        else:
            raise DatasetError(f"{path}: no such file or folder")
    if not photos:
        raise DatasetError("no photos given")
    return [p.resolve() for p in photos]


def autolabel(
    photos: Sequence[Path | str],
    out: Path | str,
    detector: Reader,
    *,
    conf: float = DEFAULT_CONF,
    image_root: str | None = None,
    model_version: str = "",
    quiet: bool = False,
) -> AutolabelResult:
    out = Path(out).resolve()
    paths = find_photos(photos)
    images: list[LabelledImage] = []
    scores: list[list[float]] = []
    for path in progress(paths, unit="photo", desc="autolabel", enabled=not quiet):
        try:
            photo = load_photo(path)
        except ImageError as error:
            raise DatasetError(error.message) from None
        width, height = photo.size
        detections = first_detections(photo, detector, conf=conf)  # as a reading first sees the photo
        _preview(photo, detections, out / PREVIEWS / f"{path.stem}.jpg")
        found = [d for d in detections if d.box[2] > d.box[0] and d.box[3] > d.box[1]]
        boxes = tuple(Box.from_xyxy(d.class_id, d.box, width, height) for d in found)
        scores.append([d.confidence for d in found])
        image = _upright_file(path, photo, out / "images" / SPLIT)
        images.append(LabelledImage(image, boxes, width, height, source=source_of(path.stem), split=SPLIT))
    data_yaml = write_yolo(images, out)
    placed = [
        LabelledImage(out / "images" / SPLIT / i.image.name, i.boxes, i.width, i.height, i.source, i.split)
        for i in images
    ]
    weights = getattr(detector, "weights", None)
    version = model_version or (Path(weights).name if weights else "smj")
    tasks, config = write_labelstudio(
        placed, out, root=out, image_root=image_root, scores=scores, model_version=version
    )
    box_count = sum(len(i.boxes) for i in images)
    return AutolabelResult(out, data_yaml, tasks, config, len(images), box_count, out / PREVIEWS)


def _preview(photo: Photo, detections: Detections, path: Path) -> None:
    """The photo with its detections drawn and named, its long side at most ``PREVIEW_SIDE``, as a JPEG."""
    from vision.annotate import draw_detections

    drawn = Image.fromarray(draw_detections(photo.pixels, detections))
    drawn.thumbnail((PREVIEW_SIDE, PREVIEW_SIDE))
    path.parent.mkdir(parents=True, exist_ok=True)
    drawn.save(path, quality=85)


def _upright_file(path: Path, photo: Photo, folder: Path) -> Path:
    """``path`` itself when its pixels are stored upright in a format YOLO reads, else an upright copy."""
    with Image.open(path) as image:
        turned = image.getexif().get(0x0112, 1) not in (1, None)
        stored_size = image.size
    if not turned and path.suffix.lower() in IMAGE_SUFFIXES and stored_size == photo.size:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (path.stem + (".png" if path.suffix.lower() == ".png" else ".jpg"))
    Image.fromarray(photo.pixels).save(target, quality=95)
    return target
