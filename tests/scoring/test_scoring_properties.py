"""Property tests: round-trips, invariance under shuffling, every legal hand scores, waits find every tile."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_builders import brute_force_readings, winning_hands

from scoring import PRESETS, Hand, WinContext, score, waits
from scoring.decompose import decompositions
from scoring.samples import random_ready_hand, random_winning_hand
from scoring.tiles import format_tiles, parse_tiles

TILE_LISTS = st.lists(st.integers(0, 26), max_size=30)


@given(TILE_LISTS)
def test_format_parse_round_trip_sorted(tiles: list[int]) -> None:
    assert parse_tiles(format_tiles(tiles)) == tuple(sorted(tiles))


@given(TILE_LISTS, st.booleans())
def test_format_parse_round_trip_keeps_order(tiles: list[int], chinese: bool) -> None:
    assert parse_tiles(format_tiles(tiles, sort=False, chinese=chinese)) == tuple(tiles)


@given(winning_hands(), st.randoms(use_true_random=False))
def test_shuffling_concealed_tiles_never_changes_the_score(hand: Hand, rng: random.Random) -> None:
    shuffled = list(hand.concealed)
    rng.shuffle(shuffled)
    for rules in PRESETS.values():
        assert score(Hand(tuple(shuffled), hand.melds, hand.win_tile), WinContext(), rules) == score(
            hand, WinContext(), rules
        )


@given(winning_hands())
def test_every_legal_winning_hand_scores_valid(hand: Hand) -> None:
    for rules in PRESETS.values():
        result = score(hand, WinContext(), rules)
        assert result.valid, result.error
        assert result.raw_fan is not None and result.total_fan is not None
        assert sum(item.fan for item in result.fans) == result.raw_fan
        assert result.total_fan == (result.raw_fan if rules.cap is None else min(result.raw_fan, rules.cap))
        assert result.multiplier == rules.multiplier(result.total_fan)
        assert result.fans, "a win always lists at least its base pattern"


@given(winning_hands())
def test_the_chosen_reading_uses_exactly_the_hand(hand: Hand) -> None:
    result = score(hand)
    used: Counter[int] = Counter()
    for label in result.decomposition:
        used.update(parse_tiles(label.split("(")[0]))
    assert used == Counter(hand.all_tiles)


@given(winning_hands(melds=False, seven_pairs=False))
@settings(max_examples=60)
def test_decompositions_match_a_brute_force(hand: Hand) -> None:
    found = [tuple(sorted(reading.labels())) for reading in decompositions(hand) if not reading.seven_pairs]
    assert len(found) == len(set(found)), "each reading once"
    assert set(found) == brute_force_readings(hand)


@given(winning_hands(), st.data())
def test_removing_any_tile_gives_a_hand_that_waits_on_it(hand: Hand, data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(hand.concealed) - 1))
    concealed = hand.concealed[:index] + hand.concealed[index + 1 :]
    assert hand.concealed[index] in {wait.tile for wait in waits(concealed, hand.melds)}


@given(winning_hands(), st.data())
@settings(max_examples=60)
def test_waits_match_trying_every_tile(hand: Hand, data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(hand.concealed) - 1))
    concealed = hand.concealed[:index] + hand.concealed[index + 1 :]
    expected = {tile for tile in range(27) if score(Hand((*concealed, tile), hand.melds, tile)).valid}
    found = waits(concealed, hand.melds)
    assert {wait.tile for wait in found} == expected
    for wait in found:
        assert wait.score == score(Hand((*concealed, wait.tile), hand.melds, wait.tile))


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=30)
def test_sample_generators_make_legal_hands(seed: int) -> None:
    rng = random.Random(seed)
    assert score(random_winning_hand(rng)).valid
    ready = random_ready_hand(rng)
    assert ready.missing in {wait.tile for wait in waits(ready.concealed, ready.melds)}


def test_hand_json_round_trips() -> None:
    from scoring.hand import Hand

    hand = Hand.parse("123345m666p", kongs=("2p",), concealed_kongs=("9p",), pongs=("5m",), win="6p")
    assert Hand.from_json(hand.to_json()) == Hand(tuple(sorted(hand.concealed)), hand.melds, hand.win_tile)
