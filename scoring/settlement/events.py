"""A 血战到底 round as typed, frozen events, in the order they happened.

Only what moves money is recorded: kongs (刮风下雨), wins, and the end of the round. Draws and discards
are not events; a discard appears only as the ``discarder`` of a direct kong or a win. Building these
values checks nothing beyond types: ``scoring.settlement.validate`` checks a round against the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from scoring.conditions import KEYS as CONDITION_KEYS
from scoring.hand import Hand, Meld, MeldKind
from scoring.tiles import Tile

__all__ = [
    "DEFAULT_PLAYERS",
    "SEATS",
    "End",
    "EndReason",
    "Event",
    "FinalHand",
    "FinalStatus",
    "Kong",
    "KongKind",
    "Round",
    "Seat",
    "Win",
    "Winner",
]

Seat = int  # 0..3, in turn order
SEATS: tuple[Seat, ...] = (0, 1, 2, 3)
DEFAULT_PLAYERS: tuple[str, ...] = ("A", "B", "C", "D")


class KongKind(StrEnum):
    DIRECT = "direct"  # 直杠 (点杠): three held, the fourth from another player's discard
    ADDED = "added"  # 面下杠 (加杠): the fourth tile added to one's own pong
    CONCEALED = "concealed"  # 暗杠 (下雨): all four held

    @property
    def meld_kind(self) -> MeldKind:
        """The meld this kong shows in a ``Hand``."""
        return _MELD_KINDS[self]

    @property
    def name_zh(self) -> str:
        return _NAMES_ZH[self]


_MELD_KINDS = {
    KongKind.DIRECT: MeldKind.KONG_EXPOSED,
    KongKind.ADDED: MeldKind.KONG_ADDED,
    KongKind.CONCEALED: MeldKind.KONG_CONCEALED,
}
_NAMES_ZH = {KongKind.DIRECT: "直杠", KongKind.ADDED: "面下杠", KongKind.CONCEALED: "暗杠"}


@dataclass(frozen=True)
class Kong:
    """A declared kong. ``discarder`` is given for a direct kong only; ``immediate`` matters for an added
    kong only (added right after drawing the fourth tile; a later 补杠 pays nothing by default)."""

    player: Seat
    kind: KongKind
    tile: Tile
    discarder: Seat | None = None
    immediate: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", KongKind(self.kind))


@dataclass(frozen=True)
class Winner:
    """One winner of a ``Win``: the winning hand (scored under the rules), or its fan already scored.

    A given ``fan`` is the hand's total (bonus fans such as 杠上炮 included); the preset's cap is applied.
    """

    player: Seat
    hand: Hand | None = None
    fan: int | None = None


@dataclass(frozen=True)
class Win:
    """A win: on ``discarder``'s tile (several winners: 一炮多响), or self-drawn (``discarder`` is None).

    The flags are the win conditions (``scoring.conditions``) but 自摸 (no ``discarder``) and the dealer
    (the round's): ``WIN_FLAGS``. 抢杠 (``qiang_gang``): ``discarder`` is the player whose added kong
    was robbed; the robbed kong is either not recorded or is the event right before, and then it is
    void. 杠上炮 (``gang_shang_pao``) and 杠上花 (``gang_shang_hua``) come right after the kong they
    follow.
    """

    winners: tuple[Winner, ...]
    discarder: Seat | None = None
    qiang_gang: bool = False
    gang_shang_pao: bool = False
    gang_shang_hua: bool = False
    hai_di: bool = False
    tian_hu: bool = False
    di_hu: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "winners", tuple(self.winners))

    @property
    def self_drawn(self) -> bool:
        return self.discarder is None

    @property
    def players(self) -> tuple[Seat, ...]:
        return tuple(winner.player for winner in self.winners)


# The win conditions a Win names as flags.
WIN_FLAGS = tuple(key for key in CONDITION_KEYS if key not in ("self_drawn", "dealer"))


class EndReason(StrEnum):
    THREE_WON = "three_won"  # the third player won: nothing more to settle
    WALL_EXHAUSTED = "wall_exhausted"  # 流局: 查花猪, 查大叫, 退税 among the players still in


@dataclass(frozen=True)
class FinalHand:
    """The tiles of a player still in when the wall ran out: 13 + one per kong (concealed, kept sorted,
    and melds)."""

    concealed: tuple[Tile, ...]
    melds: tuple[Meld, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "concealed", tuple(sorted(self.concealed)))
        object.__setattr__(self, "melds", tuple(self.melds))

    @property
    def all_tiles(self) -> tuple[Tile, ...]:
        return self.concealed + tuple(tile for meld in self.melds for tile in meld.tiles)


@dataclass(frozen=True)
class FinalStatus:
    """Instead of tiles: a player's standing at 流局 as the table agreed it. ``ready_fan`` is the fan
    查叫 pays (None: not ready); a 花猪 (three suits) is never ready."""

    hua_zhu: bool = False
    ready_fan: int | None = None


@dataclass(frozen=True)
class End:
    """The end of the round. At ``wall_exhausted``, ``hands`` has an entry for every player still in."""

    reason: EndReason
    hands: Mapping[Seat, FinalHand | FinalStatus] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", EndReason(self.reason))
        object.__setattr__(self, "hands", MappingProxyType(dict(self.hands)))


Event = Kong | Win | End


@dataclass(frozen=True)
class Round:
    """Four players (seats 0-3 in turn order, with names), the events in order, and optionally the dealer
    (庄家) and each player's declared void suit (定缺: 'm', 'p' or 's'). No ``End``: still in play."""

    events: tuple[Event, ...]
    players: tuple[str, ...] = DEFAULT_PLAYERS
    dealer: Seat | None = None
    void_suits: Mapping[Seat, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "events", tuple(self.events))
        object.__setattr__(self, "players", tuple(self.players))
        object.__setattr__(self, "void_suits", MappingProxyType(dict(self.void_suits)))

    def name(self, seat: Seat) -> str:
        return self.players[seat]

    @property
    def end(self) -> End | None:
        last = self.events[-1] if self.events else None
        return last if isinstance(last, End) else None
