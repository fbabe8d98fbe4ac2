"""The API load check, through its ``measure`` (bounded: fewer requests than its default 200), against a
server it starts on 127.0.0.1 with the fake detector: latency, throughput and the server's memory."""

from __future__ import annotations

import pytest
from bench_loader import load_benchmark

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

bench = load_benchmark("bench_api")


def test_load_check_with_the_fake_detector() -> None:
    run = bench.measure(True, requests=48, clients=8, warmup=8)
    assert run.errors == ()
    assert (run.requests, run.clients, run.model) == (48, 8, "fake detector")
    assert run.photo_bytes > 0 and run.photo.endswith(".jpg")
    assert len(run.latencies) == 48 and min(run.latencies) > 0 and run.wall > 0
    assert bench.percentile(run.latencies, 50) <= bench.percentile(run.latencies, 95) <= max(run.latencies)
    assert run.throughput == 48 / run.wall
    # on Linux the server's memory is read from /proc
    assert run.rss_before is not None and run.rss_after is not None and run.rss_peak > 0
    assert run.growth == run.rss_after - run.rss_before


def test_the_command_runs() -> None:
    assert bench.main(["--fake", "--requests", "4", "--concurrency", "2", "--warmup", "2"]) == 0
