"""Which row is the hand, and which other clusters count towards it.

A photo may hold more than the player's tiles: discards, other players' melds and walls, strays. The
player's own melds lie near the hand (beside it on its line, or in the next rows), each near the hand
or near another of them. The melds and the loose face-up tiles off the hand's row that count are those
that bring the hand to 14 tiles plus one per kong at the least cost: a meld within ``PlanConfig.near``
of the hand or of a nearer meld is wanted (it costs less than nothing), anything else costs its
distance, and a meld whose tiles look much larger or smaller than the hand's (another depth) costs
more (``PlanConfig.depth``). When no choice makes the count, or the one that makes it takes in single
tiles or pairs from beyond ``PlanConfig.near`` (discards, most likely) and explains the photo worse
(``Plan.evidence``) than the near melds alone by ``PlanConfig.discard_margin`` or more, the near melds
count and nothing else does.

Every row with upright tiles is tried as the hand's row, and the reading with the most evidence wins
(``Plan.evidence``, weighed by ``PlanConfig``): standing tiles that are no melds and melds on the row
count for it; tiles counted in from off the row, tiles left out, tiles of the row that read as melds
but are taken for concealed ones, and the cost of far clusters count against it; a count that comes
out right counts for it. Ties go to the row with the larger tiles (nearer the camera), then to the
longer cluster.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scoring.hand import concealed_count
from vision.grouping.concealed import ConcealedConfig, concealed_clusters
from vision.grouping.layout import Cluster
from vision.quantiles import median


@dataclass(frozen=True)
class PlanConfig:
    """Which row is the hand and what counts towards it: distances in tile widths, evidence in tiles."""

    # cost, in tile widths, per unit of log size ratio between a meld's tiles and the hand's (another depth)
    depth: float = 3.0
    # tile widths between centres: a meld this close to the hand (or its melds) is the player's
    near: float = 4.0
    fit: float = 4.0  # evidence, in tiles, for a count that comes out right
    # evidence, in standing tiles, per meld on the hand's row: players lay their melds on the hand's line, so
    # a row of two standing tiles and four melds is a hand, not another player's discards that borrow its
    # melds (any weight from 1 to 3 reads the synthetic hands about as well; models/HISTORY.md)
    row_meld: float = 1.5
    # evidence against, in tiles, per tile of the row that reads as melds but is taken for concealed
    read_as_tiles: float = 0.5
    # tiles: a loose cluster off the hand's row this long may be a meld misread (its tiles read as no meld);
    # a count made up with a shorter one from beyond ``near`` is weighed against the near melds alone: single
    # tiles far off are discards (two real photos of a hand had three of them counted in to make 14)
    meld_size: int = 3
    # evidence, in tiles: how much better the near melds alone must explain the photo than such a count (three
    # discards 5-9 widths off: 17-20; the pieces of a misread pong 2-5 widths off in a 12 MP photo: 5-6)
    discard_margin: float = 8.0
    # evidence, in tiles, a tile width of distance costs: the one rate between the plan's two units (a far
    # cluster counted in costs its distance; the evidence it is weighed against is counted in tiles)
    per_width: float = 1.0
    # clusters: melds and stray clusters off the hand's row weighed by the count, nearest first (at most)
    most_optional: int = 24


PLAN = PlanConfig()


@dataclass(frozen=True)
class Plan:
    row: int | None  # the hand's row in the layout
    hand: tuple[Cluster, ...]  # the clusters of that row that are concealed tiles, in reading order
    melds: tuple[Cluster, ...]  # the player's melds: those of the hand's row first, in reading order
    extra: tuple[Cluster, ...]  # face-up tiles elsewhere, counted as concealed tiles
    left_out: tuple[Cluster, ...]  # melds and face-up tiles taken for someone else's
    fits: bool  # 14 tiles plus one per kong
    beside: int  # melds on the hand's row (the first of ``melds``)
    cost: float  # of the clusters off the hand's row that count (less than nothing for near melds)

    def evidence(self, config: PlanConfig) -> float:
        """Standing tiles that are no melds and ``config.row_meld`` per meld on the row, less what the
        reading needs to explain away (tiles counted in from off the row twice, tiles left out, tiles
        taken for concealed ones that read as melds, ``config.read_as_tiles`` each, the cost of far
        clusters at ``config.per_width`` tiles a tile width), plus ``config.fit`` when the count comes out
        right: a number of tiles."""
        standing = sum(len(c.faces) for c in self.hand if c.standing)
        read_as_tiles = sum(len(c.faces) for c in self.hand if not c.standing)
        extra = sum(len(c.faces) for c in self.extra)
        left_out = sum(len(c.faces) for c in self.left_out)
        fit = config.fit if self.fits else 0.0
        beside = config.row_meld * self.beside
        return (
            standing
            + beside
            - 2 * extra
            - left_out
            - config.read_as_tiles * read_as_tiles
            - config.per_width * max(self.cost, 0.0)
            + fit
        )

    @property
    def longest(self) -> int:
        return max((len(c.faces) for c in self.hand), default=0)


def ranked_plans(
    layout: list[list[Cluster]],
    reading_known: Sequence[bool],
    centres: np.ndarray,
    scale: np.ndarray,
    *,
    config: PlanConfig,
    concealed: ConcealedConfig,
) -> list[Plan]:
    """The reading of the layout with each row of upright tiles as the hand's (``reading_known`` per row;
    ``centres`` and ``scale``, the root of the box area, per detection; ``concealed`` for the concealed
    clusters of each row tried), best first: most evidence (``Plan.evidence``), then larger tiles, then the
    longer cluster. One reading of loose tiles and melds when no row has an upright tile."""
    rows = [r for r, row in enumerate(layout) if any(c.upright for c in row)]
    if not rows:
        everything = [c for row in layout for c in row]
        melds = tuple(c for c in everything if c.melds)
        extra = tuple(c for c in everything if c.loose)
        fits = sum(len(c.faces) for c in extra) == concealed_count(sum(len(c.melds or ()) for c in melds))
        return [Plan(None, (), melds, extra, (), fits, 0, 0.0)]
    plans = [_plan(layout, r, reading_known[r], centres, scale, config, concealed) for r in rows]
    sizes = [median(scale[[i for c in layout[r] for i in c.members]]) for r in rows]
    order = sorted(
        range(len(plans)),
        key=lambda k: (plans[k].evidence(config), sizes[k], plans[k].longest, -k),
        reverse=True,
    )
    return [plans[k] for k in order]


def _plan(
    layout: list[list[Cluster]],
    hand_row: int,
    reading_known: bool,
    centres: np.ndarray,
    scale: np.ndarray,
    config: PlanConfig,
    concealed: ConcealedConfig,
) -> Plan:
    row = layout[hand_row]
    others = [c for r, clusters in enumerate(layout) if r != hand_row for c in clusters if c.faces]
    anchor = [i for c in row for i in c.members]
    unit = _pitch(centres[anchor], scale[anchor])
    # Each meld's distance (tile widths) from the hand's row or from a nearer meld, nearest first.
    distance: dict[tuple[int, ...], float] = {}
    pending = [c for c in others if c.melds]
    while pending:
        gaps = [_distance(centres, anchor, c) / unit for c in pending]
        nearest = int(np.argmin(gaps))
        cluster = pending.pop(nearest)
        distance[cluster.key] = gaps[nearest]
        anchor += list(cluster.members)
    melds = [c for c in others if c.melds]
    near = [c for c in melds if distance[c.key] <= config.near]
    beside = [c for c in row if c.melds]
    hand = concealed_clusters(row, beside, near, reading_known=reading_known, config=concealed)
    beside = [c for c in beside if c.key not in {h.key for h in hand}]
    trimmed = [c for c in row if c.standing and c.key not in {h.key for h in hand}]
    near_anchor = [i for c in row if c.key not in {t.key for t in trimmed} for i in c.members]
    near_anchor += [i for c in near for i in c.members]
    strays = [c for c in others if c.loose] + [c for c in row if c.loose and not c.upright] + trimmed
    distance.update({c.key: _distance(centres, near_anchor, c) / unit for c in strays})
    deficit = concealed_count(sum(len(c.melds or ()) for c in beside)) - sum(len(c.faces) for c in hand)
    optional = sorted(melds + strays, key=lambda c: (distance[c.key], c.members))[: config.most_optional]
    size = median(scale[[i for c in row for i in c.members]])
    cost = {c.key: _cost(c, distance[c.key], scale, size, config) for c in optional}
    filled = _fill(deficit, optional, cost)
    near_melds = [c for c in optional if c.melds and distance[c.key] <= config.near]
    near_fit = sum(3 * len(c.melds or ()) for c in near_melds) == deficit
    candidates = melds + strays
    without = _made(layout, hand_row, hand, beside, candidates, near_melds, near_fit, cost)
    if filled is None:
        return without
    counted = _made(layout, hand_row, hand, beside, candidates, filled, True, cost)
    # tiles counted in from far off the hand (discards, most likely) may explain the photo much worse
    far = any(_discard(c, distance[c.key], config) for c in filled)
    if far and without.evidence(config) >= counted.evidence(config) + config.discard_margin:
        return without
    return counted


def _made(
    layout: list[list[Cluster]],
    hand_row: int,
    hand: list[Cluster],
    beside: list[Cluster],
    candidates: list[Cluster],
    chosen: list[Cluster],
    fits: bool,
    cost: dict[tuple[int, ...], float],
) -> Plan:
    """The plan counting ``chosen`` of ``candidates`` (the clusters off the hand's row) towards the hand."""
    # In the layout's order: row by row, each in reading order.
    taken = [c for clusters in layout for c in clusters if c.key in {k.key for k in chosen}]
    extra = tuple(c for c in taken if not c.melds)
    left_out = tuple(c for c in candidates if c.key not in {k.key for k in chosen})
    total = sum(cost[c.key] for c in taken)
    melds_beside = sum(len(c.melds or ()) for c in beside)
    return Plan(
        hand_row,
        tuple(hand),
        (*beside, *(c for c in taken if c.melds)),
        extra,
        left_out,
        fits,
        melds_beside,
        total,
    )


def _discard(cluster: Cluster, distance: float, config: PlanConfig) -> bool:
    """Loose tiles too few for a misread meld and farther than ``config.near`` from the hand and its
    melds: discards or strays, most likely."""
    return cluster.melds is None and len(cluster.faces) < config.meld_size and distance > config.near


def _cost(cluster: Cluster, distance: float, scale: np.ndarray, size: float, config: PlanConfig) -> float:
    """A near meld is wanted (less than nothing), one at another depth less so; anything else costs."""
    if not cluster.melds:
        return distance
    depth = abs(math.log(median(scale[list(cluster.members)]) / size))
    return distance - config.near + config.depth * depth


def _fill(deficit: int, optional: list[Cluster], cost: dict[tuple[int, ...], float]) -> list[Cluster] | None:
    """The cheapest clusters (then the fewest) whose tiles make up exactly ``deficit``, a meld counting
    3; None when none do."""
    if deficit < 0:
        return None
    # best[s]: (total cost, clusters, picks) making up s, over the clusters seen so far.
    best: list[tuple[float, int, tuple[int, ...]] | None] = [None] * (deficit + 1)
    best[0] = (0.0, 0, ())
    for k, cluster in enumerate(optional):
        value = 3 * len(cluster.melds) if cluster.melds else len(cluster.faces)
        for total in range(deficit, value - 1, -1):
            before = best[total - value]
            if before is None:
                continue
            option = (before[0] + cost[cluster.key], before[1] + 1, (*before[2], k))
            current = best[total]
            if current is None or option[:2] < current[:2]:
                best[total] = option
    found = best[deficit]
    return [optional[k] for k in found[2]] if found is not None else None


def _pitch(centres: np.ndarray, scale: np.ndarray) -> float:
    """The centre distance of touching tiles in a row: its tiles' median distance to their nearest."""
    if len(centres) < 2:
        return median(scale) * 0.85 if len(scale) else 1.0
    dist = np.hypot(*(centres[None, :, :] - centres[:, None, :]).transpose(2, 0, 1))
    np.fill_diagonal(dist, np.inf)
    return max(median(dist.min(axis=1)), 1e-6)


def _distance(centres: np.ndarray, anchor: list[int], cluster: Cluster) -> float:
    """The shortest centre distance between the cluster's tiles and the anchor's, in pixels."""
    offsets = centres[list(cluster.members)][:, None, :] - centres[anchor][None, :, :]
    return float(np.hypot(offsets[..., 0], offsets[..., 1]).min())
