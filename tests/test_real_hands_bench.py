"""The real-hands benchmark: the player's tiles the pipeline reads against the labelled ones."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from bench_loader import load_benchmark

from datasets.labels import Box, LabelledImage
from datasets.yolo import write_yolo
from vision.detector import DEFAULT_WEIGHTS

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not DEFAULT_WEIGHTS.is_file(), reason="no shipped model in models/")


def _labelled(name: str) -> LabelledImage:
    """A bundled example photo labelled with its player's tiles only, in the hand_series group."""
    scene = json.loads((ROOT / "examples" / f"{name}.json").read_text(encoding="utf-8"))
    width, height = scene["width"], scene["height"]
    boxes = tuple(
        Box.from_xyxy(b["cls"], tuple(b["box"]), width, height)
        for b in scene["boxes"]
        if b["role"] in ("hand", "meld")
    )
    image = ROOT / "examples" / f"{name}.jpg"
    return LabelledImage(image, boxes, width, height, name, "val", {"source_group": "hand_series"})


def _run(data: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    module = load_benchmark("bench_real_hands")
    code = module.main([str(data), *args])
    return code, capsys.readouterr().out


def test_the_players_tiles_are_compared_with_the_labelled_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    right = _labelled("hand_melds")  # a photo the shipped model reads right
    one_more = replace(right, image=right.image, boxes=(*right.boxes, right.boxes[0]), source="more")
    other = replace(_labelled("hand_rotated"), meta={"source_group": "other"})
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "again.jpg").write_bytes(right.image.read_bytes())  # a second name for the photo labelled wrong
    won = _labelled("hand_phone")  # 14 tiles (a pong among them) that make a winning hand, read right
    photos = [right, replace(one_more, image=copy / "again.jpg"), other, won]
    write_yolo(photos, tmp_path / "data", link=False)
    code, out = _run(tmp_path / "data", capsys)
    assert code == 0
    assert "3 photos (val, hand_series)" in out  # the other group is left out
    exact = re.search(r"exactly right: ([\d.]+) \((\d+) of (\d+)\)", out)
    assert exact is not None and exact.group(2, 3) == ("2", "3")  # the label with a tile too many fails
    assert "tile missed 1" in out
    # both photos' labelled tiles make a winning hand; the label with a tile too many (15) does not
    assert "labelled tiles a winning hand: 2 of 2 exactly right" in out
    assert "the other photos: 0 of 1 exactly right" in out


def test_no_photo_of_the_split_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_yolo([_labelled("hand_melds")], tmp_path / "data", link=False)
    code, _ = _run(tmp_path / "data", capsys, "--split", "test")
    assert code == 2
