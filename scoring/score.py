"""``score(hand, context, rules) -> Score``: the one entry point of the rules engine.

Validate, read the hand every possible way (``scoring.decompose``), find the fans of each reading
(``scoring.fans``), value them under the preset (``scoring.fan_lines``) and keep the best reading: the
highest capped total, then the highest raw total.
"""

from __future__ import annotations

from scoring.decompose import Decomposition, decompositions
from scoring.errors import ErrorCode, ScoreError
from scoring.fan_lines import FanLines, fan_lines
from scoring.fans import HandView, count_fans
from scoring.hand import Hand, WinContext
from scoring.presets import CHENGDU
from scoring.result import FanItem, Payers, Score
from scoring.rules import Rules
from scoring.tiles import tile_counts
from scoring.validate import validate

__all__ = ["FanItem", "Score", "is_win", "score", "score_unchecked"]

_DISCARD_WIN = WinContext()


def score(hand: Hand, context: WinContext = _DISCARD_WIN, rules: Rules = CHENGDU) -> Score:
    """Score ``hand`` won in ``context`` under ``rules``.

    A hand that is not a legal win is a ``Score`` with ``valid=False`` and an ``error`` (reason code and
    message); passing something that is not a ``Hand`` of tiles raises.
    """
    counts = tile_counts(hand.all_tiles)
    error = validate(hand, context, counts)
    if error is not None:
        return Score.invalid(rules.name, error)
    return score_unchecked(hand, tuple(counts), context, rules)


def is_win(hand: Hand, rules: Rules = CHENGDU, context: WinContext = _DISCARD_WIN) -> bool:
    """Whether ``hand`` won in ``context`` is a legal win under ``rules``: ``score(...).valid``, its fans
    valued only when the rules ask a win for a least number of them (``Rules.min_fan``).

    >>> from scoring.presets import CHENGDU
    >>> from dataclasses import replace
    >>> hand = Hand.parse("123456789m23455p", win="5p")
    >>> is_win(hand), is_win(hand, replace(CHENGDU, min_fan=1))  # 平胡: no fan
    (True, False)
    """
    counts = tile_counts(hand.all_tiles)
    if validate(hand, context, counts) is not None:
        return False
    if rules.min_fan:
        return score_unchecked(hand, tuple(counts), context, rules).valid
    return bool(decompositions(hand))


def score_unchecked(hand: Hand, counts: tuple[int, ...], context: WinContext, rules: Rules) -> Score:
    """Score a hand that already passed ``validate``; ``counts`` are its 27 counts, melds included."""
    readings = decompositions(hand)
    if not readings:
        return Score.invalid(
            rules.name,
            ScoreError(
                ErrorCode.NOT_A_WINNING_SHAPE,
                "the tiles form neither 4 sets + a pair (melds included) nor 七对 (seven pairs)",
            ),
        )
    result = best_score(readings, counts, hand, context, rules)
    if result.raw_fan is not None and result.raw_fan < rules.min_fan:
        return Score.invalid(
            rules.name,
            ScoreError(
                ErrorCode.TOO_FEW_FAN,
                f"the hand scores {result.raw_fan} fan; these rules need {rules.min_fan} to win (起胡)",
            ),
        )
    return result


def _payers(context: WinContext) -> Payers:
    if context.self_drawn:
        return Payers.EACH_PLAYER_STILL_IN
    return Payers.ROBBED_KONGER if context.qiang_gang else Payers.DISCARDER


def best_score(
    readings: tuple[Decomposition, ...],
    counts: tuple[int, ...],
    hand: Hand,
    context: WinContext,
    rules: Rules,
) -> Score:
    """The ``Score`` of the best of ``readings`` (already validated, non-empty)."""
    best: tuple[FanLines, Decomposition] | None = None
    for reading in readings:
        lines = fan_lines(count_fans(HandView(reading, counts, hand.melds, context, hand.win_tile)), rules)
        if best is None or (lines.total_fan, lines.raw_fan) > (best[0].total_fan, best[0].raw_fan):
            best = (lines, reading)
    assert best is not None
    lines, reading = best
    return Score(
        valid=True,
        error=None,
        preset=rules.name,
        fans=lines.fans,
        combination=lines.combination,
        raw_fan=lines.raw_fan,
        total_fan=lines.total_fan,
        multiplier=rules.multiplier(lines.total_fan),
        decomposition=reading.labels(),
        payment=rules.win_payment(lines.total_fan, context.self_drawn),
        payers=_payers(context),
    )
