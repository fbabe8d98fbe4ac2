"""The 27 suited tiles of Sichuan mahjong: ids, names, parsing and formatting.

Every other list of tiles in the project (the detector's class names, the YOLO ``names:``,
the web page's palette) comes from this module.

A tile is an ``int`` 0..26: ``suit * 9 + (rank - 1)`` with suits ``m`` (万, characters) = 0,
``p`` (筒, dots) = 1, ``s`` (条, bamboo) = 2.

Notation: digits followed by their suit letter, ``123m456p11s``; Chinese suit names are
accepted too (``123万456筒11条``), and so are single class names such as ``m1``.
"""

from __future__ import annotations

from collections.abc import Iterable

from scoring.errors import SmjError

Tile = int

SUITS = "mps"
SUIT_NAMES_ZH = {"m": "万", "p": "筒", "s": "条"}
_SUIT_ALIASES = {
    "m": "m",
    "万": "m",
    "萬": "m",
    "w": "m",
    "p": "p",
    "筒": "p",
    "饼": "p",
    "餅": "p",
    "s": "s",
    "条": "s",
    "條": "s",
    "索": "s",
}
_CHINESE_DIGITS = {
    "一": "1",
    "二": "2",
    "三": "3",
    "四": "4",
    "五": "5",
    "六": "6",
    "七": "7",
    "八": "8",
    "九": "9",
}

ALL_TILES: tuple[Tile, ...] = tuple(range(27))
# Detector class names: m1..m9, p1..p9, s1..s9 (index == tile id).
CLASS_NAMES: tuple[str, ...] = tuple(f"{suit}{rank}" for suit in SUITS for rank in range(1, 10))


class TileParseError(SmjError):
    """A tile string could not be read; the message says where and why."""

    code = "invalid_tile"


def make_tile(suit: str, rank: int) -> Tile:
    if suit not in SUITS or not 1 <= rank <= 9:
        raise TileParseError(f"no such tile: rank {rank} suit {suit!r}")
    return SUITS.index(suit) * 9 + rank - 1


def suit_of(tile: Tile) -> str:
    return SUITS[tile // 9]


def rank_of(tile: Tile) -> int:
    return tile % 9 + 1


def tile_name(tile: Tile) -> str:
    """``'5p'`` for tile 13."""
    _check(tile)
    return f"{rank_of(tile)}{suit_of(tile)}"


def tile_name_zh(tile: Tile) -> str:
    """``'5筒'`` for tile 13."""
    _check(tile)
    return f"{rank_of(tile)}{SUIT_NAMES_ZH[suit_of(tile)]}"


def _check(tile: Tile) -> None:
    if not isinstance(tile, int) or not 0 <= tile < 27:
        raise TileParseError(f"tile id must be an int 0..26, got {tile!r}")


def parse_tiles(text: str) -> tuple[Tile, ...]:
    """Parse ``'123m456p11s'`` / ``'123万456筒11条'`` (spaces allowed) into tile ids, in order.

    >>> parse_tiles("12m 3p")
    (0, 1, 11)
    """
    tiles: list[Tile] = []
    pending: list[int] = []
    for position, char in enumerate(text):
        char = _CHINESE_DIGITS.get(char, char)
        if char.isspace() or char in ",+-_":
            continue
        if char in "0123456789":
            if char == "0":
                raise TileParseError(f"rank 0 at position {position} in {text!r}: ranks are 1-9")
            pending.append(int(char))
            continue
        suit = _SUIT_ALIASES.get(char.lower())
        if suit is None and char.lower() == "t":
            raise TileParseError(
                f"{char!r} at position {position} in {text!r} could be 筒 (tong) or 条 (tiao): "
                "write p for 筒, s for 条"
            )
        if suit is None:
            raise TileParseError(f"unknown character {char!r} at position {position} in {text!r}")
        if not pending:
            raise TileParseError(f"suit {char!r} at position {position} in {text!r} has no digits before it")
        tiles.extend(make_tile(suit, rank) for rank in pending)
        pending = []
    if pending:
        raise TileParseError(f"digits at the end of {text!r} have no suit letter (m, p or s)")
    return tuple(tiles)


def parse_tile(text: str) -> Tile:
    """One tile: ``'5p'``, ``'p5'`` (class name) or ``'5筒'``."""
    text = text.strip()
    if text in CLASS_NAMES:
        return CLASS_NAMES.index(text)
    tiles = parse_tiles(text)
    if len(tiles) != 1:
        raise TileParseError(f"expected exactly one tile, got {len(tiles)} in {text!r}")
    return tiles[0]


def format_tiles(tiles: Iterable[Tile], *, sort: bool = True, chinese: bool = False) -> str:
    """``'123m456p11s'``: ranks grouped per suit run (sorted by default).

    Unsorted formatting keeps the order and starts a new group whenever the suit changes.
    """
    ordered = sorted(tiles) if sort else list(tiles)
    parts: list[str] = []
    digits: list[str] = []
    current: str | None = None
    for tile in ordered:
        _check(tile)
        suit = suit_of(tile)
        if current is not None and suit != current:
            parts.append("".join(digits) + _suit_label(current, chinese))
            digits = []
        current = suit
        digits.append(str(rank_of(tile)))
    if current is not None:
        parts.append("".join(digits) + _suit_label(current, chinese))
    return "".join(parts)


def _suit_label(suit: str, chinese: bool) -> str:
    return SUIT_NAMES_ZH[suit] if chinese else suit


def tile_counts(tiles: Iterable[Tile]) -> list[int]:
    """A list of 27 counts."""
    counts = [0] * 27
    for tile in tiles:
        _check(tile)
        counts[tile] += 1
    return counts


def suits_present(tiles: Iterable[Tile]) -> set[str]:
    return {suit_of(tile) for tile in tiles}
