"""Property tests: random legal rounds under random presets and knobs.

Every ledger sums to zero; a player who has won is untouched by later events; a refund never exceeds what
was received; ``--base`` only scales; the round JSON round-trips; real hands are paid at their score.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from random import Random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scoring_builders import winning_hands

from scoring import Hand, Meld, MeldKind, WinContext, score, waits
from scoring.presets import PRESETS
from scoring.rules import ChaJiao, KongAfterPao, Rules, SelfDrawBonus, Settlement
from scoring.samples import random_ready_hand
from scoring.settlement import (
    End,
    EndReason,
    Event,
    FinalHand,
    FinalStatus,
    Kong,
    KongKind,
    Ledger,
    PaymentKind,
    Round,
    Win,
    Winner,
    parse_round,
    round_to_json,
    settle_round,
)

SEATS = (0, 1, 2, 3)
_KINDS_OF_MELD = {
    MeldKind.KONG_EXPOSED: KongKind.DIRECT,
    MeldKind.KONG_ADDED: KongKind.ADDED,
    MeldKind.KONG_CONCEALED: KongKind.CONCEALED,
}


@st.composite
def knobs(draw: st.DrawFn, refund_to_won: bool | None = None) -> Settlement:
    return Settlement(
        direct_kong_base=draw(st.integers(1, 2)),
        direct_kong_others_base=draw(st.integers(0, 1)),
        added_kong_base=draw(st.integers(1, 2)),
        added_kong_immediate_only=draw(st.booleans()),
        concealed_kong_base=draw(st.integers(1, 2)),
        self_draw_bonus=draw(st.sampled_from(SelfDrawBonus)),
        kong_after_pao=draw(st.sampled_from(KongAfterPao)),
        dian_gang_hua_feeder_pays=draw(st.booleans()),
        hua_zhu_base=draw(st.sampled_from((8, 16))),
        hua_zhu_pays_cap=draw(st.booleans()),
        cha_jiao=draw(st.sampled_from(ChaJiao)),
        cha_jiao_cap=draw(st.sampled_from((None, 2, 3, 4, 7))),
        refund_kongs_when_not_ready=draw(st.booleans()),
        refund_to_won_players=draw(st.booleans()) if refund_to_won is None else refund_to_won,
    )


@st.composite
def table_rules(draw: st.DrawFn, refund_to_won: bool | None = None) -> Rules:
    preset = draw(st.sampled_from(sorted(PRESETS)))
    return replace(PRESETS[preset], settlement=draw(knobs(refund_to_won)))


@st.composite
def rounds(draw: st.DrawFn) -> Round:
    """A legal round of declared fans and standings: kongs, wins (一炮多响, 抢杠, 杠上炮, 杠上花), an end."""
    free_tiles = list(draw(st.permutations(range(27))))
    events: list[Event] = []
    won: set[int] = set()
    for _ in range(draw(st.integers(0, 10))):
        if len(won) >= 3:
            break
        playing = [seat for seat in SEATS if seat not in won]
        action = draw(st.sampled_from(("kong", "kong", "win", "follow", "qiang")))
        previous = events[-1] if events else None
        if action == "follow" and isinstance(previous, Kong) and previous.player not in won:
            konger = previous.player
            if draw(st.booleans()):  # 杠上花
                events.append(Win((Winner(konger, fan=draw(st.integers(0, 6))),), gang_shang_hua=True))
                won.add(konger)
            else:  # 杠上炮
                winners = draw(_winners([seat for seat in playing if seat != konger], 3 - len(won)))
                events.append(Win(winners, discarder=konger, gang_shang_pao=True))
                won.update(winner.player for winner in winners)
        elif action in ("kong", "qiang") and len(playing) >= 2:
            player = draw(st.sampled_from(playing))
            kind = KongKind.ADDED if action == "qiang" else draw(st.sampled_from(KongKind))
            others = [seat for seat in playing if seat != player]
            discarder = draw(st.sampled_from(others)) if kind is KongKind.DIRECT else None
            immediate = draw(st.booleans()) if kind is KongKind.ADDED else True
            events.append(Kong(player, kind, free_tiles.pop(), discarder, immediate))
            if action == "qiang":
                winners = draw(_winners(others, 3 - len(won)))
                events.append(Win(winners, discarder=player, qiang_gang=True))
                won.update(winner.player for winner in winners)
        elif action == "win" and len(playing) >= 2:
            if draw(st.booleans()):
                winner = draw(st.sampled_from(playing))
                events.append(Win((Winner(winner, fan=draw(st.integers(0, 6))),)))
                won.add(winner)
            else:
                discarder = draw(st.sampled_from(playing))
                winners = draw(_winners([s for s in playing if s != discarder], 3 - len(won)))
                events.append(Win(winners, discarder=discarder))
                won.update(winner.player for winner in winners)
    ending = draw(st.sampled_from(("end", "end", "none")))
    if ending == "end" and len(won) >= 3:
        events.append(End(EndReason.THREE_WON))
    elif ending == "end":
        hands = {seat: draw(_standing()) for seat in SEATS if seat not in won}
        events.append(End(EndReason.WALL_EXHAUSTED, hands))
    return Round(tuple(events), dealer=draw(st.sampled_from((None, *SEATS))))


def _winners(candidates: list[int], room: int) -> st.SearchStrategy[tuple[Winner, ...]]:
    size = min(room, len(candidates))
    return st.lists(st.sampled_from(candidates), min_size=1, max_size=size, unique=True).flatmap(
        lambda players: st.tuples(*(st.builds(Winner, st.just(p), fan=st.integers(0, 6)) for p in players))
    )


def _standing() -> st.SearchStrategy[FinalStatus]:
    return st.one_of(
        st.just(FinalStatus(hua_zhu=True)),
        st.just(FinalStatus()),
        st.builds(FinalStatus, ready_fan=st.integers(0, 6)),
    )


def _win_index(round: Round) -> dict[int, int]:
    won: dict[int, int] = {}
    for index, event in enumerate(round.events):
        if isinstance(event, Win):
            won.update(dict.fromkeys(event.players, index))
    return won


PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(rounds(), table_rules(), st.integers(1, 500))
def test_totals_sum_to_zero(round: Round, rules: Rules, base: int) -> None:
    ledger = settle_round(round, rules, base)
    assert sum(ledger.totals) == 0
    for payment in ledger.payments:
        assert payment.amount > 0 and payment.amount % base == 0 and payment.payer != payment.payee
    assert [p.event for p in ledger.payments] == sorted(p.event for p in ledger.payments)


@PROPERTY
@given(rounds(), table_rules(refund_to_won=False))
def test_winner_untouched_by_later_events(round: Round, rules: Rules) -> None:
    ledger = settle_round(round, rules)
    won_at = _win_index(round)
    for payment in ledger.payments:
        for seat in (payment.payer, payment.payee):
            assert seat not in won_at or payment.event <= won_at[seat], (payment, won_at)


@PROPERTY
@given(rounds(), table_rules())
def test_refunds_never_exceed_income(round: Round, rules: Rules) -> None:
    ledger = settle_round(round, rules)
    received: Counter[tuple[int, int]] = Counter()
    returned: Counter[tuple[int, int]] = Counter()
    passed_on: Counter[int] = Counter()
    for payment in ledger.payments:
        if payment.kind is PaymentKind.KONG:
            received[(payment.payee, payment.payer)] += payment.amount
        elif payment.kind is PaymentKind.KONG_REFUND:
            returned[(payment.payer, payment.payee)] += payment.amount
        if payment.kind in (PaymentKind.KONG_REFUND, PaymentKind.KONG_TRANSFER):
            passed_on[payment.payer] += payment.amount
    for pair, amount in returned.items():
        assert amount <= received[pair]
    for konger, amount in passed_on.items():
        assert amount <= sum(value for (payee, _), value in received.items() if payee == konger)


@PROPERTY
@given(rounds(), table_rules(), st.integers(2, 50))
def test_base_only_scales(round: Round, rules: Rules, base: int) -> None:
    one, many = settle_round(round, rules), settle_round(round, rules, base)
    assert [replace(p, amount=p.amount * base) for p in one.payments] == list(many.payments)
    assert many.totals == tuple(base * total for total in one.totals)
    assert (len(one.notes), one.next_dealer, one.finished) == (
        len(many.notes),
        many.next_dealer,
        many.finished,
    )


@PROPERTY
@given(rounds())
def test_round_json_round_trips(round: Round) -> None:
    assert parse_round(round_to_json(round)) == round


def _declared_kongs(player: int, hand_melds: tuple[Meld, ...], feeder: int) -> list[Event]:
    return [
        Kong(
            player,
            _KINDS_OF_MELD[meld.kind],
            meld.tile,
            feeder if meld.kind is MeldKind.KONG_EXPOSED else None,
        )
        for meld in hand_melds
        if meld.kind.is_kong
    ]


@settings(max_examples=150, deadline=None)
@given(winning_hands(), st.booleans(), st.sampled_from(sorted(PRESETS)))
def test_real_winning_hand_is_paid_at_its_score(hand: Hand, self_drawn: bool, preset: str) -> None:
    rules = replace(PRESETS[preset], settlement=Settlement(self_draw_bonus=SelfDrawBonus.NONE))
    events = _declared_kongs(0, hand.melds, feeder=1)
    context = WinContext(self_drawn=self_drawn)
    result = score(hand, context, rules)
    assert result.valid and result.total_fan is not None
    events.append(Win((Winner(0, hand=hand),), discarder=None if self_drawn else 2))
    ledger = settle_round(Round(tuple(events)), rules)
    wins = [p for p in ledger.payments if p.kind in (PaymentKind.WIN, PaymentKind.SELF_DRAW)]
    assert len(wins) == (3 if self_drawn else 1)
    assert {p.amount for p in wins} == {rules.multiplier(result.total_fan)}


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(sorted(PRESETS)), st.sampled_from(ChaJiao))
def test_ready_final_hand_is_paid_at_its_wait(seed: int, preset: str, pick: ChaJiao) -> None:
    ready = random_ready_hand(Random(seed))
    rules = replace(PRESETS[preset], settlement=Settlement(cha_jiao=pick, cha_jiao_cap=None))
    events = _declared_kongs(3, ready.melds, feeder=0)
    events.append(
        End(
            EndReason.WALL_EXHAUSTED,
            {
                0: FinalStatus(),
                1: FinalStatus(hua_zhu=True),
                2: FinalStatus(),
                3: FinalHand(ready.concealed, ready.melds),
            },
        )
    )
    ledger: Ledger = settle_round(Round(tuple(events)), rules)
    fans = [w.score.total_fan for w in waits(ready.concealed, ready.melds, rules=rules)]
    assert fans and all(fan is not None for fan in fans)
    fan = (max if pick is ChaJiao.LARGEST else min)(f for f in fans if f is not None)
    jiao = [p for p in ledger.payments if p.kind is PaymentKind.CHA_JIAO]
    assert [(p.payer, p.payee, p.amount) for p in jiao] == [
        (seat, 3, rules.multiplier(fan)) for seat in (0, 2) if rules.multiplier(fan) > 0
    ]
