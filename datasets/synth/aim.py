"""Aiming the hand-held camera: the player's tiles seen at the wanted angles and at a sensible size."""

from __future__ import annotations

import math

import numpy as np

from datasets.synth.camera import Camera, fit_camera, look_rotation
from datasets.synth.tile_body import Body

MIN_TILE_PX, MAX_TILE_PX = 18.0, 120.0  # face width of the player's tiles in the photo


def aim_camera(
    bodies: list[Body],
    hand_count: int,
    angles: tuple[float, float, float],
    focal: float,
    size: tuple[int, int],
    fill: float,
    placement: tuple[float, float],
    tile_px: tuple[float, float] = (MIN_TILE_PX, MAX_TILE_PX),
) -> Camera:
    """Fit the camera to the player's tiles so they are *seen* at the wanted elevation and azimuth.

    The tiles sit off the optical axis (``placement``), so the axis is turned until the ray to the hand's
    centre has the wanted angles; then the frame is rescaled if the hand's tiles would come out smaller
    than ``tile_px[0]`` or larger than ``tile_px[1]`` (by default ``MIN_TILE_PX`` and ``MAX_TILE_PX``).
    """
    least, most = tile_px
    elevation, azimuth, roll = angles
    key_points = np.vstack([b.corners() for b in bodies])
    hand_centre = np.mean([b.centre() for b in bodies[:hand_count]], axis=0)
    axis_elevation, axis_azimuth = elevation, azimuth
    camera = fit_camera(
        key_points, look_rotation(axis_elevation, axis_azimuth, roll), focal, size, fill, placement
    )
    for attempt in range(6):
        ray = hand_centre - camera.centre
        seen_elevation = math.asin(-ray[2] / np.linalg.norm(ray))
        seen_azimuth = math.atan2(ray[0], ray[1])
        widths = tile_widths(camera, bodies)
        typical, largest = float(np.median(widths[:hand_count])), float(widths.max())
        angles_ok = abs(seen_elevation - elevation) < 0.02 and abs(seen_azimuth - azimuth) < 0.03
        if typical < least:
            fill = min(0.98, fill * (least + 2) / typical)
        elif largest > most:
            fill = fill * (most - 3) / largest
        elif angles_ok or attempt == 5:
            break
        axis_elevation = float(
            np.clip(axis_elevation + elevation - seen_elevation, math.radians(35), math.radians(88))
        )
        axis_azimuth += azimuth - seen_azimuth
        rotation = look_rotation(axis_elevation, axis_azimuth, roll)
        camera = fit_camera(key_points, rotation, focal, size, fill, placement)
    return camera


def random_placement(rng: np.random.Generator, rotation: np.ndarray) -> tuple[float, float]:
    """Where the player's tiles sit in the frame's free space (0..1 each way).

    Photographers keep their own tiles towards the image side nearest them and show the table beyond,
    so the free space along the player's direction is biased that way.
    """
    toward_player = rotation[:2] @ np.array([0.0, -1.0, 0.0])  # image (x, y) direction of world -y
    placement = [float(rng.uniform(0, 1)), float(rng.uniform(0, 1))]
    axis = int(np.argmax(np.abs(toward_player)))
    if abs(toward_player[axis]) > 0.3:
        near_end = float(rng.uniform(0.35, 1.0))
        placement[axis] = near_end if toward_player[axis] > 0 else 1 - near_end
    return placement[0], placement[1]


def random_roll(rng: np.random.Generator) -> float:
    u = rng.random()
    if u < 0.6:
        return math.radians(rng.normal(0, 7))
    if u < 0.95:
        return math.radians(rng.uniform(-100, 100))
    return math.radians(rng.uniform(-180, 180))


def tile_widths(camera: Camera, bodies: list[Body]) -> np.ndarray:
    """Each tile's face width in pixels (the longer of its top and bottom edges)."""
    widths = []
    for body in bodies:
        quad = camera.project(body.front_corners())
        widths.append(max(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[3])))
    return np.array(widths)


def median_tile_px(camera: Camera, bodies: list[Body]) -> float:
    return float(np.median(tile_widths(camera, bodies))) if bodies else 0.0
