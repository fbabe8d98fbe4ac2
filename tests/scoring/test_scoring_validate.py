"""Every reason code, and every contradiction in the win context."""

from __future__ import annotations

from dataclasses import replace

import pytest
from scoring_builders import hand

from scoring import CHENGDU, ErrorCode, Hand, Meld, MeldKind, WinContext, is_win, score, waits
from scoring.hand import concealed_count, tile_count
from scoring.tiles import TileParseError
from scoring.validate import CONTEXT_RULES, ContextFacts, check_context, validate

GOOD = hand("123m456m789m234p55p")
GOOD_KONG = hand("123m456m789m55m", concealed_kong=("2p",), win="5m")


@pytest.mark.parametrize(
    ("the_hand", "context", "code"),
    [
        (hand("123m456m789m234p5p"), WinContext(), ErrorCode.WRONG_TILE_COUNT),
        (hand("123m456m789m234p555p"), WinContext(), ErrorCode.WRONG_TILE_COUNT),
        (hand("123m456m789m234p55p", kong=("9s",)), WinContext(), ErrorCode.WRONG_TILE_COUNT),
        (hand("11m", pong=("1s", "2s", "3s", "4s", "5s")), WinContext(), ErrorCode.WRONG_TILE_COUNT),
        (hand("11111m2345m789m55p"), WinContext(), ErrorCode.TOO_MANY_COPIES),
        (hand("11m456m789m555p", pong=("1m",)), WinContext(), ErrorCode.TOO_MANY_COPIES),
        (hand("123m456p789s234m55m"), WinContext(), ErrorCode.THREE_SUITS),
        (GOOD, WinContext(void_suit="p"), ErrorCode.VOID_SUIT_PRESENT),
        (hand("123m456m789m234p55p", win="9s"), WinContext(), ErrorCode.WIN_TILE_NOT_IN_HAND),
        (hand("123m456m789m235p55p"), WinContext(), ErrorCode.NOT_A_WINNING_SHAPE),
        (hand("11m22m33m44m55m66m7m8m"), WinContext(), ErrorCode.NOT_A_WINNING_SHAPE),
        (hand("12m", pong=("5p", "6p", "7p", "8p")), WinContext(), ErrorCode.NOT_A_WINNING_SHAPE),
        (GOOD, WinContext(gang_shang_hua=True, self_drawn=True), ErrorCode.CONTRADICTORY_CONTEXT),
    ],
    ids=[
        "13-tiles",
        "15-tiles",
        "kong-without-its-extra-tile",
        "five-melds",
        "fifth-copy-concealed",
        "fifth-copy-with-meld",
        "three-suits",
        "void-suit",
        "win-tile-not-concealed",
        "not-a-shape",
        "almost-seven-pairs",
        "four-melds-no-pair",
        "context",
    ],
)
def test_error_codes(the_hand: Hand, context: WinContext, code: ErrorCode) -> None:
    result = score(the_hand, context)
    assert not result.valid
    assert result.error is not None and result.error.code is code
    assert result.error.message
    assert (
        result.fans == ()
        and result.raw_fan is None
        and result.total_fan is None
        and result.multiplier is None
    )
    assert result.to_json()["error"] == {"code": code.value, "message": result.error.message}


ONE_FAN = replace(CHENGDU, name="chengdu_one_fan", min_fan=1)  # a house rule: 一番起胡


def test_a_win_below_the_rules_least_fan_is_no_win() -> None:
    plain = hand("123m456m789m234p55p")  # 平胡: no fan
    assert score(plain).valid and is_win(plain)
    result = score(plain, WinContext(), ONE_FAN)
    assert not result.valid and result.error is not None and result.error.code is ErrorCode.TOO_FEW_FAN
    assert "0 fan" in result.error.message and "1" in result.error.message and not is_win(plain, ONE_FAN)
    one_suit = hand("123m456m789m234m55m")  # 清一色
    assert score(one_suit, WinContext(), ONE_FAN).valid and is_win(one_suit, ONE_FAN)
    with pytest.raises(ValueError, match="negative"):
        replace(CHENGDU, min_fan=-1)


def test_a_wait_below_the_rules_least_fan_wins_nothing() -> None:
    # 123m456m789m 2345p waits on 2p and 5p, both 平胡 (no fan): under 一番起胡 it waits on nothing
    concealed = hand("123m456m789m234p5p", win="5p").concealed[:13]
    assert [w.tile for w in waits(concealed, (), WinContext())] != []
    assert waits(concealed, (), WinContext(), ONE_FAN) == ()


@pytest.mark.parametrize("context", [WinContext(), WinContext(void_suit="p"), WinContext(self_drawn=True)])
def test_is_win_is_a_valid_score(context: WinContext) -> None:
    for the_hand in (GOOD, GOOD_KONG, hand("123m456p789s234m55m"), hand("123m456m789m235p55p")):
        for rules in (CHENGDU, ONE_FAN):
            assert is_win(the_hand, rules, context) == score(the_hand, context, rules).valid


def test_every_error_code_is_reachable() -> None:
    """The table above, and the least fan, cover every code."""
    covered = {
        ErrorCode.TOO_FEW_FAN,
        ErrorCode.WRONG_TILE_COUNT,
        ErrorCode.TOO_MANY_COPIES,
        ErrorCode.THREE_SUITS,
        ErrorCode.VOID_SUIT_PRESENT,
        ErrorCode.WIN_TILE_NOT_IN_HAND,
        ErrorCode.NOT_A_WINNING_SHAPE,
        ErrorCode.CONTRADICTORY_CONTEXT,
    }
    assert covered == set(ErrorCode)


def test_void_suit_absent_is_fine() -> None:
    assert score(GOOD, WinContext(void_suit="s")).valid


def test_wrong_count_message_names_expected_and_actual() -> None:
    result = score(hand("123m456m789m55m", kong=("2p",), win="5m"), WinContext())
    assert result.valid
    result = score(hand("123m456m789m5m", kong=("2p",), win="5m"))
    assert (
        result.error is not None
        and "expected 15" in result.error.message
        and "got 14" in result.error.message
    )


@pytest.mark.parametrize(
    ("the_hand", "waiting"),
    [
        (GOOD, False),
        (GOOD_KONG, False),
        (hand("55m", kong=("1m", "2m", "3p"), concealed_kong=("9p",)), False),
        (hand("123m456m789m234p5p"), True),
        (hand("5m", pong=("1m",), kong=("2m", "3p"), concealed_kong=("9p",)), True),
    ],
    ids=["plain", "one-kong", "four-kongs", "waiting", "waiting-three-kongs"],
)
def test_a_hands_tile_count_is_fourteen_plus_one_per_kong(the_hand: Hand, waiting: bool) -> None:
    kongs = the_hand.kong_count
    assert len(the_hand.all_tiles) == tile_count(kongs, waiting=waiting) == 14 + kongs - waiting
    assert len(the_hand.concealed) == concealed_count(len(the_hand.melds), waiting=waiting)


# (id, context, hand, fragment of the message)
CONTRADICTIONS = [
    ("gsh+gsp", WinContext(gang_shang_hua=True, gang_shang_pao=True, self_drawn=True), GOOD_KONG, "杠上炮"),
    ("gsh+qiang_gang", WinContext(gang_shang_hua=True, qiang_gang=True), GOOD_KONG, "抢杠胡"),
    ("gsh-not-self-drawn", WinContext(gang_shang_hua=True), GOOD_KONG, "self-drawn"),
    ("gsh-without-kong", WinContext(gang_shang_hua=True, self_drawn=True), GOOD, "needs a kong"),
    ("gsp+qiang_gang", WinContext(gang_shang_pao=True, qiang_gang=True), GOOD, "抢杠胡"),
    ("gsp-self-drawn", WinContext(gang_shang_pao=True, self_drawn=True), GOOD, "discard"),
    ("qiang_gang-self-drawn", WinContext(qiang_gang=True, self_drawn=True), GOOD, "自摸"),
    ("qiang_gang-two-copies", WinContext(qiang_gang=True), GOOD, "robbed pong"),
    ("tian_hu+di_hu", WinContext(tian_hu=True, di_hu=True, dealer=True, self_drawn=True), GOOD, "地胡"),
    ("tian_hu-on-discard", WinContext(tian_hu=True, dealer=True), GOOD, "self_drawn"),
    ("tian_hu-with-melds", WinContext(tian_hu=True, dealer=True, self_drawn=True), GOOD_KONG, "no melds"),
    ("di_hu-dealer", WinContext(di_hu=True, dealer=True), GOOD, "non-dealer"),
    ("di_hu-with-melds", WinContext(di_hu=True), GOOD_KONG, "no melds"),
    (
        "di_hu+qiang_gang",
        WinContext(di_hu=True, qiang_gang=True),
        hand("123m456m789m234p55p", win="3p"),
        "first",
    ),
    ("hai_di+tian_hu", WinContext(hai_di=True, tian_hu=True, dealer=True, self_drawn=True), GOOD, "海底"),
    ("hai_di+di_hu", WinContext(hai_di=True, di_hu=True), GOOD, "海底"),
]


@pytest.mark.parametrize(
    ("context", "the_hand", "fragment"),
    [case[1:] for case in CONTRADICTIONS],
    ids=[c[0] for c in CONTRADICTIONS],
)
def test_contradictory_contexts(context: WinContext, the_hand: Hand, fragment: str) -> None:
    result = score(the_hand, context)
    assert result.error is not None
    assert result.error.code is ErrorCode.CONTRADICTORY_CONTEXT
    assert fragment in result.error.message


def test_every_context_rule_is_exercised() -> None:
    messages = set()
    for _, context, the_hand, _ in CONTRADICTIONS:
        copies = the_hand.all_tiles.count(the_hand.win_tile) if the_hand.win_tile is not None else None
        error = check_context(ContextFacts(context, the_hand.melds, copies))
        assert error is not None
        messages.add(error.message)
    assert messages == {message for _, _, message in CONTEXT_RULES}


@pytest.mark.parametrize(
    ("the_hand", "context"),
    [
        (GOOD_KONG, WinContext(gang_shang_hua=True, self_drawn=True)),
        (GOOD, WinContext(gang_shang_pao=True)),
        (hand("123m456m789m234p55p", win="3p"), WinContext(qiang_gang=True)),
        (GOOD, WinContext(tian_hu=True, dealer=True, self_drawn=True)),
        (GOOD, WinContext(tian_hu=True, self_drawn=True)),
        (GOOD, WinContext(di_hu=True)),
        (GOOD, WinContext(di_hu=True, self_drawn=True)),
        (GOOD, WinContext(di_hu=True, gang_shang_pao=True)),
        (GOOD_KONG, WinContext(hai_di=True, self_drawn=True, gang_shang_hua=True)),
        (GOOD, WinContext(hai_di=True)),
    ],
    ids=[
        "gsh",
        "gsp",
        "qiang_gang",
        "tian_hu",
        "tian_hu-dealer-implied",
        "di_hu-discard",
        "di_hu-self-drawn",
        "di_hu-gsp",
        "hai_di-gsh",
        "hai_di-discard",
    ],
)
def test_consistent_contexts_are_accepted(the_hand: Hand, context: WinContext) -> None:
    assert validate(the_hand, context) is None
    assert score(the_hand, context).valid


def test_checks_run_in_order_count_first() -> None:
    """A hand that is wrong in several ways reports the tile count first, then copies, then suits."""
    result = score(hand("11111m456p789s5s"), WinContext(gang_shang_hua=True))
    assert result.error is not None and result.error.code is ErrorCode.WRONG_TILE_COUNT
    result = score(hand("11111m456p789s555s"), WinContext(gang_shang_hua=True))
    assert result.error is not None and result.error.code is ErrorCode.TOO_MANY_COPIES


@pytest.mark.parametrize(
    "build",
    [
        lambda: Hand((0, 1, 27)),
        lambda: Hand((0, 1, -1)),
        lambda: Hand((0, 1, 2), win_tile=99),
        lambda: Meld(MeldKind.PONG, 30),
        lambda: Hand.parse("123x"),
        lambda: WinContext(void_suit="z"),
    ],
    ids=["tile-27", "tile-negative", "win-tile-99", "meld-tile-30", "unknown-letter", "void-suit-z"],
)
def test_misuse_raises(build: object) -> None:
    with pytest.raises(TileParseError):
        build()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("text", "tiles"), [("123w", (0, 1, 2)), ("12饼", (9, 10)), ("9索", (26,)), ("1万2筒3条", (0, 10, 20))]
)
def test_suit_aliases_read_as_their_suit(text: str, tiles: tuple[int, ...]) -> None:
    assert Hand.parse(text).concealed == tiles


def test_t_is_refused_as_it_could_be_either_suit() -> None:
    with pytest.raises(TileParseError, match=r"筒 .* 条"):
        Hand.parse("123t")
