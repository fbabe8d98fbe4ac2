"""Photo to hand on real labelled photos of a hand: are the player's tiles the ones the pipeline reads?

    python benchmarks/bench_real_hands.py DIR [--split val] [--group hand_series] [--classifier C]

``smj eval`` counts every tile found in a photo, but the real photos of a player's hand (the
``hand_series`` group of the shared set) label only the hand, while the discards around it are found
and count as errors. This runs what ``smj score PHOTO`` runs (detect, group, re-read, mend the count)
and compares the suited tiles it places in the hand and its melds (strays left out) with the labelled
suited tiles. The photos are not all winning hands (some show 10-13 tiles, some honour tiles, which are
left out of both sides), so this measures reading, not scoring; the photos whose labelled tiles make a
winning hand (14 tiles that score as a win), the product's case, are counted apart: on the others the
pipeline's re-reading and count mending, which assume a win, can only err.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vision.detect.detector import Detector


@dataclass(frozen=True)
class Share:
    """Photos counted in one part and how many of them were read exactly right."""

    photos: int
    right: int


@dataclass(frozen=True)
class RealHandsTally:
    """The photos of one split and group: how many, how many had the player's suited tiles exactly right,
    why the others were wrong (``misread``, ``tile missed``, ``tile too many``: the most frequent first),
    and the photos whose labelled tiles make a winning hand apart from the others."""

    photos: int
    exact: int
    wrong: dict[str, int]
    winning: Share
    others: Share

    @property
    def exact_rate(self) -> float:
        return self.exact / self.photos


def measure(
    data: Path, detector: Detector, split: str = "val", source_group: str = "hand_series"
) -> RealHandsTally:
    """Run ``smj score``'s reading on each photo of ``split`` in ``data`` of the group ``source_group``
    ('': every group) and compare the suited tiles it places in the hand and melds with the labelled ones."""
    from datasets.yolo import read_yolo
    from vision.detections import BACK
    from vision.grouping.result import GroupRole
    from vision.pipeline import recognize

    photos = exact = 0
    wrong: Counter[str] = Counter()
    by_win: dict[bool, list[bool]] = {True: [], False: []}
    for item in read_yolo(data):
        if item.split != split or (source_group and item.meta.get("source_group", "") != source_group):
            continue
        truth = Counter(b.class_id for b in item.boxes if b.class_id < BACK)
        read = recognize(item.image, detector)
        detections, grouping = read.detections, read.grouping
        placed = Counter(
            int(detections.class_ids[i])
            for group in grouping.groups
            if group.role is not GroupRole.IGNORED
            for i in group.indices
            if detections.class_ids[i] < BACK
        )
        photos += 1
        exact += placed == truth
        by_win[_is_a_win(truth)].append(placed == truth)
        missed, extra = sum((truth - placed).values()), sum((placed - truth).values())
        if placed != truth:
            kind = "misread" if missed == extra else "tile missed" if missed > extra else "tile too many"
            wrong[kind] += 1
    return RealHandsTally(
        photos,
        exact,
        dict(wrong.most_common()),
        Share(len(by_win[True]), sum(by_win[True])),
        Share(len(by_win[False]), sum(by_win[False])),
    )


def main(argv: Sequence[str] | None = None) -> int:
    from vision.detect.detector import DEFAULT_WEIGHTS

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "data", type=Path, help="a dataset folder in this project's layout (smj dataset import)"
    )
    parser.add_argument("--split", default="val")
    parser.add_argument("--group", default="hand_series", help="source group ('' for every photo)")
    parser.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS)
    parser.add_argument("--classifier", type=Path, help="tile classifier weights (default: the shipped one)")
    args = parser.parse_args(argv)
    from vision.factory.torch_models import reader

    detector = reader(args.weights, classifier=args.classifier)
    tally = measure(args.data, detector, args.split, args.group)
    if not tally.photos:
        print(f"no photos of split {args.split!r} and group {args.group!r} in {args.data}", file=sys.stderr)
        return 2
    print(f"{tally.photos} photos ({args.split}, {args.group or 'all groups'}) from {args.data}")
    print(f"player's suited tiles exactly right: {tally.exact_rate:.3f} ({tally.exact} of {tally.photos})")
    print("wrong: " + (", ".join(f"{kind} {n}" for kind, n in tally.wrong.items()) or "none"))
    for share, label in (
        (tally.winning, "labelled tiles a winning hand"),
        (tally.others, "the other photos"),
    ):
        if share.photos:
            print(f"  {label}: {share.right} of {share.photos} exactly right")
    return 0


def _is_a_win(tiles: Counter[int]) -> bool:
    """Whether the tiles, all concealed (14), make a winning hand (a photo of a hand with a kong, 15 or more
    tiles, is not counted as one: its labels do not say which four are the kong)."""
    from scoring import is_win
    from scoring.hand import Hand, concealed_count

    concealed = tuple(sorted(tiles.elements()))
    return len(concealed) == concealed_count(0) and is_win(Hand(concealed, (), concealed[-1]))


if __name__ == "__main__":
    sys.exit(main())
