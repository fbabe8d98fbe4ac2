"""``settle_round(round, rules, base) -> Ledger``: the money of a 血战到底 round (RULES.md, Settlement).

The round is validated first (``RoundError`` at the first problem), then replayed event by event. Amounts
are base units (the knobs of ``rules.settlement``) times ``base``; only players still in pay or are paid,
so a player who has won is untouched by later events (unless ``refund_to_won_players`` is on).

* Kong (刮风下雨), paid at once: 直杠 by the discarder (暴雨: the others still in pay too), 面下杠 and 暗杠
  by every other player still in. A kong robbed by 抢杠 is void.
* Win on a discard (点炮, 抢杠, 杠上炮; 一炮多响 pays each winner): the discarder pays ``2**fan`` base
  (``rules.multiplier``). 杠上炮: the konger's income for that kong is refunded to its payers, or
  transferred to the winner (the first in turn after the discarder when several won).
* Self-drawn (自摸, 杠上花): every other player still in pays, plus 自摸加底 (one base) or 加番 (one more
  fan, within the cap). 点杠花 variant: 杠上花 after a 直杠 is paid by the kong's discarder alone, as 点炮.
* Wall exhausted (流局), among the players still in: 查花猪 (each 花猪 pays every non-花猪 still in, or
  every other seat under ``hua_zhu_pays_everyone``), 查大叫 / 查小叫 (each not-ready non-花猪 pays every
  ready player at that player's wait), then 退税 (not-ready players and 花猪 return the kong income they
  still hold).
"""

from __future__ import annotations

from scoring.presets import CHENGDU
from scoring.rules import ChaJiao, KongAfterPao, Rules, SelfDrawBonus
from scoring.settlement.events import SEATS, End, EndReason, Kong, KongKind, Round, Seat, Win
from scoring.settlement.hands import WinFan, fan_text
from scoring.settlement.ledger import Ledger, Payment, PaymentKind
from scoring.settlement.validate import (
    MAX_AMOUNT,
    CheckedRound,
    RoundError,
    RoundErrorCode,
    validate_round,
)
from scoring.tiles import tile_name

__all__ = ["settle_round"]


def settle_round(round: Round, rules: Rules = CHENGDU, base: int = 1) -> Ledger:
    """Every payment of ``round`` under ``rules``, in base units times ``base``.

    Raises ``RoundError`` for a round that is malformed or impossible (a given fan above ``MAX_FAN``
    is ``fan_too_large``; a payment or total above ``MAX_AMOUNT``, ``amount_too_large``), ``ValueError``
    for a ``base`` that is not a whole number >= 1.
    """
    if not isinstance(round, Round):
        raise TypeError(f"settle_round takes a Round (see scoring.settlement.parse_round), got {type(round)}")
    if type(base) is not int or base < 1:
        raise ValueError(f"base must be a whole number >= 1, got {base!r}")
    table = _Table(validate_round(round, rules), rules, base)
    for index, event in enumerate(round.events):
        if isinstance(event, Kong):
            table.kong(index, event)
        elif isinstance(event, Win):
            table.win(index, event)
        else:
            table.end(index, event)
    return table.ledger()


class _Table:
    """The money so far: who is still in, the payments, and the kong income each konger still holds."""

    def __init__(self, checked: CheckedRound, rules: Rules, base: int) -> None:
        self.checked = checked
        self.round = checked.round
        self.rules = rules
        self.knobs = rules.settlement
        self.base = base
        self.out: set[Seat] = set()
        self.payments: list[Payment] = []
        self.income: dict[int, list[Payment]] = {}  # kong event index -> payments the konger still holds
        self.notes: list[str] = []
        self.next_dealer: Seat | None = None

    def still_in(self, *besides: Seat | None) -> list[Seat]:
        return [seat for seat in SEATS if seat not in self.out and seat not in besides]

    def pay(self, payer: Seat, payee: Seat, amount: int, reason: str, kind: PaymentKind, event: int) -> None:
        if amount > MAX_AMOUNT:
            raise RoundError(
                RoundErrorCode.AMOUNT_TOO_LARGE,
                f"{reason}: {self.name(payer)} would pay more than {MAX_AMOUNT:,} (lower the base)",
                event,
            )
        if amount > 0:
            self.payments.append(Payment(payer, payee, amount, reason, kind, event))

    def fan_amount(self, fan: int) -> int:
        return self.base * self.rules.multiplier(fan)

    def name(self, seat: Seat) -> str:
        return self.round.name(seat)

    def kong(self, index: int, kong: Kong) -> None:
        what = f"{kong.kind.name_zh} {tile_name(kong.tile)}"
        if index in self.checked.robbed:
            self.notes.append(f"event {index}: {self.name(kong.player)}'s {what} was robbed (抢杠): void")
            return
        knobs, konger = self.knobs, kong.player
        others = self.still_in(konger)
        if kong.kind is KongKind.DIRECT:
            assert kong.discarder is not None
            owed = [(kong.discarder, knobs.direct_kong_base, f"刮风 {what}")]
            owed += [
                (s, knobs.direct_kong_others_base, f"暴雨 {what}") for s in others if s != kong.discarder
            ]
        elif kong.kind is KongKind.ADDED and not kong.immediate and knobs.added_kong_immediate_only:
            owed = []
            self.notes.append(f"event {index}: {what} was not added at once: no payment")
        elif kong.kind is KongKind.ADDED:
            owed = [(s, knobs.added_kong_base, f"刮风 {what}") for s in others]
        else:
            owed = [(s, knobs.concealed_kong_base, f"下雨 {what}") for s in others]
        start = len(self.payments)
        for payer, units, reason in owed:
            self.pay(payer, konger, self.base * units, reason, PaymentKind.KONG, index)
        self.income[index] = self.payments[start:]

    def win(self, index: int, win: Win) -> None:
        fans = [self.checked.fans[(index, player)] for player in win.players]
        previous = self.round.events[index - 1] if index else None
        if win.discarder is None:
            self.self_drawn(index, win, fans[0], previous if isinstance(previous, Kong) else None)
        else:
            word = "抢杠" if win.qiang_gang else "杠上炮" if win.gang_shang_pao else "点炮"
            for player, fan in zip(win.players, fans, strict=True):
                amount, text = self.fan_amount(fan.fan), fan_text(fan.fan, self.rules, fan.label)
                self.pay(win.discarder, player, amount, f"{word} {text}", PaymentKind.WIN, index)
            if win.gang_shang_pao:
                assert isinstance(previous, Kong)
                self.after_pao(index, win, previous)
        if self.next_dealer is None:
            self.next_dealer = win.players[0] if len(win.players) == 1 else win.discarder
        self.out.update(win.players)

    def self_drawn(self, index: int, win: Win, fan: WinFan, kong: Kong | None) -> None:
        winner = win.players[0]
        text = fan_text(fan.fan, self.rules, fan.label)
        if (
            win.gang_shang_hua
            and self.knobs.dian_gang_hua_feeder_pays
            and kong is not None
            and kong.discarder is not None
        ):
            amount = self.fan_amount(fan.fan)
            self.pay(kong.discarder, winner, amount, f"点杠花 {text}", PaymentKind.WIN, index)
            return
        word = "杠上花" if win.gang_shang_hua else "自摸"
        amount = self.base * self.rules.win_payment(fan.fan, self_drawn=True)
        bonus = self.knobs.self_draw_bonus
        if bonus is not SelfDrawBonus.NONE:
            text = f"{text} + {'加番' if bonus is SelfDrawBonus.ADD_FAN else '加底'}"
        for payer in self.still_in(winner):
            self.pay(payer, winner, amount, f"{word} {text}", PaymentKind.SELF_DRAW, index)

    def after_pao(self, index: int, win: Win, kong: Kong) -> None:
        """杠上炮: the konger's income for the kong just before is refunded, or goes to the winner."""
        held = self.income.pop(index - 1, [])
        what = f"{kong.kind.name_zh} {tile_name(kong.tile)}"
        if self.knobs.kong_after_pao is KongAfterPao.TRANSFER:
            assert win.discarder is not None
            order = [(win.discarder + step) % 4 for step in (1, 2, 3)]
            winner = min(win.players, key=order.index)
            total = sum(payment.amount for payment in held)
            reason = f"杠上炮 转移 {what} kong income to the winner"
            self.pay(kong.player, winner, total, reason, PaymentKind.KONG_TRANSFER, index)
            return
        for payment in held:
            reason = f"杠上炮 kong refund {what}"
            self.pay(kong.player, payment.payer, payment.amount, reason, PaymentKind.KONG_REFUND, index)

    def end(self, index: int, end: End) -> None:
        if end.reason is EndReason.THREE_WON:
            return
        standings = self.checked.standings
        remaining = self.still_in()
        pigs = [seat for seat in remaining if standings[seat].hua_zhu]
        pig_amount, pig_text = self.hua_zhu_amount()
        for pig in pigs:
            if self.knobs.hua_zhu_pays_everyone:
                payees = [seat for seat in SEATS if seat != pig]
            else:
                payees = [seat for seat in remaining if seat != pig and not standings[seat].hua_zhu]
            for seat in payees:
                self.pay(pig, seat, pig_amount, f"查花猪 {pig_text}", PaymentKind.HUA_ZHU, index)
        word = "查大叫" if self.knobs.cha_jiao is ChaJiao.LARGEST else "查小叫"
        ready = [seat for seat in remaining if standings[seat].ready]
        for payer in (seat for seat in remaining if not standings[seat].ready and seat not in pigs):
            for payee in ready:
                fan = standings[payee].ready_fan
                assert fan is not None
                reason = f"{word} {fan_text(fan, self.rules)}"
                self.pay(payer, payee, self.fan_amount(fan), reason, PaymentKind.CHA_JIAO, index)
        if self.knobs.refund_kongs_when_not_ready:
            for seat in remaining:
                if not standings[seat].ready:
                    self.refund_kongs(index, seat)

    def hua_zhu_amount(self) -> tuple[int, str]:
        """What a 花猪 pays each non-花猪: the cap's worth (variant; needs a capped preset) or N base."""
        cap = self.rules.cap
        if self.knobs.hua_zhu_pays_cap and cap is not None:
            return self.fan_amount(cap), f"cap {fan_text(cap, self.rules)}"
        return self.base * self.knobs.hua_zhu_base, f"{self.knobs.hua_zhu_base} base"

    def refund_kongs(self, index: int, konger: Seat) -> None:
        """退税: ``konger`` returns the income still held from each kong, to payers still in."""
        for kong_index, held in sorted(self.income.items()):
            kong = self.round.events[kong_index]
            assert isinstance(kong, Kong)
            if kong.player != konger:
                continue
            what = f"{kong.kind.name_zh} {tile_name(kong.tile)}"
            kept = []
            for payment in held:
                if payment.payer in self.out and not self.knobs.refund_to_won_players:
                    kept.append(payment)
                    self.notes.append(
                        f"退税: {self.name(payment.payer)} has won: the {payment.amount} paid to "
                        f"{self.name(konger)} for {what} is not refunded"
                    )
                    continue
                reason = f"退税 kong refund {what}"
                self.pay(konger, payment.payer, payment.amount, reason, PaymentKind.KONG_REFUND, index)
            self.income[kong_index] = kept

    def ledger(self) -> Ledger:
        finished = self.round.end is not None
        next_dealer = self.next_dealer
        if next_dealer is None and finished:
            next_dealer = self.round.dealer  # nobody won: 连庄
        ledger = Ledger(
            players=self.round.players,
            payments=tuple(self.payments),
            preset=self.rules.name,
            base=self.base,
            finished=finished,
            next_dealer=next_dealer,
            notes=tuple(self.notes),
            won=tuple(sorted(self.out)),
        )
        worst = max((abs(total) for total in ledger.totals), default=0)
        if worst > MAX_AMOUNT:
            raise RoundError(
                RoundErrorCode.AMOUNT_TOO_LARGE, f"a total of {worst:,} is more than {MAX_AMOUNT:,}"
            )
        return ledger
