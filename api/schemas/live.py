"""Live reading: a session opened (``LiveIn`` -> ``LiveOut``), and each frame's answer (``LiveFrameOut``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from api.schemas.common import PRESET_ENUM, In
from api.schemas.hands import ContextIn, HandOut, ScoreOut
from api.schemas.photos import DetectionOut
from scoring.presets import DEFAULT_PRESET
from usecases.live import HOLD


class LiveIn(In):
    """How the hand is won and scored (as ``/score`` takes them), the set on the table, and how many
    frames the reading must hold before it is locked."""

    context: ContextIn = Field(default_factory=ContextIn)
    preset: str = Field(default=DEFAULT_PRESET, max_length=64, json_schema_extra=PRESET_ENUM)
    set: str | None = Field(default=None, max_length=64, description="a stored set to read the faces with")
    hold: int = Field(
        default=HOLD, ge=1, le=60, description="frames the hand read must stay the same to lock"
    )


class LiveOut(BaseModel):
    session: str = Field(description="send frames to /api/v1/live/{session}/frames")
    hold: int
    max_side: int = Field(description="a frame's longest side may be at most this many pixels")
    max_bytes: int
    interval_s: float = Field(description="the least time between two frames of a phone")
    idle_s: float = Field(description="the session ends after this long with no frame")


class AdviceOut(BaseModel):
    code: str = Field(description="no_hand, hold_still, come_closer, cut_at_edge, too_dark")
    message: str


class SteadyOut(BaseModel):
    held: int = Field(description="frames the hand read from the voted tiles has stayed the same")
    hold: int = Field(description="frames it must stay the same to be locked")
    tiles: int = Field(description="tiles in the voted reading")
    unsure: list[str] = Field(description="the voted reading's tiles whose faces split their votes")


class WhyOut(AdviceOut):
    code: str = Field(description="no_hand, changing, win_tile_not_apart, unsure_tile, not_a_win")


class LiveFrameOut(BaseModel):
    frame: int = Field(description="frames this session has read")
    width: int
    height: int
    detections: list[DetectionOut] = Field(description="this frame's tiles, boxes in its pixels")
    guidance: list[AdviceOut] = Field(description="what would make a better frame, most pressing first")
    next_side: int = Field(description="the longest side to send the next frame at, for its tiles' size")
    steady: SteadyOut
    locked: bool = Field(description="the hand is locked: it held and is a winning hand")
    hand: HandOut | None = Field(description="the locked hand (what /score and a table's win take)")
    score: ScoreOut | None = Field(description="the locked hand's score")
    why: WhyOut | None = Field(description="why nothing is locked yet; null once locked")
