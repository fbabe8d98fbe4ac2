"""How fans combine and exclude each other, as data.

``COMBINATIONS`` names the well-known stacks of fans (龙七对 = 七对 + 根, 清对 = 清一色 + 对对胡, ...). A
combination is shown to the user by its Chinese and English names; under ``largest_pattern`` presets it
is also a pattern with its own value (QQ: 清龙七对 = 6). The table is ordered most specific first: a hand
is named after the first combination it matches.

``EXCLUDED_BY`` says which fans drop out when another one is scored: 平胡 is only listed when no other
pattern is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Combination:
    key: str
    name_zh: str
    name_en: str
    requires: tuple[tuple[str, int], ...]  # (fan key, minimum count)
    keys: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", frozenset(key for key, _ in self.requires))

    def matches(self, found: Mapping[str, int]) -> bool:
        if not found.keys() >= self.keys:
            return False
        for key, count in self.requires:  # noqa: SIM110 - a plain loop: this runs for every reading
            if found[key] < count:
                return False
        return True

    def to_json(self) -> dict[str, str]:
        return {"key": self.key, "name_zh": self.name_zh, "name_en": self.name_en}


COMBINATIONS: tuple[Combination, ...] = (
    Combination(
        "qing_long_qi_dui",
        "清龙七对",
        "Pure dragon seven pairs",
        (("qing_yi_se", 1), ("qi_dui", 1), ("gen", 1)),
    ),
    Combination("long_qi_dui", "龙七对", "Dragon seven pairs", (("qi_dui", 1), ("gen", 1))),
    Combination("qing_qi_dui", "清七对", "Pure seven pairs", (("qing_yi_se", 1), ("qi_dui", 1))),
    Combination(
        "qing_shi_ba_luo_han",
        "清十八罗汉",
        "Pure eighteen arhats",
        (("qing_yi_se", 1), ("dui_dui_hu", 1), ("jin_gou_diao", 1), ("gen", 4)),
    ),
    Combination(
        "shi_ba_luo_han",
        "十八罗汉",
        "Eighteen arhats (four kongs)",
        (("dui_dui_hu", 1), ("jin_gou_diao", 1), ("gen", 4)),
    ),
    Combination(
        "qing_jin_gou_diao",
        "清金钩钓",
        "Pure golden hook",
        (("qing_yi_se", 1), ("dui_dui_hu", 1), ("jin_gou_diao", 1)),
    ),
    Combination("qing_dui", "清对", "Pure all pongs", (("qing_yi_se", 1), ("dui_dui_hu", 1))),
    Combination(
        "qing_yao_jiu", "清幺九", "Pure terminals in every set", (("qing_yi_se", 1), ("dai_yao_jiu", 1))
    ),
)
COMBINATIONS_BY_KEY: dict[str, Combination] = {combination.key: combination for combination in COMBINATIONS}

# fan -> the fans whose presence removes it from the list
EXCLUDED_BY: dict[str, frozenset[str]] = {
    "ping_hu": frozenset(
        {"dui_dui_hu", "qing_yi_se", "dai_yao_jiu", "qi_dui", "jiang_dui", "jin_gou_diao", "tian_hu", "di_hu"}
    ),
}


def name_of(found: Mapping[str, int]) -> Combination | None:
    """The most specific combination these fans make, or ``None``."""
    for combination in COMBINATIONS:
        if combination.matches(found):
            return combination
    return None
