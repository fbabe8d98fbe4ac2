"""Property tests: a random legal hand laid out as a photo would show it, read back exactly.

The layouts vary what a phone photo varies: rotation of the whole photo (up to 90 degrees either way),
scale, perspective (tiles shrinking up to 30% along the row, rows converging), uneven gaps inside the
hand (up to 0.12 tile widths), melds in a second row or on the hand's line, lying flat or turned,
concealed kongs shown in any of their ways, other players' face-down rows, detector jitter, and the
detector's arbitrary output order. Groups stand at least 0.7 tile widths apart: the grouper splits at
0.4, and below about 0.6 a gap is not told reliably from uneven spacing under rotation and perspective.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

import numpy as np
from detection_builders import (
    TILE_H,
    TILE_W,
    PlacedTile,
    centroid,
    jitter,
    lay_hand,
    lay_row,
    make_detections,
    perspective,
    rotate,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.hand import Meld, MeldKind, concealed_count
from scoring.tiles import Tile, tile_name
from vision.detections import BACK, HONOUR, Detections
from vision.grouping.grouper import GroupRole, WarningCode, group_detections

KONG_LOOKS = ("XXXX", "BXXB", "BBXX", "XBBX", "XXBB", "BXXX")  # how a concealed kong may lie


@dataclass(frozen=True)
class Scene:
    concealed: tuple[Tile, ...]  # the winning tile last
    melds: tuple[Meld, ...]  # as the grouper should report them
    meld_texts: tuple[str, ...]
    win_apart: bool
    melds_at: str
    angle: float
    shrink: float
    scale: float
    win_gap: float
    meld_gap: float
    row_gap: float
    inner_gaps: tuple[float, ...]
    jitter: float
    seed: int
    meld_size: tuple[float, float]  # meld tiles lying flat: width and height as a share of a standing tile's
    sideways: tuple[int, ...]  # meld tiles turned 90 degrees, by position among the meld tiles
    walls: tuple[int, ...] = ()  # other players' face-down rows: 0 across the table, 1 and 2 at the sides


@st.composite
def scenes(draw: st.DrawFn) -> Scene:
    counts = Counter[Tile]()
    melds: list[Meld] = []
    texts: list[str] = []
    sideways: list[int] = []
    laid = 0
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from([MeldKind.PONG, MeldKind.KONG_EXPOSED, MeldKind.KONG_CONCEALED]))
        free = [t for t in range(27) if counts[t] + kind.size <= 4]
        tile = draw(st.sampled_from(free))
        counts[tile] += kind.size
        name = tile_name(tile)
        if kind is MeldKind.KONG_CONCEALED:
            look = draw(st.sampled_from(KONG_LOOKS))
            texts.append("".join("B" if c == "B" else name for c in look))
            # Four faces up read as an exposed kong: the photo cannot tell them apart.
            melds.append(Meld(MeldKind.KONG_EXPOSED if look == "XXXX" else kind, tile))
        else:
            texts.append(name * kind.size)
            melds.append(Meld(kind, tile))
            turned = draw(st.integers(-1, kind.size - 1))  # the tile taken from another player, or none
            if turned >= 0:
                sideways.append(laid + turned)
        laid += 4 if kind.is_kong else 3
    concealed: list[Tile] = []
    for _ in range(concealed_count(len(melds))):
        tile = draw(st.sampled_from([t for t in range(27) if counts[t] < 4]))
        counts[tile] += 1
        concealed.append(tile)
    size = len(concealed)
    return Scene(
        concealed=tuple(concealed),
        melds=tuple(melds),
        meld_texts=tuple(texts),
        win_apart=draw(st.booleans()),
        melds_at=draw(st.sampled_from(["below", "above", "right", "left"])),
        angle=draw(st.floats(-90, 90)),
        shrink=draw(st.floats(0, 0.3)),
        scale=draw(st.floats(0.4, 3.0)),
        # A pair alone (four melds) has no touching tiles to measure its gap by: it takes a clear one.
        win_gap=draw(st.floats(0.7 if size > 2 else 1.0, 2.5)),
        meld_gap=draw(st.floats(0.7, 2.5)),
        row_gap=draw(st.floats(0.25, 1.5)),
        inner_gaps=tuple(draw(st.lists(st.floats(0, 0.12), min_size=size, max_size=size))),
        jitter=draw(st.floats(0, 0.03)),
        seed=draw(st.integers(0, 2**16)),
        meld_size=(draw(st.floats(1.0, 1.2)), draw(st.floats(0.75, 1.05))),
        sideways=tuple(sideways),
        walls=tuple(draw(st.lists(st.sampled_from([0, 1, 2]), max_size=3, unique=True))),
    )


def render(scene: Scene) -> Detections:
    text = "".join(tile_name(t) for t in scene.concealed[:-1])
    win = tile_name(scene.concealed[-1])
    tiles = lay_hand(
        text,
        win,
        scene.meld_texts,
        melds_at=scene.melds_at,
        win_gap=scene.win_gap if scene.win_apart else 0.0,
        meld_gap=scene.meld_gap,
        row_gap=scene.row_gap,
        inner_gaps=scene.inner_gaps,
        tile=(TILE_W * scene.scale, TILE_H * scene.scale),
        meld_tile=(TILE_W * scene.scale * scene.meld_size[0], TILE_H * scene.scale * scene.meld_size[1]),
        sideways=scene.sideways,
    )
    tiles += walls(tiles, scene.walls, (TILE_W * scene.scale, TILE_H * scene.scale))
    tiles = rotate(perspective(tiles, scene.shrink), scene.angle)
    return make_detections(jitter(tiles, scene.jitter, scene.seed), shuffle_seed=scene.seed)


def walls(tiles: list[PlacedTile], seats: tuple[int, ...], tile: tuple[float, float]) -> list[PlacedTile]:
    """Rows of 13 backs: across the table (parallel, 5 tile heights off) or at either side (turned)."""
    height = tile[1]
    corners = np.concatenate([t.corners for t in tiles])
    low, high = corners.min(axis=0), corners.max(axis=0)
    rows = []
    for seat in seats:
        if seat == 0:
            rows += lay_row("B" * 13, origin=(float(low[0]), float(low[1]) - 5 * height), tile=tile)
            continue
        row = lay_row("B" * 13, tile=tile)
        row = rotate(row, 90, about=tuple(centroid(row)))
        x = low[0] - 4 * height if seat == 1 else high[0] + 4 * height
        shift = np.array([x, (low[1] + high[1]) / 2]) - centroid(row)
        rows += [replace(t, corners=t.corners + shift) for t in row]
    return rows


def near_vertical(angle: float) -> bool:
    return abs(abs(angle) - 90) < 20


@settings(max_examples=300, deadline=None)
@given(scenes())
def test_a_laid_out_hand_is_read_back_exactly(scene: Scene) -> None:
    grouping = group_detections(render(scene))
    assert grouping.hand is not None
    assert Counter(grouping.hand.concealed) == Counter(scene.concealed)
    assert Counter(grouping.hand.melds) == Counter(scene.melds)
    assert grouping.win_apart == scene.win_apart
    expected_codes = [] if scene.win_apart else [WarningCode.WIN_TILE_NOT_APART]
    assert list(grouping.codes) == expected_codes, grouping.warnings
    # A vertical row has no known reading direction: a tile not set apart, or a pair alone, may be
    # taken from either end.
    lone_pair = near_vertical(scene.angle) and len(scene.concealed) == 2
    if (scene.win_apart and not lone_pair) or not near_vertical(scene.angle):
        assert grouping.hand.win_tile == scene.concealed[-1]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1000),
            st.floats(0, 1000),
            st.floats(5, 80),
            st.floats(5, 80),
            st.integers(0, HONOUR),
            st.floats(0.05, 1.0),
        ),
        max_size=40,
    )
)
def test_never_gains_or_loses_a_tile(items: list[tuple[float, float, float, float, int, float]]) -> None:
    """Any detections at all: every detection is in one group, every suited one in the hand, a meld or a
    warning; the hand's tiles are exactly the faces placed (and a concealed kong's tile for its backs)."""
    detections = make_detections(
        [((x, y, x + w, y + h), c, p) for x, y, w, h, c, p in items], image_size=(1100, 1100)
    )
    grouping = group_detections(detections)
    indices = sorted(i for group in grouping.groups for i in group.indices)
    assert indices == list(range(len(detections)))
    placed = [i for g in grouping.groups if g.role is not GroupRole.IGNORED for i in g.indices]
    warned = {i for w in grouping.warnings for i in w.indices}
    for i in range(len(detections)):
        if detections.class_ids[i] < BACK:
            assert i in placed or i in warned
    read = list(grouping.hand.all_tiles) if grouping.hand else []
    faces = [int(detections.class_ids[i]) for i in placed if detections.class_ids[i] < BACK]
    meld_groups = [g for g in grouping.groups if g.role is GroupRole.MELD]
    hand_melds = grouping.hand.melds if grouping.hand else ()
    kong_backs = Counter(
        meld.tile
        for group, meld in zip(meld_groups, hand_melds, strict=True)
        for i in group.indices
        if detections.class_ids[i] == BACK
    )
    assert Counter(read) == Counter(faces) + kong_backs
