"""Every fan, combination and preset against the numbers of RULES.md."""

from __future__ import annotations

from dataclasses import replace

import pytest
from scoring_builders import hand

from scoring import CHENGDU, Hand, WinContext, get_preset, score
from scoring.decompose import decompositions
from scoring.fans import FANS, HandView, count_fans
from scoring.tiles import parse_tile, tile_counts

PLAIN = WinContext()
SELF = WinContext(self_drawn=True)
GSH = WinContext(self_drawn=True, gang_shang_hua=True)
TIAN = WinContext(self_drawn=True, tian_hu=True, dealer=True)
DI = WinContext(di_hu=True)

# Hands named once, used by several presets.
PING_HU = hand("123m456m789m234p55p")
ROBBED = hand("123m456m789m234p55p", win="3p")  # 抢杠胡: the hand holds one copy of the winning tile
DUI_DUI = hand("111m444m222p999p66p")  # seed 003: 111万 444万 222筒 999筒 66筒
QING = hand("123s567s234s888s99s")  # seed 003: 清一色
YAO_JIU = hand("123s123m789s789m99m")  # seed 003: 幺九
QI_DUI = hand("11m22m99m44p66p88p99p")  # seed 003: 七对
JIANG_DUI = hand("222s555s888s888m55m")  # seed 003: 将对
JIN_GOU = hand("77p", pong=("1m", "5m", "3p"), kong=("9p",))
ROOT_IN_RUN = hand("111123m456p789p55p")  # four 1m: a triplet plus a run
LONG_QI_DUI = hand("11222244p557799m")  # seed 003: 龙七对
LONG_QI_DUI_2 = hand("1111m9999m22m44p66p")  # 七对 with two roots
QING_DUI = hand("111m444m222m999m66m")  # seed 003: 清对
QING_QI_DUI = hand("11334466778899s")  # seed 003: 清七对
QING_YAO_JIU = hand("11123777888999p")  # seed 003: 清幺九
QING_LONG_QI_DUI = hand("11224444557799m")  # seed 003: 清龙七对
QING_LONG_3 = hand("11114444777799m")  # 清龙七对 with three roots
SHI_BA = hand("55p", kong=("1m", "9m"), concealed_kong=("3p",), added_kong=("7p",))
QING_SHI_BA = hand("55m", kong=("1m", "2m"), concealed_kong=("3m",), added_kong=("4m",))
KONG_HAND = hand("123m345m999p66p", kong=("2p",), win="6p")  # seed 003: 平胡 + 一杠
GSH_HAND = hand("123m456m789m55m", concealed_kong=("2p",), win="5m")

# (id, hand, context, preset, fans {key: fan}, combination key, raw, total)
CASES = [
    # --- chengdu: 0-based, additive, cap 4 -------------------------------------------------------------
    ("chengdu-ping_hu", PING_HU, PLAIN, "chengdu", {"ping_hu": 0}, None, 0, 0),
    ("chengdu-dui_dui_hu", DUI_DUI, PLAIN, "chengdu", {"dui_dui_hu": 1}, None, 1, 1),
    ("chengdu-qing_yi_se", QING, PLAIN, "chengdu", {"qing_yi_se": 2}, None, 2, 2),
    ("chengdu-dai_yao_jiu", YAO_JIU, PLAIN, "chengdu", {"dai_yao_jiu": 2}, None, 2, 2),
    ("chengdu-qi_dui", QI_DUI, PLAIN, "chengdu", {"qi_dui": 2}, None, 2, 2),
    ("chengdu-jiang_dui", JIANG_DUI, PLAIN, "chengdu", {"dui_dui_hu": 1, "jiang_dui": 2}, None, 3, 3),
    (
        "chengdu-jin_gou_diao",
        JIN_GOU,
        PLAIN,
        "chengdu",
        {"dui_dui_hu": 1, "jin_gou_diao": 1, "gen": 1},
        None,
        3,
        3,
    ),
    ("chengdu-gen-in-run", ROOT_IN_RUN, PLAIN, "chengdu", {"ping_hu": 0, "gen": 1}, None, 1, 1),
    ("chengdu-gen-kong", KONG_HAND, PLAIN, "chengdu", {"ping_hu": 0, "gen": 1}, None, 1, 1),
    (
        "chengdu-gang_shang_hua",
        GSH_HAND,
        GSH,
        "chengdu",
        {"ping_hu": 0, "gen": 1, "gang_shang_hua": 1},
        None,
        2,
        2,
    ),
    (
        "chengdu-gang_shang_pao",
        PING_HU,
        WinContext(gang_shang_pao=True),
        "chengdu",
        {"ping_hu": 0, "gang_shang_pao": 1},
        None,
        1,
        1,
    ),
    (
        "chengdu-qiang_gang",
        ROBBED,
        WinContext(qiang_gang=True),
        "chengdu",
        {"ping_hu": 0, "qiang_gang": 1},
        None,
        1,
        1,
    ),
    ("chengdu-hai_di-is-0", PING_HU, WinContext(hai_di=True), "chengdu", {"ping_hu": 0}, None, 0, 0),
    ("chengdu-tian_hu-is-cap", PING_HU, TIAN, "chengdu", {"tian_hu": 4}, None, 4, 4),
    ("chengdu-di_hu-is-cap", DUI_DUI, DI, "chengdu", {"dui_dui_hu": 1, "di_hu": 4}, None, 5, 4),
    ("chengdu-long_qi_dui", LONG_QI_DUI, PLAIN, "chengdu", {"qi_dui": 2, "gen": 1}, "long_qi_dui", 3, 3),
    ("chengdu-qing_dui", QING_DUI, PLAIN, "chengdu", {"dui_dui_hu": 1, "qing_yi_se": 2}, "qing_dui", 3, 3),
    (
        "chengdu-qing_qi_dui",
        QING_QI_DUI,
        PLAIN,
        "chengdu",
        {"qing_yi_se": 2, "qi_dui": 2},
        "qing_qi_dui",
        4,
        4,
    ),
    (
        "chengdu-qing_yao_jiu",
        QING_YAO_JIU,
        PLAIN,
        "chengdu",
        {"qing_yi_se": 2, "dai_yao_jiu": 2},
        "qing_yao_jiu",
        4,
        4,
    ),
    (
        "chengdu-qing_long_qi_dui",
        QING_LONG_QI_DUI,
        PLAIN,
        "chengdu",
        {"qing_yi_se": 2, "qi_dui": 2, "gen": 1},
        "qing_long_qi_dui",
        5,
        4,
    ),
    (
        "chengdu-shi_ba_luo_han",
        SHI_BA,
        PLAIN,
        "chengdu",
        {"dui_dui_hu": 1, "jin_gou_diao": 1, "gen": 4},
        "shi_ba_luo_han",
        6,
        4,
    ),
    (
        "chengdu-qing-shi_ba_luo_han-gang_shang_hua",
        QING_SHI_BA,
        GSH,
        "chengdu",
        {"dui_dui_hu": 1, "qing_yi_se": 2, "jin_gou_diao": 1, "gen": 4, "gang_shang_hua": 1},
        "qing_shi_ba_luo_han",
        9,
        4,
    ),
    # --- xuezhan_3cap: as chengdu, cap 3 ---------------------------------------------------------------
    (
        "3cap-qing_qi_dui",
        QING_QI_DUI,
        PLAIN,
        "xuezhan_3cap",
        {"qing_yi_se": 2, "qi_dui": 2},
        "qing_qi_dui",
        4,
        3,
    ),
    ("3cap-jiang_dui", JIANG_DUI, PLAIN, "xuezhan_3cap", {"dui_dui_hu": 1, "jiang_dui": 2}, None, 3, 3),
    ("3cap-tian_hu-is-cap", PING_HU, TIAN, "xuezhan_3cap", {"tian_hu": 3}, None, 3, 3),
    # --- qq_xuezhan: 1-based, largest pattern, no cap --------------------------------------------------
    ("qq-ping_hu", PING_HU, PLAIN, "qq_xuezhan", {"ping_hu": 1}, None, 1, 1),
    ("qq-dui_dui_hu", DUI_DUI, PLAIN, "qq_xuezhan", {"dui_dui_hu": 2}, None, 2, 2),
    ("qq-qing_yi_se", QING, PLAIN, "qq_xuezhan", {"qing_yi_se": 3}, None, 3, 3),
    ("qq-dai_yao_jiu", YAO_JIU, PLAIN, "qq_xuezhan", {"dai_yao_jiu": 3}, None, 3, 3),
    ("qq-qi_dui", QI_DUI, PLAIN, "qq_xuezhan", {"qi_dui": 3}, None, 3, 3),
    ("qq-qing_dui", QING_DUI, PLAIN, "qq_xuezhan", {"qing_dui": 4}, "qing_dui", 4, 4),
    ("qq-jiang_dui", JIANG_DUI, PLAIN, "qq_xuezhan", {"jiang_dui": 4}, None, 4, 4),
    ("qq-jin_gou_diao-is-dui_dui_hu", JIN_GOU, PLAIN, "qq_xuezhan", {"dui_dui_hu": 2, "gen": 1}, None, 3, 3),
    (
        "qq-long_qi_dui-absorbs-a-root",
        LONG_QI_DUI,
        PLAIN,
        "qq_xuezhan",
        {"long_qi_dui": 5},
        "long_qi_dui",
        5,
        5,
    ),
    (
        "qq-long_qi_dui-two-roots",
        LONG_QI_DUI_2,
        PLAIN,
        "qq_xuezhan",
        {"long_qi_dui": 5, "gen": 1},
        "long_qi_dui",
        6,
        6,
    ),
    ("qq-qing_qi_dui", QING_QI_DUI, PLAIN, "qq_xuezhan", {"qing_qi_dui": 5}, "qing_qi_dui", 5, 5),
    ("qq-qing_yao_jiu", QING_YAO_JIU, PLAIN, "qq_xuezhan", {"qing_yao_jiu": 5}, "qing_yao_jiu", 5, 5),
    (
        "qq-qing_long_qi_dui",
        QING_LONG_QI_DUI,
        PLAIN,
        "qq_xuezhan",
        {"qing_long_qi_dui": 6},
        "qing_long_qi_dui",
        6,
        6,
    ),
    (
        "qq-qing_long_qi_dui-three-roots",
        QING_LONG_3,
        PLAIN,
        "qq_xuezhan",
        {"qing_long_qi_dui": 6, "gen": 2},
        "qing_long_qi_dui",
        8,
        8,
    ),
    ("qq-tian_hu-counts-no-roots", ROOT_IN_RUN, TIAN, "qq_xuezhan", {"tian_hu": 6}, None, 6, 6),
    ("qq-di_hu", PING_HU, DI, "qq_xuezhan", {"di_hu": 6}, None, 6, 6),
    (
        "qq-gen-and-gang_shang_hua",
        GSH_HAND,
        GSH,
        "qq_xuezhan",
        {"ping_hu": 1, "gen": 1, "gang_shang_hua": 1},
        None,
        3,
        3,
    ),
    (
        "qq-gang_shang_pao",
        DUI_DUI,
        WinContext(gang_shang_pao=True),
        "qq_xuezhan",
        {"dui_dui_hu": 2, "gang_shang_pao": 1},
        None,
        3,
        3,
    ),
    (
        "qq-qiang_gang",
        ROBBED,
        WinContext(qiang_gang=True),
        "qq_xuezhan",
        {"ping_hu": 1, "qiang_gang": 1},
        None,
        2,
        2,
    ),
    ("qq-shi_ba_luo_han", SHI_BA, PLAIN, "qq_xuezhan", {"dui_dui_hu": 2, "gen": 4}, None, 6, 6),
    # --- qq_xuezhan_7cap ----------------------------------------------------------------------------------
    ("qq7-under-cap", QING_QI_DUI, PLAIN, "qq_xuezhan_7cap", {"qing_qi_dui": 5}, "qing_qi_dui", 5, 5),
    (
        "qq7-capped",
        QING_LONG_3,
        PLAIN,
        "qq_xuezhan_7cap",
        {"qing_long_qi_dui": 6, "gen": 2},
        "qing_long_qi_dui",
        8,
        7,
    ),
    (
        "qq7-qing-shi_ba-gsh",
        QING_SHI_BA,
        GSH,
        "qq_xuezhan_7cap",
        {"qing_dui": 4, "gen": 4, "gang_shang_hua": 1},
        "qing_dui",
        9,
        7,
    ),
    # --- points_linear: points add, no doubling, no cap (seed 003 part A examples) -------------------------
    ("points-ping_hu", PING_HU, PLAIN, "points_linear", {"ping_hu": 1}, None, 1, 1),
    ("points-ping_hu-kong", KONG_HAND, PLAIN, "points_linear", {"ping_hu": 1, "gen": 1}, None, 2, 2),
    (
        "points-dui_dui_hu-kong",
        hand("111m444m999p66p", kong=("2p",)),
        PLAIN,
        "points_linear",
        {"dui_dui_hu": 2, "gen": 1},
        None,
        3,
        3,
    ),
    (
        "points-qing_yi_se-kong",
        hand("123s567s234s77s", kong=("8s",)),
        PLAIN,
        "points_linear",
        {"qing_yi_se": 3, "gen": 1},
        None,
        4,
        4,
    ),
    # the seed says 1 根 here, but 7s and 8s both have all four copies: 2 roots
    (
        "points-qing_yi_se-two-roots",
        hand("123s567s678s888s77s"),
        PLAIN,
        "points_linear",
        {"qing_yi_se": 3, "gen": 2},
        None,
        5,
        5,
    ),
    ("points-qi_dui-two-roots", LONG_QI_DUI_2, PLAIN, "points_linear", {"qi_dui": 3, "gen": 2}, None, 5, 5),
    ("points-qing_dui", QING_DUI, PLAIN, "points_linear", {"qing_dui": 4}, "qing_dui", 4, 4),
    ("points-jiang_dui", JIANG_DUI, PLAIN, "points_linear", {"jiang_dui": 4}, None, 4, 4),
    ("points-dai_yao_jiu", YAO_JIU, PLAIN, "points_linear", {"dai_yao_jiu": 3}, None, 3, 3),
    ("points-tian_hu", PING_HU, TIAN, "points_linear", {"tian_hu": 8}, None, 8, 8),
    ("points-di_hu", PING_HU, DI, "points_linear", {"di_hu": 8}, None, 8, 8),
    (
        "points-gang_shang_hua-2",
        GSH_HAND,
        GSH,
        "points_linear",
        {"ping_hu": 1, "gen": 1, "gang_shang_hua": 2},
        None,
        4,
        4,
    ),
    (
        "points-qiang_gang-1",
        ROBBED,
        WinContext(qiang_gang=True),
        "points_linear",
        {"ping_hu": 1, "qiang_gang": 1},
        None,
        2,
        2,
    ),
    (
        "points-gang_shang_pao-0",
        PING_HU,
        WinContext(gang_shang_pao=True),
        "points_linear",
        {"ping_hu": 1},
        None,
        1,
        1,
    ),
]


@pytest.mark.parametrize(
    ("the_hand", "context", "preset", "fans", "combination", "raw", "total"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_fan_table(
    the_hand: Hand,
    context: WinContext,
    preset: str,
    fans: dict[str, int],
    combination: str | None,
    raw: int,
    total: int,
) -> None:
    rules = get_preset(preset)
    result = score(the_hand, context, rules)
    assert result.valid, result.error
    assert {item.key: item.fan for item in result.fans} == fans
    assert (result.combination.key if result.combination else None) == combination
    assert (result.raw_fan, result.total_fan) == (raw, total)
    assert sum(item.fan for item in result.fans) == result.raw_fan
    assert result.multiplier == rules.multiplier(total)


@pytest.mark.parametrize(
    ("preset", "total", "multiplier"),
    [
        ("chengdu", 0, 1),
        ("chengdu", 4, 16),
        ("xuezhan_3cap", 3, 8),
        ("qq_xuezhan", 1, 1),
        ("qq_xuezhan", 6, 32),
        ("qq_xuezhan_7cap", 7, 64),
        ("points_linear", 5, 5),
    ],
)
def test_multiplier_numbering(preset: str, total: int, multiplier: int) -> None:
    assert get_preset(preset).multiplier(total) == multiplier


def test_chengdu_nine_fan_hand_is_512x_raw_and_16x_capped() -> None:
    result = score(QING_SHI_BA, GSH)
    assert result.raw_fan == 9 and CHENGDU.multiplier(result.raw_fan) == 512
    assert result.total_fan == 4 and result.multiplier == 16
    assert result.combination is not None and result.combination.name_zh == "清十八罗汉"


@pytest.mark.parametrize(
    ("the_hand", "root"),
    [
        (KONG_HAND, "2p"),
        (ROOT_IN_RUN, "1m"),
        (hand("123m456p789p55p", pong=("1m",)), "1m"),
        (hand("11m123m123m456p789p"), "1m"),
        (LONG_QI_DUI, "2p"),
    ],
    ids=["declared-kong", "quad-as-triplet-and-run", "pong-and-run", "pair-and-two-runs", "quad-in-qi_dui"],
)
def test_gen_counts_every_kind_of_root(the_hand: Hand, root: str) -> None:
    result = score(the_hand)
    assert result.valid
    assert {item.key: item.count for item in result.fans}["gen"] == 1
    assert [tile for tile, count in enumerate(tile_counts(the_hand.all_tiles)) if count == 4] == [
        parse_tile(root)
    ]


def test_hai_di_scores_when_a_preset_turns_it_on() -> None:
    rules = replace(CHENGDU, name="with_hai_di", values={**CHENGDU.values, "hai_di": 1})
    result = score(PING_HU, WinContext(hai_di=True, self_drawn=True), rules)
    assert {item.key: item.fan for item in result.fans} == {"ping_hu": 0, "hai_di": 1}


def test_jin_gou_diao_needs_four_melds() -> None:
    three_melds = hand("77p999p", pong=("1m", "5m", "3p"))
    assert {item.key for item in score(three_melds).fans} == {"dui_dui_hu"}


def test_dai_yao_jiu_is_not_counted_for_seven_pairs() -> None:
    result = score(hand("1111m9999m11p99p99p"))
    assert "dai_yao_jiu" not in {item.key for item in result.fans}
    assert {item.key for item in result.fans} == {"qi_dui", "gen"}


def test_every_fan_has_a_rule_whose_docstring_starts_with_its_chinese_name() -> None:
    assert set(FANS) == {
        "ping_hu",
        "dui_dui_hu",
        "qing_yi_se",
        "dai_yao_jiu",
        "qi_dui",
        "jiang_dui",
        "jin_gou_diao",
        "jin_gou_diao_any",
        "gen",
        "gang_shang_hua",
        "gang_shang_pao",
        "qiang_gang",
        "hai_di",
        "tian_hu",
        "di_hu",
    }
    for definition in FANS.values():
        assert (definition.count.__doc__ or "").startswith(definition.name_zh)


@pytest.mark.parametrize(
    ("the_hand", "context", "expected"),
    [
        (DUI_DUI, PLAIN, {"ping_hu": 1, "dui_dui_hu": 1, "jin_gou_diao_any": 1}),  # won on 66p
        (QI_DUI, PLAIN, {"ping_hu": 1, "qi_dui": 1}),
        (QING_LONG_3, PLAIN, {"ping_hu": 1, "qing_yi_se": 1, "qi_dui": 1, "gen": 3}),
        (JIN_GOU, SELF, {"ping_hu": 1, "dui_dui_hu": 1, "jin_gou_diao": 1, "jin_gou_diao_any": 1, "gen": 1}),
        (GSH_HAND, GSH, {"ping_hu": 1, "gen": 1, "gang_shang_hua": 1}),
    ],
    ids=["dui_dui_hu", "qi_dui", "qing_long_qi_dui", "jin_gou_diao", "gang_shang_hua"],
)
def test_fan_rules_report_counts(the_hand: Hand, context: WinContext, expected: dict[str, int]) -> None:
    counts = tuple(tile_counts(the_hand.all_tiles))
    views = [
        HandView(reading, counts, the_hand.melds, context, the_hand.win_tile)
        for reading in decompositions(the_hand)
    ]
    assert expected in [count_fans(view) for view in views]
