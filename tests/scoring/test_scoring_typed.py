"""A hand typed as a player types it (``scoring.typed``): tiles and meld words in any order, the words in
Chinese or English, joined to the kongs its player declared; errors in Chinese and English naming the word."""

from __future__ import annotations

import pytest

from scoring import Hand, Meld, MeldKind
from scoring.tiles import parse_tile, parse_tiles
from scoring.typed import MAX_TYPED, TypedHandError, parse_typed


def _meld(kind: MeldKind, tile: str) -> Meld:
    return Meld(kind, parse_tile(tile))


SAME_HAND = [
    "123345m66999p kong 2p win 6p",
    "123345m66999p 杠 2p 胡 6p",
    "123345m66999p 杠2p 胡6p",
    "KONG 2p 123345m 66999p WIN 6p",
    "123 345m 66999p exposed 2p win 6p",
    "123345万66999筒 明杠2筒 胡6筒",
]


@pytest.mark.parametrize("typed", SAME_HAND)
def test_one_hand_typed_many_ways(typed: str) -> None:
    expected = Hand(parse_tiles("123345m66999p"), (_meld(MeldKind.KONG_EXPOSED, "2p"),), parse_tile("6p"))
    assert parse_typed(typed).hand() == expected


def test_every_meld_word() -> None:
    hand = parse_typed("22m 碰3m 加杠4m 暗杠5m 面下杠6m").hand()
    assert hand.melds == (
        _meld(MeldKind.PONG, "3m"),
        _meld(MeldKind.KONG_ADDED, "4m"),
        _meld(MeldKind.KONG_CONCEALED, "5m"),
        _meld(MeldKind.KONG_ADDED, "6m"),
    )
    assert hand.concealed == parse_tiles("22m") and hand.win_tile == parse_tile("2m")


def test_declared_kongs_are_joined_of_their_kind() -> None:
    """Left out, named with the plain word, or typed among the tiles: the declared kong, as declared."""
    declared = (_meld(MeldKind.KONG_CONCEALED, "9m"), _meld(MeldKind.KONG_ADDED, "1p"))
    for typed in ("12345m678s 55s", "12345m678s 55s kong 9m 碰1p", "999912345m 678s 55s 1111p"):
        hand = parse_typed(typed).hand(declared)
        assert set(hand.melds) == set(declared) and len(hand.melds) == 2, typed
        assert sorted(hand.concealed) == sorted(parse_tiles("12345m55678s")), typed
    # a hand whole without it has no room for it: not joined (the round then says the kong is not shown)
    full = parse_typed("123456789p11p999s").hand(declared[:1])
    assert full.melds == () and len(full.concealed) == 14


def test_a_final_hand_has_no_winning_tile() -> None:
    concealed, melds = parse_typed("1234567m112p").final((_meld(MeldKind.KONG_EXPOSED, "9s"),))
    assert concealed == parse_tiles("1234567m112p") and melds == (_meld(MeldKind.KONG_EXPOSED, "9s"),)
    with pytest.raises(TypedHandError) as caught:
        parse_typed("1234567m1123p win 3p").final()
    assert "3p" in caught.value.zh and "3p" in caught.value.en


ERRORS = [
    ("kang", "123456789m11p kang 5p", "“kang”", "'k'"),
    ("unknown-character", "12x3m", "“12x3m”", "'x'"),
    ("no-suit", "123", "“123”", "no suit letter"),
    ("word-at-the-end", "123456789m11p 碰", "“碰”", '"碰" needs a tile'),
    ("two-tiles", "123456789m 杠 55p", "55p", '"杠" takes one tile'),
    ("two-winning-tiles", "123456789m11p win 1p win 9m", "一张", "one winning tile"),
    ("winning-tile-not-typed", "123456789m11p win 4s", "4s", "4s is not among"),
    ("too-long", "1m " * (MAX_TYPED // 3 + 1), "太长", f"at most {MAX_TYPED}"),
]


@pytest.mark.parametrize(("typed", "zh", "en"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_say_what_is_wrong_in_chinese_and_english(typed: str, zh: str, en: str) -> None:
    with pytest.raises(TypedHandError) as caught:
        parse_typed(typed).hand()
    assert zh in caught.value.zh and en in caught.value.en
    assert str(caught.value) == f"{caught.value.zh} / {caught.value.en}"


def test_no_tiles_is_no_hand() -> None:
    with pytest.raises(TypedHandError, match="no tiles"):
        parse_typed("   ").hand()
