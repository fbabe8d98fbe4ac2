"""Builders and hypothesis strategies for the scoring tests."""

from __future__ import annotations

from collections import Counter
from itertools import combinations_with_replacement

from hypothesis import assume
from hypothesis import strategies as st

from scoring import Hand, Meld, MeldKind
from scoring.tiles import Tile, format_tiles, parse_tile

_MELD_KINDS = {
    "pong": MeldKind.PONG,
    "kong": MeldKind.KONG_EXPOSED,
    "added_kong": MeldKind.KONG_ADDED,
    "concealed_kong": MeldKind.KONG_CONCEALED,
}


# The top-level keys of ``Score.to_json()`` and ``Ledger.to_json()`` (and of their ``--json`` output).
SCORE_JSON_KEYS = {
    "valid",
    "error",
    "preset",
    "fans",
    "combination",
    "raw_fan",
    "total_fan",
    "multiplier",
    "decomposition",
    "payment",
    "payers",
}
LEDGER_JSON_KEYS = {"preset", "base", "players", "finished", "next_dealer", "payments", "totals", "notes"}


def hand(
    concealed: str,
    *,
    pong: tuple[str, ...] = (),
    kong: tuple[str, ...] = (),
    added_kong: tuple[str, ...] = (),
    concealed_kong: tuple[str, ...] = (),
    win: str | None = None,
) -> Hand:
    """``hand("123m456p...", kong=("2p",), win="6p")``."""
    return Hand.parse(
        concealed, pongs=pong, kongs=kong, added_kongs=added_kong, concealed_kongs=concealed_kong, win=win
    )


def tiles_of(text: str) -> tuple[Tile, ...]:
    return Hand.parse(text).concealed


# --- hypothesis strategies -----------------------------------------------------------------------------

SET_KINDS = ("run", "triplet", "pong", "kong", "added_kong", "concealed_kong")


@st.composite
def winning_hands(draw: st.DrawFn, melds: bool = True, seven_pairs: bool = True) -> Hand:
    """A legal winning hand: 4 sets (runs, concealed triplets, pongs, kongs) + a pair, or 七对, in one or two
    suits, never more than 4 copies of a tile, concealed tiles in a random order."""
    suits = draw(st.lists(st.sampled_from("mps"), min_size=1, max_size=2, unique=True))
    tiles = [parse_tile(f"{rank}{suit}") for suit in suits for rank in range(1, 10)]
    counts: Counter[Tile] = Counter()
    concealed: list[Tile] = []
    meld_list: list[Meld] = []
    if seven_pairs and draw(st.integers(0, 5)) == 0:
        for _ in range(7):
            free = [tile for tile in tiles if counts[tile] <= 2]
            tile = draw(st.sampled_from(free))
            counts[tile] += 2
            concealed += [tile, tile]
    else:
        kinds = SET_KINDS if melds else SET_KINDS[:2]
        for _ in range(4):
            kind = draw(st.sampled_from(kinds))
            if kind == "run":
                options = [t for t in tiles if t % 9 <= 6 and all(counts[t + i] < 4 for i in range(3))]
                assume(options)
                start = draw(st.sampled_from(options))
                for i in range(3):
                    counts[start + i] += 1
                    concealed.append(start + i)
                continue
            size = 4 if "kong" in kind else 3
            options = [t for t in tiles if counts[t] + size <= 4]
            assume(options)
            tile = draw(st.sampled_from(options))
            counts[tile] += size
            if kind == "triplet":
                concealed += [tile] * 3
            else:
                meld_list.append(Meld(_MELD_KINDS[kind], tile))
        options = [t for t in tiles if counts[t] <= 2]
        assume(options)
        pair = draw(st.sampled_from(options))
        concealed += [pair, pair]
    order = draw(st.permutations(concealed))
    win = draw(st.sampled_from(concealed))
    return Hand(tuple(order), tuple(meld_list), win)


def brute_force_readings(hand: Hand) -> set[tuple[str, ...]]:
    """Every standard reading of the concealed tiles, by trying all multisets of candidate sets and pairs.

    Independent of ``scoring.decompose``: returns sorted tile strings per set, melds not included.
    """
    counts = Counter(hand.concealed)
    need = (len(hand.concealed) - 2) // 3
    candidates: list[tuple[Tile, ...]] = [(t,) * 3 for t in counts if counts[t] >= 3]
    candidates += [(t, t + 1, t + 2) for t in counts if t % 9 <= 6 and counts[t + 1] and counts[t + 2]]
    found = set()
    for pair in [t for t in counts if counts[t] >= 2]:
        for chosen in combinations_with_replacement(sorted(candidates), need):
            used = Counter({pair: 2})
            for group in chosen:
                used.update(group)
            if used == counts:
                found.add(
                    tuple(sorted([format_tiles(group) for group in chosen] + [format_tiles((pair, pair))]))
                )
    return found
