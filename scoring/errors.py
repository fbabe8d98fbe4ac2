"""Why a hand could not be scored, and the exceptions the scoring core raises.

Outcomes are values, misuse raises:

* ``ScoreError(code, message)`` is a *value*: a hand that was read but is not a legal win
  (three suits, a fifth copy, a contradictory context, ...) gives a ``Score`` with ``valid=False`` and
  one of these, never an exception.
* Exceptions, all ``ValueError`` subclasses so a caller can catch them together:

  - ``scoring.tiles.TileParseError``: text or an int that is not a tile.
  - ``UnknownPresetError``: a rules preset name that does not exist (the message lists the valid ones).
  - ``InvalidHandError``: an API that cannot return a ``Score`` (``waits``) was given a hand that is
    malformed (wrong tile count, a fifth copy, a contradictory context); it carries the ``ScoreError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ErrorCode(StrEnum):
    """Machine-readable reason a hand is not a scorable win."""

    WRONG_TILE_COUNT = "wrong_tile_count"  # not 14 + one per kong (13 + one per kong for waits)
    TOO_MANY_COPIES = "too_many_copies"  # a fifth copy of a tile across hand and melds
    THREE_SUITS = "three_suits"  # 缺一门: a win holds at most two suits
    VOID_SUIT_PRESENT = "void_suit_present"  # 定缺: the declared void suit is in the hand
    WIN_TILE_NOT_IN_HAND = "win_tile_not_in_hand"  # the winning tile is not among the concealed tiles
    NOT_A_WINNING_SHAPE = "not_a_winning_shape"  # neither 4 sets + a pair nor 七对
    CONTRADICTORY_CONTEXT = "contradictory_context"  # e.g. 杠上花 without a kong, 抢杠胡 and 自摸
    TOO_FEW_FAN = "too_few_fan"  # 起胡: the hand scores fewer fan than the rules ask of a win


# Reasons that say the input cannot be a hand at all, as against a hand that is no win (three suits, the
# void suit held, no winning shape): the CLI exits 2 and the API answers 422 for a hand given as text.
IMPOSSIBLE = frozenset(
    {
        ErrorCode.WRONG_TILE_COUNT,
        ErrorCode.TOO_MANY_COPIES,
        ErrorCode.WIN_TILE_NOT_IN_HAND,
        ErrorCode.CONTRADICTORY_CONTEXT,
    }
)


@dataclass(frozen=True, slots=True)
class ScoreError:
    """A reason code and a human-readable message (English, naming the Chinese term)."""

    code: ErrorCode
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code.value, "message": self.message}


class SmjError(ValueError):
    """The root of every error a request is refused with, in every layer: ``code`` says which (machine-read;
    the API's status follows from it, ``api.errors.STATUS``), ``message`` says why (what a person is told),
    ``details`` holds more for a client (an event's index, the table as it is now) or None, and ``told`` is
    the message as a client is answered (the message, with where it was found for some)."""

    code: str = "invalid"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    @property
    def details(self) -> list[dict[str, object]] | None:
        return None

    @property
    def told(self) -> str:
        return self.message


class InvalidHandError(SmjError):
    """A malformed hand given where no ``Score`` can carry the reason (e.g. ``waits``): its reason's code."""

    def __init__(self, error: ScoreError) -> None:
        super().__init__(error.message, error.code.value)
        self.error = error

    def __str__(self) -> str:
        return f"{self.error.code.value}: {self.error.message}"


class UnknownPresetError(SmjError):
    """No rules preset has this name."""

    code = "unknown_preset"

    def __init__(self, name: str, valid: tuple[str, ...]) -> None:
        super().__init__(f"unknown rules preset {name!r}; valid presets: {', '.join(valid)}")
        self.name = name
        self.valid = valid
