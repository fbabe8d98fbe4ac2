"""What a settled round says: every payment, in order, and each player's total.

Amounts are whole base units times the ``base`` settled with (底, the table's stake). Every payment moves
money from one player to another, so the totals always sum to zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from scoring.settlement.events import Seat

__all__ = ["Ledger", "Payment", "PaymentKind"]


class PaymentKind(StrEnum):
    KONG = "kong"  # 刮风下雨: a kong's payment, made at once
    WIN = "win"  # 点炮, 抢杠, 杠上炮, 点杠花: one payer per winner
    SELF_DRAW = "self_draw"  # 自摸, 杠上花: every player still in pays
    KONG_TRANSFER = "kong_transfer"  # 杠上炮 (transfer variant): the kong's income handed to the winner
    KONG_REFUND = "kong_refund"  # 杠上炮 (refund), or 退税 at 流局: kong income returned to its payer
    HUA_ZHU = "hua_zhu"  # 查花猪
    CHA_JIAO = "cha_jiao"  # 查大叫 / 查小叫


@dataclass(frozen=True, slots=True)
class Payment:
    """``payer`` pays ``payee`` ``amount``; ``event`` is the index of the round event that caused it."""

    payer: Seat
    payee: Seat
    amount: int
    reason: str
    kind: PaymentKind = PaymentKind.WIN
    event: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "payer": self.payer,
            "payee": self.payee,
            "amount": self.amount,
            "reason": self.reason,
            "kind": self.kind.value,
            "event": self.event,
        }


@dataclass(frozen=True)
class Ledger:
    """The payments of one round under one preset and base.

    ``finished``: the round had its end event (otherwise the ledger is the running tally of a round still
    in play). ``next_dealer``: the first winner, or the discarder when the first win was 一炮多响; the
    dealer again (连庄) when nobody won. ``notes`` explain events that moved no money.
    """

    players: tuple[str, ...]
    payments: tuple[Payment, ...]
    preset: str
    base: int = 1
    finished: bool = True
    next_dealer: Seat | None = None
    notes: tuple[str, ...] = ()
    won: tuple[Seat, ...] = ()  # the seats that have won so far, ascending (the payments' JSON shows them)

    @property
    def totals(self) -> tuple[int, ...]:
        """Each seat's net result; they sum to zero."""
        totals = [0] * len(self.players)
        for payment in self.payments:
            totals[payment.payer] -= payment.amount
            totals[payment.payee] += payment.amount
        return tuple(totals)

    def total(self, seat: Seat) -> int:
        return self.totals[seat]

    def between(self, payer: Seat, payee: Seat) -> int:
        """How much ``payer`` paid ``payee`` in all (one direction only)."""
        return sum(p.amount for p in self.payments if p.payer == payer and p.payee == payee)

    def to_json(self) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "base": self.base,
            "players": list(self.players),
            "finished": self.finished,
            "next_dealer": self.next_dealer,
            "payments": [payment.to_json() for payment in self.payments],
            "totals": list(self.totals),
            "notes": list(self.notes),
        }
