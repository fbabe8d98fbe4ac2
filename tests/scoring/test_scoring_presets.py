"""Presets: names, lookup, values, settlement knobs, JSON, and house rules as changed copies."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, replace
from typing import Any

import pytest
from scoring_builders import hand

from scoring import CHENGDU, PRESETS, UnknownPresetError, WinContext, get_preset, score
from scoring.presets import DEFAULT_PRESET
from scoring.rules import ChaJiao, Numbering, Rules, SelfDrawBonus, Settlement, Stacking


def test_preset_names() -> None:
    assert list(PRESETS) == [
        "chengdu",
        "xuezhan_3cap",
        "qq_xuezhan",
        "qq_xuezhan_7cap",
        "points_linear",
        "sichuan_bloody",
    ]
    assert DEFAULT_PRESET == "chengdu"
    for name, rules in PRESETS.items():
        assert get_preset(name) is rules and rules.name == name and rules.description
        # the page shows a preset by its description's head: in Chinese, as the players say it
        title = rules.description.split(":")[0]
        assert any("\u4e00" <= char <= "\u9fff" for char in title), f"{name}: {title!r} has no Chinese"


def test_unknown_preset_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownPresetError) as caught:
        get_preset("beijing")
    assert "beijing" in str(caught.value)
    for name in PRESETS:
        assert name in str(caught.value)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("name", "numbering", "stacking", "cap"),
    [
        ("chengdu", Numbering.ZERO_BASED, Stacking.ADDITIVE, 4),
        ("xuezhan_3cap", Numbering.ZERO_BASED, Stacking.ADDITIVE, 3),
        ("qq_xuezhan", Numbering.ONE_BASED, Stacking.LARGEST_PATTERN, None),
        ("qq_xuezhan_7cap", Numbering.ONE_BASED, Stacking.LARGEST_PATTERN, 7),
        ("points_linear", Numbering.POINTS, Stacking.LARGEST_PATTERN, None),
        ("sichuan_bloody", Numbering.ZERO_BASED, Stacking.ADDITIVE, 3),
    ],
)
def test_preset_shape(name: str, numbering: Numbering, stacking: Stacking, cap: int | None) -> None:
    rules = get_preset(name)
    assert (rules.numbering, rules.stacking, rules.cap) == (numbering, stacking, cap)


def test_settlement_knobs() -> None:
    chengdu = CHENGDU.settlement
    assert (chengdu.direct_kong_base, chengdu.added_kong_base, chengdu.concealed_kong_base) == (2, 1, 2)
    assert chengdu.self_draw_bonus is SelfDrawBonus.ADD_BASE
    assert chengdu.hua_zhu_base == 8 and chengdu.cha_jiao is ChaJiao.LARGEST and chengdu.cha_jiao_cap == 4
    assert chengdu.direct_kong_others_base == 0  # no 暴雨
    assert chengdu.refund_kongs_when_not_ready
    xuezhan = get_preset("xuezhan_3cap").settlement
    assert xuezhan.self_draw_bonus is SelfDrawBonus.NONE and xuezhan.cha_jiao_cap == 3
    assert get_preset("qq_xuezhan").settlement.cha_jiao_cap is None
    assert get_preset("qq_xuezhan_7cap").settlement.cha_jiao_cap == 7


def test_rules_and_settlement_are_frozen() -> None:
    with pytest.raises(FrozenInstanceError):
        CHENGDU.cap = 5  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        CHENGDU.settlement.hua_zhu_base = 16  # type: ignore[misc]
    with pytest.raises(TypeError):
        CHENGDU.values["qing_yi_se"] = 5  # type: ignore[index]


def test_a_house_rule_is_a_changed_copy() -> None:
    house = replace(
        CHENGDU, name="house_5cap", cap=5, settlement=Settlement(direct_kong_base=1, cha_jiao_cap=5)
    )
    result = score(hand("11224444557799m"), rules=house)
    assert (result.raw_fan, result.total_fan, result.preset) == (5, 5, "house_5cap")
    assert house.fan_value("tian_hu") == 5  # limit fans follow the cap
    assert CHENGDU.cap == 4


@pytest.mark.parametrize(
    "changes",
    [
        {"values": {"no_such_fan": 1}},
        {"cap": None},  # chengdu's limit fans need a cap
        {"stacking": Stacking.LARGEST_PATTERN, "values": {"qing_yi_se": 3}},  # no 平胡 value
    ],
    ids=["unknown-key", "limit-without-cap", "largest-without-ping_hu"],
)
def test_inconsistent_rules_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        replace(CHENGDU, **changes)  # type: ignore[arg-type]


def test_rules_json() -> None:
    for rules in PRESETS.values():
        payload = rules.to_json()
        assert json.loads(json.dumps(payload, ensure_ascii=False)) == payload
        assert {"name", "description", "numbering", "stacking", "cap", "fans", "settlement"} <= set(payload)
    chengdu = {row["key"]: row for row in CHENGDU.to_json()["fans"]}
    assert chengdu["qing_yi_se"]["fan"] == 2 and chengdu["qing_yi_se"]["name_zh"] == "清一色"
    assert chengdu["tian_hu"]["fan"] == 4 and chengdu["tian_hu"]["limit"]
    assert chengdu["long_qi_dui"]["fan"] == 3 and chengdu["long_qi_dui"]["derived"]
    assert chengdu["qing_long_qi_dui"]["fan"] == 5
    assert chengdu["shi_ba_luo_han"]["fan"] == 6
    assert chengdu["qing_dui"]["fan"] == 3 and chengdu["qing_qi_dui"]["fan"] == 4
    assert chengdu["qing_yao_jiu"]["fan"] == 4
    qq = {row["key"]: row["fan"] for row in get_preset("qq_xuezhan").to_json()["fans"]}
    assert qq["qing_long_qi_dui"] == 6 and qq["ping_hu"] == 1 and qq["tian_hu"] == 6
    assert "jin_gou_diao" not in qq
    points = {row["key"]: row["fan"] for row in get_preset("points_linear").to_json()["fans"]}
    assert points["tian_hu"] == 8 and points["gang_shang_hua"] == 2 and "gang_shang_pao" not in points
    assert CHENGDU.to_json()["settlement"]["self_draw_bonus"] == "add_base"


def test_rules_are_hashable_and_comparable() -> None:
    assert hash(CHENGDU) == hash(replace(CHENGDU))
    assert replace(CHENGDU) == CHENGDU
    assert get_preset("qq_xuezhan") != get_preset("qq_xuezhan_7cap")
    assert isinstance(CHENGDU, Rules)


# ---- sichuan_bloody: the English "Sichuan Bloody Rules", where its numbers differ from chengdu's

BLOODY_CASES = [
    # (id, hand, context, chengdu total fan, sichuan_bloody total fan)
    ("concealed-pongs-won-on-the-pair", hand("111m444m222p999p66p"), WinContext(), 1, 2),
    ("melded-pongs-won-on-the-pair", hand("77p", pong=("1m", "5m", "3p", "9p")), WinContext(), 2, 2),
    ("pongs-won-on-a-pong", hand("111m444m222p66p999p", win="9p"), WinContext(), 1, 1),
    ("hai_di", hand("123m456m789m123p55p"), WinContext(hai_di=True), 0, 1),
    ("qing_qi_dui-capped-at-3", hand("11223344556677m"), WinContext(), 4, 3),
]


@pytest.mark.parametrize(
    ("the_hand", "context", "chengdu", "bloody"),
    [case[1:] for case in BLOODY_CASES],
    ids=[case[0] for case in BLOODY_CASES],
)
def test_sichuan_bloody_scores(the_hand: Any, context: WinContext, chengdu: int, bloody: int) -> None:
    assert score(the_hand, context, CHENGDU).total_fan == chengdu
    result = score(the_hand, context, get_preset("sichuan_bloody"))
    assert result.total_fan == bloody


def test_sichuan_bloody_names_its_golden_hook() -> None:
    result = score(hand("111m444m222p999p66p"), WinContext(), get_preset("sichuan_bloody"))
    assert {item.key: item.fan for item in result.fans} == {
        "dui_dui_hu": 1,
        "jin_gou_diao_any": 1,
    }
    assert result.multiplier == 4 and result.payment == 4


def test_sichuan_bloody_self_drawn_pays_one_base_more() -> None:
    result = score(hand("123m456m789m123p55p"), WinContext(self_drawn=True), get_preset("sichuan_bloody"))
    assert result.payment == 2  # 2**0 + 1
