"""``smj dataset synth``: the files it writes, determinism across workers, and --art folders."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import yaml
from shared_data import SHARED, needs_shared

from datasets.synth import SceneOptions, render_scene
from datasets.synth.art import ArtError, discover
from datasets.synth.cli import register_synth
from vision.detections import DETECTOR_CLASSES

pytestmark = pytest.mark.slow

TILEART = SHARED / "data" / "tileart"
needs_tileart = needs_shared("data", "tileart")


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="smj dataset")
    register_synth(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["synth", *argv])
    return int(args.func(args))


def test_cli_writes_images_labels_data_yaml_and_scenes(tmp_path: Path) -> None:
    out = tmp_path / "synth"
    assert run(["--out", str(out), "--n", "3", "--seed", "5", "--size", "320x240", "--quiet"]) == 0
    images = sorted((out / "images").glob("*.jpg"))
    labels = sorted((out / "labels").glob("*.txt"))
    assert len(images) == 3 and [p.stem for p in labels] == [p.stem for p in images]
    data = yaml.safe_load((out / "data.yaml").read_text())
    assert [data["names"][i] for i in range(len(DETECTOR_CLASSES))] == list(DETECTOR_CLASSES)
    assert (out / data["train"]).is_dir() and "val" not in data  # never val: images, the training images
    scenes = [json.loads(line) for line in (out / "scenes.jsonl").read_text().splitlines()]
    assert [s["image"] for s in scenes] == [f"images/{p.name}" for p in images]
    for scene, label in zip(scenes, labels, strict=True):
        assert scene["width"] == 320 and scene["height"] == 240
        assert set(scene["hand"]) == {"concealed", "win_tile", "melds"}
        assert isinstance(scene["win_apart"], bool)
        assert len(scene["boxes"]) == len(label.read_text().splitlines())
        for box in scene["boxes"]:  # all of the tile that shows holds its face
            x0, y0, x1, y1 = box["box"]
            ox0, oy0, ox1, oy1 = box["outline"]
            assert ox0 <= x0 < x1 <= ox1 and oy0 <= y0 < y1 <= oy1, box


def test_a_set_seed_renders_one_set_in_every_photo_and_says_which(tmp_path: Path) -> None:
    common = ["--n", "4", "--seed", "5", "--size", "320x240", "--style", "5", "--quiet"]
    assert run(["--out", str(tmp_path / "own"), *common]) == 0
    assert run(["--out", str(tmp_path / "one"), *common, "--set-seed", "7"]) == 0
    layout = ["--out", str(tmp_path / "layout"), "--n", "1", "--seed", "6", "--size", "320x240"]
    assert run([*layout, "--style", "5", "--calibration", "--set-seed", "7", "--quiet"]) == 0
    own = [json.loads(line) for line in (tmp_path / "own" / "scenes.jsonl").read_text().splitlines()]
    one = [json.loads(line) for line in (tmp_path / "one" / "scenes.jsonl").read_text().splitlines()]
    taught = json.loads((tmp_path / "layout" / "scenes.jsonl").read_text())
    assert all("set_seed" not in scene for scene in own)
    assert {scene["set_seed"] for scene in [*one, taught]} == {7}
    assert len({scene["red_fives"] for scene in [*one, taught]}) == 1
    assert [scene["hand"] for scene in one] == [scene["hand"] for scene in own]  # the same scenes' hands
    pixels = [(tmp_path / d / "images" / "synth_5_000001.jpg").read_bytes() for d in ("own", "one")]
    assert pixels[0] != pixels[1]  # in another set


def _label_boxes(folder: Path, scene: dict) -> list[list[float]]:
    """The label file's boxes of ``scene`` back in pixels (x1, y1, x2, y2)."""
    w, h = scene["width"], scene["height"]
    rows = (folder / "labels" / f"{Path(scene['image']).stem}.txt").read_text().splitlines()
    boxes = []
    for row in rows:
        _, cx, cy, bw, bh = (float(v) for v in row.split())
        boxes.append([(cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h])
    return boxes


def test_label_boxes_choose_between_a_tiles_face_and_all_of_it_that_shows(tmp_path: Path) -> None:
    """The labels box each face-up tile by its face (as the real photos are labelled) or, with
    ``--label-boxes outline``, by all of it that shows (as the shipped localiser draws tiles); the images and
    scenes.jsonl are the same either way."""
    common = ["--n", "2", "--seed", "12", "--size", "320x240", "--quiet"]
    assert run(["--out", str(tmp_path / "face"), *common]) == 0
    assert run(["--out", str(tmp_path / "outline"), "--label-boxes", "outline", *common]) == 0
    assert (tmp_path / "face" / "scenes.jsonl").read_bytes() == (
        tmp_path / "outline" / "scenes.jsonl"
    ).read_bytes()
    taller = 0
    for line in (tmp_path / "face" / "scenes.jsonl").read_text().splitlines():
        scene = json.loads(line)
        face, outline = _label_boxes(tmp_path / "face", scene), _label_boxes(tmp_path / "outline", scene)
        for truth, a, b in zip(scene["boxes"], face, outline, strict=True):
            assert a == pytest.approx(truth["box"], abs=0.05) and b == pytest.approx(
                truth["outline"], abs=0.05
            )
            taller += (b[3] - b[1]) > (a[3] - a[1]) + 1
    assert taller > 0  # a standing tile's top shows above its face
    with pytest.raises(SystemExit):
        run(["--out", str(tmp_path / "x"), "--label-boxes", "tight"])


def test_same_seed_same_dataset_whatever_the_workers(tmp_path: Path) -> None:
    common = ["--n", "4", "--seed", "9", "--size", "320x240", "--quiet"]
    assert run(["--out", str(tmp_path / "a"), "--workers", "1", *common]) == 0
    assert run(["--out", str(tmp_path / "b"), "--workers", "2", *common]) == 0
    for part in ["scenes.jsonl", *(f"labels/{p.name}" for p in (tmp_path / "a" / "labels").iterdir())]:
        assert (tmp_path / "a" / part).read_bytes() == (tmp_path / "b" / part).read_bytes(), part


def test_bad_arguments_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(["--out", str(tmp_path), "--size", "big"])
    assert run(["--out", str(tmp_path / "x"), "--art", str(tmp_path / "missing"), "--quiet"]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_procedural_only_without_art() -> None:
    scene = render_scene(1, 0, (320, 240))
    assert scene.tile_source.startswith("procedural")


@needs_tileart
def test_art_folders_are_found_and_used() -> None:
    sources = discover([str(TILEART)])
    kinds = {s.kind for s in sources}
    assert {"faces", "font", "sprite"} <= kinds
    used = {
        render_scene(1, i, (320, 240), sources, SceneOptions(art_p=1.0, photo=False)).tile_source
        for i in range(3)
    }
    assert not any(name.startswith("procedural") for name in used)


@needs_tileart
def test_cli_with_an_art_folder(tmp_path: Path) -> None:
    out = tmp_path / "art"
    argv = [
        "--out",
        str(out),
        "--n",
        "2",
        "--size",
        "320x240",
        "--art",
        str(TILEART / "lietxia"),
        "--art-p",
        "1",
        "--quiet",
    ]
    assert run(argv) == 0
    scenes = [json.loads(line) for line in (out / "scenes.jsonl").read_text().splitlines()]
    assert {s["tiles"] for s in scenes} == {"lietxia"}


def test_a_folder_without_art_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ArtError):
        discover([str(tmp_path)])


def test_a_folder_that_holds_scenes_is_refused_or_appended_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """scenes.jsonl holds the true hands of the earlier scenes: a second run never overwrites it."""
    import smj
    from datasets.labels import DatasetError
    from datasets.synth.writer import write_dataset

    out = tmp_path / "synth"
    common = ["--n", "2", "--size", "160x120", "--quiet"]
    assert run(["--out", str(out), "--seed", "1", *common]) == 0
    first = (out / "scenes.jsonl").read_text()
    assert smj.main(["dataset", "synth", "--out", str(out), "--seed", "2", *common]) == 2
    assert "already holds 2 scenes" in capsys.readouterr().err
    assert (out / "scenes.jsonl").read_text() == first
    with pytest.raises(DatasetError, match="seed 1 would overwrite 2 earlier scenes"):
        write_dataset(out, 2, 1, options=SceneOptions(size=(160, 120)), progress=False, append=True)
    write_dataset(out, 2, 2, options=SceneOptions(size=(160, 120)), progress=False, append=True)
    lines = (out / "scenes.jsonl").read_text().splitlines()
    assert "\n".join(lines[:2]) + "\n" == first and len(lines) == 4
    assert [json.loads(line)["image"] for line in lines[2:]] == [
        "images/synth_2_000000.jpg",
        "images/synth_2_000001.jpg",
    ]
    assert len(list((out / "images").glob("*.jpg"))) == 4


def test_smj_dataset_synth_appends_with_another_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import smj

    out = tmp_path / "synth"
    common = ["dataset", "synth", "--out", str(out), "--n", "2", "--size", "160x120", "--quiet"]
    assert smj.main([*common, "--seed", "1"]) == 0
    assert smj.main([*common, "--seed", "1", "--append"]) == 2  # the same scenes again: refused
    assert "would overwrite 2 earlier scenes" in capsys.readouterr().err
    assert smj.main([*common, "--seed", "2", "--append"]) == 0
    assert len((out / "scenes.jsonl").read_text().splitlines()) == 4


def test_win_apart_sets_the_winning_tile_apart_in_every_winning_hand_or_in_none(tmp_path: Path) -> None:
    common = ["--n", "6", "--seed", "9", "--size", "320x240", "--quiet"]
    assert run(["--out", str(tmp_path / "all"), *common, "--win-apart", "1"]) == 0
    assert run(["--out", str(tmp_path / "none"), *common, "--win-apart", "0"]) == 0
    every = [json.loads(line) for line in (tmp_path / "all" / "scenes.jsonl").read_text().splitlines()]
    never = [json.loads(line) for line in (tmp_path / "none" / "scenes.jsonl").read_text().splitlines()]
    assert any(s["winning"] for s in every)
    assert all(s["win_apart"] for s in every if s["winning"]) and not any(s["win_apart"] for s in never)
    assert [s["hand"] for s in every] == [s["hand"] for s in never]  # the same hands, laid otherwise
    with pytest.raises(SystemExit) as refused:
        run(["--out", str(tmp_path / "bad"), *common, "--win-apart", "1.5"])
    assert refused.value.code == 2 and not (tmp_path / "bad").exists()
