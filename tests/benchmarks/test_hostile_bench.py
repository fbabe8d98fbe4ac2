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


def test_a_tiny_run_against_the_fake_app(bench) -> None:  # type: ignore[no-untyped-def]
    names = [
        "settle_fan_1e9",
        "settle_amount_2e53",
        "two_files",
        "decompression_bomb",
        "example_cross_site",
        "example_script_trailer",
    ]
    cases = [case for case in bench.build_cases(big_side=64) if case.name in names]
    run = bench.measure(cases, fake=True, photos=4, photo_clients=2, hands=8, hand_clients=4, after_s=0)
    assert (run.server, run.model) == ("uvicorn (fake)", "fake detector")
    assert run.base.startswith("http://127.0.0.1:")
    # every case answered as expected, and the script after the JPEG's end was not stored
    assert sorted(replayed.case.name for replayed in run.cases) == sorted(names)
    for replayed in run.cases:
        assert replayed.outcomes and replayed.unexpected == 0 and not replayed.script_stored
        assert all((o.status, o.code) == replayed.case.expected and o.seconds >= 0 for o in replayed.outcomes)
    assert run.healthz is not None and run.healthz[0] in names and run.healthz[1] > 0
    photos, hands = run.loads
    assert (photos.label, photos.requests) == ("photos (2 clients)", 4)
    assert (hands.label, hands.requests) == ("hands (4 clients)", 8)
    for loaded in run.loads:
        assert loaded.errors == () and len(loaded.latencies) == loaded.requests and loaded.wall > 0
    assert run.rss_before > 0 and run.rss_peak >= run.rss_before and run.rss_after > 0 and run.after_s == 0
    assert run.stopped is not None and run.failures == 0


def test_the_command_runs(bench) -> None:  # type: ignore[no-untyped-def]
    argv = ["--fake", "--photos", "0", "--hands", "2", "--after-s", "0", "--cases", "settle_fan_1e9"]
    assert bench.main(argv) == 0


def test_an_unknown_case_is_refused(bench) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit):
        bench.main(["--cases", "no_such_case"])
