"""The hostile-request benchmark's parts, and a tiny run of it against the fake app on 127.0.0.1 (the
full load run is a benchmark: ``python benchmarks/bench_hostile.py``)."""

from __future__ import annotations

import io

import pytest
from bench_loader import load_benchmark
from PIL import Image

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    return load_benchmark("bench_hostile")


def test_the_payloads_are_what_they_claim(bench) -> None:  # type: ignore[no-untyped-def]
    big = bench.flat_png(3000)
    with Image.open(io.BytesIO(big)) as image:
        assert image.size == (3000, 3000) and image.mode == "RGB"
    assert len(big) < 60_000  # a tiny upload of many pixels
    with pytest.raises(Image.DecompressionBombError):
        Image.open(io.BytesIO(bench.bomb_png()))
    sixteen = bench.sixteen_bit_png(bench.ROOT / "examples" / "hand.jpg")
    with Image.open(io.BytesIO(sixteen)) as image:
        assert image.mode == "I;16"
    names = [case.name for case in bench.build_cases(big_side=64)]
    assert len(names) == len(set(names)) >= 12


def test_a_tiny_run_against_the_fake_app(bench, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    cases = ",".join(
        [
            "settle_fan_1e9",
            "settle_amount_2e53",
            "two_files",
            "decompression_bomb",
            "example_cross_site",
            "example_script_trailer",
        ]
    )
    argv = ["--fake", "--photos", "4", "--photo-clients", "2", "--hands", "8", "--hand-clients", "4"]
    status = bench.main([*argv, "--after-s", "0", "--big-side", "64", "--cases", cases])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "UNEXPECTED" not in out
    for name in cases.split(","):
        assert name in out
    assert "/healthz while" in out and "errors: 0" in out and "p95" in out and "server RSS: before" in out
    assert "SIGTERM: stopped" in out


def test_an_unknown_case_is_refused(bench) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit):
        bench.main(["--cases", "no_such_case"])
