"""The presets, win conditions and tiles the API lists (``/presets``, ``/conditions``, ``/tiles``)."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    Field,
)


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
