"""Where every tile lies on the table, in world millimetres (x right, y away from the player, z up).

The player's group (the hand row and the revealed melds) is laid out first, around x = 0 .. row width
and y = 0 (the standing hand's faces are in the plane y = 0, looking at the player). Clutter (discards,
other players' rows and melds, walls, stray tiles) is placed afterwards on a free-space grid, so
nothing overlaps and little hides the player's tiles from the camera.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import cv2
import numpy as np

from datasets.synth.faces import DRAGONS, FLOWERS, WINDS, FaceKey
from datasets.synth.hands import HandPlan
from scoring.hand import MeldKind

STAND, UP, DOWN = "stand", "up", "down"
# lying on a long edge, the face upright and turned sideways: no face to read, not a tile to box
SIDE = "side"


@dataclass(frozen=True)
class TileDims:
    width: float  # W: face width, mm
    height: float  # H: face height
    depth: float  # D: thickness


@dataclass
class Placed:
    """One tile on the table: its centre on the table plane, its turn about z and how it lies."""

    key: FaceKey  # the tile (also for face-down ones)
    pose: str  # stand | up | down | side
    x: float
    y: float
    yaw: float = 0.0  # radians; 0: the face's top points away from the player (+y)
    z: float = 0.0  # height of its lowest point (stacked walls)
    role: str = "stray"  # hand | meld | discard | opponent | wall | stray
    group: int = -1
    win: bool = False

    def footprint_size(self, dims: TileDims) -> tuple[float, float]:
        """Extent along the tile's own x and y axes on the table."""
        if self.pose == SIDE:
            return (dims.depth, dims.height)
        return (dims.width, dims.depth) if self.pose == STAND else (dims.width, dims.height)

    def height_above_table(self, dims: TileDims) -> float:
        upright = {STAND: dims.height, SIDE: dims.width}
        return self.z + upright.get(self.pose, dims.depth)

    def footprint(self, dims: TileDims, pad: float = 0.0) -> np.ndarray:
        sx, sy = self.footprint_size(dims)
        return rectangle(self.x, self.y, sx + 2 * pad, sy + 2 * pad, self.yaw)


def rectangle(cx: float, cy: float, sx: float, sy: float, yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    local = np.array([[-sx / 2, -sy / 2], [sx / 2, -sy / 2], [sx / 2, sy / 2], [-sx / 2, sy / 2]])
    return local @ np.array([[c, s], [-s, c]]) + [cx, cy]


def yaw_facing(normal_x: float, normal_y: float) -> float:
    """The yaw that turns a standing tile's face (or a flat tile's bottom edge) towards ``normal``."""
    return math.atan2(normal_x, -normal_y)


# --- the player's group -------------------------------------------------------------------------------


@dataclass
class PlayerLayout:
    tiles: list[Placed]
    win_apart: bool
    hand_pose: str
    meld_mode: str


def player_layout(
    rng: np.random.Generator,
    plan: HandPlan,
    dims: TileDims,
    hand_pose: str,
    win_apart: bool,
    front_gap: float,
    packed: bool = False,
) -> PlayerLayout:
    """The hand row from x = 0 rightwards, then the melds. ``packed``: the row's tiles touch edge to edge,
    as a player pushes a standing hand together (the winning tile set apart still stands apart); the
    gaps are drawn from ``rng`` either way, so the rest of a seed's scene is the same."""
    w, h, d = dims.width, dims.height, dims.depth
    row = list(plan.row)
    win_tile = row[plan.win_index]
    win_flags = [i == plan.win_index for i in range(len(row))]
    if win_apart:
        row.pop(plan.win_index)
        win_flags.pop(plan.win_index)
        row.append(win_tile)
        win_flags.append(True)
    tiles: list[Placed] = []
    cursor = 0.0
    depth_y = d if hand_pose == STAND else h
    for i, (tile, win) in enumerate(zip(row, win_flags, strict=True)):
        if win_apart and i == len(row) - 1:
            cursor += w * rng.uniform(0.3, 1.3)
        jitter = rng.normal(0, 0.25) if hand_pose == STAND else rng.normal(0, 0.6)
        tiles.append(
            Placed(
                tile,
                hand_pose,
                cursor + w / 2,
                depth_y / 2 + jitter,
                yaw=float(rng.normal(0, 0.006 if hand_pose == STAND else 0.012)),
                role="hand",
                win=win,
            )
        )
        gap = rng.uniform(0.2, 0.9 if hand_pose == STAND else 1.6)
        cursor += w + (0.0 if packed else gap)
    hand_right = cursor
    mode = "none"
    if plan.hand.melds:
        weights = (0.5, 0.35, 0.15) if hand_pose == STAND else (0.35, 0.5, 0.15)
        mode = ("front", "right", "left")[int(rng.choice(3, p=weights))]
        tiles += _meld_rows(rng, plan, dims, mode, hand_right, depth_y, front_gap)
    return PlayerLayout(tiles, win_apart, hand_pose, mode)


def _meld_rows(
    rng: np.random.Generator,
    plan: HandPlan,
    dims: TileDims,
    mode: str,
    hand_right: float,
    hand_depth: float,
    front_gap: float,
) -> list[Placed]:
    w, h = dims.width, dims.height
    units: list[list[tuple[FaceKey, str, bool]]] = []  # per meld: (tile, pose, rotated)
    for meld, faces in zip(plan.hand.melds, plan.kong_faces, strict=True):
        size = meld.kind.size
        poses = [UP] * size
        if meld.kind is MeldKind.KONG_CONCEALED and faces == "outer_down":
            poses[0] = poses[-1] = DOWN
        rotated = int(rng.integers(size)) if rng.random() < 0.2 and poses[0] == UP else -1
        units.append([(meld.tile, pose, i == rotated) for i, pose in enumerate(poses)])
    gaps = [w * rng.uniform(0.25, 1.0) for _ in units]
    widths = [sum((h if rot else w) + 0.6 for _, _, rot in unit) for unit in units]
    total = sum(widths) + sum(gaps[1:])
    if mode == "front":
        row_far = -front_gap
        start = rng.uniform(-w, max(-w, hand_right - total + w)) if rng.random() < 0.7 else hand_right - total
    elif mode == "right":
        row_far = rng.uniform(-0.1 * h, 1.1 * h) if hand_depth < h else h + rng.uniform(-0.2, 0.1) * h
        start = hand_right + w * rng.uniform(0.5, 1.8)
    else:
        row_far = rng.uniform(-0.1 * h, 1.1 * h) if hand_depth < h else h + rng.uniform(-0.2, 0.1) * h
        start = -w * rng.uniform(0.6, 1.8) - total
    placed: list[Placed] = []
    cursor = start
    for index, unit in enumerate(units):
        if index:
            cursor += gaps[index]
        for tile, pose, rotated in unit:
            along, across = (h, w) if rotated else (w, h)
            yaw = (math.pi / 2 if rng.random() < 0.5 else -math.pi / 2) if rotated else 0.0
            yaw += float(rng.normal(0, 0.01))
            # Melds lie with their near edges in line (the edge closest to the player).
            y = row_far - h + across / 2
            placed.append(Placed(tile, pose, cursor + along / 2, y, yaw, role="meld", group=index))
            cursor += along + 0.6
    return placed


# --- free space -----------------------------------------------------------------------------------------


@dataclass
class Occupancy:
    """A coarse grid over the table marking what is taken (tiles plus the floor they hide from the camera)."""

    x0: float
    y0: float
    cell: float
    grid: np.ndarray
    away: np.ndarray = field(default_factory=lambda: np.zeros(2))  # unit: horizontal direction of view
    cot_elevation: float = 1.0

    @classmethod
    def around(
        cls, x0: float, y0: float, x1: float, y1: float, away: np.ndarray, elevation: float
    ) -> Occupancy:
        cell = 4.0
        shape = (int((y1 - y0) / cell) + 1, int((x1 - x0) / cell) + 1)
        return cls(x0, y0, cell, np.zeros(shape, np.uint8), away, 1 / math.tan(max(elevation, 0.2)))

    def _cells(self, polygon: np.ndarray, height: float) -> np.ndarray:
        shifted = polygon + self.away * height * self.cot_elevation
        hull = cv2.convexHull(np.vstack([polygon, shifted]).astype(np.float32))[:, 0, :]
        return np.round((hull - [self.x0, self.y0]) / self.cell).astype(np.int32)

    def free(self, polygon: np.ndarray, height: float) -> bool:
        cells = self._cells(polygon, height)
        lo = cells.min(axis=0)
        hi = cells.max(axis=0) + 1
        if lo[0] < 0 or lo[1] < 0 or hi[0] > self.grid.shape[1] or hi[1] > self.grid.shape[0]:
            return False
        probe = np.zeros((hi[1] - lo[1], hi[0] - lo[0]), np.uint8)
        cv2.fillConvexPoly(probe, cells - lo, 1)
        return not np.any(probe & self.grid[lo[1] : hi[1], lo[0] : hi[0]])

    def add(self, polygon: np.ndarray, height: float) -> None:
        cv2.fillConvexPoly(self.grid, self._cells(polygon, height), 1)


def group_polygon(tiles: list[Placed], dims: TileDims, pad: float) -> np.ndarray:
    points = np.vstack([t.footprint(dims, pad) for t in tiles])
    return cv2.convexHull(points.astype(np.float32))[:, 0, :].astype(np.float64)


Sampler = Callable[[], "tuple[float, float] | None"]


def region_sampler(rng: np.random.Generator, region: tuple[float, float, float, float]) -> Sampler:
    x0, y0, x1, y1 = region
    return lambda: (float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1)))


def try_place(
    occupancy: Occupancy,
    sampler: Sampler,
    tiles: list[Placed],
    dims: TileDims,
    attempts: int = 24,
    pad: float = 3.0,
    accept: Callable[[list[Placed]], bool] | None = None,
) -> list[Placed] | None:
    """Move a group (laid out around its own origin) to a free spot drawn by ``sampler``; None if none.

    ``accept`` may veto a spot (e.g. where the tiles would look too large or too small in the photo).
    """
    if not tiles:
        return None
    base = group_polygon(tiles, dims, pad)
    centre = base.mean(axis=0)
    height = max(t.height_above_table(dims) for t in tiles)
    for _ in range(attempts):
        target = sampler()
        if target is None:
            continue
        shift = np.asarray(target) - centre
        if occupancy.free(base + shift, height):
            moved = [_moved(t, shift) for t in tiles]
            if accept is not None and not accept(moved):
                continue
            occupancy.add(base + shift, height)
            return moved
    return None


def _moved(tile: Placed, shift: np.ndarray) -> Placed:
    return Placed(
        tile.key,
        tile.pose,
        tile.x + float(shift[0]),
        tile.y + float(shift[1]),
        tile.yaw,
        tile.z,
        tile.role,
        tile.group,
        tile.win,
    )


# --- clutter groups (laid out around the origin, then placed) -------------------------------------------


def grid_block(
    rng: np.random.Generator,
    keys: list[FaceKey],
    dims: TileDims,
    columns: int,
    yaw: float,
    role: str,
    pose: str = UP,
    group: int = -1,
) -> list[Placed]:
    """Tiles in rows of ``columns`` (discards), turned by ``yaw`` as a block, a little untidy."""
    tiles: list[Placed] = []
    c, s = math.cos(yaw), math.sin(yaw)
    sx, sy = dims.width + 0.8, dims.height + 1.2
    for i, key in enumerate(keys):
        lx = (i % columns) * sx + rng.normal(0, 0.6)
        ly = -(i // columns) * sy + rng.normal(0, 0.8)
        tiles.append(
            Placed(
                key,
                pose,
                lx * c - ly * s,
                lx * s + ly * c,
                yaw + float(rng.normal(0, 0.03)),
                role=role,
                group=group,
            )
        )
    return tiles


def row_block(
    keys: list[FaceKey],
    dims: TileDims,
    yaw: float,
    role: str,
    pose: str,
    group: int = -1,
    stacked: bool = False,
) -> list[Placed]:
    """A straight row (standing backs, face-down rows, walls two high) turned by ``yaw``."""
    tiles: list[Placed] = []
    c, s = math.cos(yaw), math.sin(yaw)
    step = dims.width + 0.4
    for i, key in enumerate(keys):
        lx = i * step
        layers = (0.0, dims.depth) if stacked else (0.0,)
        for z in layers:
            tiles.append(Placed(key, pose, lx * c, lx * s, yaw, z, role=role, group=group))
    return tiles


HONOURS_NO_FLOWERS: tuple[FaceKey, ...] = WINDS + DRAGONS
ALL_HONOURS: tuple[FaceKey, ...] = WINDS + DRAGONS + FLOWERS
