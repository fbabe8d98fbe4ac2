"""Rules-engine throughput on one core: scoring random winning hands and finding the waits of ready hands.

    python benchmarks/bench_scoring.py [--seed 0] [--hands 10000] [--preset chengdu]

The hands are random but seeded (``scoring.samples``); they are built before the clock starts. Caches
start cold, as in a fresh process. Rates are given per second of wall-clock time and per second of this
process's CPU time (the fair figure on a shared machine). Targets: >= 20,000 scored hands/s and >= 5,000
waits/s; with ``--check`` the exit status is 1 when a CPU-time rate misses its target.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from scoring import WinContext, get_preset, score, waits
from scoring.samples import random_ready_hand, random_winning_hand

T = TypeVar("T")
SCORE_TARGET = 20_000
WAITS_TARGET = 5_000


def _timed(run: Callable[[], list[T]]) -> tuple[list[T], float, float]:
    """The results of ``run`` and its rates per second of wall-clock time and of this process's CPU time."""
    wall, cpu = time.perf_counter(), time.process_time()
    results = run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return results, len(results) / wall, len(results) / max(cpu, 1e-9)


@dataclass(frozen=True)
class Throughput:
    """Hands scored and ready hands searched for waits, with their rates (per second of wall-clock time
    and of this process's CPU time) and the mean number of waits a ready hand has."""

    scored: int
    score_rate: float
    score_cpu_rate: float
    ready: int
    waits_rate: float
    waits_cpu_rate: float
    mean_waits: float

    @property
    def on_target(self) -> bool:
        return self.score_cpu_rate >= SCORE_TARGET and self.waits_cpu_rate >= WAITS_TARGET


def measure(hands: int, seed: int = 0, preset: str = "chengdu") -> Throughput:
    """Score ``hands`` random winning hands and find the waits of ``hands`` random ready hands.

    Raises ``AssertionError`` when a winning hand does not score as valid, or a ready hand's waits miss
    the tile taken out of it.
    """
    rules = get_preset(preset)
    rng = random.Random(seed)
    winning = [random_winning_hand(rng) for _ in range(hands)]
    ready = [random_ready_hand(rng) for _ in range(hands)]
    context = WinContext()
    results, score_rate, score_cpu_rate = _timed(lambda: [score(hand, context, rules) for hand in winning])
    if not all(result.valid for result in results):
        raise AssertionError("a generated winning hand did not score as valid")
    found, waits_rate, waits_cpu_rate = _timed(
        lambda: [waits(hand.concealed, hand.melds, context, rules) for hand in ready]
    )
    if any(
        hand.missing not in {wait.tile for wait in tiles} for hand, tiles in zip(ready, found, strict=True)
    ):
        raise AssertionError("a ready hand's waits missed the tile taken out of it")
    mean_waits = sum(len(tiles) for tiles in found) / max(len(found), 1)
    return Throughput(
        len(winning), score_rate, score_cpu_rate, len(ready), waits_rate, waits_cpu_rate, mean_waits
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hands", type=int, default=10_000, help="hands for each of the two runs")
    parser.add_argument("--preset", default="chengdu")
    parser.add_argument("--check", action="store_true", help="exit 1 when a throughput target is missed")
    args = parser.parse_args(argv)
    try:
        result = measure(args.hands, args.seed, args.preset)
    except AssertionError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(
        f"score: {result.scored:,} winning hands, {result.score_rate:,.0f} hands/s wall, "
        f"{result.score_cpu_rate:,.0f} hands/s CPU (target {SCORE_TARGET:,})"
    )
    print(
        f"waits: {result.ready:,} ready hands, {result.waits_rate:,.0f} hands/s wall, "
        f"{result.waits_cpu_rate:,.0f} hands/s CPU (target {WAITS_TARGET:,}), "
        f"{result.mean_waits:.2f} waits per hand"
    )
    return 1 if args.check and not result.on_target else 0


if __name__ == "__main__":
    sys.exit(main())
