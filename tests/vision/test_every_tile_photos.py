"""Every tile in the photo boxed once, and nothing else: rendered photos read with the shipped models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision.detect.detector import DEFAULT_WEIGHTS, Detector
from vision.detections import CLASS_IDS, Detections
from vision.geometry.boxes import box_iou
from vision.images import load_photo
from vision.reading import first_detections

PHOTOS = Path(__file__).resolve().parents[1] / "photos"
FIVES = {CLASS_IDS[name] for name in ("m5", "p5", "s5")}
pytestmark = pytest.mark.skipif(not DEFAULT_WEIGHTS.is_file(), reason="no shipped model in models/")


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


def _read(detector: Detector, name: str) -> tuple[dict, Detections]:
    scene = json.loads((PHOTOS / f"{name}.json").read_text(encoding="utf-8"))
    return scene, first_detections(load_photo(PHOTOS / scene["image"]), detector)


def _matches(truth: list[dict], found: Detections) -> np.ndarray:
    """IoU of every true tile (rows) with every box found (columns): with its face or with all of it that
    shows, whichever is more (the shipped localiser boxes whole tiles)."""
    faces = box_iou(np.array([b["box"] for b in truth], np.float32), found.boxes)
    return np.maximum(faces, box_iou(np.array([b["outline"] for b in truth], np.float32), found.boxes))


def test_each_red_five_lying_loose_is_boxed_and_read_as_its_five(detector: Detector) -> None:
    scene, found = _read(detector, "red_fives_loose")
    assert scene["red_fives"]
    fives = [b for b in scene["boxes"] if b["role"] == "stray" and b["cls"] in FIVES]
    assert {b["cls"] for b in fives} == FIVES  # one of each suit at least, lying loose
    iou = _matches(fives, found)
    for five, row in zip(fives, iou, strict=True):
        best = int(row.argmax())
        assert row[best] >= 0.5, f"no box on the loose {five['tile']} at {five['box']}"
        assert int(found.class_ids[best]) == five["cls"], f"the loose {five['tile']} read as another tile"


def test_a_table_of_tile_like_things_alone_gives_no_tile(detector: Detector) -> None:
    scene, found = _read(detector, "distractors")
    assert scene["boxes"] == [] and scene["hand"] is None
    assert len(found) == 0, f"{len(found)} boxes on a keyboard, dice, a domino and a printed page"


def test_big_tiles_filling_the_frame_each_get_one_box(detector: Detector) -> None:
    scene, found = _read(detector, "big_tiles")
    tiles = scene["boxes"]
    assert min(b["box"][2] - b["box"][0] for b in tiles) >= scene["width"] / 10
    iou = _matches(tiles, found)
    assert ((iou >= 0.5).sum(axis=1) == 1).all(), "a big tile with no box, or boxed twice"
    assert len(found) == len(tiles), "a box on no tile, or one spanning several tiles"
