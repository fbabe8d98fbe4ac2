"""The win conditions, each once: how a hand was won, and which conditions go together.

``WIN_CONDITIONS`` is the one table. ``WinContext`` has a boolean field of each key (in this order); the
command line's flags (``scoring.cli``: ``--self-drawn``...), the API's context fields (``api.schemas``,
``api.deps``) and the page's check boxes (``GET /api/v1/conditions``) are built from it, and the
validation of a context (``scoring.validate``) refuses what it says cannot be.

Three relations, each written once, on one side of the pair:

* ``implies``: set along with it (天胡 is the dealer's win: the dealer is implied).
* ``requires``: must be given with it, or the context is refused (杠上花 and 天胡 are self-drawn).
* ``excludes``: never together with it, either way round (杠上炮 is won on a discard, not self-drawn).

    >>> sorted(implied("tian_hu")), sorted(brings("tian_hu"))
    (['dealer'], ['dealer', 'self_drawn'])
    >>> sorted(excluded("self_drawn"))
    ['gang_shang_pao', 'qiang_gang']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class WinCondition:
    key: str  # the WinContext field and API field (self_drawn); the flag is --self-drawn
    name_zh: str
    name_en: str  # a short English label, as the page shows it under the Chinese name
    help: str  # what it means, one line
    implies: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        """The command-line option: ``--gang-shang-hua``."""
        return "--" + self.key.replace("_", "-")

    def describe(self, name: str = "key") -> str:
        """``天胡: the dealer won on the initial 14 tiles (implies dealer; needs self_drawn; not with ...)``,
        the other conditions named by their ``key`` or (``name="flag"``) their command-line option."""

        def names(keys: tuple[str, ...]) -> str:
            return ", ".join(getattr(CONDITIONS_BY_KEY[key], name) for key in keys)

        others = tuple(key for key in KEYS if key in excluded(self.key))
        notes = [f"implies {names(self.implies)}"] if self.implies else []
        notes += [f"needs {names(self.requires)}"] if self.requires else []
        notes += [f"not with {names(others)}"] if others else []
        return f"{self.name_zh}: {self.help}" + (f" ({'; '.join(notes)})" if notes else "")

    def to_json(self) -> dict[str, Any]:
        """The row ``GET /api/v1/conditions`` answers: the table's fields, and for the page what ticking
        it ticks (``brings``) and unticks (``clears``) so that the context it sends is one the rules
        accept."""
        return {
            "key": self.key,
            "name_zh": self.name_zh,
            "name_en": self.name_en,
            "help": self.help,
            "implies": list(self.implies),
            "requires": list(self.requires),
            "excludes": sorted(excluded(self.key)),
            "brings": sorted(brings(self.key)),
            "clears": sorted(clears(self.key)),
        }


WIN_CONDITIONS: tuple[WinCondition, ...] = (
    WinCondition("self_drawn", "自摸", "self-drawn", "won on a self-drawn tile"),
    WinCondition(
        "gang_shang_hua",
        "杠上花",
        "after a kong",
        "self-drawn on the replacement tile after a kong",
        requires=("self_drawn",),
        excludes=("gang_shang_pao", "qiang_gang"),
    ),
    WinCondition(
        "gang_shang_pao",
        "杠上炮",
        "discard after a kong",
        "won on the discard made right after a kong",
        excludes=("qiang_gang", "self_drawn"),
    ),
    WinCondition(
        "qiang_gang",
        "抢杠胡",
        "robbing a kong",
        "won on a tile another player added to a pong",
        excludes=("self_drawn",),
    ),
    WinCondition(
        "hai_di", "海底", "last tile", "won on the last tile of the wall", excludes=("tian_hu", "di_hu")
    ),
    WinCondition(
        "tian_hu",
        "天胡",
        "heavenly",
        "the dealer won on the initial 14 tiles",
        implies=("dealer",),
        requires=("self_drawn",),
        excludes=("di_hu",),
    ),
    WinCondition(
        "di_hu",
        "地胡",
        "earthly",
        "a non-dealer won in the first go-round",
        excludes=("dealer", "qiang_gang"),
    ),
    WinCondition("dealer", "庄家", "dealer", "the winner is the dealer"),
)
CONDITIONS_BY_KEY = {condition.key: condition for condition in WIN_CONDITIONS}
KEYS = tuple(CONDITIONS_BY_KEY)


def _check_table() -> None:
    for condition in WIN_CONDITIONS:
        named = {*condition.implies, *condition.requires, *condition.excludes}
        if unknown := named - set(KEYS):
            raise ValueError(f"win condition {condition.key!r} names unknown conditions {sorted(unknown)}")
        if condition.key in named:
            raise ValueError(f"win condition {condition.key!r} names itself")
        for other in condition.excludes:
            if condition.key in CONDITIONS_BY_KEY[other].excludes:
                raise ValueError(f"{condition.key!r} and {other!r} exclude each other: write it once")


_check_table()


@cache
def implied(key: str) -> frozenset[str]:
    """The conditions ``key`` sets along with it, through any chain of ``implies``."""
    return _closure(key, lambda condition: condition.implies)


@cache
def brings(key: str) -> frozenset[str]:
    """What a context with ``key`` holds too, to be accepted: its implied and required conditions."""
    return _closure(key, lambda condition: (*condition.implies, *condition.requires))


@cache
def excluded(key: str) -> frozenset[str]:
    """The conditions that never go with ``key``: its ``excludes`` and those that exclude it."""
    theirs = {condition.key for condition in WIN_CONDITIONS if key in condition.excludes}
    return frozenset(CONDITIONS_BY_KEY[key].excludes) | theirs


@cache
def clears(key: str) -> frozenset[str]:
    """The conditions a context cannot hold once it holds ``key`` and all it ``brings``: those that
    exclude one of them, or bring along one that does (杠上炮 clears 天胡, which is self-drawn)."""
    held = {key} | brings(key)
    return frozenset(
        other
        for other in KEYS
        if other not in held and any(excluded(one) & held for one in {other} | brings(other))
    )


def exclusions() -> tuple[tuple[str, str], ...]:
    """Every pair that excludes each other once, as the table writes it."""
    return tuple((condition.key, other) for condition in WIN_CONDITIONS for other in condition.excludes)


def _closure(key: str, step: Callable[[WinCondition], tuple[str, ...]]) -> frozenset[str]:
    found: set[str] = set()
    pending = list(step(CONDITIONS_BY_KEY[key]))
    while pending:
        other = pending.pop()
        if other not in found and other != key:
            found.add(other)
            pending.extend(step(CONDITIONS_BY_KEY[other]))
    return frozenset(found)


def conditions_json() -> list[dict[str, Any]]:
    """The table as ``GET /api/v1/conditions`` answers it, in order."""
    return [condition.to_json() for condition in WIN_CONDITIONS]
