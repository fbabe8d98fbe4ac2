"""The benchmark beside a peer (``benchmarks/bench_peer.py``), through its ``measure``."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_loader import load_benchmark

from vision.detect.detector import DEFAULT_WEIGHTS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = pytest.mark.skipif(not DEFAULT_WEIGHTS.is_file(), reason="no shipped model in models/")


def test_both_systems_read_the_photo_and_their_model_calls_are_replayed() -> None:
    pytest.importorskip("mahjong_detector")
    (row,) = load_benchmark("bench_peer").measure([EXAMPLES / "hand.jpg"], runs=2)
    assert row.size == (1024, 768)
    assert row.ours_tiles >= 14 and row.peer_tiles >= 1  # the peer reads far fewer of these tiles
    # the floors replay the model calls a run made (none recorded: a floor of 0)
    assert row.ours_floor_ms > 0 and row.peer_floor_ms > 0
    assert row.ratio > 0 and "paired ratio ours/peer" in row.line()
