"""The photo-to-hand benchmark, through its ``measure``: exact rates per meld count, by the blurred_photo
warning and by the scenes' true blur, and the scenes read wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_loader import load_benchmark, write_scenes

from vision.detect.detector import DEFAULT_WEIGHTS, Detector

pytestmark = pytest.mark.skipif(not DEFAULT_WEIGHTS.is_file(), reason="no shipped model in models/")

bench = load_benchmark("bench_pipeline")


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_scenes(tmp_path_factory.mktemp("pipeline"), 4)


def _winning(scenes: Path) -> list[dict]:
    rows = [json.loads(line) for line in (scenes / "scenes.jsonl").read_text().splitlines()]
    return [row for row in rows if row["winning"]]


def _rates(tally) -> list[float]:  # type: ignore[no-untyped-def]
    shares = [tally.apart, tally.suited, *tally.by_warning.values(), *tally.by_blur.values()]
    rows = [r for row in tally.melds for r in (row.exact / row.scenes, row.scored / row.scenes)]
    return [tally.exact_rate, tally.score_rate, *rows, *(s.rate for s in shares if s is not None)]


def test_hands_are_counted_by_meld_count_by_the_blur_warning_and_by_the_true_blur(scenes: Path) -> None:
    winning = _winning(scenes)
    tally = bench.measure(scenes, Detector())
    assert tally.folder == scenes and tally.size == (640, 480)
    # every winning scene is counted once in each split: by meld count, by the warning, by its true blur
    assert tally.scenes == len(winning) == sum(row.scenes for row in tally.melds)
    assert [row.melds for row in tally.melds] == sorted({len(row["hand"]["melds"]) for row in winning})
    assert sum(share.scenes for share in tally.by_warning.values()) == len(winning)
    assert sum(share.scenes for share in tally.by_blur.values()) == len(winning)
    bands = [bench._blur_band(row["photo"]["blur_px"] / row["tile_px"]) for row in winning]
    assert {band: share.scenes for band, share in tally.by_blur.items()} == {b: bands.count(b) for b in bands}
    exact = sum(row.exact for row in tally.melds)
    assert (
        exact
        == sum(s.right for s in tally.by_warning.values())
        == sum(s.right for s in tally.by_blur.values())
    )
    assert tally.apart is not None
    assert tally.apart.scenes == sum(bool(row.get("win_apart")) for row in winning)
    assert all(0.0 <= rate <= 1.0 for rate in _rates(tally))
    # a scene not read exactly is a failure, once, with the reason and both hands
    assert len(tally.failures) == len(winning) - exact
    assert {f.image for f in tally.failures} <= {row["image"] for row in winning}
    assert all(f.kind in ("unread", "tile count", "misread", "grouping") for f in tally.failures)
    assert tally.failure_kinds.total() == len(tally.failures)
    # one time and one count of groupings per photo
    assert len(tally.latencies) == len(tally.groupings) == len(winning)
    assert 0 < tally.latency_median <= tally.latency_p90 <= max(tally.latencies)
    assert min(tally.groupings) >= 1
    assert tally.suited is not None and tally.suited.scenes == len(winning) and tally.honours_as_suited >= 0


def test_the_labelled_boxes_measure_the_grouper_alone(scenes: Path) -> None:
    tally = bench.measure(scenes, None, limit=3)
    assert tally.scenes == 3 and tally.failures == ()  # the grouper groups the renderer's boxes right
    assert tally.exact_rate == tally.score_rate == 1.0
    assert tally.suited is None and tally.by_warning == {} and tally.by_blur == {}
    assert tally.latencies == () and tally.groupings == ()


def test_a_folder_without_a_winning_scene_is_refused(tmp_path: Path) -> None:
    (tmp_path / "scenes.jsonl").write_text(json.dumps({"winning": False}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no winning scenes"):
        bench.measure(tmp_path, None)
    assert bench.main([str(tmp_path), "--truth-detections"]) == 2


def test_the_command_runs(scenes: Path) -> None:
    assert bench.main([str(scenes), "--failures", "--limit", "2"]) == 0
    assert bench.main([str(scenes), "--truth-detections"]) == 0
