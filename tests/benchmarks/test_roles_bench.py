"""The roles benchmark scores the detector on the player's own tiles, the others being don't-care."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_loader import load_benchmark, write_scenes

from vision.detect.detector import Detector
from vision.detections import HONOUR
from vision.factory.evaluate import evaluate

bench = load_benchmark("bench_roles")


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_scenes(tmp_path_factory.mktemp("roles"), 2)


def test_tiles_of_other_roles_are_dont_care(scenes: Path) -> None:
    rows = [json.loads(line) for line in (scenes / "scenes.jsonl").read_text().splitlines()]
    player = bench.role_images(scenes, {"hand", "meld"})
    assert len(player) == len(rows) == 2
    for image, row in zip(player, rows, strict=True):
        expected = [b["cls"] if b["role"] in ("hand", "meld") else HONOUR for b in row["boxes"]]
        assert [b.class_id for b in image.boxes] == expected
        assert image.image == (scenes / row["image"]).resolve()
        assert sum(c != HONOUR for c in expected) >= 14 and HONOUR in expected  # the hand, and others
    nothing = bench.role_images(scenes, {"no-such-role"})
    assert all(b.class_id == HONOUR for image in nothing for b in image.boxes)


def test_the_players_tiles_are_measured_and_the_rest_is_dont_care(scenes: Path) -> None:
    detector = Detector()
    player = evaluate(detector, bench.role_images(scenes, {"hand", "meld"}))
    assert player.map50 > 0.5 and player.recall > 0.5  # the shipped model reads its renderer's hands
    nothing = evaluate(detector, bench.role_images(scenes, {"no-such-role"}))  # nothing to find
    assert nothing.map50 == 0.0 and nothing.recall == 0.0
    # every tile is don't-care, so a scene reads exactly unless a box lies mostly off every tile: a false
    # find, or a loose box on a far discard (one of these scenes has one, half on a 9p 12 px tall)
    assert nothing.exact_tiles_rate >= 0.5


def test_the_command_runs(scenes: Path, tmp_path: Path) -> None:
    assert bench.main([str(scenes), "--roles", "hand"]) == 0
    (tmp_path / "scenes.jsonl").write_text("", encoding="utf-8")
    assert bench.main([str(tmp_path)]) == 2  # no scenes
