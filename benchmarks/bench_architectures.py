"""Which nano localiser is fastest here: YOLO11n vs YOLO26n in ONNX Runtime, at the shipped input size.

    python benchmarks/bench_architectures.py [--imgsz 384] [--runs 40]

Builds each single-class model from its config (no download, untrained: speed does not depend on
the weights), exports it to ONNX with the shipped settings (dynamic input) into a temporary folder,
and times one look at the bundled example photos letterboxed to the input size, the runs of the two
models interleaved so background load hits both alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ("yolo11n.yaml", "yolo26n.yaml")


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("YOLO_OFFLINE", "1")
    import numpy as np
    import onnxruntime as ort
    from ultralytics import YOLO
    from ultralytics.nn.tasks import DetectionModel

    from vision.detect.letterbox import letterbox
    from vision.images import load_photo

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--imgsz", type=int, default=384)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args(argv)
    photos = [load_photo(p).pixels for p in sorted((ROOT / "examples").glob("*.jpg"))]
    blobs = []
    for pixels in photos:
        height, width = pixels.shape[:2]
        gain = args.imgsz / max(width, height)
        shape = (-(-round(height * gain) // 32) * 32, -(-round(width * gain) // 32) * 32)
        canvas, _, _ = letterbox(pixels, shape)
        blobs.append(np.ascontiguousarray(canvas.transpose(2, 0, 1)[None], dtype=np.float32) / 255.0)
    sessions = {}
    with tempfile.TemporaryDirectory() as folder:
        for config in CONFIGS:
            model = YOLO(config)
            network = DetectionModel(config, nc=1, verbose=False)
            network.names = {0: "tile"}
            model.model = network  # type: ignore[assignment]
            weights = Path(folder) / f"{Path(config).stem}.pt"
            model.save(str(weights))
            onnx = YOLO(str(weights)).export(format="onnx", imgsz=args.imgsz, dynamic=True, simplify=True)
            sessions[config] = ort.InferenceSession(onnx, providers=["CPUExecutionProvider"])
        times: dict[str, list[float]] = {config: [] for config in CONFIGS}
        for run in range(args.runs + 3):
            for config, session in sessions.items():
                blob = blobs[run % len(blobs)]
                start = time.perf_counter()
                session.run(None, {session.get_inputs()[0].name: blob})
                if run >= 3:
                    times[config].append(time.perf_counter() - start)
    for config in CONFIGS:
        median = 1000 * statistics.median(times[config])
        print(f"{config:13s} median {median:.1f} ms per look at {args.imgsz} px")
    ratio = statistics.median(times["yolo11n.yaml"]) / statistics.median(times["yolo26n.yaml"])
    print(f"yolo26n is {ratio:.2f}x as fast as yolo11n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
