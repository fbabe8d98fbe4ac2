"""Detections and their grouping: what ``/recognize``, ``/score-photo`` and ``/group`` answer, and
``/group``'s input."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    Field,
    FiniteFloat,
    model_validator,
)

from api.schemas.common import MAX_ALTERNATIVES, MAX_DETECTIONS, DetectorClass, In, SuitedClass
from api.schemas.hands import ContextIn, HandOut, ScoreOut, WaitsOut
from scoring.presets import DEFAULT_PRESET


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


class AlternativeIn(In):
    tile: SuitedClass
    confidence: float = Field(ge=0, le=1)


class DetectionIn(In):
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


class GroupIn(In):
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
    def _boxes_in_photo(self) -> GroupIn:
        for index, detection in enumerate(self.detections):
            x1, y1, x2, y2 = detection.box
            if x1 < 0 or y1 < 0 or x2 > self.width or y2 > self.height:
                raise ValueError(f"detections[{index}].box lies outside the {self.width}x{self.height} photo")
        return self


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
