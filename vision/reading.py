"""The reading stage: a decoded photo's hand read from the views a detector can take of it and the edits of
each view's reading, under one cost and one budget.

A detector takes the view it is given (``vision.detect.view``) and decides none; this stage decides them.
A photo is first read in one view (``first_view``): as it is, or, for a whole table whose rows run slantwise,
turned level. Its tiles' reading, when no legal win under the request's rules, is searched for a winning one
(``vision.grouping.search``): each candidate is a set of edits with a cost. A close-up can also be looked at
again (``Views.second``: turned level when its rows run slantwise, then enlarged), and each such look is
read and searched the same way. Every candidate of every look is one candidate here, (look, edits), costing
its edits' cost plus its look's (the k-th second look ``k * SearchConfig.look_cost``; reading another row
as the hand's, after every edit of its look, ``SearchConfig.other_row_cost``): they are tried cheapest
first, a look is taken (the detector run) only when its first reading is the cheapest candidate left, and
all of them draw on one budget of groupings (``SearchConfig.photo_groupings``; a photo of one look,
``max_groupings``). The first winning reading is taken; when none wins, the first look's first reading.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from vision.detect import deskew
from vision.detect.classifier import TileClassifier
from vision.detect.detector import DEFAULT_CONF, Examples
from vision.detect.looks import SecondLook
from vision.detect.tileset import TileSet
from vision.detect.view import AS_IS, Located, View, Views
from vision.detections import Detections
from vision.grouping.search import Attempt, Budget, LookSearch, Searched, Terms
from vision.images import Photo
from vision.reading_warnings import with_close_faces, with_sharpness


class Reader(Protocol):
    """What reading a photo asks of a detector (``vision.detect.detector.Detector``, or a stand-in)."""

    def locate(
        self, photo: Photo, view: View = ..., *, conf: float = ..., box_conf: float | None = ...
    ) -> Located: ...

    def read(
        self,
        located: Located,
        *,
        conf: float = ...,
        tile_set: TileSet | None = ...,
    ) -> Detections: ...

    def views(self, located: Located) -> Views: ...


@runtime_checkable
class SetReader(Reader, Protocol):
    """A reader that also learns sets: its classifier gives each crop's features (``Detector``)."""

    def set_classifier(self) -> TileClassifier: ...

    def examples(self, located: Located) -> Examples: ...


def first_view(photo: Photo, detector: Reader, *, conf: float, box_conf: float | None = None) -> Located:
    """The tiles of the view a photo is first read in: as it is, or turned level when the detector can
    (``Views.level``: its tiles as it is were looked at closer) and the rows of the tiles found as it is run
    slantwise (``deskew.turn_level``, with the rows the view as it is keeps for its reading)."""
    return _first_view(photo, detector, conf=conf, box_conf=box_conf)[0]


def _first_view(
    photo: Photo, detector: Reader, *, conf: float, box_conf: float | None = None
) -> tuple[Located, Views]:
    """``first_view``, and the views the detector can take of the photo (decided by its view as it is)."""
    located = detector.locate(photo, AS_IS, conf=conf, box_conf=box_conf)
    views = detector.views(located)
    if views.level:
        width, height = photo.size
        turn = deskew.turn_level(located.boxes, located.scores, width, height, located.rows)
        if turn is not None:
            return detector.locate(photo, View(turn=turn), conf=conf, box_conf=box_conf), views
    return located, views


def first_detections(
    photo: Photo,
    detector: Reader,
    *,
    conf: float = DEFAULT_CONF,
    box_conf: float | None = None,
    tile_set: TileSet | None = None,
) -> Detections:
    """The tiles of the photo's first view (``first_view``), their faces read (with ``tile_set``, the set on
    the table, when given); boxes in the decoded photo's pixels."""
    located = first_view(photo, detector, conf=conf, box_conf=box_conf)
    return detector.read(located, conf=conf, tile_set=tile_set)


@dataclass(frozen=True)
class _Pending:
    """A second look not yet taken."""

    look: SecondLook


AS_SERVED = Terms(DEFAULT_CONF)  # the operating threshold, Chengdu rules, a win on a discard


def read_photo(
    photo: Photo, detector: Reader, terms: Terms = AS_SERVED, tile_set: TileSet | None = None
) -> Searched:
    """The hand read from the photo (``_read_photo``: its looks and the edits of their readings, cheapest
    first), warned of blur and of tiles torn between two faces (``vision.reading_warnings``)."""
    read = _read_photo(photo, detector, terms, tile_set)
    warned = with_close_faces(read.detections, with_sharpness(photo, read.detections, read.grouping))
    return replace(read, grouping=warned)


def _read_photo(
    photo: Photo, detector: Reader, terms: Terms = AS_SERVED, tile_set: TileSet | None = None
) -> Searched:
    """The cheapest winning reading of the photo over its looks and their edits (the module docstring), or the
    first look's first reading; its detections in the upright full-resolution photo's pixels, ``groupings``
    those spent over every look.

    A tile counts as found when the detector is ``terms.threshold`` sure that it lies there, whichever of
    its readings it is (``Detections.presences``); tiles found down to ``terms.config.unsure_conf`` are the
    search's to take back. ``tile_set``: the set on the table, whose examples name the faces."""
    config = terms.config
    floor = min(terms.threshold, config.unsure_conf)
    located, views = _first_view(photo, detector, conf=floor)
    seconds = views.second if config.second_looks else ()
    budget = Budget(config.photo_groupings if seconds else config.max_groupings)

    def searched(found: Detections) -> LookSearch:
        found = found.scaled(photo.scale)
        sure = found.presences >= terms.threshold
        return LookSearch(found[sure], found[~sure], terms, budget)

    found = detector.read(located, conf=floor, tile_set=tile_set)  # the decoded photo's pixels
    first = searched(found)
    if first.won:
        return replace(first.first, groupings=budget.spent)
    order = itertools.count()
    queue: list[_Queued] = []  # (cost, look, order, what): the cheapest first, a look's in its order

    def queued(look: LookSearch, index: int, offset: float) -> None:
        attempts = ((offset + cost, attempt) for cost, attempt in look.attempts())
        _push(queue, index, next(order), look, attempts)

    queued(first, 0, 0.0)
    for index, second in enumerate(seconds, start=1):
        heapq.heappush(queue, (index * config.look_cost, index, next(order), _Pending(second)))
    while queue:
        cost, index, _, what = heapq.heappop(queue)
        if isinstance(what, _Pending):
            if budget.exhausted:
                break
            view = _second_view(what.look, photo, found)
            if view is None:
                continue  # rows that run level: nothing to turn
            located = detector.locate(photo, view, conf=floor)
            look = searched(detector.read(located, conf=floor, tile_set=tile_set))
            if look.won:
                return replace(look.first, groupings=budget.spent)
            queued(look, index, cost)
            continue
        attempt, look, rest = what
        reading = attempt()
        if reading is not None:
            return replace(reading, groupings=budget.spent)
        if look.stopped:
            break  # the budget is spent
        _push(queue, index, next(order), look, rest)
    return replace(first.first, groupings=budget.spent)


_Queued = tuple[float, int, int, "tuple[Attempt, LookSearch, Iterator[tuple[float, Attempt]]] | _Pending"]


def _push(
    queue: list[_Queued], index: int, order: int, look: LookSearch, attempts: Iterator[tuple[float, Attempt]]
) -> None:
    """Queue the next of ``look``'s ``attempts`` (cheapest first), with the rest of them."""
    head = next(attempts, None)
    if head is not None:
        cost, attempt = head
        heapq.heappush(queue, (cost, index, order, (attempt, look, attempts)))


def _second_view(look: SecondLook, photo: Photo, found: Detections) -> View | None:
    """The view a second look takes: turned level as the first look's tiles (``found``, in the decoded
    photo's pixels) say (None when their rows run level), or enlarged."""
    if look is SecondLook.ENLARGED:
        return View(enlarged=True)
    width, height = photo.size
    turn = deskew.turn_level(found.boxes, found.confidences, width, height)
    return None if turn is None else View(turn=turn)
