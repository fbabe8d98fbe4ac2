"""The scoring benchmark runs (on a few hands) and reports both rates."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_scoring.py"


def test_benchmark_runs_on_a_few_hands(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("bench_scoring", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--hands", "200", "--seed", "3", "--preset", "qq_xuezhan"]) == 0
    out = capsys.readouterr().out
    assert "score: 200 winning hands" in out and "waits: 200 ready hands" in out and "hands/s" in out
