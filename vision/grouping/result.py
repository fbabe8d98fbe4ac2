"""What the grouper returns: a ``Grouping`` of the detections, with warnings naming the tiles concerned."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from scoring.hand import Hand, MeldKind
from scoring.tiles import tile_name
from vision.detections import BACK, DETECTOR_CLASSES


class GroupRole(StrEnum):
    HAND = "hand"  # concealed tiles (the winning tile included)
    MELD = "meld"  # a revealed pong or kong
    IGNORED = "ignored"  # backs outside melds, honours, duplicate boxes


class WarningCode(StrEnum):
    """Why a reading may be wrong; see ``vision.grouping.grouper`` for when each is given."""

    DUPLICATE_BOX = "duplicate_box"
    HONOUR_TILE = "honour_tile"
    NOT_A_MELD = "not_a_meld"
    STRAY_TILES = "stray_tiles"
    WIN_TILE_NOT_APART = "win_tile_not_apart"
    FIFTH_COPY = "fifth_copy"
    TILE_COUNT = "tile_count"
    NO_TILES = "no_tiles"
    REREAD_TILE = "reread_tile"
    UNSURE_TILE = "unsure_tile"
    LEFT_OUT_TILE = "left_out_tile"
    BLURRED_PHOTO = "blurred_photo"
    CLOSE_FACES = "close_faces"
    OTHER_ROW = "other_row"


@dataclass(frozen=True)
class Group:
    """Detections that go together, for drawing: indices into the ``Detections``, in reading order."""

    role: GroupRole
    indices: tuple[int, ...]
    kind: MeldKind | None = None  # for a meld

    def to_json(self) -> dict[str, object]:
        return {
            "role": self.role.value,
            "kind": self.kind.value if self.kind else None,
            "indices": list(self.indices),
        }


def warning_name(class_id: int) -> str:
    """A detection's name in a warning: ``"5p"`` for a suited tile, else ``"back"`` or ``"honour"``."""
    return tile_name(class_id) if class_id < BACK else DETECTOR_CLASSES[class_id]


@dataclass(frozen=True)
class GroupingWarning:
    """Something the grouper could not decide. ``indices`` (detections) and ``tiles`` (their names,
    ``"5p"``, ``"back"``, ``"honour"``) go least confident first."""

    code: WarningCode
    message: str
    indices: tuple[int, ...]
    tiles: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        """``{"code", "message", "tiles", "indices"}``: the tiles concerned by name and by detection index."""
        return {
            "code": self.code.value,
            "message": self.message,
            "tiles": list(self.tiles),
            "indices": list(self.indices),
        }


@dataclass(frozen=True)
class Grouping:
    """The hand read from one photo's detections.

    Every detection is in exactly one group; every suited detection is in the hand, in a meld, or named
    in a warning.
    """

    hand: Hand | None  # None when no suited tile was found
    groups: tuple[Group, ...]
    win_index: int | None  # the detection read as the winning tile
    win_apart: bool  # whether it was set apart (else it is the last tile of the row, with a warning)
    warnings: tuple[GroupingWarning, ...]

    @property
    def placed(self) -> tuple[int, ...]:
        """The detections in the hand and the melds (not ignored), group by group in reading order."""
        return tuple(i for group in self.groups if group.role is not GroupRole.IGNORED for i in group.indices)

    @property
    def codes(self) -> tuple[WarningCode, ...]:
        return tuple(warning.code for warning in self.warnings)

    def warned(self, warning: GroupingWarning) -> Grouping:
        """The same reading with one more warning."""
        return replace(self, warnings=(*self.warnings, warning))

    def to_json(self) -> dict[str, object]:
        """``{"hand": Hand.to_json() or null, "groups": [{"role", "kind", "indices"}], "win_index",
        "win_apart", "warnings": [{"code", "message", "tiles", "indices"}]}``: as the API and
        ``smj score PHOTO --json`` answer it."""
        return {
            "hand": self.hand.to_json() if self.hand is not None else None,
            "groups": [group.to_json() for group in self.groups],
            "win_index": self.win_index,
            "win_apart": self.win_apart,
            "warnings": [warning.to_json() for warning in self.warnings],
        }
