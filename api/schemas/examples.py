"""The service's health (``/healthz``) and a saved example (``/examples``)."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    Field,
)


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
