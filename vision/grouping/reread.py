"""Second readings: a photographed winning hand that reads as no legal win holds a misread tile.

The classifier names each tile with its likeliest class and keeps a runner-up
(``Detections.runner_up``). When the grouped hand is no legal win (wrong shape, a fifth copy, three
suits) but has the right number of tiles, the likeliest re-reading that makes it one is taken: one tile
read as its runner-up, else two, the cost of a change being the log ratio of the first reading's
confidence to the runner-up's. The detections are re-grouped with the change (a re-read tile can
complete a pong) and a ``reread_tile`` warning names every tile read otherwise, so that nothing
changes silently.
"""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import combinations

from scoring import score
from scoring.hand import Hand
from scoring.tiles import CLASS_NAMES
from vision.detections import Detections
from vision.grouper import group_detections
from vision.grouping.result import Grouping, GroupingWarning, GroupRole, WarningCode

# a runner-up whose confidence is 50 times lower than the first reading's is never taken (confidences
# are geometric means of box and face: its face probability is then 2,500 times lower)
MAX_COST = math.log(50.0)
PAIR_CANDIDATES = 6  # two tiles re-read together: among this many cheapest single changes


def reread(detections: Detections, grouping: Grouping) -> tuple[Detections, Grouping]:
    """The detections and grouping with the cheapest re-reading that makes a legal win, or unchanged."""
    if detections.runner_up is None or detections.runner_up_confidences is None:
        return detections, grouping
    if grouping.hand is None or _is_legal_win(grouping.hand):
        return detections, grouping
    if WarningCode.TILE_COUNT in grouping.codes:
        return detections, grouping  # a tile missing or one too many: no re-reading mends that
    suited = len(CLASS_NAMES)
    costs: dict[int, float] = {}
    for group in grouping.groups:
        if group.role is GroupRole.IGNORED:
            continue
        for i in group.indices:
            first, second = detections.confidences[i], detections.runner_up_confidences[i]
            if detections.class_ids[i] < suited and second > 0:
                cost = math.log(max(float(first), 1e-6) / float(second))
                if cost <= MAX_COST:
                    costs[i] = cost
    cheapest = sorted(costs, key=costs.__getitem__)
    options: list[tuple[float, tuple[int, ...]]] = [(costs[i], (i,)) for i in cheapest]
    options += [(costs[i] + costs[j], (i, j)) for i, j in combinations(cheapest[:PAIR_CANDIDATES], 2)]
    for _, changed in sorted(options):
        candidate = detections
        for i in changed:
            candidate = candidate.reread(i)
        regrouped = group_detections(candidate)
        if regrouped.hand is not None and _is_legal_win(regrouped.hand):
            return candidate, _with_warning(regrouped, detections, changed)
    return detections, grouping


def _is_legal_win(hand: Hand) -> bool:
    return score(hand).valid


def _with_warning(grouping: Grouping, before: Detections, changed: tuple[int, ...]) -> Grouping:
    names = [CLASS_NAMES[int(before.class_ids[i])] for i in changed]
    assert before.runner_up is not None
    seconds = [CLASS_NAMES[int(before.runner_up[i])] for i in changed]
    what = ", ".join(f"{first} as {second}" for first, second in zip(names, seconds, strict=True))
    warning = GroupingWarning(
        WarningCode.REREAD_TILE,
        f"the first reading is no winning hand; read {what} (the classifier's second choice)",
        changed,
        tuple(seconds),
    )
    return replace(grouping, warnings=(*grouping.warnings, warning))
