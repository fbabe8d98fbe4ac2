"""The search for a winning reading: one stage after the grouper.

A photographed winning hand that groups as no legal win under the request's rules (``scoring.is_win``)
holds a misread tile, misses a tile the detector found but was unsure of, or holds one too many (a second
box on a tile, a discard in line with the row). Each mend is an *edit* of the first reading, and every
edit costs the log ratio of two confidences (confidences are geometric means of box and face):

- ``reread``: a placed suited tile read as one of the classifier's next choices (``Detections.alternatives``),
  costing log(first reading / alternative), at most ``SearchConfig.max_cost``;
- ``take_back``: a suited box found below the operating threshold (``unsure``) and overlapping no kept
  tile taken in, costing log(threshold / its confidence);
- ``leave_out``: a tile of the hand or its melds left out, costing log(its confidence / threshold).

A candidate reading is a set of edits: as many take-backs as the hand is short, or leave-outs as it is
over (one or two, ``max_off``), or none; when the count is right but lone tiles apart from the hand made it
up (``not_a_meld``), one or two take-backs, or one leave-out of any suited tile (a box across the seam of a
flat meld spoils the meld), that leave no lone tile are candidates too. Each goes with up to
``max_rereads`` re-readings. Candidates are tried cheapest first by their summed cost, each set of
detections grouped once (``group_detections``, a pure function of the boxes); a re-reading of concealed
tiles only is first tried on the hand as grouped, which needs no grouping, and grouped only when that is a
win. The first candidate that groups as a legal win is taken; when none does, the reading with the next
likeliest row as the hand's (``other_rows`` of them) is taken if it is a win as read (``other_row``); else the
first reading is kept. All of it within ``max_groupings`` groupings. The chosen edits become the reading's
warnings (``reread_tile``, ``unsure_tile``, ``left_out_tile``, ``other_row``), so nothing changes silently.

One look's readings are a ``LookSearch``: its first reading, then its candidates as (cost, attempt), cheapest
first, drawing on a ``Budget`` of groupings it may share. ``search`` runs one look alone; the reading stage
(``vision.reading``) runs the candidates of every look at a photo together, cheapest first, under one budget.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import partial
from itertools import combinations

import numpy as np

from scoring import CHENGDU, Rules, WinContext, is_win
from scoring.hand import Hand, tile_count
from scoring.tiles import CLASS_NAMES
from vision.detections import BACK, Detections
from vision.geometry.boxes import box_iou
from vision.geometry.rows import RowCache
from vision.grouping.grouper import GROUPER, GrouperConfig, group_detections, ranked_groupings
from vision.grouping.result import Group, Grouping, GroupingWarning, GroupRole, WarningCode, warning_name


@dataclass(frozen=True)
class SearchConfig:
    """The search's reach. Costs are natural logs of confidence ratios."""

    # an alternative 10 times less confident than the first reading (its face 100 times less likely) is
    # never taken: against 50 times, as many synthetic hands read and two real photos of a hand that is
    # no win keep the tiles read right at first
    max_cost: float = math.log(10.0)
    max_rereads: int = 3  # tiles re-read in one candidate, at most
    combined: int = 8  # candidates of several re-readings are made from this many cheapest single ones
    unsure_conf: float = 0.2  # boxes found below the operating threshold are kept as unsure down to this
    max_off: int = 2  # tiles: a hand short or over by more is not mended (a photo of something else)
    max_count_edits: int = 6  # the most confident unsure tiles / least confident kept ones considered
    overlap_iou: float = 0.3  # an unsure box overlapping a kept one this much is that tile again
    max_groupings: int = 24  # groupings one look's search spends, at most (the first reading's included)
    # ... and one photo's reading over every look at it, when it can be looked at again (a close-up): 48 with
    # ``look_cost`` 1 reads every hand that 24 a look read, where 24 for all the looks loses some
    # (models/HISTORY.md, "The reader's constants")
    photo_groupings: int = 48
    # rows tried as the hand's, next likeliest first, when no candidate of the likeliest row's reading is a
    # win (a hand of four melds and a pair: another player's standing row looks more like a hand than it does)
    other_rows: int = 2
    # what reading another row as the hand's costs (after every candidate edit of its look, whatever theirs)
    other_row_cost: float = math.log(10.0)
    # what a second look at a close-up costs (``vision.reading``): its candidates cost this more than the same
    # edits of the first look's, the k-th of the detector's second looks (``Views.second``) k times this,
    # taken or not (a turned look is not taken at rows that run level). At 2.3 (or never before the first
    # look's candidates are spent) the first look's cheap edits spend the budget and 2 of the 140 held-out
    # hands above that a second look reads are lost; at 1 none is
    look_cost: float = 1.0
    # a close-up that reads as no win looked at again (``Views.second``); a live frame's reading is not (the
    # next frame is its second look, ``usecases.live``)
    second_looks: bool = True


SEARCH = SearchConfig()
DISCARD_WIN = WinContext()  # a win on a discard, no other condition: what a photo alone shows


@dataclass(frozen=True)
class Terms:
    """What a reading is searched under: the operating ``threshold`` (a tile found below it is unsure), the
    ``rules`` and win ``context`` it must be a legal win under, the search's reach and the grouper's
    settings, as the request gave them."""

    threshold: float
    rules: Rules = CHENGDU
    context: WinContext = DISCARD_WIN
    config: SearchConfig = SEARCH
    grouper: GrouperConfig = GROUPER


class EditKind(StrEnum):
    REREAD = "reread"
    TAKE_BACK = "take_back"
    LEAVE_OUT = "leave_out"


@dataclass(frozen=True)
class Edit:
    """One change of the first reading. ``index``: the tile's position in the pool (the detections
    kept, then the unsure candidates); ``rank``: the alternative a re-reading takes."""

    kind: EditKind
    index: int
    cost: float
    rank: int = 0


@dataclass(frozen=True)
class Searched:
    """The reading taken: its detections (kept tiles, then the tiles taken back; a tile left out stays, in
    an ``ignored`` group), its grouping, the edits made and the groupings the search spent."""

    detections: Detections
    grouping: Grouping
    edits: tuple[Edit, ...] = ()
    groupings: int = 1
    won: bool = False  # whether the reading is a legal win under the rules it was searched under


@dataclass
class Budget:
    """The groupings a reading may spend: one look's (``SearchConfig.max_groupings``), or one photo's over
    every look at it (``SearchConfig.photo_groupings``)."""

    limit: int
    spent: int = 0

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.limit


@dataclass
class _Pool:
    """The tiles a candidate may hold (the kept detections followed by the unsure candidates), and the
    groupings spent on them (``groupings``) out of the ``budget`` shared by every look at the photo."""

    tiles: Detections
    kept: int  # the first ``kept`` are the detections kept
    budget: Budget
    groupings: int = 0
    _grouped: dict[tuple[int, ...], tuple[Detections, Grouping]] = field(default_factory=dict)
    grouper: GrouperConfig = GROUPER  # the grouper's settings, as the caller gave them
    rows: RowCache = field(default_factory=RowCache)  # the rows of each set of boxes, found once

    @property
    def spent(self) -> bool:
        return self.budget.exhausted

    def spend(self) -> None:
        self.groupings += 1
        self.budget.spent += 1

    def grouped(self, active: tuple[int, ...]) -> tuple[Detections, Grouping] | None:
        """The tiles at ``active`` and their grouping, made once; None when that would overrun the budget."""
        if active not in self._grouped:
            if self.spent and self._grouped:
                return None
            tiles = self.tiles[list(active)]
            self._grouped[active] = (tiles, self.group(tiles))
        return self._grouped[active]

    def group(self, tiles: Detections) -> Grouping:
        self.spend()
        return group_detections(tiles, self.grouper, rows=self.rows)

    def first(self) -> tuple[Grouping, Iterator[Grouping]]:
        """The first reading (the kept tiles, the likeliest row as the hand's) and the readings with the
        other rows as the hand's, next likeliest first: one ranking of the rows (``ranked_groupings``)."""
        active = tuple(range(self.kept))
        tiles = self.tiles[list(active)]
        rankings = ranked_groupings(tiles, self.grouper, self.rows)
        self.spend()
        self._grouped[active] = (tiles, next(rankings))
        return self._grouped[active][1], rankings


Attempt = Callable[[], "Searched | None"]


class LookSearch:
    """The readings of one look's tiles (``detections``, and ``unsure``: boxes found below the threshold)
    under ``terms``: the first (``first``, grouped on making), then every candidate of the module docstring
    and the other rows, cheapest first (``attempts``), their groupings drawn from ``budget`` (a new one of
    ``terms.config.max_groupings`` when none is shared)."""

    def __init__(
        self, detections: Detections, unsure: Detections | None, terms: Terms, budget: Budget | None = None
    ) -> None:
        self.detections, self.terms = detections, terms
        config = self.config = terms.config
        candidates = _unsure_candidates(detections, unsure, config)
        joined = detections.joined(candidates) if len(candidates) else detections
        budget = budget or Budget(config.max_groupings)
        self.pool = _Pool(joined, len(detections), budget, grouper=terms.grouper)
        grouping, self._other_rows = self.pool.first()
        self.won = self.wins(grouping.hand)
        self.stopped = False  # an attempt found the budget spent: no later one may group
        self.first = Searched(detections, grouping, (), 1, self.won)

    @property
    def groupings(self) -> int:
        return self.pool.groupings

    def wins(self, hand: Hand | None) -> bool:
        return hand is not None and is_win(hand, self.terms.rules, self.terms.context)

    def attempts(self) -> Iterator[tuple[float, Attempt]]:
        """(cost, attempt) of every reading after the first, cheapest first (a reading with another row as
        the hand's after every candidate edit): an attempt gives the reading when it is a win, else None,
        and sets ``stopped`` when the budget is spent. None when the first reading is a win or has no hand."""
        first = self.first.grouping
        if self.won or first.hand is None:
            return
        off = _count_off(first)
        cost = 0.0
        for cost, count_edits, rereads in _candidates(
            self.pool, first, off, self.terms.threshold, self.config
        ):
            yield cost, partial(self._edited, count_edits, rereads, off)
        for _ in range(self.config.other_rows):
            yield max(cost, self.config.other_row_cost), self._other_row

    def _edited(self, count_edits: tuple[Edit, ...], rereads: tuple[Edit, ...], off: int) -> Searched | None:
        """The candidate's reading when it groups as a legal win, else None."""
        pool = self.pool
        active = _active(pool, count_edits)
        made = pool.grouped(active)
        if made is None:
            self.stopped = True
            return None
        tiles, base = made
        if base.hand is None:
            return None
        if rereads:
            position = {tile: at for at, tile in enumerate(active)}
            if any(edit.index not in position for edit in rereads):
                return None  # a re-reading of an unsure tile not taken back
            placed = set(base.placed)
            local = [replace(edit, index=position[edit.index]) for edit in rereads]
            if any(edit.index not in placed for edit in local):
                return None  # a tile the grouping leaves out: its face changes nothing
            concealed = _concealed(base)
            judged = concealed is not None and all(edit.index in concealed for edit in local)
            if judged and not self.wins(_changed_hand(base, tiles, local)):
                return None  # judged on the hand as grouped: no grouping spent
            if pool.spent:
                self.stopped = True
                return None
            for edit in local:
                tiles = tiles.reread(edit.index, edit.rank)
            grouping = pool.group(tiles)
        else:
            grouping = base
        if not self.wins(grouping.hand):
            return None
        if off == 0 and count_edits and WarningCode.NOT_A_MELD in grouping.codes:
            return None  # tiles taken back instead of lone ones apart must leave none
        return _taken(pool, active, tiles, grouping, count_edits, rereads, off)

    def _other_row(self) -> Searched | None:
        """The reading with the next likeliest other row as the hand's when it is a win as read, warned
        ``other_row``; None when it is not, or the budget is spent. A photo's likeliest row for the hand can
        be another player's, or discards laid in a row, when the player's hand is mostly melds."""
        pool = self.pool
        grouping = next(self._other_rows, None)
        if pool.spent:
            self.stopped = True
            return None
        if grouping is None:
            return None
        pool.spend()
        if not self.wins(grouping.hand):
            return None
        hand = [i for group in grouping.groups if group.role is GroupRole.HAND for i in group.indices]
        names = tuple(warning_name(int(self.detections.class_ids[i])) for i in hand)
        warning = GroupingWarning(
            WarningCode.OTHER_ROW,
            "the likeliest row for the hand reads as no winning hand; read the hand from another row, "
            f"{' '.join(names)}, which makes one: check that it is the player's",
            tuple(hand),
            names,
        )
        return Searched(self.detections, grouping.warned(warning), (), pool.groupings, True)


def search(
    detections: Detections,
    unsure: Detections | None = None,
    *,
    threshold: float,
    rules: Rules = CHENGDU,
    context: WinContext = DISCARD_WIN,
    config: SearchConfig = SEARCH,
    grouper: GrouperConfig = GROUPER,
) -> Searched:
    """The cheapest reading of ``detections`` (and ``unsure``: boxes found below ``threshold``) that is a
    legal win in ``context`` under ``rules``, or the first reading (see the module docstring): one look's
    search (``LookSearch``) under its own budget."""
    look = LookSearch(detections, unsure, Terms(threshold, rules, context, config, grouper))
    for _, attempt in look.attempts():
        found = attempt()
        if found is not None:
            return found
        if look.stopped:
            break
    return replace(look.first, groupings=look.groupings)


def _unsure_candidates(detections: Detections, unsure: Detections | None, config: SearchConfig) -> Detections:
    """The unsure suited boxes overlapping no kept one, the ``max_count_edits`` most confident."""
    if unsure is None or not len(unsure):
        return Detections.empty(detections.image_size)
    suited = unsure.class_ids < BACK
    if len(detections):
        suited &= box_iou(unsure.boxes, detections.boxes).max(axis=1) < config.overlap_iou
    candidates = unsure[suited]
    order = np.argsort(-candidates.confidences, kind="stable")[: config.max_count_edits]
    return candidates[np.sort(order)]


def _candidates(
    pool: _Pool, first: Grouping, off: int, threshold: float, config: SearchConfig
) -> Iterator[tuple[float, tuple[Edit, ...], tuple[Edit, ...]]]:
    """(cost, count edits, re-readings) of every candidate, cheapest first; ``off``: the tiles the first
    reading has over a winning hand's count (negative: short)."""
    count_sets: list[tuple[float, tuple[Edit, ...]]] = []
    if off < 0 and -off <= config.max_off:
        count_sets = _sets(_take_backs(pool, threshold), -off)
    elif off > 0 and off <= config.max_off:
        count_sets = _sets(_leave_outs(pool, first, threshold, config), off)
    elif off == 0:
        count_sets = [(0.0, ())]
        if WarningCode.NOT_A_MELD in first.codes:
            # lone tiles apart made up the count: a tile or two of the hand were missed (taken back), or a
            # box that is no tile (across the seam of a flat meld) spoilt a meld (left out)
            take_backs = _take_backs(pool, threshold)
            for size in range(1, config.max_off + 1):
                count_sets += _sets(take_backs, size)
            count_sets += _sets(_leave_outs(pool, first, threshold, config, anywhere=True), 1)
            count_sets.sort(key=lambda item: item[0])
    if not count_sets:
        return
    reread_sets = _reread_sets(pool, first, config)

    def shifted(count_cost: float, count_edits: tuple[Edit, ...]) -> Iterator[tuple[float, int, tuple]]:
        for order, (cost, rereads) in enumerate(reread_sets):
            yield count_cost + cost, order, (count_edits, rereads)

    merged = heapq.merge(*(shifted(cost, edits) for cost, edits in count_sets), key=lambda item: item[:2])
    for cost, _, (count_edits, rereads) in merged:
        yield cost, count_edits, rereads


def _take_backs(pool: _Pool, threshold: float) -> list[Edit]:
    return [
        Edit(EditKind.TAKE_BACK, i, math.log(threshold / max(float(pool.tiles.confidences[i]), 1e-6)))
        for i in range(pool.kept, len(pool.tiles))
    ]


def _leave_outs(
    pool: _Pool, first: Grouping, threshold: float, config: SearchConfig, *, anywhere: bool = False
) -> list[Edit]:
    """The ``max_count_edits`` least sure tiles of the hand and its melds (``anywhere``: of every suited
    tile kept, those the first reading left out as strays too), as leave-outs."""
    held = [i for i in range(pool.kept) if pool.tiles.class_ids[i] < BACK] if anywhere else list(first.placed)
    held.sort(key=lambda i: (float(pool.tiles.confidences[i]), i))
    return [
        Edit(
            EditKind.LEAVE_OUT, i, max(0.0, math.log(max(float(pool.tiles.confidences[i]), 1e-6) / threshold))
        )
        for i in held[: config.max_count_edits]
    ]


def _sets(edits: Sequence[Edit], size: int) -> list[tuple[float, tuple[Edit, ...]]]:
    """Every set of ``size`` of ``edits`` with its summed cost, cheapest first."""
    sets = [(math.fsum(e.cost for e in chosen), chosen) for chosen in combinations(edits, size)]
    sets.sort(key=lambda item: item[0])
    return sets


def _reread_sets(pool: _Pool, first: Grouping, config: SearchConfig) -> list[tuple[float, tuple[Edit, ...]]]:
    """No re-reading, then sets of up to ``max_rereads`` (one per tile), cheapest first."""
    tiles = pool.tiles
    if tiles.alternatives is None or tiles.alternative_confidences is None:
        return [(0.0, ())]
    placed = set(first.placed)
    singles: list[Edit] = []
    for i in sorted(placed | set(range(pool.kept, len(tiles)))):
        if tiles.class_ids[i] >= len(CLASS_NAMES):
            continue
        reading = max(float(tiles.confidences[i]), 1e-6)
        for rank, other in enumerate(tiles.alternative_confidences[i]):
            if other > 0 and (cost := math.log(reading / float(other))) <= config.max_cost:
                singles.append(Edit(EditKind.REREAD, i, cost, rank))
    singles.sort(key=lambda edit: edit.cost)
    sets: list[tuple[float, tuple[Edit, ...]]] = [(0.0, ())] + [(e.cost, (e,)) for e in singles]
    for size in range(2, config.max_rereads + 1):
        for chosen in combinations(singles[: config.combined], size):
            if len({e.index for e in chosen}) == size:
                sets.append((math.fsum(e.cost for e in chosen), chosen))
    sets.sort(key=lambda item: item[0])
    return sets


def _active(pool: _Pool, count_edits: tuple[Edit, ...]) -> tuple[int, ...]:
    """The pool positions a candidate holds: the kept tiles less those left out, then those taken back."""
    left_out = {e.index for e in count_edits if e.kind is EditKind.LEAVE_OUT}
    taken = sorted(e.index for e in count_edits if e.kind is EditKind.TAKE_BACK)
    return (*(i for i in range(pool.kept) if i not in left_out), *taken)


def _count_off(grouping: Grouping) -> int:
    """Tiles the grouped hand has over a winning hand's count (negative: short; 0 with no hand)."""
    hand = grouping.hand
    if hand is None or WarningCode.TILE_COUNT not in grouping.codes:
        return 0
    return len(hand.all_tiles) - tile_count(hand.kong_count)


def _concealed(grouping: Grouping) -> set[int] | None:
    """The detections of the hand's concealed tiles, or None when the hand is not its groups' tiles one
    for one (a re-reading must then be grouped to be judged)."""
    assert grouping.hand is not None
    concealed = {i for group in grouping.groups if group.role is GroupRole.HAND for i in group.indices}
    return concealed if len(concealed) == len(grouping.hand.concealed) else None


def _changed_hand(grouping: Grouping, tiles: Detections, rereads: Sequence[Edit]) -> Hand:
    """The grouped hand with concealed tiles read otherwise (its melds and structure unchanged)."""
    assert grouping.hand is not None and tiles.alternatives is not None
    concealed = list(grouping.hand.concealed)
    win_tile = grouping.hand.win_tile
    for edit in rereads:
        old, new = int(tiles.class_ids[edit.index]), int(tiles.alternatives[edit.index, edit.rank])
        concealed[concealed.index(old)] = new
        if edit.index == grouping.win_index:
            win_tile = new
    return replace(grouping.hand, concealed=tuple(concealed), win_tile=win_tile)


def _taken(
    pool: _Pool,
    active: tuple[int, ...],
    tiles: Detections,
    grouping: Grouping,
    count_edits: tuple[Edit, ...],
    rereads: tuple[Edit, ...],
    off: int,
) -> Searched:
    """The reading of a winning candidate: its grouping's indices (of ``active``) mapped to the detections
    returned (the kept tiles, then those taken back), each left-out tile in an ``ignored`` group, and a
    warning for each kind of edit."""
    shown = (*range(pool.kept), *sorted(e.index for e in count_edits if e.kind is EditKind.TAKE_BACK))
    at = {tile: position for position, tile in enumerate(shown)}
    mapping = [at[tile] for tile in active]
    # nothing left out: the candidate's own tiles (re-read), else all kept ones with its readings
    detections = tiles if len(shown) == len(active) else _with_rows(pool.tiles[list(shown)], mapping, tiles)
    grouping = _reindexed(grouping, mapping)
    if rereads:
        grouping = grouping.warned(_reread_warning(pool.tiles, rereads, [at[e.index] for e in rereads]))
    taken = tuple(
        sorted(
            (at[e.index] for e in count_edits if e.kind is EditKind.TAKE_BACK),
            key=lambda i: float(detections.confidences[i]),
        )
    )
    if taken:
        grouping = grouping.warned(_count_warning(detections, taken, WarningCode.UNSURE_TILE, -off))
    left = tuple(
        sorted(
            (e.index for e in count_edits if e.kind is EditKind.LEAVE_OUT),
            key=lambda i: (float(detections.confidences[i]), i),
        )
    )
    if left:
        ignored = tuple(Group(GroupRole.IGNORED, (i,)) for i in sorted(left))  # one outline each
        grouping = replace(grouping, groups=(*grouping.groups, *ignored))
        grouping = grouping.warned(_count_warning(detections, left, WarningCode.LEFT_OUT_TILE, off))
    return Searched(detections, grouping, (*count_edits, *rereads), pool.groupings, True)


def _with_rows(detections: Detections, mapping: Sequence[int], tiles: Detections) -> Detections:
    """``detections`` with the rows ``mapping`` names read as ``tiles`` has them (re-read)."""
    rows = np.asarray(mapping, np.int64)
    class_ids, confidences = detections.class_ids.copy(), detections.confidences.copy()
    class_ids[rows], confidences[rows] = tiles.class_ids, tiles.confidences
    others: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
    if detections.alternatives is not None and tiles.alternatives is not None:
        assert detections.alternative_confidences is not None and tiles.alternative_confidences is not None
        others = (detections.alternatives.copy(), detections.alternative_confidences.copy())
        others[0][rows], others[1][rows] = tiles.alternatives, tiles.alternative_confidences
    return Detections(detections.boxes, class_ids, confidences, detections.image_size, *others)


def _reindexed(grouping: Grouping, mapping: Sequence[int]) -> Grouping:
    """The grouping of a subset of the detections, its indices mapped back (``mapping[i]``)."""

    def mapped(indices: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(mapping[i] for i in indices)

    return replace(
        grouping,
        groups=tuple(replace(group, indices=mapped(group.indices)) for group in grouping.groups),
        win_index=None if grouping.win_index is None else mapping[grouping.win_index],
        warnings=tuple(replace(warning, indices=mapped(warning.indices)) for warning in grouping.warnings),
    )


def _reread_warning(
    pool_tiles: Detections, rereads: Sequence[Edit], indices: Sequence[int]
) -> GroupingWarning:
    assert pool_tiles.alternatives is not None
    firsts = [warning_name(int(pool_tiles.class_ids[e.index])) for e in rereads]
    seconds = [warning_name(int(pool_tiles.alternatives[e.index, e.rank])) for e in rereads]
    what = ", ".join(f"{first} as {second}" for first, second in zip(firsts, seconds, strict=True))
    return GroupingWarning(
        WarningCode.REREAD_TILE,
        f"the first reading is no winning hand; read {what} (the classifier's next choices)",
        tuple(indices),
        tuple(seconds),
    )


def _count_warning(
    found: Detections, indices: tuple[int, ...], code: WarningCode, off: int
) -> GroupingWarning:
    """A warning naming the tiles taken back or left out (least confident first); ``off``: how many
    tiles the hand was short or over (0: lone tiles apart from it made up its count)."""
    tiles = tuple(warning_name(int(found.class_ids[i])) for i in indices)
    what = ", ".join(
        f"{tile} ({float(found.confidences[i]):.0%})" for tile, i in zip(tiles, indices, strict=True)
    )
    plural = "s" if off > 1 else ""
    if code is WarningCode.UNSURE_TILE and off == 0:
        message = (
            f"tiles lying apart from the hand made up its count; took back {what}, found below the "
            "confidence threshold, instead"
        )
    elif code is WarningCode.UNSURE_TILE:
        message = (
            f"the hand was {off} tile{plural} short; took back {what}, found but below the confidence "
            "threshold"
        )
    elif off == 0:
        message = (
            f"tiles lying apart from the hand made up its count; left out {what}, the least sure reading, "
            "and it is a win without them"
        )
    else:
        message = f"the hand had {off} tile{plural} too many; left out {what}, the least sure reading"
    return GroupingWarning(code, message, indices, tiles)
