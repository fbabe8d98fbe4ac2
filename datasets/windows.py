"""Windows: train the localiser at the tiles' real scale on crops rather than on shrunk photos.

ultralytics resizes every training image so its long side is the input size, so a 12 MP photo's
tiles would shrink to a few pixels. ``write_windows`` rescales each image by a factor drawn from a
range (the scale the detector will look at it with) and cuts input-sized windows around its tiles;
boxes are clipped to the window, and a tile mostly outside it is left out (an ``honour`` box, a
don't-care region, is kept whenever any of it shows so it never becomes background). A synthetic dataset's
other don't-care regions (``scenes.jsonl``'s ``ignored`` outlines: tiles on their long edge, slivers of tiles
under others) can be greyed out of the windows (``dont_care``), so they are neither tile nor background.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from datasets.labels import Box, DatasetError, LabelledImage
from datasets.scenes import scene_rows
from datasets.yolo import write_yolo
from vision.detect.looks import PAD_GREY
from vision.detections import HONOUR

MIN_INSIDE = 0.5  # a tile less than half inside a window is not labelled in it

Region = tuple[float, float, float, float]  # x1, y1, x2, y2 in the image's pixels


def dont_care_regions(folder: Path | str) -> dict[str, list[Region]]:
    """The don't-care outlines of a synthetic dataset's scenes (``scenes.jsonl``'s ``ignored``), by image file
    name; empty for a dataset without them (real photos, older scenes)."""
    regions: dict[str, list[Region]] = {}
    for path, number, row in scene_rows(folder):
        try:
            ignored = [
                (float(x1), float(y1), float(x2), float(y2)) for x1, y1, x2, y2 in row.get("ignored") or ()
            ]
            if ignored:
                regions[Path(row["image"]).name] = ignored
        except (ValueError, TypeError, KeyError) as error:
            raise DatasetError(
                f"{path}:{number}: not a scene with its don't-care outlines ({error})"
            ) from None
    return regions


def _greyed(pixels: np.ndarray, item: LabelledImage, regions: Sequence[Region]) -> np.ndarray:
    """``pixels`` with ``regions`` grey, but where a labelled tile lies (a tile partly under one stays)."""
    height, width = pixels.shape[:2]

    def cells(x1: float, y1: float, x2: float, y2: float) -> tuple[slice, slice]:
        return slice(max(0, int(y1)), max(0, int(np.ceil(y2)))), slice(
            max(0, int(x1)), max(0, int(np.ceil(x2)))
        )

    mask = np.zeros((height, width), bool)
    for region in regions:
        mask[cells(*region)] = True
    for box in item.boxes:
        mask[cells(*box.xyxy(width, height))] = False
    greyed = pixels.copy()
    greyed[mask] = PAD_GREY  # as the localiser sees where there is no photo
    return greyed


def _window_boxes(
    item: LabelledImage, scale: float, window: tuple[int, int, int, int]
) -> list[tuple[int, tuple[float, float, float, float]]]:
    x0, y0, x1, y1 = window
    kept = []
    for box in item.boxes:
        bx1, by1, bx2, by2 = (v * scale for v in box.xyxy(item.width, item.height))
        cx1, cy1, cx2, cy2 = max(bx1, x0), max(by1, y0), min(bx2, x1), min(by2, y1)
        if cx2 <= cx1 or cy2 <= cy1:
            continue
        inside = (cx2 - cx1) * (cy2 - cy1) / max((bx2 - bx1) * (by2 - by1), 1e-6)
        if inside >= MIN_INSIDE or box.class_id == HONOUR:
            kept.append((box.class_id, (cx1 - x0, cy1 - y0, cx2 - x0, cy2 - y0)))
    return kept


def _window_around(
    rng: random.Random, centre: tuple[float, float], size: int, width: int, height: int
) -> tuple[int, int, int, int]:
    """A ``size`` square holding ``centre`` somewhere inside, within the (scaled) image when it fits."""
    cx, cy = centre
    left = cx - rng.uniform(0.15, 0.85) * size
    top = cy - rng.uniform(0.15, 0.85) * size
    left = min(max(left, 0), max(width - size, 0))
    top = min(max(top, 0), max(height - size, 0))
    return int(left), int(top), int(left) + size, int(top) + size


def write_windows(
    images: Iterable[LabelledImage],
    out: Path | str,
    *,
    size: int,
    scale: tuple[float, float],
    per_image: int = 1,
    limit: int | None = None,
    seed: int = 0,
    dont_care: Mapping[str, Sequence[Region]] | None = None,
) -> list[LabelledImage]:
    """Cut ``per_image`` windows of ``size`` pixels from every image rescaled by a factor in ``scale``.

    ``limit``: only that many images, drawn at random. An image with no tile (a negative: keyboards, dice,
    an empty table) gives windows anywhere in it. ``dont_care``: regions to grey out of each image, by its
    file name (``dont_care_regions``). Writes the JPEGs and a dataset of this project's layout (the source's
    split kept) in ``out``.
    """
    rng = random.Random(seed)
    images = list(images)
    if limit is not None and limit < len(images):
        images = rng.sample(images, limit)
    out = Path(out)
    pictures = out / "windows"
    pictures.mkdir(parents=True, exist_ok=True)
    written: list[LabelledImage] = []
    for index, item in enumerate(images):
        with Image.open(item.image) as image:
            pixels = np.asarray(image.convert("RGB"))
        regions = (dont_care or {}).get(Path(item.image).name)
        if regions:
            pixels = _greyed(pixels, item, regions)
        height, width = pixels.shape[:2]
        for number in range(per_image):
            factor = rng.uniform(*scale)
            scaled_w, scaled_h = max(1, round(width * factor)), max(1, round(height * factor))
            scaled = cv2.resize(
                pixels, (scaled_w, scaled_h), interpolation=cv2.INTER_AREA if factor < 1 else cv2.INTER_LINEAR
            )
            if item.boxes:
                box = rng.choice(item.boxes).xyxy(scaled_w, scaled_h)
                centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            else:
                centre = (rng.uniform(0, scaled_w), rng.uniform(0, scaled_h))
            window = _window_around(rng, centre, size, scaled_w, scaled_h)
            x0, y0, x1, y1 = window
            canvas = np.full((size, size, 3), PAD_GREY, np.uint8)
            part = scaled[y0:y1, x0:x1]
            canvas[: part.shape[0], : part.shape[1]] = part
            kept = _window_boxes(item, scaled_w / width, window)
            path = pictures / f"{item.stem}_{index:05d}_w{number}.jpg"
            Image.fromarray(canvas).save(path, quality=92)
            boxes = tuple(Box.from_xyxy(class_id, xyxy, size, size) for class_id, xyxy in kept)
            written.append(
                LabelledImage(
                    path.resolve(), boxes, size, size, source=item.source or item.stem, split=item.split
                )
            )
    write_yolo(written, out)
    return written
