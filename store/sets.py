"""Tile sets in the store: each a name and its examples (a face, the crops of its views, their features).

A set is taught from a photo of its layout, grows by further photos of a row and by the player's corrections
(at most ``TAUGHT_PER_FACE`` corrections a face, the newest kept). The store keeps rows and gives values
(``Example``, ``SetSummary``); the photos are read and the classifier run outside it, in ``usecases.sets``
(which reads a set back for the classifier in use: an example whose features another classifier gave is read
again from its crops, and stored so with ``store_features``). Of ``vision`` it knows the classes only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import cv2
import numpy as np
from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from scoring.errors import SmjError
from store.database import Store
from store.schema import ExampleRow, TileSetRow, now
from vision.contract import CLASSIFIER_CLASSES

NAME = re.compile(r"[^\W_][\w .\-]{0,39}")  # letters (any script), digits, spaces, '.', '-', '_'
NAME_RULE = "1-40 letters, digits, spaces, '.', '-' or '_', starting with a letter or digit"
ORIGINS = ("layout", "row", "correction")
TAUGHT_PER_FACE = 8  # corrections kept a face: the newest (a set's own examples are never dropped)


class SetError(SmjError):
    """A request about a set that can't be done: ``code`` says which (``bad_set_name``, ``no_such_set``,
    ``set_exists``, ``bad_example``, ``no_such_example``, ``empty_set``), the message says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code)


@dataclass(frozen=True, eq=False)
class Example:
    """An example of a face: ``crops`` (V, S, S, 3) uint8 RGB, one a view the reader uses, and their
    features (V, D) as ``model`` gave them."""

    face: str
    crops: np.ndarray
    features: np.ndarray
    origin: str = "layout"
    id: int | None = None  # the store's, once stored
    model: str = ""  # the classifier that gave the features, once stored

    def __post_init__(self) -> None:
        if self.face not in CLASSIFIER_CLASSES:
            raise SetError("bad_example", f"{self.face!r} is not a tile class")
        if self.origin not in ORIGINS:
            raise SetError("bad_example", f"origin {self.origin!r}: one of {', '.join(ORIGINS)}")
        if self.crops.ndim != 4 or len(self.crops) != len(self.features) or not len(self.crops):
            raise SetError("bad_example", "an example needs one crop and one feature vector a view")


@dataclass(frozen=True)
class SetSummary:
    name: str
    source: str
    examples: int
    faces: int  # distinct faces with examples
    created_at: datetime
    updated_at: datetime

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "source": self.source,
            "examples": self.examples,
            "faces": self.faces,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }


def checked_name(name: str) -> str:
    name = name.strip()
    if not NAME.fullmatch(name):
        raise SetError("bad_set_name", f"set name {name!r}: {NAME_RULE}")
    return name


def save_set(
    store: Store, name: str, examples: Sequence[Example], source: str, model: str, *, replace: bool = False
) -> SetSummary:
    """Store a set under ``name``; an existing set of that name is refused (``set_exists``) unless
    ``replace``, which swaps it whole in one transaction."""
    name = checked_name(name)
    if not examples:
        raise SetError("bad_example", f"set {name!r}: no examples to store")
    try:
        with store.transaction() as session:
            row = session.scalar(select(TileSetRow).where(TileSetRow.name == name))
            if row is not None and not replace:
                raise SetError("set_exists", f"a set named {name!r} exists: remove it or ask to replace it")
            if row is not None:
                session.delete(row)
                session.flush()
            row = TileSetRow(name=name, source=source)
            row.examples = [_row(example, model) for example in examples]
            session.add(row)
    except IntegrityError:  # another writer stored the name between the look and the write
        raise SetError("set_exists", f"a set named {name!r} exists: remove it or ask to replace it") from None
    return summary(store, name)


@dataclass(frozen=True)
class Added:
    """What ``add_examples`` stored: the set as it is now and the new examples' ids, in order."""

    summary: SetSummary
    ids: tuple[int, ...]


def add_examples(
    store: Store, name: str, examples: Sequence[Example], model: str, *, replaces: int | None = None
) -> Added:
    """Add examples to a stored set; of its corrections, the newest ``TAUGHT_PER_FACE`` a face are kept.
    ``replaces``: a correction of the set this one takes back in the same transaction (the player named the
    same tile again); one already gone (trimmed as the oldest, or removed) leaves nothing to take back, and
    an example of the set that is no correction is refused (``no_such_example``)."""
    with store.transaction() as session:
        row = _get(session, name)
        earlier = None if replaces is None else _find(session, row, replaces)
        if earlier is not None:
            if earlier.origin != "correction":
                raise SetError("no_such_example", f"set {row.name!r} has no correction {replaces}")
            session.delete(earlier)
            session.flush()
            session.expire(row, ["examples"])
        rows = [_row(example, model) for example in examples]
        row.examples.extend(rows)
        row.updated_at = now()
        session.flush()
        ids = tuple(int(stored.id) for stored in rows)
        for face in {example.face for example in examples if example.origin == "correction"}:
            taught = session.scalars(
                select(ExampleRow.id)
                .where(
                    ExampleRow.set_id == row.id, ExampleRow.face == face, ExampleRow.origin == "correction"
                )
                .order_by(ExampleRow.id.desc())
                .offset(TAUGHT_PER_FACE)
            ).all()
            if taught:
                session.execute(delete(ExampleRow).where(ExampleRow.id.in_(taught)))
                session.expire(row, ["examples"])
    return Added(summary(store, name), ids)


def remove_example(store: Store, name: str, example: int, origin: str | None = None) -> SetSummary:
    """Take one example out of a set (a tile the player corrected that was no tile after all; ``origin``:
    only if it came so); a set keeps at least one example. Removals at once can't empty it: the count and the
    delete are one statement (SQLite takes its write lock for it), and the set's row is locked first (on
    PostgreSQL, where two deletes of different rows would each count the other still there)."""
    with store.transaction() as session:
        row = _get(session, name, lock=True)
        found = _stored(session, row, example, origin)
        others = (
            select(func.count(ExampleRow.id))
            .where(ExampleRow.set_id == row.id, ExampleRow.id != found.id)
            .scalar_subquery()
        )
        gone = session.execute(
            delete(ExampleRow)
            .where(ExampleRow.id == found.id, others > 0)
            .execution_options(synchronize_session=False)
        )
        if gone.rowcount != 1:  # type: ignore[attr-defined]
            raise SetError(
                "bad_example", f"example {example} is set {row.name!r}'s last: remove the set instead"
            )
        session.expunge(found)
        row.updated_at = now()
    return summary(store, name)


def rename_example(store: Store, name: str, example: int, face: str) -> SetSummary:
    """Name a stored example of a set another face (a tile of the layout the photo misplaced)."""
    if face not in CLASSIFIER_CLASSES:
        raise SetError("bad_example", f"{face!r} is not a tile class")
    with store.transaction() as session:
        row = _get(session, name)
        _stored(session, row, example).face = face
        row.updated_at = now()
    return summary(store, name)


def summary(store: Store, name: str) -> SetSummary:
    with store.transaction() as session:
        row = _get(session, name)
        counts = session.execute(
            select(func.count(ExampleRow.id), func.count(func.distinct(ExampleRow.face))).where(
                ExampleRow.set_id == row.id
            )
        ).one()
        return SetSummary(row.name, row.source, counts[0], counts[1], row.created_at, row.updated_at)


def list_sets(store: Store) -> list[SetSummary]:
    with store.transaction() as session:
        names = session.scalars(select(TileSetRow.name).order_by(TileSetRow.name)).all()
    return [summary(store, name) for name in names]


def remove_set(store: Store, name: str) -> None:
    with store.transaction() as session:
        session.delete(_get(session, name))


def examples_of(store: Store, name: str) -> list[Example]:
    """A stored set's examples, oldest first."""
    with store.transaction() as session:
        return [_example(row) for row in _get(session, name).examples]


def store_features(store: Store, name: str, features: dict[int, np.ndarray], model: str) -> None:
    """The set's examples given new features (example id -> (views, D) floats), as ``model`` read them
    (``usecases.sets.tile_set``: a new classifier reads a set again from its crops)."""
    with store.transaction() as session:
        row = _get(session, name)
        for example in row.examples:
            if example.id in features:
                example.features = np.asarray(features[example.id], np.float32).tobytes()
                example.model = model


def _get(session: Session, name: str, *, lock: bool = False) -> TileSetRow:
    """The set ``name`` (``lock``: its row held until the transaction ends, where the database can)."""
    query = select(TileSetRow).where(TileSetRow.name == name.strip())
    row = session.scalar(query.with_for_update() if lock else query)
    if row is None:
        raise SetError("no_such_set", f"no set named {name!r} is stored")
    return row


def _find(session: Session, row: TileSetRow, example: int) -> ExampleRow | None:
    """Example ``example`` of the set ``row``, if it holds it."""
    return session.scalar(select(ExampleRow).where(ExampleRow.set_id == row.id, ExampleRow.id == example))


def _stored(session: Session, row: TileSetRow, example: int, origin: str | None = None) -> ExampleRow:
    """Example ``example`` of the set ``row`` (of that ``origin`` when given), else ``no_such_example``."""
    found = _find(session, row, example)
    if found is None or (origin is not None and found.origin != origin):
        kind = "example" if origin is None else origin
        raise SetError("no_such_example", f"set {row.name!r} has no {kind} {example}")
    return found


def _row(example: Example, model: str) -> ExampleRow:
    views, size = len(example.crops), example.crops.shape[1]
    strip = np.ascontiguousarray(example.crops.transpose(1, 0, 2, 3).reshape(size, views * size, 3))
    ok, png = cv2.imencode(".png", cv2.cvtColor(strip, cv2.COLOR_RGB2BGR))
    assert ok
    return ExampleRow(
        face=example.face,
        origin=example.origin,
        crops=png.tobytes(),
        features=np.asarray(example.features, np.float32).tobytes(),
        views=views,
        model=model,
    )


def _crops(row: ExampleRow) -> np.ndarray:
    decoded = cv2.imdecode(np.frombuffer(row.crops, np.uint8), cv2.IMREAD_COLOR)
    if decoded is None:
        raise SetError("bad_example", f"example {row.id}: its stored crops are not a readable PNG")
    strip = cv2.cvtColor(decoded, cv2.COLOR_BGR2RGB)
    size = strip.shape[0]
    return np.ascontiguousarray(strip.reshape(size, row.views, size, 3).transpose(1, 0, 2, 3))


def _example(row: ExampleRow) -> Example:
    features = np.frombuffer(row.features, np.float32).reshape(row.views, -1)
    return Example(row.face, _crops(row), features.copy(), row.origin, row.id, row.model)
