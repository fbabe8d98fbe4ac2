"""The reading stage (``vision.reading``): the candidates of every look at a photo, (look, edits), tried
cheapest first under one cost and one budget, with a stand-in detector that records the views it is given."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from detection_builders import lay_row, make_detections

from api.fakes import OneStep
from scoring.tiles import CLASS_NAMES, parse_tiles
from vision.detect.looks import SecondLook
from vision.detect.view import Located
from vision.detections import Detections
from vision.grouping.result import WarningCode
from vision.grouping.search import SEARCH, SearchConfig, Searched, Terms
from vision.images import Photo
from vision.reading import read_photo

MISREAD = "123m466m789m234p5p 5p"  # the 5m (index 4) read as 6m: no win as read
WIN = "123m456m789m234p5p 5p"
HOPELESS = "123m466m799m234p5p 5p"


def _row(text: str, second: tuple[str, float] | None = None) -> Detections:
    """A row read at 0.9 a tile; ``second``: the 5m's (index 4) second reading, else none worth taking."""
    dets = make_detections(lay_row(text, gap=1.0))
    others = np.array([[(int(c) + 1) % 27] for c in dets.class_ids], np.int64)
    confidences = np.full((len(dets), 1), 0.001, np.float32)
    if second is not None:
        others[4, 0], confidences[4, 0] = CLASS_NAMES.index(second[0]), second[1]
    return replace(dets, alternatives=others, alternative_confidences=confidences)


class _Looks(OneStep):
    """Finds ``first`` in a photo as it is and ``enlarged`` enlarged; records the views it is given. Its
    rows run level, so there is nothing to turn."""

    second = (SecondLook.TURNED, SecondLook.ENLARGED)

    def __init__(self, first: Detections, enlarged: Detections) -> None:
        self.found = {"as it is": first, "enlarged": enlarged}
        self.taken: list[str] = []

    def answer(self, located: Located, conf: float) -> Detections:
        assert located.view.turn is None  # level rows: the stage never asks for a turned view
        view = "enlarged" if located.view.enlarged else "as it is"
        self.taken.append(view)
        found = self.found[view]
        return found[found.confidences >= conf]


def _photo(dets: Detections) -> Photo:
    width, height = dets.image_size
    return Photo(np.zeros((height, width, 3), np.uint8), (width, height))


def _read(detector: _Looks, config: SearchConfig = SEARCH) -> Searched:
    return read_photo(_photo(detector.found["as it is"]), detector, Terms(0.55, config=config))


def test_an_edit_of_the_first_look_cheaper_than_a_second_look_is_taken_without_looking_again() -> None:
    detector = _Looks(_row(MISREAD, ("m5", 0.6)), _row(WIN))  # re-reading the 5m costs log(0.9 / 0.6) < 1
    read = _read(detector)
    assert detector.taken == ["as it is"]
    assert WarningCode.REREAD_TILE in read.grouping.codes
    assert read.grouping.hand is not None and sorted(read.grouping.hand.concealed) == sorted(parse_tiles(WIN))


def test_a_second_look_cheaper_than_any_winning_edit_is_taken_first() -> None:
    # re-reading the 5m costs log(0.9 / 0.1) = 2.2, more than the enlarged look (the second of the second
    # looks: 2; the turned one is not taken, its rows running level)
    costly = ("m5", 0.1)
    assert 2 * SEARCH.look_cost < math.log(0.9 / costly[1]) < SEARCH.max_cost
    detector = _Looks(_row(MISREAD, costly), _row(WIN))
    read = _read(detector)
    assert detector.taken == ["as it is", "enlarged"]
    assert (
        read.edits == () and WarningCode.REREAD_TILE not in read.grouping.codes
    )  # a win as the look read it
    assert read.detections is not detector.found["as it is"]
    # a second look that costs more than the edit: the first look's edit wins, and no second look is taken
    again = _Looks(_row(MISREAD, costly), _row(WIN))
    assert WarningCode.REREAD_TILE in _read(again, replace(SEARCH, look_cost=2.0)).grouping.codes
    assert again.taken == ["as it is"]


def test_a_photo_read_as_a_win_at_first_is_looked_at_once() -> None:
    detector = _Looks(_row(WIN), _row(WIN))
    read = _read(detector)
    assert detector.taken == ["as it is"] and read.won and read.groupings == 1


@pytest.mark.parametrize("budget", [1, 2, 3, 5, 8])
def test_every_look_draws_on_one_budget_and_the_first_reading_is_kept_when_none_wins(budget: int) -> None:
    first = _row(HOPELESS, ("m5", 0.5))
    detector = _Looks(first, _row(HOPELESS, ("m5", 0.5)))
    read = _read(detector, replace(SEARCH, photo_groupings=budget))
    assert 1 <= read.groupings <= budget and not read.won
    assert read.detections.class_ids.tolist() == first.class_ids.tolist() and read.edits == ()
    assert detector.taken[0] == "as it is" and len(detector.taken) <= 2
