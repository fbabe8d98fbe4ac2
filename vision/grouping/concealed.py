"""Which clusters of the hand's row are its concealed tiles, once the row is chosen.

Loose upright tiles are. Upright tiles that also read as melds (``5555m`` set a little apart, or a whole
hand such as ``1111222233m3m``) are when only that reading gives the hand its 14 tiles plus one per
kong, counting the melds beside it and near it: each such cluster read as tiles adds (its tiles - 3 per
meld) to the count. The fewest such clusters, nearest the hand, are taken.

When no choice makes the count, lone tiles at the ends of the row are left out when that makes it (with
the near melds, or fewer of them): a stray tile lying on the hand's line past its end; so are clusters
holding honour tiles there (no Sichuan hand has one: discards touching the hand's end). Only tiles set
apart far more than the hand's touching tiles are from each other are, the fewest, the furthest apart
first, never all the loose tiles, and never the one that may be the winning tile set apart (nearest
the hand at its right end, a little apart). When nothing makes the count, the loose tiles are the hand
(the largest cluster when the row has none).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from scoring.hand import concealed_count
from vision.grouping.layout import Cluster, position


@dataclass(frozen=True)
class ConcealedConfig:
    """What the count weighs in the hand's row: clusters both melds and tiles, strays it may leave out."""

    # clusters: at most this many of the hand's row that read both as melds and as tiles are weighed
    most_doubtful: int = 8
    most_trimmed: int = 2  # clusters: strays at either end of the hand's row that the count may leave out
    # times the widest gap between the hand's touching tiles: a tile left out is this many times further apart
    trim_gap_ratio: float = 2.5
    # tile widths: a lone tile this close to the hand's end may be the winning tile set apart
    win_apart: float = 1.5


CONCEALED = ConcealedConfig()


def concealed_clusters(
    row: list[Cluster],
    beside: list[Cluster],
    near: list[Cluster],
    *,
    reading_known: bool,
    config: ConcealedConfig,
) -> list[Cluster]:
    """The clusters of ``row`` that are concealed tiles, in reading order; ``beside``: the clusters of
    the row that read as melds, ``near``: the melds off the row near it, ``reading_known``: whether the
    row's reading order is known (see the module docstring)."""
    loose = [c for c in row if c.standing]
    doubtful = [c for c in row if c.upright and c.melds is not None][: config.most_doubtful]
    core = position(row, max(loose or doubtful, key=lambda c: len(c.faces)))
    melds_beside = sum(len(c.melds or ()) for c in beside)
    counts = {0}  # how many melds some of the near clusters hold
    for cluster in near:
        counts |= {count + len(cluster.melds or ()) for count in counts}
    for cut in _trims(row, loose, reading_known, config):
        kept = [c for c in loose if c.key not in {t.key for t in cut}]
        for melds in sorted(counts, reverse=True) if cut else [max(counts)]:
            short = concealed_count(melds_beside + melds) - sum(len(c.faces) for c in kept)
            taken = _fewest_doubtful(row, doubtful, short, core)
            if taken is not None:
                return [c for c in row if c.key in {t.key for t in kept + taken}]
    return [c for c in row if c.key in {t.key for t in loose}] if loose else [row[core]]


def _fewest_doubtful(
    row: list[Cluster], doubtful: list[Cluster], short: int, core: int
) -> list[Cluster] | None:
    """The fewest clusters that read both as melds and as tiles, nearest the core, whose reading as
    tiles makes up ``short``; None when none do."""
    for size in range(len(doubtful) + 1):
        fitting = [
            subset
            for subset in combinations(doubtful, size)
            if sum(len(c.faces) - 3 * len(c.melds or ()) for c in subset) == short
        ]
        if fitting:
            return list(min(fitting, key=lambda subset: sum(abs(position(row, c) - core) for c in subset)))
    return None


def _trims(
    row: list[Cluster], loose: list[Cluster], reading_known: bool, config: ConcealedConfig
) -> list[tuple[Cluster, ...]]:
    """The ways to leave strays at the ends of the row (lone tiles, clusters holding honours) out of the
    hand: none first, then the fewest, the furthest apart from what is left first. The lone tile nearest
    the hand at its right end (at either end when the reading order is unknown) within
    ``config.win_apart`` of it may be the winning tile set apart: it is never left out."""
    leading = _end_strays(row, range(len(row)))
    trailing = _end_strays(row, range(len(row) - 1, -1, -1))
    if not reading_known:
        leading = _but_winning_tile(leading, config.win_apart)
    most = config.most_trimmed
    leading, trailing = leading[:most], _but_winning_tile(trailing, config.win_apart)[:most]
    options: list[tuple[int, float, tuple[Cluster, ...]]] = [(0, 0.0, ())]
    for left in range(len(leading) + 1):
        for right in range(len(trailing) + 1):
            ends = leading[:left] + trailing[:right]
            cut = tuple(c for c, _ in ends)
            kept = [c for c in loose if c.key not in {t.key for t in cut}]
            if not cut or len({c.key for c in cut}) < len(cut) or not kept:
                continue
            touching = max((gap for c in kept for gap in c.inner), default=0.0)
            if min(gap for _, gap in ends) >= config.trim_gap_ratio * touching:
                apart = (leading[left - 1][1] if left else 0.0) + (trailing[right - 1][1] if right else 0.0)
                options.append((len(cut), -apart, cut))
    return [cut for _, _, cut in sorted(options, key=lambda option: option[:2])]


def _end_strays(row: list[Cluster], order: range) -> list[tuple[Cluster, float]]:
    """The strays at the end of the row that ``order`` starts from: lone standing tiles and standing
    clusters holding an honour tile, outermost first (clusters without a face-up tile aside), each with
    its gap to the next cluster inwards."""
    found: list[tuple[Cluster, float]] = []
    for k in order:
        cluster = row[k]
        if not cluster.faces:
            continue
        inwards = k + order.step
        if not (cluster.standing and (cluster.single_tile or cluster.honours)) or not 0 <= inwards < len(row):
            break
        # The gap between two clusters is the later one's ``gap_before``.
        found.append((cluster, row[max(k, inwards)].gap_before))
    return found


def _but_winning_tile(ends: list[tuple[Cluster, float]], win_apart: float) -> list[tuple[Cluster, float]]:
    """The tiles at an end of the row but the one nearest the hand, when it is a lone tile close enough
    (``win_apart``) to be the winning tile set apart."""
    return ends[:-1] if ends and ends[-1][1] <= win_apart and ends[-1][0].single_tile else ends
