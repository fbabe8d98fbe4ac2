"""The sets on the table (``/sets``)."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    Field,
    FiniteFloat,
)

from api.schemas.common import FaceClass, In, SuitedClass


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


class ExampleFaceIn(In):
    face: FaceClass = Field(description="the face this example shows")


class SetCorrectionIn(In):
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
