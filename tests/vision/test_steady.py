"""The steady reading of a hand held in front of a camera (vision.steady): tiles followed from frame to frame
by their place, faces voted, a reading held, a new view forgotten."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scoring.tiles import parse_tile
from tests.builders.detection_builders import lay_row, make_detections, rotate, transform
from vision.detections import BACK, DETECTOR_CLASSES, HONOUR, Detections
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


def test_a_reading_held_frame_after_frame_is_followed_tile_by_tile():
    steady = SteadyReading()
    votes = [steady.add(frame(dx=3 * i, dy=-2 * i), sharpness=0.5) for i in range(5)]
    assert [v.matched for v in votes] == [0, 14, 14, 14, 14]
    assert not any(v.changed for v in votes)
    assert faces(votes[-1].detections) == faces(frame())
    assert np.allclose(votes[-1].shares, 1.0) and votes[-1].sure.all()
    assert np.allclose(votes[-1].detections.boxes, frame(dx=12, dy=-8).boxes)  # where the last frame saw them


def test_tiles_are_followed_as_the_phone_shakes_turns_and_comes_closer():
    steady = SteadyReading()
    moves = [{}, {"dx": 35, "dy": -20}, {"zoom": 1.25, "dx": -60}, {"turn": 6.0, "dy": 30}, {"zoom": 0.85}]
    votes = [steady.add(frame(**move), sharpness=0.5) for move in moves]
    assert [v.matched for v in votes] == [0, 14, 14, 14, 14]
    assert not any(v.changed for v in votes)
    assert len(votes[-1].detections) == 14 and votes[-1].sure.all()


def boxes_sized(detections: Detections, factor: float) -> Detections:
    """The same tiles in the same places, their boxes ``factor`` as large (a localiser's boxes vary so)."""
    centres = (detections.boxes[:, :2] + detections.boxes[:, 2:]) / 2
    halves = (detections.boxes[:, 2:] - detections.boxes[:, :2]) / 2 * factor
    return replace(detections, boxes=np.concatenate([centres - halves, centres + halves], axis=1))


def test_a_steady_phone_s_tiles_stay_matched_when_their_boxes_come_out_a_tenth_larger_or_smaller():
    steady = SteadyReading()
    wide = frame("123m456m789m1155p 5p 111s 222s 333s 444s 555s 666s")  # a wide row: ends far apart
    votes = [steady.add(boxes_sized(wide, factor), sharpness=0.5) for factor in (1.0, 0.88, 1.1, 0.9, 1.0)]
    assert [v.matched for v in votes] == [0] + [len(wide)] * 4
    assert not any(v.changed for v in votes) and len(votes[-1].detections) == len(wide)


def test_a_face_misread_in_one_frame_is_outvoted_and_the_reading_still_holds():
    steady = SteadyReading()
    for i in range(4):
        steady.add(frame(dx=i), sharpness=0.5)
    flipped = steady.add(reread(frame(dx=4), 0, "2m", 0.7), sharpness=0.5)
    assert faces(flipped.detections) == faces(frame())  # the voted reading did not change
    assert flipped.shares[0] < 1.0 and flipped.detections.alternatives[0, 0] == parse_tile("2m")


def test_a_face_read_another_way_for_long_enough_changes_the_reading():
    steady = SteadyReading()
    for i in range(3):
        steady.add(frame(dx=i), sharpness=0.5)
    votes = [steady.add(reread(frame(dx=3 + i), 0, "4m"), sharpness=0.5) for i in range(4)]
    assert [DETECTOR_CLASSES[v.detections.class_ids[0]] for v in votes] == [name("1m")] + [name("4m")] * 3


def test_blurred_frames_weigh_less_than_sharp_ones():
    def read_after(sharpness: float) -> int:
        """Tile 0's voted face after 2 sharp frames of 1m, then 3 frames of 2m at ``sharpness``."""
        steady = SteadyReading()
        for i in range(2):
            steady.add(frame(dx=i), sharpness=0.5)
        for i in range(3):
            vote = steady.add(reread(frame(dx=2 + i), 0, "2m"), sharpness=sharpness)
        return int(vote.detections.class_ids[0])

    assert read_after(0.04) == parse_tile("1m")
    assert read_after(0.5) == parse_tile("2m")


def test_a_tile_missed_in_a_frame_stays_in_the_reading():
    steady = SteadyReading()
    for i in range(3):
        steady.add(frame(dx=i), sharpness=0.5)
    vote = steady.add(without(frame(dx=3), 5), sharpness=0.5)
    assert len(vote.detections) == 14 and vote.matched == 13 and faces(vote.detections) == faces(frame())


def test_another_view_is_a_new_reading():
    steady = SteadyReading()
    for i in range(3):
        steady.add(frame(dx=i), sharpness=0.5)
    other = steady.add(frame("111222333s4455p 4p", dy=300), sharpness=0.5)
    assert other.changed and other.matched == 0
    assert faces(other.detections) == faces(frame("111222333s4455p 4p"))


def test_an_empty_frame_forgets_nothing_but_reads_nothing_new():
    steady = SteadyReading()
    steady.add(frame(), sharpness=0.5)
    empty = steady.add(make_detections([], (1280, 720)), sharpness=None)
    assert empty.matched == 0 and not empty.changed and len(empty.detections) == 14
    back = steady.add(frame(dx=2), sharpness=0.5)
    assert back.matched == 14 and faces(back.detections) == faces(frame())


def test_a_face_read_two_ways_is_not_sure():
    steady = SteadyReading(SteadySettings(sure=0.8))
    for i in range(6):
        detections = frame(dx=i)
        if i % 2:
            detections = reread(detections, 0, "7m")
        vote = steady.add(detections, sharpness=0.5)
    assert not vote.sure[0] and vote.sure[1:].all()


def test_a_tile_read_face_down_or_as_an_honour_offers_only_suited_alternatives():
    steady = SteadyReading()
    for i, face in enumerate([BACK, HONOUR, BACK]):
        detections = frame(dx=i)
        classes = detections.class_ids.copy()
        classes[0] = face
        vote = steady.add(replace(detections, class_ids=classes), sharpness=0.5)
    assert vote.detections.class_ids[0] == BACK
    assert (vote.detections.alternatives < BACK).all()
    assert vote.detections.alternative_confidences[0].max() == 0  # nothing suited was read there


@pytest.mark.parametrize("bad", [{"lost": 0}, {"window": 0}, {"match": 0}, {"changed": 1.5}, {"sure": 0}])
def test_settings_out_of_range_are_refused(bad):
    with pytest.raises(ValueError):
        SteadySettings(**bad)
