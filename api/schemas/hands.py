"""A hand given as JSON or typed, the win's context, and the score and waits answered (``/score``,
``/waits``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    create_model,
)

from api.schemas.common import PRESET_ENUM, TILES_TEXT, In
from scoring import Hand, Meld, MeldKind, WinContext
from scoring.conditions import WIN_CONDITIONS
from scoring.presets import DEFAULT_PRESET
from scoring.tiles import Tile, parse_tile, parse_tiles
from scoring.typed import MAX_TYPED, parse_typed


class MeldIn(In):
    type: MeldKind = Field(
        description="pong, kong_exposed (直杠), kong_added (加杠) or kong_concealed (暗杠)"
    )
    tile: str = Field(max_length=8, description="the tile of the meld, e.g. 2p")


class HandIn(In):
    """A winning hand, as ``Hand.to_json()`` writes it."""

    concealed: str = TILES_TEXT
    melds: list[MeldIn] = Field(default_factory=list, max_length=4)
    win_tile: str | None = Field(default=None, max_length=8, description="default: the last concealed tile")

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "concealed": "123345m66999p",
                    "melds": [{"type": "kong_exposed", "tile": "2p"}],
                    "win_tile": "6p",
                }
            ]
        },
    )

    def to_hand(self) -> Hand:
        """Raises ``TileParseError`` for text that is not tiles."""
        by_kind: dict[MeldKind, list[str]] = {kind: [] for kind in MeldKind}
        for meld in self.melds:
            by_kind[meld.type].append(meld.tile)
        return Hand.parse(
            self.concealed,
            pongs=tuple(by_kind[MeldKind.PONG]),
            kongs=tuple(by_kind[MeldKind.KONG_EXPOSED]),
            added_kongs=tuple(by_kind[MeldKind.KONG_ADDED]),
            concealed_kongs=tuple(by_kind[MeldKind.KONG_CONCEALED]),
            win=self.win_tile,
        )


TypedHandText = Annotated[
    str,
    Field(
        max_length=MAX_TYPED,
        description="the hand as a player types it (scoring.typed): tiles, then meld words and their tiles, "
        "e.g. 123345m66999p kong 2p win 6p, or 12345m11p 碰3m 暗杠9m",
        examples=["123345m66999p kong 2p win 6p"],
    ),
]


def hand_of(given: HandIn | str) -> Hand:
    """The winning hand of a request: as ``Hand.to_json()`` writes it, or typed (``scoring.typed``; its
    errors are ``TypedHandError``, a 422 ``typed_hand``)."""
    if isinstance(given, str):
        return parse_typed(given).hand()
    return given.to_hand()


def waiting_hand_of(given: WaitingHandIn | str) -> tuple[tuple[Tile, ...], tuple[Meld, ...]]:
    """The concealed tiles and melds of a hand one tile short, as ``hand_of`` reads a winning one."""
    if isinstance(given, str):
        return parse_typed(given).final()
    return given.tiles()


class WaitingHandIn(In):
    """A hand one tile short of a win: concealed tiles and melds, no winning tile."""

    concealed: str = TILES_TEXT
    melds: list[MeldIn] = Field(default_factory=list, max_length=4)

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"concealed": "12334567m66999p", "melds": []}]}
    )

    def tiles(self) -> tuple[tuple[int, ...], tuple[Meld, ...]]:
        return parse_tiles(self.concealed), tuple(
            Meld(meld.type, parse_tile(meld.tile)) for meld in self.melds
        )


VOID_SUIT_HELP = "定缺: the declared void suit"


class _Context(In):
    """How the hand was won (the fields of ``scoring.WinContext``); all false: a win on a discard."""

    def to_context(self) -> WinContext:
        return WinContext(**self.model_dump())


# A field per win condition of ``scoring.conditions.WIN_CONDITIONS``, then the void suit.
if TYPE_CHECKING:
    ContextIn = _Context
else:
    ContextIn = create_model(
        "ContextIn",
        __base__=_Context,
        __doc__=_Context.__doc__,
        # strict: 0, 1, "yes" are no booleans (dealer: 0 was read as a win condition not given)
        **{c.key: (StrictBool, Field(default=False, description=c.describe())) for c in WIN_CONDITIONS},
        void_suit=(Literal["m", "p", "s"] | None, Field(default=None, description=VOID_SUIT_HELP)),
    )


class ScoreIn(In):
    hand: HandIn | TypedHandText
    context: ContextIn = Field(default_factory=ContextIn)
    preset: str = Field(
        default=DEFAULT_PRESET,
        max_length=64,
        description="rules preset, see GET /api/v1/presets",
        json_schema_extra=PRESET_ENUM,
    )

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "hand": {
                        "concealed": "123345m66999p",
                        "melds": [{"type": "kong_exposed", "tile": "2p"}],
                        "win_tile": "6p",
                    },
                    "context": {"self_drawn": True},
                    "preset": DEFAULT_PRESET,
                },
                {"hand": "123345m66999p kong 2p win 6p", "preset": DEFAULT_PRESET},
            ]
        },
    )


class WaitsIn(In):
    hand: WaitingHandIn | TypedHandText
    context: ContextIn = Field(default_factory=ContextIn)
    preset: str = Field(default=DEFAULT_PRESET, max_length=64, json_schema_extra=PRESET_ENUM)

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"hand": {"concealed": "12334567m66999p"}, "preset": DEFAULT_PRESET}],
        },
    )


class TypedIn(In):
    """A hand as a player types it, to be read (``/typed``)."""

    text: TypedHandText

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"text": "123345m66999p kong 2p win 6p"}]}
    )


class MeldOut(BaseModel):
    type: MeldKind
    tile: str


class HandOut(BaseModel):
    """``Hand.to_json()``: what ``/score`` takes as ``hand``."""

    concealed: str
    win_tile: str | None = Field(description="null: the last concealed tile wins")
    melds: list[MeldOut]


class ScoreErrorOut(BaseModel):
    code: str
    message: str


class FanOut(BaseModel):
    key: str
    name_zh: str
    name_en: str
    fan: int = Field(description="what this line contributes (value x count)")
    count: int


class CombinationOut(BaseModel):
    key: str
    name_zh: str
    name_en: str


class ScoreOut(BaseModel):
    """``Score.to_json()``; ``valid=false`` with an ``error`` when the hand is not a win."""

    valid: bool
    error: ScoreErrorOut | None
    preset: str
    fans: list[FanOut]
    combination: CombinationOut | None
    raw_fan: int | None
    total_fan: int | None = Field(description="after the preset's cap")
    multiplier: int | None
    decomposition: list[str]
    payment: int | None = Field(
        description="base units (底) each payer pays: the multiplier, plus the preset's 自摸 bonus "
        "when self-drawn"
    )
    payers: Literal["discarder", "robbed_konger", "each_player_still_in"] | None = Field(
        description="who pays: the discarder (点炮), the konger robbed (抢杠) or each player still in (自摸)"
    )


class WaitOut(BaseModel):
    tile: str
    tile_zh: str
    score: ScoreOut


class WaitsOut(BaseModel):
    preset: str
    ready: bool
    largest_fan: int | None
    waits: list[WaitOut]
