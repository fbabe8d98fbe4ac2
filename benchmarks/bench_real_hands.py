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
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    from datasets.yolo import read_yolo
    from vision.detections import BACK
    from vision.detector import DEFAULT_WEIGHTS, Detector
    from vision.grouping.result import GroupRole
    from vision.pipeline import recognize

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
    detector = Detector(args.weights, classifier=args.classifier)
    photos = exact = 0
    wrong: Counter[str] = Counter()
    by_win: dict[bool, list[bool]] = {True: [], False: []}
    for item in read_yolo(args.data):
        if item.split != args.split or (args.group and item.meta.get("source_group", "") != args.group):
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
    if not photos:
        print(f"no photos of split {args.split!r} and group {args.group!r} in {args.data}", file=sys.stderr)
        return 2
    print(f"{photos} photos ({args.split}, {args.group or 'all groups'}) from {args.data}")
    print(f"player's suited tiles exactly right: {exact / photos:.3f} ({exact} of {photos})")
    print("wrong: " + (", ".join(f"{kind} {n}" for kind, n in wrong.most_common()) or "none"))
    for win, label in ((True, "labelled tiles a winning hand"), (False, "the other photos")):
        if by_win[win]:
            print(f"  {label}: {sum(by_win[win])} of {len(by_win[win])} exactly right")
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
