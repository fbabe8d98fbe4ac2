"""Does the detector box every tile in the photo, and nothing else? On synthetic scenes of each kind.

    python benchmarks/bench_every_tile.py DIR [DIR ...] [--weights W.onnx] [--classifier C] [--limit N]

For each folder (``smj dataset synth`` output, of any ``--kind``: hands, loose tiles, close-ups, empty
tables): the whole detector (localiser and classifier) on every photo, against the scene's labels.

- recall: the face-up tiles (suited and honour) that get a box at IoU >= 0.5, of any reading, with the tile's
  face (as the real photos are labelled) or with all of it that shows (its outline, as the shipped localiser
  boxes tiles); all of them, and the player's and loose ones alone (not the far discards and other players'
  rows);
- false boxes a photo: boxes that overlap no labelled tile (IoU < 0.3 with its face and its outline) nor any
  don't-care outline (a sliver, a tile on its long edge);
- photos with no false box (the target for tables with no tile: 95%);
- exact suited: the photos whose suited tiles found, as a multiset of faces, are those labelled face up;
- the median time a photo takes (decoding included).

With ``--real DIR [--split S]`` (a dataset of this project's layout, its photos of real tables): the strips
of each photo beyond every labelled box (honours and other don't-care tiles included), at least
``BACKGROUND_SIDE`` pixels across, are read as photos of their own: real clutter and table with no tile in
it, which must give no box either.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from datasets.scenes import one_line_errors, scene_images

FOUND_IOU = 0.5  # a labelled tile counts as found by a box overlapping it this much
FALSE_IOU = 0.3  # a box overlapping no labelled tile nor don't-care outline this much is a false box


@dataclass(frozen=True)
class PhotoResult:
    tiles: Counter[str]  # face-up tiles labelled, by role (hand, meld, stray, discard, opponent, ...)
    found: Counter[str]  # ... of them boxed
    false_boxes: int
    exact_suited: bool
    seconds: float
    refused: bool = False  # the reader refused the photo as no hand (too_many_tiles): a clean photo it is not


def judge(row: dict, boxes: np.ndarray, classes: np.ndarray, seconds: float) -> PhotoResult:
    """One photo's detections (boxes in the photo's pixels, classes) against its scene row."""
    from scoring.tiles import CLASS_NAMES
    from vision.detections import BACK
    from vision.geometry.boxes import box_iou

    suited = len(CLASS_NAMES)

    labelled = row.get("boxes", [])
    truth = np.array([b["box"] for b in labelled], np.float32).reshape(-1, 4)
    outline = np.array([b.get("outline", b["box"]) for b in labelled], np.float32).reshape(-1, 4)
    face_up = np.array([b["cls"] != BACK for b in labelled], bool)
    dont_care = np.array(row.get("ignored", []), np.float32).reshape(-1, 4)
    overlaps = np.maximum(box_iou(truth, boxes), box_iou(outline, boxes))  # the face's or the whole tile's
    boxed = overlaps.max(axis=1, initial=0.0) >= FOUND_IOU
    roles = [b["role"] for b in labelled]
    tiles = Counter(role for role, up in zip(roles, face_up, strict=True) if up)
    found = Counter(role for role, up, hit in zip(roles, face_up, boxed, strict=True) if up and hit)
    near_truth = overlaps.max(axis=0, initial=0.0) >= FALSE_IOU
    near_ignored = box_iou(dont_care, boxes).max(axis=0, initial=0.0) >= FALSE_IOU
    false_boxes = int(np.count_nonzero(~(near_truth | near_ignored)))
    wanted = Counter(int(b["cls"]) for b in labelled if b["cls"] < suited)
    got = Counter(int(c) for c in classes if c < suited)
    return PhotoResult(tiles, found, false_boxes, wanted == got, seconds)


def refused(row: dict, seconds: float) -> PhotoResult:
    """A photo the reader refused (more boxes than a hand holds, ``too_many_tiles``): no tile found, and
    counted among the photos with a false box (its false boxes are not counted: there are hundreds)."""
    from vision.detections import BACK

    tiles = Counter(b["role"] for b in row.get("boxes", []) if b["cls"] != BACK)
    return PhotoResult(tiles, Counter(), 0, not row.get("boxes"), seconds, refused=True)


def measure(folder: Path, detector: object, limit: int = 0) -> list[PhotoResult]:
    from vision.images import ImageError, load_photo
    from vision.reading import first_detections

    rows = scene_images(folder)
    results = []
    for row in rows[: limit or None]:
        start = time.perf_counter()
        photo = load_photo(folder / row["image"])
        try:
            found = first_detections(photo, detector)  # type: ignore[arg-type]
        except ImageError as error:
            if error.code != "too_many_tiles":
                raise
            results.append(refused(row, time.perf_counter() - start))
            continue
        seconds = time.perf_counter() - start
        results.append(judge(row, found.boxes * photo.scale, found.class_ids, seconds))
    return results


BACKGROUND_SIDE = 96  # a real photo's strip beyond its tiles read as a photo when this wide and tall


def background_strips(pixels: np.ndarray, boxes: np.ndarray) -> list[np.ndarray]:
    """The parts of a photo above, below, left and right of all its labelled ``boxes`` (a tenth of a tile's
    height away from them), each at least ``BACKGROUND_SIDE`` pixels each way."""
    height, width = pixels.shape[:2]
    if not len(boxes):
        return [pixels]
    pad = 0.1 * float(np.median(boxes[:, 3] - boxes[:, 1]))
    x1, y1 = (int(max(0.0, v - pad)) for v in boxes[:, :2].min(axis=0))
    x2, y2 = (
        int(min(limit, v + pad)) for v, limit in zip(boxes[:, 2:].max(axis=0), (width, height), strict=True)
    )
    strips = [pixels[:y1], pixels[y2:], pixels[:, :x1], pixels[:, x2:]]
    return [s for s in strips if min(s.shape[:2]) >= BACKGROUND_SIDE]


def measure_backgrounds(data: Path, split: str, detector: object) -> tuple[int, int, int]:
    """(strips read, strips with no box, boxes found) over the real photos of ``split``."""
    from PIL import Image

    from datasets.yolo import read_yolo
    from vision.images import Photo
    from vision.reading import first_detections

    strips = clean = boxes = 0
    for item in read_yolo(data):
        if item.split != split:
            continue
        with Image.open(item.image) as image:
            pixels = np.asarray(image.convert("RGB"))
        height, width = pixels.shape[:2]
        labelled = np.array([b.xyxy(width, height) for b in item.boxes], np.float32).reshape(-1, 4)
        for strip in background_strips(pixels, labelled):
            strip = np.ascontiguousarray(strip)
            found = first_detections(Photo(strip, (strip.shape[1], strip.shape[0])), detector)  # type: ignore[arg-type]
            strips += 1
            clean += len(found) == 0
            boxes += len(found)
    return strips, clean, boxes


NEAR = ("hand", "meld", "stray")  # the player's tiles and those lying loose: not 20 px far tiles


def summary(results: Sequence[PhotoResult]) -> str:
    tiles = sum((r.tiles for r in results), Counter())
    found = sum((r.found for r in results), Counter())
    total = sum(tiles.values())
    recall = sum(found.values()) / total if total else float("nan")
    near = sum(tiles[role] for role in NEAR)
    near_recall = sum(found[role] for role in NEAR) / near if near else float("nan")
    false = sum(r.false_boxes for r in results) / len(results)
    clean = sum(r.false_boxes == 0 and not r.refused for r in results) / len(results)
    refusals = sum(r.refused for r in results)
    exact = sum(r.exact_suited for r in results) / len(results)
    ms = 1000 * statistics.median(r.seconds for r in results)
    return (
        f"{len(results)} photos, {total} face-up tiles: recall {recall:.3f} (hand, melds, loose: "
        f"{near_recall:.3f} of {near})  false boxes/photo {false:.2f}  "
        f"no false box {clean:.3f}  exact suited {exact:.3f}  median {ms:.0f} ms"
        + (f"  refused as too many tiles {refusals}" if refusals else "")
    )


@one_line_errors("bench_every_tile")
def main(argv: Sequence[str] | None = None) -> int:
    from vision.detect.detector import DEFAULT_WEIGHTS
    from vision.factory.torch_models import reader

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", type=Path, nargs="*")
    parser.add_argument(
        "--real", type=Path, help="a dataset of real photos: read their strips beyond the tiles"
    )
    parser.add_argument("--split", default="val", help="with --real: which split (default val)")
    parser.add_argument(
        "--weights", type=Path, default=DEFAULT_WEIGHTS, help="the localiser (default: shipped)"
    )
    parser.add_argument("--classifier", type=Path, help="the tile classifier (default: shipped)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N photos of each folder")
    args = parser.parse_args(argv)
    if not args.folders and args.real is None:
        parser.error("give scene folders, --real DIR, or both")
    detector = reader(args.weights, classifier=args.classifier)  # a run's .pt checkpoint, or .onnx weights
    if args.real is not None:
        strips, clean, boxes = measure_backgrounds(args.real, args.split, detector)
        share = clean / strips if strips else float("nan")
        print(
            f"{args.real} {args.split}: {strips} strips beyond the tiles, no box {share:.3f}, {boxes} boxes"
        )
    for folder in args.folders:
        print(f"{folder}: {summary(measure(folder, detector, args.limit))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
