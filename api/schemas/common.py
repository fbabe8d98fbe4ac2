"""The schemas every resource shares: the class names a field takes, the base of every input (unknown fields
refused), and the one error shape."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    WithJsonSchema,
)

from scoring.presets import PRESETS
from scoring.tiles import CLASS_NAMES
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


class In(BaseModel):
    """The base of every input (``XIn``): an unknown field is refused."""

    model_config = ConfigDict(extra="forbid")


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
