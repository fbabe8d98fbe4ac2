"""The set on the table, learnt from examples: each face's features as the classifier sees them.

A player uses one set all evening, and a set whose art differs from every set the classifier trained on is
misread systematically (the same face wrong in every copy). The classifier's pooled features
(``TileClassifier.read_views``) still tell that set's faces apart: compared by cosine similarity with one
example of each face cut from one photo of the set, they name its tiles far better than its class layer does.

``TileSet`` holds the examples (a class id and an L2-normalised feature vector each, every view the reader
uses: as it lies, upside down, turned along its row both ways up) and reads a tile from its two views:
``similarities`` gives its cosine to each face of the set (the best example of that face, averaged over the
tile's views), and ``read`` turns the classifier's probabilities into the set's reading (``FUSION``). The
layout a set is taught from (``name_layout``): the 27 suited tiles face up in three rows of nine, 万 on top,
筒 in the middle, 条 at the bottom, 1 to 9 left to right, and an optional fourth row of the set's variants.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from scoring.errors import SmjError
from scoring.tiles import CLASS_NAMES
from vision.contract import CLASSIFIER_CLASSES, NONE
from vision.detections import BACK
from vision.geometry.boxes import drop_duplicates
from vision.geometry.rows import find_rows

SUITED = len(CLASS_NAMES)
# a tile at least this near (cosine) to one of the set's faces, and nearer than any two of its faces are
# to each other, is that tile whatever the classifier says: it lies between how near an honour tile comes to
# its nearest suited face and how near a tile lies to its own (models/HISTORY.md, "The reader's constants")
SURE = 0.8
TEMPERATURE = 0.05  # of the softmax of cosine similarities that shares a tile's suited probability out
# the fourth row of a layout, left to right, each optional but in this order: a red 5万, a red 5筒, a red 5条
# (each read as its five) and a back
VARIANTS: tuple[tuple[str, int], ...] = (
    ("red 5m", CLASS_NAMES.index("m5")),
    ("red 5p", CLASS_NAMES.index("p5")),
    ("red 5s", CLASS_NAMES.index("s5")),
    ("back", BACK),
)
ROW_SUITS = ("m", "p", "s")
DUPLICATE_IOU = 0.5  # two boxes overlapping this much (or one this much inside the other) are one tile
DUPLICATE_COVER = 0.5
SUIT_NAMES = {"m": "万 (m)", "p": "筒 (p)", "s": "条 (s)"}


class Fusion(StrEnum):
    """How a set's similarities and the classifier's probabilities make a tile's reading."""

    FUSED = "fused"  # the classifier's probability of the set's faces shared out by a softmax of similarities
    NEAREST = "nearest"  # the softmax of similarities alone, over the classifier's probability of the faces


FUSION = Fusion.NEAREST  # measured against NEAREST in models/README.md ("Your set")


class LayoutError(SmjError):
    """A photo that is not the layout a set is taught from; the message says what was seen."""

    code = "not_a_layout"


@dataclass(frozen=True, eq=False)
class TileSet:
    """Examples of a set's faces: ``faces`` (M,) class ids into ``CLASSIFIER_CLASSES``, ascending, and
    ``features`` (M, D) L2-normalised. Build it with ``TileSet.of``, which orders them and measures
    ``separation``."""

    name: str
    faces: np.ndarray
    features: np.ndarray
    # the highest cosine between examples of two different faces: a crop nearer than this to one of the
    # set's faces is that tile, whatever the classifier thinks (a red five it calls no tile)
    separation: float

    @classmethod
    def of(cls, name: str, faces: np.ndarray | list[int], features: np.ndarray) -> TileSet:
        faces = np.asarray(faces, np.int64).reshape(-1)
        if not len(faces):
            raise ValueError(f"set {name!r}: no examples")
        features = np.asarray(features, np.float32).reshape(len(faces), -1)
        if faces.min() < 0 or faces.max() >= len(CLASSIFIER_CLASSES):
            raise ValueError(f"set {name!r}: face ids must index the classifier's classes")
        order = np.argsort(faces, kind="stable")  # examples of one face side by side (``similarities``)
        faces, features = faces[order], np.ascontiguousarray(features[order])
        cosines = features @ features.T
        different = faces[:, None] != faces[None, :]
        separation = float(cosines[different].max()) if different.any() else 1.0
        return cls(name, faces, features, separation)

    @property
    def classes(self) -> np.ndarray:
        """The class ids the set has examples of, ascending."""
        return np.unique(self.faces)

    def similarities(self, views: np.ndarray) -> np.ndarray:
        """(N, len(classes)): each tile's cosine to each face of the set, from (N, V, D) features of its
        views: the best example of the face for each view, averaged over the views."""
        views = np.asarray(views, np.float32)
        n, count, _ = views.shape
        cosines = views.reshape(n * count, -1) @ self.features.T  # (N*V, M)
        starts = np.flatnonzero(np.r_[True, self.faces[1:] != self.faces[:-1]])  # faces sorted by ``of``
        best = np.maximum.reduceat(cosines, starts, axis=1) if len(cosines) else cosines[:, starts]
        return best.reshape(n, count, len(starts)).mean(axis=1)

    def read(self, probabilities: np.ndarray, views: np.ndarray, fusion: Fusion = FUSION) -> np.ndarray:
        """(N, len(CLASSIFIER_CLASSES)) probabilities of tiles read with this set.

        The classifier's probability that a tile is one of the set's faces is shared out among them by a
        softmax of its similarities (at ``TEMPERATURE``): ``FUSED`` weighs that softmax by the classifier's
        own probabilities of those faces, ``NEAREST`` takes it alone (a suited face the set has no example
        of counts as near as two different faces of the set are). A face the set has no example of
        (``back``, ``honour``, ``none`` unless taught) keeps the classifier's probability, and a tile the
        classifier reads as such a face keeps the classifier's reading, unless the tile is nearer to one of
        the set's faces than two different faces of the set are to each other (``separation``) and than
        ``SURE``: then it is that tile, all of its probability shared out.
        """
        probabilities = np.asarray(probabilities, np.float32)
        if not len(probabilities):
            return probabilities.copy()
        known = self.classes
        # every suited face takes part: one the set has no example of left (renamed away) is as near as
        # two different faces of the set are, so it is read only where no face of the set is nearer
        classes = np.union1d(known, np.arange(SUITED))
        similarities = np.full((len(probabilities), len(classes)), self.separation, np.float32)
        similarities[:, np.searchsorted(classes, known)] = self.similarities(views)
        weights = np.exp((similarities - similarities.max(axis=1, keepdims=True)) / TEMPERATURE)
        if fusion is Fusion.FUSED:
            weights *= np.maximum(probabilities[:, classes], 1e-6)
        weights /= weights.sum(axis=1, keepdims=True)
        sure = similarities.max(axis=1) > max(self.separation, SURE)  # (never by a face without examples)
        # a tile the classifier reads as a face the set has no example of (an honour, no tile) stays its
        # call: sharing out its suited probability would make the likeliest of its suited faces likelier
        # than the honour it is
        theirs = ~sure & ~np.isin(probabilities.argmax(axis=1), classes)
        shared = np.where(sure, 1.0, probabilities[:, classes].sum(axis=1))
        read = np.where(sure[:, None], 0.0, probabilities)
        read[:, classes] = shared[:, None] * weights
        read[theirs] = probabilities[theirs]
        return read


@dataclass(frozen=True)
class Layout:
    """The tiles of a layout photo named: ``faces[i]`` the class id of ``tiles[i]`` (an index into the boxes
    given to ``name_layout``), ``variants`` how many of them came from the fourth row, ``turned`` whether
    the photo was taken from across the table (its rows read upside down)."""

    tiles: tuple[int, ...]
    faces: tuple[int, ...]
    variants: int
    turned: bool


def name_layout(
    boxes: np.ndarray,
    probabilities: np.ndarray,
    suits: tuple[str, ...] = ROW_SUITS,
    scores: np.ndarray | None = None,
) -> Layout:
    """Name each tile of a photo of the layout a set is taught from, by its place: a row of nine of each of
    ``suits`` (by default 万, 筒 and 条, from the top; one suit: a photo of one row adding to a set).

    ``boxes`` (N, 4) and the classifier's ``probabilities`` (N, C) of what the localiser found: every box,
    or when they do not make the layout those the classifier does not read as no tile; of two boxes on one
    tile (``DUPLICATE_IOU``, or one half
    inside the other) the one the localiser is less sure of (``scores``). The rows
    (``vision.geometry.rows.find_rows``) must be one of nine a suit, and may have one more of one to four
    variants (``VARIANTS``, named in that order by the classifier's likeliest reading of them among the
    four). Rows are ordered across their direction and tiles along it; a photo taken from across the table
    reads the whole layout upside down: the way up taken is the one on which the classifier's own readings
    agree most. Raises ``LayoutError`` saying what was seen.
    """
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    probabilities = np.asarray(probabilities, np.float32)
    found = np.arange(len(boxes))
    tiles = np.flatnonzero(probabilities.argmax(axis=1) != NONE) if len(boxes) else found
    # every box first (a face of a set the classifier has never seen may read as no tile), then the tiles
    for chosen in (found, tiles) if len(tiles) < len(found) else (tiles,):
        full, extra, sizes, count = _rows(boxes, chosen, scores, len(suits), set(tiles.tolist()))
        if full is not None:
            break
    if full is None:
        seen = ", ".join(str(size) for size in sizes) or "none"
        if len(suits) == 1:
            wanted = f"lay the nine {SUIT_NAMES[suits[0]]} tiles out face up in one row, 1 to 9 left to right"
        else:
            wanted = (
                "lay the 27 suited tiles out face up in three rows of nine (万 on top, 筒 in the middle, "
                "条 at the bottom, 1 to 9 left to right)"
            )
        raise LayoutError(
            f"found {count} tiles in rows of {seen}: {wanted}, and at most one more row below of up to "
            f"{len(VARIANTS)} variants (red 5万, 5筒, 5条, a back, in that order)"
        )
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    along = _direction(centres, full)
    across = np.array([-along[1], along[0]])  # y down: down the photo when the rows run left to right
    ordered = sorted([*full, *extra], key=lambda row: float(np.mean(centres[row] @ across)))
    ordered = [sorted(row, key=lambda i: float(centres[i] @ along)) for row in ordered]
    candidates = [_named(ordered, extra, probabilities, suits, turned) for turned in (False, True)]
    return max(candidates, key=lambda named: named[0])[1]


def _rows(
    boxes: np.ndarray, chosen: np.ndarray, scores: np.ndarray | None, suits: int, tiles: set[int]
) -> tuple[list[list[int]] | None, list[list[int]], list[int], int]:
    """The rows of nine and the variants' row of the ``chosen`` boxes (one box a tile), None for the rows of
    nine when they are not the layout's (a variant must be one of ``tiles``, boxes read as a tile); with the
    rows' sizes, largest first, and the tiles counted."""
    if len(chosen):
        confidence = None if scores is None else np.asarray(scores)[chosen]
        kept, _ = drop_duplicates(boxes[chosen], confidence, iou=DUPLICATE_IOU, cover=DUPLICATE_COVER)
        chosen = chosen[kept]
    rows = [[int(chosen[i]) for i in row.members] for row in find_rows(boxes[chosen])] if len(chosen) else []
    sizes = sorted((len(row) for row in rows), reverse=True)
    full = [row for row in rows if len(row) == 9]
    extra = [row for row in rows if len(row) != 9]
    if len(full) != suits or len(extra) > 1 or (extra and len(extra[0]) > len(VARIANTS)):
        return None, extra, sizes, len(chosen)
    if extra and not set(extra[0]) <= tiles:
        return None, extra, sizes, len(chosen)
    return full, extra, sizes, len(chosen)


def _direction(centres: np.ndarray, rows: list[list[int]]) -> np.ndarray:
    """The unit direction the rows run in (first tile to last, pointing rightwards in the photo)."""
    steps = []
    for row in rows:
        points = centres[row]
        _, _, vt = np.linalg.svd(points - points.mean(axis=0))
        step = vt[0]
        steps.append(step if step[0] >= 0 else -step)
    mean = np.mean(steps, axis=0)
    if abs(mean[0]) < 1e-9 and mean[1] < 0:
        mean = -mean
    return mean / max(float(np.linalg.norm(mean)), 1e-9)


def _named(
    ordered: list[list[int]],
    extra: list[list[int]],
    probabilities: np.ndarray,
    suits: tuple[str, ...],
    turned: bool,
) -> tuple[float, Layout]:
    """The layout read one way up, and how well the classifier's readings agree with it (log-likelihood)."""
    rows = [list(reversed(row)) for row in reversed(ordered)] if turned else list(ordered)
    variants = rows.pop() if extra else []
    if any(len(row) != 9 for row in rows):  # the variants' row lies above the others this way up
        return -math.inf, Layout((), (), 0, turned)
    tiles: list[int] = []
    faces: list[int] = []
    for suit, row in zip(suits, rows, strict=True):
        tiles += row
        faces += [CLASS_NAMES.index(f"{suit}{rank}") for rank in range(1, 10)]
    if variants:
        tiles += variants
        faces += _variant_faces(variants, probabilities)
    chosen = probabilities[tiles, faces]
    agreement = float(np.log(np.maximum(chosen, 1e-6)).sum())
    return agreement, Layout(tuple(tiles), tuple(faces), len(variants), turned)


def _variant_faces(tiles: list[int], probabilities: np.ndarray) -> list[int]:
    """The variants' faces: the choice of ``VARIANTS`` in their order that the classifier finds likeliest."""
    faces = [face for _, face in VARIANTS]
    best: tuple[float, tuple[int, ...]] = (-math.inf, ())
    for chosen in itertools.combinations(faces, len(tiles)):
        likelihood = float(np.log(np.maximum(probabilities[tiles, list(chosen)], 1e-6)).sum())
        best = max(best, (likelihood, chosen))
    return list(best[1])
