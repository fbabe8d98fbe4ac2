"""Reading revealed melds from a run of tiles laid side by side.

A run is a sequence of detector classes (suited tile ids 0..26 and ``BACK``; honours are taken out
before). It reads as melds when it splits, left to right, into groups of

* 3 identical faces: a pong (碰);
* 4 identical faces: a kong (杠), reported as ``kong_exposed`` since a photo cannot tell an exposed
  kong from an added one;
* 4 tiles of which 1 to 3 are face down and the others show one tile: a concealed kong (暗杠), whether
  the backs are outside (``B55B``), paired (``BB55``) or anywhere else.

Four backs alone are not a meld: the tile cannot be read, and they are as likely another player's wall.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoring.hand import MeldKind
from scoring.tiles import Tile
from vision.detections import BACK


@dataclass(frozen=True)
class MeldSpan:
    """One meld found in a run: positions ``start:stop`` of the run, its kind and tile."""

    start: int
    stop: int
    kind: MeldKind
    tile: Tile


def meld_of(tokens: Sequence[int]) -> tuple[MeldKind, Tile] | None:
    """The meld that exactly these tiles make, or None."""
    faces = {token for token in tokens if token != BACK}
    if len(faces) != 1:
        return None
    (tile,) = faces
    backs = sum(1 for token in tokens if token == BACK)
    if len(tokens) == 3 and backs == 0:
        return MeldKind.PONG, tile
    if len(tokens) == 4:
        return (MeldKind.KONG_EXPOSED if backs == 0 else MeldKind.KONG_CONCEALED), tile
    return None


def split_melds(tokens: Sequence[int]) -> tuple[MeldSpan, ...] | None:
    """Split a whole run into consecutive melds (``555p6666s`` -> pong 5p, kong 6s); None when it cannot.

    Where a run splits in more than one way the longer meld is taken first.
    """
    tokens = tuple(tokens)
    # rest[i]: a split of tokens[i:], None when there is none; filled from the end.
    rest: list[tuple[MeldSpan, ...] | None] = [None] * (len(tokens) + 1)
    rest[len(tokens)] = ()
    for start in range(len(tokens) - 1, -1, -1):
        for size in (4, 3):
            stop = start + size
            following = rest[stop] if stop <= len(tokens) else None
            meld = meld_of(tokens[start:stop]) if following is not None else None
            if meld is not None and following is not None:
                rest[start] = (MeldSpan(start, stop, *meld), *following)
                break
    return rest[0]
