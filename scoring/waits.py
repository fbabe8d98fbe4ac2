"""Which tiles complete a hand one tile short (下叫 / 听牌), and what each win would score.

The hand is 13 tiles plus one per kong (concealed tiles + melds). Every tile that makes it a legal win is
a wait, as long as a copy is left (at most 4 across hand and melds), it keeps the hand to two suits
(缺一门) and is not of the declared void suit. Waits are scored as a win on a discard unless the context
says otherwise (pass ``WinContext(self_drawn=True)`` for 自摸).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scoring.decompose import winning_tiles
from scoring.errors import ErrorCode, InvalidHandError, ScoreError
from scoring.hand import Hand, Meld, MeldKind, WinContext
from scoring.presets import CHENGDU
from scoring.result import Score
from scoring.rules import ChaJiao, Rules
from scoring.score import score_unchecked
from scoring.tiles import SUITS, Tile, tile_name, tile_name_zh
from scoring.validate import ContextFacts, check_context, check_tiles

_DISCARD_WIN = WinContext()


@dataclass(frozen=True, slots=True)
class Wait:
    """A tile the hand waits on and the best score of winning on it."""

    tile: Tile
    score: Score

    def to_json(self) -> dict[str, Any]:
        return {
            "tile": tile_name(self.tile),
            "tile_zh": tile_name_zh(self.tile),
            "score": self.score.to_json(),
        }


def waits(
    concealed: Sequence[Tile],
    melds: Sequence[Meld] = (),
    context: WinContext = _DISCARD_WIN,
    rules: Rules = CHENGDU,
) -> tuple[Wait, ...]:
    """Every tile that completes the hand, in tile order, with its best score; ``()`` when not ready.

    A hand holding three suits or its void suit is simply not ready. A hand with the wrong number of
    tiles, a fifth copy, or a contradictory context raises ``InvalidHandError``.
    """
    waiting = Hand(tuple(concealed), tuple(melds))  # raises for a non-tile
    counts = _counts(waiting)
    if _tile_problem(waiting, counts, context) is not None:
        return ()
    error = check_context(ContextFacts(context, waiting.melds))
    if error is not None:
        raise InvalidHandError(error)
    concealed_counts = [0] * 27
    for tile in waiting.concealed:
        concealed_counts[tile] += 1
    found = []
    candidates = _candidates(waiting.concealed, counts, context)
    for tile in winning_tiles(concealed_counts, len(waiting.melds), candidates):
        counts[tile] += 1
        won = Hand((*waiting.concealed, tile), waiting.melds, tile)
        if check_context(ContextFacts(context, waiting.melds, counts[tile])) is None:
            result = score_unchecked(won, tuple(counts), context, rules)
            if result.valid:  # a shape that scores fewer fan than the rules' 起胡 wins nothing
                found.append(Wait(tile, result))
        counts[tile] -= 1
    return tuple(found)


def never_wins(
    concealed: Sequence[Tile], melds: Sequence[Meld] = (), context: WinContext = _DISCARD_WIN
) -> ScoreError | None:
    """Why the hand one tile short wins on no tile at all: it holds three suits (花猪) or its void suit;
    None when some tile might complete it. A hand with the wrong number of tiles or a fifth copy raises
    ``InvalidHandError``."""
    waiting = Hand(tuple(concealed), tuple(melds))
    return _tile_problem(waiting, _counts(waiting), context)


def _tile_problem(waiting: Hand, counts: list[int], context: WinContext) -> ScoreError | None:
    error = check_tiles(waiting.concealed, waiting.melds, counts, context, waiting=True)
    if error is not None and error.code in (ErrorCode.WRONG_TILE_COUNT, ErrorCode.TOO_MANY_COPIES):
        raise InvalidHandError(error)
    return error


def _counts(hand: Hand) -> list[int]:
    counts = [0] * 27
    for tile in hand.all_tiles:
        counts[tile] += 1
    return counts


def _candidates(concealed: tuple[Tile, ...], counts: list[int], context: WinContext) -> list[Tile]:
    """Tiles that could complete the hand: a copy left, within two ranks of a concealed tile of its suit (a
    winning tile always joins a pair, triplet or run with concealed tiles), not of the void suit. 缺一门
    holds because such a neighbour is of a suit the hand already holds."""
    near: set[Tile] = set()
    for tile in set(concealed):
        rank = tile % 9
        near.update(range(tile - min(rank, 2), tile + min(8 - rank, 2) + 1))
    return sorted(tile for tile in near if counts[tile] < 4 and SUITS[tile // 9] != context.void_suit)


def _key(wait: Wait) -> tuple[int, int]:
    return (wait.score.total_fan or 0, wait.score.raw_fan or 0)


def largest_wait(found: Sequence[Wait]) -> Wait | None:
    """The wait with the most fan (capped total, then raw); ``None`` for no waits. Used by 查大叫."""
    return max(found, key=_key, default=None)


def waits_to_json(found: Sequence[Wait], rules: Rules) -> dict[str, Any]:
    """``{"preset", "ready", "largest_fan", "waits": [Wait.to_json()]}``: as ``smj waits --json`` and the API
    answer the waits of a hand."""
    best = largest_wait(found)
    return {
        "preset": rules.name,
        "ready": bool(found),
        "largest_fan": best.score.total_fan if best is not None else None,
        "waits": [wait.to_json() for wait in found],
    }


def smallest_wait(found: Sequence[Wait]) -> Wait | None:
    """The wait with the least fan; ``None`` for no waits. Used by 查小叫."""
    return min(found, key=_key, default=None)


def cha_jiao_fan(
    concealed: Sequence[Tile],
    melds: Sequence[Meld] = (),
    context: WinContext = _DISCARD_WIN,
    rules: Rules = CHENGDU,
) -> int | None:
    """The fan a ready hand is paid at when the wall runs out (查叫), ``None`` if it is not ready.

    The largest (查大叫) or smallest (查小叫) wait per ``rules.settlement.cha_jiao``, capped at
    ``rules.settlement.cha_jiao_cap``; without the 根 of the declared kongs when
    ``rules.settlement.cha_jiao_kong_roots`` is off.
    """
    found = waits(concealed, melds, context, rules)
    pick = largest_wait if rules.settlement.cha_jiao is ChaJiao.LARGEST else smallest_wait
    wait = pick(found)
    if wait is None or wait.score.total_fan is None:
        return None
    fan = wait.score.total_fan
    if not rules.settlement.cha_jiao_kong_roots and wait.score.raw_fan is not None:
        kongs = sum(1 for meld in melds if meld.kind is not MeldKind.PONG)
        fan = rules.capped(max(wait.score.raw_fan - kongs * (rules.fan_value("gen") or 0), 0))
    cap = rules.settlement.cha_jiao_cap
    return fan if cap is None else min(fan, cap)
