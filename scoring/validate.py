"""Is a hand a legal Sichuan win? Every failure is a ``ScoreError`` with a reason code, never an exception.

The checks run in a fixed order and the first failure is reported: tile count, copies, 缺一门, 定缺,
the winning tile, then the win context. Whether the tiles form a winning shape is decided by the
decomposer (``scoring.decompose``); ``score`` reports ``not_a_winning_shape`` when no reading exists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scoring.conditions import CONDITIONS_BY_KEY, WIN_CONDITIONS, exclusions
from scoring.errors import ErrorCode, ScoreError
from scoring.hand import Hand, Meld, WinContext, tile_count
from scoring.tiles import SUITS, Tile, tile_name


@dataclass(frozen=True, slots=True)
class ContextFacts:
    """What the context checks look at: the flags, the melds, and how many copies of the winning tile
    the hand holds (``None`` when unknown, as for a hand still waiting)."""

    context: WinContext
    melds: tuple[Meld, ...]
    win_tile_copies: int | None = None

    @property
    def kongs(self) -> int:
        return sum(1 for meld in self.melds if meld.kind.is_kong)


def _requires(key: str, required: str) -> tuple[str, Callable[[ContextFacts], bool], str]:
    condition, needed = CONDITIONS_BY_KEY[key], CONDITIONS_BY_KEY[required]
    return (
        key,
        lambda f: not getattr(f.context, required),
        f"{condition.name_zh} ({condition.help}) is won with {needed.name_zh}: set {required} too",
    )


def _excludes(key: str, other: str) -> tuple[str, Callable[[ContextFacts], bool], str]:
    one, two = CONDITIONS_BY_KEY[key], CONDITIONS_BY_KEY[other]
    return (
        key,
        lambda f: getattr(f.context, other),
        f"{one.name_zh} ({one.help}) and {two.name_zh} ({two.help}) exclude each other",
    )


# What the hand itself says against a condition, beside the table's relations between conditions.
HAND_RULES: tuple[tuple[str, Callable[[ContextFacts], bool], str], ...] = (
    ("gang_shang_hua", lambda f: f.kongs == 0, "杠上花 needs a kong among the winner's melds"),
    (
        "qiang_gang",
        lambda f: f.win_tile_copies is not None and f.win_tile_copies > 1,
        "抢杠胡: the other three copies of the winning tile are in the robbed pong; the hand holds only one",
    ),
    ("tian_hu", lambda f: bool(f.melds), "天胡 is won on the initial 14 tiles: no melds"),
    ("di_hu", lambda f: bool(f.melds), "地胡 comes in the first go-round: no melds"),
)

# The table's relations (``scoring.conditions``): two conditions that exclude each other, one without a
# condition it requires.
CONDITION_RULES: tuple[tuple[str, Callable[[ContextFacts], bool], str], ...] = (
    *(_excludes(key, other) for key, other in exclusions()),
    *(_requires(c.key, required) for c in WIN_CONDITIONS for required in c.requires),
)
# (flag, contradiction, message): when the context flag is set and the predicate holds, the context is
# impossible. Grouping by flag keeps a plain win (no flags) to one pass over the flags.
CONTEXT_RULES = CONDITION_RULES + HAND_RULES
_RULES_BY_FLAG: dict[str, list[tuple[Callable[[ContextFacts], bool], str]]] = {}
for _flag, _contradicts, _message in CONTEXT_RULES:
    _RULES_BY_FLAG.setdefault(_flag, []).append((_contradicts, _message))


def check_context(facts: ContextFacts) -> ScoreError | None:
    """The first contradiction in the win context, if any."""
    for flag, rules in _RULES_BY_FLAG.items():
        if getattr(facts.context, flag):
            for contradicts, message in rules:
                if contradicts(facts):
                    return ScoreError(ErrorCode.CONTRADICTORY_CONTEXT, message)
    return None


def check_tiles(
    concealed: Sequence[Tile],
    melds: Sequence[Meld],
    counts: Sequence[int],
    context: WinContext,
    *,
    waiting: bool = False,
) -> ScoreError | None:
    """Count, copies, 缺一门 and 定缺 for ``concealed`` + ``melds`` whose 27 ``counts`` are given.

    The count is ``tile_count``'s: a winning hand's, or with ``waiting`` a hand's waiting for its last tile.
    """
    kongs = sum(1 for meld in melds if meld.kind.is_kong)
    expected = tile_count(kongs, waiting=waiting)
    total = len(concealed) + sum(meld.kind.size for meld in melds)
    if total != expected:
        return ScoreError(
            ErrorCode.WRONG_TILE_COUNT,
            f"expected {expected} tiles ({tile_count(waiting=waiting)} + one per kong, {kongs} kong(s)), "
            f"got {total}: {len(concealed)} concealed and {total - len(concealed)} in {len(melds)} meld(s)",
        )
    if max(counts) > 4:
        tile = max(range(27), key=counts.__getitem__)
        return ScoreError(
            ErrorCode.TOO_MANY_COPIES,
            f"{counts[tile]} copies of {tile_name(tile)}; there are only 4 of each tile",
        )
    suits = [SUITS[suit] for suit in range(3) if any(counts[suit * 9 : suit * 9 + 9])]
    if len(suits) == 3:
        return ScoreError(
            ErrorCode.THREE_SUITS, "the hand holds all three suits (万, 筒, 条); 缺一门 allows two"
        )
    if context.void_suit is not None and context.void_suit in suits:
        return ScoreError(
            ErrorCode.VOID_SUIT_PRESENT, f"the declared void suit {context.void_suit!r} (定缺) is in the hand"
        )
    return None


def validate(hand: Hand, context: WinContext, counts: Sequence[int] | None = None) -> ScoreError | None:
    """The first reason ``hand`` cannot be a win in ``context`` (shape aside), or ``None``.

    ``counts`` (27 counts over concealed tiles and melds) may be passed when already computed.
    """
    if counts is None:
        counts = [0] * 27
        for tile in hand.all_tiles:
            counts[tile] += 1
    error = check_tiles(hand.concealed, hand.melds, counts, context)
    if error is not None:
        return error
    if hand.win_tile is not None and hand.win_tile not in hand.concealed:
        return ScoreError(
            ErrorCode.WIN_TILE_NOT_IN_HAND,
            f"the winning tile {tile_name(hand.win_tile)} is not among the concealed tiles",
        )
    copies = counts[hand.win_tile] if hand.win_tile is not None else None
    return check_context(ContextFacts(context, hand.melds, copies))
