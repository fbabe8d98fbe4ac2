"""2.5-D tile bodies: a box with a textured face, an ivory layer and a coloured back layer, in perspective.

A ``Body`` is a box in world millimetres: ``origin + u*a + v*b + w*c`` for ``u`` in [0, W] (face width),
``v`` in [0, H] (face height, upwards on the face) and ``w`` in [0, D] (thickness, from the face to the
back). ``a x b = -c`` always, so a face is only ever seen from outside and never mirrored.

Drawing writes the colour image and an id buffer (uint16): ``2*i + 1`` where body ``i``'s sides or back
are visible, ``2*i + 2`` where its face is, 0 for table and unlabelled things. Labels are read from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from datasets.synth.camera import CV_OFFSET, Camera
from datasets.synth.ink import Colour

_SHIFT = 4
_ONE = 1 << _SHIFT
_BITS = np.array([[i & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], np.float64)
FRONT = (2, 3, 1, 0)  # corner indices of the face: top-left, top-right, bottom-right, bottom-left
_BACK = (7, 6, 4, 5)  # the back, seen from outside
# Sides: (normal axis, sign, front-plane corner indices k0 -> k1, half-size index)
_SIDES = (("left", 0, -1.0, 0, 2), ("right", 0, 1.0, 3, 1), ("bottom", 1, -1.0, 1, 0), ("top", 1, 1.0, 2, 3))


@dataclass(frozen=True)
class Texture:
    """A premultiplied float32 RGBA image (0..255 colour, 0..1 alpha) with its mip levels."""

    levels: tuple[np.ndarray, ...]

    @property
    def width(self) -> int:
        return int(self.levels[0].shape[1])


def make_texture(premultiplied: np.ndarray) -> Texture:
    levels: list[np.ndarray] = [np.ascontiguousarray(premultiplied, np.float32)]
    while levels[-1].shape[1] > 12:
        h, w = levels[-1].shape[:2]
        levels.append(cv2.resize(levels[-1], (max(1, w // 2), max(1, h // 2)), interpolation=cv2.INTER_AREA))
    return Texture(tuple(levels))


@dataclass(frozen=True)
class FaceBase:
    """Per-look layers shared by all faces: the body colour and the ink's weight, both pre-shaded."""

    body_layer: np.ndarray  # (h, w, 3) body colour x bevel brightness x alpha
    ink_layer: np.ndarray  # (h, w, 3) bevel brightness x alpha x ink colour gain
    alpha: np.ndarray  # (h, w)


def face_base(
    width: int, height: int, body: Colour, corner: float, bevel: float, ink_gain: np.ndarray
) -> FaceBase:
    base = _body_base(width, height, corner, bevel)
    weight = base[..., :1] * base[..., 1:2]
    return FaceBase(
        np.ascontiguousarray(weight * np.asarray(body, np.float32)),
        np.ascontiguousarray(weight * np.asarray(ink_gain, np.float32)),
        np.ascontiguousarray(base[..., 1]),
    )


def face_texture(ink: np.ndarray, base: FaceBase) -> Texture:
    """Ink (premultiplied uint8 RGBA) over the ivory body, rounded corners and bevelled rim from ``base``.

    cv2 arithmetic on whole multi-channel images: several times faster than numpy broadcasting here.
    """
    channels = cv2.split(ink.astype(np.float32))
    ink_rgb = cv2.merge(channels[:3])
    keep = cv2.merge([1 - channels[3] * (1 / 255.0)] * 3)
    rgb = cv2.add(cv2.multiply(base.body_layer, keep), cv2.multiply(ink_rgb, base.ink_layer))
    return make_texture(cv2.merge([*cv2.split(rgb), base.alpha]))


def plain_texture(width: int, height: int, colour: Colour, corner: float, bevel: float) -> Texture:
    base = _body_base(width, height, corner, bevel)
    rgb = np.asarray(colour, np.float32) * base[..., :1] * base[..., 1:2]
    return make_texture(np.concatenate([rgb, base[..., 1:2]], axis=2))


_BASE_CACHE: dict[tuple[int, int, float, float], np.ndarray] = {}


def _body_base(width: int, height: int, corner: float, bevel: float) -> np.ndarray:
    """(h, w, 2) float32: brightness (bevel shading) and alpha (rounded corners, anti-aliased)."""
    key = (width, height, corner, bevel)
    cached = _BASE_CACHE.get(key)
    if cached is not None:
        return cached
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32) + 0.5
    radius = max(1.0, corner * width)
    dx = np.maximum(np.maximum(radius - xs, xs - (width - radius)), 0)
    dy = np.maximum(np.maximum(radius - ys, ys - (height - radius)), 0)
    outside = np.sqrt(dx * dx + dy * dy) - radius
    alpha = np.clip(0.5 - outside, 0, 1)
    edge = np.minimum(np.minimum(xs, width - xs), np.minimum(ys, height - ys))
    rim = max(1.0, 0.06 * width)
    brightness = 1 - bevel * np.clip(1 - edge / rim, 0, 1) ** 2
    base = np.stack([brightness, alpha], axis=2).astype(np.float32)
    if len(_BASE_CACHE) < 256:
        _BASE_CACHE[key] = base
    return base


@dataclass
class Body:
    origin: np.ndarray  # (3,)
    axes: np.ndarray  # (3, 3): rows a (face right), b (face up), c (into the tile)
    size: tuple[float, float, float]  # W, H, D in mm
    front: Texture | Colour
    back: Texture | Colour
    side_front: Colour
    side_back: Colour
    split: float  # fraction of the thickness, from the face, painted side_front
    label: int = -1  # index into the scene's labelled tiles, -1 for none
    edge: float = 1.0  # < 1: outline the sides this much darker (seams between tiles)

    def corners(self) -> np.ndarray:
        """The 8 corners, index = u_bit + 2*v_bit + 4*w_bit."""
        return self.origin + (_BITS * self.size) @ self.axes

    def key_points(self) -> np.ndarray:
        """The 8 corners plus the 4 points where the ivory layer meets the back layer (indices 8..11)."""
        w, h, d = self.size
        ring = self.origin + (_BITS[:4] * (w, h, 0.0) + (0.0, 0.0, d * self.split)) @ self.axes
        return np.vstack([self.corners(), ring])

    def point(self, u: float, v: float, w: float) -> np.ndarray:
        a, b, c = self.axes
        return self.origin + a * u + b * v + c * w

    def centre(self) -> np.ndarray:
        w, h, d = self.size
        return self.point(w / 2, h / 2, d / 2)

    def front_corners(self) -> np.ndarray:
        """Face corners as seen from outside: top-left, top-right, bottom-right, bottom-left."""
        return self.corners()[list(FRONT)]


def stand_axes(yaw: float) -> np.ndarray:
    """A tile standing on the table, its face turned by ``yaw`` from facing the player (-y)."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, s, 0.0], [0.0, 0.0, 1.0], [-s, c, 0.0]])


def side_axes(yaw: float) -> np.ndarray:
    """A tile lying on a long edge: its face upright, its top pointing along ``yaw`` from +y."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[0.0, 0.0, 1.0], [-s, c, 0.0], [c, s, 0.0]])


def flat_axes(yaw: float, face_up: bool) -> np.ndarray:
    """A tile lying flat, face up (its top pointing along ``yaw`` from +y) or face down."""
    c, s = np.cos(yaw), np.sin(yaw)
    if face_up:
        return np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, -1.0]])
    return np.array([[c, s, 0.0], [s, -c, 0.0], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class Light:
    direction: np.ndarray  # unit vector towards the light
    ambient: float

    def shade(self, normal: np.ndarray) -> float:
        top = self.ambient + (1 - self.ambient) * max(0.0, float(self.direction[2]))
        value = self.ambient + (1 - self.ambient) * max(0.0, float(np.dot(normal, self.direction)))
        return value / max(top, 1e-3)


class Canvas:
    """The photo being drawn (uint8 RGB) and its id buffer."""

    def __init__(self, image: np.ndarray) -> None:
        self.image = image
        self.ids = np.zeros(image.shape[:2], np.uint16)
        self.height, self.width = image.shape[:2]

    def fill(
        self, points: np.ndarray, colour: tuple[float, float, float], id_value: int, edge: float = 1.0
    ) -> None:
        """A convex polygon; ``edge`` < 1 outlines it a little darker (the seams between tiles)."""
        pts = np.round((points + CV_OFFSET) * _ONE).astype(np.int32)
        paint = tuple(float(min(255.0, max(0.0, c))) for c in colour)
        cv2.fillConvexPoly(self.image, pts, paint, cv2.LINE_AA, _SHIFT)
        if edge < 1.0:
            cv2.polylines(self.image, [pts], True, tuple(c * edge for c in paint), 1, cv2.LINE_AA, _SHIFT)
        cv2.fillConvexPoly(self.ids, pts, id_value, cv2.LINE_8, _SHIFT)

    def warp(self, texture: Texture, quad: np.ndarray, shade: float, id_value: int) -> None:
        x0 = max(0, int(np.floor(quad[:, 0].min())))
        y0 = max(0, int(np.floor(quad[:, 1].min())))
        x1 = min(self.width, int(np.ceil(quad[:, 0].max())) + 1)
        y1 = min(self.height, int(np.ceil(quad[:, 1].max())) + 1)
        if x1 - x0 < 1 or y1 - y0 < 1:
            return
        span = max(
            np.linalg.norm(quad[1] - quad[0]),
            np.linalg.norm(quad[2] - quad[3]),
            0.75 * np.linalg.norm(quad[3] - quad[0]),
        )
        level = texture.levels[0]
        for candidate in texture.levels[1:]:
            if candidate.shape[1] < span * 1.1:
                break
            level = candidate
        th, tw = level.shape[:2]
        src = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float32) + CV_OFFSET
        dst = (quad + CV_OFFSET - [x0, y0]).astype(np.float32)
        matrix = cv2.getPerspectiveTransform(src, dst)
        warped = cv2.warpPerspective(
            level,
            matrix,
            (x1 - x0, y1 - y0),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(0, 0, 0, 0),
        )
        alpha = warped[..., 3:4]
        roi = self.image[y0:y1, x0:x1]
        blended = roi.astype(np.float32) * (1 - alpha) + warped[..., :3] * shade
        np.clip(blended, 0, 255, out=blended)
        roi[...] = (blended + 0.5).astype(np.uint8)
        self.ids[y0:y1, x0:x1][alpha[..., 0] > 0.5] = id_value


def draw_body(canvas: Canvas, camera: Camera, body: Body, light: Light, label_base: int) -> None:
    """Draw the visible faces of ``body``; ``label_base`` 0 for unlabelled, else 2*i+1 for labelled tile i."""
    points = body.key_points()
    projected = camera.project(points)
    axes = body.axes
    size = body.size
    centre = body.origin + 0.5 * (np.asarray(size) @ axes)
    to_camera = camera.centre - centre
    body_id = label_base
    face_id = label_base + 1 if label_base else 0
    half = 0.5 * np.asarray(size)
    # front (-c) and back (+c)
    for sign in (-1.0, 1.0):
        normal = axes[2] * sign
        if np.dot(normal, to_camera - normal * half[2]) <= 1e-4 * np.linalg.norm(to_camera):
            continue
        shade = light.shade(normal)
        paint = body.front if sign < 0 else body.back
        quad = projected[list(FRONT if sign < 0 else _BACK)]
        target = face_id if sign < 0 else body_id
        if isinstance(paint, Texture):
            canvas.warp(paint, quad, shade, target)
        else:
            canvas.fill(quad, _scaled(paint, shade), target)
    for _, axis, sign, k0, k1 in _SIDES:
        normal = axes[axis] * sign
        if np.dot(normal, to_camera - normal * half[axis]) <= 1e-4 * np.linalg.norm(to_camera):
            continue
        shade = light.shade(normal)
        if body.split > 1e-6:
            canvas.fill(
                projected[[k0, k1, 8 + k1, 8 + k0]], _scaled(body.side_front, shade), body_id, body.edge
            )
        if body.split < 1 - 1e-6:
            canvas.fill(
                projected[[8 + k0, 8 + k1, 4 + k1, 4 + k0]],
                _scaled(body.side_back, shade),
                body_id,
                body.edge,
            )


def _scaled(colour: Colour, shade: float) -> tuple[float, float, float]:
    return (colour[0] * shade, colour[1] * shade, colour[2] * shade)
