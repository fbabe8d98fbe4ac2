"""``score``: the worked examples of RULES.md, the best reading, and the ``Score`` value and its JSON."""

from __future__ import annotations

import json

import pytest
from scoring_builders import SCORE_JSON_KEYS, hand

from scoring import CHENGDU, PRESETS, Hand, WinContext, get_preset, score
from scoring.decompose import decompositions


def test_rules_example_111222333m78999p_is_dai_yao_jiu_only_as_three_123m() -> None:
    the_hand = hand("111222333m78999p")
    labels = {reading.labels() for reading in decompositions(the_hand)}
    assert labels == {("123m", "123m", "123m", "789p", "99p"), ("111m", "222m", "333m", "789p", "99p")}
    result = score(the_hand)
    assert [item.key for item in result.fans] == ["dai_yao_jiu"]
    assert result.total_fan == 2
    assert result.decomposition == ("123m", "123m", "123m", "789p", "99p")


def test_rules_example_seed_003_has_no_root() -> None:
    """Seed 003 scores 123万345万222筒999筒66筒 as 平胡 + 根, but no tile has four copies: 平胡 only."""
    result = score(hand("123m345m222p999p66p"))
    assert [item.key for item in result.fans] == ["ping_hu"]
    assert result.total_fan == 0


def test_seed_example_seven_pairs_with_a_quad_is_long_qi_dui() -> None:
    """Seed 003 part B calls 2244552299万1199筒 七对 (2 fan); its four 2万 make it 龙七对 (3)."""
    result = score(hand("2244552299m1199p"))
    assert result.combination is not None and result.combination.name_zh == "龙七对"
    assert result.total_fan == 3


def test_best_reading_is_kept_seven_pairs_over_runs() -> None:
    the_hand = hand("112233m445566m77m")
    assert len(decompositions(the_hand)) >= 2  # runs and 七对
    result = score(the_hand)
    assert result.combination is not None and result.combination.key == "qing_qi_dui"
    assert result.total_fan == 4
    assert len(result.decomposition) == 7


def test_best_reading_is_kept_pongs_over_runs() -> None:
    """111222333m as pongs makes 对对胡 (1); as runs it is 平胡 (0)."""
    result = score(hand("111222333m444p55p"))
    assert [item.key for item in result.fans] == ["dui_dui_hu"]
    assert result.decomposition == ("111m", "222m", "333m", "444p", "55p")


def test_decomposition_labels_sets_then_melds_then_pair() -> None:
    result = score(hand("123345m66999p", kong=("2p",), win="6p"))
    assert result.decomposition == ("123m", "345m", "999p", "2222p(kong)", "66p")
    result = score(hand("55m", pong=("1m",), kong=("2m",), added_kong=("3m",), concealed_kong=("4m",)))
    assert result.decomposition == (
        "111m(pong)",
        "2222m(kong)",
        "3333m(added kong)",
        "4444m(concealed kong)",
        "55m",
    )


def test_score_json_has_exactly_the_documented_keys() -> None:
    result = score(hand("11224444557799m"))
    payload = result.to_json()
    assert set(payload) == SCORE_JSON_KEYS
    assert payload["valid"] is True and payload["error"] is None and payload["preset"] == "chengdu"
    assert payload["combination"] == {
        "key": "qing_long_qi_dui",
        "name_zh": "清龙七对",
        "name_en": "Pure dragon seven pairs",
    }
    assert payload["fans"][0] == {
        "key": "qing_yi_se",
        "name_zh": "清一色",
        "name_en": "Full flush",
        "fan": 2,
        "count": 1,
    }
    assert (payload["raw_fan"], payload["total_fan"], payload["multiplier"]) == (5, 4, 16)
    assert payload["decomposition"] == ["11m", "22m", "44m", "44m", "55m", "77m", "99m"]
    assert json.loads(json.dumps(payload, ensure_ascii=False)) == payload


def test_invalid_score_json() -> None:
    payload = score(hand("123m456p789s234m55m")).to_json()
    assert set(payload) == SCORE_JSON_KEYS
    assert payload["valid"] is False
    assert payload["error"]["code"] == "three_suits"
    assert payload["fans"] == [] and payload["combination"] is None and payload["decomposition"] == []
    assert payload["raw_fan"] is None and payload["total_fan"] is None and payload["multiplier"] is None
    assert payload["payment"] is None and payload["payers"] is None


@pytest.mark.parametrize(
    ("context", "preset", "payment", "payers"),
    [
        (WinContext(), "chengdu", 8, "discarder"),  # 清一色 + 根: 3 fan, x8
        (WinContext(self_drawn=True), "chengdu", 9, "each_player_still_in"),  # 自摸加底: one base more
        (WinContext(self_drawn=True), "xuezhan_3cap", 8, "each_player_still_in"),  # no 自摸 bonus
        (WinContext(qiang_gang=True), "xuezhan_3cap", 8, "robbed_konger"),  # the konger pays as a discarder
    ],
)
def test_a_win_says_what_each_payer_pays(context: WinContext, preset: str, payment: int, payers: str) -> None:
    result = score(hand("67788889m", pong=("1m", "2m"), win="6m"), context, get_preset(preset))
    assert result.total_fan == 3  # 抢杠 adds a fan, capped at 3 under xuezhan_3cap
    assert (result.to_json()["payment"], result.to_json()["payers"]) == (payment, payers)


def test_self_drawn_add_fan_doubles_within_the_cap() -> None:
    from dataclasses import replace

    from scoring.rules import SelfDrawBonus, Settlement

    rules = replace(CHENGDU, settlement=Settlement(self_draw_bonus=SelfDrawBonus.ADD_FAN))
    assert rules.win_payment(2, self_drawn=True) == 8 and rules.win_payment(2, self_drawn=False) == 4
    assert rules.win_payment(4, self_drawn=True) == 16  # at the cap (4 fan) one more fan adds nothing


def test_score_carries_the_preset_name() -> None:
    for name, rules in PRESETS.items():
        assert score(hand("123m456m789m234p55p"), WinContext(), rules).preset == name


def test_score_is_frozen() -> None:
    result = score(hand("123m456m789m234p55p"))
    with pytest.raises(AttributeError):
        result.total_fan = 3  # type: ignore[misc]


def test_chinese_input_scores_like_letters() -> None:
    assert score(Hand.parse("123万345万66999筒", kongs=("2筒",), win="6筒")) == score(
        hand("123m345m66999p", kong=("2p",), win="6p")
    )


def test_default_rules_are_chengdu() -> None:
    the_hand = hand("111m444m222m999m66m")
    assert (
        score(the_hand)
        == score(the_hand, WinContext(), CHENGDU)
        == score(the_hand, rules=get_preset("chengdu"))
    )


def test_win_tile_defaults_to_last_tile_and_only_matters_for_context() -> None:
    assert score(hand("123m456m789m234p55p")) == score(hand("123m456m789m234p55p", win="1m"))
