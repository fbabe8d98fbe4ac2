"""Random Sichuan hands for the scenes: mostly winning shapes in at most two suits, from sets and a pair.

Independent of ``scoring``'s rules engine on purpose (``is_winning_shape`` is a small check of its own):
the renderer must work while the rules engine changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.hand import Hand, Meld, MeldKind
from scoring.tiles import Tile

_MELD_COUNT_P = (0.36, 0.28, 0.2, 0.11, 0.05)
_MELD_KINDS = (MeldKind.PONG, MeldKind.KONG_EXPOSED, MeldKind.KONG_CONCEALED)
_MELD_KIND_P = (0.62, 0.2, 0.18)


@dataclass(frozen=True)
class HandPlan:
    """The truth hand plus how the scene shows it."""

    hand: Hand
    row: tuple[Tile, ...]  # concealed tiles left to right, the winning tile included
    win_index: int  # position of the winning tile in ``row``
    winning: bool  # a complete 4 sets + pair or seven pairs shape
    kong_faces: tuple[str, ...]  # per meld: "up", or "outer_down" for a concealed kong shown 背-面-面-背


def random_hand(rng: np.random.Generator, winning_p: float = 0.95) -> HandPlan:
    suits = [int(s) for s in rng.permutation(3)[: 1 if rng.random() < 0.22 else 2]]
    counts = [0] * 27
    n_melds = int(rng.choice(5, p=_MELD_COUNT_P))
    melds: list[Meld] = []
    for _ in range(n_melds):
        kind = _MELD_KINDS[int(rng.choice(3, p=_MELD_KIND_P))]
        tile = _free_tile(rng, suits, counts, kind.size)
        if tile is None:
            break
        counts[tile] += kind.size
        melds.append(Meld(kind, tile))
    n_sets = 4 - len(melds)
    if not melds and rng.random() < 0.13:
        concealed = _seven_pairs(rng, suits, counts)
    else:
        concealed = _sets_and_pair(rng, suits, counts, n_sets)
    winning = True
    if rng.random() > winning_p:
        concealed = _spoil(rng, suits, counts, concealed)
        winning = is_winning_shape(concealed)
    order = sorted(concealed, key=lambda t: (_suit_rank(t, suits), t))
    if rng.random() < 0.12:  # some players leave a few tiles unsorted
        for _ in range(int(rng.integers(1, 4))):
            i, j = (int(v) for v in rng.integers(0, len(order), 2))
            order[i], order[j] = order[j], order[i]
    win_index = int(rng.integers(len(order)))
    win_tile = order[win_index]
    kong_faces = tuple(
        "outer_down" if m.kind is MeldKind.KONG_CONCEALED and rng.random() < 0.7 else "up" for m in melds
    )
    hand = Hand(tuple(order), tuple(melds), win_tile)
    return HandPlan(hand, tuple(order), win_index, winning, kong_faces)


def _suit_rank(tile: Tile, suits: list[int]) -> int:
    return suits.index(tile // 9) if tile // 9 in suits else 9


def _free_tile(rng: np.random.Generator, suits: list[int], counts: list[int], need: int) -> Tile | None:
    options = [s * 9 + r for s in suits for r in range(9) if counts[s * 9 + r] + need <= 4]
    return int(options[int(rng.integers(len(options)))]) if options else None


def _sets_and_pair(rng: np.random.Generator, suits: list[int], counts: list[int], n_sets: int) -> list[Tile]:
    for _ in range(100):
        trial = list(counts)
        tiles: list[Tile] = []
        ok = True
        for _ in range(n_sets):
            suit = suits[int(rng.integers(len(suits)))]
            if rng.random() < 0.3:
                tile = _free_tile(rng, [suit], trial, 3)
                group = [tile] * 3 if tile is not None else []
            else:
                start = suit * 9 + int(rng.integers(7))
                group = [start, start + 1, start + 2]
            if not group or any(trial[t] + group.count(t) > 4 for t in set(group)):
                ok = False
                break
            for t in group:
                trial[t] += 1
            tiles += group
        pair = _free_tile(rng, suits, trial, 2) if ok else None
        if ok and pair is not None:
            trial[pair] += 2
            counts[:] = trial
            return [*tiles, pair, pair]
    raise RuntimeError("could not build a hand")  # practically unreachable


def _seven_pairs(rng: np.random.Generator, suits: list[int], counts: list[int]) -> list[Tile]:
    tiles: list[Tile] = []
    while len(tiles) < 14:
        need = 4 if len(tiles) <= 10 and rng.random() < 0.15 else 2  # 龙七对: four of a kind as two pairs
        tile = _free_tile(rng, suits, counts, need)
        if tile is None or (need == 2 and counts[tile] > 0):
            continue
        counts[tile] += need
        tiles += [tile] * need
    return tiles


def _spoil(rng: np.random.Generator, suits: list[int], counts: list[int], tiles: list[Tile]) -> list[Tile]:
    """Replace one tile, keeping at most four copies: usually no longer a winning shape."""
    tiles = list(tiles)
    i = int(rng.integers(len(tiles)))
    replacement = _free_tile(rng, suits, counts, 1)
    if replacement is not None:
        counts[tiles[i]] -= 1
        counts[replacement] += 1
        tiles[i] = replacement
    return tiles


def is_winning_shape(tiles: list[Tile] | tuple[Tile, ...]) -> bool:
    """Four sets and a pair (fewer sets when melds are revealed), or seven pairs."""
    counts = [0] * 27
    for t in tiles:
        counts[t] += 1
    if len(tiles) % 3 != 2:
        return False
    if len(tiles) == 14 and all(c % 2 == 0 for c in counts):
        return True
    for pair in range(27):
        if counts[pair] >= 2:
            counts[pair] -= 2
            if _all_sets(counts, 0):
                counts[pair] += 2
                return True
            counts[pair] += 2
    return False


def _all_sets(counts: list[int], start: int) -> bool:
    i = start
    while i < 27 and counts[i] == 0:
        i += 1
    if i == 27:
        return True
    if counts[i] >= 3:
        counts[i] -= 3
        ok = _all_sets(counts, i)
        counts[i] += 3
        if ok:
            return True
    if i % 9 <= 6 and counts[i + 1] and counts[i + 2]:
        for t in (i, i + 1, i + 2):
            counts[t] -= 1
        ok = _all_sets(counts, i)
        for t in (i, i + 1, i + 2):
            counts[t] += 1
        return ok
    return False
