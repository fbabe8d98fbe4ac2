"""Classifier crops rendered without a scene (datasets.synth.face_crops) and their place in a crop dataset."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from datasets.crops import write_rendered_crops
from datasets.synth import face_crops
from datasets.synth.face_crops import _photograph, _Row, rendered_crops
from scoring.tiles import CLASS_NAMES
from vision.contract import CLASSIFIER_CLASSES, CROP_MARGIN


def test_crops_are_square_uint8_of_classifier_classes_and_repeat_with_their_seed() -> None:
    first = list(rendered_crops(30, seed=4, size=48))
    again = list(rendered_crops(30, seed=4, size=48))
    other = list(rendered_crops(30, seed=5, size=48))
    assert len(first) == 30
    assert all(name in CLASSIFIER_CLASSES and name != "none" for name, _ in first)
    assert all(crop.shape == (48, 48, 3) and crop.dtype == np.uint8 for _, crop in first)
    assert [n for n, _ in first] == [n for n, _ in again]
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for (_, a), (_, b) in zip(first, other, strict=True))


def test_every_tile_class_is_drawn_and_characters_twice_as_often() -> None:
    names = Counter(name for name, _ in rendered_crops(600, seed=1, size=16))
    assert set(names) == set(CLASSIFIER_CLASSES) - {"none"}
    per_suit = {
        suit: sum(n for name, n in names.items() if name in CLASS_NAMES and name[0] == suit) for suit in "mps"
    }
    assert 1.6 < per_suit["m"] / per_suit["p"] < 2.5
    assert 1.6 < per_suit["m"] / per_suit["s"] < 2.5


def test_the_tile_is_cut_as_a_box_is_upright_and_never_mirrored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(face_crops, "TILTED_ROWS", 0.0)
    # a white tile outline on a black canvas, its top-left quarter red
    canvas = np.zeros((300, 400, 3), np.float32)
    canvas[100:200, 150:230] = 255
    canvas[100:150, 150:190] = (255, 0, 0)
    quad = np.array([[150, 100], [230, 100], [230, 200], [150, 200]], np.float32)
    for seed in range(5):
        crop = _photograph(np.random.default_rng(seed), _Row(canvas, quad), 64).astype(int)
        inner = round(64 * (CROP_MARGIN / (1 + 2 * CROP_MARGIN))) + 4  # the margin, and a little more
        tile = crop[inner:-inner, inner:-inner]
        assert (tile.max(axis=2) > 100).mean() > 0.75  # the tile fills most of the crop inside its margins
        corners = (crop[:3, :3], crop[:3, -3:], crop[-3:, :3], crop[-3:, -3:])
        assert min(corner.max(axis=2).mean() for corner in corners) < 60  # the table shows in a corner
        red = (crop[..., 0] > 150) & (crop[..., 1] < 100)
        rows, cols = np.nonzero(red)
        assert rows.mean() < 32 and cols.mean() < 32  # the red quarter stays top left


def _green_in_crops(tilted: float, monkeypatch: pytest.MonkeyPatch) -> float:
    """The mean share of a crop taken by the green neighbours of a white tile, touching it in a row."""
    monkeypatch.setattr(face_crops, "TILTED_ROWS", tilted)
    canvas = np.zeros((300, 400, 3), np.float32)
    canvas[100:200, 70:310] = (0, 255, 0)
    canvas[100:200, 150:230] = 255
    quad = np.array([[150, 100], [230, 100], [230, 200], [150, 200]], np.float32)
    greens = []
    for seed in range(16):
        crop = _photograph(np.random.default_rng(seed), _Row(canvas, quad), 64).astype(int)
        greens.append(((crop[..., 1] > 120) & (crop[..., 0] < 80)).mean())
        assert (crop.min(axis=2) > 120)[28:36, 28:36].mean() > 0.9  # the white tile at the middle
    return float(np.mean(greens))


def test_the_box_of_a_tile_in_a_tilted_row_takes_in_more_of_its_neighbours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    level = _green_in_crops(0.0, monkeypatch)
    tilted = _green_in_crops(1.0, monkeypatch)
    assert tilted > level + 0.05


def test_faces_are_drawn_without_any_cjk_font(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("datasets.synth.faces.cjk_fonts", lambda: ())
    crops = list(rendered_crops(12, seed=2, size=32))
    assert len(crops) == 12 and all(crop.std() > 5 for _, crop in crops)


def test_rendered_crops_are_written_as_training_crops_turned_like_cut_ones(tmp_path: Path) -> None:
    counts = write_rendered_crops(tmp_path, rendered_crops(40, seed=3, size=32), seed=3)
    files = sorted((tmp_path / "train").glob("*/rendered_3_*.png"), key=lambda path: path.name)
    assert sum(counts.values()) == 40 == len(files)
    assert counts == Counter(path.parent.name for path in files)
    assert not (tmp_path / "val").exists()
    turns = []
    for path, (name, crop) in zip(files, rendered_crops(40, seed=3, size=32), strict=True):
        assert path.parent.name == name
        written = np.asarray(Image.open(path))
        turns.append(
            next(k for k in range(4) if np.array_equal(written, np.rot90(crop, k)))
        )  # never mirrored
    assert set(turns) > {0}  # quarter turns, as crops cut from photos


def test_art_faces_are_used_where_a_set_has_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from datasets.synth.art import ArtSet
    from datasets.synth.look import TEX_H, TEX_W

    solid = np.zeros((TEX_H, TEX_W, 4), np.uint8)
    solid[..., 1] = solid[..., 3] = 255  # an all-green face: premultiplied, opaque
    art = ArtSet("green", {key: solid for key in range(27)}, body=None, back=None)
    look = face_crops._Look(np.random.default_rng(0), [art], art_p=1.0, red_five_p=0.0)
    assert look.face(3)[TEX_H // 2, TEX_W // 2, 1] > 200  # the set's face
    assert look.face("E")[..., 3].max() > 0  # an honour the set lacks: procedural


def test_red_fives_print_a_five_in_red_and_are_labelled_the_plain_five() -> None:
    plain = list(rendered_crops(27, seed=8, size=48, red_five_p=0.0, classes=("m5", "p5", "s5")))
    red = list(rendered_crops(27, seed=8, size=48, red_five_p=1.0, classes=("m5", "p5", "s5")))
    assert [n for n, _ in plain] == [n for n, _ in red] and {n for n, _ in red} <= {"m5", "p5", "s5"}

    def redness(crops: list[tuple[str, np.ndarray]]) -> float:
        rgb = np.stack([c for _, c in crops]).astype(np.float32)
        return float((rgb[..., 0] - rgb[..., 1:].mean(-1)).clip(0).mean())

    assert redness(red) > redness(plain) + 3  # the same tiles, their ink turned red


def test_sets_in_one_ink_print_every_face_in_it_and_leave_other_sets_as_they_were() -> None:
    from datasets.synth.look import random_one_ink

    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    assert random_one_ink(rng, 0.0) is None and rng.bit_generator.state == state  # nothing drawn at 0

    inks = set()
    for seed in range(12):  # inks red in most, blue in seed 8's
        look = face_crops._Look(np.random.default_rng(seed), [], art_p=0.0, red_five_p=0.0, one_ink_p=1.0)
        assert look.one_ink is not None
        ink = np.asarray(look.one_ink, np.float32)
        inks.add(int(np.argmax(ink)) if np.ptp(ink) > 60 else -1)  # its main channel, -1 for black
        for key in (2, 12, 23):  # 3m, 4p, 6s: faces that print in two or three colours in most sets
            face = look.face(key)[..., :3].reshape(-1, 3)
            darkest = face[face.sum(-1) <= np.percentile(face.sum(-1), 3)].mean(0)
            cosine = float(darkest @ ink / (np.linalg.norm(darkest) * np.linalg.norm(ink)))
            assert cosine > 0.97, (seed, key, darkest, ink)
    assert len(inks) >= 2  # red and other inks


def test_in_ink_keeps_the_inks_shape_and_makes_it_red() -> None:
    from datasets.synth.ink import Ink, in_ink

    ink = Ink(40, 50)
    ink.circle(20, 25, 10, (20, 140, 70))  # a green dot
    red = in_ink(ink.rgba, (210, 30, 40))
    assert np.array_equal(red[..., 3], ink.rgba[..., 3])  # the same shape and coverage
    centre = red[25, 20]
    assert centre[0] > 150 and centre[1] < 90 and centre[2] < 90


def test_held_out_art_sets_are_never_drawn_unless_asked_for(tmp_path: Path) -> None:
    from datasets.synth import art

    for name in ("kept", art.HELD_OUT[0]):
        folder = tmp_path / name
        folder.mkdir()
        for face in CLASS_NAMES:
            Image.new("RGBA", (30, 40), (0, 0, 0, 0)).save(folder / f"{face}.png")
    assert [s.name for s in art.discover([str(tmp_path)])] == ["kept"]
    assert [s.name for s in art.discover([str(tmp_path)], held_out=True)] == [art.HELD_OUT[0]]
    with pytest.raises(art.ArtError, match="held-out"):
        art.discover([str(tmp_path / "kept")], held_out=True)
    with pytest.raises(art.ArtError, match="not held out"):
        art.discover([str(tmp_path / art.HELD_OUT[0])])


def test_rendered_crops_of_chosen_classes_are_written(tmp_path: Path) -> None:
    counts = write_rendered_crops(
        tmp_path, rendered_crops(30, seed=4, size=32, red_five_p=1.0, classes=("m5", "s5")), seed=4
    )
    assert sum(counts.values()) == 30 and set(counts) <= {"m5", "s5"}
    assert {p.name for p in (tmp_path / "train").iterdir()} == set(counts)


def test_crops_mix_links_shares_and_repeats_of_other_crop_folders(tmp_path: Path) -> None:
    import smj

    for folder, names in (("a", ("rendered_1.png", "rendered_2.png", "real_1.png")), ("b", ("x.png",))):
        for split in ("train", "val"):
            (tmp_path / folder / split / "m1").mkdir(parents=True)
            for name in names:
                Image.new("RGB", (8, 8)).save(tmp_path / folder / split / "m1" / name)
    out = tmp_path / "mix"
    argv = ["dataset", "crops-mix", f"{tmp_path / 'a'}:1:3:!rendered", f"{tmp_path / 'b'}", "--val"]
    assert smj.main([*argv, str(tmp_path / "b"), "--out", str(out)]) == 0
    linked = sorted(p.name for p in (out / "train" / "m1").iterdir())
    assert linked == ["0_0_real_1.png", "0_1_real_1.png", "0_2_real_1.png", "1_0_x.png"]
    assert all(p.is_symlink() for p in (out / "train" / "m1").iterdir())
    assert [p.name for p in (out / "val" / "m1").iterdir()] == ["x.png"]
    assert (
        smj.main(["dataset", "crops-mix", f"{tmp_path / 'a'}:2", "--val", "x", "--out", str(tmp_path / "o")])
        == 2
    )
    # a part without crops is refused before anything is linked
    parts = [str(tmp_path / "a"), str(tmp_path / "missing")]
    argv = ["dataset", "crops-mix", *parts, "--val", str(tmp_path / "b"), "--out", str(tmp_path / "refused")]
    assert smj.main(argv) == 2
    assert not (tmp_path / "refused").exists() or not any((tmp_path / "refused").rglob("*.png"))
