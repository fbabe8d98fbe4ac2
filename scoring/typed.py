"""A hand as a player types it: ``123345m66999p kong 2p win 6p``, ``12345m碰3m 暗杠9m 胡5m``.

Tiles are the concealed tiles, the winning tile among them (by default the last one). A meld word and its
tile name a revealed meld: ``pong`` / ``碰``; ``kong`` / ``杠`` (a kong, of whichever kind its player
declared: ``TypedHand.hand(declared)``); ``exposed`` / ``明杠`` / ``直杠``; ``added`` / ``加杠`` /
``面下杠`` / ``补杠``; ``concealed`` / ``暗杠``. ``win`` / ``胡`` names the winning tile. A word and its
tile may be written apart or together (``碰 3m``, ``碰3m``), in any order, upper or lower case.

``parse_typed`` raises ``TypedHandError``, whose message is in Chinese and English and names the word.
``TypedHand.hand(declared)`` and ``TypedHand.final(declared)`` join to the hand the kongs its player
declared in the round and left out (a table's hand names the tiles in the hand; the kongs on the table are
already recorded), so ``123456789m11p`` of a player who declared 暗杠 5p is ``123456789m11p`` and that kong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from scoring.errors import SmjError
from scoring.hand import Hand, Meld, MeldKind, concealed_count
from scoring.tiles import Tile, TileParseError, format_tiles, parse_tile, parse_tiles, tile_name

__all__ = ["MELD_WORDS", "WIN_WORDS", "TypedHand", "TypedHandError", "parse_typed"]

KONG = "kong"  # a kong of whichever kind was declared
MELD_WORDS: dict[str, MeldKind | str] = {
    "pong": MeldKind.PONG,
    "碰": MeldKind.PONG,
    "kong": KONG,
    "杠": KONG,
    "exposed": MeldKind.KONG_EXPOSED,
    "明杠": MeldKind.KONG_EXPOSED,
    "直杠": MeldKind.KONG_EXPOSED,
    "added": MeldKind.KONG_ADDED,
    "加杠": MeldKind.KONG_ADDED,
    "面下杠": MeldKind.KONG_ADDED,
    "补杠": MeldKind.KONG_ADDED,
    "concealed": MeldKind.KONG_CONCEALED,
    "暗杠": MeldKind.KONG_CONCEALED,
}
WIN_WORDS = ("win", "胡", "和")
MAX_TYPED = 200
"""The longest typed hand read: a hand with four kongs and every word spelled out is under 80 characters."""

# the longest words first, so that 暗杠 is read before 杠
_WORDS = sorted((*MELD_WORDS, *WIN_WORDS), key=len, reverse=True)
_TOKEN = re.compile("|".join(re.escape(word) for word in _WORDS) + r"|[^\s]", re.IGNORECASE)
_HINT_ZH = "碰 杠 明杠 加杠 暗杠 胡"
_HINT_EN = "pong, kong, exposed, added, concealed, win"


class TypedHandError(SmjError):
    """Typed text that is no hand; the message is in Chinese and English and names the word."""

    code = "typed_hand"

    def __init__(self, zh: str, en: str) -> None:
        super().__init__(f"{zh} / {en}")
        self.zh = zh
        self.en = en


@dataclass(frozen=True)
class TypedMeld:
    """A typed meld: its kind (``KONG`` for a kong of the kind declared) and tile."""

    kind: MeldKind | str
    tile: Tile

    def meld(self, declared: Sequence[Meld]) -> Meld:
        """The meld, a kong of the kind its player declared for this tile (a typed pong of a tile later
        added to, 面下杠, is that kong)."""
        said = next((meld for meld in declared if meld.tile == self.tile), None)
        if said is not None and (self.kind == KONG or self.kind is MeldKind.PONG):
            return said
        return Meld(MeldKind.KONG_EXPOSED if self.kind == KONG else MeldKind(self.kind), self.tile)


@dataclass(frozen=True)
class TypedHand:
    """The tiles and melds of a typed hand, as typed."""

    concealed: tuple[Tile, ...]
    melds: tuple[TypedMeld, ...] = ()
    win_tile: Tile | None = None

    def hand(self, declared: Sequence[Meld] = ()) -> Hand:
        """The winning hand: the winning tile the one named, or the last concealed tile; ``declared``: the
        kongs its player declared in the round (joined where the hand leaves them out)."""
        concealed, melds = self._joined(declared, concealed_count(0))
        if not concealed:
            raise TypedHandError("手牌里没有牌", "the hand has no tiles")
        win = self.win_tile if self.win_tile is not None else concealed[-1]
        return Hand(tuple(sorted(concealed)), melds, win)

    def to_json(self) -> dict[str, object]:
        """The hand as typed, in the shape of ``Hand.to_json`` (what ``/score`` and ``/waits`` take), read
        outside a round: a kong of no declared kind is a 直杠, the winning tile ``None`` where none was named
        (the last concealed tile wins). A hand of any size: one tile short is a waiting hand."""
        return {
            "concealed": format_tiles(self.concealed),
            "win_tile": tile_name(self.win_tile) if self.win_tile is not None else None,
            "melds": [typed.meld(()).to_json() for typed in self.melds],
        }

    def final(self, declared: Sequence[Meld] = ()) -> tuple[tuple[Tile, ...], tuple[Meld, ...]]:
        """A hand at the wall's end (no winning tile): its concealed tiles and melds, joined as ``hand``."""
        if self.win_tile is not None:
            raise TypedHandError(
                f"流局的手牌没有和的牌 ({tile_name(self.win_tile)})",
                f"a hand at the wall's end has no winning tile ({tile_name(self.win_tile)})",
            )
        return self._joined(declared, concealed_count(0, waiting=True))

    def _joined(self, declared: Sequence[Meld], full: int) -> tuple[tuple[Tile, ...], tuple[Meld, ...]]:
        """The concealed tiles and melds with each declared kong the hand does not show: its tiles typed
        among the concealed ones are moved into it; none typed, it is joined where the hand is that kong
        short (``full``: the concealed tiles of a hand without melds)."""
        melds = [typed.meld(declared) for typed in self.melds]
        concealed = list(self.concealed)
        for kong in declared:
            if any(meld.tile == kong.tile for meld in melds):
                continue
            if kong.tile in concealed:
                concealed = [tile for tile in concealed if tile != kong.tile]
                melds.append(kong)
            elif len(concealed) + 3 * len(melds) < full:
                melds.append(kong)
        return tuple(concealed), tuple(melds)


def parse_typed(text: str) -> TypedHand:
    """A ``TypedHand`` from typed text; ``TypedHandError`` names what is wrong."""
    if len(text) > MAX_TYPED:
        raise TypedHandError(
            f"手牌太长 ({len(text)} 个字)", f"a typed hand of {len(text)} characters: at most {MAX_TYPED}"
        )
    concealed: list[str] = []
    melds: list[TypedMeld] = []
    win: Tile | None = None
    words = _words(text)
    at = 0
    while at < len(words):
        word = words[at]
        key = word.lower()
        if key not in MELD_WORDS and key not in WIN_WORDS:
            concealed.append(word)
            at += 1
            continue
        if at + 1 >= len(words):
            raise TypedHandError(
                f"“{word}” 后面要写一张牌, 比如 {word} 5p", f'"{word}" needs a tile after it, e.g. {word} 5p'
            )
        tile = _one_tile(words[at + 1], word)
        if key in WIN_WORDS:
            if win is not None:
                raise TypedHandError(
                    "只能有一张和的牌", f"one winning tile, not {tile_name(win)} and {tile_name(tile)}"
                )
            win = tile
        else:
            melds.append(TypedMeld(MELD_WORDS[key], tile))
        at += 2
    tiles = _tiles(concealed)
    if win is not None and win not in tiles:
        raise TypedHandError(
            f"和的牌 {tile_name(win)} 要写在手牌里",
            f"the winning tile {tile_name(win)} is not among the tiles typed",
        )
    return TypedHand(tiles, tuple(melds), win)


def _words(text: str) -> list[str]:
    """The text cut into meld words and runs of other characters (``碰3m`` is ``碰``, ``3m``)."""
    words: list[str] = []
    run = ""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if len(token) > 1 or token.lower() in MELD_WORDS or token in WIN_WORDS:
            if run:
                words.append(run)
            words.append(token)
            run = ""
        else:
            run += token
            if match.end() < len(text) and text[match.end()].isspace():
                words.append(run)
                run = ""
    if run:
        words.append(run)
    return words


def _tiles(words: list[str]) -> tuple[Tile, ...]:
    """The concealed tiles of the words that are no meld word (``123 456m`` is six 万); an error names
    the word that is not tiles."""
    try:
        return parse_tiles(" ".join(words))
    except TileParseError as problem:
        wrong, why = " ".join(words), str(problem)
        for word in words:
            try:
                parse_tiles(word)
            except TileParseError as own:
                if "no suit letter" not in str(own):  # digits whose suit follows in the next word
                    wrong, why = word, str(own)
                    break
        raise TypedHandError(
            f"“{wrong}” 不是牌 (牌写作 123m 456p 789s, 词有 {_HINT_ZH})",
            f'"{wrong}" is not tiles: {why} (words: {_HINT_EN})',
        ) from None


def _one_tile(text: str, word: str) -> Tile:
    try:
        return parse_tile(text)
    except TileParseError:
        raise TypedHandError(
            f"“{word}” 后面要写一张牌, 比如 {word} 5p, 不是 “{text}”",
            f'"{word}" takes one tile such as 5p, not "{text}"',
        ) from None
