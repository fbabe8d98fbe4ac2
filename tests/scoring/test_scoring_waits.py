"""``waits``: the tiles a hand one tile short waits on, with their best scores, and 查叫 helpers."""

from __future__ import annotations

import pytest
from scoring_builders import tiles_of

from scoring import (
    ErrorCode,
    InvalidHandError,
    Meld,
    MeldKind,
    WinContext,
    cha_jiao_fan,
    get_preset,
    largest_wait,
    smallest_wait,
    waits,
)
from scoring.tiles import TileParseError, parse_tile, parse_tiles, tile_name


def _names(found: tuple) -> list[str]:
    return [tile_name(wait.tile) for wait in found]


@pytest.mark.parametrize(
    ("concealed", "melds", "expected"),
    [
        ("1112345678999m", (), ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m"]),  # 九莲宝灯 shape
        ("2233445566778m", (), ["2m", "5m", "8m"]),
        ("123m456m789m2589p", (), []),
        ("123m456m789m23p55p", (), ["1p", "4p"]),
        ("123m456m789m5p", (Meld(MeldKind.PONG, 9),), ["5p"]),  # 单吊
        ("5p", tuple(Meld(MeldKind.PONG, tile) for tile in (0, 4, 9, 13)), []),  # 5p all used: no copy left
        ("1122m3344p5566p7p", (), ["7p"]),  # 七对 wait
        ("112233m44556p77p", (), ["3p", "6p"]),  # 6p as 七对 or runs, 3p as runs
    ],
    ids=[
        "nine-gates",
        "two-five-eight",
        "not-ready",
        "two-sided",
        "single-wait",
        "fifth-copy",
        "seven-pairs",
        "pairs-or-runs",
    ],
)
def test_waits(concealed: str, melds: tuple[Meld, ...], expected: list[str]) -> None:
    assert _names(waits(parse_tiles(concealed), melds)) == expected


def test_each_wait_carries_its_best_score() -> None:
    found = {tile_name(wait.tile): wait.score for wait in waits(tiles_of("2233445566778m"))}
    assert found["8m"].combination is not None and found["8m"].combination.key == "qing_qi_dui"
    assert found["8m"].total_fan == 4
    assert found["2m"].total_fan == 2
    assert all(result.valid for result in found.values())


def test_waits_are_scored_as_a_discard_win_unless_the_context_says_otherwise() -> None:
    concealed = tiles_of("2233445566778m")
    plain = waits(concealed)
    qq = get_preset("qq_xuezhan")
    assert [wait.score.total_fan for wait in waits(concealed, (), WinContext(), qq)] == [3, 3, 5]
    assert [wait.score.total_fan for wait in plain] == [2, 2, 4]
    two_sided = tiles_of("123m456m789m23p55p")
    assert [wait.score.total_fan for wait in waits(two_sided)] == [0, 0]
    assert [wait.score.total_fan for wait in waits(two_sided, (), WinContext(qiang_gang=True))] == [1, 1]
    assert [wait.score.total_fan for wait in waits(two_sided, (), WinContext(self_drawn=True))] == [0, 0]


def test_qiang_gang_context_drops_waits_on_a_tile_already_held() -> None:
    """A robbed kong leaves the robber only one copy: waiting on a tile already held cannot be 抢杠胡."""
    assert waits(tiles_of("2233445566778m"), (), WinContext(qiang_gang=True)) == ()
    assert _names(waits(tiles_of("123m456m789m23p55p"), (), WinContext(qiang_gang=True))) == ["1p", "4p"]
    assert _names(waits(tiles_of("123m456m789m2255p"), (), WinContext(qiang_gang=True))) == []
    assert _names(waits(tiles_of("123m456m789m2255p"))) == ["2p", "5p"]


def test_three_suits_or_the_void_suit_is_not_ready() -> None:
    assert waits(tiles_of("123m456p789s2345m")) == ()
    assert waits(tiles_of("123m456m789m23p55p"), (), WinContext(void_suit="p")) == ()
    assert _names(waits(tiles_of("123m456m789m23p55p"), (), WinContext(void_suit="s"))) == ["1p", "4p"]


def test_three_suits_across_melds_is_not_ready() -> None:
    """A pong of 条 with 万 and 筒 in hand is a 花猪: no tile makes it a win."""
    assert _names(waits(tiles_of("123m456m789m5p"), (Meld(MeldKind.PONG, parse_tile("1m")),))) == ["5p"]
    assert waits(tiles_of("123m456m789m5p"), (Meld(MeldKind.PONG, parse_tile("1s")),)) == ()


@pytest.mark.parametrize(
    ("concealed", "melds", "context", "code"),
    [
        ("123m456m789m23555p", (), WinContext(), ErrorCode.WRONG_TILE_COUNT),
        ("123m456m789m", (), WinContext(), ErrorCode.WRONG_TILE_COUNT),
        ("11111m4567m7899m", (), WinContext(), ErrorCode.TOO_MANY_COPIES),
        ("123m456m789m23p55p", (), WinContext(gang_shang_hua=True), ErrorCode.CONTRADICTORY_CONTEXT),
    ],
    ids=["14-tiles", "12-tiles", "fifth-copy", "contradiction"],
)
def test_malformed_hands_raise(
    concealed: str, melds: tuple[Meld, ...], context: WinContext, code: ErrorCode
) -> None:
    with pytest.raises(InvalidHandError) as caught:
        waits(tiles_of(concealed), melds, context)
    assert caught.value.error.code is code


def test_non_tiles_raise() -> None:
    with pytest.raises(TileParseError):
        waits((0, 1, 2, 99))


def test_largest_and_smallest_wait() -> None:
    found = waits(tiles_of("2233445566778m"))
    largest, smallest = largest_wait(found), smallest_wait(found)
    assert largest is not None and tile_name(largest.tile) == "8m"
    assert smallest is not None and smallest.score.total_fan == 2
    assert largest_wait(()) is None and smallest_wait(()) is None


def test_cha_jiao_fan_uses_the_preset_knobs() -> None:
    ready = tiles_of("2233445566778m")
    assert cha_jiao_fan(ready) == 4
    assert cha_jiao_fan(ready, rules=get_preset("xuezhan_3cap")) == 3
    assert cha_jiao_fan(ready, rules=get_preset("qq_xuezhan")) == 5
    assert cha_jiao_fan(ready, rules=get_preset("points_linear")) == 3  # 查小叫 knob is not set: largest
    assert cha_jiao_fan(tiles_of("123m456p789s2345m")) is None
