"""Random legal hands, for benchmarks and tests. Deterministic for a seeded ``random.Random``.

A winning hand is built from 4 random sets (runs, concealed triplets, pongs and kongs, the last two as
melds) plus a pair, or 七对, within one or two suits and never more than 4 copies of a tile. A ready hand
is a winning hand with one concealed tile taken out.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from scoring.hand import Hand, Meld, MeldKind
from scoring.tiles import Tile

_KONG_KINDS = (MeldKind.KONG_EXPOSED, MeldKind.KONG_ADDED, MeldKind.KONG_CONCEALED)


@dataclass(frozen=True, slots=True)
class ReadyHand:
    concealed: tuple[Tile, ...]
    melds: tuple[Meld, ...]
    missing: Tile  # the tile taken out of a winning hand: always one of the waits


def random_winning_hand(rng: Random, *, seven_pairs_rate: float = 0.1, meld_rate: float = 0.25) -> Hand:
    """A random legal winning hand (shuffled concealed tiles, a random winning tile among them)."""
    while True:
        suits = rng.sample(range(3), rng.choice((1, 2, 2)))
        tiles = [suit * 9 + rank for suit in suits for rank in range(9)]
        if rng.random() < seven_pairs_rate:
            hand = _seven_pairs(rng, tiles)
        else:
            hand = _standard(rng, tiles, meld_rate)
        if hand is not None:
            return hand


def random_ready_hand(rng: Random, **options: float) -> ReadyHand:
    """A random hand one tile short of a win (a winning hand minus one concealed tile)."""
    hand = random_winning_hand(rng, **options)
    concealed = list(hand.concealed)
    missing = concealed.pop(rng.randrange(len(concealed)))
    return ReadyHand(tuple(concealed), hand.melds, missing)


def _finish(rng: Random, concealed: list[Tile], melds: list[Meld]) -> Hand:
    rng.shuffle(concealed)
    return Hand(tuple(concealed), tuple(melds), rng.choice(concealed))


def _seven_pairs(rng: Random, tiles: list[Tile]) -> Hand | None:
    counts = dict.fromkeys(tiles, 0)
    concealed: list[Tile] = []
    for _ in range(7):
        free = [tile for tile in tiles if counts[tile] <= 2]
        tile = rng.choice(free)
        counts[tile] += 2
        concealed += [tile, tile]
    return _finish(rng, concealed, [])


def _standard(rng: Random, tiles: list[Tile], meld_rate: float) -> Hand | None:
    counts = dict.fromkeys(tiles, 0)
    concealed: list[Tile] = []
    melds: list[Meld] = []
    for _ in range(4):
        if rng.random() < 0.5:
            starts = [t for t in tiles if t % 9 <= 6 and all(counts.get(t + i, 4) < 4 for i in range(3))]
            if not starts:
                return None
            start = rng.choice(starts)
            for i in range(3):
                counts[start + i] += 1
                concealed.append(start + i)
            continue
        free = [tile for tile in tiles if counts[tile] <= 1]
        if not free:
            return None
        tile = rng.choice(free)
        if rng.random() < meld_rate:
            kind = MeldKind.PONG if rng.random() < 0.5 or counts[tile] else rng.choice(_KONG_KINDS)
            melds.append(Meld(kind, tile))
            counts[tile] += kind.size
        else:
            counts[tile] += 3
            concealed += [tile] * 3
    free = [tile for tile in tiles if counts[tile] <= 2]
    if not free:
        return None
    pair = rng.choice(free)
    concealed += [pair, pair]
    return _finish(rng, concealed, melds)
