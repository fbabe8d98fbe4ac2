"""How well the detector's boxes fit the tiles, measured on synthetic scenes (``smj dataset synth`` output).

    python benchmarks/bench_boxes.py DIR [DIR ...] [--weights W] [--classifier C] [--limit N]
        [--truth face|outline] [--per-scene [--worst N]]

Made for photos of packed standing rows as a phone takes them, e.g.

    smj dataset synth --out work/packed --n 20 --seed 5100 --size 4032x3024 --fill 0.25-0.4 \\
        --exif-orientation 6 --packed --art TILEART            # the usual art sets and procedural faces
    smj dataset synth --out work/packed_held --n 20 --seed 5200 --size 4032x3024 --fill 0.25-0.4 \\
        --exif-orientation 6 --packed --art TILEART --held-out-art --art-p 1   # the held-out set alone

Every scene's JPEG bytes go through the detector as users get it (``vision.pipeline.detect_tiles``:
``decode_photo`` then the photo's first view, ``vision.reading.first_detections``, at the operating
threshold). For each true tile, its best box
is the found box of highest IoU with it (any class). Printed for the player's hand row and for all
labelled tiles (``--truth face``, the default: each true box as labelled, a face-up tile's visible face, as
the real photos are labelled; ``--truth outline``: all of the tile that shows, its top too), the scenes split
by tile style (the held-out art sets, ``datasets.synth.art.HELD_OUT``,
and the rest): the mean best-box IoU, the share of tiles whose best box has IoU >= 0.7, the share with no
box at all, the mean signed shift of the best box's centre along the hand row in tile widths (negative:
toward the row's first tile), the mean ratio of the best box's extent along the row to the tile's, and the
share of scenes whose multiset of suited tiles found equals the truth: in the whole scene (as ``smj eval``
counts it), and on the player's tiles (hand row and melds; a found box counts there when the true tile
it overlaps most, at IoU 0.3 or more, is one of them). Also the median and p90 time from a photo's bytes
to its boxes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from datasets.scenes import one_line_errors, scene_images

GOOD_IOU = 0.7
MATCH_IOU = 0.3  # a found box belongs to the true tile it overlaps most, at least this much


def row_direction(row_boxes: np.ndarray) -> np.ndarray:
    """The unit vector along which a row of boxes (xyxy, in row order) runs, from its first to its last.

    Level when the row has fewer than two boxes."""
    boxes = np.asarray(row_boxes, np.float64).reshape(-1, 4)
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    if len(centres) < 2:
        return np.array([1.0, 0.0])
    spread = centres - centres.mean(axis=0)
    direction = np.linalg.svd(spread, full_matrices=False)[2][0]
    return direction if float(np.dot(centres[-1] - centres[0], direction)) >= 0 else -direction


def extent_along(boxes: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Each box's extent along ``direction`` (the projection of the axis-aligned box onto that line)."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    return np.abs(direction[0]) * (boxes[:, 2] - boxes[:, 0]) + np.abs(direction[1]) * (
        boxes[:, 3] - boxes[:, 1]
    )


@dataclass(frozen=True)
class BoxFit:
    """Per true tile: the IoU of its best box (0: no box touches it), and, where one does, that box's
    centre shift along the row in the tile's extents and its extent over the tile's (NaN where none)."""

    iou: np.ndarray
    shift: np.ndarray
    width_ratio: np.ndarray


def best_boxes(truth: np.ndarray, found: np.ndarray, direction: np.ndarray) -> BoxFit:
    """How the found boxes fit the true ones (both xyxy), along the row ``direction``."""
    from vision.geometry.boxes import box_iou

    truth = np.asarray(truth, np.float64).reshape(-1, 4)
    found = np.asarray(found, np.float64).reshape(-1, 4)
    if not len(found):
        nan = np.full(len(truth), np.nan)
        return BoxFit(np.zeros(len(truth)), nan, nan.copy())
    ious = box_iou(truth, found)
    best = ious.argmax(axis=1)
    iou = ious[np.arange(len(truth)), best]
    chosen = found[best]
    true_extent = extent_along(truth, direction)
    offset = (chosen[:, :2] + chosen[:, 2:]) / 2 - (truth[:, :2] + truth[:, 2:]) / 2
    shift = offset @ direction / true_extent
    ratio = extent_along(chosen, direction) / true_extent
    missing = iou <= 0
    shift[missing] = np.nan
    ratio[missing] = np.nan
    return BoxFit(iou, shift, ratio)


@dataclass
class Tally:
    """Box fits of many tiles and the scenes' exact-multiset flags."""

    fits: list[BoxFit]
    exact: list[bool]
    player_exact: list[bool] = field(default_factory=list)

    def line(self) -> str:
        iou = np.concatenate([f.iou for f in self.fits]) if self.fits else np.zeros(0)
        shift = np.concatenate([f.shift for f in self.fits]) if self.fits else np.zeros(0)
        ratio = np.concatenate([f.width_ratio for f in self.fits]) if self.fits else np.zeros(0)
        if not len(iou):
            return "no tiles"
        return (
            f"{len(iou):5d} tiles  mean IoU {iou.mean():.3f}  "
            f"IoU>={GOOD_IOU} {np.mean(iou >= GOOD_IOU):.3f}  "
            f"no box {np.mean(iou <= 0):.3f}  shift {np.nanmean(shift):+.3f} W (|shift| "
            f"{np.nanmean(np.abs(shift)):.3f})  width x{np.nanmean(ratio):.3f}"
        )


def player_classes(
    truth: np.ndarray, player: np.ndarray, found: np.ndarray, classes: np.ndarray
) -> Counter[int]:
    """The classes of the found boxes that lie on the player's tiles: each found box goes to the true
    tile it overlaps most (at IoU ``MATCH_IOU`` at least), and counts where that is one of ``player``."""
    from vision.geometry.boxes import box_iou

    truth = np.asarray(truth, np.float64).reshape(-1, 4)
    found = np.asarray(found, np.float64).reshape(-1, 4)
    if not len(found) or not len(truth):
        return Counter()
    ious = box_iou(found, truth)
    best = ious.argmax(axis=1)
    on_player = (ious[np.arange(len(found)), best] >= MATCH_IOU) & np.asarray(player, bool)[best]
    return Counter(int(c) for c in np.asarray(classes)[on_player])


def _names(counts: Counter[int]) -> str:
    from scoring.tiles import CLASS_NAMES

    return " ".join(CLASS_NAMES[c] for c in sorted(counts.elements())) or "none"


def _style(row: dict) -> str:
    from datasets.synth.art import HELD_OUT

    return "held-out" if row.get("tiles") in HELD_OUT else "usual"


@one_line_errors("bench_boxes")
def main(argv: Sequence[str] | None = None) -> int:
    from vision.detect.detector import DEFAULT_WEIGHTS

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, nargs="+", help="folders holding scenes.jsonl with boxes")
    parser.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS)
    parser.add_argument("--classifier", type=Path, help="tile classifier weights (default: the shipped one)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many scenes per folder")
    parser.add_argument(
        "--truth",
        choices=("face", "outline"),
        default="face",
        help="the true box of a face-up tile: its visible face (as labelled) or all of it that shows",
    )
    parser.add_argument("--per-scene", action="store_true", help="a line per scene as well")
    parser.add_argument(
        "--worst", type=int, default=0, help="with --per-scene: this many of the player's worst-fitted tiles"
    )
    args = parser.parse_args(argv)
    from vision.factory.torch_models import reader

    detector = reader(args.weights, classifier=args.classifier)
    for folder in args.data:
        measure(folder, detector, args.limit, args.per_scene, args.worst, args.truth)
    return 0


def measure(
    folder: Path,
    detector: object,
    limit: int = 0,
    per_scene: bool = False,
    worst: int = 0,
    truth_box: str = "face",
) -> dict[str, dict[str, Tally]]:
    """Print (and return) the tallies of ``folder``'s scenes: by style, then "hand" and "all"; each true
    tile boxed by ``truth_box`` ("face": its label's box; "outline": all of the tile that shows)."""
    from vision.detections import BACK
    from vision.pipeline import detect_tiles

    rows = scene_images(folder, images=detector is not None)
    if limit:
        rows = rows[:limit]
    seconds: dict[str, list[float]] = defaultdict(list)
    tallies: dict[str, dict[str, Tally]] = defaultdict(lambda: {"hand": Tally([], []), "all": Tally([], [])})
    key = "outline" if truth_box == "outline" else "box"
    for row in rows:
        labelled = row["boxes"]
        if any(key not in b for b in labelled):
            raise SystemExit(f"{folder}: its scenes hold no {key!r} boxes: render them again")
        truth = np.array([b[key] for b in labelled], np.float64).reshape(-1, 4)
        hand = np.array([b["role"] == "hand" for b in labelled], bool)
        direction = row_direction(truth[hand & ~np.array([b["win"] for b in labelled], bool)])
        started = time.perf_counter()
        _, found = detect_tiles((folder / row["image"]).read_bytes(), detector)  # type: ignore[arg-type]
        seconds[_style(row)].append(time.perf_counter() - started)
        fit = best_boxes(truth, found.boxes, direction)
        exact = Counter(b["cls"] for b in labelled if b["cls"] < BACK) == Counter(
            int(c) for c in found.class_ids if c < BACK
        )
        player = np.array([b["role"] in ("hand", "meld") for b in labelled], bool)
        suited = np.array([b["cls"] < BACK for b in labelled], bool)
        found_suited = found.class_ids < BACK
        player_truth = Counter(b["cls"] for b, p in zip(labelled, player & suited, strict=True) if p)
        player_found = player_classes(truth, player, found.boxes[found_suited], found.class_ids[found_suited])
        player_exact = player_truth == player_found
        tally = tallies[_style(row)]
        tally["all"].fits.append(fit)
        tally["hand"].fits.append(BoxFit(fit.iou[hand], fit.shift[hand], fit.width_ratio[hand]))
        for part in tally.values():
            part.exact.append(exact)
            part.player_exact.append(player_exact)
        if per_scene:
            print(
                f"  {row['image']}: hand {Tally([tally['hand'].fits[-1]], []).line()}  exact {exact} "
                f"player {player_exact}  boxes {len(found.boxes)}/{len(labelled)}"
            )
            if not player_exact:
                missing, extra = player_truth - player_found, player_found - player_truth
                print(f"    player's tiles missed {_names(missing)}, extra {_names(extra)}")
            for i in np.argsort(np.where(player, fit.iou, np.inf), kind="stable")[: min(worst, player.sum())]:
                b = labelled[i]
                print(
                    f"    {b['role']:4s} {b['tile']}{' win' if b['win'] else ''}  IoU {fit.iou[i]:.2f}  "
                    f"shift {fit.shift[i]:+.2f} W  width x{fit.width_ratio[i]:.2f}  true {b['box']}"
                )
    for style, parts in sorted(tallies.items()):
        scenes = len(parts["all"].exact)
        print(
            f"{folder} [{style}]: {scenes} scenes, suited multiset exact: whole scene "
            f"{np.mean(parts['all'].exact):.3f}, the player's tiles {np.mean(parts['all'].player_exact):.3f}"
        )
        times = np.array(seconds[style]) * 1000
        print(
            f"  JPEG bytes -> boxes: median {np.median(times):.0f} ms, p90 {np.percentile(times, 90):.0f} ms"
        )
        print(f"  hand row  {parts['hand'].line()}")
        print(f"  all tiles {parts['all'].line()}")
    return dict(tallies)


if __name__ == "__main__":
    sys.exit(main())
