"""The decomposer: per-suit partitions, readings of whole hands, and the fast shape tests."""

from __future__ import annotations

import pytest
from scoring_builders import hand

from scoring.decompose import (
    Group,
    GroupKind,
    decompositions,
    is_seven_pairs,
    is_standard_shape,
    suit_partitions,
    winning_tiles,
)
from scoring.tiles import parse_tile, tile_counts


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((0,) * 9, 1),  # nothing left: one empty partition
        ((3, 3, 3, 0, 0, 0, 0, 0, 0), 2),  # 111222333: pongs or runs
        ((2, 0, 0, 0, 0, 0, 0, 0, 0), 1),  # a pair
        ((1, 0, 0, 0, 0, 0, 0, 0, 0), 0),  # one tile: total is 1 mod 3
        ((1, 1, 0, 0, 0, 0, 0, 0, 0), 0),  # two tiles, not a pair
        ((3, 1, 1, 1, 1, 1, 1, 1, 3), 0),  # 九莲宝灯 minus one tile: 13 tiles, 1 mod 3
        ((4, 1, 1, 1, 1, 1, 1, 1, 3), 1),  # 11112345678999: only 111 123 456 789 99
        ((2, 2, 2, 2, 2, 2, 2, 0, 0), 3),  # 11223344556677: the pair is 11, 44 or 77
    ],
)
def test_suit_partition_counts(counts: tuple[int, ...], expected: int) -> None:
    assert len(suit_partitions(counts)) == expected


def test_partitions_are_runs_triplets_and_one_pair() -> None:
    for sets, pair in suit_partitions((4, 1, 1, 1, 1, 1, 1, 1, 3)):
        assert pair >= 0 and len(sets) == 4


def test_readings_combine_suits_and_melds() -> None:
    readings = decompositions(hand("111222333m55p", pong=("7p",), win="5p"))
    assert {reading.labels() for reading in readings} == {
        ("111m", "222m", "333m", "777p(pong)", "55p"),
        ("123m", "123m", "123m", "777p(pong)", "55p"),
    }
    assert all(not reading.seven_pairs for reading in readings)


def test_seven_pairs_reading_splits_a_quad_into_two_pairs() -> None:
    readings = decompositions(hand("11112233m445566p"))
    seven = [reading for reading in readings if reading.seven_pairs]
    assert len(seven) == 1
    assert seven[0].labels() == ("11m", "11m", "22m", "33m", "44p", "55p", "66p")


def test_seven_pairs_needs_no_melds_and_fourteen_tiles() -> None:
    counts = tile_counts(hand("11223344556677m").concealed)
    assert is_seven_pairs(counts, 0)
    assert not is_seven_pairs(counts, 1)
    assert not is_seven_pairs(tile_counts(hand("112233445566m").concealed), 0)


def test_group_properties() -> None:
    run = Group(GroupKind.RUN, parse_tile("7p"))
    assert run.tiles == (15, 16, 17) and run.terminal and run.is_run and run.label == "789p"
    middle = Group(GroupKind.RUN, parse_tile("4p"))
    assert not middle.terminal
    pair = Group(GroupKind.PAIR, parse_tile("9s"))
    assert pair.terminal and pair.label == "99s" and not pair.is_run


def test_fast_shape_tests_agree_with_the_readings() -> None:
    for text in ("123m456m789m234p55p", "123m456m789m235p55p", "11223344556677m", "1112345678999m1m"):
        the_hand = hand(text)
        counts = tile_counts(the_hand.concealed)
        has_standard = any(not reading.seven_pairs for reading in decompositions(the_hand))
        assert is_standard_shape(counts) == has_standard


def test_winning_tiles() -> None:
    counts = tile_counts(hand("1112345678999m").concealed)
    assert winning_tiles(counts, 0, list(range(27))) == list(range(9))
    counts = tile_counts(hand("1122m3344p5566p7p").concealed)
    assert winning_tiles(counts, 0, list(range(27))) == [parse_tile("7p")]
    assert winning_tiles(counts, 1, list(range(27))) == []  # with a meld there is no 七对
