"""The scoring benchmark measures (on a few hands) both rates, and its command runs."""

from __future__ import annotations

from dataclasses import replace

from bench_loader import load_benchmark

bench = load_benchmark("bench_scoring")


def test_the_benchmark_scores_winning_hands_and_finds_the_waits_of_ready_ones() -> None:
    result = bench.measure(200, seed=3, preset="qq_xuezhan")
    assert result.scored == 200 and result.ready == 200
    assert min(result.score_rate, result.score_cpu_rate, result.waits_rate, result.waits_cpu_rate) > 0
    assert 1.0 <= result.mean_waits <= 9.0  # every ready hand waits on the tile taken out, at least
    assert bench.measure(200, seed=3, preset="qq_xuezhan").mean_waits == result.mean_waits  # seeded
    slow = replace(result, score_cpu_rate=bench.SCORE_TARGET - 1)
    assert replace(result, score_cpu_rate=bench.SCORE_TARGET, waits_cpu_rate=bench.WAITS_TARGET).on_target
    assert not slow.on_target


def test_the_command_runs() -> None:
    assert bench.main(["--hands", "20", "--seed", "3"]) == 0
