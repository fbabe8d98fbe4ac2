"""A photo of the layout a set is taught from (``smj set add``, ``vision.detect.tileset.name_layout``): the
27 suited tiles of one set face up in three rows of nine, 万 on top, 筒 in the middle, 条 at the bottom, 1 to
9 left to right, and below them, in some photos, a fourth row holding a back
(``vision.detect.tileset.VARIANTS``).

The camera looks down at the layout from above the player's side (or, ``turned``, from across the table:
every row then reads upside down), a little slanted and rolled, at the frame-filling share ``fill`` asks
for; the table, light and camera effects are a scene's (``datasets.synth.scene``). Labels are a scene's:
each visible face boxed with its class.
"""

from __future__ import annotations

import math

import numpy as np

from datasets.synth import art
from datasets.synth.aim import aim_camera, median_tile_px, random_placement
from datasets.synth.boxes import is_labelled, label_tiles
from datasets.synth.camera import look_rotation
from datasets.synth.layout import DOWN, UP, Placed
from datasets.synth.look import random_look
from datasets.synth.photo import photograph, plain_photo_params, random_photo_params
from datasets.synth.stage import body_for, lit_canvas, table_geometry
from datasets.synth.table import random_table_look

ROWS = ("m", "p", "s")
BACK_ROW_P = 0.5  # share of layouts with a fourth row holding a back


def layout_tiles(rng: np.random.Generator, width: float, height: float, turned: bool) -> list[Placed]:
    """The layout's tiles on the table (+y away from the player), a little untidy: the rows of 万, 筒 and 条
    from the far side to the near one, and perhaps a back below; ``turned``: all of it turned half round,
    as the player across the table lays it out."""
    gap_x, gap_y = float(rng.uniform(0.3, 3.0)), float(rng.uniform(2.0, 0.8 * height))
    # (key, column, row from the top, pose)
    keys = [(9 * row + rank, rank, row, UP) for row in range(len(ROWS)) for rank in range(9)]
    if rng.random() < BACK_ROW_P:
        keys.append((int(rng.integers(27)), 0, 3, DOWN))
    centre_x, centre_y = 4 * (width + gap_x), -1.5 * (height + gap_y)
    yaw = math.pi if turned else 0.0
    tiles = []
    for key, column, row, pose in keys:
        x = column * (width + gap_x) + float(rng.normal(0, 0.5)) - centre_x
        y = -row * (height + gap_y) + float(rng.normal(0, 0.6)) - centre_y
        if turned:
            x, y = -x, -y
        tiles.append(Placed(key, pose, x, y, yaw + float(rng.normal(0, 0.02)), role="hand"))
    return tiles


def render_calibration(
    rng: np.random.Generator,
    size: tuple[int, int],
    sources: tuple[art.ArtSource, ...],
    art_p: float,
    fill: tuple[float, float],
    photo: bool = True,
    turned: bool | None = None,
    style: int | None = None,
    flower_four: bool = False,
    set_seed: int | None = None,
) -> dict[str, object]:
    """The parts of a ``Scene`` (``datasets.synth.scene.calibration_scene`` makes one of them); ``set_seed``:
    the set every scene of that seed shows (``datasets.synth.look.random_look``)."""

    look = random_look(rng, sources, art_p, style, flower_four, set_seed=set_seed)
    dims = look.dims
    turned = bool(rng.random() < 0.3) if turned is None else turned
    tiles = layout_tiles(rng, dims.width, dims.height, turned)
    bodies = [body_for(tile, look) for tile in tiles]
    for i, body in enumerate(bodies):
        body.label = i
    elevation = math.radians(rng.uniform(55, 88))
    azimuth = math.radians(float(np.clip(rng.normal(0, 8), -20, 20)))
    roll = math.radians(float(rng.normal(0, 5)))
    width = size[0]
    focal = (width / 2) / math.tan(math.radians(rng.uniform(50, 72)) / 2)
    placement = random_placement(rng, look_rotation(elevation, azimuth, roll))
    share = float(rng.uniform(*fill))
    camera = aim_camera(bodies, 27, (elevation, azimuth, roll), focal, size, share, placement)
    table = random_table_look(rng, None)
    tile_px = median_tile_px(camera, bodies[:27])
    canvas = lit_canvas(rng, camera, table_geometry(rng, tiles, dims), table, list(bodies), tile_px)
    seen = label_tiles(canvas, camera, tiles, bodies)
    params = random_photo_params(rng) if photo else plain_photo_params()
    final = photograph(canvas.image, params, rng) if photo else canvas.image
    look.release()
    return {
        "image": final,
        "boxes": tuple(b for b in seen if b is not None and is_labelled(b)),
        "ignored": tuple(b.outline for b in seen if b is not None and not is_labelled(b)),
        "tile_source": look.source,
        "photo": params if photo else None,
        "extra": {
            "player_ok": all(b is not None and b.visible > 0.6 for b in seen[:27]),
            "tile_px": tile_px,
            "look": look,
            "layout": "turned" if turned else "upright",
        },
    }
