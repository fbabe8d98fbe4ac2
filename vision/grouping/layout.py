"""The clusters of each row, with what their tiles are: face up, face down, honour, melds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from scoring.hand import MeldKind
from scoring.tiles import Tile
from vision.detections import BACK, HONOUR
from vision.geometry.rows import Row
from vision.grouping.melds import meld_of, split_melds


@dataclass(frozen=True)
class LayoutConfig:
    """How clusters are split at their ends into melds and backs, and pieces of a meld joined."""

    peel_limit: int = 16  # tiles: at most this many (four kongs) peeled off either end of a cluster as melds
    # tile widths: neighbouring pieces of a meld this close are one meld (loose boxes split it)
    join_gap: float = 1.5
    join_most: int = 4  # pieces: at most this many are joined into one meld


LAYOUT = LayoutConfig()

FoundMeld = tuple[MeldKind, Tile, tuple[int, ...]]  # kind, tile, detection indices (backs included)


@dataclass(frozen=True, eq=False)
class Cluster:
    """A run of touching tiles, by detection index in reading order."""

    members: tuple[int, ...]
    faces: tuple[int, ...]  # suited tiles
    honours: tuple[int, ...]
    melds: tuple[FoundMeld, ...] | None  # when the tiles (honours aside) read as melds
    gap_before: float  # tile widths from the previous cluster of the row; 0 for the first
    inner: tuple[float, ...]  # the gap after each member but the last

    @property
    def key(self) -> tuple[int, ...]:
        """The cluster's stable key: its tiles (a tile is in one cluster), for tables of what each costs."""
        return self.members

    @property
    def upright(self) -> bool:
        """Face-up tiles and no backs: they may stand in the hand."""
        return bool(self.faces) and len(self.faces) + len(self.honours) == len(self.members)

    @property
    def loose(self) -> bool:
        """Face-up tiles that are not melds: part of the hand, or stray."""
        return bool(self.faces) and self.melds is None

    @property
    def standing(self) -> bool:
        """Upright tiles that are not melds: part of the standing hand, when in its row."""
        return self.upright and self.melds is None

    @property
    def single_tile(self) -> bool:
        return self.upright and len(self.faces) == 1


def lay_out(
    rows: Sequence[Row], kept: Sequence[int], class_ids: Sequence[int], *, config: LayoutConfig
) -> list[list[Cluster]]:
    """The clusters of each row; ``kept[m]`` is the detection index of the row member ``m``."""
    layout = []
    for row in rows:
        clusters: list[Cluster] = []
        start = 0
        for position, members in enumerate(row.clusters):
            gap = row.gaps[position - 1] if position else 0.0
            inner = row.steps[start : start + len(members) - 1]
            clusters += _clusters([kept[m] for m in members], class_ids, gap, inner, config.peel_limit)
            start += len(members)
        layout.append(_joined(clusters, class_ids, config))
    return layout


def _joined(clusters: list[Cluster], class_ids: Sequence[int], config: LayoutConfig) -> list[Cluster]:
    """Neighbouring clusters, none of which reads as melds alone, that together make exactly a meld
    (``66s`` and ``6s`` a little apart: a flat pong whose tiles lie apart, or a gap the loose boxes of
    a tilted row put inside it) and lie within ``config.join_gap`` of each other, as one cluster (at most
    ``config.join_most`` of them). A meld beside a lone tile of its kind stays as it is: the lone tile
    may be the winning tile set apart."""
    out: list[Cluster] = []
    k = 0
    while k < len(clusters):
        run = [clusters[k]]
        for cluster in clusters[k + 1 : k + config.join_most]:
            if not _joinable(run[-1]) or not _joinable(cluster) or cluster.gap_before > config.join_gap:
                break
            run.append(cluster)
        for stop in range(len(run), 1, -1):
            members = tuple(i for c in run[:stop] for i in c.members)
            if meld_of([class_ids[i] for i in members]) is not None:
                inner = tuple(g for c, nxt in pairwise(run[:stop]) for g in (*c.inner, nxt.gap_before))
                out.append(_cluster(members, class_ids, run[0].gap_before, inner + run[stop - 1].inner))
                k += stop
                break
        else:
            out.append(clusters[k])
            k += 1
    return out


def _joinable(cluster: Cluster) -> bool:
    """Tiles, face up or down, no honour, that read as no meld alone."""
    return cluster.melds is None and not cluster.honours


def _cluster(
    members: Sequence[int], class_ids: Sequence[int], gap_before: float, inner: Sequence[float]
) -> Cluster:
    run = [i for i in members if class_ids[i] != HONOUR]
    faces = tuple(i for i in members if class_ids[i] < BACK)
    spans = split_melds([class_ids[i] for i in run]) if faces else None
    melds = None if spans is None else tuple((s.kind, s.tile, tuple(run[s.start : s.stop])) for s in spans)
    honours = tuple(i for i in members if class_ids[i] == HONOUR)
    return Cluster(tuple(members), faces, honours, melds, gap_before, tuple(inner))


def _clusters(
    members: list[int], class_ids: Sequence[int], gap_before: float, inner: Sequence[float], peel_limit: int
) -> list[Cluster]:
    """One cluster; or, for face-up tiles with backs at one or both ends, the ends (at most ``peel_limit``
    tiles each) apart from the tiles between: an end that reads as melds (a concealed kong laid too close
    to the standing hand), or one of backs alone (another player's wall or tiles touching the hand's end,
    which no meld explains)."""
    whole = _cluster(members, class_ids, gap_before, inner)
    backs = [k for k, i in enumerate(members) if class_ids[i] == BACK]
    if whole.melds is not None or not whole.faces or not backs:
        return [whole]
    n = len(members)
    best: tuple[int, int] | None = None
    for head in range(min(n, peel_limit) + 1):
        for tail in range(min(n - head, peel_limit) + 1):
            middle = members[head : n - tail]
            if best is not None and head + tail >= sum(best):
                break
            if (
                any(class_ids[i] < BACK for i in middle)
                and all(class_ids[i] != BACK for i in middle)
                and _apart(members[:head], class_ids)
                and _apart(members[n - tail :], class_ids)
            ):
                best = (head, tail)
    if best is None:
        return [whole]
    head, tail = best
    bounds = [(start, stop) for start, stop in ((0, head), (head, n - tail), (n - tail, n)) if stop > start]
    return [
        _cluster(
            members[start:stop], class_ids, inner[start - 1] if start else gap_before, inner[start : stop - 1]
        )
        for start, stop in bounds
    ]


def _apart(end: Sequence[int], class_ids: Sequence[int]) -> bool:
    """Whether the tiles at an end of a cluster stand apart from the rest: none, melds, or backs alone."""
    return (
        not end or all(class_ids[i] == BACK for i in end) or _cluster(end, class_ids, 0, ()).melds is not None
    )


def position(row: list[Cluster], cluster: Cluster) -> int:
    """Where ``cluster`` lies along its ``row``: 0 for the first."""
    return next(k for k, c in enumerate(row) if c.key == cluster.key)
