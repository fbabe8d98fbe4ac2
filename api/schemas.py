"""The JSON the API reads and writes, as pydantic models (they make the OpenAPI schema).

Inputs forbid unknown fields and convert to the library's values (``HandIn.to_hand()``,
``ContextIn.to_context()``); outputs mirror the library's ``to_json()`` shapes field for field, so the
``score`` of ``/api/v1/score`` is exactly what ``smj score --json`` prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    StrictBool,
    WithJsonSchema,
    create_model,
    model_validator,
)

from scoring import Hand, Meld, MeldKind, WinContext
from scoring.conditions import WIN_CONDITIONS
from scoring.presets import DEFAULT_PRESET, PRESETS
from scoring.settlement.events import WIN_FLAGS
from scoring.tiles import CLASS_NAMES, Tile, parse_tile, parse_tiles
from scoring.typed import MAX_TYPED, parse_typed
from vision.contract import CLASSIFIER_CLASSES
from vision.detections import DETECTOR_CLASSES

# the presets as the schema's enum; an unknown one is still read, and answered 422 unknown_preset
PRESET_ENUM: dict[str, Any] = {"enum": list(PRESETS)}


def _one_of(names: tuple[str, ...]) -> Any:
    """A str field that must be one of ``names``, and the schema's enum of them: the lists come from the
    modules that own them, never typed out again here."""

    def check(value: str) -> str:
        if value not in names:
            raise ValueError(f"{value!r} is not one of {', '.join(names)}")
        return value

    return [AfterValidator(check), WithJsonSchema({"type": "string", "enum": list(names)})]


DetectorClass = Annotated[str, *_one_of(DETECTOR_CLASSES)]  # a tile the detector reports
SuitedClass = Annotated[str, *_one_of(CLASS_NAMES)]  # one of the 27 suited tiles
FaceClass = Annotated[str, *_one_of(CLASSIFIER_CLASSES)]  # a face the classifier names, "none" included
MAX_DETECTIONS = 300
MAX_ALTERNATIVES = 4
TILES_TEXT = Field(
    max_length=80,
    description="tiles as digits then their suit: m 万, p 筒, s 条 (e.g. 123345m66999p, or 123万...)",
)


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- errors


class ErrorDetail(BaseModel):
    loc: list[str]
    msg: str
    type: str


class ErrorBody(BaseModel):
    code: str = Field(description="machine-readable reason, see api/errors.py")
    message: str
    details: list[ErrorDetail] | None = None


class ErrorResponse(BaseModel):
    error: ErrorBody


# ---- hands and contexts


class MeldIn(_In):
    type: MeldKind = Field(
        description="pong, kong_exposed (直杠), kong_added (加杠) or kong_concealed (暗杠)"
    )
    tile: str = Field(max_length=8, description="the tile of the meld, e.g. 2p")


class HandIn(_In):
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


class WaitingHandIn(_In):
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


class _Context(_In):
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


class ScoreRequest(_In):
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


class WaitsRequest(_In):
    hand: WaitingHandIn | TypedHandText
    context: ContextIn = Field(default_factory=ContextIn)
    preset: str = Field(default=DEFAULT_PRESET, max_length=64, json_schema_extra=PRESET_ENUM)

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"hand": {"concealed": "12334567m66999p"}, "preset": DEFAULT_PRESET}],
        },
    )


# ---- scores


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


# ---- settlement


class SettleRequest(_In):
    round: dict[str, Any] = Field(
        description="players, dealer, void_suits and events (the format: scoring/settlement/__init__.py)",
        json_schema_extra={
            "example": {
                "events": [
                    {"type": "win", "player": "A", "self_drawn": True, "fan": 3},
                    {"type": "win", "player": "B", "discarder": "C", "fan": 0},
                    {"type": "win", "player": "C", "self_drawn": True, "fan": 1},
                    {"type": "end", "reason": "three_won"},
                ]
            }
        },
    )
    preset: str = Field(default=DEFAULT_PRESET, max_length=64, json_schema_extra=PRESET_ENUM)
    base: int = Field(default=1, ge=1, le=1_000_000, description="the base stake (底)")


class PaymentOut(BaseModel):
    payer: int = Field(description="seat, indexes players")
    payee: int
    amount: int
    reason: str
    kind: str
    event: int | None = Field(description="the event that caused the payment")


class LedgerOut(BaseModel):
    """``Ledger.to_json()``: what ``smj settle --json`` prints."""

    preset: str
    base: int
    players: list[str]
    finished: bool
    next_dealer: int | None
    payments: list[PaymentOut]
    totals: list[int] = Field(description="per seat; they sum to zero")
    notes: list[str]


# ---- presets and tiles


class FanValueOut(BaseModel):
    key: str
    name_zh: str
    name_en: str
    fan: int
    kind: str
    limit: bool
    derived: bool | None = None


class PresetOut(BaseModel):
    """``Rules.to_json()``: the preset's knobs."""

    name: str
    description: str
    numbering: str
    stacking: str
    cap: int | None
    min_fan: int = Field(description="起胡: the fewest fan a win must score (0: any winning shape)")
    fans: list[FanValueOut]
    limit_fans: list[str]
    absorbed_roots: dict[str, int]
    rootless: list[str]
    settlement: dict[str, Any]


class PresetsOut(BaseModel):
    default: str
    presets: list[PresetOut]


class ConditionOut(BaseModel):
    """A row of ``scoring.conditions.WIN_CONDITIONS``."""

    key: str = Field(description="the context field (and the CLI flag --KEY with - for _)")
    name_zh: str
    name_en: str
    help: str
    implies: list[str] = Field(description="set along with it")
    requires: list[str] = Field(description="must be set with it, or the context is refused")
    excludes: list[str] = Field(description="never set together with it")
    brings: list[str] = Field(description="what a context with it holds too: implied and required")
    clears: list[str] = Field(description="what a context with it (and all it brings) cannot hold")


class ConditionsOut(BaseModel):
    conditions: list[ConditionOut]
    win_event_flags: list[str] = Field(
        description="the conditions a win of a round (POST /api/v1/tables/.../events) carries as flags"
    )


class TileOut(BaseModel):
    class_id: int
    name: str = Field(description="detector class name (m1..s9, back, honour)")
    tile: str | None = Field(description="tile notation (1m...), null for back and honour")
    name_zh: str


class TilesOut(BaseModel):
    tiles: list[TileOut]


# ---- detections and groupings


class AlternativeOut(BaseModel):
    tile: str = Field(description="a suited tile (m1..s9)")
    confidence: float


class DetectionOut(BaseModel):
    tile: str = Field(description="detector class name")
    confidence: float
    box: list[float] = Field(description="x1, y1, x2, y2 in pixels of the upright photo")
    alternatives: list[AlternativeOut] = Field(
        default=[], description="the classifier's next readings of this tile, likeliest first"
    )


class AlternativeIn(_In):
    tile: SuitedClass
    confidence: float = Field(ge=0, le=1)


class DetectionIn(_In):
    tile: DetectorClass
    box: list[FiniteFloat] = Field(min_length=4, max_length=4, description="x1, y1, x2, y2 in pixels")
    confidence: float = Field(default=1.0, ge=0, le=1)
    alternatives: list[AlternativeIn] = Field(
        default=[],
        max_length=MAX_ALTERNATIVES,
        description="as recognize answered them; the grouper may re-read the tile as one of them "
        "(leave them out for a tile the user corrected)",
    )

    @model_validator(mode="after")
    def _box_has_size(self) -> DetectionIn:
        x1, y1, x2, y2 = self.box
        if x2 - x1 < 1 or y2 - y1 < 1:
            raise ValueError("box: expected x1 < x2 and y1 < y2, at least one pixel apart")
        return self


class GroupRequest(_In):
    width: int = Field(ge=1, le=100_000, description="of the upright photo, as recognize answered")
    height: int = Field(ge=1, le=100_000)
    detections: list[DetectionIn] = Field(max_length=MAX_DETECTIONS)
    preset: str = Field(
        default=DEFAULT_PRESET, max_length=64, description="the rules a winning reading is judged under"
    )
    context: ContextIn = Field(
        default_factory=ContextIn,
        description="how it was won, as /score-photo takes it: a reading is judged so",
    )

    @model_validator(mode="after")
    def _boxes_in_photo(self) -> GroupRequest:
        for index, detection in enumerate(self.detections):
            x1, y1, x2, y2 = detection.box
            if x1 < 0 or y1 < 0 or x2 > self.width or y2 > self.height:
                raise ValueError(f"detections[{index}].box lies outside the {self.width}x{self.height} photo")
        return self


class HandOut(BaseModel):
    concealed: str
    win_tile: str | None
    melds: list[dict[str, str]]


class GroupOut(BaseModel):
    role: Literal["hand", "meld", "ignored"]
    kind: str | None = Field(description="for a meld: pong, kong_exposed, kong_added or kong_concealed")
    indices: list[int] = Field(description="into detections")


class WarningOut(BaseModel):
    code: str
    message: str
    tiles: list[str]
    indices: list[int] = Field(description="the detections concerned, least confident first")


class GroupingOut(BaseModel):
    hand: HandOut | None = Field(description="null when no Sichuan tile was found")
    groups: list[GroupOut]
    win_index: int | None = Field(description="the detection read as the winning tile")
    win_apart: bool = Field(description="whether the winning tile was set apart in the photo")
    warnings: list[WarningOut]


class GroupedOut(GroupingOut):
    detections: list[DetectionOut] = Field(
        description="as grouped: a tile re-read as one of its alternatives carries its new name"
    )


class RecognizeOut(GroupedOut):
    width: int = Field(description="of the upright photo (EXIF orientation applied); boxes are in its pixels")
    height: int


class ScorePhotoOut(RecognizeOut):
    score: ScoreOut | None = Field(description="null when no hand was read; valid=false when it is not a win")
    waits: WaitsOut | None = Field(
        description="what the hand read waits on (听牌) when it is one tile short of a win; null otherwise"
    )


# ---- health and examples


class HealthOut(BaseModel):
    status: Literal["ok"]
    model_loaded: bool
    weights: str
    model_error: str | None


class ExampleOut(BaseModel):
    saved: bool
    id: str
    image: str = Field(description="relative to the examples folder (SMJ_DATASET_DIR)")
    labels: str
    hands: str
    boxes: int


# ---- the sets on the table


class SetOut(BaseModel):
    name: str
    source: str = Field(description="what it was taught from")
    examples: int
    faces: int = Field(description="distinct faces with examples (27 suited, back, honour, none)")
    created_at: str
    updated_at: str


class SetCorrectedOut(SetOut):
    example: int = Field(description="the id the corrected tile is stored under (to replace or remove it)")


class SetsOut(BaseModel):
    sets: list[SetOut]


class SetExampleOut(BaseModel):
    id: int
    face: FaceClass
    origin: Literal["layout", "row", "correction"]
    crop: str = Field(description="the tile as the reader sees it: a PNG data URL")


class SetDetailOut(SetOut):
    tiles: list[SetExampleOut]


class TaughtTileOut(BaseModel):
    face: str
    classifier_alone: str = Field(description="what the classifier reads it as without the set")


class SetTaughtOut(SetDetailOut):
    turned: bool = Field(description="the photo was taken from across the table (its rows read turned)")
    taught: list[TaughtTileOut] = Field(description="the tiles of the photo, in the order stored")


class ExampleFaceIn(_In):
    face: FaceClass = Field(description="the face this example shows")


class SetCorrectionIn(_In):
    box: tuple[FiniteFloat, FiniteFloat, FiniteFloat, FiniteFloat] = Field(
        description="x1, y1, x2, y2 in pixels of the upright photo"
    )
    face: SuitedClass = Field(description="the face the player says the tile shows")
    replaces: int | None = Field(
        default=None,
        ge=1,
        le=2**31 - 1,
        description="the id of a correction this one takes back (the player named the same tile again)",
    )


# ---- tables at the table


class TableIn(_In):
    players: list[Annotated[str, Field(min_length=1, max_length=24)]] = Field(
        min_length=4, max_length=4, description="the four seats' names, in turn order (1-24 characters each)"
    )
    preset: str = Field(default=DEFAULT_PRESET, max_length=64, json_schema_extra=PRESET_ENUM)
    base: int = Field(default=1, ge=1, le=1_000_000, description="the base stake (底)")
    set: str | None = Field(default=None, max_length=64, description="the set its photos are read with")


class JoinIn(_In):
    code: str = Field(min_length=1, max_length=16, description="the table's join code")


class RoundIn(_In):
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


class KongEventIn(_In):
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


class WinnerIn(_In):
    player: Player
    hand: TypedOrHand | None = None
    fan: int | None = Field(default=None, description="the fan, where the hand is not given")


class _WinEvent(_In):
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


class EndEventIn(_In):
    """The round's end: three have won, or the wall ran out (each player still in: ready with the fan, not
    ready, a 花猪, or their tiles)."""

    type: Literal["end"]
    reason: Literal["three_won", "wall_exhausted"]
    hands: dict[str, str | dict[str, Any]] = Field(default_factory=dict, description="by name or seat")
    comment: Comment | None = None


TableEventIn = Annotated[KongEventIn | WinEventIn | EndEventIn, Field(discriminator="type")]


class EventIn(_In):
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


class VersionIn(_In):
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
