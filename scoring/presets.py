"""The named rule presets of RULES.md. ``chengdu`` is the default.

Each preset is a frozen ``Rules`` value; settlement knobs a preset does not mention keep chengdu's
defaults (see ``scoring.rules.Settlement``). Kong payments (刮风下雨, in base units from the discarder
of a 直杠 / each player still in for 面下杠 / each for 暗杠) follow the seed of each preset:

==================  =======  ======  =====  ==================================================
preset              直杠     面下杠  暗杠   from
==================  =======  ======  =====  ==================================================
chengdu             2        1       2      seed 001 (RULES.md, Settlement)
xuezhan_3cap        2        1       2      as chengdu (seed 003 part B says no other amounts)
qq_xuezhan          1        1       2      seed 000, the QQ game's 刮风下雨: 直杠 "1倍"
qq_xuezhan_7cap     2        1       2      seed 004: 直杠 "收取引杠者2倍点数"
points_linear       2        1       2      as chengdu
sichuan_bloody      2        1       2      as chengdu
==================  =======  ======  =====  ==================================================
"""

from __future__ import annotations

from dataclasses import replace

from scoring.errors import UnknownPresetError
from scoring.rules import Numbering, Rules, SelfDrawBonus, Settlement, Stacking

__all__ = [
    "CHENGDU",
    "DEFAULT_PRESET",
    "POINTS_LINEAR",
    "PRESETS",
    "QQ_XUEZHAN",
    "QQ_XUEZHAN_7CAP",
    "SICHUAN_BLOODY",
    "XUEZHAN_3CAP",
    "Rules",
    "get_preset",
]

CHENGDU = Rules(
    name="chengdu",
    description=(
        "成都 (default): fans add up from 0 (平胡 0), multiplier 2^fan, capped at 4 fan; "
        "天胡/地胡 score the cap; 自摸加底."
    ),
    numbering=Numbering.ZERO_BASED,
    stacking=Stacking.ADDITIVE,
    cap=4,
    values={
        "ping_hu": 0,
        "dui_dui_hu": 1,
        "qing_yi_se": 2,
        "dai_yao_jiu": 2,
        "qi_dui": 2,
        "jiang_dui": 2,  # on top of 对对胡: 将对 = 3
        "jin_gou_diao": 1,  # on top of 对对胡: 金钩钓 = 2
        "gen": 1,
        "gang_shang_hua": 1,
        "gang_shang_pao": 1,
        "qiang_gang": 1,
        "hai_di": 0,  # 海底 is off
    },
    limit_fans=frozenset({"tian_hu", "di_hu"}),
    settlement=Settlement(cha_jiao_cap=4),
)

XUEZHAN_3CAP = replace(
    CHENGDU,
    name="xuezhan_3cap",
    description="新都 血战版: as chengdu, capped at 3 fan (8x), no 自摸 bonus.",
    cap=3,
    settlement=Settlement(self_draw_bonus=SelfDrawBonus.NONE, cha_jiao_cap=3),
)

# The pattern values qq_xuezhan and points_linear share (平胡 1 ... 将对 4); each adds its own on top.
_PATTERN_VALUES = {
    "ping_hu": 1,
    "dui_dui_hu": 2,
    "qing_yi_se": 3,
    "dai_yao_jiu": 3,
    "qi_dui": 3,
    "qing_dui": 4,
    "jiang_dui": 4,
}

QQ_XUEZHAN = Rules(
    name="qq_xuezhan",
    description=(
        "QQ 血战: 平胡 is 1 fan, multiplier 2^(fan-1), no cap; only the largest pattern counts, "
        "then +1 per root (龙七对 / 清龙七对 include one) and per 杠上花 / 杠上炮 / 抢杠胡; 直杠 pays 1 base."
    ),
    numbering=Numbering.ONE_BASED,
    stacking=Stacking.LARGEST_PATTERN,
    cap=None,
    values={
        **_PATTERN_VALUES,
        "long_qi_dui": 5,
        "qing_qi_dui": 5,
        "qing_yao_jiu": 5,
        "qing_long_qi_dui": 6,
        "tian_hu": 6,
        "di_hu": 6,
        "gen": 1,
        "gang_shang_hua": 1,
        "gang_shang_pao": 1,
        "qiang_gang": 1,
    },
    absorbed_roots={"long_qi_dui": 1, "qing_long_qi_dui": 1},
    rootless=frozenset({"tian_hu", "di_hu"}),
    # seed 000: 直杠 1 base from the discarder, 面下杠 1 and 暗杠 2 from each player still in
    settlement=Settlement(direct_kong_base=1, added_kong_base=1, concealed_kong_base=2, cha_jiao_cap=None),
)

QQ_XUEZHAN_7CAP = replace(
    QQ_XUEZHAN,
    name="qq_xuezhan_7cap",
    description=(
        "QQ 血战 极品 (7 fan cap): as qq_xuezhan, a hand of 7 fan or more scores 7; 直杠 pays 2 base."
    ),
    cap=7,
    # seed 004: 直杠 2 base from the discarder, 面下杠 1 and 暗杠 2 from each player still in
    settlement=Settlement(direct_kong_base=2, added_kong_base=1, concealed_kong_base=2, cha_jiao_cap=7),
)

POINTS_LINEAR = Rules(
    name="points_linear",
    description=(
        "成都现行 points: the largest pattern's points (平胡 1 ... 天胡 8) plus 1 per root (杠 or 根), "
        "杠上花 +2, 抢杠胡 +1; no doubling, no cap."
    ),
    numbering=Numbering.POINTS,
    stacking=Stacking.LARGEST_PATTERN,
    cap=None,
    values={
        **_PATTERN_VALUES,
        "tian_hu": 8,
        "di_hu": 8,
        "gen": 1,
        "gang_shang_hua": 2,
        "qiang_gang": 1,
    },
    settlement=Settlement(cha_jiao_cap=None),
)

# The English "Sichuan Bloody Rules" rulebook as the open engines read it: chengdu's fans, capped at 3, with
# 金钩钓 for any all-pong hand won on the pair and 海底 +1; a 花猪 pays the cap to every other seat, 查叫
# counts no kong's 根, and 退税 repays players who have won since as well.
SICHUAN_BLOODY = replace(
    CHENGDU,
    name="sichuan_bloody",
    description=(
        '四川血战 英文版: the English "Sichuan Bloody Rules", as chengdu, capped at 3 fan; 金钩钓 (+1) for '
        "any 对对胡 won on the pair, 海底 +1; 自摸加底; a 花猪 pays the cap to every other seat; 查叫 counts "
        "no kong fan; 退税 repays players who have won since."
    ),
    cap=3,
    values={
        **{key: value for key, value in CHENGDU.values.items() if key != "jin_gou_diao"},
        "jin_gou_diao_any": 1,
        "hai_di": 1,
    },
    settlement=Settlement(
        self_draw_bonus=SelfDrawBonus.ADD_BASE,
        cha_jiao_cap=3,
        cha_jiao_kong_roots=False,
        hua_zhu_pays_cap=True,
        hua_zhu_pays_everyone=True,
        refund_to_won_players=True,
    ),
)

PRESETS: dict[str, Rules] = {
    rules.name: rules
    for rules in (CHENGDU, XUEZHAN_3CAP, QQ_XUEZHAN, QQ_XUEZHAN_7CAP, POINTS_LINEAR, SICHUAN_BLOODY)
}
DEFAULT_PRESET = CHENGDU.name


def get_preset(name: str) -> Rules:
    """The preset called ``name``; raises ``UnknownPresetError`` naming the valid ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise UnknownPresetError(name, tuple(PRESETS)) from None
