"""Second readings: a photographed winning hand that reads as no legal win holds a misread tile.

The classifier names each tile with its likeliest class and keeps the next likeliest suited tiles
(``Detections.alternatives``). When the grouped hand is no legal win (wrong shape, a fifth copy, three
suits) but has the right number of tiles, the likeliest re-reading that makes it one is taken: up to
``MAX_CHANGES`` tiles read as one of their alternatives, cheapest first, the cost of a change being the
log ratio of the first reading's confidence to the alternative's. The detections are re-grouped with
the change (a re-read tile can complete a pong) and a ``reread_tile`` warning names every tile read
otherwise, so that nothing changes silently.

Re-grouping costs a few milliseconds, so a change of concealed tiles only is first tried on the hand as
grouped (their faces hardly move the grouping) and re-grouped only when that reads as a win; changes
that touch a meld or a stray tile are re-grouped, at most ``MAX_REGROUPS`` of them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from itertools import combinations

from scoring import score
from scoring.hand import Hand
from scoring.tiles import CLASS_NAMES
from vision.detections import Detections
from vision.grouper import group_detections
from vision.grouping.result import Grouping, GroupingWarning, GroupRole, WarningCode, warning_name

# an alternative whose confidence is 10 times lower than the first reading's is never taken (confidences
# are geometric means of box and face: its face probability is then 100 times lower). Against 50 times: as
# many synthetic hands (255 of 346 against 254), and two real photos of a hand that is no win keep the tiles
# read right at first (real hands 16/18 and 14/17 against 15/18 and 13/17)
MAX_COST = math.log(10.0)
MAX_CHANGES = 3  # tiles re-read together, at most
COMBINED = 8  # changes of several tiles are made from this many cheapest single changes
MAX_REGROUPS = 16  # changes touching a meld (each needs the photo re-grouped) tried, at most

Change = tuple[int, int]  # (detection index, rank of the alternative)


def reread(detections: Detections, grouping: Grouping) -> tuple[Detections, Grouping]:
    """The detections and grouping with the cheapest re-reading that makes a legal win, or unchanged."""
    if detections.alternatives is None or grouping.hand is None or is_legal_win(grouping.hand):
        return detections, grouping
    if WarningCode.TILE_COUNT in grouping.codes:
        return detections, grouping  # a tile missing or one too many: no re-reading mends that
    concealed = {i for group in grouping.groups if group.role is GroupRole.HAND for i in group.indices}
    if len(concealed) != len(grouping.hand.concealed):
        concealed = set()  # the hand is not its groups' tiles one for one: always re-group
    regroups = 0
    for changes in _by_cost(detections, grouping):
        if all(i in concealed for i, _ in changes):
            if not is_legal_win(_changed_hand(grouping, detections, changes)):
                continue
        elif regroups < MAX_REGROUPS:
            regroups += 1
        else:
            continue
        candidate = detections
        for i, rank in changes:
            candidate = candidate.reread(i, rank)
        regrouped = group_detections(candidate)
        if regrouped.hand is not None and is_legal_win(regrouped.hand):
            return candidate, _with_warning(regrouped, detections, changes)
    return detections, grouping


def _by_cost(detections: Detections, grouping: Grouping) -> Iterator[tuple[Change, ...]]:
    """Sets of changes, one per tile, cheapest total cost first."""
    assert detections.alternatives is not None and detections.alternative_confidences is not None
    costs: dict[Change, float] = {}
    for group in grouping.groups:
        if group.role is GroupRole.IGNORED:
            continue
        for i in group.indices:
            if detections.class_ids[i] >= len(CLASS_NAMES):
                continue
            first = max(float(detections.confidences[i]), 1e-6)
            for rank, other in enumerate(detections.alternative_confidences[i]):
                if other > 0 and (cost := math.log(first / float(other))) <= MAX_COST:
                    costs[(i, rank)] = cost
    cheapest = sorted(costs, key=costs.__getitem__)
    options: list[tuple[float, tuple[Change, ...]]] = [(costs[change], (change,)) for change in cheapest]
    for size in range(2, MAX_CHANGES + 1):
        for changes in combinations(cheapest[:COMBINED], size):
            if len({i for i, _ in changes}) == size:
                options.append((math.fsum(costs[c] for c in changes), changes))
    options.sort()
    return (changes for _, changes in options)


def _changed_hand(grouping: Grouping, detections: Detections, changes: tuple[Change, ...]) -> Hand:
    """The grouped hand with concealed tiles read otherwise (its melds and structure unchanged)."""
    assert grouping.hand is not None and detections.alternatives is not None
    tiles = list(grouping.hand.concealed)
    win_tile = grouping.hand.win_tile
    for i, rank in changes:
        old, new = int(detections.class_ids[i]), int(detections.alternatives[i, rank])
        tiles[tiles.index(old)] = new
        if i == grouping.win_index:
            win_tile = new
    return replace(grouping.hand, concealed=tuple(tiles), win_tile=win_tile)


def is_legal_win(hand: Hand) -> bool:
    """Whether the hand scores as a win (the rules' default preset)."""
    return score(hand).valid


def _with_warning(grouping: Grouping, before: Detections, changes: tuple[Change, ...]) -> Grouping:
    assert before.alternatives is not None
    indices = tuple(i for i, _ in changes)
    firsts = [warning_name(int(before.class_ids[i])) for i in indices]
    seconds = [warning_name(int(before.alternatives[i, rank])) for i, rank in changes]
    what = ", ".join(f"{first} as {second}" for first, second in zip(firsts, seconds, strict=True))
    warning = GroupingWarning(
        WarningCode.REREAD_TILE,
        f"the first reading is no winning hand; read {what} (the classifier's next choices)",
        indices,
        tuple(seconds),
    )
    return grouping.warned(warning)
