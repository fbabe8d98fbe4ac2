"""A round to settle and its ledger (``/settle``)."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    Field,
)

from api.schemas.common import PRESET_ENUM, In
from scoring.presets import DEFAULT_PRESET


class SettleIn(In):
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
