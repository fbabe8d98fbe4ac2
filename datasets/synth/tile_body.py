"""2.5-D tile bodies: a box with a textured face, an ivory layer and a coloured back layer, drawn in perspective.

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


@dataclass(frozen=True)
class Texture:
    """A premultiplied float32 RGBA image (0..255 colour, 0..1 alpha) with its mip levels."""

    levels: tuple[np.ndarray, ...]

    @property
    def width(self) -> int:
        return int(self.levels[0].shape[1])


def make_texture(premultiplied: np.ndarray) -> Texture:
    levels = [np.ascontiguousarray(premultiplied, np.float32)]
    while levels[-1].shape[1] > 12:
        h, w = levels[-1].shape[:2]
        levels.append(cv2.resize(levels[-1], (max(1, w // 2), max(1, h // 2)), interpolation=cv2.INTER_AREA))
    return Texture(tuple(levels))


def face_texture(
    ink: np.ndarray, body: Colour, corner: float, bevel: float, ink_gain: np.ndarray | None = None
) -> Texture:
    """Ink (premultiplied uint8 RGBA) over an ivory body with rounded corners and a darker bevelled rim."""
    h, w = ink.shape[:2]
    base = _body_base(w, h, corner, bevel)
    colour = np.asarray(body, np.float32)
    ink_f = ink.astype(np.float32)
    ink_rgb = ink_f[..., :3] * (ink_gain if ink_gain is not None else 1.0)
    ink_a = ink_f[..., 3:] / 255.0
    rgb = (colour * base[..., :1] * (1 - ink_a) + ink_rgb * base[..., :1]) * base[..., 1:2]
    return make_texture(np.concatenate([rgb, base[..., 1:2]], axis=2))


def plain_texture(width: int, height: int, colour: Colour, corner: float, bevel: float) -> Texture:
    base = _body_base(width, height, corner, bevel)
    rgb = np.asarray(colour, np.float32) * base[..., :1] * base[..., 1:2]
    return make_texture(np.concatenate([rgb, base[..., 1:2]], axis=2))


_BASE_CACHE: dict[tuple[int, int, float, float], np.ndarray] = {}


def _body_base(width: int, height: int, corner: float, bevel: float) -> np.ndarray:
    """(h, w, 2) float32: brightness (bevel shading) and alpha (rounded corners, anti-aliased)."""
    key = (width, height, round(corner, 2), round(bevel, 2))
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
    if len(_BASE_CACHE) < 64:
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

    def corners(self) -> np.ndarray:
        """The 8 corners, index = u_bit + 2*v_bit + 4*w_bit."""
        w, h, d = self.size
        a, b, c = self.axes
        return np.array(
            [self.origin + a * (w * (i & 1)) + b * (h * ((i >> 1) & 1)) + c * (d * ((i >> 2) & 1)) for i in range(8)]
        )

    def point(self, u: float, v: float, w: float) -> np.ndarray:
        a, b, c = self.axes
        return self.origin + a * u + b * v + c * w

    def centre(self) -> np.ndarray:
        w, h, d = self.size
        return self.point(w / 2, h / 2, d / 2)

    def front_corners(self) -> np.ndarray:
        """Face corners as seen from outside: top-left, top-right, bottom-right, bottom-left."""
        w, h, _ = self.size
        return np.array([self.point(0, h, 0), self.point(w, h, 0), self.point(w, 0, 0), self.point(0, 0, 0)])


def stand_axes(yaw: float) -> np.ndarray:
    """A tile standing on the table, its face turned by ``yaw`` from facing the player (-y)."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, s, 0.0], [0.0, 0.0, 1.0], [-s, c, 0.0]])


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

    def fill(self, points: np.ndarray, colour: tuple[float, float, float], id_value: int) -> None:
        pts = np.round((points + CV_OFFSET) * _ONE).astype(np.int32)
        cv2.fillConvexPoly(self.image, pts, tuple(float(min(255.0, max(0.0, c))) for c in colour), cv2.LINE_AA,
                           _SHIFT)
        cv2.fillConvexPoly(self.ids, pts, id_value, cv2.LINE_8, _SHIFT)

    def warp(self, texture: Texture, quad: np.ndarray, shade: float, id_value: int) -> None:
        x0 = max(0, int(np.floor(quad[:, 0].min())))
        y0 = max(0, int(np.floor(quad[:, 1].min())))
        x1 = min(self.width, int(np.ceil(quad[:, 0].max())) + 1)
        y1 = min(self.height, int(np.ceil(quad[:, 1].max())) + 1)
        if x1 - x0 < 1 or y1 - y0 < 1:
            return
        span = max(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[3]),
                   0.75 * np.linalg.norm(quad[3] - quad[0]))
        level = texture.levels[0]
        for candidate in texture.levels[1:]:
            if candidate.shape[1] < span * 1.1:
                break
            level = candidate
        th, tw = level.shape[:2]
        src = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float32) + CV_OFFSET
        dst = (quad + CV_OFFSET - [x0, y0]).astype(np.float32)
        matrix = cv2.getPerspectiveTransform(src, dst)
        warped = cv2.warpPerspective(level, matrix, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        alpha = warped[..., 3:4]
        roi = self.image[y0:y1, x0:x1]
        blended = roi.astype(np.float32) * (1 - alpha) + warped[..., :3] * shade
        np.clip(blended, 0, 255, out=blended)
        roi[...] = (blended + 0.5).astype(np.uint8)
        self.ids[y0:y1, x0:x1][alpha[..., 0] > 0.5] = id_value

    def polygon_occluder(self, points: np.ndarray, colour: tuple[float, float, float]) -> None:
        self.fill(points, colour, 0)


# Faces of the box: (corner indices outside-view order, normal sign/axis, is_side)
_FACES = {
    "front": (0, 1, 3, 2),  # w = 0, drawn by texture when textured
    "back": (4, 6, 7, 5),
    "left": (0, 2, 6, 4),
    "right": (1, 5, 7, 3),
    "bottom": (0, 4, 5, 1),
    "top": (2, 3, 7, 6),
}


def draw_body(canvas: Canvas, camera: Camera, body: Body, light: Light, label_base: int) -> None:
    """Draw the visible faces of ``body``; ``label_base`` 0 for unlabelled, else 2*i+1 for labelled tile i."""
    corners = body.corners()
    projected = camera.project(corners)
    a, b, c = body.axes
    w, h, d = body.size
    normals = {"front": -c, "back": c, "left": -a, "right": a, "bottom": -b, "top": b}
    centre = body.centre()
    body_id = label_base
    face_id = label_base + 1 if label_base else 0
    for name, normal in normals.items():
        offset = {"front": d / 2, "back": d / 2, "left": w / 2, "right": w / 2, "bottom": h / 2, "top": h / 2}[name]
        face_centre = centre + normal * offset
        if camera.sees_front(face_centre, normal) <= 1e-4:
            continue
        shade = light.shade(normal)
        if name == "front":
            quad = camera.project(body.front_corners())
            if isinstance(body.front, Texture):
                canvas.warp(body.front, quad, shade, face_id)
            else:
                canvas.fill(quad, _scaled(body.front, shade), face_id)
            continue
        if name == "back":
            quad = projected[list(_FACES["back"])]
            if isinstance(body.back, Texture):
                canvas.warp(body.back, camera.project(_back_corners(body)), shade, body_id)
            else:
                canvas.fill(quad, _scaled(body.back, shade), body_id)
            continue
        _draw_side(canvas, camera, body, name, shade, body_id)
    del projected


def _back_corners(body: Body) -> np.ndarray:
    """Back-face corners seen from outside (mirror of the front's order, so its texture reads unmirrored)."""
    w, h, d = body.size
    return np.array([body.point(w, h, d), body.point(0, h, d), body.point(0, 0, d), body.point(w, 0, d)])


def _draw_side(canvas: Canvas, camera: Camera, body: Body, name: str, shade: float, id_value: int) -> None:
    w, h, d = body.size
    edge = {
        "left": ((0, 0), (0, h)),
        "right": ((w, h), (w, 0)),
        "bottom": ((w, 0), (0, 0)),
        "top": ((0, h), (w, h)),
    }[name]
    (u0, v0), (u1, v1) = edge
    cut = d * body.split
    for w0, w1, colour in ((0.0, cut, body.side_front), (cut, d, body.side_back)):
        if w1 - w0 <= 1e-6:
            continue
        quad = np.array([body.point(u0, v0, w0), body.point(u1, v1, w0), body.point(u1, v1, w1),
                         body.point(u0, v0, w1)])
        canvas.fill(camera.project(quad), _scaled(colour, shade), id_value)


def _scaled(colour: Colour, shade: float) -> tuple[float, float, float]:
    return (colour[0] * shade, colour[1] * shade, colour[2] * shade)
