"""The steady reading of a hand held in front of a camera (vision.steady): tiles followed from frame to frame
by their place, faces voted, a reading held, a new view forgotten."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scoring.tiles import parse_tile
from tests.builders.detection_builders import lay_row, make_detections, rotate, transform
from vision.detections import DETECTOR_CLASSES, Detections
from vision.steady import SteadyReading, SteadySettings

HAND = "123m456m789m1155p 5p"


def frame(layout: str = HAND, *, dx: float = 0.0, dy: float = 0.0, zoom: float = 1.0, turn: float = 0.0):
    """A frame's detections of ``layout`` moved as a hand-held phone moves it."""
    tiles = lay_row(layout, gap=1.0)
    matrix = np.array([[zoom, 0, 100 + dx], [0, zoom, 200 + dy], [0, 0, 1]], np.float64)
    tiles = rotate(transform(tiles, matrix), turn)
    return make_detections(tiles, (1280, 720))


def reread(detections: Detections, index: int, face: str, confidence: float = 0.9) -> Detections:
    classes = detections.class_ids.copy()
    confidences = detections.confidences.copy()
    classes[index], confidences[index] = parse_tile(face), confidence
    return replace(detections, class_ids=classes, confidences=confidences)


def without(detections: Detections, index: int) -> Detections:
    keep = np.arange(len(detections)) != index
    return replace(
        detections,
        boxes=detections.boxes[keep],
        class_ids=detections.class_ids[keep],
        confidences=detections.confidences[keep],
    )


def faces(detections: Detections) -> list[str]:
    return sorted(detections.names)


def name(tile: str) -> str:
    return DETECTOR_CLASSES[parse_tile(tile)]


def test_a_reading_held_frame_after_frame_becomes_steady_after_hold_frames():
    steady = SteadyReading(SteadySettings(hold=4))
    votes = [steady.add(frame(dx=3 * i, dy=-2 * i), sharpness=0.5) for i in range(5)]
    assert [v.held for v in votes] == [1, 2, 3, 4, 5]
    assert [v.steady for v in votes] == [False, False, False, True, True]
    assert all(v.matched == 14 for v in votes[1:])
    assert faces(votes[-1].detections) == faces(frame())
    assert np.allclose(votes[-1].shares, 1.0)


def test_tiles_are_followed_as_the_phone_shakes_turns_and_comes_closer():
    steady = SteadyReading(SteadySettings(hold=3))
    moves = [{}, {"dx": 35, "dy": -20}, {"zoom": 1.25, "dx": -60}, {"turn": 6.0, "dy": 30}, {"zoom": 0.85}]
    votes = [steady.add(frame(**move), sharpness=0.5) for move in moves]
    assert [v.matched for v in votes] == [0, 14, 14, 14, 14]
    assert not any(v.changed for v in votes)
    assert votes[-1].held == 5 and votes[-1].steady


def test_a_face_misread_in_one_frame_is_outvoted_and_the_reading_still_holds():
    steady = SteadyReading(SteadySettings(hold=3))
    for i in range(4):
        steady.add(frame(dx=i), sharpness=0.5)
    flipped = steady.add(reread(frame(dx=4), 0, "2m", 0.7), sharpness=0.5)
    assert faces(flipped.detections) == faces(frame())
    assert flipped.held == 5  # the voted reading did not change
    assert flipped.shares.min() < 1.0


def test_a_face_read_another_way_for_long_enough_changes_the_reading():
    steady = SteadyReading(SteadySettings(hold=3))
    for i in range(3):
        steady.add(frame(dx=i), sharpness=0.5)
    votes = [steady.add(reread(frame(dx=3 + i), 0, "4m"), sharpness=0.5) for i in range(4)]
    assert [DETECTOR_CLASSES[v.detections.class_ids[0]] for v in votes] == [name("1m")] + [name("4m")] * 3
    assert [v.held for v in votes] == [4, 1, 2, 3]  # the reading changed, and held again from then


def test_blurred_frames_weigh_less_than_sharp_ones():
    steady = SteadyReading(SteadySettings(hold=2))
    for i in range(2):
        steady.add(frame(dx=i), sharpness=0.5)
    for i in range(3):
        vote = steady.add(reread(frame(dx=2 + i), 0, "2m"), sharpness=0.04)
    assert vote.detections.class_ids[0] == parse_tile("1m")
    sharp = SteadyReading(SteadySettings(hold=2))
    for i in range(2):
        sharp.add(frame(dx=i), sharpness=0.5)
    for i in range(3):
        vote = sharp.add(reread(frame(dx=2 + i), 0, "2m"), sharpness=0.5)
    assert vote.detections.class_ids[0] == parse_tile("2m")


def test_a_tile_missed_in_a_frame_stays_in_the_reading():
    steady = SteadyReading(SteadySettings(hold=3))
    for i in range(3):
        steady.add(frame(dx=i), sharpness=0.5)
    vote = steady.add(without(frame(dx=3), 5), sharpness=0.5)
    assert len(vote.detections) == 14 and vote.matched == 13 and vote.held == 4


def test_another_view_is_a_new_reading():
    steady = SteadyReading(SteadySettings(hold=2))
    for i in range(3):
        steady.add(frame(dx=i), sharpness=0.5)
    other = steady.add(frame("111222333s4455p 4p", dy=300), sharpness=0.5)
    assert other.changed and other.held == 1 and other.matched == 0
    assert faces(other.detections) == faces(frame("111222333s4455p 4p"))


def test_an_empty_frame_forgets_nothing_but_reads_nothing_new():
    steady = SteadyReading(SteadySettings(hold=2))
    steady.add(frame(), sharpness=0.5)
    empty = steady.add(make_detections([], (1280, 720)), sharpness=None)
    assert empty.matched == 0 and not empty.steady


def test_an_unsure_face_keeps_the_reading_from_being_steady():
    steady = SteadyReading(SteadySettings(hold=2, sure=0.8))
    for i in range(6):
        detections = frame(dx=i)
        if i % 2:
            detections = reread(detections, 0, "7m")
        vote = steady.add(detections, sharpness=0.5)
    assert vote.shares.min() < 0.8 and not vote.steady


@pytest.mark.parametrize("bad", [{"hold": 0}, {"window": 0}, {"match": 0}, {"changed": 1.5}, {"sure": 0}])
def test_settings_out_of_range_are_refused(bad):
    with pytest.raises(ValueError):
        SteadySettings(**bad)
