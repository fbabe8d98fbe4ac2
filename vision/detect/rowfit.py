"""Boxes fitted to a standing row of touching tiles: their edges snapped to the seams seen between them.

The localiser bounds tiles of a packed standing row a little wide, so a box holds a sliver of its
neighbour. Along a run of touching standing tiles (``vision.geometry.rows``: a cluster of three or more tiles
taller than wide, none turned sideways, its row within ``MAX_SLANT`` of level) the seam between two
neighbours lies near the midpoint of their centres, which the localiser places well. There the photo shows
it as a dark line across the row: the seam is put at the darkest column of the row's band (by its lighter
pixels, as a face's ink is dark only in parts of a column; columns sheared to run square to the row)
within ``SEARCH`` pitches of that midpoint when it is ``MIN_DIP`` grey levels darker than the columns
around it, else at the midpoint.
Each tile's box then spans from the seam before it to the seam after it (an end tile keeps its outer
edge, at most a pitch from its seam), widened by what a slanted row's tiles overhang. Flat tiles, turned
tiles of a meld, lone tiles and tiles beside a gap keep their boxes: a gap is no seam.

First, two boxes the localiser drew on the halves of one tile turned sideways in a meld are joined into
one (``join_halves``). Then a box the localiser drew over two touching tiles of such a run (about two
pitches wide, ``DOUBLE``) is split in two at the seam seen between them, found as the seams are
(``split_doubles``): each tile then has a box, and the classifier reads each half.

Pure image geometry on numpy arrays (no model), so it can be tested on drawn rows.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.detect.looks import CONFIDENT
from vision.geometry.boxes import box_iou
from vision.geometry.rows import RowCache
from vision.quantiles import column_percentile, median

MIN_RUN = 3  # touching tiles: a shorter run says too little of its pitch
# A run whose boxes are mostly (half or more) taller than wide is one of standing tiles, unless one of them
# is wider than tall: a tile turned sideways in a meld. In a row within LEVEL of level (as every row of a
# large photo is once turned level) a box may be up to TURNED times wider than tall: there the localiser's
# boxes on packed tiles come out up to half again as wide as the tiles, and one as wide as tall had left
# held-out 12 MP rows unfitted. In steeper rows a box wider than tall still leaves the run alone: fitting
# those read the real hand_series worse (a photo whose rotated copies' labels are loose; models/HISTORY.md,
# "The reader's constants").
STANDING = 1.0
TURNED = 1.2
LEVEL = math.radians(10)
MAX_SLANT = math.radians(20)  # a row slanted more than this is left alone (the photo was not turned)
SEARCH = 0.2  # pitches either side of the centres' midpoint where a seam is looked for
MIN_DIP = 6.0  # grey levels: how much darker than its surroundings a seam's column must be
BAND = 0.3  # of a box's height either side of the row's line: the band whose columns are compared
# a column's grey level is that of its lighter pixels (this percentile across the band): a seam runs dark
# across the whole band, a face's ink (bamboo sticks, strokes) only in parts. Its mean took the ink next to a
# seam for it, and fewer packed tiles got a tight box (models/HISTORY.md)
SEAM_PERCENTILE = 97.0
WIDE = 1.5  # times the run's median box width: a box this wide may span two tiles ...
DOUBLE = (1.7, 2.7)  # ... and does when it is this many pitches of its run wide
DUPLICATE_IOU = 0.5  # a half of a split box overlapping another box this much is that box's tile: dropped
# Two boxes on the halves of one tile turned sideways in a meld (``examples/hand.jpg``'s turned 1m had been
# read as two 1m, a kong; a flat meld tile, seen from the front, may be boxed in two too): neighbours of a row
# within HALF_SLANT of level that overlap along it by HALF_OVERLAP of the narrower or more, are both shorter
# than HALF_HEIGHT of the median height of the run's other boxes (a turned tile's face is as tall as a tile is
# wide), span one tile's length together (within HALF_LENGTH of that height) and HALF_WIDE times their height
# (two standing tiles' overlapping boxes span about their height), with no seam seen between them (one face),
# are joined into one box. Pairs are looked for along whole rows (the halves' near centres split a meld into
# clusters of its own); on photos with no turned tile they join almost nothing, and never lose a hand. A 12
# MP photo's melds in front of the hand may lie slanted by more than LEVEL (a pong at 12.6 degrees, its
# first tile in two boxes, had been lost), so HALF_SLANT is 15 degrees (models/HISTORY.md)
HALF_OVERLAP = 0.3
HALF_HEIGHT = 0.95
HALF_LENGTH = (0.9, 1.12)
HALF_WIDE = 1.05
HALF_SLANT = math.radians(15)


def fit(
    pixels: np.ndarray, boxes: np.ndarray, scores: np.ndarray, rows: RowCache | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``join_halves``, ``split_doubles`` then ``fit_rows`` on one grey copy of the photo: the boxes joined
    and split, for each the position of the box it came from, and those boxes fitted to their seams.
    ``rows``: where the rows of boxes found before (turning the photo level) are taken from."""
    grey = _grey(pixels)
    boxes, scores = np.asarray(boxes, np.float32).reshape(-1, 4), np.asarray(scores, np.float32)
    chains, runs = _chains(boxes, scores, rows)  # found again only where a step changed the boxes
    joined, kept = _join_halves(grey, boxes, scores, chains)
    if len(kept) < len(boxes):
        runs = _chains(joined, scores[kept], rows)[1]
    split, source = _split_doubles(grey, joined, scores[kept], runs)
    if split is not joined:
        runs = _chains(split, scores[kept][source], rows)[1]
    source = kept[source]
    return split, source, _fit_rows(grey, split, scores[source], runs)


def join_halves(pixels: np.ndarray, boxes: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``boxes`` with each pair drawn on the two halves of one turned meld tile joined into one box, and
    for each box out the position of the box it came from (of a pair, the more confident)."""
    boxes, scores = np.asarray(boxes, np.float32).reshape(-1, 4), np.asarray(scores, np.float32)
    return _join_halves(_grey(pixels), boxes, scores, _chains(boxes, scores)[0])


def _join_halves(
    grey: np.ndarray, boxes: np.ndarray, scores: np.ndarray, rows: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """``join_halves`` over ``rows`` (positions in ``boxes``): whole rows, as the halves' near centres
    split a meld's tiles into clusters of their own."""
    joined: dict[int, np.ndarray] = {}  # kept position -> the joined box
    dropped: set[int] = set()
    for members in rows:
        order, _, _, slope = _along(boxes[members])
        if abs(math.atan(slope)) > HALF_SLANT:
            continue  # a steep row's boxes overlap along x without sharing a tile
        run, members = boxes[members][order], members[order]
        heights = run[:, 3] - run[:, 1]
        for i in range(len(run) - 1):
            a, b = run[i], run[i + 1]
            if int(members[i]) in dropped or int(members[i]) in joined:
                continue
            length = float(np.median(np.delete(heights, [i, i + 1])))  # the others': a tile's length
            if length <= 0:
                continue
            overlap = float(a[2] - b[0])
            narrower = float(min(a[2] - a[0], b[2] - b[0]))
            span = float(max(a[2], b[2]) - min(a[0], b[0]))
            height = float(max(heights[i], heights[i + 1]))
            tall = float(max(a[3], b[3]) - min(a[1], b[1]))
            if not (
                overlap >= HALF_OVERLAP * narrower
                and height <= HALF_HEIGHT * length
                and HALF_LENGTH[0] <= span / length <= HALF_LENGTH[1]
                and span >= HALF_WIDE * tall
            ):
                continue
            (ax, ay), (bx, by) = (a[:2] + a[2:]) / 2, (b[:2] + b[2:]) / 2
            if _seam(grey, float(ax), float(bx), float(ay + by) / 2, slope, height)[1]:
                continue  # two tiles after all
            keep, drop = int(members[i]), int(members[i + 1])
            if scores[drop] > scores[keep]:
                keep, drop = drop, keep
            joined[keep] = np.array([min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])])
            dropped.add(drop)
    if not joined:
        return boxes, np.arange(len(boxes))
    kept = np.array([i for i in range(len(boxes)) if i not in dropped])
    out = boxes[kept].copy()
    for position, i in enumerate(kept):
        if int(i) in joined:
            out[position] = joined[int(i)]
    return out, kept


def _chains(
    boxes: np.ndarray, scores: np.ndarray, found: RowCache | None = None
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The positions in ``boxes`` of the confident boxes of each row, and of each run of touching ones in
    a row, of at least ``MIN_RUN`` boxes each."""
    confident = np.flatnonzero(np.asarray(scores) >= CONFIDENT)
    if len(confident) < MIN_RUN:
        return [], []
    confident_boxes = boxes[confident].astype(np.float64)
    rows = (found or RowCache()).find(confident_boxes)
    clusters = [cluster for row in rows for cluster in row.clusters]
    return (
        [confident[list(row.members)] for row in rows if len(row.members) >= MIN_RUN],
        [confident[list(cluster)] for cluster in clusters if len(cluster) >= MIN_RUN],
    )


def _along(run: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The order of a run's boxes along it (by centre x), their centres in that order and its slope."""
    order = np.argsort((run[:, 0] + run[:, 2]) / 2, kind="stable")
    boxes = run[order]
    cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    return order, cx, cy, float(np.polyfit(cx, cy, 1)[0])


def split_doubles(pixels: np.ndarray, boxes: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``boxes`` (xyxy, photo pixels) with each one spanning two touching tiles of a standing row near
    level split in two at the seam between them, and for each box out the position of the box it came
    from (so its score and class go with it)."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    return _split_doubles(_grey(pixels), boxes, scores, _chains(boxes, scores)[1])


def _split_doubles(
    grey: np.ndarray, boxes: np.ndarray, scores: np.ndarray, runs: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """``split_doubles`` over ``runs``; ``boxes`` themselves when nothing is split."""
    source = np.arange(len(boxes))
    halves: dict[int, tuple[np.ndarray, ...]] = {}
    for members in runs:
        halves.update(_split_run(grey, boxes, members))
    if not halves:
        return boxes, source
    out, came_from = [], []
    for i, box in enumerate(boxes):
        parts = (np.stack(halves[i]) if halves[i] else box[:0]) if i in halves else box[None]
        out.append(parts.reshape(-1, 4))
        came_from += [i] * len(parts)
    return np.concatenate(out).astype(np.float32), np.array(came_from)


def _split_run(grey: np.ndarray, boxes: np.ndarray, members: np.ndarray) -> dict[int, tuple[np.ndarray, ...]]:
    """The halves of the boxes of one run (``members``: positions in ``boxes``) that span two tiles."""
    order, cx, cy, slope = _along(boxes[members])
    run, members = boxes[members][order], members[order]
    widths, heights = run[:, 2] - run[:, 0], run[:, 3] - run[:, 1]
    if abs(math.atan(slope)) > MAX_SLANT:
        return {}
    # a box across two tiles is half again as far from its neighbours' centres as they are from theirs, so
    # the run's pitch is measured between the boxes of about its typical width
    wide = widths >= WIDE * median(widths)
    steps = np.diff(cx)[~(wide[:-1] | wide[1:])]
    if not len(steps):
        return {}
    pitch = median(steps)
    doubles = (
        wide & (widths >= DOUBLE[0] * pitch) & (widths <= DOUBLE[1] * pitch) & (heights >= STANDING * pitch)
    )
    others = run[~doubles]
    halves: dict[int, tuple[np.ndarray, ...]] = {}
    for i in np.flatnonzero(doubles):
        x0, y0, x1, y1 = (float(v) for v in run[i])
        left, right = float(cx[i]) - pitch / 2, float(cx[i]) + pitch / 2  # the two tiles' centres
        seam = _seam(grey, left, right, float(cy[i]), slope, y1 - y0)[0]
        pair = (np.array([x0, y0, seam, y1], np.float32), np.array([seam, y0, x1, y1], np.float32))
        # a half on a tile that has a box of its own is that box's: only the other half is kept
        halves[int(members[i])] = tuple(
            half for half in pair if not (box_iou(half[None], others) >= DUPLICATE_IOU).any()
        )
    return halves


def fit_rows(pixels: np.ndarray, boxes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``boxes`` (xyxy, photo pixels) with those of packed standing rows fitted to their seams."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    return _fit_rows(_grey(pixels), boxes, scores, _chains(boxes, scores)[1])


def _fit_rows(grey: np.ndarray, boxes: np.ndarray, scores: np.ndarray, runs: list[np.ndarray]) -> np.ndarray:
    fitted = boxes.copy()
    for members in runs:
        fitted[members] = fit_run(grey, boxes[members])
    return fitted


def fit_run(grey: np.ndarray, run: np.ndarray) -> np.ndarray:
    """The boxes of one run of touching tiles (in order along it) fitted to the seams between them; the
    boxes as given when they are not standing tiles in a row near level."""
    run = np.asarray(run, np.float32).reshape(-1, 4)
    order, cx, cy, slope = _along(run)
    boxes = run[order]
    slant = abs(math.atan(slope))
    if slant > MAX_SLANT:
        return run
    widths, heights = run[:, 2] - run[:, 0], run[:, 3] - run[:, 1]
    widest = TURNED if slant <= LEVEL else 1.0  # the widest a standing tile's box may come out, of its height
    if np.count_nonzero(heights < STANDING * widths) * 2 > len(run) or np.any(widths > widest * heights):
        return run  # tiles lying flat, or a turned tile among them: a meld, left alone
    height = median(heights)
    # a slanted row's tile box overhangs its seams by the slant of the tile's height (half each side)
    overhang = abs(slope) / math.hypot(1.0, slope) * height * 0.5
    seams = [
        _seam(grey, float(cx[i]), float(cx[i + 1]), float(cy[i] + cy[i + 1]) / 2, slope, height)[0]
        for i in range(len(boxes) - 1)
    ]
    out = boxes.copy()
    for i in range(len(boxes)):
        left = seams[i - 1] if i > 0 else max(float(boxes[i, 0]) + overhang, seams[0] - (cx[1] - cx[0]))
        right = (
            seams[i] if i < len(seams) else min(float(boxes[i, 2]) - overhang, seams[-1] + cx[-1] - cx[-2])
        )
        out[i, 0], out[i, 2] = left - overhang, right + overhang
    result = np.empty_like(run)
    result[order] = out
    return result


def _grey(pixels: np.ndarray) -> np.ndarray:
    """The photo's grey levels, as they come (uint8 from RGB): only the bands a seam is looked for in are
    read, so no float copy of the whole photo is made."""
    return cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY) if pixels.ndim == 3 else pixels


def _seam(
    grey: np.ndarray, left: float, right: float, y: float, slope: float, height: float
) -> tuple[float, bool]:
    """Where the seam between two touching tiles centred at x ``left`` and ``right`` lies, and whether one
    was seen: the darkest column of the row's band near their midpoint, if it is dark enough, else the
    midpoint (not seen)."""
    middle = (left + right) / 2
    pitch = right - left
    x0, x1 = math.floor(middle - pitch / 2), math.ceil(middle + pitch / 2)
    half = max(1, round(BAND * height))
    columns = np.arange(max(0, x0), min(grey.shape[1], x1 + 1))
    if len(columns) < 5:
        return middle, False
    # the band along the row's line, each of its columns sheared along the seams: in a row turned by the
    # camera its tiles' seams turn with it, square to the row
    centre_y = y + slope * (columns - middle)
    across = np.arange(-half, half + 1)[:, None]
    rows = np.round(centre_y[None, :] + across).astype(int)
    xs = np.round(columns[None, :] - slope * across).astype(int)
    inside = (rows >= 0) & (rows < grey.shape[0]) & (xs >= 0) & (xs < grey.shape[1])
    picked = grey[rows.clip(0, grey.shape[0] - 1), xs.clip(0, grey.shape[1] - 1)]
    if inside.all():  # the common case: no column leaves the photo, so no NaN to step round
        profile = column_percentile(picked, SEAM_PERCENTILE)
        typical = median(profile)
    else:
        profile = np.nanpercentile(np.where(inside, picked, np.nan), SEAM_PERCENTILE, axis=0)
        typical = float(np.nanmedian(profile))
    near = np.abs(columns - middle) <= SEARCH * pitch
    if not near.any() or np.isnan(profile[near]).all():
        return middle, False
    darkest = int(np.flatnonzero(near)[np.nanargmin(profile[near])])
    if typical - float(profile[darkest]) < MIN_DIP:
        return middle, False
    return float(columns[darkest]) + 0.5, True
