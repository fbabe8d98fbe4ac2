"""Scoring a hand given as text or JSON, for either face.

* A hand that is simply not a win (three suits, a tile of the void suit, not 4 sets + a pair) is scored:
  ``valid: false`` with the reason, as ``smj score --json`` prints it.
* An impossible hand (``IMPOSSIBLE``: a wrong tile count, a fifth copy, a winning tile not in the hand, a
  contradictory win context) is no hand: ``InvalidHandError`` (the API answers it 422 with the reason's code).
"""

from __future__ import annotations

from typing import Any

from scoring import Hand, Rules, WinContext, score, waits
from scoring.errors import IMPOSSIBLE, InvalidHandError
from scoring.hand import Meld
from scoring.tiles import Tile
from scoring.waits import waits_to_json


def score_json(hand: Hand, context: WinContext, rules: Rules) -> dict[str, Any]:
    """The score as ``smj score --json`` prints it; an impossible hand raises ``InvalidHandError``."""
    result = score(hand, context, rules)
    if result.error is not None and result.error.code in IMPOSSIBLE:
        raise InvalidHandError(result.error)
    return result.to_json()


def waits_json(
    concealed: tuple[Tile, ...], melds: tuple[Meld, ...], context: WinContext, rules: Rules
) -> dict[str, Any]:
    """As ``smj waits --json``; a malformed hand raises ``InvalidHandError``."""
    return waits_to_json(waits(concealed, melds, context, rules), rules)
