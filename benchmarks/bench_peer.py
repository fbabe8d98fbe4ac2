"""Photo to score beside a peer: this project's pipeline and PyPI ``mahjong-detector`` on the same photos.

    python benchmarks/bench_peer.py PHOTO [PHOTO ...] [--runs 15]

``mahjong-detector`` (MIT; the ``bench`` extra, never needed to serve) is a one-stage YOLO ONNX model
that names the tiles of a photo. In one process, both systems' models loaded once, each photo is read by
both in interleaved runs (the order alternating run by run, after one warm-up run each): ours from the
JPEG bytes to the score (``vision.pipeline.score_photo``: decode, localiser, classifier, grouping, the
search for a winning reading, scoring), the peer's from the same bytes to its tile names
(``mahjong_detector.detect_tiles``). Printed per photo: its size, the tiles each found, each system's
median time, the median of the paired ratio ours / peer (run by run), and each system's forward-pass
floor: its model calls alone (ONNX Runtime ``run`` with the very inputs of a run, recorded once and
replayed), so the distance from the floor (ours / our floor) is what the work around the models costs.

Photos the issue names: a 640x480 close-up of 40 or more tiles, a 640x640 real photo, the 12 MP example
(``examples/hand_phone.jpg``) and a 12 MP photo with the hand a third of the frame; e.g.

    python benchmarks/bench_peer.py work/synth_val/images/synth_2000_000003.jpg \\
        work/real/images/val/<a photo>.jpg examples/hand_phone.jpg work/full_land/images/synth_4000_000000.jpg
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PeerRow:
    photo: str
    size: tuple[int, int]
    ours_tiles: int
    peer_tiles: int
    ours_ms: float  # medians over the runs
    peer_ms: float
    ratio: float  # median of ours / peer, run by run
    ours_floor_ms: float  # the model calls alone, replayed
    peer_floor_ms: float

    def line(self) -> str:
        width, height = self.size
        over_floor = self.ours_ms / self.ours_floor_ms
        return (
            f"{self.photo} ({width}x{height}): tiles ours {self.ours_tiles} / peer {self.peer_tiles}; "
            f"ours {self.ours_ms:.1f} ms (floor {self.ours_floor_ms:.1f} ms, x{over_floor:.2f}), "
            f"peer {self.peer_ms:.1f} ms (floor {self.peer_floor_ms:.1f} ms); "
            f"paired ratio ours/peer median {self.ratio:.2f}"
        )


class _Recorder:
    """Records the calls of an ONNX Runtime session's ``run`` while on, and replays them."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.run = session.run
        self.calls: list[tuple[Any, dict[str, np.ndarray]]] = []
        self.recording = False
        session.run = self._run

    def _run(self, names: Any, feeds: dict[str, np.ndarray], *args: Any, **kwargs: Any) -> Any:
        if self.recording:
            self.calls.append((names, {key: np.array(value) for key, value in feeds.items()}))
        return self.run(names, feeds, *args, **kwargs)

    def replay(self) -> float:
        """Seconds the recorded calls take again."""
        started = time.perf_counter()
        for names, feeds in self.calls:
            self.run(names, feeds)
        return time.perf_counter() - started


def _sessions(detector: Any) -> list[Any]:
    """The ONNX Runtime sessions ``score_photo`` calls: the localiser's and the classifier's."""
    sessions = [detector._session]
    if detector.classifier is not None:
        sessions.append(detector.classifier._session)
    return sessions


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def measure(photos: Sequence[Path], runs: int = 15, detector: Any = None) -> list[PeerRow]:
    """One ``PeerRow`` per photo (see the module docstring)."""
    import mahjong_detector
    from mahjong_detector.predict import get_inference_session

    from scoring import CHENGDU, WinContext
    from vision.detect.detector import Detector
    from vision.pipeline import score_photo

    detector = detector or Detector()
    ours_recorders = [_Recorder(session) for session in _sessions(detector)]
    peer_recorder = _Recorder(get_inference_session())
    context = WinContext()
    rows = []
    for photo in photos:
        data = photo.read_bytes()

        def ours(data: bytes = data) -> Any:
            return score_photo(data, detector, context, CHENGDU)

        def peer(data: bytes = data) -> Any:
            return mahjong_detector.detect_tiles(io.BytesIO(data))

        for recorder in (*ours_recorders, peer_recorder):
            recorder.calls, recorder.recording = [], True
        ours_result, peer_result = ours(), peer()  # warm-up, and the calls the floors replay
        for recorder in (*ours_recorders, peer_recorder):
            recorder.recording = False
        ours_times, peer_times = [], []
        for run in range(runs):
            first, second = (ours, peer) if run % 2 == 0 else (peer, ours)
            a, _ = _timed(first)
            b, _ = _timed(second)
            ours_times.append(a if first is ours else b)
            peer_times.append(b if first is ours else a)
        ours_floor = [sum(recorder.replay() for recorder in ours_recorders) for _ in range(runs)]
        peer_floor = [peer_recorder.replay() for _ in range(runs)]
        rows.append(
            PeerRow(
                photo=str(photo),
                size=ours_result.photo.original_size,
                ours_tiles=len(ours_result.detections),
                peer_tiles=len(peer_result),
                ours_ms=1000 * statistics.median(ours_times),
                peer_ms=1000 * statistics.median(peer_times),
                ratio=statistics.median(a / b for a, b in zip(ours_times, peer_times, strict=True)),
                ours_floor_ms=1000 * statistics.median(ours_floor),
                peer_floor_ms=1000 * statistics.median(peer_floor),
            )
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("photos", type=Path, nargs="+")
    parser.add_argument("--runs", type=int, default=15, help="interleaved runs per photo (default 15)")
    args = parser.parse_args(argv)
    try:
        import mahjong_detector  # noqa: F401
    except ImportError:
        print("bench_peer: needs the peer, pip install -e '.[bench]'", file=sys.stderr)
        return 2
    for row in measure(args.photos, args.runs):
        print(row.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
