"""The set on the table: the layout a set is taught from named by place (and refused with what was seen), a
set's reading of a tile, and, end to end, a set whose 4 筒 the shipped classifier reads as 5 筒 taught from
one rendered photo of its layout and then reading a hand of it right, through ``smj set add`` and ``smj
score --set``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from set_builders import layout_and_hand
from smj_runner import run

from scoring.tiles import CLASS_NAMES
from vision.contract import CLASSIFIER_CLASSES, NONE
from vision.detect.tileset import Fusion, LayoutError, TileSet, name_layout
from vision.detections import BACK, HONOUR

W, H, GAP = 30.0, 40.0, 2.0


def _grid(rows: list[int], *, turned: bool = False) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Boxes of tiles laid in ``rows`` (tiles per row, top to bottom, rows 30 px apart), the classifier's
    probabilities reading each as the face its place names (the fourth row: a back), and those faces;
    ``turned``: the photo taken from across the table (the whole layout half turned)."""
    boxes, faces = [], []
    for r, count in enumerate(rows):
        for c in range(count):
            x, y = 100 + c * (W + GAP), 100 + r * (H + 30)
            boxes.append([x, y, x + W, y + H])
            faces.append(9 * r + c if r < 3 else BACK)
    array = np.array(boxes, np.float32)
    if turned:  # turned half round about the photo's centre (1000 x 1000)
        array = 1000 - array[:, [2, 3, 0, 1]]
    probs = np.full((len(faces), len(CLASSIFIER_CLASSES)), 0.01, np.float32)
    probs[np.arange(len(faces)), faces] = 0.7
    return array, probs / probs.sum(axis=1, keepdims=True), faces


def test_the_layout_is_named_by_place_either_way_up_with_its_variants() -> None:
    boxes, probs, faces = _grid([9, 9, 9, 1])
    layout = name_layout(boxes, probs)
    assert not layout.turned and layout.variants == 1
    assert [faces[t] for t in layout.tiles] == list(layout.faces)
    assert [CLASSIFIER_CLASSES[f] for f in layout.faces[:10]] == [*CLASS_NAMES[:9], "p1"]
    assert layout.faces[-1] == BACK
    turned_boxes, _, _ = _grid([9, 9, 9, 1], turned=True)
    turned = name_layout(turned_boxes, probs)
    assert turned.turned and [faces[t] for t in turned.tiles] == list(turned.faces)


def test_the_way_up_is_the_one_the_classifier_agrees_with() -> None:
    """Three rows of nine alone read the same both ways up but for the faces: the classifier says which."""
    boxes, probs, _ = _grid([9, 9, 9])
    upside_down = probs[::-1].copy()  # as if every tile's face were the one across the layout from it
    layout = name_layout(boxes, upside_down)
    assert layout.turned
    assert all(upside_down[t].argmax() == f for t, f in zip(layout.tiles, layout.faces, strict=True))


@pytest.mark.parametrize(
    ("rows", "seen"),
    [
        ([9, 9, 8], "found 26 tiles in rows of 9, 9, 8"),
        ([9, 9, 9, 9], "found 36 tiles in rows of 9, 9, 9, 9"),
        ([9, 8, 9, 1], "found 27 tiles in rows of 9, 9, 8, 1"),
        ([9, 9, 9, 6], "found 33 tiles in rows of 9, 9, 9, 6"),
    ],
)
def test_a_photo_that_is_not_the_layout_is_refused_saying_what_was_seen(rows: list[int], seen: str) -> None:
    boxes, probs, _ = _grid(rows)
    with pytest.raises(LayoutError, match=seen) as refused:
        name_layout(boxes, probs)
    assert "three rows of nine" in str(refused.value)


def test_a_row_of_one_suit_adds_to_a_set_and_boxes_read_as_no_tile_are_left_out_if_they_break_it() -> None:
    boxes, probs, _ = _grid([9])
    stray = np.array([[600, 600, 630, 640]], np.float32)
    none = np.zeros((1, len(CLASSIFIER_CLASSES)), np.float32)
    none[0, NONE] = 1.0
    layout = name_layout(np.concatenate([boxes, stray]), np.concatenate([probs, none]), ("p",))
    assert [CLASSIFIER_CLASSES[f] for f in layout.faces] == [f"p{rank}" for rank in range(1, 10)]
    assert 9 not in layout.tiles
    with pytest.raises(LayoutError, match="nine 筒"):
        name_layout(boxes[:8], probs[:8], ("p",))


def _unit(vectors: np.ndarray) -> np.ndarray:
    return (vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)).astype(np.float32)


def test_a_set_names_a_tile_by_its_nearest_face_and_leaves_honours_to_the_classifier() -> None:
    rng = np.random.default_rng(0)
    examples = _unit(rng.normal(size=(27, 64)))
    tile_set = TileSet.of("test", np.arange(27), examples)
    p4, p5 = CLASS_NAMES.index("p4"), CLASS_NAMES.index("p5")
    noise = _unit(rng.normal(size=64))
    near_p4 = _unit(0.6 * examples[p4] + 0.5 * examples[p5] + 0.45 * noise)  # nearer p4 (not sure of it)
    assert 0.5 < float(tile_set.similarities(near_p4[None, None])[0, p4]) < 0.8
    classifier = np.full(len(CLASSIFIER_CLASSES), 0.001, np.float32)
    classifier[p5] = 0.95
    read = tile_set.read(classifier[None], near_p4[None, None], Fusion.NEAREST)
    assert read[0].argmax() == p4 and read[0, :27].sum() == pytest.approx(classifier[:27].sum(), rel=1e-4)
    fused = tile_set.read(classifier[None], near_p4[None, None], Fusion.FUSED)
    assert fused[0].argmax() == p5  # the classifier's own belief weighs in

    honour = np.full(len(CLASSIFIER_CLASSES), 0.02, np.float32)
    honour[HONOUR] = 0.5
    far = _unit(rng.normal(size=64))
    kept = tile_set.read(honour[None], far[None, None])
    assert np.allclose(kept, honour[None])  # an honour the set can't name stays the classifier's call
    on_a_face = examples[p5]  # nearer p5 than any two faces are to each other: a tile, whatever it reads as
    taken = tile_set.read(honour[None], on_a_face[None, None])
    assert taken[0].argmax() == p5 and taken[0, :27].sum() == pytest.approx(1.0)


def test_a_set_needs_examples_of_known_classes() -> None:
    with pytest.raises(ValueError, match="no examples"):
        TileSet.of("empty", [], np.zeros((0, 4), np.float32))
    with pytest.raises(ValueError, match="classifier's classes"):
        TileSet.of("bad", [40], np.ones((1, 4), np.float32))


# --- end to end: a set the shipped classifier misreads (tests/set_builders.py) -------------------------


@pytest.fixture
def smj_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    import smj

    monkeypatch.setenv("SMJ_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    yield smj.main


@pytest.mark.slow
def test_a_set_taught_from_one_photo_reads_the_tile_the_classifier_misreads(
    smj_main: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout, hand, truth = layout_and_hand(tmp_path)
    assert "4" in str(truth["concealed"]).split("p")[0][-8:]  # the hand holds a 4 筒

    code, out, err = run(smj_main, capsys, "score", str(hand), "--json")  # type: ignore[arg-type]
    alone = json.loads(out)
    assert alone["hand"]["concealed"] != truth["concealed"]  # the 4 筒 read as a 5 筒

    code, out, err = run(smj_main, capsys, "set", "add", "flower", str(layout))  # type: ignore[arg-type]
    assert code == 0, err
    assert "stored 27 tiles" in out or "stored 28 tiles" in out
    assert "p4 (alone read as p5)" in out

    code, out, err = run(smj_main, capsys, "score", str(hand), "--set", "flower", "--json")  # type: ignore[arg-type]
    assert code == 0, err
    read = json.loads(out)
    assert read["hand"]["concealed"] == truth["concealed"]
    assert read["score"]["valid"]

    code, out, err = run(smj_main, capsys, "detect", str(hand), "--set", "flower", "--json")  # type: ignore[arg-type]
    tiles = [d["tile"] for d in json.loads(out)[0]["detections"]]
    assert "p4" in tiles


def test_set_commands_list_show_remove_and_refuse_what_they_cannot_do(
    smj_main: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from store import open_store
    from store.sets import Example, save_set

    rng = np.random.default_rng(1)
    examples = [
        Example(face, rng.integers(0, 255, (4, 32, 32, 3), np.uint8), _unit(rng.normal(size=(4, 8))))
        for face in ("m1", "m2", "back")
    ]
    save_set(open_store(), "home", examples, "layout.jpg", "model")
    code, out, _ = run(smj_main, capsys, "set", "list", "--json")  # type: ignore[arg-type]
    assert code == 0 and [s["name"] for s in json.loads(out)] == ["home"]
    sheet = tmp_path / "sheet.png"
    code, out, _ = run(smj_main, capsys, "set", "show", "home", "--out", str(sheet))  # type: ignore[arg-type]
    assert code == 0 and cv2.imread(str(sheet)) is not None
    code, _, err = run(smj_main, capsys, "set", "show", "away", "--out", str(sheet))  # type: ignore[arg-type]
    assert code == 2 and "no set named 'away'" in err
    code, _, err = run(
        smj_main,
        capsys,
        "set",
        "add",
        "x",
        str(Path(__file__).resolve().parents[2] / "examples" / "hand.jpg"),
    )  # type: ignore[arg-type]
    assert code == 2 and "in rows of" in err and "three rows of nine" in err
    code, out, _ = run(smj_main, capsys, "set", "remove", "home")  # type: ignore[arg-type]
    assert code == 0
    code, _, err = run(smj_main, capsys, "score", "--hand", "11122233344455m", "--set", "home")  # type: ignore[arg-type]
    assert code == 2 and "--set goes with a photo" in err


def test_a_face_the_set_has_lost_is_still_read_where_no_face_of_the_set_is_nearer() -> None:
    """A set whose only 4 筒 was renamed away: a tile near none of its faces may still read as 4 筒."""
    rng = np.random.default_rng(2)
    examples = _unit(rng.normal(size=(27, 64)))
    p4 = CLASS_NAMES.index("p4")
    faces = [face for face in range(27) if face != p4]
    tile_set = TileSet.of("lost", faces, examples[faces])
    classifier = np.full(len(CLASSIFIER_CLASSES), 0.001, np.float32)
    classifier[p4] = 0.95
    unlike_any = _unit(rng.normal(size=64))
    read = tile_set.read(classifier[None], unlike_any[None, None])
    assert read[0, :27].sum() == pytest.approx(classifier[:27].sum(), rel=1e-4)
    assert read[0, p4] > 0  # still possible
    like_p5 = examples[CLASS_NAMES.index("p5")]
    assert tile_set.read(classifier[None], like_p5[None, None])[0].argmax() == CLASS_NAMES.index("p5")
