"""The scoring result values: ``FanItem`` and ``Score``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from scoring.combinations import Combination
from scoring.errors import ScoreError


@dataclass(frozen=True, slots=True)
class FanItem:
    """One line of the breakdown. ``fan`` is what the line contributes (value x ``count``)."""

    key: str
    name_zh: str
    name_en: str
    fan: int
    count: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name_zh": self.name_zh,
            "name_en": self.name_en,
            "fan": self.fan,
            "count": self.count,
        }


class Payers(StrEnum):
    """Who pays a win: the discarder (点炮), the konger whose added kong was robbed (抢杠, as a discarder),
    or each player still in (自摸)."""

    DISCARDER = "discarder"
    ROBBED_KONGER = "robbed_konger"
    EACH_PLAYER_STILL_IN = "each_player_still_in"


@dataclass(frozen=True, slots=True)
class Score:
    """The score of one hand under one preset.

    ``raw_fan`` is the sum of the fan lines, ``total_fan`` the same after the preset's cap (for
    ``points_linear`` both are points). ``multiplier`` is what ``total_fan`` is worth in base units:
    ``2**fan`` (0-based presets), ``2**(fan-1)`` (1-based presets) or the points themselves
    (``points_linear``). ``payment`` is what each of the ``payers`` pays, in base units: the multiplier,
    and on a self-drawn win the preset's 自摸 bonus (``Rules.win_payment``). A hand that is not a legal
    win has ``valid=False``, an ``error``, no fans and ``None`` for the numbers.
    """

    valid: bool
    error: ScoreError | None
    preset: str
    fans: tuple[FanItem, ...] = ()
    combination: Combination | None = None
    raw_fan: int | None = None
    total_fan: int | None = None
    multiplier: int | None = None
    decomposition: tuple[str, ...] = ()
    payment: int | None = None
    payers: Payers | None = None

    @classmethod
    def invalid(cls, preset: str, error: ScoreError) -> Score:
        return cls(valid=False, error=error, preset=preset)

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "error": self.error.to_json() if self.error is not None else None,
            "preset": self.preset,
            "fans": [item.to_json() for item in self.fans],
            "combination": self.combination.to_json() if self.combination is not None else None,
            "raw_fan": self.raw_fan,
            "total_fan": self.total_fan,
            "multiplier": self.multiplier,
            "decomposition": list(self.decomposition),
            "payment": self.payment,
            "payers": self.payers.value if self.payers is not None else None,
        }
