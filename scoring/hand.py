"""The hand a player won with, and the circumstances of the win.

``Hand`` and ``WinContext`` are plain frozen values: building one never validates the rules of
mahjong (that is ``scoring.validate``'s job, which answers with a reason code), it only refuses
values that are not tiles at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from scoring.conditions import KEYS as CONDITION_KEYS
from scoring.conditions import implied
from scoring.tiles import SUITS, Tile, TileParseError, format_tiles, parse_tile, parse_tiles, tile_name


def tile_count(kongs: int = 0, *, waiting: bool = False) -> int:
    """The tiles a winning hand holds, melds included: 14 plus one per kong (a kong is a set of four);
    ``waiting``: a hand one tile short of that, waiting for its last tile.

    >>> tile_count(), tile_count(2), tile_count(1, waiting=True)
    (14, 16, 14)
    """
    return 14 + kongs - waiting


def concealed_count(melds: int, *, waiting: bool = False) -> int:
    """The concealed tiles of a winning hand with ``melds`` melds of any kind: a meld takes the place of
    three (a kong's fourth tile is its extra one, see ``tile_count``).

    >>> concealed_count(0), concealed_count(2), concealed_count(4, waiting=True)
    (14, 8, 1)
    """
    return tile_count(waiting=waiting) - 3 * melds


class MeldKind(StrEnum):
    PONG = "pong"  # 碰
    KONG_EXPOSED = "kong_exposed"  # 直杠 / 明杠 on a discard
    KONG_ADDED = "kong_added"  # 面下杠 / 加杠
    KONG_CONCEALED = "kong_concealed"  # 暗杠

    @property
    def is_kong(self) -> bool:
        return self is not MeldKind.PONG

    @property
    def size(self) -> int:
        return 3 if self is MeldKind.PONG else 4


@dataclass(frozen=True)
class Meld:
    kind: MeldKind
    tile: Tile

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", MeldKind(self.kind))
        tile_name(self.tile)  # raises TileParseError for a non-tile

    @property
    def tiles(self) -> tuple[Tile, ...]:
        return (self.tile,) * self.kind.size

    def to_json(self) -> dict[str, str]:
        return {"type": self.kind.value, "tile": tile_name(self.tile)}


@dataclass(frozen=True)
class Hand:
    """Concealed tiles (the winning tile included), revealed melds, and the winning tile."""

    concealed: tuple[Tile, ...]
    melds: tuple[Meld, ...] = ()
    win_tile: Tile | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "concealed", tuple(self.concealed))
        object.__setattr__(self, "melds", tuple(self.melds))
        for tile in self.concealed:
            if type(tile) is not int or not 0 <= tile < 27:  # fast path; tile_name raises the real error
                tile_name(tile)
        win = self.win_tile
        if win is not None and (type(win) is not int or not 0 <= win < 27):
            tile_name(win)

    @classmethod
    def parse(
        cls,
        concealed: str,
        *,
        pongs: tuple[str, ...] = (),
        kongs: tuple[str, ...] = (),
        added_kongs: tuple[str, ...] = (),
        concealed_kongs: tuple[str, ...] = (),
        win: str | None = None,
    ) -> Hand:
        """Build a hand from text; the winning tile defaults to the last concealed tile."""
        tiles = parse_tiles(concealed)
        melds = tuple(
            Meld(kind, parse_tile(text))
            for kind, texts in (
                (MeldKind.PONG, pongs),
                (MeldKind.KONG_EXPOSED, kongs),
                (MeldKind.KONG_ADDED, added_kongs),
                (MeldKind.KONG_CONCEALED, concealed_kongs),
            )
            for text in texts
        )
        if win is not None:
            win_tile: Tile | None = parse_tile(win)
        elif tiles:
            win_tile = tiles[-1]
        else:
            raise TileParseError("an empty hand has no winning tile")
        return cls(tiles, melds, win_tile)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Hand:
        """The inverse of ``to_json``: ``{"concealed", "melds": [{"type", "tile"}], "win_tile"}``."""
        melds = tuple(
            Meld(MeldKind(str(m["type"])), parse_tile(str(m["tile"]))) for m in data.get("melds") or []
        )
        win = data.get("win_tile")
        return cls(parse_tiles(str(data["concealed"])), melds, None if win is None else parse_tile(str(win)))

    @property
    def all_tiles(self) -> tuple[Tile, ...]:
        return self.concealed + tuple(t for meld in self.melds for t in meld.tiles)

    @property
    def kong_count(self) -> int:
        return sum(1 for meld in self.melds if meld.kind.is_kong)

    def to_json(self) -> dict[str, object]:
        return {
            "concealed": format_tiles(self.concealed),
            "win_tile": tile_name(self.win_tile) if self.win_tile is not None else None,
            "melds": [meld.to_json() for meld in self.melds],
        }


@dataclass(frozen=True)
class WinContext:
    """How the hand was won. All flags default to a plain win on a discard.

    The flags are the win conditions of ``scoring.conditions.WIN_CONDITIONS``, in its order; a flag set
    sets what it implies (天胡: ``dealer``). Whether the flags can go together is ``scoring.validate``'s
    to say.
    """

    self_drawn: bool = False  # 自摸
    gang_shang_hua: bool = False  # 杠上花: self-drawn on the replacement tile after a kong
    gang_shang_pao: bool = False  # 杠上炮: won on the discard made right after a kong
    qiang_gang: bool = False  # 抢杠胡: won on a tile another player added to a pong
    hai_di: bool = False  # 海底: won on the last tile of the wall
    tian_hu: bool = False  # 天胡: the dealer won on the initial 14 tiles
    di_hu: bool = False  # 地胡: a non-dealer won in the first go-round
    dealer: bool = False  # the winner is the dealer (庄家)
    void_suit: str | None = None  # 定缺: 'm', 'p' or 's'

    def __post_init__(self) -> None:
        if self.void_suit is not None and self.void_suit not in SUITS:
            raise TileParseError(f"void suit must be one of m, p, s; got {self.void_suit!r}")
        for key, implied_keys in _IMPLICATIONS:
            if getattr(self, key):
                for implied_key in implied_keys:
                    object.__setattr__(self, implied_key, True)


# (condition, what it implies) for the conditions that imply others
_IMPLICATIONS = tuple((key, tuple(sorted(implied(key)))) for key in CONDITION_KEYS if implied(key))
