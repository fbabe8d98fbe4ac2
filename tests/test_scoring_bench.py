"""The scoring benchmark runs (on a few hands) and reports both rates."""

from __future__ import annotations

import pytest
from bench_loader import load_benchmark


def test_benchmark_runs_on_a_few_hands(capsys: pytest.CaptureFixture[str]) -> None:
    module = load_benchmark("bench_scoring")
    assert module.main(["--hands", "200", "--seed", "3", "--preset", "qq_xuezhan"]) == 0
    out = capsys.readouterr().out
    assert "score: 200 winning hands" in out and "waits: 200 ready hands" in out and "hands/s" in out
