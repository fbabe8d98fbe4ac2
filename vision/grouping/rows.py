"""Rows and clusters of tiles, from the geometry of their boxes alone.

A *row* is a chain of tiles along one line (the standing hand, a line of melds, another player's wall);
a *cluster* is a run of touching tiles inside a row, split from the next one by a gap.

Everything is measured in *tile widths* so that it holds under perspective (far tiles are smaller and
closer together) and rotation (a rotated tile's axis-aligned box is larger than the tile):

1. Each box's *scale* is the square root of its area. The centre distance of two touching tiles, divided
   by their mean scale, is about the same everywhere in a row; its median over every tile's nearest
   neighbour is the *pitch* that turns distances into tile widths.
2. Each tile's local row direction is the mean direction to its touching neighbours (angles doubled, so
   that left and right agree); a tile with none (the winning tile set apart) takes the photo's dominant
   direction.
3. Candidate links join two tiles along their common direction (at most ``max_link_gap`` tile widths of
   gap, little sideways offset). Links are taken cheapest first, each tile keeping at most two, on
   opposite sides, and no cycles: what is left is a set of chains.
4. Each chain is split into clusters where the gap exceeds ``split_gap`` tile widths, measured against
   the pitch of the chain itself (tiles lying flat or turned in a meld have a pitch of their own).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

TOUCHING = 1.3  # two tiles whose centres are at most this many tile widths apart may be touching
SIDEWAYS = 0.35  # sideways offset allowed for a link, in tile widths ...
SIDEWAYS_SLOPE = 0.06  # ... plus this much per tile width along the row (rows converge under perspective)
COLLINEAR = math.cos(math.radians(150))  # the two links of a tile must point (nearly) opposite ways
TOUCHING_STEP = 1.2  # a step up to this times a tile's pitch still counts as touching (a small gap)
WELL_POSED = 0.5  # a box's extent is undone from a rotation of up to 30 degrees (cos 2t >= 0.5) off an axis
TURN = math.radians(40)  # a row bends less than this from the photo's dominant direction
VERTICAL = math.sin(math.radians(15))  # a row this close to vertical has no known reading direction


@dataclass(frozen=True)
class Row:
    """A chain of tiles in reading order.

    ``members`` and ``clusters`` hold positions in the boxes given to ``find_rows``; ``gaps[i]`` is the
    gap between ``clusters[i]`` and ``clusters[i + 1]`` in tile widths. ``reading_known`` is False for a
    (nearly) vertical row, whose reading order could be either way (it is then taken top to bottom).
    """

    members: tuple[int, ...]
    clusters: tuple[tuple[int, ...], ...]
    gaps: tuple[float, ...]
    reading_known: bool


def find_rows(
    boxes: np.ndarray,
    *,
    weights: np.ndarray | None = None,
    split_gap: float = 0.4,
    max_link_gap: float = 4.0,
) -> tuple[Row, ...]:
    """Chain ``boxes`` (N x 4, xyxy) into rows; every box is in exactly one row (a lone tile is a row of one).

    ``weights`` (default 1) say how much each tile counts towards the photo's dominant direction.
    """
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    n = len(boxes)
    if n == 0:
        return ()
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    sides = np.maximum(boxes[:, 2:] - boxes[:, :2], 1e-6)
    scale = np.sqrt(sides[:, 0] * sides[:, 1])
    offsets = centres[None, :, :] - centres[:, None, :]  # offsets[i, j] = centre j - centre i
    dist = np.hypot(offsets[..., 0], offsets[..., 1])
    pair_scale = (scale[:, None] + scale[None, :]) / 2
    ratio = dist / pair_scale
    np.fill_diagonal(ratio, np.inf)
    # Most tiles touch a neighbour; a low quantile keeps tiles turned in melds and lone tiles out of it.
    pitch = float(np.percentile(ratio.min(axis=1), 25)) if n > 1 else 1.0
    widths = ratio / max(pitch, 1e-6)  # centre distances in tile widths

    weights = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).reshape(n)
    dominant = _dominant(_local_directions(offsets, widths), centres, weights)
    doubled = _local_directions(offsets, widths, dominant)
    unit = pitch * pair_scale  # pixels per tile width, per pair
    links = _link(centres, offsets, unit, doubled, dominant, max_link_gap)
    expected = pitch * scale  # a tile's pitch as its box's size suggests
    rows = [_row(chain, centres, offsets, sides, expected, dominant, split_gap) for chain in _chains(n, links)]
    return tuple(sorted(rows, key=lambda row: _top_left(row, boxes)))


def _local_directions(offsets: np.ndarray, widths: np.ndarray, dominant: np.ndarray | None = None) -> np.ndarray:
    """Per tile, the doubled-angle vector (cos 2a, sin 2a) of its row, or zeros where it has no neighbour.

    Given the dominant direction, only neighbours within ``TURN`` of it count: a tile whose only close
    neighbour is in the next row (the winning tile set apart, above a line of melds) has no direction.
    """
    angle = np.arctan2(offsets[..., 1], offsets[..., 0])
    vectors = np.stack([np.cos(2 * angle), np.sin(2 * angle)], axis=-1)
    candidates = widths.copy()
    if dominant is not None:
        doubled = np.array([dominant[0] ** 2 - dominant[1] ** 2, 2 * dominant[0] * dominant[1]])
        candidates[vectors @ doubled < math.cos(2 * TURN)] = np.inf
    nearest = candidates.min(axis=1)
    touching = (candidates <= TOUCHING) & (candidates <= 1.2 * nearest[:, None])
    vectors = vectors * touching[..., None]
    summed = vectors.sum(axis=1)
    norm = np.hypot(summed[:, 0], summed[:, 1])
    counts = touching.sum(axis=1)
    # Neighbours on both sides agree; a corner (neighbours at right angles) has no direction of its own.
    clear = norm >= 0.5 * np.maximum(counts, 1)
    result = np.zeros_like(summed)
    result[clear] = summed[clear] / norm[clear, None]
    return result


def _dominant(doubled: np.ndarray, centres: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The photo's dominant row direction as a unit vector with x >= 0."""
    summed = (doubled * weights[:, None]).sum(axis=0)
    if np.hypot(*summed) > 1e-9:
        angle = math.atan2(summed[1], summed[0]) / 2
        direction = np.array([math.cos(angle), math.sin(angle)])
    elif len(centres) > 1:
        spread = centres - centres.mean(axis=0)
        _, vectors = np.linalg.eigh(spread.T @ spread)
        direction = vectors[:, -1]
    else:
        direction = np.array([1.0, 0.0])
    return direction if direction[0] > 1e-9 or (abs(direction[0]) <= 1e-9 and direction[1] > 0) else -direction


def _link(
    centres: np.ndarray,
    offsets: np.ndarray,
    unit: np.ndarray,
    doubled: np.ndarray,
    dominant: np.ndarray,
    max_link_gap: float,
) -> list[tuple[int, int]]:
    n = len(centres)
    # The direction a pair is measured along: the mean of the two tiles' own directions, or the dominant one.
    pair = doubled[:, None, :] + doubled[None, :, :]
    norm = np.hypot(pair[..., 0], pair[..., 1])
    angle = np.where(norm > 0.3, np.arctan2(pair[..., 1], pair[..., 0]) / 2, math.atan2(dominant[1], dominant[0]))
    along = np.abs(offsets[..., 0] * np.cos(angle) + offsets[..., 1] * np.sin(angle)) / unit
    across = np.abs(offsets[..., 1] * np.cos(angle) - offsets[..., 0] * np.sin(angle)) / unit
    allowed = (along <= max_link_gap + 1) & (across <= SIDEWAYS + SIDEWAYS_SLOPE * along)
    allowed &= np.triu(np.ones((n, n), dtype=bool), k=1)
    cost = along + 2 * across
    candidates = sorted(zip(*np.nonzero(allowed), strict=True), key=lambda ij: (cost[ij], ij[0], ij[1]))

    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    neighbours: list[list[int]] = [[] for _ in range(n)]
    links: list[tuple[int, int]] = []
    for i_, j_ in candidates:
        i, j = int(i_), int(j_)
        if len(neighbours[i]) >= 2 or len(neighbours[j]) >= 2 or root(i) == root(j):
            continue
        if not (_opposite(centres, i, j, neighbours[i]) and _opposite(centres, j, i, neighbours[j])):
            continue
        neighbours[i].append(j)
        neighbours[j].append(i)
        parent[root(i)] = root(j)
        links.append((i, j))
    return links


def _opposite(centres: np.ndarray, tile: int, new: int, existing: list[int]) -> bool:
    """Whether a link from ``tile`` to ``new`` points away from the tile's existing link, if any."""
    if not existing:
        return True
    a = centres[new] - centres[tile]
    b = centres[existing[0]] - centres[tile]
    return bool(a @ b <= COLLINEAR * np.hypot(*a) * np.hypot(*b))


def _chains(n: int, links: list[tuple[int, int]]) -> list[list[int]]:
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for i, j in links:
        neighbours[i].append(j)
        neighbours[j].append(i)
    seen = [False] * n
    chains = []
    for start in range(n):
        if seen[start] or len(neighbours[start]) > 1:
            continue
        chain, previous, current = [], -1, start
        while current != -1:
            chain.append(current)
            seen[current] = True
            following = [m for m in neighbours[current] if m != previous]
            previous, current = current, (following[0] if following else -1)
        chains.append(chain)
    return chains  # links form no cycles, so every tile was reached from an end


def _row(
    chain: list[int],
    centres: np.ndarray,
    offsets: np.ndarray,
    sides: np.ndarray,
    expected: np.ndarray,
    dominant: np.ndarray,
    split_gap: float,
) -> Row:
    run = centres[chain[-1]] - centres[chain[0]] if len(chain) > 1 else dominant
    length = float(np.hypot(*run))
    reading_known = abs(run[0]) >= VERTICAL * length
    if (run[0] < 0) if reading_known else (run[1] < 0):
        chain = chain[::-1]
    clusters: list[tuple[int, ...]] = []
    cluster_gaps: list[float] = []
    current = [chain[0]]
    for member, gap in zip(chain[1:], _gaps(chain, offsets, sides, expected, _direction(chain, centres, dominant)), strict=True):
        if gap > split_gap:
            clusters.append(tuple(current))
            cluster_gaps.append(gap)
            current = []
        current.append(member)
    clusters.append(tuple(current))
    return Row(tuple(chain), tuple(clusters), tuple(cluster_gaps), reading_known)


def _gaps(
    chain: list[int], offsets: np.ndarray, sides: np.ndarray, expected: np.ndarray, direction: np.ndarray
) -> list[float]:
    """The gap after each tile of a chain but the last, in tile widths.

    A gap is measured against the *pitch* of the two tiles: the centre distance of each to its touching
    neighbour, which holds whatever the rotation, perspective or kind of tile (standing, or flat or turned
    in a meld). A tile with no touching neighbour (the winning tile set apart) takes its neighbour's
    pitch, scaled by their sizes; with no such neighbour, its own size. A size is the box's extent along
    the row, undone from the rotation where that is well posed, else the photo's pitch for its box.
    """
    steps = [float(np.hypot(*offsets[a, b])) for a, b in zip(chain, chain[1:], strict=False)]

    # A box W x H around a tile a (along the row) x b, turned by t: W = a cos t + b sin t, H = a sin t + b cos t.
    dx, dy = abs(float(direction[0])), abs(float(direction[1]))
    posed = dx * dx - dy * dy  # cos 2t

    def extent(k: int) -> float | None:
        """Tile ``chain[k]``'s extent along the row, if its box tells it."""
        if abs(posed) < WELL_POSED:
            return None
        width, height = sides[chain[k]]
        return float(max((width * dx - height * dy) / posed, 0.25 * expected[chain[k]]))

    def size(k: int) -> float:
        """Tile ``chain[k]``'s expected pitch along the row."""
        found = extent(k)
        return found if found is not None else float(expected[chain[k]])

    # Per tile: its shortest step and the neighbour at the other end of it.
    shortest: list[tuple[float, int]] = []
    for k in range(len(chain)):
        around = [(steps[k - 1], k - 1)] if k > 0 else []
        around += [(steps[k], k + 1)] if k < len(steps) else []
        shortest.append(min(around))
    # Settle tiles closest to a neighbour first, so that each is compared with a neighbour already settled.
    pitch: list[float | None] = [None] * len(chain)
    settled = [False] * len(chain)
    for k in sorted(range(len(chain)), key=lambda k: (shortest[k][0], k)):
        step, other = shortest[k]
        known = pitch[other] if settled[other] else None
        limit = known * size(k) / size(other) if known is not None else size(k)
        pitch[k] = step if step <= TOUCHING_STEP * limit else None
        settled[k] = True
    # Where the extents are known, they measure the gap (a tile turned in a meld is wider than its
    # neighbours), in proportion to how far apart touching tiles of this chain stand for their extents.
    touching = [
        steps[k] / ((size(k) + size(k + 1)) / 2)
        for k in range(len(steps))
        if pitch[k] is not None and pitch[k + 1] is not None and extent(k) is not None and extent(k + 1) is not None
    ]
    spacing = min(max(float(np.median(touching)), 0.85), 1.2) if touching else 1.0
    # A lone tile's pitch: its size, in proportion to the pitch for their size of touching tiles.
    known = [p / size(k) for k, p in enumerate(pitch) if p is not None]
    lone = float(np.median(known)) if known else 1.0
    gaps = []
    for k, step in enumerate(steps):
        a, b = extent(k), extent(k + 1)
        if a is not None and b is not None:
            gaps.append(step / (spacing * (a + b) / 2) - 1)
            continue
        pa, pb = pitch[k], pitch[k + 1]
        pa = pa if pa is not None else lone * size(k)
        pb = pb if pb is not None else lone * size(k + 1)
        gaps.append(step / ((pa + pb) / 2) - 1)
    return gaps


def _direction(chain: list[int], centres: np.ndarray, dominant: np.ndarray) -> np.ndarray:
    """The principal direction of a chain's centres (the dominant one for a lone tile)."""
    if len(chain) < 2:
        return dominant
    spread = centres[chain] - centres[chain].mean(axis=0)
    _, vectors = np.linalg.eigh(spread.T @ spread)
    return np.asarray(vectors[:, -1])


def _top_left(row: Row, boxes: np.ndarray) -> tuple[float, float, int]:
    first = boxes[row.members[0]]
    return (float(first[1]), float(first[0]), row.members[0])
