"""The sets on the table, as both faces use them: teaching one from a photo of its layout (or adding a row),
a tile the player corrected, and reading photos with a stored set.

Each use case is two steps: the model's work on the photo (``learn``, ``correction``), then the store's
(``keep``, ``add_correction``). Reading with a set (``tile_set``) reads the stored examples, gives those a
former classifier read new features outside any transaction, stores them, and builds the set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from store import Store
from store.sets import Example, SetError, SetSummary, add_examples, examples_of, save_set, store_features
from vision.contract import CLASSIFIER_CLASSES
from vision.detect.classifier import TileClassifier
from vision.detect.tileset import ROW_SUITS, TileSet
from vision.images import Photo
from vision.pipeline import Taught, teach_set, tile_views
from vision.reading import SetReader


@dataclass(frozen=True)
class Kept:
    """A set taught and stored: the store's summary of it, and what the photo taught (its faces, whether it
    was read turned)."""

    summary: SetSummary
    taught: Taught
    examples: int  # the examples this photo added


def learn(photo: Photo | str, reader: SetReader, name: str, row: str | None = None) -> Taught:
    """The model's work: the tiles of a photo of a set's layout (``row``: of one row of nine of that suit),
    named by their place; ``LayoutError`` when the photo is no layout."""
    return teach_set(photo, reader, name, (row,) if row else ROW_SUITS)


def taught_examples(taught: Taught, origin: str = "layout") -> list[Example]:
    """The examples a set keeps of the tiles a photo taught (its layout, or a row: ``origin``)."""
    found, layout = taught.examples, taught.layout
    return [
        Example(CLASSIFIER_CLASSES[face], found.crops[tile], found.features[tile], origin)
        for tile, face in zip(layout.tiles, layout.faces, strict=True)
    ]


def keep(
    store: Store,
    taught: Taught,
    name: str,
    model: str,
    *,
    source: str,
    row: str | None = None,
    replace: bool = False,
) -> Kept:
    """The store's work: the taught tiles stored as the set ``name`` (``replace``: over a stored one), or,
    for a ``row``, added to the stored set; ``model``: the classifier that gave their features."""
    examples = taught_examples(taught, "row" if row else "layout")
    if row:
        summary = add_examples(store, name, examples, model).summary
    else:
        summary = save_set(store, name, examples, source, model, replace=replace)
    return Kept(summary, taught, len(examples))


def correction(photo: Photo, reader: SetReader, box: Sequence[float], face: str) -> Example:
    """The model's work for a tile the player named ``face``: its views in the photo (``box``: the upright
    photo's pixels), as a set keeps a correction."""
    crops, features = tile_views(photo, reader, np.array([box], np.float32))
    return Example(face, crops[0], features[0], "correction")


def add_correction(
    store: Store, name: str, example: Example, model: str, replaces: int | None = None
) -> tuple[SetSummary, int]:
    """The store's work: the corrected tile joins the set (``replaces``: an earlier correction of the same
    tile, taken back in the same write); the set's summary and the example's id."""
    added = add_examples(store, name, [example], model, replaces=replaces)
    return added.summary, added.ids[0]


def tile_set(store: Store, name: str, classifier: TileClassifier) -> TileSet:
    """The stored set as ``classifier`` reads it. Examples a former classifier gave features to are read
    again from their crops (here, outside any transaction) and stored so."""
    model = classifier.identity
    examples = examples_of(store, name)
    stale = [example for example in examples if example.model != model]
    if stale:
        fresh = {}
        for example in stale:
            _, read = classifier.infer(example.crops)
            assert read is not None
            fresh[example.id or 0] = read.astype(np.float32)
        store_features(store, name, fresh, model)
        examples = examples_of(store, name)
    if not examples:  # no removal leaves a set so; refused by name, never read
        raise SetError("empty_set", f"set {name.strip()!r} holds no example: teach it again (smj set add)")
    faces = [CLASSIFIER_CLASSES.index(example.face) for example in examples for _ in example.features]
    return TileSet.of(name.strip(), faces, np.concatenate([example.features for example in examples]))
