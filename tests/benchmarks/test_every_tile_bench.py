"""The every-tile benchmark: recall of face-up tiles, false boxes, exact suited faces on any scene."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bench_loader import load_benchmark

from vision.detections import BACK

bench = load_benchmark("bench_every_tile")

ROW = {
    "boxes": [
        {"cls": 4, "box": [0, 0, 40, 60], "role": "hand"},
        {"cls": 13, "box": [100, 0, 140, 60], "role": "stray"},
        {"cls": BACK, "box": [200, 0, 240, 60], "role": "wall"},
    ],
    "ignored": [[300, 0, 340, 60]],
}


def test_a_face_up_tile_counts_as_found_by_a_box_at_iou_half_and_backs_are_not_asked_for() -> None:
    boxes = np.array([[2, 2, 40, 60], [200, 0, 240, 60]], np.float32)  # the 5m, and the back
    result = bench.judge(ROW, boxes, np.array([4, BACK]), 0.01)
    assert result.tiles == {"hand": 1, "stray": 1} and result.found == {"hand": 1}
    assert result.false_boxes == 0 and not result.exact_suited  # the 5p was missed


def test_a_tile_is_found_by_a_box_of_its_face_or_of_all_of_it_that_shows() -> None:
    """A standing tile's face is its lower part; a box of the whole tile (its top too) finds it as well."""
    row = {
        "boxes": [{"cls": 4, "box": [0, 30, 40, 90], "outline": [0, 0, 40, 90], "role": "hand"}],
        "ignored": [],
    }
    whole, face = np.array([[0, 0, 40, 88]], np.float32), np.array([[0, 32, 40, 90]], np.float32)
    for boxes in (whole, face):
        result = bench.judge(row, boxes, np.array([4]), 0.01)
        assert result.found == {"hand": 1} and result.false_boxes == 0 and result.exact_suited
    top = np.array([[0, 0, 40, 28]], np.float32)  # the tile's top alone: neither
    assert bench.judge(row, top, np.array([4]), 0.01).found == {}


def test_a_box_on_nothing_is_false_but_one_on_a_dont_care_outline_is_not() -> None:
    boxes = np.array([[0, 0, 40, 60], [100, 0, 140, 60], [300, 0, 340, 60], [500, 500, 540, 560]], np.float32)
    result = bench.judge(ROW, boxes, np.array([4, 13, 5, 6]), 0.01)
    assert result.false_boxes == 1  # the box at (500, 500); the one on the don't-care outline is not
    assert not result.exact_suited  # the two read on the outline and on nothing count as faces found
    clean = bench.judge(ROW, boxes[:2], np.array([4, 13]), 0.01)
    assert clean.exact_suited and clean.false_boxes == 0


def test_an_empty_table_read_as_empty_is_exact_and_clean() -> None:
    result = bench.judge({"boxes": [], "ignored": []}, np.zeros((0, 4), np.float32), np.zeros(0, int), 0.01)
    assert result.exact_suited and result.false_boxes == 0 and not result.tiles
    assert "no false box 1.000" in bench.summary([result])


def test_a_photo_refused_as_too_many_tiles_is_no_clean_photo_and_finds_nothing() -> None:
    empty = bench.refused({"boxes": [], "ignored": []}, 0.01)
    clean = bench.judge({"boxes": [], "ignored": []}, np.zeros((0, 4), np.float32), np.zeros(0, int), 0.01)
    line = bench.summary([empty, clean])
    assert "no false box 0.500" in line and "refused as too many tiles 1" in line
    assert "false boxes/photo 0.00" in line  # the refused photo's hundreds are not averaged in
    hand = bench.refused(ROW, 0.01)
    assert hand.tiles == {"hand": 1, "stray": 1} and hand.found == {} and not hand.exact_suited
    assert "refused" not in bench.summary([clean])


def test_the_command_measures_a_folder_and_refuses_one_without_scenes(tmp_path: Path) -> None:
    from datasets.synth.scene import SceneOptions
    from datasets.synth.writer import write_dataset

    write_dataset(
        tmp_path / "e", 2, seed=3, options=SceneOptions(size=(320, 240), kind="empty"), progress=False
    )
    assert bench.main([str(tmp_path / "e")]) == 0
    assert bench.main([str(tmp_path)]) == 2


def test_a_moved_image_is_named_in_one_line_by_every_benchmark_reading_scenes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scene whose image is gone (moved since its scenes.jsonl was written): each benchmark says which, in
    one line, exit 2, no traceback."""
    from datasets.synth.scene import SceneOptions
    from datasets.synth.writer import write_dataset

    folder = tmp_path / "moved"
    write_dataset(folder, 2, seed=3, options=SceneOptions(size=(320, 240)), progress=False)
    gone = sorted((folder / "images").iterdir())[1]
    gone.unlink()
    for name, argv in (
        ("bench_every_tile", [str(folder)]),
        ("bench_pipeline", [str(folder)]),
        ("bench_roles", [str(folder)]),
    ):
        assert load_benchmark(name).main(argv) == 2, name
        said = capsys.readouterr().err.strip()
        assert "\n" not in said and "Traceback" not in said, name
        assert said.startswith(name) and f"images/{gone.name}" in said and "scenes.jsonl:2" in said, said


def test_a_real_photo_s_strips_beyond_its_tiles_are_read_as_photos_of_no_tile() -> None:
    pixels = np.zeros((400, 600, 3), np.uint8)
    tiles = np.array([[200, 150, 240, 210], [250, 150, 290, 210]], np.float32)  # a row in the middle
    strips = bench.background_strips(pixels, tiles)
    # above (144 px), below (184 px), left (194 px) and right (304 px), each kept clear of the tiles by 6 px
    assert sorted(s.shape[:2] for s in strips) == [(144, 600), (184, 600), (400, 194), (400, 304)]
    narrow = bench.background_strips(pixels, np.array([[50, 50, 550, 350]], np.float32))
    assert narrow == []  # no strip as much as 96 px across
    assert [s.shape for s in bench.background_strips(pixels, np.zeros((0, 4), np.float32))] == [pixels.shape]


def test_the_benchmark_asked_for_nothing_says_what_to_give(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        bench.main([])
    assert stopped.value.code == 2 and "--real DIR" in capsys.readouterr().err
