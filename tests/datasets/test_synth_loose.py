"""Scenes of loose tiles, close-ups and empty tables (``datasets.synth.loose``): what a localiser must box."""

from __future__ import annotations

from collections import Counter
from functools import cache

import numpy as np
import pytest

from datasets.synth import SceneOptions, render_scene
from datasets.synth.boxes import SceneBox
from datasets.synth.layout import SIDE, UP, Placed
from datasets.synth.look import FIVES
from datasets.synth.loose import CLOSEUP_TILE_SHARE, split_side
from datasets.synth.props import TILE_LIKE, random_prop
from vision.detections import BACK

pytestmark = pytest.mark.slow

SIZE = (640, 480)


@cache
def scene(kind: str, index: int):
    return render_scene(21, index, SIZE, options=SceneOptions(kind=kind))


def test_loose_scenes_lay_a_red_five_set_s_fives_loose_beside_the_hand() -> None:
    red = [s for s in (scene("loose", i) for i in range(8)) if s.extra["look"].red_five is not None]
    assert len(red) >= 3
    for found in red:
        strays = Counter(b.class_id for b in found.boxes if b.role == "stray")
        assert sum(strays[five] >= 1 for five in FIVES) >= 2  # a five may lie hidden or cut off
        assert found.hand is not None  # the hand is still there, its labels as in any scene


def test_loose_scenes_hold_more_loose_tiles_than_hand_scenes_at_any_angle() -> None:
    loose = [sum(b.role == "stray" for b in scene("loose", i).boxes) for i in range(6)]
    plain = [sum(b.role == "stray" for b in scene("hand", i).boxes) for i in range(6)]
    assert sum(loose) > 3 * max(1, sum(plain))


def test_a_tile_on_its_long_edge_is_left_dont_care_and_a_sliver_too() -> None:
    def box(visible: float) -> SceneBox:
        return SceneBox(3, (10, 10, 40, 50), "stray", -1, "m4", False, None, visible, 0.0, (8, 8, 42, 52))

    tiles = [Placed(3, UP, 0, 0), Placed(3, SIDE, 0, 0), Placed(3, UP, 0, 0), Placed(3, UP, 0, 0)]
    boxes, ignored = split_side([box(0.9), box(0.9), box(0.1), None], tiles)
    assert boxes == (box(0.9),)
    assert ignored == ((8, 8, 42, 52), (8, 8, 42, 52))


def test_closeups_show_a_few_big_tiles_each_a_tenth_to_a_quarter_of_the_width() -> None:
    lo, hi = CLOSEUP_TILE_SHARE
    for index in range(5):
        found = scene("closeup", index)
        assert found.hand is None and 1 <= len(found.boxes) <= 16
        faces = [b for b in found.boxes if b.class_id != BACK and b.face_visible > 0.9]
        widths = [max(abs(b.face[1][0] - b.face[0][0]), abs(b.face[1][1] - b.face[0][1])) for b in faces]
        # a face seen slantwise or turned is narrower along the image's axes than its true width
        assert lo * 0.5 * SIZE[0] <= float(np.median(widths)) <= hi * 1.1 * SIZE[0]


def test_an_empty_table_holds_tile_like_things_and_no_tile() -> None:
    for index in range(4):
        found = scene("empty", index)
        assert found.boxes == () and found.hand is None
        assert float(found.image.std()) > 10  # something is on the table


def test_tile_like_props_are_keyboards_dominoes_pages_cards_and_dice() -> None:
    rng = np.random.default_rng(4)
    sizes = {tuple(round(v) for v in random_prop(rng, tile_like=True).size[:2]) for _ in range(60)}
    assert any(w >= 250 for w, _ in sizes)  # a keyboard
    assert (24, 48) in sizes  # a domino
    assert (148, 210) in sizes  # a page
    assert len(TILE_LIKE) == 5


def test_an_unknown_scene_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown scene kind 'pile'"):
        render_scene(1, 0, SIZE, options=SceneOptions(kind="pile"))


def test_a_shelf_scene_shows_book_spines_standing_behind_a_keyboard_and_no_tile() -> None:
    from datasets.synth.props import book_row, place_prop, prop_footprint

    for index in range(3):
        found = scene("shelf", index)
        assert found.boxes == () and found.ignored == () and found.hand is None
        assert found.extra["kind"] == "shelf" and float(found.image.std()) > 10
    rng = np.random.default_rng(5)
    row = place_prop(book_row(rng, 0.3), 40.0, -20.0)
    corners = row.corners()
    assert corners[:, 2].min() == pytest.approx(0.0, abs=1e-9)  # standing on the table
    assert corners[:, 2].max() == pytest.approx(row.size[1])  # as tall as its tallest spine's row
    assert corners[:, :2].mean(axis=0) == pytest.approx([40.0, -20.0])
    foot, height = prop_footprint(row)
    assert height == pytest.approx(row.size[1])
    sides = np.linalg.norm(np.diff(foot, axis=0, append=foot[:1]), axis=1)
    width, _, depth = row.size
    assert sorted(sides) == pytest.approx(sorted([width, width, depth, depth]))  # its foot: width by depth
