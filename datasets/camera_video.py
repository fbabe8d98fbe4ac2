"""Videos of a hand as a phone's camera shows it while the player aims: a photo shaken and blurred for a
while, then held steady. Written as YUV4MPEG2 (``.y4m``), the format Chromium's fake camera plays
(``--use-file-for-fake-video-capture``), so the page's live mode can be driven by a known hand in a test
or a benchmark.

Each frame is the photo moved (a similarity: a shift, a slight turn and zoom, as a hand-held phone moves)
and, while shaken, blurred along the motion; held steady, it moves by a pixel or two and is sharp.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np


@dataclass(frozen=True)
class Shake:
    """How a shaken frame moves: up to ``shift`` of the frame's width, ``turn`` degrees, ``zoom`` of its
    size, and a motion blur up to ``blur`` of the width long. A steady frame moves by ``steady`` of the
    width and is not blurred."""

    shift: float = 0.03
    turn: float = 3.0
    zoom: float = 0.05
    blur: float = 0.025
    steady: float = 0.002


def camera_frames(
    photo: np.ndarray,
    size: tuple[int, int],
    *,
    shaken: int,
    steady: int,
    seed: int = 0,
    shake: Shake = Shake(),
) -> list[np.ndarray]:
    """``shaken`` then ``steady`` RGB frames of ``size`` (width, height) showing ``photo`` (RGB) fitted to
    the frame (cropped to its aspect, centred)."""
    rng = np.random.default_rng(seed)
    width, height = size
    base = _fitted(photo, size)
    frames = []
    for index in range(shaken + steady):
        moving = index < shaken
        amount = shake.shift if moving else shake.steady
        dx, dy = rng.uniform(-amount, amount, 2) * width
        turn = rng.uniform(-shake.turn, shake.turn) if moving else 0.0
        zoom = 1 + (rng.uniform(-shake.zoom, shake.zoom) if moving else 0.0)
        matrix = cv2.getRotationMatrix2D((width / 2, height / 2), turn, zoom)
        matrix[:, 2] += (dx, dy)
        frame = cv2.warpAffine(
            base, matrix, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        if moving:
            frame = _motion_blur(frame, rng.uniform(0.3, 1.0) * shake.blur * width, rng.uniform(0, 180))
        frames.append(frame)
    return frames


FPS = 10  # frames a second a video is written at (Chromium's fake camera plays it at that rate)


def write_y4m(frames: Sequence[np.ndarray], path: Path, fps: int = FPS) -> Path:
    """``frames`` (RGB, all one even size) as a YUV4MPEG2 file of 4:2:0 frames at ``fps``."""
    if not frames:
        raise ValueError("a video needs a frame")
    height, width = frames[0].shape[:2]
    if width % 2 or height % 2:
        raise ValueError(f"4:2:0 frames need an even size, not {width}x{height}")
    with open(path, "wb") as out:
        out.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg\n".encode("ascii"))
        for frame in frames:
            if frame.shape[:2] != (height, width):
                raise ValueError("every frame of a video has the same size")
            out.write(b"FRAME\n")
            out.write(cv2.cvtColor(frame, cv2.COLOR_RGB2YUV_I420).tobytes())
    return path


def _fitted(photo: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``photo`` cropped to the aspect of ``size`` (centred) and resized to it."""
    width, height = size
    rows, cols = photo.shape[:2]
    aspect = width / height
    if cols / rows > aspect:
        keep = round(rows * aspect)
        photo = photo[:, (cols - keep) // 2 : (cols - keep) // 2 + keep]
    else:
        keep = round(cols / aspect)
        photo = photo[(rows - keep) // 2 : (rows - keep) // 2 + keep]
    shrinking = photo.shape[1] > width
    return cv2.resize(photo, size, interpolation=cv2.INTER_AREA if shrinking else cv2.INTER_LINEAR)


def _motion_blur(frame: np.ndarray, length: float, angle: float) -> np.ndarray:
    """``frame`` blurred along a line ``length`` pixels long at ``angle`` degrees."""
    size = max(1, round(length))
    if size < 2:
        return frame
    kernel = np.zeros((size, size), np.float32)
    kernel[size // 2, :] = 1.0
    turned = np.asarray(
        cv2.warpAffine(
            kernel, cv2.getRotationMatrix2D((size / 2 - 0.5, size / 2 - 0.5), angle, 1.0), (size, size)
        ),
        np.float32,
    )
    return cv2.filter2D(frame, -1, turned / max(float(turned.sum()), 1e-6))
