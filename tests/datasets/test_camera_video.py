"""Videos of a hand as a camera shows it while the player aims (datasets.camera_video)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from datasets.camera_video import camera_frames, write_y4m


def photo() -> np.ndarray:
    rng = np.random.default_rng(0)
    image = np.full((768, 1024, 3), 60, np.uint8)
    for x in range(100, 900, 60):
        image[300:380, x : x + 50] = rng.integers(150, 255, 3)
    return image


def test_shaken_frames_move_and_blur_steady_ones_hold_still():
    frames = camera_frames(photo(), (640, 480), shaken=4, steady=4, seed=1)
    assert len(frames) == 8 and all(f.shape == (480, 640, 3) for f in frames)
    steady_change = np.abs(frames[5].astype(int) - frames[6].astype(int)).mean()
    shaken_change = np.abs(frames[0].astype(int) - frames[1].astype(int)).mean()
    assert shaken_change > 3 * steady_change

    def sharpness(frame: np.ndarray) -> float:
        return float(cv2.Laplacian(cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY), cv2.CV_64F).var())

    assert max(sharpness(f) for f in frames[:4]) < min(sharpness(f) for f in frames[4:])


def test_a_y4m_file_holds_every_frame_as_4_2_0(tmp_path: Path):
    frames = camera_frames(photo(), (320, 240), shaken=2, steady=1)
    video = write_y4m(frames, tmp_path / "hand.y4m", fps=15)
    data = video.read_bytes()
    header, _, body = data.partition(b"\n")
    assert header == b"YUV4MPEG2 W320 H240 F15:1 Ip A1:1 C420jpeg"
    frame_bytes = len(b"FRAME\n") + 320 * 240 * 3 // 2
    assert len(body) == 3 * frame_bytes and body.count(b"FRAME\n") >= 3
    luma = np.frombuffer(body[6 : 6 + 320 * 240], np.uint8).reshape(240, 320)
    expected = 16 + cv2.cvtColor(frames[0], cv2.COLOR_RGB2GRAY) * (219 / 255)  # BT.601 video range
    assert np.abs(luma - expected).mean() < 2


def test_frames_that_cannot_make_a_video_are_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="a frame"):
        write_y4m([], tmp_path / "none.y4m")
    with pytest.raises(ValueError, match="even size"):
        write_y4m([np.zeros((5, 6, 3), np.uint8)], tmp_path / "odd.y4m")
    with pytest.raises(ValueError, match="same size"):
        write_y4m([np.zeros((4, 6, 3), np.uint8), np.zeros((4, 8, 3), np.uint8)], tmp_path / "two.y4m")
