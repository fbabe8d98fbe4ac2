"""The stage every scene is drawn on: a tile's solid body (``body_for``), the table under the player's tiles
(``table_geometry``), and the canvas lit, shadowed and drawn far to near (``lit_canvas``). Scenes of every
kind (``scene``, ``loose``, ``calibration``) build on it; it imports none of them."""

from __future__ import annotations

import math

import numpy as np

from datasets.synth.camera import Camera
from datasets.synth.layout import SIDE, STAND, UP, Placed, TileDims
from datasets.synth.look import TileLook
from datasets.synth.props import Disc, draw_disc
from datasets.synth.table import TableGeometry, TableLook, apply_shadows, render_table
from datasets.synth.tile_body import Body, Canvas, Light, draw_body, flat_axes, side_axes, stand_axes


def lit_canvas(
    rng: np.random.Generator,
    camera: Camera,
    table: TableGeometry,
    table_look: TableLook,
    solids: list[Body | Disc],
    tile_px: float,
    shadows: bool = True,
) -> Canvas:
    """The table under a light drawn from ``rng``, the solids' shadows on it (``shadows``), and the solids
    drawn far to near."""
    light = Light(_light_direction(rng), float(rng.uniform(0.6, 0.85)))
    image = render_table(rng, camera, table, table_look)
    if shadows:
        image = apply_shadows(
            image,
            camera,
            [s.corners() for s in solids],
            light.direction,
            float(rng.uniform(0.2, 0.5)),
            tile_px * float(rng.uniform(0.08, 0.35)),
        )
    canvas = Canvas(image)
    _draw_all(canvas, camera, solids, light)
    return canvas


def _light_direction(rng: np.random.Generator) -> np.ndarray:
    elevation = math.radians(rng.uniform(40, 85))
    azimuth = rng.uniform(0, 2 * math.pi)
    return np.array(
        [
            math.cos(elevation) * math.cos(azimuth),
            math.cos(elevation) * math.sin(azimuth),
            math.sin(elevation),
        ]
    )


def body_for(tile: Placed, look: TileLook) -> Body:
    w, h, d = look.dims.width, look.dims.height, look.dims.depth
    centre = np.array([tile.x, tile.y, tile.z])
    if tile.pose == STAND:
        axes = stand_axes(tile.yaw)
        origin = centre - axes[0] * w / 2 - axes[2] * d / 2
    elif tile.pose == SIDE:
        axes = side_axes(tile.yaw)
        origin = centre - axes[1] * h / 2 - axes[2] * d / 2
    elif tile.pose == UP:
        axes = flat_axes(tile.yaw, face_up=True)
        origin = centre + np.array([0.0, 0.0, d]) - axes[0] * w / 2 - axes[1] * h / 2
    else:
        axes = flat_axes(tile.yaw, face_up=False)
        origin = centre - axes[0] * w / 2 - axes[1] * h / 2
    return Body(
        origin,
        axes,
        (w, h, d),
        look.texture(tile.key),
        look.back_texture(),
        look.body,
        look.back,
        look.split,
        edge=0.8,
    )


def table_geometry(rng: np.random.Generator, player: list[Placed], dims: TileDims) -> TableGeometry:
    xs = [t.x for t in player]
    ys = [t.y for t in player]
    near = min(ys) - dims.height / 2 - float(rng.uniform(25, 140))
    side = float(rng.uniform(780, 960))
    centre = (min(xs) + max(xs)) / 2 + float(rng.uniform(-100, 100))
    half = max(side / 2, (max(xs) - min(xs)) / 2 + 60)
    return TableGeometry(centre - half, near, centre + half, near + side, float(rng.uniform(25, 70)))


def _draw_all(canvas: Canvas, camera: Camera, solids: list[Body | Disc], light: Light) -> None:
    order = sorted(range(len(solids)), key=lambda i: -float(camera.depth(solids[i].centre())))
    for i in order:
        solid = solids[i]
        corners = solid.corners()
        if np.min(camera.to_camera(corners)[:, 2]) < 5.0:
            continue
        points = camera.project(corners)
        if (
            points[:, 0].max() < 0
            or points[:, 1].max() < 0
            or points[:, 0].min() > camera.width
            or points[:, 1].min() > camera.height
        ):
            continue
        if isinstance(solid, Disc):
            draw_disc(canvas, camera, solid, light)
        else:
            draw_body(canvas, camera, solid, light, 2 * solid.label + 1 if solid.label >= 0 else 0)
