"""Every way to read a winning hand: 4 sets + 1 pair (melds included), or 七对.

The concealed tiles are split per suit; each suit's 9 counts are partitioned into runs, triplets and at
most one pair by a recursive search cached per count tuple (``functools.lru_cache``), so scoring and
wait-finding mostly cost dictionary look-ups. A quad inside the concealed tiles is never a
kong (a kong must be declared): it reads as a triplet plus a tile of a run, or as two pairs in 七对.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache, lru_cache
from itertools import product

from scoring.hand import Hand, Meld, MeldKind, concealed_count
from scoring.tiles import SUITS, Tile, rank_of, suit_of

_SEVEN_PAIRS_TILES = concealed_count(0)  # 七对 holds no melds
_MELD_LABELS = {
    MeldKind.PONG: "pong",
    MeldKind.KONG_EXPOSED: "kong",
    MeldKind.KONG_ADDED: "added kong",
    MeldKind.KONG_CONCEALED: "concealed kong",
}


class GroupKind(StrEnum):
    RUN = "run"  # 顺子, three consecutive tiles of one suit
    TRIPLET = "triplet"  # 刻子: a concealed triplet or a pong
    QUAD = "quad"  # 杠: a declared kong (melds only)
    PAIR = "pair"  # 将 / 对子


_SIZES = {GroupKind.RUN: 3, GroupKind.TRIPLET: 3, GroupKind.QUAD: 4, GroupKind.PAIR: 2}


@dataclass(frozen=True, slots=True)
class Group:
    """One set or pair: its kind, its lowest tile, and the meld it came from (``None`` if concealed)."""

    kind: GroupKind
    tile: Tile
    meld: MeldKind | None = None
    is_run: bool = field(init=False, compare=False)
    terminal: bool = field(init=False, compare=False)  # holds a 1 or a 9 (幺九)
    label: str = field(init=False, compare=False)  # "123m", "666p", "2222p(kong)", "66p"

    def __post_init__(self) -> None:
        rank = rank_of(self.tile)
        object.__setattr__(self, "is_run", self.kind is GroupKind.RUN)
        terminal = rank in (1, 7) if self.kind is GroupKind.RUN else rank in (1, 9)
        object.__setattr__(self, "terminal", terminal)
        digits = "".join(str(rank_of(t)) for t in self.tiles)
        suffix = f"({_MELD_LABELS[self.meld]})" if self.meld is not None else ""
        object.__setattr__(self, "label", f"{digits}{suit_of(self.tile)}{suffix}")

    @property
    def tiles(self) -> tuple[Tile, ...]:
        if self.kind is GroupKind.RUN:
            return (self.tile, self.tile + 1, self.tile + 2)
        return (self.tile,) * _SIZES[self.kind]


@dataclass(frozen=True, slots=True)
class Decomposition:
    """One reading of a winning hand.

    Standard: ``sets`` holds the 4 sets (concealed ones in tile order, then the melds) and ``pairs`` the
    one pair. 七对: ``sets`` is empty and ``pairs`` holds the seven pairs (a quad gives two).
    """

    sets: tuple[Group, ...]
    pairs: tuple[Group, ...]

    @property
    def seven_pairs(self) -> bool:
        return not self.sets

    @property
    def groups(self) -> tuple[Group, ...]:
        return self.sets + self.pairs

    def labels(self) -> tuple[str, ...]:
        """``("123m", "345m", "999p", "2222p(kong)", "66p")``: sets first, the pair(s) last."""
        return tuple(group.label for group in self.sets + self.pairs)


@cache
def meld_group(meld: Meld) -> Group:
    kind = GroupKind.QUAD if meld.kind.is_kong else GroupKind.TRIPLET
    return Group(kind, meld.tile, meld.kind)


# --- per-suit partitions -------------------------------------------------------------------------------

_Partition = tuple[tuple[tuple[bool, int], ...], int]  # ((is_run, rank index), ...), pair rank index or -1


_NOTHING_LEFT: tuple[_Partition, ...] = (((), -1),)


@lru_cache(maxsize=1 << 17)
def suit_partitions(counts: tuple[int, ...]) -> tuple[_Partition, ...]:
    """All partitions of one suit's 9 counts into runs, triplets and (iff the total is 2 mod 3) one pair.

    Every copy of the lowest tile is used at once: as a pair or not, a triplet or not, and the rest as
    starts of runs. Each multiset of sets comes out exactly once, and the remainder is partitioned by the
    same (cached) function, so hands share the work on their common remainders.
    """
    total = sum(counts)
    if total == 0:
        return _NOTHING_LEFT
    if total % 3 == 1:
        return ()
    index = next(rank for rank, count in enumerate(counts) if count)
    copies = counts[index]
    out: list[_Partition] = []
    for pairs in (1, 0) if total % 3 == 2 else (0,):
        for triplets in (0, 1):
            runs = copies - 2 * pairs - 3 * triplets
            if runs < 0 or (runs and (index > 6 or counts[index + 1] < runs or counts[index + 2] < runs)):
                continue
            rest = list(counts)
            rest[index] = 0
            if runs:
                rest[index + 1] -= runs
                rest[index + 2] -= runs
            head = ((False, index),) * triplets + ((True, index),) * runs
            out.extend((head + sets, index if pairs else pair) for sets, pair in suit_partitions(tuple(rest)))
    return tuple(out)


# Concealed groups are built once per (kind, tile) and shared.
_TRIPLETS = tuple(Group(GroupKind.TRIPLET, tile) for tile in range(27))
_RUNS = {tile: Group(GroupKind.RUN, tile) for tile in range(27) if tile % 9 <= 6}
_PAIRS = tuple(Group(GroupKind.PAIR, tile) for tile in range(27))


@lru_cache(maxsize=1 << 16)
def _suit_readings(suit: int, counts: tuple[int, ...]) -> tuple[tuple[tuple[Group, ...], Group | None], ...]:
    """``suit_partitions`` as ``Group`` objects with absolute tile ids."""
    base = suit * 9
    return tuple(
        (
            tuple(_RUNS[base + rank] if is_run else _TRIPLETS[base + rank] for is_run, rank in sets),
            _PAIRS[base + pair] if pair >= 0 else None,
        )
        for sets, pair in suit_partitions(counts)
    )


def _suit_slices(counts: Sequence[int]) -> list[tuple[int, ...]]:
    return [tuple(counts[suit * 9 : suit * 9 + 9]) for suit in range(len(SUITS))]


def is_standard_shape(concealed_counts: Sequence[int]) -> bool:
    """Fast test: do the concealed tiles split into sets plus exactly one pair?"""
    pairs = 0
    for counts in _suit_slices(concealed_counts):
        total = sum(counts)
        if total == 0:
            continue
        if not suit_partitions(counts):
            return False
        pairs += total % 3 == 2
    return pairs == 1


def is_seven_pairs(concealed_counts: Sequence[int], meld_count: int) -> bool:
    """七对: no melds, 14 concealed tiles, every count even (a quad is two pairs)."""
    return (
        meld_count == 0
        and sum(concealed_counts) == _SEVEN_PAIRS_TILES
        and not any(count % 2 for count in concealed_counts if count)
    )


def winning_tiles(concealed_counts: Sequence[int], meld_count: int, candidates: Sequence[Tile]) -> list[Tile]:
    """The candidates that, added to the concealed tiles, give a winning shape (standard or 七对).

    Only the suit of the added tile changes, so the other suits are looked at once.
    """
    slices = _suit_slices(concealed_counts)
    totals = [sum(counts) for counts in slices]
    suit_ok = [
        total == 0 or bool(suit_partitions(counts)) for total, counts in zip(totals, slices, strict=True)
    ]
    has_pair = [total % 3 == 2 for total in totals]
    # per suit of the added tile: are the other two suits complete, and how many pairs do they hold?
    others_ok = [suit_ok[(suit + 1) % 3] and suit_ok[(suit + 2) % 3] for suit in range(3)]
    other_pairs = [has_pair[(suit + 1) % 3] + has_pair[(suit + 2) % 3] for suit in range(3)]
    odd = [tile for tile, count in enumerate(concealed_counts) if count % 2]
    one_short = meld_count == 0 and sum(totals) == _SEVEN_PAIRS_TILES - 1
    seven_pairs_tile = odd[0] if one_short and len(odd) == 1 else -1
    out = []
    for tile in candidates:
        suit, rank = divmod(tile, 9)
        if others_ok[suit] and other_pairs[suit] + ((totals[suit] + 1) % 3 == 2) == 1:
            counts = list(slices[suit])
            counts[rank] += 1
            if suit_partitions(tuple(counts)):
                out.append(tile)
                continue
        if tile == seven_pairs_tile:
            out.append(tile)
    return out


def standard_decompositions(
    concealed_counts: Sequence[int], melds: Sequence[Meld] = ()
) -> tuple[Decomposition, ...]:
    """Every split of the concealed tiles into sets + one pair, combined with the melds."""
    per_suit = []
    pairs = 0
    for suit in range(3):
        counts = tuple(concealed_counts[suit * 9 : suit * 9 + 9])
        total = sum(counts)
        if total == 0:
            continue
        readings = _suit_readings(suit, counts)
        if not readings:
            return ()
        pairs += total % 3 == 2
        per_suit.append(readings)
    if pairs != 1:
        return ()
    meld_groups = tuple(meld_group(meld) for meld in melds)
    if len(per_suit) == 1:
        return tuple(
            Decomposition(sets + meld_groups, (pair,)) for sets, pair in per_suit[0] if pair is not None
        )
    found = []
    for choice in product(*per_suit):
        pair = next(pair for _, pair in choice if pair is not None)
        sets = tuple(group for groups, _ in choice for group in groups) + meld_groups
        found.append(Decomposition(sets, (pair,)))
    return tuple(found)


def seven_pairs_decomposition(
    concealed_counts: Sequence[int], melds: Sequence[Meld] = ()
) -> Decomposition | None:
    """The 七对 reading, or ``None``."""
    if not is_seven_pairs(concealed_counts, len(melds)):
        return None
    pairs = tuple(_PAIRS[tile] for tile, count in enumerate(concealed_counts) for _ in range(count // 2))
    return Decomposition((), pairs)


def decompositions(hand: Hand) -> tuple[Decomposition, ...]:
    """All readings of a hand: standard ones first, then 七对 if it applies."""
    counts = [0] * 27
    for tile in hand.concealed:
        counts[tile] += 1
    found = standard_decompositions(counts, hand.melds)
    pairs = seven_pairs_decomposition(counts, hand.melds)
    return (*found, pairs) if pairs is not None else found
