"""Split a dataset by source photo, so augmented copies of one photo never straddle train and validation.

The assignment is deterministic and stable: sources are ordered by a hash of their name (within each
``source_group`` when the dataset has one, so every group is represented in every part), then cut at
the requested ratios. Adding images of a new source never moves an existing source to another part.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from datasets.labels import DatasetError, LabelledImage

SPLIT_NAMES = ("train", "val", "test")


def parse_ratios(text: str) -> tuple[float, ...]:
    try:
        ratios = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise DatasetError(f"ratios must be numbers separated by commas, got {text!r}") from None
    if not 1 <= len(ratios) <= 3 or any(r < 0 for r in ratios) or abs(sum(ratios) - 1) > 1e-6:
        raise DatasetError(f"ratios must be 1 to 3 non-negative numbers summing to 1, got {text!r}")
    return ratios


def _rank(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def assign_splits(images: Sequence[LabelledImage], ratios: Sequence[float]) -> list[LabelledImage]:
    """A copy of ``images`` with ``split`` set; every source lands wholly in one part."""
    groups: dict[str, set[str]] = defaultdict(set)
    for item in images:
        groups[item.meta.get("source_group", "")].add(item.source)
    part_of: dict[str, str] = {}
    for sources in groups.values():
        ordered = sorted(sources, key=_rank)
        bounds, total = [], 0.0
        for ratio in ratios:
            total += ratio
            bounds.append(round(total * len(ordered)))
        start = 0
        for name, end in zip(SPLIT_NAMES, bounds, strict=False):
            for source in ordered[start:end]:
                part_of[source] = name
            start = end
    return [replace(item, split=part_of[item.source]) for item in images]
