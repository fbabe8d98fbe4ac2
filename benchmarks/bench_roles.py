"""The detector on some roles of the tiles of synthetic scenes only: the player's own tiles, by default.

    python benchmarks/bench_roles.py DIR [--roles hand,meld] [--weights models/tiles.onnx] [--classifier C]

``smj eval`` scores every labelled tile of a scene: the player's hand and melds, but also discards,
other players' rows and walls, often 10-30 px far tiles that no user needs read. This reads
``DIR/scenes.jsonl`` (``smj dataset synth`` output), keeps the tiles of the given roles as the truth and
makes every other tile a don't-care region (as ``smj eval`` treats honour tiles), and prints the same
measures as ``smj eval``: mAP50, mAP50-95, precision, recall, and its exact-tiles rate, which with every other
tile don't-care is the exact hand (the player's tiles found and read, as a multiset).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from datasets.scenes import one_line_errors, scene_images


def role_images(data: Path, roles: set[str]) -> list[Any]:
    """The scenes of ``data/scenes.jsonl`` as labelled images whose truth is the tiles of ``roles``; every
    other tile is labelled an honour tile, a don't-care region for ``vision.factory.evaluate``."""
    from datasets.labels import Box, LabelledImage
    from vision.detections import HONOUR

    images = []
    for scene in scene_images(data):
        width, height = scene["width"], scene["height"]
        boxes = tuple(
            Box.from_xyxy(b["cls"] if b["role"] in roles else HONOUR, tuple(b["box"]), width, height)
            for b in scene["boxes"]
        )
        images.append(LabelledImage((data / scene["image"]).resolve(), boxes, width, height))
    return images


@one_line_errors("bench_roles")
def main(argv: Sequence[str] | None = None) -> int:
    from vision.detect.detector import DEFAULT_WEIGHTS
    from vision.factory.evaluate import evaluate

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path)
    parser.add_argument("--roles", default="hand,meld", help="comma-separated roles kept as the truth")
    parser.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS)
    parser.add_argument("--classifier", type=Path, help="tile classifier weights (default: the shipped one)")
    args = parser.parse_args(argv)
    roles = set(args.roles.split(","))
    images = role_images(args.data, roles)
    if not images:
        print(f"{args.data}: no scenes", file=sys.stderr)
        return 2
    from vision.factory.torch_models import reader

    result = evaluate(reader(args.weights, classifier=args.classifier), images)
    print(
        f"{args.weights.name} on {args.data} ({len(images)} scenes), {', '.join(sorted(roles))} tiles: "
        f"mAP50 {result.map50:.3f}  mAP50-95 {result.map50_95:.3f}  precision {result.precision:.3f}  "
        f"recall {result.recall:.3f}  exact hand {result.exact_tiles_rate:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
