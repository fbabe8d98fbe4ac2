"""A rule variant as one frozen value: fan numbering, stacking, cap, fan values and settlement knobs.

A house rule is a changed copy (``dataclasses.replace(CHENGDU, cap=3, name="my_table")``), never new code.
The named presets live in ``scoring.presets``.

Numbering (what a fan count means):

* ``zero_based``: 平胡 is 0 fan and the multiplier is ``2**fan`` (chengdu).
* ``one_based``: 平胡 is 1 fan and the multiplier is ``2**(fan - 1)`` (the QQ game tables).
* ``points``: values are points that add up; no doubling, the multiplier *is* the points.

Stacking (how fans combine):

* ``additive``: every fan found adds its value; named combinations are only names (chengdu 清龙七对 =
  清一色 2 + 七对 2 + 根 1 = 5).
* ``largest_pattern``: only the largest pattern counts, where named combinations are patterns with their
  own values (QQ 清龙七对 = 6); then 根 and the other bonuses add. ``absorbed_roots`` says how many roots a
  pattern already includes (QQ 龙七对: one) and ``rootless`` which patterns count no roots (QQ 天胡).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import Enum, StrEnum
from types import MappingProxyType
from typing import Any

from scoring.combinations import COMBINATIONS, COMBINATIONS_BY_KEY
from scoring.fans import FANS


class Numbering(StrEnum):
    ZERO_BASED = "zero_based"
    ONE_BASED = "one_based"
    POINTS = "points"


class Stacking(StrEnum):
    ADDITIVE = "additive"
    LARGEST_PATTERN = "largest_pattern"


class SelfDrawBonus(StrEnum):
    NONE = "none"  # 自摸 pays the same as a discard, from every player still in
    ADD_BASE = "add_base"  # 自摸加底: each payer pays one base more
    ADD_FAN = "add_fan"  # 自摸加番: one more fan (doubles the payment)


class ChaJiao(StrEnum):
    LARGEST = "largest"  # 查大叫: paid at the largest fan among the ready player's waits
    SMALLEST = "smallest"  # 查小叫: at the smallest


class KongAfterPao(StrEnum):
    """杠上炮: what becomes of the konger's payment for the kong he discarded after."""

    REFUND = "refund"  # returned to its payers
    TRANSFER = "transfer"  # handed to the winner


@dataclass(frozen=True)
class Settlement:
    """Knobs for settling a 血战到底 round; amounts are in base units (底). Defaults are chengdu's."""

    direct_kong_base: int = 2  # 直杠 (刮风): paid by the discarder who fed it
    direct_kong_others_base: int = (
        0  # 暴雨: each other player still in also pays this for a 直杠 (1 under 暴雨)
    )
    added_kong_base: int = 1  # 面下杠: paid by each player still in
    added_kong_immediate_only: bool = True  # 面下杠 pays only when added right after drawing the fourth tile
    concealed_kong_base: int = 2  # 暗杠 (下雨): paid by each player still in
    self_draw_bonus: SelfDrawBonus = SelfDrawBonus.ADD_BASE
    kong_after_pao: KongAfterPao = KongAfterPao.REFUND  # 杠上炮: the konger's income for that kong
    dian_gang_hua_feeder_pays: bool = False  # 点杠花: 杠上花 after a 直杠 is paid by the feeder alone
    hua_zhu_base: int = 8  # 查花猪: a 花猪 pays this to each other player still in who is not a 花猪
    hua_zhu_pays_cap: bool = False  # variant: a 花猪 pays the capped maximum (极品) instead
    hua_zhu_pays_everyone: bool = False  # variant: a 花猪 pays every other seat, won or not, 花猪 or not
    cha_jiao: ChaJiao = ChaJiao.LARGEST  # 查大叫 / 查小叫
    cha_jiao_cap: int | None = 4  # the cap on the fan used by 查叫 (None: uncapped)
    cha_jiao_kong_roots: bool = (
        True  # 查叫 counts the 根 of declared kongs (off: a ready hand's kongs add no fan)
    )
    refund_kongs_when_not_ready: bool = True  # 流局: not-ready players and 花猪 return all kong income
    refund_to_won_players: bool = False  # 退税 also repays payers who have won since (off: untouched)
    max_winners: int = 3  # 血战到底: the round ends when this many players have won
    last_four_must_win: bool = True  # 最后四张必胡
    guo_shui_bu_hu: bool = True  # 过水不胡
    ding_que: bool = True  # 定缺: each player declares a void suit

    def to_json(self) -> dict[str, Any]:
        return {key: value.value if isinstance(value, Enum) else value for key, value in asdict(self).items()}


_KNOWN_KEYS = frozenset(FANS) | frozenset(COMBINATIONS_BY_KEY)


@dataclass(frozen=True)
class Rules:
    name: str
    description: str
    numbering: Numbering
    stacking: Stacking
    cap: int | None  # the most fan (points) a hand scores; None: no cap
    values: Mapping[str, int]  # fan or named-pattern key -> value; a key absent here does not score
    limit_fans: frozenset[str] = frozenset()  # fans worth exactly the cap (chengdu 天胡 / 地胡)
    absorbed_roots: Mapping[str, int] = field(default_factory=dict)  # largest_pattern: roots included
    rootless: frozenset[str] = frozenset()  # largest_pattern: patterns that count no roots
    settlement: Settlement = field(default_factory=Settlement)
    # 起胡: the fewest fan (raw, before the cap) a win must score; 0, as every preset: any winning shape,
    # 平胡 included (a house rule such as 一番起胡 is a copy with 1)
    min_fan: int = 0
    # every scoring key with its value, limit fans at the cap (derived, for speed)
    scored_values: Mapping[str, int] = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "numbering", Numbering(self.numbering))
        object.__setattr__(self, "stacking", Stacking(self.stacking))
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))
        object.__setattr__(self, "absorbed_roots", MappingProxyType(dict(self.absorbed_roots)))
        object.__setattr__(self, "limit_fans", frozenset(self.limit_fans))
        object.__setattr__(self, "rootless", frozenset(self.rootless))
        unknown = (
            set(self.values) | self.limit_fans | set(self.absorbed_roots) | self.rootless
        ) - _KNOWN_KEYS
        if unknown:
            raise ValueError(f"rules {self.name!r}: unknown fan keys {sorted(unknown)}")
        if self.min_fan < 0:
            raise ValueError(f"rules {self.name!r}: min_fan {self.min_fan} is negative")
        if self.limit_fans and self.cap is None:
            raise ValueError(f"rules {self.name!r}: limit fans {sorted(self.limit_fans)} need a cap")
        if self.stacking is Stacking.LARGEST_PATTERN and "ping_hu" not in self.values:
            raise ValueError(f"rules {self.name!r}: largest_pattern stacking needs a value for ping_hu")
        scored = dict(self.values)
        for key in self.limit_fans:
            scored[key] = self.cap or 0
        object.__setattr__(self, "scored_values", MappingProxyType(scored))
        identity = (self.name, self.numbering, self.stacking, self.cap, tuple(sorted(self.values.items())))
        object.__setattr__(self, "_hash", hash(identity))

    def __hash__(self) -> int:
        return self._hash

    def fan_value(self, key: str) -> int | None:
        """What one occurrence of this fan or pattern is worth; ``None`` if it does not score here."""
        return self.scored_values.get(key)

    def scores_nothing(self, key: str) -> bool:
        """Whether a win condition that is a fan of its own (海底, 杠上花, ...) adds nothing here: not scored,
        or scored 0 (chengdu's 海底). A limit (天胡, 地胡) scores the cap; a condition that is no fan
        (自摸, the dealer) is not one of these.

        >>> from scoring.presets import get_preset
        >>> [get_preset(name).scores_nothing("hai_di") for name in ("chengdu", "sichuan_bloody")]
        [True, False]
        """
        if key not in FANS or key in self.limit_fans:
            return False
        return not self.fan_value(key)

    def capped(self, fan: int) -> int:
        return fan if self.cap is None else min(fan, self.cap)

    def multiplier(self, fan: int) -> int:
        """Base units a fan (or points) total is worth: ``2**fan``, ``2**(fan-1)`` or the points."""
        if self.numbering is Numbering.ZERO_BASED:
            return 2**fan
        if self.numbering is Numbering.ONE_BASED:
            return 2 ** max(fan - 1, 0)
        return fan

    def win_payment(self, fan: int, self_drawn: bool) -> int:
        """Base units each payer pays for a win of ``fan`` (capped): the multiplier, and on a self-drawn
        win the preset's 自摸 bonus (加底: one base more; 加番: one fan more, within the cap)."""
        bonus = self.settlement.self_draw_bonus
        if self_drawn and bonus is SelfDrawBonus.ADD_FAN:
            return self.multiplier(self.capped(fan + 1))
        return self.multiplier(fan) + (1 if self_drawn and bonus is SelfDrawBonus.ADD_BASE else 0)

    def fan_table(self) -> list[dict[str, Any]]:
        """The fans and named patterns this preset scores, with their values, for display.

        Under additive stacking a combination's value is the sum of its parts (marked ``derived``).
        """
        rows: list[dict[str, Any]] = []
        for key, definition in FANS.items():
            value = self.fan_value(key)
            if value is not None:
                rows.append(
                    {
                        "key": key,
                        "name_zh": definition.name_zh,
                        "name_en": definition.name_en,
                        "fan": value,
                        "kind": definition.kind.value,
                        "limit": key in self.limit_fans,
                    }
                )
        for combination in COMBINATIONS:
            if self.stacking is Stacking.LARGEST_PATTERN:
                value = self.values.get(combination.key)
                derived = False
            else:
                parts = [(self.fan_value(key), count) for key, count in combination.requires]
                value = None if any(v is None for v, _ in parts) else sum((v or 0) * n for v, n in parts)
                derived = True
            if value is not None:
                rows.append(
                    {
                        "key": combination.key,
                        "name_zh": combination.name_zh,
                        "name_en": combination.name_en,
                        "fan": value,
                        "kind": "combination",
                        "limit": False,
                        "derived": derived,
                    }
                )
        return rows

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "numbering": self.numbering.value,
            "stacking": self.stacking.value,
            "cap": self.cap,
            "min_fan": self.min_fan,
            "fans": self.fan_table(),
            "limit_fans": sorted(self.limit_fans),
            "absorbed_roots": dict(self.absorbed_roots),
            "rootless": sorted(self.rootless),
            "settlement": self.settlement.to_json(),
        }
