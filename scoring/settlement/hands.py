"""From the hands in a round to the numbers settlement pays on: a winner's fan, a final standing.

A winner's hand is scored by ``scoring.score`` in the context its ``Win`` describes; a final hand at 流局
gives 花猪 (three suits) and the 查叫 fan (``scoring.waits.cha_jiao_fan``: largest or smallest wait,
capped). Hands given as fans or declared standings are taken as they are, under the preset's caps.
"""

from __future__ import annotations

from dataclasses import dataclass

from scoring.hand import WinContext
from scoring.result import Score
from scoring.rules import Numbering, Rules
from scoring.score import score
from scoring.settlement.events import WIN_FLAGS, FinalHand, FinalStatus, Round, Seat, Win, Winner
from scoring.tiles import suits_present
from scoring.waits import cha_jiao_fan

__all__ = ["Standing", "WinFan", "fan_text", "final_standing", "winner_context", "winner_fan"]


@dataclass(frozen=True, slots=True)
class WinFan:
    """The fan a win is paid at (after the cap) and the names of its fans, for the ledger."""

    fan: int
    label: str = ""


@dataclass(frozen=True, slots=True)
class Standing:
    """A player still in at 流局: a 花猪 (holds three suits), or ready at ``ready_fan`` (None: not ready)."""

    hua_zhu: bool
    ready_fan: int | None

    @property
    def ready(self) -> bool:
        return self.ready_fan is not None


def winner_context(round: Round, win: Win, seat: Seat, rules: Rules) -> WinContext:
    """The ``WinContext`` a winner's hand is scored in: the dealer is the round's, or a 天胡 winner (天胡
    implies the dealer) when the round names none."""
    dealer = round.dealer is not None and seat == round.dealer
    return WinContext(
        self_drawn=win.self_drawn,
        dealer=dealer,
        void_suit=round.void_suits.get(seat) if rules.settlement.ding_que else None,
        **{flag: getattr(win, flag) for flag in WIN_FLAGS},
    )


def winner_fan(round: Round, win: Win, winner: Winner, rules: Rules) -> WinFan | Score:
    """The fan ``winner`` is paid at, or the invalid ``Score`` saying why the hand is not a win."""
    if winner.hand is None:
        assert winner.fan is not None
        return WinFan(rules.capped(winner.fan))
    result = score(winner.hand, winner_context(round, win, winner.player, rules), rules)
    if not result.valid or result.total_fan is None:
        return result
    return WinFan(result.total_fan, _label(result))


def _label(result: Score) -> str:
    """``清对+根``: the named combination, then the fans that are not part of it."""
    combination = result.combination
    names = [combination.name_zh] if combination is not None else []
    for item in result.fans:
        if combination is not None and (item.key == combination.key or item.key in combination.keys):
            continue
        names.append(item.name_zh + (f"x{item.count}" if item.count > 1 else ""))
    return "+".join(names)


def fan_text(fan: int, rules: Rules, label: str = "") -> str:
    """``清一色 2 fan`` (``3 points`` under a points preset)."""
    unit = "points" if rules.numbering is Numbering.POINTS else "fan"
    return f"{label} {fan} {unit}" if label else f"{fan} {unit}"


def final_standing(final: FinalHand | FinalStatus, void_suit: str | None, rules: Rules) -> Standing:
    """花猪 and the 查叫 fan of a player still in at 流局.

    Raises ``InvalidHandError`` for final tiles that are not 13 + one per kong, or hold a fifth copy.
    """
    if isinstance(final, FinalStatus):
        fan = final.ready_fan
        if fan is not None:
            fan = rules.capped(fan)
            cap = rules.settlement.cha_jiao_cap
            fan = fan if cap is None else min(fan, cap)
        return Standing(final.hua_zhu, fan)
    context = WinContext(void_suit=void_suit if rules.settlement.ding_que else None)
    fan = cha_jiao_fan(final.concealed, final.melds, context, rules)  # raises for a malformed hand
    return Standing(len(suits_present(final.all_tiles)) == 3, fan)
