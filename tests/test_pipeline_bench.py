"""The photo-to-hand benchmark: exact rates by the blurred_photo warning and by the scenes' true blur."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bench_loader import load_benchmark

from datasets.synth import SceneOptions
from datasets.synth.writer import write_dataset
from vision.detector import DEFAULT_WEIGHTS

pytestmark = pytest.mark.skipif(not DEFAULT_WEIGHTS.is_file(), reason="no shipped model in models/")


def test_hands_are_counted_by_the_blur_warning_and_by_the_true_blur(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_dataset(tmp_path, 4, seed=11, options=SceneOptions(size=(640, 480)), progress=False)
    rows = [json.loads(line) for line in (tmp_path / "scenes.jsonl").read_text().splitlines()]
    winning = sum(row["winning"] for row in rows)
    assert load_benchmark("bench_pipeline").main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    warned = re.search(r"blurred_photo warned: (.*)", out)
    by_blur = re.search(r"by true blur \(sigma in tile widths\): (.*)", out)
    assert warned is not None and by_blur is not None
    # every winning scene is counted once in each split, in the band its recorded blur falls in
    assert sum(int(n) for n in re.findall(r"(\d+) scenes", warned.group(1))) == winning
    assert sum(int(n) for n in re.findall(r"(\d+) scenes", by_blur.group(1))) == winning
    module = load_benchmark("bench_pipeline")
    bands = [module._blur_band(row["photo"]["blur_px"] / row["tile_px"]) for row in rows if row["winning"]]
    for band in set(bands):
        name = re.escape(module._band_name(band))
        assert re.search(rf"{name} {bands.count(band)} scenes exact", by_blur.group(1))
