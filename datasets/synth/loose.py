"""Tiles lying loose, as real photos hold them beside a hand, and three scenes without a hand.

- ``loose_groups``: single tiles at any angle (face up, face down, on a long edge), each suit's five when
  the set prints red fives, and small piles; ``clutter.place_clutter`` puts them around the player's tiles.
- ``render_closeup``: a few big tiles filling the frame (each a tenth to a quarter of its width), lying loose.
- ``render_empty``: tile-like things alone (keyboards, dominoes, dice, playing cards, printed pages), often on
  a printed cloth: a photo in which nothing is a tile.
- ``render_shelf``: rows of books standing with their spines out behind a keyboard and other tile-like things,
  seen from near the table's height, as a webcam sees a table by a bookshelf: nothing in it is a tile either.

A tile on its long edge (``SIDE``) is neither labelled nor a false alarm: its outline goes to ``ignored``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from datasets.synth import art
from datasets.synth.aim import aim_camera, median_tile_px, random_placement
from datasets.synth.boxes import SceneBox, is_labelled, label_tiles
from datasets.synth.camera import fit_camera, look_rotation
from datasets.synth.faces import FaceKey
from datasets.synth.layout import DOWN, SIDE, UP, Occupancy, Placed, TileDims, region_sampler, try_place
from datasets.synth.look import FIVES, random_look
from datasets.synth.photo import photograph, plain_photo_params, random_photo_params
from datasets.synth.props import Prop, book_row, keyboard, place_free, place_prop, prop_footprint, random_prop
from datasets.synth.stage import body_for, lit_canvas
from datasets.synth.table import TableGeometry, random_table_look

LOOSE_RED_FIVES_P = 0.6  # share of loose-tile scenes whose set prints red fives
CLOSEUP_TILE_SHARE = (0.1, 0.25)  # a close-up tile's face width, as a share of the photo's width
BUSY_TABLE_P = 0.35  # share of close-ups and empty tables on a printed cloth


def _loose_pose(rng: np.random.Generator, side_p: float) -> str:
    u = rng.random()
    return SIDE if u < side_p else (DOWN if u < side_p + 0.1 else UP)


def loose_groups(
    rng: np.random.Generator, take: Callable[[], FaceKey], dims: TileDims, fives: tuple[FaceKey, ...] = ()
) -> list[list[Placed]]:
    """Groups to place, each laid out around the origin: ``fives`` face up one by one (a set's red fives),
    3 to 11 tiles at any angle and pose, and up to two piles of 2 to 4 tiles."""
    groups = [[Placed(key, UP, 0.0, 0.0, float(rng.uniform(0, 2 * math.pi)), role="stray")] for key in fives]
    for _ in range(int(rng.integers(3, 12))):
        pose = _loose_pose(rng, 0.2)
        groups.append([Placed(take(), pose, 0.0, 0.0, float(rng.uniform(0, 2 * math.pi)), role="stray")])
    for _ in range(int(rng.choice(3, p=(0.4, 0.4, 0.2)))):
        groups.append(pile(rng, take, dims))
    return groups


def pile(rng: np.random.Generator, take: Callable[[], FaceKey], dims: TileDims) -> list[Placed]:
    """2 to 4 tiles heaped on one another, each turned its own way and lying a little off the one below."""
    tiles = []
    for level in range(int(rng.integers(2, 5))):
        dx, dy = rng.normal(0, 0.3 * dims.width, 2) if level else (0.0, 0.0)
        pose = UP if rng.random() < 0.75 else DOWN
        yaw = float(rng.uniform(0, 2 * math.pi))
        tiles.append(Placed(take(), pose, float(dx), float(dy), yaw, level * dims.depth, role="stray"))
    return tiles


def split_side(
    seen: list[SceneBox | None], tiles: list[Placed]
) -> tuple[tuple[SceneBox, ...], tuple[tuple[float, float, float, float], ...]]:
    """The labelled boxes, and the outlines left don't-care: slivers, and every tile on its long edge."""
    boxes, ignored = [], []
    for box, tile in zip(seen, tiles, strict=True):
        if box is None:
            continue
        if tile.pose != SIDE and is_labelled(box):
            boxes.append(box)
        else:
            ignored.append(box.outline)
    return tuple(boxes), tuple(ignored)


def render_closeup(
    rng: np.random.Generator,
    size: tuple[int, int],
    sources: tuple[art.ArtSource, ...],
    art_p: float,
    photo: bool = True,
    style: int | None = None,
    set_seed: int | None = None,
) -> dict[str, object]:
    """The parts of a ``Scene``: 3 to 12 tiles lying loose, photographed close (``CLOSEUP_TILE_SHARE``);
    ``set_seed``: the one set every scene shows (``datasets.synth.look.random_look``)."""

    look = random_look(rng, sources, art_p, style, red_five_p=LOOSE_RED_FIVES_P, set_seed=set_seed)
    dims = look.dims
    spread = float(rng.uniform(1.2, 3.0)) * dims.height
    occupancy = Occupancy.around(-400, -400, 400, 400, np.array([0.0, 1.0]), math.radians(60))
    sampler = region_sampler(rng, (-spread, -spread, spread, spread))
    keys = iter(int(k) for k in rng.permutation(np.repeat(np.arange(27), 4)))
    tiles: list[Placed] = []
    fives = tuple(k for k in FIVES if look.red_five is not None and rng.random() < 0.5)
    for group in loose_groups(rng, lambda: next(keys), dims, fives)[: int(rng.integers(3, 13))]:
        tiles += try_place(occupancy, sampler, group, dims, pad=float(rng.uniform(0.5, 6))) or []
    if not tiles:
        tiles = [Placed(next(keys), UP, 0.0, 0.0, float(rng.uniform(0, 2 * math.pi)))]
    bodies = [body_for(tile, look) for tile in tiles]
    for i, body in enumerate(bodies):
        body.label = i
    elevation = math.radians(rng.uniform(45, 88))
    angles = (elevation, float(rng.uniform(-math.pi, math.pi)), math.radians(float(rng.normal(0, 10))))
    width = size[0]
    focal = (width / 2) / math.tan(math.radians(rng.uniform(50, 72)) / 2)
    placement = random_placement(rng, look_rotation(*angles))
    lo, hi = CLOSEUP_TILE_SHARE
    camera = aim_camera(
        bodies,
        len(bodies),
        angles,
        focal,
        size,
        float(rng.uniform(0.6, 0.95)),
        placement,
        (lo * width, hi * width),
    )
    table_look = random_table_look(rng, None, busy=bool(rng.random() < BUSY_TABLE_P))
    table = TableGeometry(-450.0, -450.0, 450.0, 450.0, 30.0)
    tile_px = median_tile_px(camera, bodies)
    canvas = lit_canvas(rng, camera, table, table_look, list(bodies), tile_px)
    boxes, ignored = split_side(label_tiles(canvas, camera, tiles, bodies), tiles)
    params = random_photo_params(rng) if photo else plain_photo_params()
    final = photograph(canvas.image, params, rng) if photo else canvas.image
    look.release()
    return {
        "image": final,
        "boxes": boxes,
        "ignored": ignored,
        "tile_source": look.source,
        "photo": params if photo else None,
        "extra": {"player_ok": True, "tile_px": tile_px, "look": look, "kind": "closeup"},
    }


def render_empty(rng: np.random.Generator, size: tuple[int, int], photo: bool = True) -> dict[str, object]:
    """The parts of a ``Scene`` in which nothing is a tile: 2 to 7 tile-like props (``props.TILE_LIKE``)."""
    occupancy = Occupancy.around(-400, -400, 400, 400, np.array([0.0, 1.0]), math.radians(60))
    sampler = region_sampler(rng, (-180.0, -130.0, 180.0, 130.0))
    props: list[Prop] = []
    for _ in range(int(rng.integers(2, 8))):
        placed = place_free(random_prop(rng, tile_like=True), occupancy, sampler, 16)
        props += [placed] if placed is not None else []
    angles = (
        math.radians(rng.uniform(40, 88)),
        float(rng.uniform(-math.pi, math.pi)),
        math.radians(float(rng.normal(0, 10))),
    )
    return _photo_of_props(rng, size, props, angles, photo, "empty")


def render_shelf(rng: np.random.Generator, size: tuple[int, int], photo: bool = True) -> dict[str, object]:
    """The parts of a ``Scene`` in which nothing is a tile: 1 to 3 rows of books (``props.book_row``) standing
    across the far side of the table, their spines to a camera 8-35 degrees above it, and 1 to 4 tile-like
    props in front of them, a keyboard most often."""
    elevation = math.radians(rng.uniform(8, 35))
    azimuth = float(rng.uniform(-math.pi, math.pi))
    angles = (elevation, azimuth, math.radians(float(rng.normal(0, 5))))
    ahead = np.array([math.sin(azimuth), math.cos(azimuth)])
    across = np.array([ahead[1], -ahead[0]])
    occupancy = Occupancy.around(-450, -450, 450, 450, ahead, elevation)
    props: list[Prop] = []
    offset = float(rng.uniform(-250, 0))
    for _ in range(int(rng.integers(1, 4))):
        row = book_row(rng, -azimuth)
        foot, _ = prop_footprint(row)  # the floor behind a row is the row's own to hide: only its foot taken
        width = row.size[0]
        centre = ahead * float(rng.uniform(150, 250)) + across * (offset + width / 2)
        if occupancy.free(foot + centre, 0.0):
            occupancy.add(foot + centre, 0.0)
            props.append(place_prop(row, *centre))
        offset += width + float(rng.uniform(0, 60))
    sampler = region_sampler(rng, (-160.0, -120.0, 160.0, 120.0))
    for _ in range(int(rng.integers(1, 5))):
        yaw = float(rng.uniform(0, 2 * math.pi))
        prop = random_prop(rng, tile_like=True) if rng.random() < 0.5 else keyboard(rng, yaw)
        placed = place_free(prop, occupancy, sampler, 16)
        props += [placed] if placed is not None else []
    return _photo_of_props(rng, size, props, angles, photo, "shelf")


def _photo_of_props(
    rng: np.random.Generator,
    size: tuple[int, int],
    props: list[Prop],
    angles: tuple[float, float, float],
    photo: bool,
    kind: str,
) -> dict[str, object]:
    """A photo of ``props`` alone from a camera turned by ``angles``: the parts of a scene with no tile."""

    points = np.vstack([prop.corners() for prop in props]) if props else np.zeros((1, 3))
    width = size[0]
    focal = (width / 2) / math.tan(math.radians(rng.uniform(50, 72)) / 2)
    rotation = look_rotation(*angles)
    camera = fit_camera(
        points, rotation, focal, size, float(rng.uniform(0.5, 1.0)), random_placement(rng, rotation)
    )
    depth = float(np.median(camera.to_camera(points)[:, 2]))
    table_look = random_table_look(rng, None, busy=bool(rng.random() < BUSY_TABLE_P))
    table = TableGeometry(-450.0, -450.0, 450.0, 450.0, 30.0)
    canvas = lit_canvas(rng, camera, table, table_look, list(props), 25.0 * focal / max(depth, 1.0))
    params = random_photo_params(rng) if photo else plain_photo_params()
    final = photograph(canvas.image, params, rng) if photo else canvas.image
    return {
        "image": final,
        "boxes": (),
        "ignored": (),
        "tile_source": "none",
        "photo": params if photo else None,
        "extra": {"player_ok": True, "tile_px": 0.0, "kind": kind},
    }
