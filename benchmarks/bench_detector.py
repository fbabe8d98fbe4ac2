"""Detector latency on this machine: ONNX Runtime vs the ultralytics/torch path, through the same looks.

    python benchmarks/bench_detector.py [IMAGE ...] [--runs 30]

Prints the median and p90 latency per photo of each runtime (image already decoded; localiser and
tile classifier both in that runtime) and the speed-up. Every photo is looked at first at 448 px, and closer
where its tiles come out small (``vision.detect.looks``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _time(detector: object, photos: list, runs: int) -> list[float]:
    from vision.reading import first_detections

    times = []
    for i in range(runs):
        photo = photos[i % len(photos)]
        start = time.perf_counter()
        first_detections(photo, detector)  # type: ignore[arg-type]
        times.append(time.perf_counter() - start)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    from vision.detect.detector import MODELS_DIR, Detector
    from vision.factory.torch_models import TorchDetector
    from vision.images import load_photo

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("images", nargs="*", help="photos (default: the bundled examples)")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.images] or [  # the close-up examples: the 12 MP one is bench_pipeline's
        p for p in sorted((ROOT / "examples").glob("*.jpg")) if p.stem != "hand_phone"
    ]
    if not paths:
        print("no images to time", file=sys.stderr)
        return 2
    photos = [load_photo(p) for p in paths]
    results = {}
    for name in ("tiles.onnx", "tiles.pt"):
        faces = MODELS_DIR / name.replace("tiles", "tile_faces")
        runtime = Detector if name.endswith(".onnx") else TorchDetector  # the factory's reader of a .pt
        detector = runtime(MODELS_DIR / name, classifier=faces if faces.is_file() else None)
        _time(detector, photos, 3)  # warm up
        times = sorted(_time(detector, photos, args.runs))
        results[name] = statistics.median(times)
        p90 = times[int(0.9 * (len(times) - 1))]
        kind = "onnx" if name.endswith(".onnx") else "torch"
        print(
            f"{kind:5s} {name:11s}: median {1000 * results[name]:.1f} ms, "
            f"p90 {1000 * p90:.1f} ms over {args.runs} runs"
        )
    print(f"ONNX Runtime is {results['tiles.pt'] / results['tiles.onnx']:.2f}x faster than torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
