"""Everything on the table besides the player's group: discards, other players' tiles, walls, strays, props.

Tiles are drawn from what the hand leaves (at most four copies of any tile overall); honour tiles
(winds, dragons, flowers) appear only here, never in the player's hand.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from datasets.synth.camera import Camera
from datasets.synth.faces import FLOWERS, FaceKey
from datasets.synth.layout import (
    DOWN,
    HONOURS_NO_FLOWERS,
    STAND,
    UP,
    Occupancy,
    Placed,
    Sampler,
    TileDims,
    grid_block,
    region_sampler,
    row_block,
    try_place,
    yaw_facing,
)
from datasets.synth.look import FIVES, TileLook
from datasets.synth.loose import loose_groups
from datasets.synth.props import Prop, place_free, random_prop
from datasets.synth.table import TableGeometry
from scoring.hand import Hand

Place = Callable[[Sampler, list[Placed]], "list[Placed] | None"]


@dataclass
class Clutter:
    tiles: list[Placed]
    props: list[Prop]
    notes: list[str]


class _Pool:
    """Tiles still available: four of each suited tile and honour, minus those already shown."""

    def __init__(self, rng: np.random.Generator, used: tuple[int, ...], honours: bool) -> None:
        self.rng = rng
        self.counts: dict[FaceKey, int] = {t: 4 for t in range(27)}
        for tile in used:
            self.counts[tile] -= 1
        self.honours = honours
        for key in HONOURS_NO_FLOWERS:
            self.counts[key] = 4
        for key in FLOWERS:
            self.counts[key] = 1

    def take(self, honour_p: float = 0.0, flowers: bool = False) -> FaceKey:
        if self.honours and self.rng.random() < honour_p:
            keys = [k for k in (HONOURS_NO_FLOWERS + (FLOWERS if flowers else ())) if self.counts[k] > 0]
        else:
            keys = [t for t in range(27) if self.counts[t] > 0]
        if not keys:  # a very crowded table: allow a fifth copy rather than fail
            keys = list(range(27))
        key = keys[int(self.rng.integers(len(keys)))]
        self.counts[key] -= 1
        return key

    def take_same(self, n: int, honour: bool) -> FaceKey | None:
        keys = [k for k in (HONOURS_NO_FLOWERS if honour else tuple(range(27))) if self.counts[k] >= n]
        if not keys:
            return None
        key = keys[int(self.rng.integers(len(keys)))]
        self.counts[key] -= n
        return key


def place_clutter(
    rng: np.random.Generator,
    hand: Hand,
    player: list[Placed],
    look: TileLook,
    table: TableGeometry,
    camera: Camera,
    elevation: float,
    honour_p: float,
    tiles_on: bool,
    props_on: bool,
    loose: bool = False,
) -> Clutter:
    """Clutter around the player's tiles; ``loose``: tiles lying loose beside them too, and tile-like props
    (``datasets.synth.loose``)."""
    dims = look.dims
    forward = camera.rotation[2][:2]
    away = forward / np.linalg.norm(forward) if np.linalg.norm(forward) > 1e-3 else np.array([0.0, 1.0])
    margin = 320.0
    occupancy = Occupancy.around(
        table.x0 - margin, table.y0 - margin, table.x1 + margin, table.y1 + margin, away, elevation * 0.9
    )
    for tile in player:
        occupancy.add(tile.footprint(dims, pad=4.0), tile.height_above_table(dims))
    place: Place = functools.partial(try_place, occupancy, dims=dims, accept=size_check(camera, dims))
    pool = _Pool(rng, hand.all_tiles, honours=bool(rng.random() < honour_p))
    out = Clutter([], [], [])
    far_of_player = max(t.y for t in player) + dims.height
    inner = (table.x0 + 40, far_of_player + 10, table.x1 - 40, table.y1 - 50)
    whole = (table.x0 + 20, table.y0 + 20, table.x1 - 20, table.y1 - 20)
    near = _mixed(rng, _in_view(rng, camera, inner), region_sampler(rng, inner), 0.75)
    anywhere = _mixed(rng, _in_view(rng, camera, whole), region_sampler(rng, whole), 0.75)
    if tiles_on:
        _discards(rng, pool, dims, place, near, out)
        _opponents(rng, pool, dims, place, table, camera, near, out)
        _walls(rng, pool, dims, place, near, out)
        _strays(rng, pool, dims, place, anywhere, out)
        if pool.honours and rng.random() < 0.35:
            keys = [pool.take(1.0, flowers=True) for _ in range(int(rng.integers(2, 7)))]
            block = grid_block(
                rng, keys, dims, len(keys), float(rng.choice([0, math.pi / 2, math.pi])), "stray"
            )
            out.tiles += place(near, block) or []
    if loose:
        _loose(rng, pool, look, player, camera, place, occupancy, out)
    if props_on:
        bounds = (table.x0 + 10, table.y0 + 10, table.x1 - 10, table.y1 - 10)
        sampler = _mixed(rng, _in_view(rng, camera, bounds), region_sampler(rng, bounds), 0.7)
        for _ in range(int(rng.choice(5, p=(0.3, 0.3, 0.2, 0.12, 0.08)))):
            placed = place_free(random_prop(rng), occupancy, sampler, 16)
            out.props += [placed] if placed is not None else []
    return out


def _loose(
    rng: np.random.Generator,
    pool: _Pool,
    look: TileLook,
    player: list[Placed],
    camera: Camera,
    place: Place,
    occupancy: Occupancy,
    out: Clutter,
) -> None:
    """Tiles lying loose near the player's, mostly where the camera sees them (the set's red fives among
    them), and 1 to 3 tile-like props."""
    dims = look.dims
    xs, ys = [t.x for t in player], [t.y for t in player]
    around = (
        min(xs) - 6 * dims.width,
        min(ys) - 4 * dims.height,
        max(xs) + 6 * dims.width,
        max(ys) + 5 * dims.height,
    )
    sampler = _mixed(rng, _in_view(rng, camera, around), region_sampler(rng, around), 0.85)
    fives = tuple(k for k in FIVES if look.red_five is not None and pool.counts[k] > 0)
    for key in fives:
        pool.counts[key] -= 1
    for group in loose_groups(rng, pool.take, dims, fives):
        out.tiles += place(sampler, group) or []
    for _ in range(int(rng.integers(1, 4))):
        placed = place_free(random_prop(rng, tile_like=True), occupancy, sampler, 12)
        out.props += [placed] if placed is not None else []


MIN_CLUTTER_PX, MAX_CLUTTER_PX = 14.0, 125.0


def size_check(camera: Camera, dims: TileDims) -> Callable[[list[Placed]], bool]:
    """Accept a group only where each tile's face would be 14..125 px wide in the photo."""

    def accept(tiles: list[Placed]) -> bool:
        centres = np.array([[t.x, t.y, t.z] for t in tiles])
        depth = camera.to_camera(centres)[:, 2]
        if np.any(depth < 10):
            return False
        widths = dims.width * camera.focal / depth
        return bool(np.all((widths >= MIN_CLUTTER_PX) & (widths <= MAX_CLUTTER_PX)))

    return accept


def _in_view(rng: np.random.Generator, camera: Camera, bounds: tuple[float, float, float, float]) -> Sampler:
    """Points of the table inside ``bounds`` that the camera sees (so clutter shows up in the photo)."""

    def sample() -> tuple[float, float] | None:
        u = float(rng.uniform(0.03, 0.97)) * camera.width
        v = float(rng.uniform(0.03, 0.97)) * camera.height
        point = camera.table_point(u, v, 2500.0)
        if point is None:
            return None
        x, y = float(point[0]), float(point[1])
        inside = bounds[0] <= x <= bounds[2] and bounds[1] <= y <= bounds[3]
        return (x, y) if inside else None

    return sample


def _mixed(rng: np.random.Generator, first: Sampler, second: Sampler, p_first: float) -> Sampler:
    return lambda: first() if rng.random() < p_first else second()


def _discards(
    rng: np.random.Generator, pool: _Pool, dims: TileDims, place: Place, sampler: Sampler, out: Clutter
) -> None:
    for _ in range(int(rng.choice(4, p=(0.3, 0.35, 0.25, 0.1)))):
        count = int(rng.integers(1, 19))
        keys = [pool.take(0.25) for _ in range(count)]
        yaw = float(rng.choice([0.0, math.pi / 2, math.pi, -math.pi / 2])) + float(rng.normal(0, 0.05))
        block = grid_block(rng, keys, dims, int(rng.integers(4, 8)), yaw, "discard")
        out.tiles += place(sampler, block) or []


def _opponents(
    rng: np.random.Generator,
    pool: _Pool,
    dims: TileDims,
    place: Place,
    table: TableGeometry,
    camera: Camera,
    near: Sampler,
    out: Clutter,
) -> None:
    cx, cy = (table.x0 + table.x1) / 2, (table.y0 + table.y1) / 2
    seats = {
        "left": ((-1.0, 0.0), (table.x0 + 30, cy - 150, table.x0 + 110, cy + 150)),
        "far": ((0.0, 1.0), (cx - 150, table.y1 - 110, cx + 150, table.y1 - 30)),
        "right": ((1.0, 0.0), (table.x1 - 110, cy - 150, table.x1 - 30, cy + 150)),
    }
    away = camera.rotation[2][:2]
    away = away / max(float(np.linalg.norm(away)), 1e-6)
    for seat, (normal, region) in seats.items():
        if rng.random() > 0.45:
            continue
        # Their own seat, or (zoomed-in photos) somewhere in view beyond the player's tiles, turned away.
        in_view = rng.random() < 0.5
        sampler = near if in_view else region_sampler(rng, region)
        facing = (float(away[0]), float(away[1])) if in_view else normal
        yaw = yaw_facing(*facing) + float(rng.normal(0, 0.03))
        count = int(rng.integers(4, 14))
        keys = [pool.take() for _ in range(count)]
        pose = STAND if rng.random() < 0.6 else DOWN
        if pose == STAND and not in_view and _face_seen(camera, region, normal):
            pose = DOWN
        row = row_block(keys, dims, yaw, "opponent", pose)
        placed = place(sampler, row)
        out.tiles += placed or []
        if placed and rng.random() < 0.4:
            for _ in range(int(rng.integers(1, 3))):
                honour = pool.honours and rng.random() < 0.3
                size = 3 if rng.random() < 0.75 else 4
                key = pool.take_same(size, honour)
                if key is None:
                    continue
                meld = row_block([key] * size, dims, yaw, "opponent", UP, group=-1)
                xs = [t.x for t in placed]
                ys = [t.y for t in placed]
                around = (min(xs) - 120, min(ys) - 120, max(xs) + 120, max(ys) + 120)
                out.tiles += place(region_sampler(rng, around), meld) or []
        out.notes.append(seat)


def _face_seen(
    camera: Camera, region: tuple[float, float, float, float], normal: tuple[float, float]
) -> bool:
    x = (region[0] + region[2]) / 2
    y = (region[1] + region[3]) / 2
    return camera.sees_front(np.array([x, y, 15.0]), np.array([normal[0], normal[1], 0.0])) > -0.05


def _walls(
    rng: np.random.Generator, pool: _Pool, dims: TileDims, place: Place, sampler: Sampler, out: Clutter
) -> None:
    if rng.random() > 0.2:
        return
    for _ in range(int(rng.integers(1, 3))):
        keys = [pool.take() for _ in range(int(rng.integers(3, 10)))]
        yaw = float(rng.choice([0.0, math.pi / 2])) + float(rng.normal(0, 0.02))
        wall = row_block(keys, dims, yaw, "wall", DOWN, stacked=bool(rng.random() < 0.7))
        out.tiles += place(sampler, wall) or []


def _strays(
    rng: np.random.Generator, pool: _Pool, dims: TileDims, place: Place, sampler: Sampler, out: Clutter
) -> None:
    if rng.random() > 0.45:
        return
    for _ in range(int(rng.integers(1, 5))):
        key = pool.take(0.4, flowers=True)
        pose = UP if rng.random() < 0.7 else DOWN
        tile = Placed(key, pose, 0.0, 0.0, float(rng.uniform(0, 2 * math.pi)), role="stray")
        out.tiles += place(sampler, [tile]) or []
