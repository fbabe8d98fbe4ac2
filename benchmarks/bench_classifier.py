"""The tile classifier alone: top-1 on labelled tiles, per tile style, role and suit.

    python benchmarks/bench_classifier.py DIR [--classifier models/tile_faces.onnx] [--roles hand,meld]
    python benchmarks/bench_classifier.py --rendered N [--seed S] [--held-out-art DIR] [--red-fives]

With DIR: reads ``DIR/scenes.jsonl`` (``smj dataset synth`` output), crops every labelled suited tile or
back of the given roles as the detector does. With ``--rendered N``: N crops rendered without a scene
(``datasets.synth.face_crops``), each look a face style drawn fresh from the seed (default 1000000, far
from the seeds crop datasets are built with), procedural faces: how well faces of sets never trained on
are read. ``--held-out-art DIR`` draws every look from the held-out art sets in DIR instead
(``datasets.synth.art.HELD_OUT``: no model trains on them); ``--red-fives`` renders fives alone, all of
them red (赤五, to be read as plain fives). Prints the share read right per tile style, role and suit,
and the most frequent confusions. The real photos' crops are measured by ``smj train --task classify``
itself (its validation split).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from datasets.scenes import one_line_errors, scene_images

if TYPE_CHECKING:
    from vision.detect.classifier import TileClassifier

RENDERED_SEED = 1_000_000


def _scene_tiles(
    classifier: TileClassifier, data: Path, roles: set[str]
) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """(true class, read class, keys) for each labelled tile of the given roles."""
    from vision.images import load_photo

    for scene in scene_images(data):
        boxes = [b for b in scene.get("boxes", []) if b["role"] in roles and b["cls"] <= 27]
        if not boxes:
            continue
        pixels = load_photo(data / scene["image"]).pixels
        found, _ = classifier.classify(pixels, np.array([b["box"] for b in boxes], np.float32))
        style = scene["tiles"].split("-")[0]
        for box, read in zip(boxes, found, strict=True):
            yield box["cls"], int(read), (f"style {style}", f"role {box['role']}")


def _rendered_tiles(
    classifier: TileClassifier, n: int, seed: int, held_out_art: Sequence[str] = (), red_fives: bool = False
) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    from datasets.synth.face_crops import art_sets_in, rendered_crops
    from vision.contract import CLASSIFIER_CLASSES

    art_sets = art_sets_in(held_out_art, held_out=True) if held_out_art else []
    named = list(
        rendered_crops(
            n,
            seed=seed,
            size=classifier.imgsz,
            art_sets=art_sets,
            art_p=1.0 if art_sets else 0.0,
            red_five_p=1.0 if red_fives else 0.0,
            classes=("m5", "p5", "s5") if red_fives else (),
        )
    )
    if not named:
        return
    probs = classifier.probabilities(np.stack([crop for _, crop in named]))
    for (name, _), read in zip(named, probs.argmax(1), strict=True):
        yield CLASSIFIER_CLASSES.index(name), int(read), ()


@dataclass(frozen=True)
class TopOne:
    """Tiles read and read right per key (``all``, ``style S``, ``role R``, ``suit X``: ``all`` first, then
    the keys in order), and the confusions, ``(true name, read name, count)``, the most frequent first."""

    tiles: dict[str, int]
    right: dict[str, int]
    confusions: tuple[tuple[str, str, int], ...]

    def rate(self, key: str) -> float:
        return self.right[key] / self.tiles[key]


def measure_scenes(classifier: TileClassifier, data: Path, roles: set[str]) -> TopOne:
    """Top-1 on the labelled suited tiles and backs of ``roles`` in ``data/scenes.jsonl``, cropped as the
    detector crops them, per key ``all``, ``style S``, ``role R`` and ``suit X``."""
    return _tally(_scene_tiles(classifier, data, roles))


def measure_rendered(
    classifier: TileClassifier,
    n: int,
    seed: int = RENDERED_SEED,
    held_out_art: Sequence[str] = (),
    red_fives: bool = False,
) -> TopOne:
    """Top-1 on ``n`` crops rendered without a scene, per key ``all`` and ``suit X``: faces of sets drawn
    fresh from ``seed``, or of the held-out art sets in ``held_out_art``; fives alone, all red, with
    ``red_fives``."""
    return _tally(_rendered_tiles(classifier, n, seed, held_out_art, red_fives))


def _tally(tiles: Iterable[tuple[int, int, tuple[str, ...]]]) -> TopOne:
    from vision.contract import CLASSIFIER_CLASSES
    from vision.detections import BACK

    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    confusions: Counter[tuple[str, str]] = Counter()
    for truth, read, keys in tiles:
        ok = int(read == truth)
        suit = CLASSIFIER_CLASSES[truth][0] if truth < BACK else CLASSIFIER_CLASSES[truth]
        for key in ("all", *keys, f"suit {suit}"):
            total[key] += 1
            right[key] += ok
        if not ok:
            confusions[(CLASSIFIER_CLASSES[truth], CLASSIFIER_CLASSES[read])] += 1
    order = sorted(total, key=lambda k: (k != "all", k))
    return TopOne(
        {key: total[key] for key in order},
        {key: right[key] for key in order},
        tuple((a, b, n) for (a, b), n in confusions.most_common()),
    )


@one_line_errors("bench_classifier")
def main(argv: Sequence[str] | None = None) -> int:
    from vision.detect.detector import DEFAULT_CLASSIFIER

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, nargs="?", help="a synthetic dataset (smj dataset synth)")
    parser.add_argument("--classifier", type=Path, default=DEFAULT_CLASSIFIER)
    parser.add_argument("--roles", default="hand,meld", help="comma-separated box roles to read")
    parser.add_argument("--rendered", type=int, metavar="N", help="read N crops rendered without a scene")
    parser.add_argument("--seed", type=int, default=RENDERED_SEED, help="of the rendered crops")
    parser.add_argument(
        "--held-out-art", metavar="DIR", help="rendered crops: faces of the held-out art sets in DIR only"
    )
    parser.add_argument("--red-fives", action="store_true", help="rendered crops: red fives only")
    args = parser.parse_args(argv)
    if (args.data is None) == (args.rendered is None):
        parser.error("give a dataset folder or --rendered N (one of them)")
    if args.data is not None and (args.held_out_art or args.red_fives):
        parser.error("--held-out-art and --red-fives go with --rendered")
    roles = set(args.roles.split(","))
    from vision.factory.torch_models import classifier_reader

    classifier = classifier_reader(args.classifier)  # a run's .pt checkpoint, or shipped .onnx weights
    result = (
        measure_scenes(classifier, args.data, roles)
        if args.data is not None
        else measure_rendered(
            classifier,
            args.rendered,
            args.seed,
            [args.held_out_art] if args.held_out_art else [],
            args.red_fives,
        )
    )
    source = (
        args.data
        if args.data is not None
        else f"{args.rendered} rendered crops (seed {args.seed}, first view only"
        + (", held-out art" if args.held_out_art else "")
        + (", red fives" if args.red_fives else "")
        + ")"
    )
    if not result.tiles:
        print(f"{source}: no labelled tiles to read", file=sys.stderr)
        return 2
    what = f" ({', '.join(sorted(roles))} tiles)" if args.data is not None else ""
    print(f"{args.classifier.name} on {source}{what}")
    for key, tiles in result.tiles.items():
        print(f"  {key:28s} {tiles:6d} tiles  top-1 {result.rate(key):.3f}")
    common = ", ".join(f"{a}->{b} {n}" for a, b, n in result.confusions[:12])
    print(f"  most frequent confusions: {common}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
