"""The API load check runs (bounded: fewer requests than its default 200) against a server it starts on
127.0.0.1 with the fake detector, and reports latency, throughput and the server's memory."""

from __future__ import annotations

import pytest
from bench_loader import load_benchmark

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_load_check_with_the_fake_detector(capsys: pytest.CaptureFixture[str]) -> None:
    module = load_benchmark("bench_api")
    status = module.main(["--fake", "--requests", "48", "--concurrency", "8", "--warmup", "8"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "errors: 0" in out and "p50" in out and "p95" in out and "requests/s" in out
    assert "server RSS" in out
