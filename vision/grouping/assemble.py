"""The grouper's last stage, assembly: from a plan of the layout to the ``Grouping`` (the winning tile, the
``Hand``, the groups, the warnings).

The winning tile is a lone tile past a gap at an end of the hand's row, or an end tile set off by a gap
narrower than a split but at least ``AssemblyConfig.win_gap`` and ``AssemblyConfig.win_gap_ratio`` times
any other gap of the hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from scoring.hand import Hand, Meld, tile_count
from scoring.tiles import Tile, tile_name
from vision.detections import BACK, Detections
from vision.grouping.layout import Cluster, FoundMeld, position
from vision.grouping.plan import Plan
from vision.grouping.result import Group, Grouping, GroupingWarning, GroupRole, WarningCode, warning_name


@dataclass(frozen=True)
class AssemblyConfig:
    """When an end tile of the hand set off by less than a split is still the winning tile set apart."""

    win_gap: float = 0.28  # tile widths: a winning tile set off by less than a split but at least this ...
    win_gap_ratio: float = 2.5  # times any other gap of the hand: ... and this many times is still set apart


ASSEMBLY = AssemblyConfig()


class Assembly:
    """One call's reading of the ``chosen`` plan, made by ``grouping()``; it collects the warnings and never
    outlives the call."""

    def __init__(
        self,
        detections: Detections,
        layout: list[list[Cluster]],
        reading_known: Sequence[bool],
        duplicates: list[tuple[int, int]],
        chosen: Plan,
        *,
        config: AssemblyConfig,
    ) -> None:
        self.detections = detections
        self.layout = layout
        self.reading_known = reading_known
        self.duplicates = duplicates
        self.chosen = chosen
        self.config = config
        self.warnings: list[GroupingWarning] = []

    def grouping(self) -> Grouping:
        chosen = self.chosen
        hand_clusters = list(chosen.hand)
        win_index, apart = self._win(chosen.row, hand_clusters)

        concealed = [i for c in hand_clusters for i in c.faces if i != win_index]
        concealed += [i for c in chosen.extra for i in c.faces]
        if win_index is not None:
            concealed.append(win_index)
        melds = [meld for c in chosen.melds for meld in c.melds or ()]
        hand = None
        if concealed or melds:
            hand = Hand(
                tuple(self._class(i) for i in concealed),
                tuple(Meld(kind, tile) for kind, tile, _ in melds),
                self._class(win_index) if win_index is not None else None,
            )

        placed = {*concealed, *(i for _, _, indices in melds for i in indices)}
        self._warn_duplicates(placed)
        self._warn_honours()
        for extra in chosen.extra:
            self._warn(
                WarningCode.NOT_A_MELD,
                "{tiles} lie apart from the hand but are not a pong or kong; counted as concealed tiles",
                extra.faces,
            )
        left_out = [i for c in chosen.left_out for i in c.faces]
        if left_out:
            self._warn(
                WarningCode.STRAY_TILES,
                "{tiles} lie away from the hand (discards or other players' tiles?); left out of it",
                left_out,
            )
        if win_index is not None and not apart:
            self._warn(
                WarningCode.WIN_TILE_NOT_APART,
                "no tile is set apart as the winning tile; took {tiles}, the last tile of the row",
                (win_index,),
            )
        if hand is None:
            self._warn(WarningCode.NO_TILES, "no Sichuan tile was found in the photo", ())
        else:
            self._check_counts(hand, concealed, melds)
        groups = self._groups(hand_clusters + list(chosen.extra), melds)
        return Grouping(hand, groups, win_index, apart, tuple(self.warnings))

    def _win(self, hand_row: int | None, hand: list[Cluster]) -> tuple[int | None, bool]:
        """The winning tile: a lone tile past a gap at an end of the hand's row, or else an end tile whose
        gap is far wider than any other in the hand; at the right end when both ends have one (when the
        row is vertical: the one further apart). Without either, the last tile of the row."""
        if hand_row is None or not hand:
            return None, False
        core = max(range(len(hand)), key=lambda k: (len(hand[k].faces), -k))
        row = self.layout[hand_row]
        right = left = None
        if core != len(hand) - 1 and hand[-1].single_tile:
            right = (hand[-1].gap_before, hand[-1].faces[0])
        if core != 0 and hand[0].single_tile:
            left = (row[position(row, hand[0]) + 1].gap_before, hand[0].faces[0])
        if right is None and left is None:
            right, left = self._set_off(hand, -1), self._set_off(hand, 0)
        if right is not None and (left is None or self.reading_known[hand_row] or right[0] >= left[0]):
            return right[1], True
        if left is not None:
            return left[1], True
        return hand[-1].faces[-1], False

    def _set_off(self, hand: list[Cluster], end: int) -> tuple[float, int] | None:
        """The tile at this end of the hand (0: first, -1: last) with its gap, when that gap is at least
        ``config.win_gap`` and ``config.win_gap_ratio`` times any other gap in the hand."""
        cluster = hand[end]
        if len(cluster.inner) < 2 or self._class(cluster.members[end]) >= BACK:
            return None
        gap = cluster.inner[end]
        others = [g for c in hand for g in c.inner if c is not cluster]
        others += list(cluster.inner[1:] if end == 0 else cluster.inner[:-1])
        if gap >= self.config.win_gap and gap >= self.config.win_gap_ratio * max(others, default=0.0):
            return gap, cluster.members[end]
        return None

    def _groups(self, concealed: list[Cluster], melds: list[FoundMeld]) -> tuple[Group, ...]:
        groups = [Group(GroupRole.HAND, c.faces) for c in concealed]
        groups += [Group(GroupRole.MELD, indices, kind) for kind, _, indices in melds]
        placed = {i for group in groups for i in group.indices}
        for row in self.layout:
            for cluster in row:
                left = tuple(i for i in cluster.members if i not in placed)
                if left:
                    groups.append(Group(GroupRole.IGNORED, left))
        if self.duplicates:
            groups.append(Group(GroupRole.IGNORED, tuple(sorted(d for d, _ in self.duplicates))))
        return tuple(groups)

    def _check_counts(self, hand: Hand, concealed: list[int], melds: list[FoundMeld]) -> None:
        shown = concealed + [i for _, _, indices in melds for i in indices if self._class(i) < BACK]
        counts = Counter(hand.all_tiles)
        for tile in sorted(t for t, count in counts.items() if count > 4):
            self._warn(
                WarningCode.FIFTH_COPY,
                f"{tile_name(tile)} appears {counts[tile]} times; a set holds only 4 of each tile",
                [i for i in shown if self._class(i) == tile],
            )
        found, needed = len(hand.all_tiles), tile_count(hand.kong_count)
        if found != needed:
            kongs = (
                f"with {hand.kong_count} kong{'s' if hand.kong_count > 1 else ''} " if hand.kong_count else ""
            )
            self._warn(
                WarningCode.TILE_COUNT,
                f"found {found} tiles; a winning hand {kongs}has {needed}. The least sure: {{tiles}}",
                self._least_confident(shown)[:3],
            )

    def _warn_duplicates(self, placed: set[int]) -> None:
        """Two boxes on one tile, when it matters: the tile is the player's (``placed``: in the hand or
        a meld) or the dropped box read as a suited tile. A second box on a tile that is not the player's
        (a back of another player's wall), itself read as no suited tile, is dropped unsaid."""
        for dropped, kept in self.duplicates:
            if kept not in placed and self._class(dropped) >= BACK:
                continue
            self._warn(
                WarningCode.DUPLICATE_BOX,
                f"two boxes cover one tile: kept {self._describe(kept)}, dropped {self._describe(dropped)}",
                (dropped, kept),
                least_sure_first=False,  # already: the dropped box is the less confident
            )

    def _warn_honours(self) -> None:
        honours = [i for row in self.layout for cluster in row for i in cluster.honours]
        if honours:
            plural = "s" if len(honours) > 1 else ""
            self._warn(
                WarningCode.HONOUR_TILE,
                f"the photo holds tiles a Sichuan hand cannot have ({len(honours)} honour tile{plural}); "
                "left out of the hand",
                honours,
            )

    def _warn(
        self, code: WarningCode, message: str, indices: Sequence[int], *, least_sure_first: bool = True
    ) -> None:
        ordered = self._least_confident(indices) if least_sure_first else list(indices)
        names = tuple(self._name(i) for i in ordered)
        text = message.replace("{tiles}", " ".join(names))
        self.warnings.append(GroupingWarning(code, text, tuple(ordered), names))

    def _least_confident(self, indices: Sequence[int]) -> list[int]:
        return sorted(indices, key=lambda i: (float(self.detections.confidences[i]), i))

    def _class(self, index: int) -> Tile:
        """A detection's class: the tile id of a suited tile."""
        return int(self.detections.class_ids[index])

    def _name(self, index: int) -> str:
        class_id = self._class(index)
        return warning_name(class_id)

    def _describe(self, index: int) -> str:
        return f"{self._name(index)} ({float(self.detections.confidences[index]):.0%})"
