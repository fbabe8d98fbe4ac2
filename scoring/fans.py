"""The fan (番) registry: one small pure function per fan, all with the signature ``(HandView) -> int``.

A fan rule answers how many times its fan applies to one reading of the winning hand: 0 (absent), 1, or
the number of roots for 根. What a fan is *worth* is not here: that is the preset's business
(``scoring.rules.Rules.values``), and which fans combine or exclude each other is data in
``scoring.combinations``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from scoring.decompose import Decomposition
from scoring.hand import Meld, WinContext
from scoring.tiles import Tile

_RANK_258 = frozenset(t for t in range(27) if t % 9 + 1 in (2, 5, 8))


@dataclass(frozen=True, slots=True)
class HandView:
    """One reading of a winning hand and everything a fan may look at."""

    decomposition: Decomposition
    counts: tuple[int, ...]  # 27 counts over the whole hand, melds included
    melds: tuple[Meld, ...]
    context: WinContext
    win_tile: Tile | None = None


class FanKind(StrEnum):
    PATTERN = "pattern"  # a hand pattern; under ``largest_pattern`` presets only the biggest one counts
    BONUS = "bonus"  # added on top of the pattern (根, 杠上花, ...)


FanRule = Callable[[HandView], int]  # how many times a fan applies to a reading


@dataclass(frozen=True, slots=True)
class FanDef:
    key: str
    name_zh: str
    name_en: str
    kind: FanKind
    count: FanRule


FANS: dict[str, FanDef] = {}  # key -> definition, in display order
_RULES: list[tuple[str, FanRule]] = []  # the same, as pairs for the hot loop


def register(key: str, name_zh: str, name_en: str, kind: FanKind) -> Callable[[FanRule], FanRule]:
    """Add a fan rule to ``FANS``; its docstring must start with ``name_zh``."""

    def add(count: FanRule) -> FanRule:
        if key in FANS:
            raise ValueError(f"fan {key!r} registered twice")
        if not (count.__doc__ or "").startswith(name_zh):
            raise ValueError(f"the docstring of fan {key!r} must start with its Chinese name {name_zh!r}")
        FANS[key] = FanDef(key, name_zh, name_en, kind, count)
        _RULES.append((key, count))
        return count

    return add


def _suit_count(counts: tuple[int, ...]) -> int:
    return int(any(counts[0:9])) + int(any(counts[9:18])) + int(any(counts[18:27]))


@register("ping_hu", "平胡", "Plain win", FanKind.PATTERN)
def ping_hu(view: HandView) -> int:
    """平胡: any winning hand; the base the other fans add to."""
    return 1


@register("dui_dui_hu", "对对胡", "All pongs", FanKind.PATTERN)
def dui_dui_hu(view: HandView) -> int:
    """对对胡 (大对子): four sets, every one a pong or a kong."""
    sets = view.decomposition.sets
    return int(bool(sets) and not any(group.is_run for group in sets))


@register("qing_yi_se", "清一色", "Full flush", FanKind.PATTERN)
def qing_yi_se(view: HandView) -> int:
    """清一色: every tile of the hand, melds included, is of one suit."""
    return int(_suit_count(view.counts) == 1)


@register("dai_yao_jiu", "带幺九", "Terminals in every set", FanKind.PATTERN)
def dai_yao_jiu(view: HandView) -> int:
    """带幺九: every set and the pair hold a 1 or a 9 (standard shape only, not 七对)."""
    decomposition = view.decomposition
    return int(not decomposition.seven_pairs and all(group.terminal for group in decomposition.groups))


@register("qi_dui", "七对", "Seven pairs", FanKind.PATTERN)
def qi_dui(view: HandView) -> int:
    """七对 (暗七对): seven pairs and no melds; four identical tiles make two pairs."""
    return int(view.decomposition.seven_pairs)


@register("jiang_dui", "将对", "All 2-5-8 pongs", FanKind.PATTERN)
def jiang_dui(view: HandView) -> int:
    """将对: 对对胡 whose every tile, melds included, is a 2, a 5 or an 8."""
    if not dui_dui_hu(view):
        return 0
    return int(all(tile in _RANK_258 for tile, count in enumerate(view.counts) if count))


@register("jin_gou_diao", "金钩钓", "Golden hook (single wait)", FanKind.PATTERN)
def jin_gou_diao(view: HandView) -> int:
    """金钩钓 (大单吊): 对对胡 with all four sets melded, won on the pair (the only concealed tiles)."""
    return int(len(view.melds) == 4 and dui_dui_hu(view) == 1)


@register("jin_gou_diao_any", "金钩钓", "Golden hook (all pongs, won on the pair)", FanKind.PATTERN)
def jin_gou_diao_any(view: HandView) -> int:
    """金钩钓 as the English "Sichuan Bloody Rules" reads it: any 对对胡, its pongs concealed or melded,
    won on the pair (a single wait). Only that rulebook's preset scores it, in place of jin_gou_diao."""
    if view.win_tile is None or dui_dui_hu(view) != 1:
        return 0
    return int(any(pair.tile == view.win_tile for pair in view.decomposition.pairs))


@register("tian_hu", "天胡", "Heavenly hand", FanKind.PATTERN)
def tian_hu(view: HandView) -> int:
    """天胡: the dealer wins on the initial 14 tiles."""
    return int(view.context.tian_hu)


@register("di_hu", "地胡", "Earthly hand", FanKind.PATTERN)
def di_hu(view: HandView) -> int:
    """地胡: a non-dealer wins in the first go-round."""
    return int(view.context.di_hu)


@register("gen", "根", "Root", FanKind.BONUS)
def gen(view: HandView) -> int:
    """根: one per tile type whose four copies are all in the winning hand (kong, quad, pong + run, ...)."""
    return view.counts.count(4)


@register("gang_shang_hua", "杠上花", "Win on a kong replacement", FanKind.BONUS)
def gang_shang_hua(view: HandView) -> int:
    """杠上花: self-drawn win on the replacement tile after a kong."""
    return int(view.context.gang_shang_hua)


@register("gang_shang_pao", "杠上炮", "Win on a discard after a kong", FanKind.BONUS)
def gang_shang_pao(view: HandView) -> int:
    """杠上炮: win on the discard another player made right after a kong."""
    return int(view.context.gang_shang_pao)


@register("qiang_gang", "抢杠胡", "Robbing the kong", FanKind.BONUS)
def qiang_gang(view: HandView) -> int:
    """抢杠胡: win on the tile another player adds to a pong (面下杠)."""
    return int(view.context.qiang_gang)


@register("hai_di", "海底捞月", "Last tile of the wall", FanKind.BONUS)
def hai_di(view: HandView) -> int:
    """海底捞月: win on the last tile of the wall."""
    return int(view.context.hai_di)


def count_fans(view: HandView) -> dict[str, int]:
    """Every fan that applies to this reading, with its count (absent fans are left out)."""
    found = {}
    for key, rule in _RULES:
        count = rule(view)
        if count:
            found[key] = count
    return found
