"""ONNX Runtime's session settings measured: photo to score under each combination, on this machine.

    python benchmarks/bench_runtime.py [PHOTO ...] [--runs 9] [--threads 1,2] [--graph basic,all]
        [--arena on,off] [--spin on,off]

For every combination of intra-op threads, graph optimisation level, CPU memory arena and spinning threads
(``vision.detect.onnx_model.Runtime``), both models are loaded once with it; then each photo (default: the
bundled examples) is read from its JPEG bytes to its score (``vision.pipeline.score_photo``) by every
combination in turn, run after run (one warm-up first), so that the machine's drift falls on all alike.
Printed: the median milliseconds per photo and combination, and the combination of the least summed median.
The chosen settings go in ``models/manifest.json`` as ``runtime`` (read by both models on load).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from itertools import product
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def measure(
    photos: Sequence[Path], runtimes: Sequence[object], runs: int = 9
) -> dict[object, dict[str, float]]:
    """Median milliseconds photo -> score, per runtime (``Runtime``) and photo name."""
    from scoring import CHENGDU, WinContext
    from vision.detect.detector import Detector
    from vision.pipeline import score_photo

    detectors = {runtime: Detector(runtime=runtime) for runtime in runtimes}  # type: ignore[arg-type]
    data = {photo.name: photo.read_bytes() for photo in photos}
    times: dict[object, dict[str, list[float]]] = {r: {name: [] for name in data} for r in runtimes}
    for run in range(runs + 1):
        for name, photo in data.items():
            for runtime, detector in detectors.items():
                started = time.perf_counter()
                score_photo(photo, detector, WinContext(), CHENGDU)
                if run:  # the first is a warm-up
                    times[runtime][name].append(time.perf_counter() - started)
    return {r: {name: 1000 * statistics.median(t) for name, t in by.items()} for r, by in times.items()}


def main(argv: Sequence[str] | None = None) -> int:
    from vision.detect.onnx_model import Runtime

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("photos", type=Path, nargs="*", help="photos (default: the bundled examples)")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--threads", default="1,2", help="intra-op threads to try (0: ONNX Runtime's choice)")
    parser.add_argument("--graph", default="basic,all", help="graph optimisation levels to try")
    parser.add_argument("--arena", default="on,off", help="CPU memory arena settings to try")
    parser.add_argument("--spin", default="on,off", help="intra-op threads spinning between calls, or not")
    args = parser.parse_args(argv)
    photos = args.photos or sorted((ROOT / "examples").glob("*.jpg"))
    runtimes = [
        Runtime(int(threads), graph, arena == "on", spin == "on")
        for threads, graph, arena, spin in product(
            args.threads.split(","), args.graph.split(","), args.arena.split(","), args.spin.split(",")
        )
    ]
    medians = measure(photos, runtimes, args.runs)
    names = [photo.name for photo in photos]
    print("threads graph    arena spin  " + "  ".join(f"{name:>16}" for name in names) + "   sum (ms)")
    for runtime, by in medians.items():
        r: Runtime = runtime  # type: ignore[assignment]
        cells = "  ".join(f"{by[name]:16.1f}" for name in names)
        arena, spin = ("on" if on else "off" for on in (r.cpu_mem_arena, r.spinning))
        print(
            f"{r.intra_op_threads:7d} {r.graph_optimization:8s} {arena:5s} {spin:4s}  {cells}"
            f"   {sum(by.values()):8.1f}"
        )
    best = min(medians, key=lambda r: sum(medians[r].values()))
    print(f"least summed median: {best}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
