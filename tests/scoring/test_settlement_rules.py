"""Settlement of a 血战到底 round: the seeds' worked examples, every rule of RULES.md and every knob.

Rounds are written as the round JSON (players A, B, C, D = seats 0-3); totals are per seat.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from scoring_builders import LEDGER_JSON_KEYS

from scoring.presets import get_preset
from scoring.rules import ChaJiao, KongAfterPao, Rules, SelfDrawBonus
from scoring.settlement import Ledger, PaymentKind, parse_round, settle_round

Events = list[dict[str, Any]]


def rules_with(preset: str = "chengdu", **knobs: Any) -> Rules:
    rules = get_preset(preset)
    return replace(rules, settlement=replace(rules.settlement, **knobs))


def settle(
    events: Events, preset: str = "chengdu", base: int = 1, dealer: str | None = None, **knobs: Any
) -> Ledger:
    data: dict[str, Any] = {"events": events}
    if dealer is not None:
        data["dealer"] = dealer
    return settle_round(parse_round(data), rules_with(preset, **knobs), base)


def kong(player: str, kind: str, tile: str, discarder: str | None = None, **extra: Any) -> dict[str, Any]:
    event = {"type": "kong", "player": player, "kind": kind, "tile": tile, **extra}
    if discarder is not None:
        event["discarder"] = discarder
    return event


def win(player: str, fan: int, discarder: str | None = None, **flags: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "win", "player": player, "fan": fan, **flags}
    if discarder is None:
        event["self_drawn"] = True
    else:
        event["discarder"] = discarder
    return event


def exhausted(**hands: Any) -> dict[str, Any]:
    return {"type": "end", "reason": "wall_exhausted", "hands": hands}


READY = {"ready": True, "fan": 0}
NOT_READY = {"ready": False}
PIG = {"hua_zhu": True}
THREE_WON = {"type": "end", "reason": "three_won"}


# ---- the seeds' worked examples ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "fan", "each"),
    [(200, 3, 1600), (100, 2, 400)],
    ids=["base200-3fan", "base100-2fan"],
)
def test_seed_003_self_drawn(base: int, fan: int, each: int) -> None:
    """Seed 003 part B (xuezhan_3cap): the three others each pay base x 2^fan; the winner gets all three."""
    ledger = settle([win("A", fan)], "xuezhan_3cap", base)
    assert ledger.totals == (3 * each, -each, -each, -each)
    assert [p.amount for p in ledger.payments] == [each] * 3


def test_seed_003_discard_zero_fan() -> None:
    """Seed 003 part B: B discards to A's 0-fan hand: B pays 100, the others pay nothing."""
    ledger = settle([win("A", 0, discarder="B")], "xuezhan_3cap", 100)
    assert ledger.totals == (100, -100, 0, 0)


def test_seed_003_cap_is_8x() -> None:
    """Seed 003 part B: at most 3 fan (8x)."""
    assert settle([win("A", 5, discarder="B")], "xuezhan_3cap").totals == (8, -8, 0, 0)


def test_seed_001_five_point_table() -> None:
    """Seed 001 (打5分): 平胡 点炮 5, 自摸 10 from each (加底); 暴雨: the feeder 10, the other two 5 each."""
    assert settle([win("A", 0, discarder="B")], base=5).totals == (5, -5, 0, 0)
    assert settle([win("A", 0)], base=5).totals == (30, -10, -10, -10)
    storm = settle([kong("A", "direct", "5p", "B")], base=5, direct_kong_others_base=1)
    assert storm.totals == (20, -10, -5, -5)
    assert settle([kong("A", "added", "5p")], base=5).totals == (15, -5, -5, -5)
    assert settle([kong("A", "concealed", "5p")], base=5).totals == (30, -10, -10, -10)


# ---- kongs (刮风下雨) ----------------------------------------------------------------------------------

KONG_CASES = [
    ("direct", [kong("B", "direct", "5p", "C")], {}, (0, 2, -2, 0)),
    ("direct-1x", [kong("B", "direct", "5p", "C")], {"direct_kong_base": 1}, (0, 1, -1, 0)),
    ("direct-baoyu", [kong("B", "direct", "5p", "C")], {"direct_kong_others_base": 1}, (-1, 4, -2, -1)),
    ("added", [kong("B", "added", "5p")], {}, (-1, 3, -1, -1)),
    ("added-2x", [kong("B", "added", "5p")], {"added_kong_base": 2}, (-2, 6, -2, -2)),
    ("added-late", [kong("B", "added", "5p", immediate=False)], {}, (0, 0, 0, 0)),
    (
        "added-late-pays",
        [kong("B", "added", "5p", immediate=False)],
        {"added_kong_immediate_only": False},
        (-1, 3, -1, -1),
    ),
    ("concealed", [kong("B", "concealed", "5p")], {}, (-2, 6, -2, -2)),
    ("concealed-1x", [kong("B", "concealed", "5p")], {"concealed_kong_base": 1}, (-1, 3, -1, -1)),
    ("after-a-win", [win("A", 0, "C"), kong("D", "concealed", "5p")], {}, (1, -2, -3, 4)),
    (
        "baoyu-after-a-win",
        [win("A", 0, "C"), kong("D", "direct", "5p", "B")],
        {"direct_kong_others_base": 1},
        (1, -2, -2, 3),
    ),
]


@pytest.mark.parametrize(
    ("events", "knobs", "totals"), [c[1:] for c in KONG_CASES], ids=[c[0] for c in KONG_CASES]
)
def test_kong_payments(events: Events, knobs: dict[str, Any], totals: tuple[int, ...]) -> None:
    assert settle(events, **knobs).totals == totals


def test_kong_reasons_and_kinds() -> None:
    ledger = settle([kong("B", "direct", "5p", "C"), kong("D", "concealed", "9m")], direct_kong_others_base=1)
    reasons = [p.reason for p in ledger.payments]
    assert reasons[:3] == ["刮风 直杠 5p", "暴雨 直杠 5p", "暴雨 直杠 5p"]
    assert reasons[3:] == ["下雨 暗杠 9m"] * 3
    assert {p.kind for p in ledger.payments} == {PaymentKind.KONG}
    assert [p.event for p in ledger.payments] == [0, 0, 0, 1, 1, 1]


def test_late_added_kong_leaves_a_note() -> None:
    ledger = settle([kong("B", "added", "5p", immediate=False)])
    assert ledger.payments == () and "not added at once" in ledger.notes[0]


# ---- wins -------------------------------------------------------------------------------------------

WIN_CASES = [
    ("discard-0fan", [win("A", 0, "C")], "chengdu", {}, (1, 0, -1, 0)),
    ("discard-2fan", [win("A", 2, "C")], "chengdu", {}, (4, 0, -4, 0)),
    ("discard-capped", [win("A", 7, "C")], "chengdu", {}, (16, 0, -16, 0)),
    (
        "yi-pao-duo-xiang",
        [
            {
                "type": "win",
                "discarder": "C",
                "winners": [{"player": "A", "fan": 1}, {"player": "B", "fan": 2}],
            }
        ],
        "chengdu",
        {},
        (2, 4, -6, 0),
    ),
    (
        "yi-pao-san-xiang",
        [
            {
                "type": "win",
                "discarder": "C",
                "winners": [{"player": "A", "fan": 0}, {"player": "B", "fan": 0}, {"player": "D", "fan": 1}],
            },
            THREE_WON,
        ],
        "chengdu",
        {},
        (1, 1, -4, 2),
    ),
    ("self-drawn-jia-di", [win("A", 2)], "chengdu", {}, (15, -5, -5, -5)),
    (
        "self-drawn-no-bonus",
        [win("A", 2)],
        "chengdu",
        {"self_draw_bonus": SelfDrawBonus.NONE},
        (12, -4, -4, -4),
    ),
    (
        "self-drawn-jia-fan",
        [win("A", 2)],
        "chengdu",
        {"self_draw_bonus": SelfDrawBonus.ADD_FAN},
        (24, -8, -8, -8),
    ),
    (
        "jia-fan-within-cap",
        [win("A", 4)],
        "chengdu",
        {"self_draw_bonus": SelfDrawBonus.ADD_FAN},
        (48, -16, -16, -16),
    ),
    ("self-drawn-only-players-in", [win("A", 0, "B"), win("C", 1)], "chengdu", {}, (1, -4, 6, -3)),
    ("qq-one-based", [win("A", 3, "B")], "qq_xuezhan", {}, (4, -4, 0, 0)),
    ("qq-no-cap", [win("A", 9, "B")], "qq_xuezhan", {}, (256, -256, 0, 0)),
    ("qq-7cap", [win("A", 9, "B")], "qq_xuezhan_7cap", {}, (64, -64, 0, 0)),
    ("points-linear", [win("A", 3, "B")], "points_linear", {}, (3, -3, 0, 0)),
    ("points-self-drawn", [win("A", 3)], "points_linear", {}, (12, -4, -4, -4)),
]


@pytest.mark.parametrize(
    ("events", "preset", "knobs", "totals"), [c[1:] for c in WIN_CASES], ids=[c[0] for c in WIN_CASES]
)
def test_win_payments(events: Events, preset: str, knobs: dict[str, Any], totals: tuple[int, ...]) -> None:
    assert settle(events, preset, **knobs).totals == totals


def test_winner_hand_is_scored_and_named() -> None:
    hand = {"concealed": "11223345677788m", "win_tile": "8m"}
    ledger = settle([{"type": "win", "player": "A", "self_drawn": True, "hand": hand}])
    assert ledger.totals == (15, -5, -5, -5)
    assert ledger.payments[0].reason == "自摸 清一色 2 fan + 加底"
    assert ledger.payments[0].kind is PaymentKind.SELF_DRAW
    no_bonus = settle([{"type": "win", "player": "A", "self_drawn": True, "hand": hand}], "xuezhan_3cap")
    assert no_bonus.payments[0].reason == "自摸 清一色 2 fan"


def test_combination_names_in_reasons() -> None:
    pure_pongs = {"type": "win", "player": "A", "discarder": "B", "hand": "111333555m77799m"}
    assert settle([pure_pongs]).payments[0].reason == "点炮 清对 3 fan"
    assert settle([pure_pongs], "points_linear").payments[0].reason == "点炮 清对 4 points"


def test_hand_flags_add_fans() -> None:
    """杠上炮 right after B's kong: the flag is part of the context A's hand is scored in."""
    events = [
        kong("B", "concealed", "5s"),
        {"type": "win", "player": "A", "discarder": "B", "gang_shang_pao": True, "hand": "123345m666789p99p"},
    ]
    ledger = settle(events)
    win_payment = next(p for p in ledger.payments if p.kind is PaymentKind.WIN)
    assert win_payment.amount == 2 and win_payment.reason == "杠上炮 平胡+杠上炮 1 fan"


# ---- 抢杠, 杠上炮, 杠上花 ---------------------------------------------------------------------------------


def test_qiang_gang_voids_the_recorded_kong() -> None:
    events = [kong("B", "added", "5p"), win("A", 1, "B", qiang_gang=True)]
    ledger = settle(events)
    assert ledger.totals == (2, -2, 0, 0)
    assert [p.reason for p in ledger.payments] == ["抢杠 1 fan"]
    assert "robbed" in ledger.notes[0]


def test_qiang_gang_without_the_kong_recorded() -> None:
    assert settle([win("A", 1, "B", qiang_gang=True)]).totals == (2, -2, 0, 0)


def test_qiang_gang_with_hands() -> None:
    hand = {"concealed": "123456789m77m456p", "win_tile": "5p"}
    events = [
        kong("B", "added", "5p"),
        {"type": "win", "player": "A", "discarder": "B", "qiang_gang": True, "hand": hand},
    ]
    ledger = settle(events)
    assert [(p.payer, p.payee, p.amount, p.reason) for p in ledger.payments] == [
        (1, 0, 2, "抢杠 平胡+抢杠胡 1 fan")
    ]


PAO_KONG = kong("B", "concealed", "5p")


@pytest.mark.parametrize(
    ("knob", "totals", "kinds"),
    [
        (KongAfterPao.REFUND, (2, -2, 0, 0), [PaymentKind.WIN] + [PaymentKind.KONG_REFUND] * 3),
        (KongAfterPao.TRANSFER, (6, -2, -2, -2), [PaymentKind.WIN, PaymentKind.KONG_TRANSFER]),
    ],
    ids=["refund", "transfer"],
)
def test_gang_shang_pao(knob: KongAfterPao, totals: tuple[int, ...], kinds: list[PaymentKind]) -> None:
    ledger = settle([PAO_KONG, win("A", 1, "B", gang_shang_pao=True)], kong_after_pao=knob)
    assert ledger.totals == totals
    assert [p.kind for p in ledger.payments[3:]] == kinds


def test_gang_shang_pao_refund_reasons() -> None:
    ledger = settle([PAO_KONG, win("A", 1, "B", gang_shang_pao=True)])
    assert {p.reason for p in ledger.payments if p.kind is PaymentKind.KONG_REFUND} == {
        "杠上炮 kong refund 暗杠 5p"
    }


def test_gang_shang_pao_transfer_goes_to_the_first_winner_in_turn() -> None:
    events = [
        PAO_KONG,
        {
            "type": "win",
            "discarder": "B",
            "gang_shang_pao": True,
            "winners": [{"player": "A", "fan": 1}, {"player": "D", "fan": 1}],
        },
    ]
    ledger = settle(events, kong_after_pao=KongAfterPao.TRANSFER)
    transfer = next(p for p in ledger.payments if p.kind is PaymentKind.KONG_TRANSFER)
    assert (transfer.payer, transfer.payee, transfer.amount) == (1, 3, 6)  # after B: C, then D
    assert sum(ledger.totals) == 0


def test_gang_shang_pao_after_unpaid_kong_moves_nothing_more() -> None:
    events = [kong("B", "added", "5p", immediate=False), win("A", 1, "B", gang_shang_pao=True)]
    assert settle(events).totals == (2, -2, 0, 0)


def test_gang_shang_hua_is_self_drawn() -> None:
    events = [kong("B", "concealed", "5p"), win("B", 1, gang_shang_hua=True)]
    ledger = settle(events)
    assert ledger.totals == (-5, 15, -5, -5)
    assert ledger.payments[-1].reason == "杠上花 1 fan + 加底"


@pytest.mark.parametrize(
    ("kind", "feeder_pays", "totals"),
    [
        ("direct", False, (-3, 11, -5, -3)),
        ("direct", True, (0, 4, -4, 0)),
        ("concealed", True, (-5, 15, -5, -5)),
    ],
    ids=["dian-gang-hua-all-pay", "dian-gang-hua-feeder-pays", "concealed-kong-all-pay"],
)
def test_dian_gang_hua(kind: str, feeder_pays: bool, totals: tuple[int, ...]) -> None:
    events = [kong("B", kind, "5p", "C" if kind == "direct" else None), win("B", 1, gang_shang_hua=True)]
    ledger = settle(events, dian_gang_hua_feeder_pays=feeder_pays)
    assert ledger.totals == totals
    if feeder_pays and kind == "direct":
        assert ledger.payments[-1].reason == "点杠花 1 fan"


# ---- the wall runs out (流局) -------------------------------------------------------------------------


def test_hua_zhu_and_cha_da_jiao() -> None:
    ledger = settle([win("A", 0, "B"), exhausted(B=PIG, C=NOT_READY, D={"ready": True, "fan": 2})])
    assert ledger.totals == (1, -17, 4, 12)
    tail = [(p.payer, p.payee, p.amount, p.reason) for p in ledger.payments[1:]]
    assert tail == [(1, 2, 8, "查花猪 8 base"), (1, 3, 8, "查花猪 8 base"), (2, 3, 4, "查大叫 2 fan")]


@pytest.mark.parametrize(
    ("preset", "knobs", "each"),
    [
        ("chengdu", {}, 8),
        ("chengdu", {"hua_zhu_base": 16}, 16),
        ("chengdu", {"hua_zhu_pays_cap": True}, 16),
        ("xuezhan_3cap", {"hua_zhu_pays_cap": True}, 8),
        ("qq_xuezhan_7cap", {"hua_zhu_pays_cap": True}, 64),
        ("qq_xuezhan", {"hua_zhu_pays_cap": True}, 8),  # no cap: the base amount
    ],
    ids=["8-base", "16-base", "chengdu-cap", "3cap", "qq-7cap", "uncapped-falls-back"],
)
def test_hua_zhu_amount(preset: str, knobs: dict[str, Any], each: int) -> None:
    ledger = settle([exhausted(A=PIG, B=NOT_READY, C=NOT_READY, D=NOT_READY)], preset, **knobs)
    assert ledger.totals == (-3 * each, each, each, each)


def test_hua_zhu_pays_no_other_hua_zhu_and_no_cha_jiao() -> None:
    ledger = settle([exhausted(A=PIG, B=PIG, C=READY, D=NOT_READY)])
    assert ledger.totals == (-16, -16, 17, 15)
    assert not any(p.kind is PaymentKind.CHA_JIAO and p.payer in (0, 1) for p in ledger.payments)


def test_cha_jiao_capped_and_everyone_ready() -> None:
    big = exhausted(A={"ready": True, "fan": 9}, B=NOT_READY, C=READY, D=READY)
    assert settle([big]).totals == (16, -18, 1, 1)
    assert settle([big], cha_jiao_cap=2).totals == (4, -6, 1, 1)
    assert settle([big], cha_jiao_cap=None).totals == (16, -18, 1, 1)  # still the preset's cap
    assert settle([big], "qq_xuezhan", cha_jiao_cap=None).totals == (256, -258, 1, 1)
    assert settle([exhausted(A=READY, B=READY, C=READY, D=READY)]).payments == ()
    assert settle([exhausted(A=NOT_READY, B=NOT_READY, C=NOT_READY, D=NOT_READY)]).payments == ()


NINE_GATES = {"concealed": "1112345678999m"}  # waits 1-9m: 1m / 9m score 3 fan (清一色 + 根), the rest 2


@pytest.mark.parametrize(
    ("knob", "word", "fan"),
    [(ChaJiao.LARGEST, "查大叫", 3), (ChaJiao.SMALLEST, "查小叫", 2)],
    ids=["da", "xiao"],
)
def test_cha_jiao_from_final_tiles(knob: ChaJiao, word: str, fan: int) -> None:
    pig = {"concealed": "13579m2468p1357s"}  # three suits: a 花猪
    loose = {"concealed": "2468s2468p11359p"}  # two suits, not ready
    ledger = settle([exhausted(A=NINE_GATES, B=pig, C=loose, D=READY)], cha_jiao=knob)
    jiao = [p for p in ledger.payments if p.kind is PaymentKind.CHA_JIAO]
    assert [(p.payer, p.payee, p.amount, p.reason) for p in jiao] == [
        (2, 0, 2**fan, f"{word} {fan} fan"),
        (2, 3, 1, f"{word} 0 fan"),
    ]
    assert [p.payer for p in ledger.payments if p.kind is PaymentKind.HUA_ZHU] == [1, 1, 1]


def test_cha_jiao_respects_the_void_suit() -> None:
    """定缺: a hand still holding its void suit is not ready."""
    data = {
        "void_suits": {"A": "m"},
        "events": [exhausted(A=NINE_GATES, B=NOT_READY, C=NOT_READY, D=NOT_READY)],
    }
    assert settle_round(parse_round(data)).payments == ()
    off = rules_with(ding_que=False)
    assert settle_round(parse_round(data), off).totals == (24, -8, -8, -8)


def test_refund_kong_income_when_not_ready() -> None:
    events = [
        kong("B", "concealed", "5p"),
        kong("C", "direct", "6p", "D"),
        exhausted(A=NOT_READY, B=NOT_READY, C=READY, D=READY),
    ]
    ledger = settle(events)
    refunds = [
        (p.payer, p.payee, p.amount, p.reason) for p in ledger.payments if p.kind is PaymentKind.KONG_REFUND
    ]
    assert refunds == [
        (1, 0, 2, "退税 kong refund 暗杠 5p"),
        (1, 2, 2, "退税 kong refund 暗杠 5p"),
        (1, 3, 2, "退税 kong refund 暗杠 5p"),
    ]
    # B returned all 6 it received; C (ready) keeps its 2
    assert ledger.between(1, 0) == 2 and ledger.totals == (-2, -2, 4, 0)


def test_hua_zhu_refunds_too_and_refund_knob_off() -> None:
    events = [kong("B", "concealed", "5p"), exhausted(A=READY, B=PIG, C=READY, D=READY)]
    assert settle(events).totals == (8, -24, 8, 8)
    assert settle(events, refund_kongs_when_not_ready=False).totals == (6, -18, 6, 6)


def test_refund_skips_players_who_have_won() -> None:
    """A won after paying B's kong: by default A is untouched; the variant repays A too."""
    events = [
        kong("B", "concealed", "5p"),
        win("A", 0, "C"),
        exhausted(B=NOT_READY, C=NOT_READY, D=NOT_READY),
    ]
    ledger = settle(events)
    assert ledger.totals == (-1, 2, -1, 0)
    assert "has won" in ledger.notes[0]
    assert settle(events, refund_to_won_players=True).totals == (1, 0, -1, 0)


def test_no_double_refund_after_gang_shang_pao() -> None:
    events = [
        PAO_KONG,
        win("A", 1, "B", gang_shang_pao=True),
        exhausted(B=NOT_READY, C=NOT_READY, D=NOT_READY),
    ]
    ledger = settle(events)
    assert ledger.totals == (2, -2, 0, 0)


def test_three_won_settles_nothing_more() -> None:
    events = [kong("D", "concealed", "5p"), win("A", 0, "B"), win("B", 0, "C"), win("C", 0, "D"), THREE_WON]
    assert settle(events).totals == (-1, -2, -2, 5)


# ---- base, ledger, dealer ---------------------------------------------------------------------------


def test_base_multiplies_every_amount() -> None:
    events = [kong("B", "concealed", "5p"), win("A", 2), exhausted(B=NOT_READY, C=PIG, D=READY)]
    one, many = settle(events), settle(events, base=7)
    assert [p.amount * 7 for p in one.payments] == [p.amount for p in many.payments]
    assert many.base == 7 and many.totals == tuple(7 * t for t in one.totals)


def test_bad_base() -> None:
    with pytest.raises(ValueError, match="base"):
        settle([], base=0)


@pytest.mark.parametrize(
    ("events", "dealer", "next_dealer"),
    [
        ([win("B", 0, "C"), win("A", 0)], None, 1),
        (
            [
                {
                    "type": "win",
                    "discarder": "C",
                    "winners": [{"player": "A", "fan": 0}, {"player": "B", "fan": 0}],
                }
            ],
            None,
            2,
        ),
        ([exhausted(A=READY, B=READY, C=READY, D=READY)], "D", 3),
        ([exhausted(A=READY, B=READY, C=READY, D=READY)], None, None),
        ([], "A", None),  # still in play
    ],
    ids=["first-winner", "yi-pao-duo-xiang-discarder", "lian-zhuang", "no-dealer", "unfinished"],
)
def test_next_dealer(events: Events, dealer: str | None, next_dealer: int | None) -> None:
    assert settle(events, dealer=dealer).next_dealer == next_dealer


def test_unfinished_round() -> None:
    ledger = settle([kong("B", "concealed", "5p")])
    assert not ledger.finished and ledger.totals == (-2, 6, -2, -2)
    assert settle(
        [kong("B", "concealed", "5p"), win("A", 0, "B"), win("B", 0, "C"), win("C", 0, "D"), THREE_WON]
    ).finished


def test_ledger_json() -> None:
    ledger = settle([kong("B", "direct", "5p", "C"), win("A", 1, "C")])
    payload = ledger.to_json()
    assert set(payload) == LEDGER_JSON_KEYS
    assert payload["payments"][0] == {
        "payer": 2,
        "payee": 1,
        "amount": 2,
        "reason": "刮风 直杠 5p",
        "kind": "kong",
        "event": 0,
    }
    assert payload["totals"] == [2, 2, -4, 0] and sum(payload["totals"]) == 0
    assert ledger.total(2) == -4 and ledger.between(2, 1) == 2


# ---- the QQ presets' kong payments follow their seeds; sichuan_bloody's settlement -------------------

ALL_KONGS = [kong("B", "direct", "5p", "C"), kong("D", "added", "6p"), kong("A", "concealed", "7p")]


@pytest.mark.parametrize(
    ("preset", "direct", "totals"),
    [
        ("qq_xuezhan", 1, (5, -2, -4, 1)),  # seed 000: 直杠 1倍 from the discarder
        ("qq_xuezhan_7cap", 2, (5, -1, -5, 1)),  # seed 004: 直杠 收取引杠者2倍点数
        ("chengdu", 2, (5, -1, -5, 1)),
    ],
)
def test_qq_kong_payments_follow_their_seeds(preset: str, direct: int, totals: tuple[int, ...]) -> None:
    ledger = settle(ALL_KONGS, preset)
    assert ledger.totals == totals
    assert [(p.payer, p.payee, p.amount) for p in ledger.payments][:1] == [(2, 1, direct)]
    knobs = get_preset(preset).settlement
    assert (knobs.added_kong_base, knobs.concealed_kong_base) == (1, 2)


def test_sichuan_bloody_hua_zhu_pays_the_cap_to_every_other_seat() -> None:
    events = [win("A", 0, "B"), exhausted(B=PIG, C=NOT_READY, D=READY)]
    assert settle(events).totals == (1, -17, 7, 9)  # chengdu: 8 base to C and D, still in
    ledger = settle(events, "sichuan_bloody")
    assert ledger.totals == (9, -25, 7, 9)  # the cap, 2**3, to A who has won as well
    assert [p.amount for p in ledger.payments if p.kind is PaymentKind.HUA_ZHU] == [8, 8, 8]


def test_sichuan_bloody_refunds_kongs_to_players_who_have_won_since() -> None:
    events = [
        kong("B", "concealed", "5p"),
        win("A", 0, "C"),
        exhausted(B=NOT_READY, C=READY, D=READY),
    ]
    assert settle(events).totals == (-1, 0, 0, 1)  # chengdu: A's 2 stays with B
    assert settle(events, "sichuan_bloody").totals == (1, -2, 0, 1)


def test_sichuan_bloody_cha_jiao_counts_no_kong_fan() -> None:
    ready_with_a_kong = {"concealed": "123m456m789m5p", "melds": [{"type": "kong_concealed", "tile": "2p"}]}
    events = [
        kong("D", "concealed", "2p"),
        exhausted(A=NOT_READY, B=NOT_READY, C=NOT_READY, D=ready_with_a_kong),
    ]
    chengdu = settle(events)
    assert [p.reason for p in chengdu.payments if p.kind is PaymentKind.CHA_JIAO] == ["查大叫 1 fan"] * 3
    bloody = settle(events, "sichuan_bloody")
    assert [p.reason for p in bloody.payments if p.kind is PaymentKind.CHA_JIAO] == ["查大叫 0 fan"] * 3
    assert (chengdu.totals, bloody.totals) == ((-4, -4, -4, 12), (-3, -3, -3, 9))
