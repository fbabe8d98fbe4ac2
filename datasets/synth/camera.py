"""A pinhole camera over the table: world millimetres (x right, y away from the player, z up) to pixels.

Image coordinates are continuous with pixel ``j`` covering ``[j, j + 1)``; cv2 functions, which put pixel
centres on integers, get coordinates shifted by -0.5 (``CV_OFFSET``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CV_OFFSET = -0.5


@dataclass(frozen=True)
class Camera:
    focal: float  # pixels
    width: int
    height: int
    rotation: np.ndarray  # 3x3, rows: image-right, image-down, forward (world directions)
    centre: np.ndarray  # camera position, world mm

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        return (np.asarray(points, np.float64) - self.centre) @ self.rotation.T

    def project(self, points: np.ndarray) -> np.ndarray:
        """(N, 3) world points -> (N, 2) image coordinates."""
        pc = self.to_camera(points)
        z = np.maximum(pc[:, 2], 1e-6)
        return np.stack(
            [self.focal * pc[:, 0] / z + self.width / 2, self.focal * pc[:, 1] / z + self.height / 2], axis=1
        )

    def depth(self, points: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.asarray(points, np.float64) - self.centre, axis=-1)

    def table_homography(self) -> np.ndarray:
        """3x3 map from table-plane (x, y, z=0) to image coordinates."""
        k = np.array([[self.focal, 0, self.width / 2], [0, self.focal, self.height / 2], [0, 0, 1]])
        r = self.rotation
        return k @ np.column_stack([r[:, 0], r[:, 1], -r @ self.centre])

    def sees_front(self, point: np.ndarray, normal: np.ndarray) -> float:
        """Cosine between a face normal and the direction to the camera (> 0: the face is visible)."""
        to_cam = self.centre - point
        return float(np.dot(normal, to_cam) / (np.linalg.norm(to_cam) + 1e-9))

    def table_point(self, u: float, v: float, max_range: float) -> np.ndarray | None:
        """Where the ray through image point (u, v) meets the table, if it does within ``max_range``."""
        ray = self.rotation.T @ np.array(
            [(u - self.width / 2) / self.focal, (v - self.height / 2) / self.focal, 1]
        )
        if ray[2] > -1e-6:
            return None
        t = -self.centre[2] / ray[2]
        point = self.centre + t * ray
        offset = point[:2] - self.centre[:2]
        distance = float(np.linalg.norm(offset))
        if distance > max_range:
            point[:2] = self.centre[:2] + offset * (max_range / distance)
        return point


def look_rotation(elevation: float, azimuth: float, roll: float) -> np.ndarray:
    """Rotation for a camera looking down at ``elevation`` radians below horizontal.

    ``azimuth`` 0 looks along +y (from the player's seat across the table); ``roll`` turns the image.
    """
    forward = np.array(
        [
            math.sin(azimuth) * math.cos(elevation),
            math.cos(azimuth) * math.cos(elevation),
            -math.sin(elevation),
        ]
    )
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    c, s = math.cos(roll), math.sin(roll)
    right, down = c * right + s * down, -s * right + c * down
    return np.stack([right, down, forward])


def fit_camera(
    key_points: np.ndarray,
    rotation: np.ndarray,
    focal: float,
    size: tuple[int, int],
    fill: float,
    placement: tuple[float, float],
    margin: float = 0.04,
) -> Camera:
    """Place the camera so ``key_points`` span about ``fill`` of the frame, at ``placement`` (0..1) of the
    slack.

    The points never leave the frame (with ``margin``), whatever ``fill`` asks.
    """
    width, height = size
    target = key_points.mean(axis=0)
    forward = rotation[2]
    extent = float(np.max(np.linalg.norm(key_points - target, axis=1))) + 1.0
    distance = focal * extent * 2 / (min(width, height) * max(fill, 0.05))
    centre = target - forward * distance
    lo = np.array([margin * width, margin * height])
    hi = np.array([(1 - margin) * width, (1 - margin) * height])
    fill = min(max(fill, 0.05), 0.98)
    for _ in range(16):
        camera = Camera(focal, width, height, rotation, centre)
        pts = camera.project(key_points)
        span = pts.max(axis=0) - pts.min(axis=0)
        ratio = float(np.max(span / (hi - lo)))
        if abs(ratio - fill) > 0.01 * fill:
            centre = target - forward * (float(np.dot(target - centre, forward)) * ratio / fill)
            continue
        # Shift sideways so the points' box sits at ``placement`` within the free space.
        free = np.maximum((hi - lo) - span, 0)
        shift = lo + free * np.asarray(placement) - pts.min(axis=0)
        if np.all(np.abs(shift) < 0.5):
            break
        depth = float(np.mean(camera.to_camera(key_points)[:, 2]))
        centre = centre - (rotation[0] * shift[0] + rotation[1] * shift[1]) * depth / focal
        target = centre + forward * float(np.dot(target - centre, forward))
    return Camera(focal, width, height, rotation, centre)
