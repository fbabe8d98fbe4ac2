"""Rounds that cannot have happened: each raises ``RoundError`` with its code, naming the event."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.hand import Hand, Meld, MeldKind
from scoring.presets import CHENGDU, QQ_XUEZHAN
from scoring.settlement import (
    MAX_AMOUNT,
    MAX_FAN,
    End,
    EndReason,
    Kong,
    KongKind,
    Round,
    RoundError,
    RoundErrorCode,
    Win,
    Winner,
    parse_round,
    settle_round,
    validate_round,
)
from scoring.tiles import parse_tile

C = RoundErrorCode


def kong(player: str, kind: str, tile: str, discarder: str | None = None) -> dict[str, Any]:
    event = {"type": "kong", "player": player, "kind": kind, "tile": tile}
    return event | ({"discarder": discarder} if discarder is not None else {})


def win(player: str, fan: int = 0, discarder: str | None = None, **extra: Any) -> dict[str, Any]:
    event = {"type": "win", "player": player, "fan": fan, **extra}
    return event | ({"discarder": discarder} if discarder is not None else {"self_drawn": True})


def hand_win(player: str, hand: Any, discarder: str | None = None, **extra: Any) -> dict[str, Any]:
    event = {"type": "win", "player": player, "hand": hand, **extra}
    return event | ({"discarder": discarder} if discarder is not None else {"self_drawn": True})


THREE_WON = {"type": "end", "reason": "three_won"}
NOT_READY = {"ready": False}


def exhausted(**hands: Any) -> dict[str, Any]:
    return {"type": "end", "reason": "wall_exhausted", "hands": hands}


BAD_ROUNDS = [
    # order
    (
        "event-after-end",
        [win("A"), win("B"), win("C"), THREE_WON, kong("D", "concealed", "5p")],
        C.OUT_OF_ORDER,
        4,
    ),
    ("fourth-winner", [win("A"), win("B"), win("C"), win("D", discarder="A")], C.OUT_OF_ORDER, 3),
    ("gang-shang-pao-without-kong", [win("A", 1, "B", gang_shang_pao=True)], C.OUT_OF_ORDER, 0),
    (
        "gang-shang-pao-after-another-players-kong",
        [kong("C", "concealed", "5p"), win("A", 1, "B", gang_shang_pao=True)],
        C.OUT_OF_ORDER,
        1,
    ),
    (
        "gang-shang-hua-not-after-own-kong",
        [kong("C", "concealed", "5p"), win("A", 1, gang_shang_hua=True)],
        C.OUT_OF_ORDER,
        1,
    ),
    ("tian-hu-not-first", [kong("C", "concealed", "5p"), win("A", 4, tian_hu=True)], C.OUT_OF_ORDER, 1),
    ("di-hu-after-a-kong", [kong("C", "concealed", "5p"), win("A", 4, "B", di_hu=True)], C.OUT_OF_ORDER, 1),
    ("after-hai-di", [win("A", 0, hai_di=True), kong("B", "concealed", "5p")], C.OUT_OF_ORDER, 1),
    # acting after winning
    ("kong-after-winning", [win("A"), kong("A", "concealed", "5p")], C.ALREADY_WON, 1),
    ("winning-twice", [win("A"), win("A", 0, "B")], C.ALREADY_WON, 1),
    ("discarding-after-winning", [win("A"), win("B", 0, "A")], C.ALREADY_WON, 1),
    ("feeding-a-kong-after-winning", [win("A"), kong("B", "direct", "5p", "A")], C.ALREADY_WON, 1),
    (
        "final-hand-of-a-winner",
        [win("A"), exhausted(A=NOT_READY, B=NOT_READY, C=NOT_READY, D=NOT_READY)],
        C.ALREADY_WON,
        1,
    ),
    # kongs
    ("direct-kong-without-discarder", [kong("B", "direct", "5p")], C.BAD_KONG, 0),
    ("direct-kong-own-discard", [kong("B", "direct", "5p", "B")], C.BAD_KONG, 0),
    ("concealed-kong-with-discarder", [kong("B", "concealed", "5p", "C")], C.BAD_KONG, 0),
    ("immediate-on-a-concealed-kong", [kong("B", "concealed", "5p") | {"immediate": False}], C.BAD_KONG, 0),
    (
        "same-tile-konged-twice",
        [kong("B", "concealed", "5p"), kong("C", "added", "5p")],
        C.TOO_MANY_COPIES,
        1,
    ),
    # wins
    (
        "self-drawn-with-two-winners",
        [
            {
                "type": "win",
                "self_drawn": True,
                "winners": [{"player": "A", "fan": 0}, {"player": "B", "fan": 0}],
            }
        ],
        C.BAD_WIN,
        0,
    ),
    (
        "winner-listed-twice",
        [
            {
                "type": "win",
                "discarder": "C",
                "winners": [{"player": "A", "fan": 0}, {"player": "A", "fan": 1}],
            }
        ],
        C.BAD_WIN,
        0,
    ),
    (
        "discarder-wins",
        [
            {
                "type": "win",
                "discarder": "C",
                "winners": [{"player": "A", "fan": 0}, {"player": "C", "fan": 1}],
            }
        ],
        C.BAD_WIN,
        0,
    ),
    ("negative-fan", [win("A", -1, "B")], C.BAD_WIN, 0),
    (
        "two-flags",
        [kong("B", "concealed", "5p"), win("A", 1, "B", gang_shang_pao=True, qiang_gang=True)],
        C.BAD_WIN,
        1,
    ),
    (
        "qiang-gang-of-a-concealed-kong",
        [kong("B", "concealed", "5p"), win("A", 1, "B", qiang_gang=True)],
        C.BAD_WIN,
        1,
    ),
    (
        "gang-shang-hua-with-discarder",
        [kong("A", "concealed", "5p"), win("A", 1, "B", gang_shang_hua=True)],
        C.BAD_WIN,
        1,
    ),
    # the end
    ("three-won-too-early", [win("A"), win("B"), THREE_WON], C.BAD_END, 2),
    ("wall-exhausted-after-three-won", [win("A"), win("B"), win("C"), exhausted()], C.BAD_END, 3),
    ("final-hand-missing", [win("A"), exhausted(B=NOT_READY, C=NOT_READY)], C.BAD_END, 1),
    (
        "final-hands-at-three-won",
        [win("A"), win("B"), win("C"), THREE_WON | {"hands": {"D": NOT_READY}}],
        C.BAD_END,
        3,
    ),
    (
        "hua-zhu-cannot-be-ready",
        [exhausted(A={"hua_zhu": True, "ready": True, "fan": 1}, B=NOT_READY, C=NOT_READY, D=NOT_READY)],
        C.BAD_END,
        0,
    ),
]


@pytest.mark.parametrize(
    ("events", "code", "event"), [c[1:] for c in BAD_ROUNDS], ids=[c[0] for c in BAD_ROUNDS]
)
def test_impossible_rounds(events: list[dict[str, Any]], code: RoundErrorCode, event: int) -> None:
    with pytest.raises(RoundError) as caught:
        settle_round(parse_round({"events": events}))
    assert caught.value.code is code, caught.value
    assert caught.value.event == event
    assert str(caught.value).startswith(f"event {event}: ") and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("dealer", "event", "says"),
    [
        ("B", win("A", 4, tian_hu=True), "天胡 is the dealer's win alone"),
        ("A", win("A", 4, "B", di_hu=True), "地胡 is a non-dealer's win: A is the dealer"),
        ("A", {"type": "win", "winners": [{"player": "A", "fan": 4}, {"player": "C", "fan": 4}],
               "discarder": "B", "di_hu": True}, "A is the dealer"),
    ],
    ids=["tian-hu-of-another", "di-hu-of-the-dealer", "di-hu-one-of-two-winners"],
)  # fmt: skip
def test_tian_hu_and_di_hu_go_by_the_named_dealer(dealer: str, event: dict[str, Any], says: str) -> None:
    with pytest.raises(RoundError) as caught:
        settle_round(parse_round({"dealer": dealer, "events": [event]}))
    assert caught.value.code is C.BAD_WIN and says in str(caught.value)


@pytest.mark.parametrize("dealer", ["A", None], ids=["named", "implied"])
def test_a_tian_hu_hand_is_the_dealers(dealer: str | None) -> None:
    """天胡 implies the dealer: with none named, its winner is the dealer."""
    round = {"events": [hand_win("A", {"concealed": "123m456m789m234p55p"}, tian_hu=True)]}
    ledger = settle_round(parse_round(round | ({"dealer": dealer} if dealer else {})))
    assert ledger.totals[0] == 3 * (16 + 1)  # the cap, 4 fan, from each of three, plus 自摸加底


def test_too_many_winners_by_knob() -> None:
    """With ``max_winners`` at 2 (a house rule), a second 一炮多响 winner beyond it is refused."""
    from dataclasses import replace

    rules = replace(CHENGDU, settlement=replace(CHENGDU.settlement, max_winners=2))
    events = [
        win("A"),
        {"type": "win", "discarder": "C", "winners": [{"player": "B", "fan": 0}, {"player": "D", "fan": 0}]},
    ]
    with pytest.raises(RoundError) as caught:
        settle_round(parse_round({"events": events}), rules)
    assert caught.value.code is C.TOO_MANY_WINNERS


# ---- bounds: a fan no hand can have, an amount no JSON reader keeps ---------------------------------


@pytest.mark.parametrize("fan", [MAX_FAN + 1, 3_000_000, 1_000_000_000])
@pytest.mark.parametrize("preset", [CHENGDU, QQ_XUEZHAN], ids=["capped", "uncapped"])
def test_a_fan_no_hand_can_have_is_refused(fan: int, preset: Any) -> None:
    """Under an uncapped doubling preset such a fan once meant an amount of millions of digits."""
    events = [{"type": "win", "player": "A", "self_drawn": True, "fan": fan}]
    with pytest.raises(RoundError) as caught:
        settle_round(parse_round({"events": events}), preset)
    assert caught.value.code is C.FAN_TOO_LARGE and caught.value.event == 0
    assert f"{fan:,}" in caught.value.message and str(MAX_FAN) in caught.value.message


def test_a_ready_fan_no_hand_can_have_is_refused() -> None:
    events = [
        {
            "type": "end",
            "reason": "wall_exhausted",
            "hands": {
                "A": {"ready": True, "fan": MAX_FAN + 1},
                "B": {"ready": False},
                "C": {"ready": False},
                "D": {"ready": False},
            },
        }
    ]
    with pytest.raises(RoundError) as caught:
        settle_round(parse_round({"events": events}), QQ_XUEZHAN)
    assert caught.value.code is C.FAN_TOO_LARGE


def test_the_largest_fan_settles_and_a_base_too_large_for_it_is_refused() -> None:
    events = [{"type": "win", "player": "A", "self_drawn": True, "fan": MAX_FAN}]
    ledger = settle_round(parse_round({"events": events}), QQ_XUEZHAN)
    assert ledger.totals[0] == 3 * 2 ** (MAX_FAN - 1) + 3  # 自摸加底 from each of three payers
    with pytest.raises(RoundError) as caught:
        settle_round(parse_round({"events": events}), QQ_XUEZHAN, base=2**20)
    assert caught.value.code is C.AMOUNT_TOO_LARGE and caught.value.event == 0
    assert f"{MAX_AMOUNT:,}" in caught.value.message


def test_totals_are_bounded_as_well_as_payments() -> None:
    """Each payment fits, but three of them to one winner do not."""
    base = MAX_AMOUNT // (2 ** (MAX_FAN - 1) + 1)
    events = [{"type": "win", "player": "A", "self_drawn": True, "fan": MAX_FAN}]
    with pytest.raises(RoundError) as caught:
        settle_round(parse_round({"events": events}), QQ_XUEZHAN, base=base)
    assert caught.value.code is C.AMOUNT_TOO_LARGE and caught.value.event is None


# ---- hands: impossible, kongs not held, too many copies ---------------------------------------------

HAND_ROUNDS = [
    ("three-suits", [hand_win("A", "123m456p789s11m222m")], C.INVALID_HAND, "three_suits"),
    ("not-a-winning-shape", [hand_win("A", "1245m456p789p1122m")], C.INVALID_HAND, "not_a_winning_shape"),
    ("fifth-copy-in-a-hand", [hand_win("A", "11111m234m456p789p")], C.INVALID_HAND, "too_many_copies"),
    (
        "hand-misses-a-declared-kong",
        [kong("A", "concealed", "5p"), hand_win("A", "123345m666789p99p")],
        C.KONG_NOT_HELD,
        "暗杠 5p",
    ),
    (
        "hand-shows-an-undeclared-kong",
        [
            hand_win(
                "A",
                {
                    "concealed": "123345m789p99p",
                    "melds": [{"type": "kong_concealed", "tile": "6p"}],
                    "win_tile": "9p",
                },
            )
        ],
        C.KONG_NOT_HELD,
        "no kong event declared",
    ),
    (
        "kong-kind-differs",
        [
            kong("A", "direct", "6p", "B"),
            hand_win(
                "A", {"concealed": "123345m789p99p", "melds": [{"type": "kong_concealed", "tile": "6p"}]}
            ),
        ],
        C.KONG_NOT_HELD,
        "直杠 6p",
    ),
    (
        "final-hand-misses-a-kong",
        [
            kong("A", "concealed", "5p"),
            exhausted(A={"concealed": "1112345678999m"}, B=NOT_READY, C=NOT_READY, D=NOT_READY),
        ],
        C.KONG_NOT_HELD,
        "暗杠 5p",
    ),
    (
        "final-hand-wrong-size",
        [exhausted(A={"concealed": "111234567899m"}, B=NOT_READY, C=NOT_READY, D=NOT_READY)],
        C.INVALID_HAND,
        "wrong_tile_count",
    ),
    (
        "kong-of-a-tile-another-hand-holds",
        [kong("B", "concealed", "6p"), hand_win("A", "123345m666789p99p", "C")],
        C.TOO_MANY_COPIES,
        "6p",
    ),
    (
        "final-hands-share-too-many",
        [
            exhausted(
                A={"concealed": "1112345678999m"},
                B={"concealed": "1119m2345678p99p"},
                C=NOT_READY,
                D=NOT_READY,
            )
        ],
        C.TOO_MANY_COPIES,
        "1m",
    ),
    (
        "yi-pao-duo-xiang-on-two-tiles",
        [
            {
                "type": "win",
                "discarder": "C",
                "winners": [
                    {"player": "A", "hand": "123345m666789p99p"},
                    {"player": "B", "hand": "123345m666p789p88p"},
                ],
            }
        ],
        C.BAD_WIN,
        "8p, 9p",
    ),
    (
        "qiang-gang-on-another-tile",
        [kong("B", "added", "5p"), hand_win("A", "123345m666789p99p", "B", qiang_gang=True)],
        C.BAD_WIN,
        "robbed 5p",
    ),
    (
        "void-suit-held",
        [hand_win("A", "123345m666789p99p")],
        C.INVALID_HAND,
        "void_suit_present",
    ),
]


@pytest.mark.parametrize(
    ("events", "code", "says"), [c[1:] for c in HAND_ROUNDS], ids=[c[0] for c in HAND_ROUNDS]
)
def test_impossible_hands(events: list[dict[str, Any]], code: RoundErrorCode, says: str) -> None:
    void = {"A": "m"} if says == "void_suit_present" else {}
    with pytest.raises(RoundError) as caught:
        settle_round(parse_round({"events": events, "void_suits": void}))
    assert caught.value.code is code, caught.value
    assert says in caught.value.message


def test_one_copy_shared_by_two_winners_is_fine() -> None:
    """一炮多响 on 9p: the discarded 9p is in both hands but is one tile."""
    winners = [{"player": "A", "hand": "123345m666789p99p"}, {"player": "B", "hand": "123456m11m234p789p"}]
    ledger = settle_round(parse_round({"events": [{"type": "win", "discarder": "C", "winners": winners}]}))
    assert ledger.totals == (1, 1, -2, 0)


def test_consistent_hands_and_kongs_pass() -> None:
    events = [
        kong("A", "direct", "2p", "B"),
        hand_win(
            "A",
            {
                "concealed": "123345m66999p",
                "melds": [{"type": "kong_exposed", "tile": "2p"}],
                "win_tile": "6p",
            },
            "C",
        ),
        exhausted(B={"concealed": "1112345678999m"}, C={"concealed": "2468s13579s1357p"}, D={"ready": False}),
    ]
    checked = validate_round(parse_round({"events": events}), CHENGDU)
    assert checked.fans[(1, 0)].fan == 1 and checked.fans[(1, 0)].label == "平胡+根"
    assert checked.standings[1].ready_fan == 3 and not checked.standings[2].ready
    assert checked.robbed == frozenset()


# ---- the table, and rounds built in Python --------------------------------------------------------


@pytest.mark.parametrize(
    ("round", "code"),
    [
        (Round((), players=("A", "B", "C")), C.MALFORMED),
        (Round((), players=("A", "A", "C", "D")), C.MALFORMED),
        (Round((), dealer=4), C.UNKNOWN_PLAYER),
        (Round((), void_suits={0: "z"}), C.MALFORMED),
        (Round((Kong(5, KongKind.CONCEALED, 1),)), C.UNKNOWN_PLAYER),
        (Round((Win((Winner(0, fan=1),), discarder=7),)), C.UNKNOWN_PLAYER),
        (Round((Win(()),)), C.BAD_WIN),
        (Round((Win((Winner(0),), discarder=1),)), C.BAD_WIN),
        (Round((Win((Winner(0, hand=Hand.parse("123345m666789p99p"), fan=1),), discarder=1),)), C.BAD_WIN),
        (Round((End(EndReason.WALL_EXHAUSTED, {9: object()}),)), C.UNKNOWN_PLAYER),  # type: ignore[dict-item]
        (Round(("kong",)), C.MALFORMED),  # type: ignore[arg-type]
    ],
    ids=[
        "three-players",
        "same-names",
        "dealer-seat",
        "void-suit",
        "konger-seat",
        "discarder-seat",
        "no-winner",
        "neither-hand-nor-fan",
        "both-hand-and-fan",
        "final-hand-seat",
        "not-an-event",
    ],
)
def test_python_rounds(round: Round, code: RoundErrorCode) -> None:
    with pytest.raises(RoundError) as caught:
        validate_round(round, CHENGDU)
    assert caught.value.code is code


def test_error_json() -> None:
    with pytest.raises(RoundError) as caught:
        settle_round(parse_round({"events": [win("A"), kong("A", "concealed", "5p")]}))
    assert caught.value.to_json() == {
        "code": "already_won",
        "message": "the konger A already won (event 0) and is out of the round",
        "event": 1,
        "path": None,
    }


def test_settle_round_wants_a_round() -> None:
    with pytest.raises(TypeError, match="parse_round"):
        settle_round({"events": []})  # type: ignore[arg-type]


def test_kong_kinds_map_to_meld_kinds() -> None:
    """The meld kinds of a hand are the ones the kong events imply (KongKind.meld_kind)."""
    assert [kind.meld_kind for kind in KongKind] == [
        MeldKind.KONG_EXPOSED,
        MeldKind.KONG_ADDED,
        MeldKind.KONG_CONCEALED,
    ]
    assert Meld(KongKind.ADDED.meld_kind, parse_tile("5p")).tiles == (parse_tile("5p"),) * 4
