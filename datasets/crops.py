"""Tile crops for training the classifier: one folder per class, cut from labelled photos.

Training crops are jittered the way a localiser's boxes are wrong (uneven margins, a shifted box)
and turned by quarter turns (a tile lying in a meld, or read from across the table); a mirrored
tile never is. Some tiles in rows are cut turned along their row instead, as the classifier's second
view reads them (``vision.detect.classifier.upright_crops``). ``none`` crops are patches of the photo away
from every tile, so the classifier learns to reject the localiser's false alarms; crops of the localiser's
own boxes on labelled tiles teach it the tiles as the reader cuts them. Validation crops
are cut exactly as the first view at inference. Rendered crops (``datasets.synth.face_crops``: a
tile of one of endless face styles, without a scene) can be added to the training crops.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from datasets.labels import DatasetError, LabelledImage
from datasets.synth.art import ArtSet
from datasets.synth.face_crops import rendered_crops
from datasets.synth.look import RED_FIVES_P
from datasets.windows import Region
from vision.contract import (
    BOX_MARGINS,
    CLASSIFIER_CLASSES,
    CROP_MARGIN,
    CROP_SIZE,
    NONE,
    tile_crops,
    upright_crops,
)
from vision.detections import BACK
from vision.geometry.boxes import box_iou, row_directions
from vision.progress import progress

# RGB pixels -> the boxes (x1, y1, x2, y2) a localiser finds in them (``Detector.boxes`` of the first view)
Localise = Callable[[np.ndarray], np.ndarray]
FALSE_IOU = 0.3  # a found box overlapping a labelled tile this much (or centred on one) is that tile
FOUND_IOU = 0.5  # a found box overlapping a labelled tile this much shows that tile (``--as-found``)
TURNS = (0, 0, 0, 0, 2, 2, 1, 3)  # quarter turns, drawn uniformly: upright most often
UPRIGHT_SHARE = 0.3  # of the training crops of tiles in rows, cut turned along their row


def _jittered_margins(rng: random.Random, n: int) -> np.ndarray:
    return np.array([[rng.uniform(*BOX_MARGINS) for _ in range(4)] for _ in range(n)], np.float32)


def _background_boxes(rng: random.Random, item: LabelledImage, boxes: np.ndarray, count: int) -> np.ndarray:
    """Tile-sized boxes that overlap no labelled box by more than a sliver."""
    if not len(boxes):
        return np.zeros((0, 4), np.float32)
    sizes = boxes[:, 2:] - boxes[:, :2]
    found: list[list[float]] = []
    for _ in range(count * 20):
        if len(found) == count:
            break
        w, h = sizes[rng.randrange(len(sizes))] * rng.uniform(0.6, 1.6)
        if w >= item.width or h >= item.height:
            continue
        x, y = rng.uniform(0, item.width - w), rng.uniform(0, item.height - h)
        candidate = np.array([[x, y, x + w, y + h]], np.float32)
        if box_iou(candidate, boxes).max() < 0.1:
            found.append(candidate[0].tolist())
    return np.array(found, np.float32).reshape(-1, 4)


def false_boxes(found: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """The boxes of ``found`` that lie on no labelled tile (IoU below ``FALSE_IOU`` with each, centre outside
    each): the localiser's false alarms (a keyboard's keys, a domino, a cloth's pattern), ``none`` crops that
    teach the classifier to reject them."""
    found = np.asarray(found, np.float32).reshape(-1, 4)
    if not len(found) or not len(labelled):
        return found
    centres = (found[:, :2] + found[:, 2:]) / 2
    inside = (
        (centres[:, None, 0] >= labelled[None, :, 0])
        & (centres[:, None, 0] <= labelled[None, :, 2])
        & (centres[:, None, 1] >= labelled[None, :, 1])
        & (centres[:, None, 1] <= labelled[None, :, 3])
    ).any(axis=1)
    return found[(box_iou(found, labelled).max(axis=1) < FALSE_IOU) & ~inside]


def found_on_tiles(found: np.ndarray, labelled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The boxes of ``found`` that lie on a labelled tile (IoU at least ``FOUND_IOU``), and the index of that
    tile (the one each overlaps most): crops cut as the reader cuts them, a tile seen at an angle, its thick
    side showing, a box a little off, named as the tile they show."""
    found = np.asarray(found, np.float32).reshape(-1, 4)
    if not len(found) or not len(labelled):
        return found[:0], np.zeros(0, np.int64)
    overlaps = box_iou(found, labelled)
    on = overlaps.max(axis=1) >= FOUND_IOU
    return found[on], overlaps[on].argmax(axis=1)


def straddling_boxes(boxes: np.ndarray, gap: float = 0.25) -> np.ndarray:
    """Boxes of one tile's size centred on the seam between two neighbours side by side (each box's
    nearest neighbour to its right, at most ``gap`` of a width apart, overlapping it by half its height):
    half of each tile, which is no tile."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    found = []
    for left in boxes:
        width, height = left[2] - left[0], left[3] - left[1]
        overlap = np.minimum(boxes[:, 3], left[3]) - np.maximum(boxes[:, 1], left[1])
        distance = boxes[:, 0] - left[2]
        beside = (overlap >= 0.5 * height) & (distance >= -0.3 * width) & (distance <= gap * width)
        beside &= boxes[:, 0] > left[0] + 0.5 * width
        if not beside.any():
            continue
        right = boxes[np.flatnonzero(beside)[np.argmin(distance[beside])]]
        seam = (left[2] + right[0]) / 2
        half = (width + (right[2] - right[0])) / 4
        found.append([seam - half, min(left[1], right[1]), seam + half, max(left[3], right[3])])
    return np.array(found, np.float32).reshape(-1, 4)


PART_SHARES = {"half": 0.5, "pip": 0.3, "sliver": 0.2}  # of the part crops a tile gives: what each part is
PART_MIN_SIDE = 24.0  # a tile whose box is narrower than this many pixels shows no legible part


def part_boxes(rng: random.Random, boxes: np.ndarray, count: int) -> np.ndarray:
    """Up to ``count`` boxes on a part of one of ``boxes`` (tiles at least ``PART_MIN_SIDE`` across): a half
    (the upper, lower, left or right one: a 4 筒 boxed twice reads as two 2 筒), one pip's square (a third of
    the tile's width, anywhere on its face: a pip of a 9 筒 read as a 1 筒), or a sliver along one side: each
    is no tile, as the localiser's boxes on parts of a tile are."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    sides = np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    legible = np.flatnonzero(sides >= PART_MIN_SIDE)
    kinds, weights = list(PART_SHARES), list(PART_SHARES.values())
    found = []
    for _ in range(count if len(legible) else 0):
        x1, y1, x2, y2 = (float(v) for v in boxes[rng.choice(list(legible))])
        w, h = x2 - x1, y2 - y1
        kind = rng.choices(kinds, weights)[0]
        if kind == "pip":
            pip = w * rng.uniform(0.25, 0.4)
            x = rng.uniform(x1 + 0.08 * w, x2 - 0.08 * w - pip)
            y = rng.uniform(y1 + 0.08 * h, y2 - 0.08 * h - pip)
            found.append([x, y, x + pip, y + pip])
            continue
        share = 0.5 if kind == "half" else rng.uniform(0.2, 0.35)
        found.append(  # a strip of ``share`` of the tile along its top, bottom, left or right side
            [
                [x1, y1, x2, y1 + share * h],
                [x1, y2 - share * h, x2, y2],
                [x1, y1, x1 + share * w, y2],
                [x2 - share * w, y1, x2, y2],
            ][rng.randrange(4)]
        )
    return np.array(found, np.float32).reshape(-1, 4)


def write_crops(
    images: Iterable[LabelledImage],
    out: Path | str,
    *,
    split: str,
    copies: int = 1,
    per_image: int | None = None,
    background: int = 2,
    augment: bool = True,
    seed: int = 0,
    size: int = CROP_SIZE,
    min_side: float = 0.0,
    straddles: int = 0,
    parts: int = 0,
    false_alarms: int = 0,
    as_found: int = 0,
    localise: Localise | None = None,
    dont_care: Mapping[str, Sequence[Region]] | None = None,
) -> Counter[str]:
    """Write crops of ``images`` under ``out/split/<class>/``; returns the count per class.

    ``copies``: jittered crops per box; ``per_image``: at most this many boxes drawn per image;
    ``background``: ``none`` crops per image; ``straddles``: at most this many ``none`` crops per image
    of a box over the seam between two neighbouring tiles (``straddling_boxes``: the localiser's
    stray second box on a flat meld); ``parts``: at most this many ``none`` crops per image of a part of a
    tile (``part_boxes``: a half, a pip, a sliver); ``min_side``: boxes whose shorter side is under this
    many pixels of the image are not cut; ``false_alarms``: at most this many ``none`` crops per image of
    boxes ``localise`` finds on no labelled tile (``false_boxes``), photos of no tile included;
    ``as_found``: at most this many crops per image of the boxes ``localise`` finds on labelled tiles, named
    as the tile (``found_on_tiles``). ``dont_care``: outlines by image file name that no ``none`` crop
    is cut on (a tile on its long edge is neither a tile nor no tile).
    """
    rng = random.Random(seed)
    root = Path(out) / split
    for name in CLASSIFIER_CLASSES:
        (root / name).mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    for index, item in enumerate(images):
        with Image.open(item.image) as image:
            pixels = np.asarray(image.convert("RGB"))
        height, width = pixels.shape[:2]
        all_boxes = np.array([b.xyxy(width, height) for b in item.boxes], np.float32).reshape(-1, 4)
        sides = np.minimum(all_boxes[:, 2] - all_boxes[:, 0], all_boxes[:, 3] - all_boxes[:, 1])
        chosen = [int(i) for i in np.flatnonzero(sides >= min_side)]
        if per_image is not None and len(chosen) > per_image:
            chosen = rng.sample(chosen, per_image)
        classes = [item.boxes[i].class_id for i in chosen for _ in range(copies)]
        boxes = np.repeat(all_boxes[chosen], copies, axis=0)
        ignored = np.array((dont_care or {}).get(item.image.name, ()), np.float32).reshape(-1, 4)
        taken = np.concatenate([all_boxes, ignored])  # what no ``none`` crop may be cut on
        extra = _background_boxes(rng, item, taken, background)
        if straddles:
            between = straddling_boxes(all_boxes)
            picked = rng.sample(range(len(between)), min(straddles, len(between)))
            extra = np.concatenate([extra, between[picked]])
        if parts:
            faces = np.array([b.class_id < BACK for b in item.boxes], bool).reshape(-1)
            extra = np.concatenate([extra, part_boxes(rng, all_boxes[faces], parts)])
        found = localise(pixels) if (false_alarms or as_found) and localise is not None else None
        if false_alarms and found is not None:
            wrong = false_boxes(found, taken)
            picked = rng.sample(range(len(wrong)), min(false_alarms, len(wrong)))
            extra = np.concatenate([extra, wrong[picked]])
        if as_found and found is not None:  # after the labelled boxes, whose crops may be turned along rows
            on, tiles = found_on_tiles(found, all_boxes)
            picked = rng.sample(range(len(on)), min(as_found, len(on)))
            classes += [item.boxes[int(tiles[k])].class_id for k in picked]
            boxes = np.concatenate([boxes, on[picked]])
        classes += [NONE] * len(extra)
        boxes = np.concatenate([boxes, extra])
        margins: np.ndarray | float = _jittered_margins(rng, len(boxes)) if augment else CROP_MARGIN
        crops = tile_crops(pixels, boxes, size, margins)
        if augment:
            _turn_some_along_their_rows(rng, pixels, all_boxes, np.repeat(chosen, copies), crops, size)
        for number, (crop, class_id) in enumerate(zip(crops, classes, strict=True)):
            turned = np.rot90(crop, rng.choice(TURNS)) if augment else crop
            name = CLASSIFIER_CLASSES[class_id]
            Image.fromarray(np.ascontiguousarray(turned)).save(
                root / name / f"{index:05d}_{item.stem[:40]}_{number:03d}.png"
            )
            counts[name] += 1
    return counts


def write_rendered_crops(
    out: Path | str, crops: Iterable[tuple[str, np.ndarray]], *, seed: int = 0
) -> Counter[str]:
    """Write rendered training crops (``datasets.synth.face_crops.rendered_crops``: class name and crop)
    under ``out/train/<class>/``, each turned as crops cut from photos are (a quarter turn drawn from
    ``seed``, which names the files too); returns the count per class."""
    rng = random.Random(seed)
    root = Path(out) / "train"
    counts: Counter[str] = Counter()
    for number, (name, crop) in enumerate(crops):
        if not counts[name]:
            (root / name).mkdir(parents=True, exist_ok=True)
        turned = np.ascontiguousarray(np.rot90(crop, rng.choice(TURNS)))
        Image.fromarray(turned).save(root / name / f"rendered_{seed}_{number:06d}.png")
        counts[name] += 1
    return counts


def _turn_some_along_their_rows(
    rng: random.Random,
    pixels: np.ndarray,
    all_boxes: np.ndarray,
    indices: np.ndarray,
    crops: np.ndarray,
    size: int,
) -> None:
    """Replace ``UPRIGHT_SHARE`` of the crops of tiles in rows (``crops[k]`` is of box ``indices[k]``)
    by crops turned along their row, with a jittered margin."""
    angles, pitches = row_directions(all_boxes)
    for k, index in enumerate(indices):
        if np.isfinite(angles[index]) and rng.random() < UPRIGHT_SHARE:
            crops[k] = upright_crops(
                pixels,
                all_boxes[index : index + 1],
                angles[index : index + 1],
                pitches[index : index + 1],
                size,
                rng.uniform(0.0, 0.16),
            )[0]


@dataclass(frozen=True)
class CropSource:
    """A labelled dataset and how to cut it: ``copies`` crops per box, at most ``per_image`` boxes."""

    images: Sequence[LabelledImage]
    copies: int = 1
    per_image: int | None = None
    # don't-care outlines by image file name (a synthetic scene's tiles on their long edge, slivers of tiles
    # under others: ``datasets.windows.dont_care_regions``): never cut as ``none``
    dont_care: Mapping[str, Sequence[Region]] = field(default_factory=dict)

    @classmethod
    def parse(
        cls,
        spec: str,
        images: Sequence[LabelledImage],
        dont_care: Mapping[str, Sequence[Region]] | None = None,
    ) -> CropSource:
        """``DIR[:COPIES[:PER_IMAGE]]`` (the folder part already read into ``images``, its don't-care outlines
        into ``dont_care``); PER_IMAGE 0 cuts no tile, only the ``none`` crops."""
        parts = spec.split(":")[1:]
        try:
            copies = int(parts[0]) if parts and parts[0] else 1
            per_image = int(parts[1]) if len(parts) > 1 and parts[1] else None
        except ValueError:
            raise DatasetError(f"{spec!r}: expected DIR[:COPIES[:PER_IMAGE]] with whole numbers") from None
        if copies < 1 or (per_image is not None and per_image < 0):
            raise DatasetError(f"{spec!r}: COPIES must be at least 1, PER_IMAGE at least 0 (none crops only)")
        return cls(images, copies, per_image, dont_care or {})


def build_crop_dataset(
    sources: Sequence[CropSource],
    out: Path | str,
    *,
    seed: int = 0,
    size: int = CROP_SIZE,
    min_side: float = 0.0,
    rendered: int = 0,
    art_sets: Sequence[ArtSet] = (),
    red_five_p: float = RED_FIVES_P,
    one_ink_p: float = 0.0,
    rendered_classes: Sequence[str] = (),
    straddles: int = 0,
    parts: int = 0,
    false_alarms: int = 0,
    as_found: int = 0,
    localise: Localise | None = None,
    quiet: bool = False,
) -> dict[str, Counter[str]]:
    """A classification dataset in ultralytics' folder layout (``out/train/<class>``, ``out/val/<class>``).

    The train (or unsplit) images of every source give training crops, jittered, of the tiles at
    least ``min_side`` pixels across; their val images give validation crops of every tile, cut as at
    inference. Test images are left out. ``rendered`` crops (faces procedural or from ``art_sets``)
    join the training crops; ``straddles``: ``none`` crops per training image of boxes over the seam
    between two neighbouring tiles; ``parts``: ``none`` crops per training image of a part of a tile (a half,
    a pip, a sliver); ``false_alarms``: ``none`` crops per training image of the boxes
    ``localise`` (a localiser) finds on no labelled tile; ``as_found``: crops per training image of the
    boxes it finds on labelled tiles, named as the tile. A bar shows how far the photos and the rendered
    crops have got (``vision.progress``; none when ``quiet``).
    """
    counts: dict[str, Counter[str]] = {"train": Counter(), "val": Counter()}
    for number, source in enumerate(progress(sources, unit="dataset", desc="crops", enabled=not quiet)):
        train = [i for i in source.images if i.split in ("train", "")]
        val = [i for i in source.images if i.split == "val"]
        counts["train"] += write_crops(
            train,
            out,
            split="train",
            copies=source.copies,
            per_image=source.per_image,
            seed=seed + number,
            size=size,
            min_side=min_side,
            straddles=straddles,
            parts=parts,
            false_alarms=false_alarms,
            as_found=as_found,
            localise=localise,
            dont_care=source.dont_care,
        )
        counts["val"] += write_crops(
            val, out, split="val", augment=False, background=1, seed=seed + number, size=size
        )
    if rendered:
        crops = rendered_crops(
            rendered,
            seed=seed,
            art_sets=art_sets,
            size=size,
            red_five_p=red_five_p,
            one_ink_p=one_ink_p,
            classes=rendered_classes,
        )
        shown = progress(crops, total=rendered, unit="crop", desc="rendered crops", enabled=not quiet)
        counts["train"] += write_rendered_crops(out, shown, seed=seed)
    return counts


@dataclass(frozen=True)
class MixPart:
    """Training crops of one crop folder in a mix: a ``share`` of its files (those whose name starts with
    ``prefix``, or all), each linked ``copies`` times."""

    folder: Path
    share: float = 1.0
    copies: int = 1
    prefix: str = ""
    exclude_prefix: str = ""

    @classmethod
    def parse(cls, spec: str) -> MixPart:
        """``DIR[:SHARE[:COPIES[:PREFIX]]]``; ``!PREFIX`` takes the files whose names do not start so."""
        parts = spec.split(":")
        if not 1 <= len(parts) <= 4 or not parts[0]:
            raise DatasetError(f"{spec!r}: give DIR[:SHARE[:COPIES[:PREFIX]]]")
        try:
            share = float(parts[1]) if len(parts) > 1 and parts[1] else 1.0
            copies = int(parts[2]) if len(parts) > 2 and parts[2] else 1
        except ValueError:
            raise DatasetError(f"{spec!r}: SHARE is a number from 0 to 1, COPIES a whole number") from None
        if not 0.0 < share <= 1.0 or copies < 1:
            raise DatasetError(f"{spec!r}: SHARE must lie in (0, 1] and COPIES be at least 1")
        prefix = parts[3] if len(parts) > 3 else ""
        if prefix.startswith("!"):
            return cls(Path(parts[0]), share, copies, "", prefix[1:])
        return cls(Path(parts[0]), share, copies, prefix)


def mix_crop_folders(
    out: Path | str, parts: Sequence[MixPart], val: Path | str, *, seed: int = 0
) -> Counter[str]:
    """A crop dataset of symbolic links: the training crops ``parts`` choose, and ``val``'s validation
    crops; returns the training crops per class. Nothing is copied: the folders it links to must stay."""
    rng = random.Random(seed)
    out = Path(out)
    # every folder checked before any link is made: a refused mix leaves nothing behind
    for part in parts:
        if not (part.folder / "train").is_dir():
            raise DatasetError(f"{part.folder}: no train/ crops (build it with 'smj dataset crops')")
    val_crops = Path(val) / "val"
    if not val_crops.is_dir():
        raise DatasetError(f"{val}: no val/ crops to validate on")
    counts: Counter[str] = Counter()
    for number, part in enumerate(parts):
        for crop, target in _class_crops(part.folder / "train", out / "train"):
            excluded = part.exclude_prefix and crop.name.startswith(part.exclude_prefix)
            if not crop.name.startswith(part.prefix) or excluded or rng.random() >= part.share:
                continue
            for copy in range(part.copies):
                (target / f"{number}_{copy}_{crop.name}").symlink_to(crop.resolve())
                counts[target.name] += 1
    for crop, target in _class_crops(val_crops, out / "val"):
        (target / crop.name).symlink_to(crop.resolve())
    return counts


def _class_crops(folder: Path, out: Path) -> Iterator[tuple[Path, Path]]:
    """Each crop of ``folder/<class>/`` with the class folder under ``out`` it goes to (made here)."""
    for class_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        target = out / class_dir.name
        target.mkdir(parents=True, exist_ok=True)
        for crop in sorted(class_dir.iterdir()):
            yield crop, target
