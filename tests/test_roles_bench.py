"""The roles benchmark scores the detector on the player's own tiles, the others being don't-care."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bench_loader import load_benchmark

from datasets.synth.scene import SceneOptions
from datasets.synth.writer import write_dataset


def _measure(data: Path, roles: str, capsys: pytest.CaptureFixture[str]) -> dict[str, float]:
    module = load_benchmark("bench_roles")
    assert module.main([str(data), "--roles", roles]) == 0
    out = capsys.readouterr().out
    return {key: float(value) for key, value in re.findall(r"(mAP50|recall|exact hand) ([\d.]+)", out)}


def test_the_players_tiles_are_measured_and_the_rest_is_dont_care(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_dataset(tmp_path, 2, seed=11, options=SceneOptions(size=(640, 480)), progress=False)
    player = _measure(tmp_path, "hand,meld", capsys)
    assert player["mAP50"] > 0.5 and player["recall"] > 0.5  # the shipped model reads its renderer's hands
    nothing = _measure(tmp_path, "no-such-role", capsys)  # no truth: nothing to find, nothing counted
    assert nothing["mAP50"] == 0.0 and nothing["recall"] == 0.0
    # every tile is don't-care, so a scene reads exactly unless a box lies mostly off every tile: a false
    # find, or a loose box on a far discard (one of these scenes has one, half on a 9p 12 px tall)
    assert nothing["exact hand"] >= 0.5
