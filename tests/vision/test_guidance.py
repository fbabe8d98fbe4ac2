"""What a player holding the camera is told for a better frame (vision.guidance)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.guidance import SIDES, Advice, frame_guidance

FRAME = np.full((480, 640, 3), 140, np.uint8)
ROW = np.array([[60 + 40 * i, 200, 98 + 40 * i, 254] for i in range(14)], np.float32)


def codes(guidance) -> list[str]:
    return [advice["code"] for advice in guidance.to_json()]


def test_a_sharp_row_of_legible_tiles_inside_the_frame_needs_nothing():
    guidance = frame_guidance(FRAME, ROW, blurred=False)
    assert guidance.advice == () and guidance.tile == pytest.approx(38)


@pytest.mark.parametrize(
    ("pixels", "boxes", "blurred", "expected"),
    [
        (FRAME, np.zeros((0, 4)), False, ["no_hand"]),
        (np.full((480, 640, 3), 20, np.uint8), np.zeros((0, 4)), False, ["too_dark", "no_hand"]),
        (FRAME, ROW, True, ["hold_still"]),
        (FRAME, ROW * np.float32(0.5), False, ["come_closer"]),
        (FRAME, ROW + np.float32([-100, 0, -100, 0]), False, ["cut_at_edge"]),
        (FRAME, ROW + np.float32([0, 230, 0, 230]), True, ["hold_still", "cut_at_edge"]),
    ],
    ids=["empty", "dark", "blurred", "small", "left-edge", "bottom-edge-blurred"],
)
def test_each_problem_of_a_frame_is_named(pixels, boxes, blurred, expected):
    guidance = frame_guidance(pixels, boxes, blurred)
    assert codes(guidance) == expected
    assert all(advice["message"] for advice in guidance.to_json())
    assert {a.value for a in guidance.advice} <= {a.value for a in Advice}


def test_the_next_frame_size_shows_tiles_large_enough_in_steps_that_stay_put():
    small = frame_guidance(FRAME, ROW * np.float32(0.5), False)  # 19 px tiles in a 640 px frame
    assert small.best_side(640) == 1280 and small.best_side(1280) == 1280
    legible = frame_guidance(FRAME, ROW, False)  # 38 px
    assert legible.best_side(640) == 800 and legible.best_side(800) in SIDES
    large = frame_guidance(FRAME, ROW * np.float32(2), False)
    assert large.best_side(640) == 480
    assert frame_guidance(FRAME, np.zeros((0, 4)), False).best_side(640) == 640
