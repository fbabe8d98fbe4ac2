"""Procedural table tops seen through the camera (felt, wood, cloth), the table's edge, and cast shadows.

The table is drawn as a texture patch in table-plane millimetres and warped into the photo by the
camera's table homography, so its grain and edges follow the perspective of the tiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from datasets.synth.camera import CV_OFFSET, Camera
from datasets.synth.ink import Colour, as_colour

_FELTS: tuple[Colour, ...] = (
    (40, 120, 60),
    (30, 100, 55),
    (60, 150, 80),
    (35, 80, 140),
    (40, 60, 110),
    (50, 110, 120),
    (90, 40, 50),
    (70, 70, 75),
    (120, 60, 130),
)
_WOODS: tuple[tuple[Colour, Colour], ...] = (
    ((170, 120, 75), (130, 85, 50)),
    ((200, 165, 120), (165, 125, 85)),
    ((110, 70, 45), (80, 50, 30)),
    ((215, 205, 190), (185, 175, 160)),
)
_CLOTHS: tuple[Colour, ...] = ((200, 200, 195), (60, 60, 70), (150, 40, 40), (215, 210, 180), (90, 110, 140))
_RIMS: tuple[Colour, ...] = ((235, 235, 230), (200, 195, 185), (40, 40, 45), (150, 100, 60), (210, 180, 130))
_BEYOND: tuple[Colour, ...] = ((45, 45, 50), (80, 70, 60), (120, 110, 100), (30, 35, 45), (160, 150, 140))


@dataclass(frozen=True)
class TableGeometry:
    x0: float  # the playing surface, world mm
    y0: float
    x1: float
    y1: float
    rim: float  # width of the frame around it


@dataclass(frozen=True)
class TableLook:
    material: str  # felt | wood | cloth | plain
    colour: Colour
    colour2: Colour
    rim: Colour
    beyond: Colour
    grain_angle: float
    period: float  # wood grain / cloth pattern period, mm
    pattern: str  # cloth: plain | stripes | checks | print (small motifs all over: a busy background)


def random_table_look(rng: np.random.Generator, plain: Colour | None = None, busy: bool = False) -> TableLook:
    """A table top drawn from ``rng``; ``busy``: a printed cloth, small motifs all over (drawn after the
    rest, so the looks without it are as they were)."""
    if plain is not None:
        return TableLook("plain", plain, plain, plain, plain, 0.0, 1.0, "plain")
    look = _random_table_look(rng)
    if busy:
        colour = _CLOTHS[int(rng.integers(len(_CLOTHS)))]
        other = as_colour(rng.integers(20, 235, 3))
        return replace(
            look,
            material="cloth",
            colour=colour,
            colour2=other,
            pattern="print",
            period=float(rng.uniform(12, 35)),
        )
    return look


def _random_table_look(rng: np.random.Generator) -> TableLook:
    material = ("felt", "wood", "cloth")[int(rng.choice(3, p=(0.6, 0.2, 0.2)))]
    if material == "felt":
        colour = _FELTS[int(rng.choice(len(_FELTS), p=_felt_p()))]
        colour2 = colour
    elif material == "wood":
        colour, colour2 = _WOODS[int(rng.integers(len(_WOODS)))]
    else:
        colour = _CLOTHS[int(rng.integers(len(_CLOTHS)))]
        colour2 = _CLOTHS[int(rng.integers(len(_CLOTHS)))]
    jitter = rng.integers(-15, 16, 3)
    return TableLook(
        material=material,
        colour=tuple(int(np.clip(c + j, 0, 255)) for c, j in zip(colour, jitter, strict=True)),  # type: ignore[arg-type]
        colour2=colour2,
        rim=_RIMS[int(rng.integers(len(_RIMS)))],
        beyond=_BEYOND[int(rng.integers(len(_BEYOND)))],
        grain_angle=float(rng.uniform(0, math.pi)),
        period=float(rng.uniform(14, 45) if material == "wood" else rng.uniform(15, 60)),
        pattern=("plain", "stripes", "checks")[int(rng.integers(3))],
    )


def _felt_p() -> np.ndarray:
    p = np.array([4, 3, 2, 2, 1.5, 1, 0.5, 0.7, 0.3])
    return p / p.sum()


def render_table(
    rng: np.random.Generator, camera: Camera, geometry: TableGeometry, look: TableLook
) -> np.ndarray:
    """The empty table as the camera sees it: (height, width, 3) uint8 RGB.

    The table, its frame and a margin of floor are a texture patch in table millimetres, warped by the
    camera's homography; further away there is an out-of-focus backdrop drawn in image space.
    """
    height, width = camera.height, camera.width
    if look.material == "plain":
        return np.full((height, width, 3), look.colour, np.uint8)
    g = geometry
    margin = g.rim + 500.0
    corners = [
        camera.table_point(u, v, 3000.0)
        for u, v in ((0, 0), (width, 0), (width, height), (0, height), (width / 2, 0), (width / 2, height))
    ]
    points = np.array([p[:2] for p in corners if p is not None])
    gx0, gy0 = np.maximum(points.min(axis=0) - 20, [g.x0 - margin, g.y0 - margin])
    gx1, gy1 = np.minimum(points.max(axis=0) + 20, [g.x1 + margin, g.y1 + margin])
    gx1, gy1 = max(gx1, gx0 + 50), max(gy1, gy0 + 50)
    step = max(gx1 - gx0, gy1 - gy0) / 320
    nx, ny = max(8, int((gx1 - gx0) / step) + 1), max(8, int((gy1 - gy0) / step) + 1)
    xs = gx0 + (np.arange(nx, dtype=np.float32) + 0.5) * step
    ys = gy0 + (np.arange(ny, dtype=np.float32) + 0.5) * step
    wx, wy = np.meshgrid(xs, ys)
    patch = _surface(rng, look, wx, wy, step)
    inside = (wx >= g.x0) & (wx <= g.x1) & (wy >= g.y0) & (wy <= g.y1)
    on_rim = (
        (wx >= g.x0 - g.rim) & (wx <= g.x1 + g.rim) & (wy >= g.y0 - g.rim) & (wy <= g.y1 + g.rim) & ~inside
    )
    outside = ~inside
    if outside.any():
        rim = np.asarray(look.rim, np.float32) * (1 + _low_noise(rng, wx.shape, 6, 0.05))[..., None]
        beyond = _beyond(rng, look, wx, wy, step)
        patch[on_rim] = rim[on_rim]
        far = outside & ~on_rim
        patch[far] = beyond[far]
    # patch pixel (i, j) centre -> world (gx0 + (i + .5) step, ...) -> image, in cv2 pixel-centre coordinates
    to_world = np.array([[step, 0, gx0 + 0.5 * step], [0, step, gy0 + 0.5 * step], [0, 0, 1]])
    to_cv = np.array([[1, 0, CV_OFFSET], [0, 1, CV_OFFSET], [0, 0, 1]])
    matrix = to_cv @ camera.table_homography() @ to_world
    patch_u8 = np.clip(patch, 0, 255).astype(np.uint8)
    table = cv2.warpPerspective(
        patch_u8,
        matrix,
        (width, height),
        dst=_backdrop(rng, look, width, height),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_TRANSPARENT,
    )
    # Beyond the patch (far floor, the room) an out-of-focus backdrop of the same colour shows through.
    return np.asarray(table)


def _backdrop(rng: np.random.Generator, look: TableLook, width: int, height: int) -> np.ndarray:
    """The room beyond the table, far out of focus: the floor colour with broad blotches."""
    small = np.asarray(look.beyond, np.float32) * (1 + rng.normal(0, 0.2, (6, 8, 1)).astype(np.float32))
    small *= float(rng.uniform(0.55, 0.9))
    return cv2.resize(np.clip(small, 0, 255).astype(np.uint8), (width, height), interpolation=cv2.INTER_CUBIC)


def _beyond(
    rng: np.random.Generator, look: TableLook, wx: np.ndarray, wy: np.ndarray, step: float
) -> np.ndarray:
    """The floor or the players' laps below the table: darker, out of focus, broad blotches only."""
    shade = float(rng.uniform(0.55, 0.9)) * (1 + _low_noise(rng, wx.shape, 5, 0.2))
    return np.asarray(look.beyond, np.float32) * shade[..., None]


def _low_noise(rng: np.random.Generator, shape: tuple[int, ...], cells: int, amplitude: float) -> np.ndarray:
    small = rng.normal(0, amplitude, (cells, cells)).astype(np.float32)
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)


def _surface(
    rng: np.random.Generator, look: TableLook, wx: np.ndarray, wy: np.ndarray, step: float
) -> np.ndarray:
    shape = wx.shape
    base = np.asarray(look.colour, np.float32)
    if look.material == "felt":
        fine = rng.normal(0, 0.035, shape).astype(np.float32)
        shade = 1 + _low_noise(rng, shape, 8, 0.05) + cv2.GaussianBlur(fine, (0, 0), 0.8)
        return base * shade[..., None]
    if look.material == "wood":
        c, s = math.cos(look.grain_angle), math.sin(look.grain_angle)
        along = wx * c + wy * s
        across = -wx * s + wy * c
        # Rings bent by slow noise, a second finer ring system, and per-plank shifts: no two boards alike.
        plank = float(rng.uniform(90, 200))
        board = np.floor((across + 1000) / plank)
        phase = np.sin(board * 12.9898) * 43.7  # a fixed pseudo-random offset per board
        warp = _low_noise(rng, shape, 5, 5.0) + _low_noise(rng, shape, 14, 1.2)
        rings = 2 * np.pi * across / look.period + warp + phase + 0.004 * along * np.sin(board)
        grain = 0.5 + 0.3 * np.sin(rings) + 0.2 * np.sin(2.7 * rings + warp)
        grain = np.clip(grain, 0, 1) ** 2 * float(rng.uniform(0.5, 1.0))
        edge = np.abs(((across + 1000) % plank) - plank / 2) - plank / 2  # 0 on a seam, negative inside
        seam = np.exp(-((edge / max(1.0, step * 0.7)) ** 2)).astype(np.float32)
        mix = grain[..., None]
        colour = base * (1 - mix) + np.asarray(look.colour2, np.float32) * mix
        colour *= (1 - 0.35 * seam)[..., None]
        colour *= (1 + rng.normal(0, 0.02, shape).astype(np.float32))[..., None]
        return colour
    other = np.asarray(look.colour2, np.float32)
    period = look.period
    if look.pattern == "stripes":
        band = ((wx // period) % 2).astype(np.float32) * 0.5
    elif look.pattern == "checks":
        band = (((wx // period) + (wy // period)) % 2).astype(np.float32) * 0.35
    elif look.pattern == "print":  # motifs (dots, diamonds) in a staggered grid, a little irregular
        u, v = wx / period, wy / period + 0.5 * (np.floor(wx / period) % 2)
        du, dv = u - np.floor(u) - 0.5, v - np.floor(v) - 0.5
        dot = np.hypot(du, dv) < 0.22
        diamond = (np.abs(du) + np.abs(dv) < 0.3) & (np.floor(u) % 3 == 0)
        band = (dot | diamond).astype(np.float32) * 0.85
    else:
        band = np.zeros(shape, np.float32)
    colour = base * (1 - band[..., None]) + other * band[..., None]
    return (
        colour
        * (1 + _low_noise(rng, shape, 10, 0.05) + rng.normal(0, 0.03, shape).astype(np.float32))[..., None]
    )


def apply_shadows(
    image: np.ndarray,
    camera: Camera,
    solids: list[np.ndarray],
    light: np.ndarray,
    strength: float,
    softness: float,
) -> np.ndarray:
    """Darken the table under and beside every solid (its corners), cast away from the light."""
    height, width = image.shape[:2]
    scale = 0.25
    mask = np.zeros((int(height * scale), int(width * scale)), np.uint8)
    direction = light / max(light[2], 0.15)
    for corners in solids:
        if np.min(camera.to_camera(corners)[:, 2]) < 5.0:
            continue
        on_table = corners[:, :2] - direction[:2] * corners[:, 2:3]
        footprint = corners[corners[:, 2] < 1.0, :2]
        hull = np.vstack([on_table, footprint])
        points = camera.project(np.column_stack([hull, np.zeros(len(hull))]))
        if np.abs(points).max() > 1e5:
            continue
        pts = cv2.convexHull(((points + CV_OFFSET) * scale * 16).astype(np.int32))
        cv2.fillConvexPoly(mask, pts, 255, cv2.LINE_AA, 4)
    sigma = max(0.6, softness * scale)
    blurred = cv2.GaussianBlur(mask, (0, 0), sigma)
    small = (255 - blurred.astype(np.float32) * strength).astype(np.uint8)
    factor = cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
    return np.asarray(cv2.multiply(image, cv2.merge([factor] * 3), scale=1 / 255.0))
