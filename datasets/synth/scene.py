"""One synthetic photo of a winning hand with exact labels: ``render_scene(seed, index, size, art, options)``.

A scene is drawn in this order: tile set look, the truth hand, camera angles, the player's group (hand
row plus melds), the camera fitted to that group, the table and clutter around it (discards, other
players' rows and melds, walls, stray tiles, honour tiles, props), shadows, every solid far-to-near,
then the camera effects. Labels come from the id buffer filled while drawing, so every box is the
tight axis-aligned box of what is visible of that tile (of its face when face up, as the real photos are
labelled), occlusion and the image border included. Everything random comes from one generator seeded
by ``(seed, index)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from datasets.labels import Box
from datasets.synth import art
from datasets.synth.aim import aim_camera, median_tile_px, random_placement, random_roll
from datasets.synth.boxes import SceneBox, label_tiles
from datasets.synth.calibration import render_calibration
from datasets.synth.camera import look_rotation
from datasets.synth.clutter import Clutter, place_clutter
from datasets.synth.hands import random_hand
from datasets.synth.layout import STAND, UP, Placed, TileDims, player_layout
from datasets.synth.look import RED_FIVES_P, TileLook, random_look
from datasets.synth.loose import LOOSE_RED_FIVES_P, render_closeup, render_empty, render_shelf, split_side
from datasets.synth.photo import PhotoParams, photograph, plain_photo_params, random_photo_params
from datasets.synth.props import Disc
from datasets.synth.stage import body_for, lit_canvas, table_geometry
from datasets.synth.table import TableGeometry, random_table_look
from datasets.synth.tile_body import Body, Canvas, flat_axes
from datasets.yolo import format_label_lines
from scoring.hand import Hand


@dataclass(frozen=True)
class SceneOptions:
    size: tuple[int, int] = (1280, 960)
    honour_p: float = 0.3  # probability that a scene has honour tiles (class 'honour') somewhere
    art_p: float = 0.5  # probability of using an --art set (when any is given) instead of procedural faces
    winning_p: float = 0.95  # probability that the hand is a complete winning shape
    win_apart_p: float = 0.4  # probability that the winning tile stands apart at the right end
    hand_pose: str | None = None  # "stand", "up" (pushed down face up) or None for either
    photo: bool = True  # lighting, blur, noise, JPEG pre-compression
    clutter: bool = True  # discards, other players' tiles, walls, strays
    props: bool = True  # coins, cards, phones, dice, cups
    shadows: bool = True
    plain_table: tuple[int, int, int] | None = None  # a uniform table colour instead of a material
    fill: tuple[float, float] = (0.55, 0.98)  # how much of the frame the player's tiles span
    exif_orientation: int = 1  # 6: stored turned a quarter, upright only through EXIF (as phones write)
    packed: bool = False  # the hand row's tiles touch edge to edge (the winning tile may stand apart)
    # a photo of the layout a set is taught from instead of a hand (``datasets.synth.calibration``)
    calibration: bool = False
    style: int | None = None  # every scene's faces in this procedural style (0..63), not a random one
    flower_four: bool = False  # every 4 筒 printed with a flower between its pips (look.with_flower)
    # one set in every scene, as at a real table: its look (size, body, back, inks, red fives) drawn once
    # from this seed (``look.random_look``), the layout that teaches it (``calibration``) included
    set_seed: int | None = None
    # hand: the player's hand and the table around it; loose: as hand, with tiles lying loose around it at any
    # angle (red fives, piles, tiles on a long edge) and tile-like props; closeup: a few big loose tiles
    # filling the frame, no hand; empty: tile-like props alone, no tile; shelf: rows of books behind a
    # keyboard, seen from near the table's height, no tile (``datasets.synth.loose``)
    kind: str = "hand"


# what a face-up tile's YOLO label boxes: its visible face (as the real photos are labelled), or all of the
# tile that shows, its top too (the shipped localiser's synthetic windows: models/README.md)
LABEL_BOXES = ("face", "outline")


@dataclass(frozen=True, eq=False)
class Scene:
    image: np.ndarray  # (height, width, 3) uint8 RGB
    boxes: tuple[SceneBox, ...]
    hand: Hand | None  # None: no hand in it (a set's layout, a close-up of loose tiles, an empty table)
    win_apart: bool
    winning: bool
    hand_pose: str
    tile_source: str
    ignored: tuple[tuple[float, float, float, float], ...] = ()  # tiles too hidden or cut off to label
    index: int = 0
    photo: PhotoParams | None = None  # what the camera did to it (None: a plain render)
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def width(self) -> int:
        return int(self.image.shape[1])

    @property
    def jpeg_quality(self) -> int:
        """The quality its JPEG is written at: the camera's, or a plain render's."""
        return (self.photo or plain_photo_params()).jpeg_quality

    @property
    def height(self) -> int:
        return int(self.image.shape[0])

    def yolo_lines(self, boxes: str = "face") -> str:
        """The YOLO label lines; ``boxes``: "face" boxes a face-up tile by its visible face (``SceneBox.box``,
        as the real photos are labelled), "outline" by all of the tile that shows (``SceneBox.outline``)."""
        if boxes not in LABEL_BOXES:
            raise ValueError(f"boxes must be one of {', '.join(LABEL_BOXES)}, not {boxes!r}")
        labels = (
            Box.from_xyxy(b.class_id, b.box if boxes == "face" else b.outline, self.width, self.height)
            for b in self.boxes
        )
        return format_label_lines(labels)

    def to_json(self, image: str, with_boxes: bool = True) -> dict[str, object]:
        data: dict[str, object] = {
            "image": image,
            "width": self.width,
            "height": self.height,
            "hand": None if self.hand is None else self.hand.to_json(),
            "win_apart": self.win_apart,
            "winning": self.winning,
            "hand_pose": self.hand_pose,
            "tiles": self.tile_source,
            "tile_px": round(_number(self.extra.get("tile_px")), 1),
        }
        if self.photo is not None:
            data["photo"] = self.photo.to_json()
        if "layout" in self.extra:
            data["layout"] = self.extra["layout"]
        look = self.extra.get("look")
        if isinstance(look, TileLook):  # whether its fives print red (赤五): read as plain fives
            data["red_fives"] = look.red_five is not None
        if with_boxes:
            data["boxes"] = [b.to_json() for b in self.boxes]
            data["ignored"] = [[round(v, 1) for v in box] for box in self.ignored]
        return data


def render_scene(
    seed: int | np.random.Generator,
    index: int = 0,
    size: tuple[int, int] | None = None,
    art_sets: Sequence[art.ArtSource | str] = (),
    options: SceneOptions | None = None,
) -> Scene:
    """Render scene ``index`` of the dataset seeded ``seed`` (or draw from the generator given)."""
    options = options or SceneOptions()
    size = size or options.size
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng([int(seed), int(index)])
    sources = _sources(art_sets)
    scene = None
    for _ in range(4):  # a scene whose player's tiles are not all clearly visible is drawn again
        scene = _KINDS[_kind(options)](rng, index, size, sources, options)
        if scene.extra.get("player_ok"):
            break
    assert scene is not None
    return scene


def _sources(art_sets: Sequence[art.ArtSource | str]) -> tuple[art.ArtSource, ...]:
    folders = tuple(a for a in art_sets if isinstance(a, str))
    given = tuple(a for a in art_sets if isinstance(a, art.ArtSource))
    return given + (_discover(folders) if folders else ())


@functools.cache
def _discover(folders: tuple[str, ...]) -> tuple[art.ArtSource, ...]:
    return art.discover(folders)


def _render(
    rng: np.random.Generator,
    index: int,
    size: tuple[int, int],
    sources: tuple[art.ArtSource, ...],
    options: SceneOptions,
) -> Scene:
    width = size[0]
    loose = options.kind == "loose"
    red_fives = LOOSE_RED_FIVES_P if loose else RED_FIVES_P
    look = random_look(
        rng, sources, options.art_p, options.style, options.flower_four, red_fives, options.set_seed
    )
    dims = look.dims
    plan = random_hand(rng, options.winning_p)
    hand_pose = options.hand_pose or (STAND if rng.random() < 0.55 else UP)
    win_apart = bool(rng.random() < options.win_apart_p)
    elevation = math.radians(rng.triangular(22, 38, 58) if hand_pose == STAND else rng.uniform(35, 86))
    azimuth = math.radians(float(np.clip(rng.normal(0, 14), -35, 35)))
    roll = random_roll(rng)
    focal = (width / 2) / math.tan(math.radians(rng.uniform(50, 72)) / 2)
    front_gap = dims.depth / math.tan(elevation) * 1.2 + rng.uniform(2, 0.6 * dims.height)
    player = player_layout(rng, plan, dims, hand_pose, win_apart, front_gap, options.packed)
    player_bodies = [body_for(t, look) for t in player.tiles]
    fill = float(rng.uniform(*options.fill))
    placement = random_placement(rng, look_rotation(elevation, azimuth, roll))
    camera = aim_camera(
        player_bodies, len(plan.row), (elevation, azimuth, roll), focal, size, fill, placement
    )
    tile_px = median_tile_px(camera, player_bodies[: len(plan.row)])

    geometry = table_geometry(rng, player.tiles, dims)
    plain = options.plain_table
    table_look = random_table_look(rng, plain)
    clutter = Clutter([], [], [])
    if options.clutter or options.props:
        clutter = place_clutter(
            rng,
            plan.hand,
            player.tiles,
            look,
            geometry,
            camera,
            elevation,
            options.honour_p,
            options.clutter,
            options.props,
            loose,
        )
    if plain is None and rng.random() < 0.6:
        clutter.props.append(_near_rim(rng, geometry, player.tiles, dims, elevation, table_look.rim))

    tiles: list[Placed] = player.tiles + clutter.tiles
    bodies = player_bodies + [body_for(t, look) for t in clutter.tiles]
    for i, body in enumerate(bodies):
        body.label = i
    solids: list[Body | Disc] = [*bodies, *clutter.props]
    canvas = lit_canvas(rng, camera, geometry, table_look, solids, tile_px, options.shadows)
    if options.photo and rng.random() < 0.4:
        _gloss(canvas, rng)
    seen = label_tiles(canvas, camera, tiles, bodies)
    boxes, ignored = split_side(seen, tiles)
    params = random_photo_params(rng) if options.photo else plain_photo_params()
    final = photograph(canvas.image, params, rng) if options.photo else canvas.image
    player_ok = _player_visible(seen, len(player.tiles))
    look.release()  # the scene keeps its look (tests re-render faces from it), not ~10 MB of textures
    return Scene(
        image=final,
        boxes=boxes,
        ignored=ignored,
        hand=plan.hand,
        win_apart=win_apart,
        winning=plan.winning,
        hand_pose=hand_pose,
        tile_source=look.source,
        index=index,
        photo=params if options.photo else None,
        extra={"player_ok": player_ok, "tile_px": tile_px, "look": look},
    )


def _kind(options: SceneOptions) -> str:
    kind = "calibration" if options.calibration else options.kind
    if kind not in _KINDS:
        raise ValueError(f"unknown scene kind {kind!r}: one of {', '.join(sorted(_KINDS))}")
    return kind


Sources = tuple[art.ArtSource, ...]
Render = Callable[[np.random.Generator, int, tuple[int, int], Sources, SceneOptions], Scene]
Parts = Callable[[np.random.Generator, tuple[int, int], Sources, SceneOptions], dict[str, object]]


def _without_hand(parts: Parts) -> Render:
    """A scene kind with no hand in it, from the function that renders its parts."""

    def render(
        rng: np.random.Generator,
        index: int,
        size: tuple[int, int],
        sources: tuple[art.ArtSource, ...],
        options: SceneOptions,
    ) -> Scene:
        drawn = parts(rng, size, sources, options)
        return Scene(hand=None, win_apart=False, winning=False, hand_pose=UP, index=index, **drawn)  # type: ignore[arg-type]

    return render


def _calibration_parts(
    rng: np.random.Generator, size: tuple[int, int], sources: tuple[art.ArtSource, ...], options: SceneOptions
) -> dict[str, object]:

    return render_calibration(
        rng,
        size,
        sources,
        options.art_p,
        options.fill,
        options.photo,
        style=options.style,
        flower_four=options.flower_four,
        set_seed=options.set_seed,
    )


_KINDS: dict[str, Render] = {
    "hand": _render,
    "loose": _render,
    "closeup": _without_hand(
        lambda rng, size, sources, o: render_closeup(
            rng, size, sources, o.art_p, o.photo, o.style, o.set_seed
        )
    ),
    "empty": _without_hand(lambda rng, size, sources, o: render_empty(rng, size, o.photo)),
    "shelf": _without_hand(lambda rng, size, sources, o: render_shelf(rng, size, o.photo)),
    "calibration": _without_hand(_calibration_parts),
}
SCENE_KINDS = ("hand", "loose", "closeup", "empty", "shelf")


def _near_rim(
    rng: np.random.Generator,
    table: TableGeometry,
    player: list[Placed],
    dims: TileDims,
    elevation: float,
    colour: tuple[int, int, int],
) -> Body:
    """The raised frame along the player's edge of the table (automatic tables have one)."""
    nearest = min(t.y for t in player) - dims.height / 2
    gap = max(5.0, nearest - table.y0)
    rim_height = float(min(rng.uniform(8, 30), 0.7 * gap * math.tan(elevation)))
    axes = flat_axes(0.0, face_up=True)
    length = table.x1 - table.x0 + 2 * table.rim
    origin = np.array([table.x0 - table.rim, table.y0 - table.rim, rim_height])
    shade = tuple(int(c * 0.85) for c in colour)
    return Body(origin, axes, (length, table.rim, rim_height), colour, shade, shade, shade, 1.0)  # type: ignore[arg-type]


def _gloss(canvas: Canvas, rng: np.random.Generator) -> None:
    """A lamp's reflection on the glossy tile faces (and backs): a soft bright patch that skips the cloth."""
    height, width = canvas.height, canvas.width
    cx, cy = rng.uniform(0, 1, 2)
    radius = float(rng.uniform(0.08, 0.3))
    strength = float(rng.uniform(0.2, 0.6))
    ys, xs = np.mgrid[0:24, 0:32].astype(np.float32)
    small = np.exp(-(((xs / 31 - cx) * width / height) ** 2 + (ys / 23 - cy) ** 2) / (2 * radius**2))
    blob = cv2.resize(
        (small * 255 * strength).astype(np.float32), (width, height), interpolation=cv2.INTER_LINEAR
    )
    shiny = (canvas.ids > 0).astype(np.float32)
    boost = cv2.merge([cv2.multiply(blob, shiny)] * 3)
    canvas.image[...] = cv2.add(canvas.image, boost, dtype=cv2.CV_8U)


def _player_visible(boxes: list[SceneBox | None], count: int) -> bool:
    player = boxes[:count]
    return all(b is not None and b.visible > 0.6 for b in player)


def _number(value: object) -> float:
    """A recorded figure as a float; 0 when it was not recorded."""
    return float(value) if isinstance(value, int | float) else 0.0
