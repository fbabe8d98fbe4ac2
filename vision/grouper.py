"""The grouper: from the tiles a detector found in a photo to the hand the scoring core reads.

``group_detections(detections) -> Grouping`` is a pure function of the boxes. The photo shows the
concealed tiles standing in a row (the winning tile often set a little apart at its right end) and the
revealed melds laid down as separate groups, in a second row or on the same line past a gap:

* rows and clusters come from the boxes' geometry alone (``vision.grouping.rows``), in tile widths, so
  perspective, a rotated photo (up to 90 degrees either way), uneven gaps and tiles lying flat or turned
  in a meld are all one case;
* a cluster apart from the hand reads as melds (``vision.grouping.melds``): 3 identical tiles a pong,
  4 a kong (``kong_exposed``: a photo cannot tell it from an added kong), 4 with 1-3 backs a concealed kong;
* the row with the most tiles that are not melds is the hand; a lone tile past a gap at its right end is
  the winning tile. Four identical tiles inside the standing row are concealed tiles, not a kong;
* honours, duplicate boxes and backs outside melds (other players' walls) are left out.

Nothing is guessed silently: a tile is never gained or lost without a warning naming it. Every suited
detection ends in the hand, in a meld, or in a warning (a duplicate box); every detection is in exactly
one ``Group``. Warnings name the tiles concerned, least confident first:

========================  ================================================================================
``duplicate_box``          two boxes cover one tile; the less confident one was dropped
``honour_tile``            honour tiles (winds, dragons, flowers) are not Sichuan tiles; left out of the hand
``not_a_meld``             tiles set apart that are not a pong or kong; counted as concealed tiles
``win_tile_not_apart``     no tile set apart: the last tile of the row was taken as the winning tile
``fifth_copy``             a tile appears more than 4 times
``tile_count``             not 14 tiles plus one per kong
``no_tiles``               no suited tile at all: ``hand`` is None
========================  ================================================================================
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from dataclasses import dataclass
from enum import Enum

import numpy as np

from scoring.hand import Hand, Meld, MeldKind
from scoring.tiles import Tile, tile_name
from vision.detections import BACK, DETECTOR_CLASSES, HONOUR, Detections
from vision.grouping.melds import split_melds
from vision.grouping.rows import Row, find_rows


class GroupRole(str, Enum):
    HAND = "hand"  # concealed tiles (the winning tile included)
    MELD = "meld"  # a revealed pong or kong
    IGNORED = "ignored"  # backs outside melds, honours, duplicate boxes


class WarningCode(str, Enum):
    DUPLICATE_BOX = "duplicate_box"
    HONOUR_TILE = "honour_tile"
    NOT_A_MELD = "not_a_meld"
    WIN_TILE_NOT_APART = "win_tile_not_apart"
    FIFTH_COPY = "fifth_copy"
    TILE_COUNT = "tile_count"
    NO_TILES = "no_tiles"


@dataclass(frozen=True)
class Group:
    """Detections that go together, for drawing: indices into the ``Detections``, in reading order."""

    role: GroupRole
    indices: tuple[int, ...]
    kind: MeldKind | None = None  # for a meld


@dataclass(frozen=True)
class GroupingWarning:
    """Something the grouper could not settle; ``indices`` (and their names, ``tiles``) least confident first."""

    code: WarningCode
    message: str
    indices: tuple[int, ...]
    tiles: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"code": self.code.value, "message": self.message, "tiles": list(self.tiles)}


@dataclass(frozen=True)
class Grouping:
    hand: Hand | None  # None when no suited tile was found
    groups: tuple[Group, ...]
    win_index: int | None  # the detection read as the winning tile
    win_apart: bool  # whether it was set apart (else it is the last tile of the row, with a warning)
    warnings: tuple[GroupingWarning, ...]

    @property
    def codes(self) -> tuple[WarningCode, ...]:
        return tuple(warning.code for warning in self.warnings)

    def to_json(self) -> dict[str, object]:
        hand = self.hand.to_json() if self.hand else {"concealed": "", "win_tile": None, "melds": []}
        return {
            **hand,
            "win_apart": self.win_apart,
            "warnings": [warning.to_json() for warning in self.warnings],
        }


@dataclass(frozen=True)
class GrouperConfig:
    """Thresholds, in tile widths (gaps) or as overlap ratios (boxes)."""

    split_gap: float = 0.4  # a wider gap separates two groups of tiles
    max_link_gap: float = 4.0  # tiles further apart than this along a line are not in the same row
    duplicate_iou: float = 0.6  # two boxes overlapping this much (intersection over union) ...
    duplicate_cover: float = 0.85  # ... or one covered this much by the other are one tile


def group_detections(detections: Detections, config: GrouperConfig | None = None) -> Grouping:
    """Read the hand in a photo's detections; see the module docstring."""
    config = config or GrouperConfig()
    kept, duplicates = _drop_duplicates(detections, config)
    # Face-up tiles set the photo's direction; backs may be other players' walls, at any angle.
    weights = np.where(detections.class_ids[kept] == BACK, 0.25, 1.0)
    rows = find_rows(
        detections.boxes[kept], weights=weights, split_gap=config.split_gap, max_link_gap=config.max_link_gap
    )
    layout = [[_Cluster.of(detections, [kept[m] for m in cluster]) for cluster in row.clusters] for row in rows]
    return _Reading(detections, rows, layout, duplicates).grouping()


def _drop_duplicates(detections: Detections, config: GrouperConfig) -> tuple[list[int], list[tuple[int, int]]]:
    """Greedy, most confident first: the kept indices (ascending) and (dropped, kept by) pairs."""
    boxes = detections.boxes.astype(np.float64)
    area = np.prod(boxes[:, 2:] - boxes[:, :2], axis=1)
    order = sorted(range(len(detections)), key=lambda i: (-float(detections.confidences[i]), i))
    kept: list[int] = []
    dropped: list[tuple[int, int]] = []
    for i in order:
        for k in kept:
            low = np.maximum(boxes[i, :2], boxes[k, :2])
            high = np.minimum(boxes[i, 2:], boxes[k, 2:])
            inter = float(np.prod(np.clip(high - low, 0, None)))
            union = area[i] + area[k] - inter
            smaller = min(area[i], area[k])
            if inter > 0 and (inter >= config.duplicate_iou * union or inter >= config.duplicate_cover * smaller):
                dropped.append((i, k))
                break
        else:
            kept.append(i)
    return sorted(kept), dropped


@dataclass(frozen=True)
class _Cluster:
    """One cluster of a row, by detection index, split by what the tiles are."""

    members: tuple[int, ...]
    faces: tuple[int, ...]  # suited tiles
    honours: tuple[int, ...]
    melds: tuple[tuple[MeldKind, Tile, tuple[int, ...]], ...] | None  # when the tiles read as melds

    @classmethod
    def of(cls, detections: Detections, members: list[int]) -> _Cluster:
        classes = [int(detections.class_ids[i]) for i in members]
        run = [i for i, c in zip(members, classes, strict=True) if c != HONOUR]
        faces = tuple(i for i, c in zip(members, classes, strict=True) if c < BACK)
        spans = split_melds([int(detections.class_ids[i]) for i in run]) if faces else None
        melds = None if spans is None else tuple((s.kind, s.tile, tuple(run[s.start : s.stop])) for s in spans)
        honours = tuple(i for i, c in zip(members, classes, strict=True) if c == HONOUR)
        return cls(tuple(members), faces, honours, melds)

    @property
    def loose(self) -> bool:
        """Face-up tiles that are not melds (part of the hand, or stray)."""
        return bool(self.faces) and self.melds is None

    @property
    def standing(self) -> bool:
        """Upright tiles that are not melds: part of the standing hand, when in its row."""
        return self.upright and self.melds is None

    @property
    def single_tile(self) -> bool:
        return len(self.faces) == 1 and len(self.faces) + len(self.honours) == len(self.members)

    @property
    def upright(self) -> bool:
        """Face-up tiles and no backs: they may stand in the hand."""
        return bool(self.faces) and len(self.faces) + len(self.honours) == len(self.members)


class _Reading:
    """The decisions of one call, taken in order by ``grouping()``; never outlives the call."""

    def __init__(
        self, detections: Detections, rows: tuple[Row, ...], layout: list[list[_Cluster]], duplicates: list[tuple[int, int]]
    ) -> None:
        self.detections = detections
        self.rows = rows
        self.layout = layout
        self.duplicates = duplicates
        self.warnings: list[GroupingWarning] = []

    def grouping(self) -> Grouping:
        hand_row = self._hand_row()
        # Loose tiles in the hand's row are the hand, unless backs among them show they were laid down.
        hand_clusters = [c for c in self.layout[hand_row] if c.standing] if hand_row is not None else []
        meld_clusters = [c for r, row in enumerate(self.layout) for c in row if c.melds and r == hand_row] + [
            c for r, row in enumerate(self.layout) for c in row if c.melds and r != hand_row
        ]
        strays = [c for row in self.layout for c in row if c.loose and c not in hand_clusters]
        if hand_row is not None:
            hand_clusters = self._settle_hand_row(hand_row, strays, meld_clusters)
            meld_clusters = [c for c in meld_clusters if c not in hand_clusters]
        win_index, apart = self._win(hand_row, hand_clusters)

        concealed_indices = [i for c in hand_clusters for i in c.faces if i != win_index]
        concealed_indices += [i for c in strays for i in c.faces]
        if win_index is not None:
            concealed_indices.append(win_index)
        melds = [(kind, tile, indices) for c in meld_clusters for kind, tile, indices in c.melds or ()]
        hand = self._hand(concealed_indices, melds, win_index)

        self._warn_duplicates()
        self._warn_honours()
        for stray in strays:
            self._warn(
                WarningCode.NOT_A_MELD,
                "{tiles} lie apart from the hand but are not a pong or kong; counted as concealed tiles",
                stray.faces,
            )
        if win_index is not None and not apart:
            self._warn(
                WarningCode.WIN_TILE_NOT_APART,
                "no tile is set apart as the winning tile; took {tiles}, the last tile of the row",
                (win_index,),
            )
        if hand is not None:
            self._check_counts(hand, concealed_indices, melds)
        else:
            self._warn(WarningCode.NO_TILES, "no Sichuan tile was found in the photo", ())

        groups = [Group(GroupRole.HAND, c.faces) for c in hand_clusters]
        groups += [Group(GroupRole.HAND, c.faces) for c in strays]
        groups += [Group(GroupRole.MELD, indices, kind) for kind, _, indices in melds]
        in_groups = {i for group in groups for i in group.indices}
        for row in self.layout:
            for cluster in row:
                left = tuple(i for i in cluster.members if i not in in_groups)
                if left:
                    groups.append(Group(GroupRole.IGNORED, left))
        if self.duplicates:
            groups.append(Group(GroupRole.IGNORED, tuple(sorted(d for d, _ in self.duplicates))))
        return Grouping(hand, tuple(groups), win_index, apart, tuple(self.warnings))

    def _hand_row(self) -> int | None:
        """The row with the most upright tiles that are not melds, else the one with the largest cluster of
        upright tiles; None when no row has upright tiles."""
        scores = [
            (
                sum(len(c.faces) for c in row if c.standing),
                max((len(c.faces) for c in row if c.upright), default=0),
                -r,
            )
            for r, row in enumerate(self.layout)
        ]
        best = max(scores, default=None)
        return -best[2] if best and best[1] else None

    def _settle_hand_row(self, hand_row: int, strays: list[_Cluster], melds: list[_Cluster]) -> list[_Cluster]:
        """The clusters of the hand's row that are concealed tiles.

        Loose tiles are; tiles that also read as melds (``5555m`` set a little apart, or a whole hand such
        as ``1111222233m3m``) are when only that reading gives the hand its 14 tiles plus one per kong:
        each such cluster read as tiles adds (its tiles - 3 per meld) to the count. The fewest such
        clusters, nearest the hand, are taken.
        """
        row = self.layout[hand_row]
        loose = [c for c in row if c.standing]
        doubtful = [c for c in row if c.upright and c.melds is not None]
        concealed = sum(len(c.faces) for c in loose + strays)
        short = 14 - concealed - 3 * sum(len(c.melds or ()) for c in melds)
        core = row.index(max(loose or doubtful, key=lambda c: len(c.faces)))
        taken: list[_Cluster] | None = None
        for size in range(len(doubtful) + 1):
            fitting = [
                subset
                for subset in combinations(doubtful, size)
                if sum(len(c.faces) - 3 * len(c.melds or ()) for c in subset) == short
            ]
            if fitting:
                taken = list(min(fitting, key=lambda subset: sum(abs(row.index(c) - core) for c in subset)))
                break
        if taken is None:
            taken = [] if loose else [row[core]]
        return [c for c in row if c in loose or c in taken]

    def _win(self, hand_row: int | None, hand: list[_Cluster]) -> tuple[int | None, bool]:
        """The winning tile: a lone tile at the right end of the hand's row past a gap (either end when
        the row is vertical: the one further apart), else the last tile of the row."""
        if hand_row is None or not hand:
            return None, False
        row, clusters = self.rows[hand_row], self.layout[hand_row]
        positions = [clusters.index(c) for c in hand]
        core = positions[max(range(len(hand)), key=lambda k: (len(hand[k].faces), -k))]
        first, last = positions[0], positions[-1]
        candidates: list[tuple[float, int]] = []
        if last != core and clusters[last].single_tile:
            candidates.append((row.gaps[last - 1], clusters[last].faces[0]))
        if first != core and clusters[first].single_tile and not row.reading_known:
            candidates.append((row.gaps[first], clusters[first].faces[0]))
        if candidates:
            return max(candidates)[1], True
        return hand[-1].faces[-1], False

    def _hand(
        self, concealed: list[int], melds: list[tuple[MeldKind, Tile, tuple[int, ...]]], win_index: int | None
    ) -> Hand | None:
        if not concealed and not melds:
            return None
        return Hand(
            tuple(self._tile(i) for i in concealed),
            tuple(Meld(kind, tile) for kind, tile, _ in melds),
            self._tile(win_index) if win_index is not None else None,
        )

    def _check_counts(
        self, hand: Hand, concealed: list[int], melds: list[tuple[MeldKind, Tile, tuple[int, ...]]]
    ) -> None:
        shown = concealed + [i for _, _, indices in melds for i in indices if self._tile(i) < BACK]
        counts = Counter(hand.all_tiles)
        for tile in sorted(t for t, count in counts.items() if count > 4):
            self._warn(
                WarningCode.FIFTH_COPY,
                f"{tile_name(tile)} appears {counts[tile]} times; a set holds only 4 of each tile",
                [i for i in shown if self._tile(i) == tile],
            )
        found, needed = len(hand.all_tiles), 14 + hand.kong_count
        if found != needed:
            kongs = f"with {hand.kong_count} kong{'s' if hand.kong_count != 1 else ''}, " if hand.kong_count else ""
            self._warn(
                WarningCode.TILE_COUNT,
                f"found {found} tiles; {kongs}a winning hand has {needed}. Least sure: {{tiles}}",
                self._least_confident(shown)[:3],
            )

    def _warn_duplicates(self) -> None:
        for dropped, kept in self.duplicates:
            self._warn(
                WarningCode.DUPLICATE_BOX,
                f"two boxes cover one tile: kept {self._describe(kept)}, dropped {self._describe(dropped)}",
                (dropped, kept),
                sort=False,
            )

    def _warn_honours(self) -> None:
        honours = [i for row in self.layout for cluster in row for i in cluster.honours]
        if honours:
            self._warn(
                WarningCode.HONOUR_TILE,
                f"the photo holds tiles a Sichuan hand cannot have ({len(honours)} honour "
                f"tile{'s' if len(honours) > 1 else ''}); left out of the hand",
                honours,
            )

    def _warn(self, code: WarningCode, message: str, indices: tuple[int, ...] | list[int], sort: bool = True) -> None:
        ordered = self._least_confident(indices) if sort else list(indices)
        names = tuple(self._name(i) for i in ordered)
        self.warnings.append(GroupingWarning(code, message.format(tiles=" ".join(names)), tuple(ordered), names))

    def _least_confident(self, indices: tuple[int, ...] | list[int]) -> list[int]:
        return sorted(indices, key=lambda i: (float(self.detections.confidences[i]), i))

    def _tile(self, index: int) -> Tile:
        """The class of a detection: a tile id for a suited tile."""
        return int(self.detections.class_ids[index])

    def _name(self, index: int) -> str:
        class_id = int(self.detections.class_ids[index])
        return tile_name(class_id) if class_id < BACK else DETECTOR_CLASSES[class_id]

    def _describe(self, index: int) -> str:
        return f"{self._name(index)} ({float(self.detections.confidences[index]):.0%})"
