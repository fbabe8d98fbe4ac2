"""The synthetic scene renderer: determinism, exact labels, and truth hands consistent with the labels."""

from __future__ import annotations

import itertools
from collections import Counter
from functools import cache

import cv2
import numpy as np
import pytest

from datasets.synth import SceneOptions, render_scene
from datasets.synth.faces import HONOUR_KEYS
from datasets.synth.hands import is_winning_shape, random_hand
from datasets.synth.look import TEX_H, TEX_W
from scoring.hand import MeldKind, concealed_count, tile_count
from scoring.tiles import CLASS_NAMES, suit_of
from vision.detections import BACK, DETECTOR_CLASSES, HONOUR

pytestmark = pytest.mark.slow

BACKGROUND = (255, 0, 255)  # no tile, back or ink colour comes near pure magenta
PLAIN = SceneOptions(photo=False, props=False, shadows=False, plain_table=BACKGROUND, honour_p=0.5)
SIZE = (640, 480)


@cache
def plain_scene(index: int, clutter: bool = True):
    options = SceneOptions(**{**PLAIN.__dict__, "clutter": clutter})
    return render_scene(11, index, (960, 720), options=options)


@cache
def photo_scene(index: int):
    return render_scene(5, index, SIZE)


def test_same_seed_and_index_give_the_same_scene() -> None:
    first, second = render_scene(3, 7, SIZE), render_scene(3, 7, SIZE)
    assert first.boxes == second.boxes
    assert first.hand == second.hand
    assert np.array_equal(first.image, second.image)
    assert first.yolo_lines() == second.yolo_lines()


def test_a_generator_can_be_passed_instead_of_a_seed() -> None:
    first = render_scene(np.random.default_rng([3, 7]), 7, SIZE)
    assert first.boxes == render_scene(3, 7, SIZE).boxes


def test_other_indices_give_other_scenes() -> None:
    hands = {render_scene(3, i, SIZE).hand for i in range(4)}
    assert len(hands) == 4


@pytest.mark.parametrize("index", range(6))
def test_every_box_is_inside_the_image_and_not_empty(index: int) -> None:
    scene = photo_scene(index)
    assert scene.image.shape == (SIZE[1], SIZE[0], 3) and scene.image.dtype == np.uint8
    for box in scene.boxes:
        x1, y1, x2, y2 = box.box
        assert 0 <= x1 < x2 <= SIZE[0] and 0 <= y1 < y2 <= SIZE[1], box
        assert 0 <= box.class_id < len(DETECTOR_CLASSES)
    for line in scene.yolo_lines().splitlines():
        cls, *values = line.split()
        assert 0 <= int(cls) < 29 and all(0 <= float(v) <= 1 for v in values)


@pytest.mark.parametrize("index", range(8))
def test_hand_and_melds_in_the_labels_are_the_truth_hand(index: int) -> None:
    scene = photo_scene(index)
    hand = scene.hand
    in_hand = [b for b in scene.boxes if b.role == "hand"]
    assert Counter(b.class_id for b in in_hand) == Counter(hand.concealed)
    assert [b for b in in_hand if b.win] and all(
        b.tile == CLASS_NAMES[hand.win_tile] for b in in_hand if b.win
    )
    assert sum(b.win for b in in_hand) == 1
    for group, meld in enumerate(hand.melds):
        tiles = [b for b in scene.boxes if b.role == "meld" and b.group == group]
        assert len(tiles) == meld.kind.size
        assert all(b.tile == CLASS_NAMES[meld.tile] for b in tiles)
        faces = [b.class_id for b in tiles if b.class_id != BACK]
        assert set(faces) <= {meld.tile}
        backs = len(tiles) - len(faces)
        assert backs == 0 or (meld.kind is MeldKind.KONG_CONCEALED and backs == 2)
    assert not [b for b in scene.boxes if b.role == "meld" and b.group >= len(hand.melds)]
    # every tile of the truth hand is labelled once (concealed-kong backs included)
    shown = Counter(CLASS_NAMES.index(b.tile) for b in scene.boxes if b.role in ("hand", "meld"))
    assert shown == Counter(hand.all_tiles)


@pytest.mark.parametrize("index", range(6))
def test_boxes_are_tight_around_the_drawn_tiles(index: int) -> None:
    """On a plain table, no camera effects: every tile pixel is in a tile's outline, every outline edge
    touches its tile, and a face-up tile's box is its face (as the real photos are labelled), inside its
    outline."""
    scene = plain_scene(index)
    image = scene.image.astype(np.int16)
    foreground = np.abs(image - np.array(BACKGROUND, np.int16)).sum(axis=2) > 60
    covered = np.zeros_like(foreground)
    for ignored in scene.ignored:  # slivers of tiles too hidden or cut off to label
        x1, y1, x2, y2 = (int(v) for v in ignored)
        covered[max(0, y1 - 2) : y2 + 2, max(0, x1 - 2) : x2 + 2] = True
    shrunk = 0
    for box in scene.boxes:
        outline = box.outline
        x1, y1, x2, y2 = (int(v) for v in outline)
        covered[max(0, y1 - 2) : y2 + 2, max(0, x1 - 2) : x2 + 2] = True  # anti-aliased rims: 2 px
        inside = foreground[y1:y2, x1:x2]
        # each edge row / column of the outline (within a pixel) has tile pixels on it
        assert inside[:2].any() and inside[-2:].any() and inside[:, :2].any() and inside[:, -2:].any(), box
        bx1, by1, bx2, by2 = box.box
        assert x1 <= bx1 < bx2 <= outline[2] and y1 <= by1 < by2 <= outline[3], box
        if box.face is None:
            assert box.box == box.outline, box
            continue
        if box.face_visible >= 0.95:  # the whole face shows: its box is its corners' (less rounded corners)
            qx1, qy1, qx2, qy2 = (*np.min(box.face, axis=0), *np.max(box.face, axis=0))
            assert qx1 - 1.5 <= bx1 and qy1 - 1.5 <= by1 and bx2 <= qx2 + 1.5 and by2 <= qy2 + 1.5, box
            assert (bx2 - bx1) * (by2 - by1) >= 0.85 * (qx2 - qx1) * (qy2 - qy1), box
        if box.role == "hand" and box.face_visible >= 0.95:  # a standing tile shows its top too
            shrunk += (bx2 - bx1) * (by2 - by1) < 0.95 * (outline[2] - x1) * (outline[3] - y1)
    assert not (foreground & ~covered).any(), "tile pixels outside every outline"
    assert shrunk >= 1


@pytest.mark.parametrize("index", range(5))
def test_each_face_up_box_shows_the_tile_it_claims(index: int) -> None:
    """Rectify each visible face from the photo and match it against all faces of the scene's tile set."""
    scene = plain_scene(index)
    look = scene.extra["look"]
    keys = list(range(27)) + list(HONOUR_KEYS)
    templates = np.stack([_normalised(look.texture(k).levels[0][..., :3]) for k in keys])
    checked = 0
    for box in scene.boxes:
        if box.face is None:
            assert box.class_id == BACK
            continue
        quad = np.array(box.face, np.float32)
        width = max(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[3]))
        if width < 24 or box.face_visible < 0.9:
            continue  # too small or partly hidden to compare reliably
        src = quad - 0.5
        dst = np.array([[0, 0], [TEX_W, 0], [TEX_W, TEX_H], [0, TEX_H]], np.float32) - 0.5
        face = cv2.warpPerspective(scene.image, cv2.getPerspectiveTransform(src, dst), (TEX_W, TEX_H))
        scores = templates.reshape(len(keys), -1) @ _normalised(face.astype(np.float32)).reshape(-1)
        best = keys[int(np.argmax(scores))]
        assert (HONOUR if isinstance(best, str) else best) == box.class_id, (box, best)
        checked += 1
    assert checked >= 5


def _normalised(rgb: np.ndarray) -> np.ndarray:
    h, w = rgb.shape[:2]
    m = int(0.12 * w)
    inner = cv2.resize(rgb[m : h - m, m : w - m], (40, 56), interpolation=cv2.INTER_AREA).astype(np.float32)
    inner -= inner.mean()
    return inner / (np.linalg.norm(inner) + 1e-6)


def test_scene_parts_are_marked_and_clutter_can_be_turned_off() -> None:
    roles = Counter(b.role for i in range(6) for b in photo_scene(i).boxes)
    assert roles["hand"] >= 6 * 5
    assert set(roles) <= {"hand", "meld", "discard", "opponent", "wall", "stray"}
    assert len(set(roles) - {"hand", "meld"}) >= 2
    bare = plain_scene(0, clutter=False)
    assert {b.role for b in bare.boxes} <= {"hand", "meld"}


def test_honour_tiles_are_labelled_honour_and_never_in_the_hand() -> None:
    scenes = [render_scene(2, i, SIZE, options=SceneOptions(honour_p=1.0, photo=False)) for i in range(6)]
    honours = [b for s in scenes for b in s.boxes if b.class_id == HONOUR]
    assert honours and all(b.tile in HONOUR_KEYS and b.role not in ("hand", "meld") for b in honours)
    none = [
        b
        for i in range(4)
        for b in render_scene(2, i, SIZE, options=SceneOptions(honour_p=0.0)).boxes
        if b.class_id == HONOUR
    ]
    assert not none


@pytest.mark.parametrize("seed", range(40))
def test_random_hands_are_sichuan_hands(seed: int) -> None:
    plan = random_hand(np.random.default_rng(seed), winning_p=0.9)
    tiles = plan.hand.all_tiles
    assert len({suit_of(t) for t in tiles}) <= 2
    assert max(Counter(tiles).values()) <= 4
    assert len(tiles) == tile_count(plan.hand.kong_count)
    assert len(plan.hand.concealed) == concealed_count(len(plan.hand.melds))
    assert plan.hand.win_tile in plan.hand.concealed
    assert plan.winning == is_winning_shape(plan.hand.concealed)


def test_most_hands_are_winning_shapes() -> None:
    plans = [random_hand(np.random.default_rng(seed)) for seed in range(200)]
    assert sum(p.winning for p in plans) >= 180


def test_the_rules_engine_agrees_which_hands_win() -> None:
    """Cross-check with ``scoring`` (when it is there): the renderer itself does not depend on it."""
    scoring_score = pytest.importorskip("scoring.score")
    for seed in range(150):
        plan = random_hand(np.random.default_rng(seed), winning_p=0.8)
        result = scoring_score.score(plan.hand)
        assert result.valid == plan.winning, (plan.hand.to_json(), result.error)


@pytest.mark.parametrize("index", range(6))
def test_faces_are_never_mirrored(index: int) -> None:
    """A face's corners (top-left, top-right, bottom-right, bottom-left) always run clockwise on screen."""
    for box in photo_scene(index).boxes:
        if box.face is None:
            continue
        quad = np.array(box.face)
        x, y = quad[:, 0], quad[:, 1]
        signed_area = float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))
        assert signed_area > 0, box


def test_exif_orientation_6_stores_the_scene_turned_and_reads_back_upright() -> None:
    import io

    from PIL import Image

    from datasets.synth.writer import encode_jpeg
    from vision.images import load_photo

    scene = render_scene(4, 2, (320, 240), (), SceneOptions(size=(320, 240)))
    data = encode_jpeg(scene, 6)
    with Image.open(io.BytesIO(data)) as stored:
        assert stored.size == (240, 320)  # as the sensor wrote it
        assert stored.getexif().get(0x0112) == 6
    upright = load_photo(data)
    assert upright.size == (320, 240)
    difference = np.abs(upright.pixels.astype(int) - scene.image.astype(int)).mean()
    assert difference < 8  # the same picture, up to JPEG loss
    with pytest.raises(ValueError, match="not supported"):
        encode_jpeg(scene, 3)


def test_fill_sets_how_much_of_the_frame_the_hand_spans() -> None:
    def span(fill: tuple[float, float]) -> float:
        scene = render_scene(8, 1, (1280, 960), (), SceneOptions(size=(1280, 960), fill=fill, clutter=False))
        mine = np.array([b.box for b in scene.boxes if b.role in ("hand", "meld")])
        return float(max(np.ptp(mine[:, [0, 2]]) / 1280, np.ptp(mine[:, [1, 3]]) / 960))

    assert span((0.25, 0.25)) < span((0.9, 0.9))


def test_scenes_record_the_camera_blur_and_the_tile_size() -> None:
    """``scenes.jsonl`` says how blurred each photo is and how wide its tiles are, so a benchmark can tell
    misreadings of a blurred photo from others; a plain render records no camera."""
    scene = photo_scene(0)
    record = scene.to_json("a.jpg")
    photo = record["photo"]
    assert isinstance(photo, dict) and scene.photo is not None
    mine = [b.box for b in scene.boxes if b.role == "hand"]
    widths = sorted(min(x2 - x1, y2 - y1) for x1, y1, x2, y2 in mine)
    assert 0.5 * widths[0] <= record["tile_px"] <= 2 * widths[-1]  # type: ignore[operator]
    # the combined blur is at least each of its parts
    assert photo["blur_px"] >= photo["blur_sigma"] and photo["blur_px"] >= photo["motion_px"] / 12**0.5 - 0.01
    assert photo["jpeg_quality"] == scene.jpeg_quality
    assert "photo" not in plain_scene(0).to_json("b.jpg")


@pytest.mark.parametrize("win_apart", [False, True])
def test_a_packed_row_touches_edge_to_edge_and_leaves_the_rest_of_the_layout_as_it_was(
    win_apart: bool,
) -> None:
    from datasets.synth.layout import STAND, TileDims, player_layout

    dims = TileDims(26.0, 35.0, 20.0)
    plan = random_hand(np.random.default_rng(4))
    loose = player_layout(np.random.default_rng(9), plan, dims, STAND, win_apart, 30.0)
    packed = player_layout(np.random.default_rng(9), plan, dims, STAND, win_apart, 30.0, packed=True)
    row = [t for t in packed.tiles if t.role == "hand"]
    steps = np.diff([t.x for t in row])
    touching = steps[:-1] if win_apart else steps
    assert np.allclose(touching, dims.width)
    if win_apart:
        assert steps[-1] > dims.width * 1.25  # the winning tile still stands apart
    assert np.all(np.diff([t.x for t in loose.tiles if t.role == "hand"])[: len(touching)] > dims.width)
    assert [(t.key, t.y, t.yaw) for t in loose.tiles] == [(t.key, t.y, t.yaw) for t in packed.tiles]


def test_packed_scenes_stand_their_rows_touching() -> None:
    scene = render_scene(
        2, 0, (960, 720), options=SceneOptions(**{**PLAIN.__dict__, "packed": True, "hand_pose": "stand"})
    )
    # the winning tile stands in the row unless the scene sets it apart
    in_row = [b for b in scene.boxes if b.role == "hand" and not (b.win and scene.win_apart)]
    hand = sorted(in_row, key=lambda b: b.box[0])
    gaps = [right.box[0] - left.box[2] for left, right in itertools.pairwise(hand)]
    assert scene.hand_pose == "stand" and max(gaps) <= 0.0  # neighbours' boxes meet or overlap


def test_a_calibration_scene_lays_out_each_suited_tile_once_in_three_rows() -> None:
    from datasets.synth.scene import SceneOptions, render_scene

    scene = render_scene(3, 0, (800, 600), options=SceneOptions(size=(800, 600), calibration=True, style=7))
    assert scene.hand is None and scene.tile_source == "procedural-7"
    suited = sorted(box.class_id for box in scene.boxes if box.class_id < 27)
    assert suited == list(range(27))
    assert all(box.class_id == 27 for box in scene.boxes if box.class_id >= 27)  # the fourth row's back
    data = scene.to_json("x.jpg")
    assert data["hand"] is None and data["layout"] in ("upright", "turned")
    centres = {
        box.class_id: ((box.box[0] + box.box[2]) / 2, (box.box[1] + box.box[3]) / 2) for box in scene.boxes
    }
    for r in range(3):  # each suit's nine lie on a line, 1 to 9 in order along it
        row = np.array([centres[9 * r + c] for c in range(9)])
        singular = np.linalg.svd(row - row.mean(axis=0), compute_uv=False)
        assert singular[1] < 0.1 * singular[0]
        steps = np.diff(row, axis=0)
        assert (steps @ steps[0] > 0).all()


def test_a_flower_four_changes_the_four_dots_alone() -> None:
    from datasets.synth.look import FOUR_DOTS, random_look

    plain = random_look(np.random.default_rng(1), (), 0.0, style=5)
    flower = random_look(np.random.default_rng(1), (), 0.0, style=5, flower_four=True)
    assert np.array_equal(plain.ink(FOUR_DOTS - 1), flower.ink(FOUR_DOTS - 1))
    changed = plain.ink(FOUR_DOTS) != flower.ink(FOUR_DOTS)
    assert changed.any() and changed.mean() < 0.1  # a small mark in the middle


def _set_of(scene) -> tuple[object, ...]:
    """What makes a scene's set the set it is: size, body, back, inks and red fives."""
    look = scene.extra["look"]
    return (
        look.dims,
        look.body,
        look.back,
        look.source,
        look.style_id,
        look.red_five,
        look.ink_gain.tobytes(),
    )


def test_a_set_seed_shows_one_set_in_every_scene_and_its_layout() -> None:
    small = SceneOptions(**{**PLAIN.__dict__, "clutter": False})
    one_set = SceneOptions(**{**small.__dict__, "set_seed": 7})
    own = [render_scene(3, index, (320, 240), options=small) for index in range(3)]
    shared = [render_scene(3, index, (320, 240), options=one_set) for index in range(3)]
    layout = render_scene(4, 0, (320, 240), options=SceneOptions(**{**one_set.__dict__, "calibration": True}))
    assert len({_set_of(scene) for scene in own}) == 3  # each scene draws its own set
    assert {_set_of(scene) for scene in [*shared, layout]} == {_set_of(shared[0])}
    other = render_scene(3, 0, (320, 240), options=SceneOptions(**{**small.__dict__, "set_seed": 8}))
    assert _set_of(other) != _set_of(shared[0])
    # the scenes are what their seeds make them but for the set: the same hands, placed alike
    assert [scene.hand for scene in shared] == [scene.hand for scene in own]
    assert [b.role for b in shared[1].boxes] == [b.role for b in own[1].boxes]


def test_label_boxes_other_than_face_or_outline_are_refused(tmp_path) -> None:
    from datasets.labels import DatasetError
    from datasets.synth.writer import write_dataset

    scene = plain_scene(0)
    assert scene.yolo_lines("outline") != scene.yolo_lines("face")
    with pytest.raises(ValueError, match="face, outline"):
        scene.yolo_lines("tight")
    with pytest.raises(DatasetError, match="face, outline"):
        write_dataset(tmp_path / "x", 1, 0, label_boxes="tight", progress=False)
    assert not (tmp_path / "x").exists()  # refused before anything is written


def test_a_scene_records_whether_its_fives_are_red() -> None:
    records = [
        render_scene(48028, 0, (320, 240), (), SceneOptions(size=(320, 240), kind=kind)).to_json("a")
        for kind in ("loose", "empty")
    ]
    assert isinstance(records[0]["red_fives"], bool) and "red_fives" not in records[1]
