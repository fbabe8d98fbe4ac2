"""The same photo under different names: exact copies (the same bytes) and near copies (re-encoded,
resized, recompressed), found by content, so that no copy lands in another split than its original.

Exact copies share a SHA-256 of their bytes; near copies have perceptual hashes (``imagehash.phash``: a
64-bit DCT hash of the photo's luminance, which re-encoding and resizing hardly change) at most
``NEAR_DISTANCE`` bits apart. ``find_duplicates`` returns every group of two or more such files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np
from PIL import Image, ImageOps

NEAR_DISTANCE = 6  # bits of 64: re-encoded or resized copies differ by 0-4, different photos by ~32
_HASH_SIDE = 256  # a JPEG is decoded reduced to about this size before hashing


@dataclass(frozen=True)
class DuplicateGroup:
    paths: tuple[Path, ...]  # sorted
    exact: bool  # every file has the same bytes

    def describe(self, root: Path | None = None) -> str:
        names = [str(p.relative_to(root)) if root and p.is_relative_to(root) else str(p) for p in self.paths]
        kind = "the same file" if self.exact else "the same photo (near copies)"
        return f"{', '.join(names)} are {kind}"


def perceptual_hash(path: Path) -> int | None:
    """The photo's 64-bit pHash as an int (upright, as a person sees it); ``None`` if it cannot be read."""
    import imagehash

    try:
        with Image.open(path) as image:
            image.draft("L", (_HASH_SIDE, _HASH_SIDE))
            upright = ImageOps.exif_transpose(image)
            bits = imagehash.phash(upright).hash.flatten()
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        return None
    return int("".join("1" if bit else "0" for bit in bits), 2)


T = TypeVar("T")


class DisjointSets(Generic[T]):
    """Union-find over hashable items, each in a set of its own until joined (path halving)."""

    def __init__(self, items: Iterable[T]) -> None:
        self._parent = {item: item for item in items}

    def find(self, item: T) -> T:
        """The item standing for ``item``'s set."""
        parent = self._parent
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def union(self, a: T, b: T) -> None:
        self._parent[self.find(a)] = self.find(b)


def find_duplicates(paths: Iterable[Path], near: int = NEAR_DISTANCE) -> list[DuplicateGroup]:
    """Groups of files that are the same photo, exactly or nearly (``near`` bits of pHash or fewer)."""
    from vision.factory.ship import (
        sha256,  # here: the detector stack it brings need not load with datasets.split
    )

    files = sorted({Path(p) for p in paths})
    sets = DisjointSets(range(len(files)))
    find, union = sets.find, sets.union

    by_digest: dict[str, int] = {}
    digests = []
    for index, path in enumerate(files):
        digest = sha256(path)
        digests.append(digest)
        if digest in by_digest:
            union(index, by_digest[digest])
        else:
            by_digest[digest] = index
    firsts = sorted(by_digest.values())  # one file per distinct content
    hashes = [(index, perceptual_hash(files[index])) for index in firsts]
    known = [(index, value) for index, value in hashes if value is not None]
    if len(known) > 1:
        values = np.array([value for _, value in known], np.uint64)
        for row, (index, value) in enumerate(known[:-1]):
            distances = np.bitwise_count(values[row + 1 :] ^ np.uint64(value))
            for offset in np.flatnonzero(distances <= near):
                union(index, known[row + 1 + int(offset)][0])
    members: dict[int, list[int]] = {}
    for index in range(len(files)):
        members.setdefault(find(index), []).append(index)
    groups = [
        DuplicateGroup(tuple(files[i] for i in group), len({digests[i] for i in group}) == 1)
        for group in members.values()
        if len(group) > 1
    ]
    return sorted(groups, key=lambda group: group.paths)
