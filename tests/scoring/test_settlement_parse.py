"""The round JSON: reading it strictly, writing it canonically, and the example round."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring.hand import Meld, MeldKind
from scoring.settlement import (
    End,
    EndReason,
    FinalHand,
    FinalStatus,
    Kong,
    KongKind,
    RoundError,
    RoundErrorCode,
    Win,
    parse_round,
    round_to_json,
    settle_round,
)
from scoring.tiles import parse_tile, parse_tiles

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "round.json"


def test_example_round_settles() -> None:
    round = parse_round(json.loads(EXAMPLE.read_text(encoding="utf-8")))
    assert round.players == ("A", "B", "C", "D") and round.dealer == 0
    assert round.void_suits == {0: "s", 1: "s", 2: "p", 3: "p"}
    ledger = settle_round(round)
    assert ledger.totals == (13, -1, -23, 11)
    assert [p.reason for p in ledger.payments] == [
        "刮风 直杠 5p",
        "下雨 暗杠 9m",
        "下雨 暗杠 9m",
        "下雨 暗杠 9m",
        "自摸 清一色 2 fan + 加底",
        "自摸 清一色 2 fan + 加底",
        "自摸 清一色 2 fan + 加底",
        "查花猪 8 base",
        "查花猪 8 base",
        "查大叫 1 fan",
        "退税 kong refund 直杠 5p",
    ]


def test_players_by_seat_name_or_seat_text() -> None:
    by_name = parse_round(
        {
            "players": ["东", "南", "西", "北"],
            "events": [{"type": "kong", "player": "南", "kind": "direct", "tile": "5筒", "discarder": "西"}],
        }
    )
    by_seat = parse_round(
        {
            "players": ["东", "南", "西", "北"],
            "events": [{"type": "kong", "player": 1, "kind": "kong_exposed", "tile": "p5", "discarder": "2"}],
        }
    )
    assert by_name == by_seat
    assert by_name.events == (Kong(1, KongKind.DIRECT, parse_tile("5p"), discarder=2),)


def test_default_players_and_shorthands() -> None:
    round = parse_round(
        {
            "comment": "shorthands",
            "events": [
                {
                    "type": "kong",
                    "player": 0,
                    "kind": "added",
                    "tile": "5p",
                    "immediate": False,
                    "comment": "补杠",
                },
                {
                    "type": "win",
                    "player": "B",
                    "gang_shang_hua": False,
                    "self_drawn": True,
                    "hand": "123345m666789p99p",
                },
                {
                    "type": "end",
                    "reason": "wall_exhausted",
                    "hands": {"0": "1112345678999m", "C": {"hua_zhu": True}, "D": {"fan": 2}},
                },
            ],
        }
    )
    assert round.players == ("A", "B", "C", "D")
    kong, win, end = round.events
    assert isinstance(kong, Kong) and not kong.immediate
    assert isinstance(win, Win) and win.self_drawn and win.winners[0].hand is not None
    assert win.winners[0].hand.win_tile == parse_tile("9p")  # the last concealed tile
    assert isinstance(end, End) and end.reason is EndReason.WALL_EXHAUSTED
    assert end.hands == {
        0: FinalHand(parse_tiles("1112345678999m")),
        2: FinalStatus(hua_zhu=True),
        3: FinalStatus(ready_fan=2),
    }


def test_hand_objects_read_melds_of_either_vocabulary() -> None:
    hand = {"concealed": "123345m66999p", "melds": [{"type": "kong_exposed", "tile": "2p"}], "win_tile": "6p"}
    other = {**hand, "melds": [{"type": "direct", "tile": "2p"}]}
    first = parse_round({"events": [{"type": "win", "player": 0, "discarder": 1, "hand": hand}]})
    second = parse_round({"events": [{"type": "win", "player": 0, "discarder": 1, "hand": other}]})
    assert first == second
    win = first.events[0]
    assert isinstance(win, Win) and win.winners[0].hand is not None
    assert win.winners[0].hand.melds == (Meld(MeldKind.KONG_EXPOSED, parse_tile("2p")),)


def test_round_trip_of_the_example_and_of_every_shape() -> None:
    data = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    round = parse_round(data)
    written = round_to_json(round)
    assert parse_round(written) == round
    assert json.loads(json.dumps(written, ensure_ascii=False)) == written
    shapes = {
        "players": ["A", "B", "C", "D"],
        "dealer": "C",
        "events": [
            {"type": "kong", "player": "B", "kind": "added", "tile": "5p", "immediate": False},
            {
                "type": "win",
                "discarder": "B",
                "qiang_gang": True,
                "winners": [{"player": "A", "fan": 1}, {"player": "C", "fan": 0}],
            },
            {
                "type": "end",
                "reason": "wall_exhausted",
                "hands": {"B": {"ready": False}, "D": {"hua_zhu": True}},
            },
        ],
    }
    assert round_to_json(parse_round(shapes)) == shapes


MALFORMED = [
    ("not-an-object", [], "round: expected an object"),
    ("no-events", {}, "missing field 'events'"),
    ("unknown-top-field", {"events": [], "preset": "chengdu"}, "unknown field 'preset'"),
    ("players-not-a-list", {"players": "ABCD", "events": []}, "players: expected a list"),
    ("three-players", {"players": ["A", "B", "C"], "events": []}, "4 different names"),
    ("same-names", {"players": ["A", "A", "B", "C"], "events": []}, "4 different names"),
    ("void-suit", {"void_suits": {"A": "z"}, "events": []}, "void_suits.A"),
    ("event-not-an-object", {"events": ["kong"]}, "events[0]: expected an event object"),
    ("unknown-type", {"events": [{"type": "pong"}]}, "events[0].type"),
    (
        "kong-missing-tile",
        {"events": [{"type": "kong", "player": 0, "kind": "added"}]},
        "missing field 'tile'",
    ),
    (
        "kong-bad-kind",
        {"events": [{"type": "kong", "player": 0, "kind": "big", "tile": "5p"}]},
        "events[0].kind",
    ),
    (
        "kong-bad-tile",
        {"events": [{"type": "kong", "player": 0, "kind": "added", "tile": "5z"}]},
        "events[0].tile",
    ),
    (
        "kong-two-tiles",
        {"events": [{"type": "kong", "player": 0, "kind": "added", "tile": "55p"}]},
        "exactly one",
    ),
    (
        "kong-extra-field",
        {"events": [{"type": "kong", "player": 0, "kind": "added", "tile": "5p", "fan": 1}]},
        "unknown field 'fan'",
    ),
    (
        "immediate-not-bool",
        {"events": [{"type": "kong", "player": 0, "kind": "added", "tile": "5p", "immediate": "no"}]},
        "events[0].immediate",
    ),
    ("win-no-winner", {"events": [{"type": "win", "discarder": 1, "fan": 1}]}, "'player'"),
    (
        "win-player-and-winners",
        {"events": [{"type": "win", "player": 0, "discarder": 1, "fan": 1, "winners": []}]},
        "'player'",
    ),
    (
        "win-hand-and-fan",
        {"events": [{"type": "win", "player": 0, "discarder": 1, "fan": 1, "hand": "123345m666789p99p"}]},
        "one of them",
    ),
    ("win-neither", {"events": [{"type": "win", "player": 0, "discarder": 1}]}, "one of them"),
    ("win-how", {"events": [{"type": "win", "player": 0, "fan": 1}]}, "'self_drawn': true"),
    (
        "win-both-ways",
        {"events": [{"type": "win", "player": 0, "fan": 1, "discarder": 1, "self_drawn": True}]},
        "no discarder",
    ),
    (
        "win-fan-bool",
        {"events": [{"type": "win", "player": 0, "fan": True, "discarder": 1}]},
        "events[0].fan",
    ),
    ("win-fan-text", {"events": [{"type": "win", "player": 0, "fan": "2", "discarder": 1}]}, "events[0].fan"),
    (
        "win-flag-text",
        {"events": [{"type": "win", "player": 0, "fan": 1, "discarder": 1, "hai_di": "yes"}]},
        "events[0].hai_di",
    ),
    (
        "winners-hand-outside",
        {"events": [{"type": "win", "discarder": 1, "fan": 1, "winners": [{"player": 0, "fan": 1}]}]},
        "inside the list",
    ),
    (
        "hand-bad-meld",
        {
            "events": [
                {
                    "type": "win",
                    "discarder": 1,
                    "player": 0,
                    "hand": {"concealed": "123345m789p99p", "melds": [{"type": "chow", "tile": "6p"}]},
                }
            ]
        },
        "melds[0].type",
    ),
    (
        "hand-empty",
        {"events": [{"type": "win", "discarder": 1, "player": 0, "hand": {"concealed": ""}}]},
        "concealed tiles",
    ),
    ("end-bad-reason", {"events": [{"type": "end", "reason": "draw"}]}, "events[0].reason"),
    (
        "end-hands-list",
        {"events": [{"type": "end", "reason": "wall_exhausted", "hands": []}]},
        "events[0].hands",
    ),
    (
        "end-same-player-twice",
        {
            "events": [
                {
                    "type": "end",
                    "reason": "wall_exhausted",
                    "hands": {"A": {"ready": False}, "0": {"ready": False}},
                }
            ]
        },
        "a second final hand for A",
    ),
    (
        "ready-without-fan",
        {"events": [{"type": "end", "reason": "wall_exhausted", "hands": {"A": {"ready": True}}}]},
        "needs the 'fan'",
    ),
    (
        "fan-but-not-ready",
        {"events": [{"type": "end", "reason": "wall_exhausted", "hands": {"A": {"ready": False, "fan": 1}}}]},
        "set 'ready': true",
    ),
    (
        "final-unknown-field",
        {
            "events": [
                {
                    "type": "end",
                    "reason": "wall_exhausted",
                    "hands": {"A": {"concealed": "1112345678999m", "win_tile": "1m"}},
                }
            ]
        },
        "unknown field 'win_tile'",
    ),
]


@pytest.mark.parametrize(("data", "says"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed_rounds(data: Any, says: str) -> None:
    with pytest.raises(RoundError) as caught:
        parse_round(data)
    assert caught.value.code is RoundErrorCode.MALFORMED
    assert says in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "player",
    [4, -1, "E", "4", True, None],
    ids=["seat-4", "seat-minus-1", "unknown-name", "seat-text-4", "bool", "null"],
)
def test_unknown_players(player: Any) -> None:
    data: dict[str, Any] = {"events": [{"type": "kong", "player": player, "kind": "added", "tile": "5p"}]}
    with pytest.raises(RoundError) as caught:
        parse_round(data)
    assert caught.value.code is RoundErrorCode.UNKNOWN_PLAYER
    assert caught.value.path == "events[0].player" and caught.value.event == 0
    assert "A, B, C, D" in caught.value.message and "events" not in caught.value.message


def test_void_suits_by_name_or_seat() -> None:
    assert parse_round({"void_suits": {"B": "m", "2": "p", "3": "s"}, "events": []}).void_suits == {
        1: "m",
        2: "p",
        3: "s",
    }
    with pytest.raises(RoundError) as caught:
        parse_round({"void_suits": {"E": "m"}, "events": []})
    assert caught.value.code is RoundErrorCode.UNKNOWN_PLAYER
    with pytest.raises(RoundError) as caught:
        parse_round({"void_suits": {"A": "m", "0": "p"}, "events": []})
    assert caught.value.code is RoundErrorCode.MALFORMED


# ---- hands typed as a player types them (scoring.typed), the declared kongs joined ---------------------


def _won(events: list[dict[str, Any]]) -> Win:
    won = parse_round({"events": events}).events[-1]
    assert isinstance(won, Win)
    return won


def test_a_typed_hand_takes_its_players_declared_kongs() -> None:
    """A winner holding a kong types the tiles in the hand: the kong the round recorded is joined, of its
    declared kind, whether the kong is left out, named (``kong 5p``) or typed among the tiles."""
    declared = {"type": "kong", "player": "B", "kind": "concealed", "tile": "5p"}
    for typed in ("123456789m11p", "123456789m11p kong 5p", "123456789m 5555p 11p", "杠5p 123456789m11p"):
        won = _won([declared, {"type": "win", "player": "B", "discarder": "A", "hand": typed}])
        hand = won.winners[0].hand
        assert hand is not None, typed
        assert hand.melds == (Meld(MeldKind.KONG_CONCEALED, parse_tile("5p")),), typed
        assert hand.concealed == parse_tiles("123456789m11p") and hand.win_tile == parse_tile("1p"), typed
    ledger = settle_round(
        parse_round(
            {
                "events": [
                    declared,
                    {"type": "win", "player": "B", "self_drawn": True, "hand": "123456789m11p"},
                ]
            }
        )
    )
    assert "下雨 暗杠 5p" in [payment.reason for payment in ledger.payments]


def test_a_typed_pong_later_added_to_is_that_kong() -> None:
    added = {"type": "kong", "player": "C", "kind": "added", "tile": "3m"}
    won = _won([added, {"type": "win", "player": "C", "discarder": "A", "hand": "456789m11p 碰3m 胡1p"}])
    hand = won.winners[0].hand
    assert hand is not None and hand.melds == (Meld(MeldKind.KONG_ADDED, parse_tile("3m")),)
    assert hand.win_tile == parse_tile("1p")


def test_a_kong_not_declared_stays_unjoined() -> None:
    """Another player's kong is not joined, and a hand that is whole without it keeps its tiles."""
    events = [
        {"type": "kong", "player": "A", "kind": "concealed", "tile": "5p"},
        {"type": "win", "player": "B", "discarder": "C", "hand": "123456789m11p"},
    ]
    hand = _won(events).winners[0].hand
    assert hand is not None and hand.melds == ()
    with pytest.raises(RoundError) as caught:
        settle_round(parse_round({"events": events}))
    assert caught.value.code is RoundErrorCode.INVALID_HAND and "B" in caught.value.message


def test_a_typed_final_hand_at_the_walls_end_takes_its_kongs() -> None:
    events = [
        {"type": "kong", "player": "A", "kind": "direct", "tile": "9s", "discarder": "B"},
        {
            "type": "end",
            "reason": "wall_exhausted",
            "hands": {
                "A": "1234567m112p",
                "B": {"ready": False},
                "C": {"ready": False},
                "D": {"ready": False},
            },
        },
    ]
    end = parse_round({"events": events}).events[-1]
    assert isinstance(end, End)
    final = end.hands[0]
    assert isinstance(final, FinalHand) and final.melds == (Meld(MeldKind.KONG_EXPOSED, parse_tile("9s")),)
    settle_round(parse_round({"events": events}))


TYPED_ERRORS = [
    ("a-word-unknown", "123456789m11p kang 5p", "“kang”"),
    ("not-tiles", "123x", "“123x”"),
    ("a-word-without-its-tile", "123456789m11p kong", "“kong”"),
    ("two-tiles-after-a-word", "123456789m kong 55p", "55p"),
    ("a-winning-tile-not-typed", "123456789m11p win 4s", "4s"),
    ("empty", "", "没有牌"),
]


@pytest.mark.parametrize(("typed", "says"), [c[1:] for c in TYPED_ERRORS], ids=[c[0] for c in TYPED_ERRORS])
def test_typed_hand_errors_name_the_player_in_chinese_and_english(typed: str, says: str) -> None:
    events = [{"type": "win", "discarder": "东", "winners": [{"player": "西", "hand": typed}]}]
    with pytest.raises(RoundError) as caught:
        parse_round({"players": ["东", "南", "西", "北"], "events": events})
    error = caught.value
    assert error.code is RoundErrorCode.TYPED_HAND and error.event == 0
    assert error.path == "events[0].winners[0].hand"
    assert error.message.startswith("西 的手牌: ") and " / 西's hand: " in error.message
    assert says in error.message and "events[" not in error.message
