"""What a set taught from one photo of its layout reads, on synthetic scenes of that set.

    python benchmarks/bench_sets.py --layout LAYOUT.jpg DIR [DIR ...] [--hands] [--correct FACE] [--limit N]

For each folder (``smj dataset synth`` output): the player's tiles (hand and melds, their labelled boxes) read
from the views the reader cuts, by the classifier alone and with the set (tile accuracy, and the faces misread
most); with ``--hands`` the whole photo -> score pipeline without and with the set (bench_pipeline:
full hand exact) and the median time the set adds to a photo. ``--correct FACE``: the first photo where a tile
of FACE reads wrong with the set is corrected (that tile's views join the set, as the page's correction does),
and the share of the later photos holding FACE whose every FACE tile reads right is given before and after.
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


@dataclass(frozen=True)
class Tiles:
    """The player's tiles of one photo: labelled classes, the classifier's probabilities and the views'
    features (as ``TileClassifier.read_views`` cuts them), and their crops in every view a set keeps."""

    image: str
    classes: np.ndarray
    probabilities: np.ndarray
    features: np.ndarray
    boxes: np.ndarray


def read_tiles(folder: Path, detector: object, limit: int = 0) -> list[Tiles]:
    from vision.images import load_photo

    rows = scene_images(folder)
    rows = [row for row in rows if row.get("hand")][: limit or None]
    out = []
    for row in rows:
        photo = load_photo(folder / row["image"], reduce_to=1600)
        placed = [b for b in row["boxes"] if b["role"] in ("hand", "meld") and b["cls"] < 27]
        boxes = np.array([b["box"] for b in placed], np.float32).reshape(-1, 4) / photo.scale
        classifier = detector.classifier  # type: ignore[attr-defined]
        close_up = detector.locate(photo).close_up  # type: ignore[attr-defined]  # as its tiles decide
        views = classifier.read_views(photo.pixels, boxes, None, flip_row_tiles=not close_up)
        classes = np.array([b["cls"] for b in placed], np.int64)
        out.append(Tiles(row["image"], classes, views.probabilities, views.features, boxes * photo.scale))
    return out


def accuracy(tiles: Sequence[Tiles], tile_set: object | None) -> tuple[float, Counter[tuple[str, str]]]:
    from vision.detections import DETECTOR_CLASSES

    right = total = 0
    wrong: Counter[tuple[str, str]] = Counter()
    for photo in tiles:
        probs = (
            photo.probabilities if tile_set is None else tile_set.read(photo.probabilities, photo.features)
        )  # type: ignore[attr-defined]
        read = probs.argmax(axis=1)
        right += int((read == photo.classes).sum())
        total += len(read)
        for truth, got in zip(photo.classes, read, strict=True):
            if truth != got:
                wrong[(DETECTOR_CLASSES[truth], DETECTOR_CLASSES[got] if got < 29 else "none")] += 1
    return right / max(total, 1), wrong


def face_right(photo: Tiles, face: int, tile_set: object) -> bool:
    mine = photo.classes == face
    read = tile_set.read(photo.probabilities[mine], photo.features[mine]).argmax(axis=1)  # type: ignore[attr-defined]
    return bool((read == face).all())


@one_line_errors("bench_sets")
def main(argv: Sequence[str] | None = None) -> int:
    from vision.detect.detector import Detector
    from vision.detect.tileset import TileSet
    from vision.detections import DETECTOR_CLASSES
    from vision.images import load_photo
    from vision.pipeline import teach_set, tile_views

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, nargs="+")
    parser.add_argument("--layout", type=Path, required=True, help="the photo of the set's layout")
    parser.add_argument("--hands", action="store_true", help="also photo -> score, without and with the set")
    parser.add_argument(
        "--correct", metavar="FACE", help="measure one correction of this face teaching the set"
    )
    parser.add_argument("--latency", type=int, default=0, metavar="N", help="time N photos with and without")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args(argv)
    detector = Detector()
    began = time.perf_counter()
    taught = teach_set(args.layout, detector, args.layout.stem)
    alone = taught.examples.probabilities[list(taught.layout.tiles)].argmax(axis=1)
    misread = [
        f"{DETECTOR_CLASSES[face]}->{DETECTOR_CLASSES[int(read)] if read < 29 else 'none'}"
        for face, read in zip(taught.layout.faces, alone, strict=True)
        if face != read
    ]
    print(
        f"set taught from {args.layout} in {time.perf_counter() - began:.2f} s: "
        f"{len(taught.layout.tiles)} tiles"
        f"{' (turned)' if taught.layout.turned else ''}; the classifier alone misreads {misread or 'none'}"
    )
    tile_set = taught.tile_set
    for folder in args.data:
        tiles = read_tiles(folder, detector, args.limit)
        if not tiles:
            print(f"bench_sets: no hands in {folder}", file=sys.stderr)
            return 2
        plain, plain_wrong = accuracy(tiles, None)
        with_set, set_wrong = accuracy(tiles, tile_set)
        count = sum(len(t.classes) for t in tiles)
        print(f"{folder}: {len(tiles)} photos, {count} player's tiles")
        print(f"  tiles read right: classifier alone {plain:.4f}, with the set {with_set:.4f}")
        print(
            f"  misread most, alone: {plain_wrong.most_common(4)}; with the set: {set_wrong.most_common(4)}"
        )
        if args.hands:
            _hands(folder, detector, tile_set, args.limit)
        if args.latency:
            _latency(folder, detector, tile_set, args.latency)
        if args.correct:
            face = DETECTOR_CLASSES.index(args.correct)
            holding = [i for i, t in enumerate(tiles) if (t.classes == face).any()]
            first = next((i for i in holding if not face_right(tiles[i], face, tile_set)), None)
            if first is None:
                print(f"  correction: every {args.correct} already reads right with the set")
                continue
            photo = tiles[first]
            index = int(np.flatnonzero(photo.classes == face)[0])
            image = load_photo(folder / photo.image, reduce_to=1600)
            _, features = tile_views(image, detector, photo.boxes[index : index + 1])
            views = features[0]
            corrected = TileSet.of(
                tile_set.name,
                np.concatenate([tile_set.faces, np.full(len(views), face)]),
                np.concatenate([tile_set.features, views]),
            )
            later = [tiles[i] for i in holding if i > first]
            before = np.mean([face_right(t, face, tile_set) for t in later]) if later else float("nan")
            after = np.mean([face_right(t, face, corrected) for t in later]) if later else float("nan")
            print(
                f"  correction of one {args.correct} in {photo.image}: "
                f"later photos holding it ({len(later)}) "
                f"read every {args.correct} right {before:.3f} before, {after:.3f} after"
            )
    return 0


def _hands(folder: Path, detector: object, tile_set: object, limit: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_pipeline import _band_name, measure

    plain = measure(folder, detector, limit)  # type: ignore[arg-type]
    read = measure(folder, detector, limit, tile_set)  # type: ignore[arg-type]
    added = statistics.median(read.latencies) - statistics.median(plain.latencies)
    print(
        f"  full hand exact: alone {plain.exact_rate:.3f} ({plain.scenes} winning), with the set "
        f"{read.exact_rate:.3f}; median latency {statistics.median(plain.latencies) * 1000:.0f} ms alone, "
        f"{added * 1000:+.1f} ms with the set"
    )
    if read.by_blur:  # the photo's blur, a Gaussian sigma in tile widths (bench_pipeline.BLUR_BANDS)
        bands = ", ".join(
            f"{_band_name(band)} {plain.by_blur[band].rate:.3f} / {read.by_blur[band].rate:.3f} "
            f"({read.by_blur[band].scenes})"
            for band in sorted(read.by_blur)
        )
        print(f"  by the photo's blur in tile widths, alone / with the set: {bands}")


def _latency(folder: Path, detector: object, tile_set: object, count: int, rounds: int = 3) -> None:
    """Photo bytes -> score for ``count`` photos, each timed without and with the set in turn ``rounds``
    times, which goes first alternating: the median of the paired differences is what the set adds (what
    else the machine does cancels)."""
    from scoring import CHENGDU, WinContext
    from vision.pipeline import score_photo

    rows = scene_images(folder)
    added, alone = [], []
    for row in rows[:count]:
        data = (folder / row["image"]).read_bytes()
        for turn in range(rounds):
            timed = {}
            order = (None, tile_set) if turn % 2 == 0 else (tile_set, None)  # neither always goes first
            for chosen in order:
                start = time.perf_counter()
                score_photo(data, detector, WinContext(), CHENGDU, tile_set=chosen)  # type: ignore[arg-type]
                timed[chosen is None] = time.perf_counter() - start
            alone.append(timed[True])
            added.append(timed[False] - timed[True])
    print(
        f"  latency: {statistics.median(alone) * 1000:.0f} ms a photo alone (median), the set adds "
        f"{statistics.median(added) * 1000:+.1f} ms (median of {len(added)} paired runs)"
    )


if __name__ == "__main__":
    sys.exit(main())
