"""Photo -> score, measured on synthetic scenes with known truth (``smj dataset synth`` output).

    python benchmarks/bench_pipeline.py DIR [DIR ...] [--weights W] [--classifier C] [--limit N]
        [--truth-detections] [--set-photo LAYOUT.jpg]

For every scene of ``DIR/scenes.jsonl`` whose true hand is a win: reads the JPEG bytes, detects, groups
and scores, then compares with the truth. Prints, per folder, the full-hand exact rate (concealed
tiles, melds with their types, and the winning tile where the photo shows it: set apart; a photo with
no tile apart cannot show which tile won, so there any reading of it counts), the score-match rate,
both per meld count, the rate of photos whose suited tiles (all of them, as a multiset) were all read
right, how many honour tiles were read as suited ones, the exact rate of the photos the pipeline warns
are blurred (``blurred_photo``) and of the rest, the exact rate by the scenes' true blur in tile widths
(where ``scenes.jsonl`` records it), the median end-to-end latency with the photo size, and the groupings the
search for a winning reading spent per photo (mean and most).
``--truth-detections`` feeds the labelled boxes to the grouper instead of the detector, which measures
the grouper alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from vision.detect.detector import Detector
    from vision.detect.tileset import TileSet


def _same_hand(found: object, truth: object, row: dict) -> bool:
    """Same tiles and melds as far as the photo shows them: the winning tile only where it is set apart,
    and a concealed kong laid all face up (no back shown) as a kong like any other."""
    from scoring.hand import MeldKind
    from vision.detections import BACK

    groups: dict[int, list[int]] = defaultdict(list)
    for box in row["boxes"]:
        if box["role"] == "meld":
            groups[box["group"]].append(box["cls"])
    faces_up = {classes[0] for classes in groups.values() if BACK not in classes}  # no back shown
    shown_as_kong = (MeldKind.KONG_EXPOSED, MeldKind.KONG_ADDED)

    def key(hand: object, is_truth: bool) -> tuple:
        melds = sorted(
            (
                "kong"
                if m.kind in shown_as_kong
                or (is_truth and m.kind is MeldKind.KONG_CONCEALED and m.tile in faces_up)
                else m.kind.value,
                m.tile,
            )
            for m in hand.melds  # type: ignore[attr-defined]
        )
        concealed = tuple(sorted(hand.concealed))  # type: ignore[attr-defined]
        win = hand.win_tile if row.get("win_apart") else None  # type: ignore[attr-defined]
        return concealed, tuple(melds), win

    return key(found, False) == key(truth, True)


@dataclass(frozen=True)
class Share:
    """Scenes counted in one part of a split and how many of them came out right."""

    scenes: int
    right: int

    @property
    def rate(self) -> float:
        return self.right / self.scenes


@dataclass(frozen=True)
class MeldRow:
    """The winning scenes of one meld count: how many, how many read exactly, how many scored as the truth."""

    melds: int
    scenes: int
    exact: int
    scored: int


@dataclass(frozen=True)
class Failure:
    """A scene not read exactly: its image, why (``unread``, ``tile count``, ``misread`` or ``grouping``),
    its true hand and the hand read (as JSON; None when no hand was read)."""

    image: str
    kind: str
    truth: dict[str, Any]
    read: dict[str, Any] | None
    warnings: tuple[str, ...] = ()  # the codes of the warnings the reading came with


@dataclass(frozen=True)
class PipelineTally:
    """What one folder's winning scenes measured. The splits by the warning, by the true blur, the suited
    tiles, the latencies and the groupings are empty (None, {} or ()) with the labelled boxes for input."""

    folder: Path
    size: tuple[int, int]  # width, height of the first scene
    melds: tuple[MeldRow, ...]  # by meld count, fewest first
    apart: Share | None  # the scenes whose winning tile is set apart, exact; None: there are none
    failures: tuple[Failure, ...]  # in the scenes' order
    suited: Share | None  # photos whose suited tiles (all of them, as a multiset) were all read right
    honours_as_suited: int  # honour tiles read as suited ones, over all photos
    by_warning: dict[bool, Share]  # blurred_photo warned -> exact
    by_blur: dict[int, Share]  # the scene's true blur band (``_blur_band``) -> exact
    latencies: tuple[float, ...]  # seconds, JPEG bytes -> score, per photo
    groupings: tuple[int, ...]  # the reading search's groupings per photo, every look

    @property
    def scenes(self) -> int:
        return sum(row.scenes for row in self.melds)

    @property
    def exact_rate(self) -> float:
        return sum(row.exact for row in self.melds) / self.scenes

    @property
    def score_rate(self) -> float:
        return sum(row.scored for row in self.melds) / self.scenes

    @property
    def failure_kinds(self) -> Counter[str]:
        return Counter(failure.kind for failure in self.failures)

    @property
    def latency_median(self) -> float:
        return statistics.median(self.latencies)

    @property
    def latency_p90(self) -> float:
        return sorted(self.latencies)[int(0.9 * (len(self.latencies) - 1))]


def main(argv: Sequence[str] | None = None) -> int:
    from vision.detect.detector import DEFAULT_WEIGHTS

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, nargs="+")
    parser.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS)
    parser.add_argument("--classifier", type=Path, help="tile classifier weights (default: the shipped one)")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--truth-detections", action="store_true")
    parser.add_argument("--failures", action="store_true", help="a line for each scene not read exactly")
    parser.add_argument(
        "--set-photo",
        type=Path,
        help="read every photo with the set taught from this photo of its layout (smj set add)",
    )
    args = parser.parse_args(argv)
    from vision.factory.torch_models import reader

    detector = None if args.truth_detections else reader(args.weights, classifier=args.classifier)
    tile_set = None
    if args.set_photo is not None and detector is not None:
        from vision.pipeline import teach_set

        tile_set = teach_set(args.set_photo, detector, args.set_photo.stem).tile_set
        print(f"read with the set taught from {args.set_photo}")
    for folder in args.data:
        try:
            tally = measure(folder, detector, args.limit, tile_set)
        except ValueError as error:
            print(f"bench_pipeline: {error}", file=sys.stderr)
            return 2
        _print(tally, "labelled boxes" if detector is None else args.weights.name, args.failures)
    return 0


def measure(
    folder: Path, detector: Detector | None, limit: int = 0, tile_set: TileSet | None = None
) -> PipelineTally:
    """Read, group and score every winning scene of ``folder/scenes.jsonl`` (the first ``limit``; 0: all)
    from its JPEG bytes with ``detector``, or from its labelled boxes when ``detector`` is None, and
    compare with the truth (the faces read with ``tile_set`` when given). Raises ``ValueError`` when the
    folder has no winning scene."""
    from datasets.scenes import scene_images
    from scoring import WinContext, score
    from scoring.hand import Hand
    from scoring.presets import CHENGDU
    from vision.detections import Detections
    from vision.grouping.grouper import group_detections
    from vision.grouping.result import WarningCode
    from vision.pipeline import score_photo

    rows = [r for r in scene_images(folder, images=detector is not None) if r.get("winning", True)]
    if limit:
        rows = rows[:limit]
    if not rows:
        raise ValueError(f"no winning scenes in {folder}")
    context = WinContext()
    suited_exact: list[bool] = []
    honours_as_suited = 0
    exact: dict[int, list[bool]] = defaultdict(list)
    exact_apart: list[bool] = []  # the winning tile set apart: the only photos that show which it is
    scored: dict[int, list[bool]] = defaultdict(list)
    times: list[float] = []
    groupings: list[int] = []  # the reading search's groupings per photo, every look
    failures: list[Failure] = []
    by_warning: dict[bool, list[bool]] = defaultdict(list)  # blurred_photo warned -> exact
    by_blur: dict[int, list[bool]] = defaultdict(list)  # the scene's true blur band -> exact
    for row in rows:
        truth = Hand.from_json(row["hand"])
        truth_score = score(truth, context)
        melds = len(row["hand"]["melds"])
        if detector is None:
            boxes = row["boxes"]
            detections = Detections(
                np.array([b["box"] for b in boxes], np.float32).reshape(-1, 4),
                np.array([b["cls"] for b in boxes], np.int64),
                np.ones(len(boxes), np.float32),
                (row["width"], row["height"]),
            )
            hand = group_detections(detections).hand
            found_score = score(hand, context) if hand is not None else None
        else:
            data = (folder / row["image"]).read_bytes()
            start = time.perf_counter()
            result = score_photo(data, detector, context, CHENGDU, tile_set=tile_set)
            times.append(time.perf_counter() - start)
            groupings.append(result.groupings)
            hand, found_score = result.hand, result.score
            truth_tiles = Counter(b["cls"] for b in row["boxes"] if b["cls"] < 27)
            found_tiles = Counter(int(c) for c in result.detections.class_ids if c < 27)
            suited_exact.append(truth_tiles == found_tiles)
            honours_as_suited += _honours_read_as_suited(result.detections, row)
        right = hand is not None and _same_hand(hand, truth, row)
        exact[melds].append(right)
        if detector is not None:
            by_warning[WarningCode.BLURRED_PHOTO in result.grouping.codes].append(right)
            if "photo" in row and row.get("tile_px"):
                by_blur[_blur_band(row["photo"]["blur_px"] / row["tile_px"])].append(right)
        if not right:
            read = hand.to_json() if hand is not None else None
            codes = () if detector is None else tuple(code.value for code in result.grouping.codes)
            failures.append(Failure(row["image"], _failure(hand, truth), row["hand"], read, codes))
        if row.get("win_apart"):
            exact_apart.append(right)
        scored[melds].append(
            found_score is not None
            and found_score.valid == truth_score.valid
            and found_score.total_fan == truth_score.total_fan
        )
    return PipelineTally(
        folder,
        (rows[0]["width"], rows[0]["height"]),
        tuple(MeldRow(n, len(exact[n]), sum(exact[n]), sum(scored[n])) for n in sorted(exact)),
        _share(exact_apart) if exact_apart else None,
        tuple(failures),
        _share(suited_exact) if suited_exact else None,
        honours_as_suited,
        {warned: _share(values) for warned, values in by_warning.items()},
        {band: _share(values) for band, values in by_blur.items()},
        tuple(times),
        tuple(groupings),
    )


def _share(right: Sequence[bool]) -> Share:
    return Share(len(right), sum(right))


def _failure(found: object, truth: object) -> str:
    """Why a hand came out wrong: ``unread`` (no hand), ``tile count`` (a tile missed or one too many),
    ``misread`` (as many tiles, other ones) or ``grouping`` (the same tiles, other melds or winning tile)."""
    if found is None:
        return "unread"
    found_tiles: Counter[int] = Counter(found.all_tiles)  # type: ignore[attr-defined]
    truth_tiles: Counter[int] = Counter(truth.all_tiles)  # type: ignore[attr-defined]
    if found_tiles.total() != truth_tiles.total():
        return "tile count"
    return "misread" if found_tiles != truth_tiles else "grouping"


BLUR_BANDS = (0.02, 0.045)  # the scenes' blur (a Gaussian sigma) in tile widths: sharp, soft, blurred


def _blur_band(blur: float) -> int:
    """0, 1 or 2: which of the bands ``BLUR_BANDS`` bound the blur falls in."""
    return sum(blur >= bound for bound in BLUR_BANDS)


def _band_name(band: int) -> str:
    low, high = BLUR_BANDS
    return (f"<{low:.1%}", f"{low:.1%}-{high:.1%}", f">={high:.1%}")[band]


def _honours_read_as_suited(detections: object, row: dict) -> int:
    """Suited tiles found lying mostly on an honour tile (as ``smj eval`` counts them)."""
    from vision.detections import BACK, HONOUR
    from vision.factory.evaluate import on_honours

    honours = np.array([b["box"] for b in row["boxes"] if b["cls"] == HONOUR], np.float32).reshape(-1, 4)
    labelled = np.array([b["box"] for b in row["boxes"] if b["cls"] < BACK], np.float32).reshape(-1, 4)
    suited = detections.boxes[detections.class_ids < BACK]  # type: ignore[attr-defined]
    return int(on_honours(suited, honours, labelled).sum())


def _print(tally: PipelineTally, source: str, failures: bool) -> None:
    if failures:
        for failure in tally.failures:
            print(f"  {failure.image}: {failure.kind}: true {failure.truth}, read {failure.read}")
    width, height = tally.size
    print(f"{tally.scenes} winning scenes from {tally.folder} ({width}x{height}) ({source})")
    print(f"full hand exact: {tally.exact_rate:.3f}   score matches: {tally.score_rate:.3f}")
    if tally.apart is not None:
        print(
            f"full hand exact where the winning tile is set apart: {tally.apart.rate:.3f} "
            f"({tally.apart.scenes} scenes)"
        )
    kinds = tally.failure_kinds.most_common()
    print("failures: " + (", ".join(f"{kind} {n}" for kind, n in kinds) or "none"))
    misread = [failure for failure in tally.failures if failure.kind == "misread"]
    if misread:
        warned = sum("close_faces" in failure.warnings for failure in misread)
        silent = sum(not failure.warnings for failure in misread)
        print(f"misread hands warned close_faces: {warned} of {len(misread)}; with no warning: {silent}")
    for row in tally.melds:
        print(
            f"  {row.melds} melds: {row.scenes:4d} scenes, exact {row.exact / row.scenes:.3f}, "
            f"score {row.scored / row.scenes:.3f}"
        )
    if tally.suited is not None:
        print(
            f"suited tiles all right: {tally.suited.rate:.3f}   "
            f"honour tiles read as suited: {tally.honours_as_suited}"
        )
    if tally.by_warning:
        print(
            "blurred_photo warned: "
            + ", ".join(
                f"{'yes' if warned else 'no'} {share.scenes} scenes exact {share.rate:.3f}"
                for warned, share in sorted(tally.by_warning.items(), reverse=True)
            )
        )
    if tally.by_blur:
        print(
            "by true blur (sigma in tile widths): "
            + ", ".join(
                f"{_band_name(band)} {share.scenes} scenes exact {share.rate:.3f}"
                for band, share in sorted(tally.by_blur.items())
            )
        )
    if tally.latencies:
        print(
            f"latency JPEG bytes -> score: median {1000 * tally.latency_median:.1f} ms, "
            f"p90 {1000 * tally.latency_p90:.1f} ms"
        )
        print(f"groupings per photo: mean {np.mean(tally.groupings):.2f}, max {max(tally.groupings)}")


if __name__ == "__main__":
    sys.exit(main())
