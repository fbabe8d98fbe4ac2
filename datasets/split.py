"""Split a dataset by source photo, so augmented copies of one photo never straddle train and validation.

The assignment is deterministic and stable: sources are ordered by a hash of their name (within each
``source_group`` when the dataset has one, so every group is represented in every part), then cut at
the requested ratios. Adding images of a new source never moves an existing source to another part.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from datasets.duplicates import DisjointSets, DuplicateGroup
from datasets.labels import DatasetError, LabelledImage
from datasets.scenes import SCENES, scene_rows, write_scene_rows

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


def merge_duplicate_sources(
    images: Sequence[LabelledImage], groups: Sequence[DuplicateGroup]
) -> list[LabelledImage]:
    """``images`` with one ``source`` for every photo of a duplicate group and every image sharing a
    source with one of them (the sources are joined), so that splitting keeps them together."""
    sets = DisjointSets(item.source for item in images)
    source_of_path = {item.image: item.source for item in images}
    for group in groups:
        sources = sorted({source_of_path[path] for path in group.paths if path in source_of_path})
        for other in sources[1:]:
            sets.union(other, sources[0])
    return [replace(item, source=sets.find(item.source)) for item in images]


def keep_sources_together(images: Sequence[LabelledImage]) -> tuple[list[LabelledImage], int]:
    """``images`` with each source wholly in one split (the first of train, val, test it is in), and how
    many images moved: a source's copies never straddle the splits a dataset came with."""
    order = {name: rank for rank, name in enumerate(SPLIT_NAMES)}
    home: dict[str, str] = {}
    for item in images:
        split = item.split or "train"
        current = home.get(item.source)
        if current is None or order.get(split, len(order)) < order.get(current, len(order)):
            home[item.source] = split
    kept = [replace(item, split=home[item.source]) for item in images]
    moved = sum(
        1 for before, after in zip(images, kept, strict=True) if (before.split or "train") != after.split
    )
    return kept, moved


@dataclass(frozen=True)
class SplitCounts:
    images: int
    sources: int
    boxes: int


def split_counts(images: Sequence[LabelledImage]) -> dict[str, SplitCounts]:
    """Images, source photos and boxes per part, in train / val / test order."""
    parts: dict[str, list[LabelledImage]] = defaultdict(list)
    for item in images:
        parts[item.split or "train"].append(item)
    order = {name: i for i, name in enumerate(SPLIT_NAMES)}
    return {
        name: SplitCounts(len(items), len({i.source for i in items}), sum(len(i.boxes) for i in items))
        for name, items in sorted(parts.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
    }


def resplit(root: Path | str, ratios: Sequence[float], out: Path | str | None = None) -> list[LabelledImage]:
    """Split a YOLO dataset by source photo, keeping each source (and its augmented copies, and every copy
    of one photo found by its content) in one part.

    With ``out``: a new dataset in this project's layout (images hard-linked). Without: in place, by
    moving image and label files between ``images/<split>/`` and ``labels/<split>/`` (labels are moved,
    not rewritten) and rewriting ``sources.csv`` and ``data.yaml``.
    """
    from datasets.duplicates import find_duplicates
    from datasets.yolo import read_yolo, write_yolo

    root = Path(root).resolve()
    images = read_yolo(root)
    # copies of one photo (by content: SHA-256 or perceptual hash) share a source, with or without a
    # sources.csv saying so: they land in one part, as check reports them
    images = merge_duplicate_sources(images, find_duplicates(item.image for item in images))
    assigned = assign_splits(images, ratios)
    if out is not None:
        write_yolo(assigned, out)
    else:
        _move_in_place(root, assigned)
    _carry_scenes(root, Path(out).resolve() if out is not None else root, assigned)
    return assigned


def _carry_scenes(root: Path, out: Path, assigned: Sequence[LabelledImage]) -> None:
    """A synthetic dataset's ``scenes.jsonl`` (what the benchmarks read a scene's truth from) written to
    ``out`` with each scene's image at its new place, ``images/<split>/<name>``; scenes whose image is not
    in ``assigned`` (or that name none) are left out. A dataset without one is left as it is."""
    if not (root / SCENES).is_file():
        return
    placed = {item.image.name: f"images/{item.split}/{item.image.name}" for item in assigned}
    rows = []
    for _, _, row in scene_rows(root):
        name = Path(str(row.get("image", ""))).name
        if name in placed:
            rows.append({**row, "image": placed[name]})
    write_scene_rows(out, rows)


def _move_in_place(root: Path, assigned: Sequence[LabelledImage]) -> None:
    from datasets.yolo import split_dirs, write_data_yaml, write_sources_csv

    label_dir_of = {image_dir: label_dir for _, image_dir, label_dir in split_dirs(root)}
    images_root = root / "images"
    moves: list[tuple[Path, Path]] = []
    targets: dict[Path, Path] = {}
    rows: list[dict[str, str]] = []
    for item in assigned:
        folder = item.image.parent
        if folder != images_root and folder.parent != images_root:
            raise DatasetError(
                f"{root}: splitting in place needs the images/<split>/ layout; write a copy with --out"
            )
        image_target = images_root / item.split / item.image.name
        label_target = root / "labels" / item.split / f"{item.stem}.txt"
        earlier = targets.setdefault(label_target, item.image)
        if earlier != item.image:
            raise DatasetError(f"{item.image}: same name as {earlier}; rename one of them before splitting")
        moves.append((item.image, image_target))
        label = label_dir_of[folder] / f"{item.stem}.txt"
        if label.is_file():  # a missing label file stays missing, for `smj dataset check` to report
            moves.append((label, label_target))
        rows.append(
            {
                **item.meta,
                "image": f"images/{item.split}/{item.image.name}",
                "source": item.source,
                "split": item.split,
            }
        )
    # Two steps, so swapping two same-named files between splits never overwrites one of them.
    staging = root / ".resplit"
    staged: list[tuple[Path, Path]] = []
    for number, (source, target) in enumerate(moves):
        if source != target:
            staging.mkdir(exist_ok=True)
            parked = staging / f"{number}{source.suffix}"
            source.rename(parked)
            staged.append((parked, target))
    for parked, target in staged:
        target.parent.mkdir(parents=True, exist_ok=True)
        parked.rename(target)
    if staging.is_dir():
        staging.rmdir()
    for parent in (images_root, root / "labels"):
        for folder in parent.iterdir() if parent.is_dir() else ():
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
    write_sources_csv(root, rows)
    write_data_yaml(root, sorted({item.split for item in assigned}))
