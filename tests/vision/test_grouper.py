"""The grouper on hand-built detections: tables of layouts, each with the hand it must read."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest
from detection_builders import (
    TILE_H,
    TILE_W,
    PlacedTile,
    lay_after,
    lay_hand,
    lay_row,
    make_detections,
    perspective,
    rotate,
)

from scoring.hand import Hand, Meld, MeldKind
from scoring.tiles import parse_tile, parse_tiles
from vision.detections import BACK, Detections
from vision.grouping.grouper import (
    AssemblyConfig,
    GrouperConfig,
    Grouping,
    GroupRole,
    RowsConfig,
    WarningCode,
    group_detections,
)

P, K, CK = MeldKind.PONG, MeldKind.KONG_EXPOSED, MeldKind.KONG_CONCEALED


def melds(*items: tuple[MeldKind, str]) -> Counter[Meld]:
    return Counter(Meld(kind, parse_tile(tile)) for kind, tile in items)


def read(tiles: list[PlacedTile], seed: int | None = 3) -> tuple[Detections, Grouping]:
    detections = make_detections(tiles, shuffle_seed=seed)
    return detections, group_detections(detections)


def assert_hand(hand: Hand | None, concealed: str, win: str, *expected: tuple[MeldKind, str]) -> None:
    assert hand is not None
    assert Counter(hand.concealed) == Counter(parse_tiles(concealed)), hand.to_json()
    assert Counter(hand.melds) == melds(*expected), hand.to_json()
    assert hand.win_tile == parse_tile(win), hand.to_json()


def assert_partition(detections: Detections, grouping: Grouping) -> None:
    """Every detection is in one group; every suited one in the hand, a meld, or a warning."""
    indices = sorted(i for g in grouping.groups for i in g.indices)
    assert indices == list(range(len(detections)))
    placed = {i for g in grouping.groups if g.role is not GroupRole.IGNORED for i in g.indices}
    warned = {i for w in grouping.warnings for i in w.indices}
    for i in range(len(detections)):
        if detections.class_ids[i] < BACK:
            assert i in placed or i in warned, i


@dataclass(frozen=True)
class Case:
    id: str
    tiles: list[PlacedTile]
    concealed: str
    win: str
    melds: tuple[tuple[MeldKind, str], ...] = ()
    apart: bool = True
    codes: tuple[WarningCode, ...] = ()


HAND = "123m456p789s1155p"  # 13 tiles, waiting on 5p
CASES = [
    Case(
        "straight row of 14, win not apart",
        lay_hand(HAND, "5p", win_gap=0),
        HAND + "5p",
        "5p",
        apart=False,
        codes=(WarningCode.WIN_TILE_NOT_APART,),
    ),
    Case("win apart", lay_hand(HAND, "5p"), HAND + "5p", "5p"),
    Case("win a little apart", lay_hand(HAND, "5p", win_gap=0.5), HAND + "5p", "5p"),
    Case("win set off by a small but clear gap", lay_hand(HAND, "5p", win_gap=0.3), HAND + "5p", "5p"),
    Case(
        "uneven gaps in the hand",
        lay_hand(HAND, "5p", inner_gaps=[0, 0.1, 0.3, 0, 0.05, 0.3, 0, 0, 0.3, 0.1, 0, 0.2, 0, 0]),
        HAND + "5p",
        "5p",
    ),
    Case("hand split by a wide gap", lay_row("123m456p 789s1155p 5p", gap=[0.8, 1.0]), HAND + "5p", "5p"),
    Case(
        "perspective: widths shrink 30%, rows converge",
        perspective(lay_hand("123m456p1p", "1p", ["777s", "B99mB"]), 0.3),
        "123m456p11p",
        "1p",
        ((P, "7s"), (CK, "9m")),
    ),
    Case(
        "melds below",
        lay_hand("123m456p1p", "1p", ["777s", "9999m"]),
        "123m456p11p",
        "1p",
        ((P, "7s"), (K, "9m")),
    ),
    Case(
        "melds above",
        lay_hand("123m456p1p", "1p", ["777s", "9999m"], melds_at="above"),
        "123m456p11p",
        "1p",
        ((P, "7s"), (K, "9m")),
    ),
    Case(
        "melds beside, right",
        lay_hand("123m456p1p", "1p", ["777s", "9999m"], melds_at="right"),
        "123m456p11p",
        "1p",
        ((P, "7s"), (K, "9m")),
    ),
    Case(
        "melds beside, left",
        lay_hand("123m456p1p", "1p", ["777s", "9999m"], melds_at="left"),
        "123m456p11p",
        "1p",
        ((P, "7s"), (K, "9m")),
    ),
    Case(
        "melds touching each other",
        lay_hand("123m456p1p", "1p", ["777s", "9999m"], meld_gap=0),
        "123m456p11p",
        "1p",
        ((P, "7s"), (K, "9m")),
    ),
    Case(
        "concealed kong, backs outside",
        lay_hand("123m456p789s1p", "1p", ["B55sB"]),
        "123m456p789s11p",
        "1p",
        ((CK, "5s"),),
    ),
    Case(
        "concealed kong, 2 backs + 2 faces",
        lay_hand("123m456p789s1p", "1p", ["BB5s5s"]),
        "123m456p789s11p",
        "1p",
        ((CK, "5s"),),
    ),
    Case(
        "concealed kong, 1 back",
        lay_hand("123m456p789s1p", "1p", ["B5s5s5s"]),
        "123m456p789s11p",
        "1p",
        ((CK, "5s"),),
    ),
    Case(
        "kong all face up reads as exposed",
        lay_hand("123m456p789s1p", "1p", ["5555s"]),
        "123m456p789s11p",
        "1p",
        ((K, "5s"),),
    ),
    Case(
        "four of a kind standing in the row is no kong",
        lay_hand("1111m23m456p789s5p", "5p"),
        "1111m23m456p789s55p",
        "5p",
    ),
    Case(
        "four of a kind a little apart in the row: the count says tiles",
        lay_row("23m456p789s5p 1111m 5p", gap=[0.7, 1.0]),
        "1111m23m456p789s55p",
        "5p",
    ),
    Case(
        "four of a kind apart in the row: the count says kong",
        lay_row("123m456p789s5p 5p 7777p", gap=[1.0, 1.0]),
        "123m456p789s55p",
        "5p",
        ((K, "7p"),),
    ),
    Case(
        "a whole hand that also reads as melds",
        lay_hand("1111222233m", "3m", ["777s"], win_gap=0),
        "11112222333m",
        "3m",
        ((P, "7s"),),
        apart=False,
        codes=(WarningCode.WIN_TILE_NOT_APART,),
    ),
    Case(
        "meld tile turned sideways",
        lay_hand("123m456p1p", "1p", ["777s", "9999m"], sideways=(1, 3)),
        "123m456p11p",
        "1p",
        ((P, "7s"), (K, "9m")),
    ),
    Case(
        "meld tiles lying flat",
        lay_hand("123m456p1p", "1p", ["777s", "9999m"], meld_tile=(46, 40)),
        "123m456p11p",
        "1p",
        ((P, "7s"), (K, "9m")),
    ),
    Case(
        "concealed kong laid against the hand's end",
        lay_row("123m456p789s1p1p B55sB", gap=[0.1]),
        "123m456p789s11p",
        "1p",
        ((CK, "5s"),),
        apart=False,
        codes=(WarningCode.WIN_TILE_NOT_APART,),
    ),
    Case(
        "four melds, a pair",
        lay_hand("5p", "5p", ["111m", "2222m", "B3m3mB", "777s"]),
        "55p",
        "5p",
        ((P, "1m"), (K, "2m"), (CK, "3m"), (P, "7s")),
    ),
    Case(
        "rotated 90 degrees",
        rotate(lay_hand("123m456p1p", "1p", ["777s", "B99mB"]), 90),
        "123m456p11p",
        "1p",
        ((P, "7s"), (CK, "9m")),
    ),
    Case(
        "rotated -90 degrees",
        rotate(lay_hand("123m456p1p", "1p", ["777s", "B99mB"]), -90),
        "123m456p11p",
        "1p",
        ((P, "7s"), (CK, "9m")),
    ),
    Case(
        "rotated 30 degrees",
        rotate(lay_hand("123m456p1p", "1p", ["777s", "B99mB"]), 30),
        "123m456p11p",
        "1p",
        ((P, "7s"), (CK, "9m")),
    ),
    Case(
        "rotated -30 degrees with perspective",
        rotate(perspective(lay_hand("123m456p1p", "1p", ["777s", "B99mB"], melds_at="right"), 0.25), -30),
        "123m456p11p",
        "1p",
        ((P, "7s"), (CK, "9m")),
    ),
    Case(
        "other players' face-down rows",
        lay_hand("123m456p1p", "1p", ["777s", "B99mB"])
        + lay_row("BBBBBBBBBBBBB", origin=(0, -4 * TILE_H))
        + rotate(lay_row("BBBBBBBBBBBBB", origin=(0, 0)), 90, about=(-3 * TILE_W, 0))
        + rotate(lay_row("BBBBBBBBBBBBB", origin=(0, 0)), 90, about=(20 * TILE_W, 0)),
        "123m456p11p",
        "1p",
        ((P, "7s"), (CK, "9m")),
    ),
    Case(
        "a pong whose tiles lie apart (loose boxes of a flat meld): one pong",
        lay_hand("123m456p1p", "1p", ["777s", "99m", "9m"], meld_gap=[1.0, 0.6]),
        "123m456p11p",
        "1p",
        ((P, "7s"), (P, "9m")),
    ),
    Case(
        "a concealed kong in two pieces: one kong",
        lay_hand("123m456p1p", "1p", ["777s", "B5s", "5sB"], meld_gap=[1.0, 0.6]),
        "123m456p11p",
        "1p",
        ((P, "7s"), (CK, "5s")),
    ),
    Case(
        "three different tiles set apart: counted, with a warning",
        lay_hand("123m456p1p", "1p", ["777s", "279m"]),
        "123m456p11p279m",
        "1p",
        ((P, "7s"),),
        codes=(WarningCode.NOT_A_MELD,),
    ),
    Case(
        "two tiles and four melds on one line, five discards in a column above: the line is the hand",
        lay_hand("1p", "1p", ["999p", "B99sB", "222s", "555s"], melds_at="right")
        + rotate(
            lay_row("1p7s6s1m1m", origin=(6 * TILE_W, -7 * TILE_H)), 90, about=(6 * TILE_W, -7 * TILE_H)
        ),
        "11p",
        "1p",
        ((P, "9p"), (CK, "9s"), (P, "2s"), (P, "5s")),
        codes=(WarningCode.STRAY_TILES,),
    ),
    Case(
        "discards holding honour tiles touching the hand's end, a stray near: the count leaves them out",
        lay_after(lay_row("444m999m55p"), "HH5m4s", gap=0.5)
        + lay_row("9999p 333p", origin=(0, 1.5 * TILE_H))
        + lay_row("8m", origin=(6 * TILE_W, -3 * TILE_H)),
        "444999m55p",
        "5p",
        ((K, "9p"), (P, "3p")),
        apart=False,
        codes=(WarningCode.HONOUR_TILE, WarningCode.STRAY_TILES, WarningCode.WIN_TILE_NOT_APART),
    ),
    Case(
        "discards far away when the hand is complete",
        lay_hand(HAND, "5p") + lay_row("19m 5s 7p", origin=(3 * TILE_W, -6 * TILE_H), gap=1.5),
        HAND + "5p",
        "5p",
        codes=(WarningCode.STRAY_TILES,),
    ),
    Case(
        "a back touching the winning tile's end (another player's wall)",
        lay_after(lay_hand(HAND, "5p"), "B", gap=0.15),
        HAND + "5p",
        "5p",
    ),
    Case(
        "a stray tile on the hand's line past its end, the winning tile a little apart",
        lay_row("7s " + HAND + "5p", gap=1.5, inner_gaps=[0.0] * 13 + [0.35, 0.0]),
        HAND + "5p",
        "5p",
        codes=(WarningCode.STRAY_TILES,),
    ),
    Case(
        "a stray tile on the hand's line, another player's pong near: the count leaves out both",
        lay_row("7s " + HAND + "5p", gap=1.5, inner_gaps=[0.0] * 13 + [0.35, 0.0])
        + lay_row("999m", origin=(5 * TILE_W, 1.5 * TILE_H)),
        HAND + "5p",
        "5p",
        codes=(WarningCode.STRAY_TILES,),
    ),
    Case(
        "a stray tile right beside the winning tile set apart, off the hand's line",
        lay_after(lay_hand(HAND, "5p"), "7s", gap=0.3, rise=1.0),
        HAND + "5p",
        "5p",
        codes=(WarningCode.STRAY_TILES,),
    ),
    Case(
        "a stray tile beside the winning tile, the hand's row near vertical",
        rotate(lay_after(lay_hand(HAND, "5p"), "7s", gap=0.3, rise=1.0), 60),
        HAND + "5p",
        "5p",
        codes=(WarningCode.STRAY_TILES,),
    ),
    Case(
        "a stray tile beside the winning tile, with perspective",
        rotate(perspective(lay_after(lay_hand(HAND, "5p"), "7s", gap=0.3, rise=1.0), 0.25), -30),
        HAND + "5p",
        "5p",
        codes=(WarningCode.STRAY_TILES,),
    ),
    Case(
        "a stray tile past the winning tile set apart",
        lay_row(HAND + " 5p 7s", gap=[1.0, 2.0]),
        HAND + "5p",
        "5p",
        codes=(WarningCode.STRAY_TILES,),
    ),
    Case(
        "a stray tile far past the hand's right end",
        lay_row(HAND + "5p 7s", gap=2.5),
        HAND + "5p",
        "5p",
        apart=False,
        codes=(WarningCode.STRAY_TILES, WarningCode.WIN_TILE_NOT_APART),
    ),
    Case(
        "a tile a little apart at the right end may be the winning tile: kept, the count is off",
        lay_row(HAND + "5p 7s", gap=1.2),
        HAND + "5p7s",
        "7s",
        codes=(WarningCode.TILE_COUNT,),
    ),
    Case(
        "a tile hardly further from a loosely laid hand than its tiles are from each other: kept",
        lay_row("7s " + HAND + "5p", gap=0.6, inner_gaps=[0.0, 0.3] * 8),
        "7s" + HAND + "5p",
        "7s",
        codes=(WarningCode.TILE_COUNT,),
    ),
    Case(
        "honour tiles apart",
        lay_hand(HAND, "5p", ["HHH"]),
        HAND + "5p",
        "5p",
        codes=(WarningCode.HONOUR_TILE,),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_layouts(case: Case) -> None:
    detections, grouping = read(case.tiles)
    assert_hand(grouping.hand, case.concealed, case.win, *case.melds)
    assert grouping.win_apart == case.apart
    assert Counter(grouping.codes) == Counter(case.codes), grouping.warnings
    assert_partition(detections, grouping)


def test_win_tile_is_the_last_of_the_row_and_its_index() -> None:
    detections = make_detections(lay_hand(HAND, "1p", win_gap=0))  # laid out in reading order
    grouping = group_detections(detections)
    assert grouping.win_index == len(detections) - 1
    assert grouping.hand is not None and grouping.hand.concealed[-1] == grouping.hand.win_tile
    (warning,) = grouping.warnings
    assert warning.code is WarningCode.WIN_TILE_NOT_APART and warning.indices == (len(detections) - 1,)
    assert "1p" in warning.message


def test_win_apart_index() -> None:
    tiles = lay_hand(HAND, "7s")
    grouping = group_detections(make_detections(tiles))
    assert grouping.win_index == len(tiles) - 1 and grouping.win_apart


def test_vertical_row_takes_the_end_further_apart() -> None:
    # Rotated 90 degrees either way, the reading direction is unknown: the lone tile decides.
    for angle in (90, -90):
        tiles = rotate(lay_row("5p 123m456p789s1155p", gap=1.2), angle)
        grouping = group_detections(make_detections(tiles))
        assert grouping.hand is not None and grouping.hand.win_tile == parse_tile("5p")
        assert grouping.win_apart


def test_lone_tiles_at_both_ends_of_a_level_row_take_the_right_one() -> None:
    grouping = group_detections(make_detections(lay_row("7s 123m456p789s115p 5p", gap=[1.5, 0.6])))
    assert grouping.hand is not None and grouping.hand.win_tile == parse_tile("5p")


def test_a_winning_tile_set_apart_whose_box_is_larger_than_its_neighbours_is_still_apart() -> None:
    # the winning tile set 0.45 of a tile apart, seen at another angle: its box 1.3 times the others'. By
    # its own size it would take a pitch that made it touch its neighbour; beside its neighbour, it lies apart
    for angle in (0, 75):
        tiles = lay_hand(HAND, "5p", win_gap=0.45)
        win = tiles[-1]
        tiles[-1] = PlacedTile(win.class_id, win.centre + (win.corners - win.centre) * 1.3, win.confidence)
        grouping = group_detections(make_detections(rotate(tiles, angle)))
        assert grouping.hand is not None and grouping.hand.win_tile == parse_tile("5p")
        assert grouping.win_apart and grouping.win_index == len(tiles) - 1


def test_missing_tile() -> None:
    tiles = lay_hand("123m456p789s115p", "5p")  # 12 + 1
    confidences = [0.9] * len(tiles)
    confidences[4] = 0.31  # the least sure detection comes first
    tiles = [PlacedTile(t.class_id, t.corners, c) for t, c in zip(tiles, confidences, strict=True)]
    _, grouping = read(tiles, seed=None)
    (warning,) = [w for w in grouping.warnings if w.code is WarningCode.TILE_COUNT]
    assert warning.indices[0] == 4
    assert "found 13 tiles" in warning.message and "has 14" in warning.message
    assert warning.tiles[0] == "5p"


def test_tile_count_with_kongs() -> None:
    grouping = group_detections(make_detections(lay_hand("123m456p11p", "1p", ["9999m", "B7s7sB"])))
    (warning,) = [w for w in grouping.warnings if w.code is WarningCode.TILE_COUNT]
    assert "found 17 tiles" in warning.message and "with 2 kongs has 16" in warning.message


def test_duplicate_box() -> None:
    tiles = lay_hand(HAND, "5p")
    items = [(t.box, t.class_id, 0.9) for t in tiles]
    x1, y1, x2, y2 = items[3][0]
    items.append(((x1 + 1, y1 - 1, x2 + 2, y2), parse_tile("6p"), 0.4))  # a second, less sure box on tile 3
    detections = make_detections(items)
    grouping = group_detections(detections)
    assert_hand(grouping.hand, HAND + "5p", "5p")
    (warning,) = grouping.warnings
    assert warning.code is WarningCode.DUPLICATE_BOX
    assert warning.indices == (len(items) - 1, 3)  # the dropped, less confident box first
    assert warning.tiles == ("6p", "4p")
    assert "dropped 6p (40%)" in warning.message
    ignored = [g for g in grouping.groups if g.role is GroupRole.IGNORED]
    assert ignored == [type(ignored[0])(GroupRole.IGNORED, (len(items) - 1,))]


def test_a_second_box_on_a_back_of_another_players_wall_is_dropped_unsaid() -> None:
    tiles = lay_hand(HAND, "5p") + lay_row("BBBBBBBBBBBB", origin=(0, -5 * TILE_H))
    items = [(t.box, t.class_id, 0.9) for t in tiles]
    x1, y1, x2, y2 = items[-3][0]  # a back of the wall
    items.append(((x1 + 1, y1, x2 + 2, y2), BACK, 0.4))
    x1, y1, x2, y2 = items[2][0]  # a tile of the hand
    items.append(((x1 + 1, y1, x2 + 2, y2), BACK, 0.3))
    detections = make_detections(items)
    grouping = group_detections(detections)
    assert_hand(grouping.hand, HAND + "5p", "5p")
    (warning,) = grouping.warnings  # the hand's tile only
    assert warning.code is WarningCode.DUPLICATE_BOX and warning.indices == (len(items) - 1, 2)
    assert_partition(detections, grouping)
    ignored = {i for g in grouping.groups if g.role is GroupRole.IGNORED for i in g.indices}
    assert {len(items) - 2, len(items) - 1} <= ignored


def test_a_box_straddling_two_tiles_of_a_meld_is_a_duplicate() -> None:
    # a pong lying flat: the detector put a fourth, less sure box over the gap between two of its tiles,
    # overlapping one of them by more than half its union (0.58 on a synthetic photo): one tile, not two
    tiles = lay_hand("123m456p789s5p", "5p", ["555s"])
    items = [(t.box, t.class_id, 0.9) for t in tiles]
    x1, y1, x2, y2 = items[-2][0]  # the pong's middle tile
    straddling = (x1 - 0.3 * (x2 - x1), y1, x2 - 0.3 * (x2 - x1), y2)  # IoU 0.54 with the middle tile
    items.append((straddling, parse_tile("5s"), 0.5))
    grouping = group_detections(make_detections(items))
    assert_hand(grouping.hand, "123m456p789s5p5p", "5p", (MeldKind.PONG, "5s"))
    assert [w.code for w in grouping.warnings] == [WarningCode.DUPLICATE_BOX]


def test_fifth_copy() -> None:
    tiles = lay_hand("1111m456p789s11p", "1m")  # five 1m
    _, grouping = read(tiles)
    codes = grouping.codes
    assert WarningCode.FIFTH_COPY in codes and WarningCode.TILE_COUNT in codes
    (warning,) = [w for w in grouping.warnings if w.code is WarningCode.FIFTH_COPY]
    assert len(warning.indices) == 5 and set(warning.tiles) == {"1m"}
    assert "1m appears 5 times" in warning.message


def test_fifth_copy_across_a_kong() -> None:
    grouping = group_detections(make_detections(lay_hand("123m456p789s1p", "9m", ["B9m9mB"])))
    (warning,) = [w for w in grouping.warnings if w.code is WarningCode.FIFTH_COPY]
    assert "9m appears 5 times" in warning.message
    assert len(warning.indices) == 3  # the faces: two in the kong, one in the hand


def test_honour_in_the_hand_row() -> None:
    tiles = lay_hand("123m456p789s11pH", "1p")
    _, grouping = read(tiles, seed=None)
    assert_hand(grouping.hand, "123m456p789s111p", "1p")
    honour = next(w for w in grouping.warnings if w.code is WarningCode.HONOUR_TILE)
    assert honour.indices == (len(tiles) - 2,) and honour.tiles == ("honour",)
    assert "cannot have" in honour.message
    assert WarningCode.TILE_COUNT in grouping.codes


def test_no_tiles() -> None:
    grouping = group_detections(Detections.empty((640, 480)))
    assert grouping.hand is None and grouping.groups == () and grouping.win_index is None
    assert grouping.codes == (WarningCode.NO_TILES,)
    only_backs = make_detections(lay_row("BBBBBBBBBBBBB"))
    grouping = group_detections(only_backs)
    assert grouping.hand is None
    assert [g.role for g in grouping.groups] == [GroupRole.IGNORED]


def test_to_json() -> None:
    grouping = group_detections(make_detections(lay_hand("123m456p1p", "1p", ["777s", "B99mB"], win_gap=0)))
    data = grouping.to_json()
    assert data["hand"] == {
        "concealed": "123m11456p",
        "win_tile": "1p",
        "melds": [{"type": "pong", "tile": "7s"}, {"type": "kong_concealed", "tile": "9m"}],
    }
    assert grouping.win_index is not None and data["win_index"] == grouping.win_index
    assert data["warnings"] == [
        {
            "code": "win_tile_not_apart",
            "message": "no tile is set apart as the winning tile; took 1p, the last tile of the row",
            "tiles": ["1p"],
            "indices": [grouping.win_index],
        }
    ]
    assert data["win_apart"] is False
    assert {g.role for g in grouping.groups} == {GroupRole.HAND, GroupRole.MELD}
    assert data["groups"] == [g.to_json() for g in grouping.groups]
    assert group_detections(Detections.empty((10, 10))).to_json()["hand"] is None


def test_deterministic_and_independent_of_detection_order() -> None:
    tiles = rotate(perspective(lay_hand("123m456p1p", "1p", ["777s", "B99mB"]), 0.2), 20)
    first = group_detections(make_detections(tiles))
    again = group_detections(make_detections(tiles))
    assert first == again
    for seed in range(5):
        shuffled = group_detections(make_detections(tiles, shuffle_seed=seed))
        assert shuffled.hand is not None and first.hand is not None
        assert Counter(shuffled.hand.concealed) == Counter(first.hand.concealed)
        assert Counter(shuffled.hand.melds) == Counter(first.hand.melds)
        assert shuffled.hand.win_tile == first.hand.win_tile


def test_config_split_gap() -> None:
    tiles = lay_hand("123m456p1p", "1p", ["777s", "9999m"], melds_at="right", win_gap=1.5, meld_gap=0.6)
    assert group_detections(make_detections(tiles)).codes == ()
    merged = group_detections(make_detections(tiles), GrouperConfig(rows=RowsConfig(split_gap=0.7)))
    assert merged.hand is not None and merged.hand.melds == ()
    assert WarningCode.TILE_COUNT in merged.codes


def test_config_parts_take_effect_through_group_detections() -> None:
    """The winning tile 0.6 tile widths past the others: a cluster of its own at the default split gap
    (0.4); inside the hand's cluster at a split gap of 0.8, yet still set apart by a gap far wider than
    the others (at least ``AssemblyConfig.win_gap``, 0.28); not set apart once that is 0.7."""
    detections = make_detections(lay_row("123m456m789m1155p 5p", gap=0.6))
    wider = RowsConfig(split_gap=0.8)
    readings = [
        group_detections(detections),
        group_detections(detections, GrouperConfig(rows=wider)),
        group_detections(detections, GrouperConfig(rows=wider, assembly=AssemblyConfig(win_gap=0.7))),
    ]
    assert [[len(g.indices) for g in r.groups] for r in readings] == [[13, 1], [14], [14]]
    assert [(r.win_index, r.win_apart, r.codes) for r in readings] == [
        (13, True, ()),
        (13, True, ()),
        (13, False, (WarningCode.WIN_TILE_NOT_APART,)),
    ]
    assert all(r.hand == readings[0].hand for r in readings)


def test_input_is_untouched() -> None:
    detections = make_detections(lay_hand(HAND, "5p"))
    boxes = detections.boxes.copy()
    group_detections(detections)
    assert np.array_equal(detections.boxes, boxes)


def test_a_hand_before_two_walls_of_backs_is_read_and_the_walls_left_out() -> None:
    """Forty tiles, tilted and in perspective: the hand and its melds, and two walls of backs behind
    them (the grouper's speed on such a photo is in ``benchmarks/bench_pipeline.py``)."""
    tiles = (
        lay_hand("123m456p1p", "1p", ["777s", "B99mB"])
        + lay_row("BBBBBBBBBBBBB", origin=(0, -5 * TILE_H))
        + lay_row("BBBBBBBBBBBB", origin=(0, -7 * TILE_H))
    )
    detections = make_detections(rotate(perspective(tiles, 0.2), 20))
    assert len(detections) >= 40
    grouping = group_detections(detections)
    assert grouping.hand is not None
    assert grouping.hand.to_json() == {
        "concealed": "123m11456p",
        "win_tile": "1p",
        "melds": [{"type": "pong", "tile": "7s"}, {"type": "kong_concealed", "tile": "9m"}],
    }
    ignored = sorted(len(g.indices) for g in grouping.groups if g.role is GroupRole.IGNORED)
    assert ignored == [12, 13] and not grouping.warnings


def test_a_hand_row_short_of_tiles_is_the_hand_and_far_strays_are_not_counted_in() -> None:
    """Eleven standing tiles (a meld's boxes missed or misread) with four loose tiles that are no meld
    in front of them and three strays far off: making up the count from the far strays explains the
    photo worse than the eleven alone, so the eleven are the hand (not the four, which leave the eleven
    out), and the strays are left out (a synthetic 12 MP photo of a packed row had lost its hand so)."""
    far = [("6m", (-9, -7)), ("9m", (3, -8)), ("2s", (16, -7))]
    tiles = (
        lay_row("22344556678p")
        + lay_row("1m7m5m5m", origin=(6 * TILE_W, 1.3 * TILE_H))
        + [t for tile, (x, y) in far for t in lay_row(tile, origin=(x * TILE_W, y * TILE_H))]
    )
    _, grouping = read(tiles)
    assert grouping.hand is not None
    assert Counter(grouping.hand.concealed) == Counter(parse_tiles("22344556678p"))
    assert not grouping.hand.melds
    (stray,) = [w for w in grouping.warnings if w.code is WarningCode.STRAY_TILES]
    assert Counter(stray.tiles) == Counter(["6m", "9m", "2s", "1m", "7m", "5m", "5m"])
    assert WarningCode.TILE_COUNT in grouping.codes


def test_three_touching_tiles_off_the_hand_that_read_as_no_meld_are_counted_in() -> None:
    """Unlike single strays, three touching tiles beyond ``PlanConfig.near`` that read as no meld (a pong
    4p misread 4p 2p 4p) are more likely a misread meld than discards: they make up the count (and the
    reading search may re-read them)."""
    tiles = lay_row("56666777m777p") + lay_row("4p2p4p", origin=(4 * TILE_W, 6.5 * TILE_H))
    _, grouping = read(tiles)
    assert grouping.hand is not None
    assert Counter(grouping.hand.concealed) == Counter(parse_tiles("56666777m777p") + parse_tiles("244p"))
    assert WarningCode.STRAY_TILES not in grouping.codes


def test_a_misread_meld_in_pieces_just_off_the_hand_makes_up_the_count() -> None:
    """A pong misread and boxed in pieces (a pair near the hand, one tile a little beyond
    ``PlanConfig.near``): counting them in explains the photo less well by ``Plan.evidence`` than
    leaving them out, but not by ``PlanConfig.discard_margin``, so they make up the count."""
    tiles = (
        lay_row("56666777m777p")
        + lay_row("4p2p", origin=(5 * TILE_W, 1.6 * TILE_H))
        + lay_row("4p", origin=(8 * TILE_W, 3.8 * TILE_H))
    )
    _, grouping = read(tiles)
    assert grouping.hand is not None
    assert Counter(grouping.hand.concealed) == Counter(parse_tiles("56666777m777p") + parse_tiles("244p"))
