"""Sichuan (血战到底) mahjong scoring core. Standard library only.

    >>> from scoring import Hand, WinContext, score
    >>> result = score(Hand.parse("123345m66999p", kongs=("2p",), win="6p"), WinContext())
    >>> result.total_fan, result.multiplier
    (1, 2)

Public surface: ``score`` / ``Score`` (scoring one hand), ``is_win`` (whether a hand is a legal win),
``waits`` / ``Wait`` (the tiles a ready hand waits on), ``PRESETS`` / ``get_preset`` / ``Rules`` (rule
variants), ``Hand`` / ``Meld`` / ``MeldKind`` / ``WinContext`` (the inputs), ``ErrorCode`` / ``ScoreError``
(why a hand is not a win) and the exceptions ``TileParseError``, ``UnknownPresetError``,
``InvalidHandError``.
"""

from scoring.errors import ErrorCode, InvalidHandError, ScoreError, UnknownPresetError
from scoring.hand import Hand, Meld, MeldKind, WinContext
from scoring.presets import CHENGDU, PRESETS, get_preset
from scoring.result import FanItem, Payers, Score
from scoring.rules import Rules
from scoring.score import is_win, score
from scoring.tiles import TileParseError
from scoring.waits import Wait, cha_jiao_fan, largest_wait, smallest_wait, waits

__all__ = [
    "CHENGDU",
    "PRESETS",
    "ErrorCode",
    "FanItem",
    "Hand",
    "InvalidHandError",
    "Meld",
    "MeldKind",
    "Payers",
    "Rules",
    "Score",
    "ScoreError",
    "TileParseError",
    "UnknownPresetError",
    "Wait",
    "WinContext",
    "cha_jiao_fan",
    "get_preset",
    "is_win",
    "largest_wait",
    "score",
    "smallest_wait",
    "waits",
]
