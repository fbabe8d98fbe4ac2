"""Looking at a photo whose rows run slantwise turned level: the geometry, and the shipped detector on a
12 MP photo turned slantwise."""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from detection_builders import lay_hand, make_detections, rotate
from PIL import Image

from api.fakes import OneStep
from scoring import WinContext
from scoring.hand import Hand
from scoring.presets import CHENGDU
from scoring.tiles import parse_tiles
from vision.detect import deskew
from vision.detect.deskew import Turn
from vision.detect.detector import DEFAULT_WEIGHTS, Detector
from vision.detect.looks import SecondLook
from vision.detect.view import Located
from vision.detections import Detections
from vision.grouping.search import SEARCH
from vision.pipeline import decode_photo, recognize, score_photo

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _row(
    degrees: float, count: int = 8, side: float = 40.0, start: tuple[float, float] = (300, 300)
) -> np.ndarray:
    """The square-to-the-photo boxes of ``count`` touching tiles along a row running ``degrees`` from
    level (positive: down to the right)."""
    a = math.radians(degrees)
    step = np.array([math.cos(a), math.sin(a)]) * side
    corners = np.array([[-0.5, -0.7], [0.5, -0.7], [0.5, 0.7], [-0.5, 0.7]]) * side
    turn = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    boxes = []
    for k in range(count):
        outline = corners @ turn.T + np.array(start) + k * step
        boxes.append([*outline.min(axis=0), *outline.max(axis=0)])
    return np.array(boxes, np.float32)


@pytest.mark.parametrize("degrees", [-80.0, -45.0, -20.0, 0.0, 35.0, 60.0, 89.0])
def test_the_direction_of_the_longest_row(degrees: float) -> None:
    boxes = np.concatenate([_row(degrees), _row(degrees + 90, count=2, start=(900, 900))])
    found = deskew.row_degrees(boxes, np.full(len(boxes), 0.9, np.float32))
    assert found is not None
    off = (found - degrees + 90) % 180 - 90  # directions are the same modulo 180 degrees
    assert abs(off) < 2.0


def test_the_row_that_covers_the_most_says_which_way_the_hand_runs() -> None:
    # a hand of 8 touching tiles at 25 degrees, nearest the camera; farther off, smaller, a longer chain of
    # discards at -40 degrees broken by a gap of a tile into runs of 5, and a wall of 14 touching tiles
    # running away at 70 degrees: the hand's row is the one turned level
    a = math.radians(-40.0)
    apart = (300 + 6 * 30 * math.cos(a), 1300 + 6 * 30 * math.sin(a))
    chain = np.concatenate(
        [_row(-40.0, count=5, side=30, start=(300, 1300)), _row(-40.0, count=5, side=30, start=apart)]
    )
    wall = _row(70.0, count=14, side=26, start=(1500, 200))
    hand = _row(25.0, count=8, start=(900, 300))
    for others in (chain, wall, np.concatenate([chain, wall])):
        boxes = np.concatenate([others, hand])
        found = deskew.row_degrees(boxes, np.full(len(boxes), 0.9, np.float32))
        assert found is not None and abs(found - 25.0) < 2.0
    # the same wall as near as the hand covers more of the photo: it is taken for the hand's row
    wall = _row(70.0, count=14, side=40, start=(1500, 200))
    boxes = np.concatenate([wall, hand])
    found = deskew.row_degrees(boxes, np.full(len(boxes), 0.9, np.float32))
    assert found is not None and abs(found - 70.0) < 2.0


def test_no_direction_without_a_row_of_confident_tiles() -> None:
    boxes = _row(45.0)
    assert deskew.row_degrees(boxes[:3], np.full(3, 0.9, np.float32)) is None  # too short to say
    assert deskew.row_degrees(boxes, np.full(len(boxes), 0.1, np.float32)) is None  # none sure
    assert deskew.row_degrees(boxes[:0], np.zeros(0, np.float32)) is None


def test_only_steep_rows_are_turned_level() -> None:
    scores = np.full(8, 0.9, np.float32)
    assert deskew.turn_level(_row(10.0), scores, 1600, 1200) is None
    assert deskew.turn_level(_row(-25.0), scores, 1600, 1200) is None
    turn = deskew.turn_level(_row(50.0), scores, 1600, 1200)
    assert turn is not None and abs(turn.degrees - 50.0) < 2.0


@pytest.mark.parametrize("degrees", [-70.0, -40.0, 33.0, 90.0])
def test_a_turn_lays_the_row_level_and_keeps_the_whole_photo(degrees: float) -> None:
    width, height = 1600, 1200
    turn = deskew.turned(width, height, degrees)
    a = math.radians(degrees)
    line = np.array([[800 + t * math.cos(a), 600 + t * math.sin(a)] for t in (-300, 0, 300)])
    mapped = line @ turn.matrix[:, :2].T + turn.matrix[:, 2]
    assert np.ptp(mapped[:, 1]) < 1e-6  # level
    assert mapped[0, 0] < mapped[2, 0]  # and running the same way
    corners = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float64)
    on_canvas = corners @ turn.matrix[:, :2].T + turn.matrix[:, 2]
    assert (on_canvas >= -1e-6).all() and (on_canvas <= np.array(turn.size) + 1e-6).all()
    pixels = np.zeros((height, width, 3), np.uint8)
    assert turn.pixels(pixels).shape == (turn.size[1], turn.size[0], 3)


def test_boxes_found_on_the_turned_photo_come_back_holding_their_tile() -> None:
    width, height = 1600, 1200
    turn = deskew.turned(width, height, 45.0)
    tile = np.array([[700.0, 500.0], [740.0, 500.0], [740.0, 556.0], [700.0, 556.0]])  # a tile's outline
    on_canvas = tile @ turn.matrix[:, :2].T + turn.matrix[:, 2]
    found = np.array([[*on_canvas.min(axis=0), *on_canvas.max(axis=0)]], np.float32)  # the box seen there
    back = turn.boxes_back(found)[0]
    assert back[0] <= 700 + 1e-3 and back[1] <= 500 + 1e-3 and back[2] >= 740 - 1e-3 and back[3] >= 556 - 1e-3
    assert (back[2] - back[0]) < 2 * 56 and (back[3] - back[1]) < 2 * 56  # no larger than the turn makes it
    beyond = turn.boxes_back(np.array([[0, 0, 40, 40]], np.float32))[0]  # a corner the turn brought in
    assert beyond.min() >= 0 and beyond[2] <= width and beyond[3] <= height
    assert turn.boxes_back(np.zeros((0, 4), np.float32)).shape == (0, 4)


needs_model = pytest.mark.skipif(not DEFAULT_WEIGHTS.is_file(), reason="no shipped model in models/")


def _same_hand(found: Hand | None, truth: Hand) -> bool:
    return (
        found is not None
        and sorted(found.concealed) == sorted(truth.concealed)
        and Counter(found.melds) == Counter(truth.melds)
        and found.win_tile == truth.win_tile
    )


@needs_model
def test_a_photo_whose_rows_run_slantwise_reads_its_hand() -> None:
    """The bundled 1024x768 scene whose rows run about 60 degrees from level: seen as it is, one back of
    its 3s concealed kong is missed and a box doubles another, so the kong read as two loose 3s; turned
    level, both concealed kongs are found and the hand reads exactly."""
    scene = json.loads((EXAMPLES / "hand_rotated.json").read_text(encoding="utf-8"))
    result = score_photo((EXAMPLES / "hand_rotated.jpg").read_bytes(), Detector(), WinContext(), CHENGDU)
    assert _same_hand(result.hand, Hand.from_json(scene["hand"])), result.hand
    assert result.score is not None and result.score.valid


@needs_model
def test_a_12_megapixel_photo_turned_slantwise_reads_as_the_upright_one() -> None:
    """The bundled phone photo turned 40 degrees (its rows running slantwise, as in a photo taken from a
    corner of the table): the detector looks at it turned level and reads the same hand."""
    scene = json.loads((EXAMPLES / "hand_phone.json").read_text(encoding="utf-8"))
    upright = decode_photo((EXAMPLES / "hand_phone.jpg").read_bytes()).pixels
    slantwise = Image.fromarray(upright).rotate(40, expand=True, fillcolor=(90, 90, 90))
    data = io.BytesIO()
    slantwise.save(data, format="JPEG", quality=92)
    detector = Detector()
    photo = decode_photo(data.getvalue())
    first = detector.find_tiles(photo.pixels, 0.3, 0.6)
    assert deskew.turn_level(first[0], first[1], *photo.size) is not None  # the detector turns it
    result = score_photo(data.getvalue(), detector, WinContext(), CHENGDU)
    assert _same_hand(result.hand, Hand.from_json(scene["hand"])), result.hand


class _Looks(OneStep):
    """A detector whose view of a photo as it is finds ``first``, turned level ``turned`` and enlarged
    ``enlarged``; it records the looks taken (the second looks at photos of a long side up to 672)."""

    second = (SecondLook.TURNED, SecondLook.ENLARGED)
    close_up = 672

    def __init__(self, first: Detections, turned: Detections, enlarged: Detections | None = None) -> None:
        self.found = {None: first, SecondLook.TURNED: turned, SecondLook.ENLARGED: enlarged or first}
        self.taken: list[SecondLook | None] = []
        self.turns: list[Turn | None] = []  # handed with each look

    def answer(self, located: Located, conf: float) -> Detections:
        view = located.view
        look = SecondLook.TURNED if view.turn else SecondLook.ENLARGED if view.enlarged else None
        self.taken.append(look)
        self.turns.append(view.turn)
        return self.found[look]


HAND = "123m456m789p1155p"  # 13 tiles of two suits, waiting on 5p


def _photo(width: int, height: int) -> bytes:
    data = io.BytesIO()
    Image.fromarray(np.full((height, width, 3), 128, np.uint8)).save(data, format="JPEG")
    return data.getvalue()


def _slantwise(text: str, degrees: float, size: tuple[int, int] = (640, 480)) -> Detections:
    tiles = lay_hand(text, "5p", tile=(20.0, 27.0))
    return make_detections(rotate(tiles, degrees, about=(size[0] / 2, size[1] / 2)), size)


def _centred(tiles: Detections, size: tuple[int, int]) -> Detections:
    shift = (
        np.array([size[0] / 2, size[1] / 2] * 2)
        - np.r_[tiles.boxes[:, :2].mean(0), tiles.boxes[:, :2].mean(0)]
    )
    return Detections(tiles.boxes + shift.astype(np.float32), tiles.class_ids, tiles.confidences, size)


TURNED, ENLARGED = SecondLook.TURNED, SecondLook.ENLARGED
NO_WIN = "123m456m89p1155p"  # 13 tiles: a tile missed


@pytest.mark.parametrize(
    ("degrees", "first_text", "turned_text", "enlarged_text", "looks", "read"),
    [
        (45.0, NO_WIN, HAND, NO_WIN, [None, TURNED], HAND + "5p"),  # no win as it is: the turned look wins
        (45.0, HAND, HAND, HAND, [None], HAND + "5p"),  # a win at the first look: no second
        (10.0, NO_WIN, HAND, NO_WIN, [None, ENLARGED], NO_WIN + "5p"),  # rows level: nothing to turn
        (10.0, NO_WIN, NO_WIN, HAND, [None, ENLARGED], HAND + "5p"),  # the enlarged look wins
        (45.0, NO_WIN, "123m456m9p1155p", NO_WIN, [None, TURNED, ENLARGED], NO_WIN + "5p"),  # none better
        (45.0, NO_WIN, NO_WIN, HAND, [None, TURNED, ENLARGED], HAND + "5p"),  # the enlarged one wins
    ],
)
def test_a_close_up_that_reads_as_no_win_is_looked_at_again_turned_level_then_enlarged(
    degrees: float, first_text: str, turned_text: str, enlarged_text: str, looks: list[object], read: str
) -> None:
    size = (640, 480)
    first, turned, enlarged = (
        _centred(_slantwise(text, degrees, size), size) for text in (first_text, turned_text, enlarged_text)
    )
    detector = _Looks(first, turned, enlarged)
    result = score_photo(_photo(*size), detector, WinContext(), CHENGDU)  # type: ignore[arg-type]
    assert detector.taken == looks
    assert result.hand is not None
    assert sorted(result.hand.concealed) == sorted(parse_tiles(read))
    # the turned look is handed the turn its first reading's rows call for; no other look is turned
    for taken, turn in zip(detector.taken, detector.turns, strict=True):
        assert (turn is not None) == (taken is TURNED)
        if turn is not None:
            assert abs(abs(turn.degrees) - degrees) < 3.0


def test_a_large_photo_is_not_looked_at_a_second_time() -> None:
    """A large photo was read turned level at its first view already (``vision.reading.first_view``)."""
    size = (1600, 1200)
    first = _centred(_slantwise("123m456m89p1155p", 45.0, size), size)
    detector = _Looks(first, first)
    score_photo(_photo(*size), detector, WinContext(), CHENGDU)  # type: ignore[arg-type]
    assert detector.taken == [None]


def test_a_live_frame_that_reads_as_no_win_is_looked_at_once() -> None:
    """A live frame's reading (``usecases.live``: no ``second_looks``) takes no second look: the next frame
    is one."""
    size = (640, 480)
    first, turned = (_centred(_slantwise(text, 45.0, size), size) for text in (NO_WIN, HAND))
    detector = _Looks(first, turned)
    live = replace(SEARCH, second_looks=False)
    read = recognize(_photo(*size), detector, reach=live)  # type: ignore[arg-type]
    assert detector.taken == [None]
    assert read.grouping.hand is None or sorted(read.grouping.hand.concealed) != sorted(
        parse_tiles(HAND + "5p")
    )
    photo_read = recognize(_photo(*size), _Looks(first, turned))  # type: ignore[arg-type]
    assert photo_read.grouping.hand is not None  # as a photo, the turned look reads the win
