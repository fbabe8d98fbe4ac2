"""Tables at the table (``/tables``): a table, a round, its events (a union told apart by ``type``), the
history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Field,
    StrictBool,
    create_model,
)

from api.schemas.common import PRESET_ENUM, In
from api.schemas.settle import LedgerOut
from scoring.conditions import WIN_CONDITIONS
from scoring.presets import DEFAULT_PRESET
from scoring.settlement.events import WIN_FLAGS


class TableIn(In):
    players: list[Annotated[str, Field(min_length=1, max_length=24)]] = Field(
        min_length=4, max_length=4, description="the four seats' names, in turn order (1-24 characters each)"
    )
    preset: str = Field(default=DEFAULT_PRESET, max_length=64, json_schema_extra=PRESET_ENUM)
    base: int = Field(default=1, ge=1, le=1_000_000, description="the base stake (底)")
    set: str | None = Field(default=None, max_length=64, description="the set its photos are read with")


class JoinIn(In):
    code: str = Field(min_length=1, max_length=16, description="the table's join code")


class RoundIn(In):
    dealer: int | None = Field(default=None, ge=0, le=3, description="庄家, a seat")
    void_suits: dict[str, Literal["m", "p", "s"]] = Field(
        default_factory=dict, max_length=4, description="定缺: seat or name -> m, p or s"
    )


# A table's events as the round format has them (scoring/settlement/__init__.py), one model a kind, told apart
# by ``type``: a client gets their schema; the settlement still judges each event against its round.
Player = Annotated[int | str, Field(description="a seat 0-3, or a player's name")]
Comment = Annotated[str, Field(max_length=300, description="kept with the event, read by no rule")]
TypedOrHand = Annotated[
    str | dict[str, Any],
    Field(
        description="the hand typed (123456789m11p kong 5p), or as /score takes it (concealed, melds, win)"
    ),
]


class KongEventIn(In):
    """刮风下雨: a kong declared."""

    type: Literal["kong"]
    player: Player
    kind: Literal["direct", "added", "concealed"] = Field(description="直杠, 面下杠 (加杠) or 暗杠")
    tile: str = Field(max_length=8)
    discarder: Player | None = Field(
        default=None, description="a direct kong's: who discarded the fourth tile"
    )
    immediate: bool = Field(default=True, description="an added kong's: added right after drawing its tile")
    comment: Comment | None = None


class WinnerIn(In):
    player: Player
    hand: TypedOrHand | None = None
    fan: int | None = Field(default=None, description="the fan, where the hand is not given")


class _WinEvent(In):
    """胡: one winner (``player`` with ``hand`` or ``fan``) or several on one discard (``winners``); its
    flags (杠上花, 杠上炮, 抢杠, 海底, 天胡, 地胡) as the win conditions name them."""

    type: Literal["win"]
    player: Player | None = None
    hand: TypedOrHand | None = None
    fan: int | None = None
    winners: list[WinnerIn] | None = Field(default=None, max_length=3)
    discarder: Player | None = Field(default=None, description="whose discard it was; none when self-drawn")
    self_drawn: bool = False
    comment: Comment | None = None


if TYPE_CHECKING:
    WinEventIn = _WinEvent
else:
    WinEventIn = create_model(
        "WinEventIn",
        __base__=_WinEvent,
        __doc__=_WinEvent.__doc__,
        **{
            c.key: (StrictBool, Field(default=False, description=c.describe()))
            for c in WIN_CONDITIONS
            if c.key in WIN_FLAGS
        },
    )


class EndEventIn(In):
    """The round's end: three have won, or the wall ran out (each player still in: ready with the fan, not
    ready, a 花猪, or their tiles)."""

    type: Literal["end"]
    reason: Literal["three_won", "wall_exhausted"]
    hands: dict[str, str | dict[str, Any]] = Field(default_factory=dict, description="by name or seat")
    comment: Comment | None = None


TableEventIn = Annotated[KongEventIn | WinEventIn | EndEventIn, Field(discriminator="type")]


class EventIn(In):
    version: int = Field(ge=1, description="the round's version the event was entered on")
    event: TableEventIn = Field(
        description="one event of the round format (scoring/settlement/__init__.py): a kong, a win, the end",
        json_schema_extra={
            "example": {"type": "kong", "player": "B", "kind": "direct", "tile": "5p", "discarder": "C"}
        },
    )

    def as_round_event(self) -> dict[str, Any]:
        """The event as the round format has it: the fields given, as given (the settlement judges it)."""
        return self.event.model_dump(exclude_unset=True)


class VersionIn(In):
    version: int = Field(ge=1, description="the round's version the change was made on")


class RoundOut(BaseModel):
    number: int
    version: int
    dealer: int | None
    void_suits: dict[str, str]
    events: list[dict[str, Any]]
    finished: bool
    ledger: LedgerOut


class TableOut(BaseModel):
    id: str
    players: list[str]
    preset: str
    base: int
    set: str | None
    rounds: list[RoundOut]
    totals: list[int] = Field(description="the night's totals a seat, every round counted")


class NewTableOut(TableOut):
    code: str = Field(description="the join code: whoever holds it may write the table (shown once)")


class RevisionOut(BaseModel):
    version: int
    action: str
    events: list[dict[str, Any]]
    at: str


class HistoryOut(BaseModel):
    revisions: list[RevisionOut]
    total: int = Field(description="revisions kept of the round (its newest 100)")
    offset: int = Field(description="the first revision of this page, counted from the oldest kept")
