"""A premultiplied-RGBA ink layer with anti-aliased drawing primitives (cv2), in float pixel coordinates."""

from __future__ import annotations

import cv2
import numpy as np

Colour = tuple[int, int, int]
Shade = tuple[float, float, float]
_SHIFT = 4
_ONE = 1 << _SHIFT


def scaled(colour: Colour | Shade, k: float) -> Shade:
    return (colour[0] * k, colour[1] * k, colour[2] * k)


def as_colour(values: object) -> Colour:
    """Three ints from any sequence of numbers (numpy arrays, generators' output)."""
    r, g, b = (int(v) for v in values)  # type: ignore[attr-defined]
    return (r, g, b)


def _pt(x: float, y: float) -> tuple[int, int]:
    return round(x * _ONE), round(y * _ONE)


class Ink:
    """Transparent canvas; cv2's AA drawing over transparent black yields premultiplied RGBA directly."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.rgba = np.zeros((height, width, 4), np.uint8)

    def circle(self, x: float, y: float, r: float, colour: Colour, thickness: float = -1) -> None:
        t = -1 if thickness < 0 else max(1, round(thickness))
        cv2.circle(self.rgba, _pt(x, y), max(1, round(r * _ONE)), (*colour, 255), t, cv2.LINE_AA, _SHIFT)

    def ellipse(
        self, x: float, y: float, rx: float, ry: float, angle: float, colour: Colour, thickness: float = -1
    ) -> None:
        t = -1 if thickness < 0 else max(1, round(thickness))
        axes = (max(1, round(rx * _ONE)), max(1, round(ry * _ONE)))
        cv2.ellipse(self.rgba, _pt(x, y), axes, angle, 0, 360, (*colour, 255), t, cv2.LINE_AA, _SHIFT)

    def line(self, x0: float, y0: float, x1: float, y1: float, colour: Colour, thickness: float) -> None:
        cv2.line(
            self.rgba, _pt(x0, y0), _pt(x1, y1), (*colour, 255), max(1, round(thickness)), cv2.LINE_AA, _SHIFT
        )

    def poly(self, points: list[tuple[float, float]], colour: Colour) -> None:
        pts = np.array([_pt(x, y) for x, y in points], np.int32)
        cv2.fillPoly(self.rgba, [pts], (*colour, 255), cv2.LINE_AA, _SHIFT)

    def polyline(
        self, points: list[tuple[float, float]], colour: Colour, thickness: float, closed: bool
    ) -> None:
        pts = np.array([_pt(x, y) for x, y in points], np.int32)
        cv2.polylines(self.rgba, [pts], closed, (*colour, 255), max(1, round(thickness)), cv2.LINE_AA, _SHIFT)

    def rect(self, x0: float, y0: float, x1: float, y1: float, colour: Colour, thickness: float = -1) -> None:
        if thickness < 0:
            self.poly([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], colour)
        else:
            self.polyline([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], colour, thickness, closed=True)

    def coverage(self, mask: np.ndarray, x: float, y: float, colour: Colour) -> None:
        """Paint ``colour`` through a float 0..1 coverage mask whose top-left corner goes at (x, y)."""
        h, w = mask.shape
        x0, y0 = round(x), round(y)
        sx0, sy0 = max(0, -x0), max(0, -y0)
        x1, y1 = min(self.width, x0 + w), min(self.height, y0 + h)
        if x1 <= max(0, x0) or y1 <= max(0, y0):
            return
        m = mask[sy0 : sy0 + y1 - max(0, y0), sx0 : sx0 + x1 - max(0, x0)][..., None]
        roi = self.rgba[max(0, y0) : y1, max(0, x0) : x1].astype(np.float32)
        paint = np.array([*colour, 255], np.float32)
        self.rgba[max(0, y0) : y1, max(0, x0) : x1] = (roi * (1 - m) + paint * m + 0.5).astype(np.uint8)


def in_ink(rgba: np.ndarray, colour: Colour) -> np.ndarray:
    """Premultiplied RGBA ink redrawn in one colour, its dark strokes deep and its light parts pale: how a
    red five (赤五, common in Japanese and generic sets) prints a five's whole face, and how a set printed
    in one ink prints every face."""
    alpha = rgba[..., 3:4].astype(np.float32) / 255.0
    straight = rgba[..., :3].astype(np.float32) / np.maximum(alpha, 1e-3)
    light = (straight @ np.array([0.299, 0.587, 0.114], np.float32))[..., None] / 255.0
    base = np.asarray(colour, np.float32)
    colour = base + (255.0 - base) * 0.75 * light**2
    return np.concatenate([np.clip(colour * alpha, 0, 255), rgba[..., 3:4]], axis=-1).astype(np.uint8)
