"""The live benchmark, through ``read_video``: a video of a winning scene held steady locks its hand, counted
from the first steady frame; every frame read alone for the comparison."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from bench_loader import load_benchmark, write_scenes

from vision.detect.detector import DEFAULT_WEIGHTS, Detector

pytestmark = pytest.mark.skipif(not DEFAULT_WEIGHTS.is_file(), reason="no shipped model in models/")

bench = load_benchmark("bench_live")


def test_a_video_is_read_frame_by_frame_and_its_lock_judged_against_the_scene(tmp_path: Path) -> None:
    scenes = write_scenes(tmp_path, 3)
    rows = [json.loads(line) for line in (scenes / "scenes.jsonl").read_text().splitlines()]
    row = next(r for r in rows if r["winning"])
    frames = bench.video_images(scenes, row, (640, 480), 2, 4, 0)
    assert len(frames) == 6 and all(f.shape == (480, 640, 3) for f in frames)
    result = bench.read_video(frames, row, Detector(), hold=2, shaken=2, single=True)
    assert len(result.single_exact) == 6 and result.seconds_per_frame > 0
    assert result.right == (bench.canonical(result.locked) == bench.canonical(row["hand"]))
    assert result.shown == (
        result.locked is not None and bench.canonical(result.locked) == bench.canonical(bench.shown_hand(row))
    )
    if result.locked is None:
        assert result.why in ("no_hand", "changing", "win_tile_not_apart", "not_a_win")
        assert result.frames_to_lock is None
    else:
        assert result.why is None and 0 <= result.frames_to_lock <= 4


def test_a_hand_is_the_same_whatever_order_its_melds_are_listed_in() -> None:
    pong, kong = {"type": "pong", "tile": "2p"}, {"type": "kong_exposed", "tile": "5s"}
    one = {"concealed": "123m44p", "win_tile": "4p", "melds": [pong, kong]}
    assert bench.canonical(one) == bench.canonical({**one, "melds": [kong, pong]})
    assert (
        bench.canonical(one) != bench.canonical({**one, "win_tile": "1m"}) and bench.canonical(None) is None
    )


def test_a_concealed_kong_laid_face_up_is_shown_as_an_exposed_one() -> None:
    hand = {
        "concealed": "11s",
        "win_tile": "1s",
        "melds": [{"type": "kong_concealed", "tile": "5p"}, {"type": "kong_concealed", "tile": "3s"}],
    }
    faces_up = [{"cls": 13, "role": "meld", "group": 0} for _ in range(4)]
    backs_out = [{"cls": c, "role": "meld", "group": 1} for c in (27, 20, 20, 27)]
    shown = bench.shown_hand({"hand": hand, "boxes": [*faces_up, *backs_out, {"cls": 27, "role": "stray"}]})
    assert shown["melds"] == [
        {"type": "kong_exposed", "tile": "5p"},
        {"type": "kong_concealed", "tile": "3s"},
    ]
    assert shown["concealed"] == "11s" and hand["melds"][0]["type"] == "kong_concealed"  # the truth kept


def test_a_frame_is_sent_as_the_page_sends_it_scaled_down_to_the_side_asked_for_never_up() -> None:
    from PIL import Image

    frame = np.zeros((720, 1280, 3), np.uint8)
    for side, size in ((640, (640, 360)), (1280, (1280, 720)), (1600, (1280, 720))):
        data = bench.sent(frame, side)
        assert data[:2] == b"\xff\xd8" and Image.open(io.BytesIO(data)).size == size
