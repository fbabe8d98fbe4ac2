"""The real-hands benchmark, through its ``measure``: the player's tiles the pipeline reads against the
labelled ones."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from bench_loader import load_benchmark

from datasets.labels import Box, LabelledImage
from datasets.yolo import write_yolo
from vision.detect.detector import DEFAULT_WEIGHTS, Detector

ROOT = Path(__file__).resolve().parents[2]

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


bench = load_benchmark("bench_real_hands")


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four labelled photos: three of the hand_series group, one of them labelled with a tile too many."""
    folder = tmp_path_factory.mktemp("real")
    right = _labelled("hand_melds")  # a photo the shipped model reads right
    one_more = replace(right, image=right.image, boxes=(*right.boxes, right.boxes[0]), source="more")
    other = replace(_labelled("hand_rotated"), meta={"source_group": "other"})
    copy = folder / "copy"
    copy.mkdir()
    (copy / "again.jpg").write_bytes(right.image.read_bytes())  # a second name for the photo labelled wrong
    won = _labelled("hand_phone")  # 14 tiles (a pong among them) that make a winning hand, read right
    photos = [right, replace(one_more, image=copy / "again.jpg"), other, won]
    write_yolo(photos, folder / "data", link=False)
    return folder / "data"


def test_the_players_tiles_are_compared_with_the_labelled_ones(data: Path) -> None:
    tally = bench.measure(data, Detector())
    assert tally.photos == 3  # the other group is left out
    assert (tally.exact, tally.photos) == (2, 3) and tally.exact_rate == 2 / 3  # a tile too many fails
    assert tally.wrong == {"tile missed": 1}
    assert sum(tally.wrong.values()) == tally.photos - tally.exact
    # both photos' labelled tiles make a winning hand; the label with a tile too many (15) does not
    assert (tally.winning.right, tally.winning.photos) == (2, 2)
    assert (tally.others.right, tally.others.photos) == (0, 1)
    assert tally.winning.photos + tally.others.photos == tally.photos
    assert tally.winning.right + tally.others.right == tally.exact


def test_every_group_and_no_photo(data: Path) -> None:
    every = bench.measure(data, Detector(), source_group="")
    assert every.photos == 4 and every.others.photos == 2
    assert bench.measure(data, Detector(), split="test").photos == 0


def test_the_command_runs(data: Path) -> None:
    assert bench.main([str(data)]) == 0
    assert bench.main([str(data), "--split", "test"]) == 2  # no photo of the split is an error
