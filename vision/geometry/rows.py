"""Rows and clusters of tiles, from the geometry of their boxes alone.

A *row* is a chain of tiles along one line (the standing hand, a line of melds, another player's wall);
a *cluster* is a run of touching tiles inside a row, split from the next one by a gap.

Distances are measured in *tile widths*, so that they hold under perspective (far tiles are smaller
and closer together), rotation (a turned tile's axis-aligned box is larger than the tile) and 3-D
views (a box takes in a tile's top and sides). The thresholds named are the fields of ``RowsConfig``
(``find_rows`` takes one; ``ROWS``, the defaults, unless told otherwise):

1. A box's *scale* is the square root of its area. A tile's centre distance to its nearest neighbour
   over their mean scale is its *pitch ratio* (kept within a factor 2 of the photo's median); the
   smaller ratio of two tiles times their mean scale is one tile width between them.
2. A tile's row runs along the line through it and a neighbour within ``RowsConfig.reach`` that most
   of its neighbours lie on, nearer ones counting more: a row's tiles outvote a tile of the next row.
   A tile with no such line (the winning tile set apart) takes the photo's dominant direction (the
   mean of the rows, backs counting less).
3. Two tiles are linked along their common direction, at most ``RowsConfig.max_link_gap`` tile widths
   apart with little sideways offset. Links are taken cheapest first, each tile keeping at most two,
   on opposite sides, and no cycles: what is left is a set of chains, each a row.
4. A chain of ``RowsConfig.long_row`` tiles or more takes in a lone tile lying on its line past one of
   its ends, measured along the chain's end, even one a pair took (with a stray next to the winning
   tile set apart): the line of a row is surer than that of two tiles.
5. A row splits into clusters where a gap exceeds ``RowsConfig.split_gap`` tile widths. A gap is
   measured against the *pitch* of the two tiles beside it: the distance of each to its touching
   neighbour, so a tile lying flat or turned in a meld is measured by its own kind.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from vision.quantiles import median


@dataclass(frozen=True)
class RowsConfig:
    """How tiles chain into rows and rows split into clusters: distances in tile widths, angles as noted."""

    split_gap: float = 0.4  # tile widths: a wider gap separates two clusters of a row
    max_link_gap: float = 4.0  # tile widths: tiles further apart along a line are not in one row
    touching: float = 1.3  # tile widths: tiles whose centres are at most this far apart may be touching
    sideways: float = 0.35  # tile widths: the sideways offset allowed for a link ...
    # tile widths per tile width along the row: ... plus this much (rows converge under perspective)
    sideways_slope: float = 0.06
    # cosine of the angle between a tile's two links: they must point (nearly) opposite ways
    collinear: float = math.cos(math.radians(150))
    touching_step: float = 1.2  # times a tile's pitch: a step up to this still counts as touching (small gap)
    # at a row's end: the most a tile's pitch is taken to differ from its neighbour's by what their boxes'
    # sizes say (tiles of one row are one size; an end tile's box larger than its neighbour's, a winning
    # tile set apart seen at another angle, would make it look as if it touched)
    end_size_ratio: float = 1.15
    reach: float = 3.0  # tile widths: the neighbours that say which way a tile's row runs
    # radians: how far a row may turn from a neighbour's row, or from the photo's direction
    turn: float = math.radians(40)
    long_row: int = 3  # tiles: a chain this long says which way its row runs better than a pair near its ends
    end_span: int = 4  # tiles: those at a row's end whose line it extends along
    # sine of the angle to the vertical: a row this close to vertical has no known reading direction
    vertical: float = math.sin(math.radians(15))


ROWS = RowsConfig()


@dataclass(frozen=True)
class Row:
    """A chain of tiles in reading order.

    ``members`` and ``clusters`` hold positions in the boxes given to ``find_rows``; ``steps[i]`` is the
    gap after ``members[i]``, ``gaps[i]`` the gap between ``clusters[i]`` and ``clusters[i + 1]``, in tile
    widths. ``reading_known`` is False for a (nearly) vertical row, whose reading order could be either
    way (it is then taken top to bottom).
    """

    members: tuple[int, ...]
    steps: tuple[float, ...]
    clusters: tuple[tuple[int, ...], ...]
    gaps: tuple[float, ...]
    reading_known: bool


def find_rows(
    boxes: np.ndarray,
    *,
    weights: np.ndarray | None = None,
    config: RowsConfig = ROWS,
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
    # The centre distance of touching tiles over their size depends on how the tiles lie and are seen
    # (standing, flat, from the side): each tile's ratio to its nearest neighbour measures it, kept within
    # a factor 2 of the photo's median so that a stray overlapping box does not decide.
    nearest = ratio.min(axis=1) if n > 1 else np.ones(1)
    photo_ratio = median(nearest)
    own = np.clip(nearest, photo_ratio / 2, photo_ratio * 2)
    unit = np.minimum(own[:, None], own[None, :]) * pair_scale  # pixels per tile width, per pair
    widths = dist / unit  # centre distances in tile widths
    np.fill_diagonal(widths, np.inf)

    weights = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).reshape(n)
    first = _local_directions(offsets, widths, config)
    dominant = _dominant(first, centres, weights)
    doubled = _local_directions(offsets, widths, config, first, dominant)
    links = _link(centres, offsets, unit, doubled, dominant, config)
    chains = _extend_rows(_chains(n, links), centres, unit, config)
    rows = [_row(chain, centres, dist, scale, photo_ratio, dominant, config) for chain in chains]
    return tuple(sorted(rows, key=lambda row: _top_left(row, boxes)))


def _local_directions(
    offsets: np.ndarray,
    widths: np.ndarray,
    config: RowsConfig,
    first: np.ndarray | None = None,
    dominant: np.ndarray | None = None,
) -> np.ndarray:
    """Per tile, the doubled-angle vector (cos 2a, sin 2a) of its row, or zeros where it has none.

    A tile's row is the line through it and a neighbour within ``config.reach`` that most of its
    neighbours lie on (within ``config.sideways``, nearer ones counting more): a row's tiles outvote a
    tile of the next row, even a closer one. The line must hold a touching neighbour whose own row (by a
    ``first`` estimate, when given) runs along it, or else two neighbours and run within ``config.turn``
    of the photo's ``dominant`` direction: a tile set apart with only the next row near it (the winning
    tile beside a line of melds) has no row of its own.
    """
    n = len(widths)
    angle = np.arctan2(offsets[..., 1], offsets[..., 0])
    # Each tile's neighbours within reach, nearest first, padded to a common count (padding: reach = inf).
    count = int((widths <= config.reach).sum(axis=1).max(initial=0))
    if count == 0:
        return np.zeros((n, 2))
    order = np.argsort(widths, axis=1, kind="stable")[:, :count]
    reach = np.take_along_axis(widths, order, axis=1)
    near = reach <= config.reach
    reach = np.where(near, reach, np.inf)
    theta = np.take_along_axis(angle, order, axis=1)
    # across[i, j, k]: how far neighbour k lies off the line from tile i through neighbour j (tile widths).
    across = np.abs(np.sin(theta[:, None, :] - theta[:, :, None])) * np.where(near, reach, 0)[:, None, :]
    on_line = (across <= config.sideways) & near[:, None, :] & near[:, :, None]
    weight = np.where(near, 1 / np.where(near, reach, 1), 0)
    support = (on_line * weight[:, None, :]).sum(axis=2)
    touching = on_line & (reach <= config.touching)[:, None, :]
    if first is not None:
        # A touching neighbour only vouches for a line its own row runs along (or when it has no row).
        theirs = first[order]  # (n, count, 2): each neighbour's first direction, doubled
        mine = np.stack([np.cos(2 * theta), np.sin(2 * theta)], axis=-1)  # (n, count, 2): each line, doubled
        agree = np.einsum("ijd,ikd->ijk", mine, theirs) >= math.cos(2 * config.turn)
        touching &= agree | (np.hypot(theirs[..., 0], theirs[..., 1]) == 0)[:, None, :]
    valid = touching.any(axis=2)
    if dominant is not None:
        # A line through two neighbours, none touching, only along the photo's rows.
        along = np.abs(np.cos(theta - math.atan2(dominant[1], dominant[0]))) >= math.cos(config.turn)
        valid |= (on_line.sum(axis=2) >= 2) & along
    # Neighbours go nearest first, so ties go to the nearer.
    best = np.argmax(np.where(valid, support, -np.inf), axis=1)
    line = on_line[np.arange(n), best]  # (n, count)
    # The mean direction of the tiles on that line (each at its angle, doubled; nearer ones count more).
    doubled = np.stack([np.cos(2 * theta), np.sin(2 * theta)], axis=-1) * (line * weight)[..., None]
    mean = doubled.sum(axis=1)
    length = np.hypot(mean[:, 0], mean[:, 1])
    found = valid[np.arange(n), best] & (length > 0)
    result = np.zeros((n, 2))
    result[found] = mean[found] / length[found, None]
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
    rightwards = direction[0] > 1e-9 or (abs(direction[0]) <= 1e-9 and direction[1] > 0)
    return direction if rightwards else -direction


def _link(
    centres: np.ndarray,
    offsets: np.ndarray,
    unit: np.ndarray,
    doubled: np.ndarray,
    dominant: np.ndarray,
    config: RowsConfig,
) -> list[tuple[int, int]]:
    n = len(centres)
    # The direction a pair is measured along: the mean of the two tiles' own directions, or the dominant one.
    pair = doubled[:, None, :] + doubled[None, :, :]
    norm = np.hypot(pair[..., 0], pair[..., 1])
    own = np.arctan2(pair[..., 1], pair[..., 0]) / 2
    angle = np.where(norm > 0.3, own, math.atan2(dominant[1], dominant[0]))
    along = np.abs(offsets[..., 0] * np.cos(angle) + offsets[..., 1] * np.sin(angle)) / unit
    across = np.abs(offsets[..., 1] * np.cos(angle) - offsets[..., 0] * np.sin(angle)) / unit
    allowed = (along <= config.max_link_gap + 1) & (across <= config.sideways + config.sideways_slope * along)
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
        if not (
            _opposite(centres, i, j, neighbours[i], config.collinear)
            and _opposite(centres, j, i, neighbours[j], config.collinear)
        ):
            continue
        neighbours[i].append(j)
        neighbours[j].append(i)
        parent[root(i)] = root(j)
        links.append((i, j))
    return links


def _opposite(centres: np.ndarray, tile: int, new: int, existing: list[int], collinear: float) -> bool:
    """Whether a link from ``tile`` to ``new`` points away from the tile's existing link, if any (the cosine
    of the angle between them at most ``collinear``)."""
    if not existing:
        return True
    a = centres[new] - centres[tile]
    b = centres[existing[0]] - centres[tile]
    return bool(a @ b <= collinear * np.hypot(*a) * np.hypot(*b))


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


def _extend_rows(
    chains: list[list[int]], centres: np.ndarray, unit: np.ndarray, config: RowsConfig
) -> list[list[int]]:
    """Chains of at least ``config.long_row`` tiles take in the lone tiles on their line past their ends.

    A tile alone, or paired with one off that line, joins the row whose line it lies on, measured along
    the row's last ``config.end_span`` tiles as links are: a row says which way it runs more surely than
    a pair, whose own line may run through a stray tile next to the winning tile set apart. Cheapest
    first, until no such tile is left.
    """
    chains = [list(chain) for chain in chains]
    while True:
        best: tuple[float, int, int, int] | None = None  # cost, chain, end (0 or -1), tile
        for a, chain in enumerate(chains):
            if len(chain) < config.long_row:
                continue
            for end in (0, -1):
                cost = _past_end(chain, end, centres, unit, config).tolist()  # Python floats: read per tile
                for other in chains:
                    on_line = [m for m in other if cost[m] != math.inf]
                    if len(other) > 2 or (len(other) == 2 and len(on_line) != 1):
                        continue  # a pair along the row chose to be a row of its own
                    for tile in on_line:
                        if best is None or (cost[tile], a, end, tile) < best:
                            best = (cost[tile], a, end, tile)
        if best is None:
            return chains
        _, a, end, tile = best
        chains = [[m for m in chain if m != tile] for chain in chains]
        chains[a] = chains[a] + [tile] if end == -1 else [tile] + chains[a]
        chains = [chain for chain in chains if chain]


def _past_end(
    chain: list[int], end: int, centres: np.ndarray, unit: np.ndarray, config: RowsConfig
) -> np.ndarray:
    """Per tile, the cost of a link from the tile at ``end`` of a chain to it along the chain's line;
    infinite for tiles not on that line past that end within ``config.max_link_gap``."""
    span = chain[-config.end_span :] if end == -1 else chain[: config.end_span][::-1]  # towards the end
    tip = span[-1]
    direction = centres[tip] - centres[span[0]]
    direction = direction / max(float(np.hypot(*direction)), 1e-9)
    offsets = centres - centres[tip]
    along = (offsets @ direction) / unit[tip]
    across = np.abs(offsets[:, 1] * direction[0] - offsets[:, 0] * direction[1]) / unit[tip]
    on_line = (
        (along > 0)
        & (along <= config.max_link_gap + 1)
        & (across <= config.sideways + config.sideways_slope * along)
    )
    cost = np.where(on_line, along + 2 * across, np.inf)
    cost[chain] = np.inf
    return cost


def _row(
    chain: list[int],
    centres: np.ndarray,
    dist: np.ndarray,
    scale: np.ndarray,
    photo_ratio: float,
    dominant: np.ndarray,
    config: RowsConfig,
) -> Row:
    run = centres[chain[-1]] - centres[chain[0]] if len(chain) > 1 else dominant
    length = float(np.hypot(*run))
    reading_known = abs(run[0]) >= config.vertical * length
    if (run[0] < 0) if reading_known else (run[1] < 0):
        chain = chain[::-1]
    steps = _gaps(chain, dist, scale, photo_ratio, config.touching_step, config.end_size_ratio)
    clusters: list[tuple[int, ...]] = []
    cluster_gaps: list[float] = []
    current = [chain[0]]
    for member, gap in zip(chain[1:], steps, strict=True):
        if gap > config.split_gap:
            clusters.append(tuple(current))
            cluster_gaps.append(gap)
            current = []
        current.append(member)
    clusters.append(tuple(current))
    return Row(tuple(chain), tuple(steps), tuple(clusters), tuple(cluster_gaps), reading_known)


def _gaps(
    chain: list[int],
    dist: np.ndarray,
    scale: np.ndarray,
    photo_ratio: float,
    touching_step: float,
    end_size_ratio: float,
) -> list[float]:
    """The gap after each tile of a chain but the last, in tile widths.

    A gap is measured against the *pitch* of the two tiles: the centre distance of each to its touching
    neighbour. That holds whatever the rotation, the perspective or the kind of tile (standing, flat or
    turned in a meld), where the box's own extent would not (a photographed tile's box takes in its top
    and sides, more at one end of a row than at the other). A tile with no touching neighbour (the
    winning tile set apart) takes the pitch its box's size suggests, in proportion to the pitch touching
    tiles of the chain have for theirs. An end tile measured after its neighbour is compared with the
    neighbour's pitch scaled by their boxes' sizes held within ``end_size_ratio`` (so a tile set apart by
    less than about 0.38 of that pitch still touches, whatever its box), and a lone end tile beside a
    touching neighbour takes that scaled pitch as its own.
    """
    if len(chain) < 2:
        return []
    steps = [float(dist[a, b]) for a, b in itertools.pairwise(chain)]
    # What a tile's size suggests: the chain's median step for its sizes when the chain is long enough
    # for most steps to be between touching tiles, else the photo's ratio.
    ratio = photo_ratio
    if len(steps) >= 3:
        pairs = itertools.pairwise(chain)
        ratio = median([step * 2 / (scale[a] + scale[b]) for step, (a, b) in zip(steps, pairs, strict=True)])
    # Per tile: its shortest step and the neighbour at the other end of it.
    shortest: list[tuple[float, int]] = []
    for k in range(len(chain)):
        around = [(steps[k - 1], k - 1)] if k > 0 else []
        around += [(steps[k], k + 1)] if k < len(steps) else []
        shortest.append(min(around))
    # Measure tiles closest to a neighbour first, so that each is compared with a neighbour measured before:
    # a tile touches it when its step is within ``touching_step`` of the neighbour's pitch (of the pitch its
    # own box suggests, when the neighbour has none).
    size = [ratio * float(scale[member]) for member in chain]
    ends = (0, len(chain) - 1)

    def grown(k: int, other: int) -> float:
        """How much larger tile ``k``'s pitch is than ``other``'s, by their boxes (held within
        ``end_size_ratio`` at an end of the chain)."""
        factor = size[k] / size[other]
        return min(max(factor, 1 / end_size_ratio), end_size_ratio) if k in ends else factor

    pitch: list[float | None] = [None] * len(chain)
    measured = [False] * len(chain)
    for k in sorted(range(len(chain)), key=lambda k: (shortest[k][0], k)):
        step, other = shortest[k]
        known = pitch[other] if measured[other] else None
        limit = known * grown(k, other) if known is not None else size[k]
        pitch[k] = step if step <= touching_step * limit else None
        measured[k] = True
    touching = [p / size[k] for k, p in enumerate(pitch) if p is not None]
    lone = median(touching) if touching else 1.0
    for k, inner in ((ends[0], 1), (ends[1], ends[1] - 1)):  # a lone end tile beside touching ones
        known = pitch[inner]
        if len(chain) >= 3 and pitch[k] is None and known is not None:
            pitch[k] = known * grown(k, inner)
    gaps = []
    for k, step in enumerate(steps):
        pa, pb = pitch[k], pitch[k + 1]
        pa = pa if pa is not None else lone * size[k]
        pb = pb if pb is not None else lone * size[k + 1]
        gaps.append(step / ((pa + pb) / 2) - 1)
    return gaps


def _top_left(row: Row, boxes: np.ndarray) -> tuple[float, float, int]:
    first = boxes[row.members[0]]
    return (float(first[1]), float(first[0]), row.members[0])


class RowCache:
    """Rows found once for each set of boxes: ``find`` answers boxes (and weights, under a config) it has
    been asked about before with the rows it found then (rows are immutable values). The search for a
    winning reading regroups a photo's tiles many times over, most often with the same boxes (a tile re-read
    keeps its box); it hands one cache to every grouping."""

    def __init__(self) -> None:
        self._found: dict[bytes, tuple[Row, ...]] = {}
        self.asked = 0

    @property
    def found(self) -> int:
        """How many sets of boxes rows were found for."""
        return len(self._found)

    def find(
        self, boxes: np.ndarray, *, weights: np.ndarray | None = None, config: RowsConfig = ROWS
    ) -> tuple[Row, ...]:
        """``find_rows(boxes, weights=weights, config=config)``, found once."""
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        weighed = np.ones(len(boxes)) if weights is None else np.asarray(weights, dtype=np.float64)
        key = boxes.tobytes() + weighed.tobytes() + repr(config).encode()
        self.asked += 1
        if key not in self._found:
            self._found[key] = find_rows(boxes, weights=weighed, config=config)
        return self._found[key]
