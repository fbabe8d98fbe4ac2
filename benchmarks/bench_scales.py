"""Does a photo read the same whatever size it is stored at? Each labelled photo stored again at other sizes.

    python benchmarks/bench_scales.py DATA [DATA ...] [--split val] [--factors 0.5,1,2] [--limit N]
        [--weights W.onnx] [--classifier C]

DATA: a labelled dataset (``smj dataset import`` or ``smj dataset synth`` output). Every photo is resized by
each factor (Pillow's Lanczos, then a JPEG at quality 95: a camera or an app storing the same frame at
another size) and read as a user's photo is (``vision.factory.evaluate.evaluate``: the reading's first view
at the operating threshold). For each factor: the exact-tiles rate (every labelled suited tile found and read,
as a multiset), precision and recall of the suited tiles, the median time; and the share of photos whose
suited tiles (as a multiset) are the same as at factor 1, with the photos that differ. A factor whose resized
photo would have tiles under ``--min-tile`` pixels (its labelled boxes' median short side) skips that photo,
since a tile that small is not a photo's size but its legibility.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from PIL import Image


@dataclass(frozen=True)
class ScaleResult:
    factor: float
    photos: int
    exact: float
    precision: float
    recall: float
    median_ms: float
    found: dict[str, Counter[int]]  # by the photo's stem: its suited tiles found


def resized(image: Path, factor: float, folder: Path) -> Path:
    """``image`` stored again at ``factor`` its size (upright, as its EXIF turns it): a JPEG in ``folder``."""
    from PIL import ImageOps

    with Image.open(image) as opened:
        upright = ImageOps.exif_transpose(opened).convert("RGB")
    if factor != 1:
        size = (max(1, round(upright.width * factor)), max(1, round(upright.height * factor)))
        upright = upright.resize(size, Image.Resampling.LANCZOS)
    out = folder / f"{image.stem}.jpg"
    buffer = io.BytesIO()
    upright.save(buffer, "JPEG", quality=95)
    out.write_bytes(buffer.getvalue())
    return out


def tile_side(item: object) -> float:
    """The median short side of a labelled photo's boxes, in its pixels (0 with none)."""
    sides = [min(w, h) for w, h in ((b.w * item.width, b.h * item.height) for b in item.boxes)]  # type: ignore[attr-defined]
    return float(np.median(sides)) if sides else 0.0


def measure(items: Sequence[object], detector: object, factor: float, min_tile: float) -> ScaleResult:
    from vision.factory.evaluate import evaluate

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        kept = [item for item in items if tile_side(item) * factor >= min_tile or not item.boxes]  # type: ignore[attr-defined]
        copies = [replace(item, image=resized(item.image, factor, folder)) for item in kept]  # type: ignore[type-var]
        result = evaluate(detector, copies)  # type: ignore[arg-type]
    times = [r.seconds for r in result.images]
    return ScaleResult(
        factor,
        len(result.images),
        result.exact_tiles_rate,
        result.precision,
        result.recall,
        1000 * statistics.median(times) if times else float("nan"),
        {r.image.stem: r.found for r in result.images},
    )


def main(argv: Sequence[str] | None = None) -> int:
    from datasets.labels import DatasetError
    from datasets.yolo import read_yolo
    from vision.detect.detector import DEFAULT_WEIGHTS
    from vision.factory.torch_models import reader

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, nargs="+")
    parser.add_argument("--split", default="all", help="train, val, test or all (default)")
    parser.add_argument(
        "--factors", default="0.5,1,2", help="sizes to store each photo at (1 is always measured)"
    )
    parser.add_argument(
        "--min-tile", type=float, default=20.0, help="skip a photo whose tiles would be smaller"
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N photos of each dataset")
    parser.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS)
    parser.add_argument("--classifier", type=Path)
    args = parser.parse_args(argv)
    factors = sorted({1.0, *(float(f) for f in args.factors.split(","))})
    detector = reader(args.weights, classifier=args.classifier)
    for data in args.data:
        try:
            items = read_yolo(data)
        except DatasetError as error:
            print(f"{data}: {error}", file=sys.stderr)
            return 2
        items = [i for i in items if args.split == "all" or i.split == args.split][: args.limit or None]
        results = {f: measure(items, detector, f, args.min_tile) for f in factors}
        base = results[1.0].found
        print(f"{data} [{args.split}]:")
        for factor, result in results.items():
            shared = [stem for stem in result.found if stem in base]
            same = sum(result.found[stem] == base[stem] for stem in shared)
            differ = sorted(stem for stem in shared if result.found[stem] != base[stem])
            print(
                f"  x{factor:g}: {result.photos} photos  exact tiles {result.exact:.3f}  precision "
                f"{result.precision:.3f}  recall {result.recall:.3f}  median {result.median_ms:.0f} ms  "
                f"same tiles as x1 {same}/{len(shared)}"
                + (
                    f"  differ: {' '.join(differ[:12])}{' ...' if len(differ) > 12 else ''}" if differ else ""
                ),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
