"""The look of one scene's tile set: size, body and back colours, and where the face artwork comes from.

Procedural face styles are a fixed pool (``PROCEDURAL_STYLES``) so their faces render once per process;
the per-scene body colour, rounding and a small ink colour shift are applied when a face is first used
in a scene.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from datasets.synth import art
from datasets.synth.faces import FaceKey, FaceStyle, random_face_style, render_face
from datasets.synth.ink import Colour, in_ink
from datasets.synth.layout import TileDims
from datasets.synth.tile_body import FaceBase, Texture, face_base, face_texture, plain_texture

TEX_W, TEX_H = 100, 138
PROCEDURAL_STYLES = 64
RED_FIVES_P = 0.25  # share of sets whose fives are printed red (赤五): Japanese and generic sets
FIVES = (4, 13, 22)  # 5m, 5p, 5s: a red five is labelled the plain five
FOUR_DOTS = 12  # 4p
RED_FIVE_INKS: tuple[Colour, ...] = ((205, 25, 35), (220, 40, 45), (185, 20, 40), (230, 60, 50))
# sets printed in one ink (every face red, blue, green or black; red in four of seven, as the red fives'
# inks): a face's colour then tells nothing of its number, so a classifier trained on them reads a red
# five's numeral by its shape
ONE_INKS: tuple[Colour, ...] = (*RED_FIVE_INKS, (30, 55, 160), (25, 110, 60), (30, 30, 35))

BODIES: tuple[Colour, ...] = (
    (246, 243, 232),
    (250, 249, 244),
    (240, 233, 210),
    (236, 238, 228),
    (244, 238, 222),
)
BACKS: tuple[Colour, ...] = (
    (30, 140, 70),
    (20, 100, 55),
    (60, 170, 90),
    (40, 95, 190),
    (80, 150, 225),
    (25, 50, 120),
    (235, 190, 40),
    (235, 120, 30),
    (205, 40, 140),
    (120, 60, 170),
    (185, 35, 40),
    (40, 150, 150),
    (35, 35, 40),
    (130, 130, 135),
    (110, 25, 35),
    (225, 150, 170),
)


@functools.cache
def procedural_style(style_id: int) -> FaceStyle:
    return random_face_style(np.random.default_rng([0x7A11E5, style_id]))


@functools.lru_cache(maxsize=4096)
def procedural_ink(style_id: int, key: FaceKey) -> np.ndarray:
    ink = render_face(procedural_style(style_id), key, TEX_W, TEX_H)
    ink.setflags(write=False)
    return ink


@dataclass
class TileLook:
    dims: TileDims
    body: Colour
    back: Colour
    split: float  # fraction of the thickness that is ivory (the rest is the back colour)
    corner: float
    bevel: float
    ink_gain: np.ndarray
    source: str
    style_id: int  # procedural style (honours of art sets, or everything)
    art_set: art.ArtSet | None = None
    red_five: Colour | None = None  # the ink of the set's fives, when they are red fives
    flower_four: bool = False  # its 4 筒 printed with a red flower between the pips (``with_flower``)
    _textures: dict[FaceKey, Texture] = field(default_factory=dict)
    _base: FaceBase | None = None
    _back: Texture | None = None

    def ink(self, key: FaceKey) -> np.ndarray:
        if self.art_set is not None and key in self.art_set.faces:
            ink = self.art_set.faces[key]
        else:
            ink = procedural_ink(self.style_id, key)
        if self.flower_four and key == FOUR_DOTS:
            ink = with_flower(ink)
        return in_ink(ink, self.red_five) if self.red_five is not None and key in FIVES else ink

    def release(self) -> None:
        """Drop this scene's composed textures (they are rebuilt on demand)."""
        self._textures.clear()
        self._back = None
        self._base = None

    def back_texture(self) -> Texture:
        """The back of a tile: its colour with the same rounded corners and bevel as the faces."""
        if self._back is None:
            self._back = plain_texture(TEX_W // 2, TEX_H // 2, self.back, self.corner, self.bevel * 1.5)
        return self._back

    def texture(self, key: FaceKey) -> Texture:
        texture = self._textures.get(key)
        if texture is None:
            if self._base is None:
                self._base = face_base(TEX_W, TEX_H, self.body, self.corner, self.bevel, self.ink_gain)
            texture = face_texture(self.ink(key), self._base)
            self._textures[key] = texture
        return texture


def with_flower(ink: np.ndarray) -> np.ndarray:
    """A face's ink with a small red flower (a diamond) at its centre: a 4 筒 as some sets print it, which
    the shipped classifier reads as a 5 筒 in every copy (for measuring the sets a player teaches)."""
    import cv2

    marked = ink.copy()
    height, width = marked.shape[:2]
    x, y, r = width // 2, height // 2, width // 9
    diamond = np.array([[x, y - r], [x + r, y], [x, y + r], [x - r, y]], np.int32)
    cv2.fillConvexPoly(marked, diamond, (200, 30, 40, 255), lineType=cv2.LINE_AA)
    return marked


def random_red_five(rng: np.random.Generator, share: float = RED_FIVES_P) -> Colour | None:
    """The red of a set's fives (``share`` of sets), or None: most print them as the other tiles."""
    red = jitter(rng, RED_FIVE_INKS[int(rng.integers(len(RED_FIVE_INKS)))], 12)
    return red if rng.random() < share else None  # drawn alike whatever the share: scenes stay seeded


def random_one_ink(rng: np.random.Generator, share: float) -> Colour | None:
    """The one ink every face of a set prints in (``share`` of sets), or None.

    At a share of 0 nothing is drawn from ``rng``, so crops rendered without the option are the same,
    seed for seed, as before it (the benchmarks' rendered crops among them); at any other share every
    later draw moves."""
    if share <= 0:
        return None
    ink = jitter(rng, ONE_INKS[int(rng.integers(len(ONE_INKS)))], 12)
    return ink if rng.random() < share else None


def random_look(
    rng: np.random.Generator,
    art_sources: tuple[art.ArtSource, ...],
    art_p: float,
    style: int | None = None,
    flower_four: bool = False,
    red_five_p: float = RED_FIVES_P,
    set_seed: int | None = None,
) -> TileLook:
    """A set's look drawn from ``rng``; ``style``: its faces are procedural style ``style`` whatever is
    drawn (the same draws are made, so the rest of a seed's scene stays as it is); ``flower_four``: its 4 筒
    printed with a flower between the pips (``with_flower``); ``red_five_p``: the chance its fives are red.
    ``set_seed``: the one set every scene of that seed shows, as a player uses one set all evening (its look
    drawn from the seed alone, red fives at the usual share); ``rng`` is drawn from as without it, so the rest
    of a scene is what its seed makes it either way."""
    own = _drawn_look(rng, art_sources, art_p, style, flower_four, red_five_p)
    if set_seed is None:
        return own
    return _drawn_look(np.random.default_rng(set_seed), art_sources, art_p, style, flower_four, RED_FIVES_P)


def _drawn_look(
    rng: np.random.Generator,
    art_sources: tuple[art.ArtSource, ...],
    art_p: float,
    style: int | None,
    flower_four: bool,
    red_five_p: float,
) -> TileLook:
    width = float(rng.uniform(23, 30))
    # slim to squat faces, thin (travel sets) to thick (automatic-table) tiles
    dims = TileDims(width, width * float(rng.uniform(1.22, 1.5)), width * float(rng.uniform(0.5, 0.9)))
    body = jitter(rng, BODIES[int(rng.integers(len(BODIES)))], 6)
    back = jitter(rng, BACKS[int(rng.integers(len(BACKS)))], 18)
    style_id = int(rng.integers(PROCEDURAL_STYLES))
    art_set = None
    source = f"procedural-{style_id}"
    use_art = bool(art_sources) and rng.random() < art_p
    art_index = int(rng.integers(len(art_sources))) if art_sources else 0
    if style is not None:
        style_id, source, use_art = style, f"procedural-{style}", False
    if use_art:
        art_set = art.load(art_sources[art_index], TEX_W, TEX_H)
        source = art_set.name
        body = art_set.body or body
        back = art_set.back if art_set.back is not None and rng.random() < 0.5 else back
    return TileLook(
        dims=dims,
        body=body,
        back=back,
        split=float(rng.uniform(0.42, 0.66)),
        corner=round(float(rng.uniform(0.08, 0.16)), 2),  # rounded: face bases are cached by these values
        bevel=round(float(rng.uniform(0.05, 0.16)), 2),
        ink_gain=rng.uniform(0.88, 1.12, 3).astype(np.float32),
        source=source,
        style_id=style_id,
        art_set=art_set,
        red_five=random_red_five(rng, red_five_p),
        flower_four=flower_four,
    )


def jitter(rng: np.random.Generator, colour: Colour, amount: int) -> Colour:
    return tuple(int(np.clip(c + rng.integers(-amount, amount + 1), 0, 255)) for c in colour)  # type: ignore[return-value]
