"""Turn the fans found in one reading of a hand into fan lines and totals under one preset."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from scoring.combinations import COMBINATIONS, EXCLUDED_BY, Combination, name_of
from scoring.fans import FANS, FanKind
from scoring.result import FanItem
from scoring.rules import Rules, Stacking

_PATTERNS = tuple(key for key, definition in FANS.items() if definition.kind is FanKind.PATTERN)
_BONUSES = tuple(key for key, definition in FANS.items() if definition.kind is FanKind.BONUS)


@dataclass(frozen=True, slots=True)
class FanLines:
    fans: tuple[FanItem, ...]
    combination: Combination | None
    raw_fan: int
    total_fan: int


def fan_lines(found: Mapping[str, int], rules: Rules) -> FanLines:
    """Fan lines, named combination and totals for the fans found (key -> count) under ``rules``."""
    return _fan_lines(tuple(found.items()), rules)


@lru_cache(maxsize=1 << 12)
def _fan_lines(found_items: tuple[tuple[str, int], ...], rules: Rules) -> FanLines:
    """``fan_lines``, cached: few distinct sets of fans occur, so most hands are a dictionary look-up."""
    found = dict(found_items)
    if rules.stacking is Stacking.ADDITIVE:
        items, combination = _additive(found, rules)
    else:
        items, combination = _largest_pattern(found, rules)
    raw = sum(item.fan for item in items)
    return FanLines(tuple(items), combination, raw, rules.capped(raw))


def _item(key: str, value: int, count: int) -> FanItem:
    definition = FANS[key]
    return FanItem(key, definition.name_zh, definition.name_en, value * count, count)


def _additive(found: Mapping[str, int], rules: Rules) -> tuple[list[FanItem], Combination | None]:
    """Every fan found adds its value; fans worth 0 are not listed, except 平胡 as the base."""
    values = rules.scored_values
    scored = {
        key: count for key, count in found.items() if values.get(key) or (key == "ping_hu" and key in values)
    }
    for key, excluders in EXCLUDED_BY.items():
        if key in scored and not excluders.isdisjoint(scored):
            del scored[key]
    items = [_item(key, values[key], count) for key, count in scored.items()]
    return items, name_of(scored)


def _largest_pattern(found: Mapping[str, int], rules: Rules) -> tuple[list[FanItem], Combination | None]:
    """The one pattern (plain fan or named combination) with the most fan, roots included, plus bonuses."""
    roots = found.get("gen", 0)
    root_value = rules.fan_value("gen") or 0
    best: tuple[int, int, str, int, Combination | None] | None = None  # total, value, key, roots, combination
    candidates: list[tuple[str, Combination | None]] = [(c.key, c) for c in COMBINATIONS if c.matches(found)]
    candidates += [(key, None) for key in _PATTERNS if found.get(key)]
    for key, combination in candidates:
        value = rules.fan_value(key)
        if value is None:
            continue
        counted = 0 if key in rules.rootless else max(roots - rules.absorbed_roots.get(key, 0), 0)
        total = value + counted * root_value
        if best is None or (total, value) > (best[0], best[1]):
            best = (total, value, key, counted, combination)
    if best is None:  # only possible for a preset without 平胡, which Rules refuses
        raise ValueError(f"rules {rules.name!r} score no pattern of this hand")
    _, value, key, counted, combination = best
    items = [
        FanItem(key, combination.name_zh, combination.name_en, value, 1)
        if combination is not None
        else _item(key, value, 1)
    ]
    if counted and root_value:
        items.append(_item("gen", root_value, counted))
    for bonus in _BONUSES:
        bonus_value = rules.fan_value(bonus)
        if bonus != "gen" and found.get(bonus) and bonus_value:
            items.append(_item(bonus, bonus_value, found[bonus]))
    return items, combination
