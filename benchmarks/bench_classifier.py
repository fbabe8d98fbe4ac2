"""The tile classifier alone: top-1 on the labelled boxes of synthetic scenes, per role and tile style.

    python benchmarks/bench_classifier.py DIR [--classifier models/tile_faces.onnx] [--roles hand,meld]

Reads ``DIR/scenes.jsonl`` (``smj dataset synth`` output), crops every labelled suited tile or back
of the given roles as the detector does, and prints the share read right per tile style (procedural
faces, each artwork set), per role and per suit, and the most frequent confusions. The real photos' crops are
measured by ``smj train --task classify`` itself (its validation split).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def main(argv: Sequence[str] | None = None) -> int:
    from vision.classifier import CLASSIFIER_CLASSES, TileClassifier
    from vision.detections import BACK
    from vision.detector import DEFAULT_CLASSIFIER
    from vision.images import load_photo

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path)
    parser.add_argument("--classifier", type=Path, default=DEFAULT_CLASSIFIER)
    parser.add_argument("--roles", default="hand,meld", help="comma-separated box roles to read")
    args = parser.parse_args(argv)
    roles = set(args.roles.split(","))
    classifier = TileClassifier(args.classifier)
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    confusions: Counter[tuple[str, str]] = Counter()
    for line in (args.data / "scenes.jsonl").read_text(encoding="utf-8").splitlines():
        scene = json.loads(line)
        boxes = [b for b in scene.get("boxes", []) if b["role"] in roles and b["cls"] <= 27]
        if not boxes:
            continue
        pixels = load_photo(args.data / scene["image"]).pixels
        found, _ = classifier.classify(pixels, np.array([b["box"] for b in boxes], np.float32))
        style = scene["tiles"].split("-")[0]
        for box, read in zip(boxes, found, strict=True):
            ok = int(read == box["cls"])
            suit = CLASSIFIER_CLASSES[box["cls"]][0] if box["cls"] < BACK else "back"
            for key in ("all", f"style {style}", f"role {box['role']}", f"suit {suit}"):
                total[key] += 1
                right[key] += ok
            if not ok:
                confusions[(CLASSIFIER_CLASSES[box["cls"]], CLASSIFIER_CLASSES[read])] += 1
    if not total:
        print(f"{args.data}: no labelled boxes of roles {sorted(roles)}", file=sys.stderr)
        return 2
    print(f"{args.classifier.name} on {args.data} ({', '.join(sorted(roles))} tiles)")
    for key in sorted(total, key=lambda k: (k != "all", k)):
        print(f"  {key:28s} {total[key]:6d} tiles  top-1 {right[key] / total[key]:.3f}")
    common = ", ".join(f"{a}->{b} {n}" for (a, b), n in confusions.most_common(12))
    print(f"  most frequent confusions: {common}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
