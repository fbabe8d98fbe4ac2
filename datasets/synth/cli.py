"""``smj dataset synth``: render a synthetic training set of photo-like winning hands with exact labels.

``register_synth(subparsers)`` adds the command to the ``smj dataset`` group; ``main(argv)`` runs it on
its own (``python -m datasets.synth ...``). Only light modules are imported until the command runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence


def register_synth(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "synth",
        help="render synthetic photos of winning hands with exact YOLO labels",
        description=(
            "Render N photo-like scenes of a Sichuan mahjong winning hand (hand row, melds, discards, other "
            "players' tiles, honour tiles, props) with exact labels: images/*.jpg, labels/*.txt (YOLO), "
            "data.yaml (the 29 detector classes) and scenes.jsonl (the true hand of every scene). The same "
            "seed always gives the same labels and scenes.jsonl, whatever --workers."
        ),
    )
    add_synth_arguments(parser)
    parser.set_defaults(func=run_synth)
    return parser


def add_synth_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    parser.add_argument(
        "--n", type=_positive_int, default=100, metavar="N", help="number of scenes (default 100)"
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    parser.add_argument(
        "--art",
        action="extend",
        nargs="+",
        default=[],
        metavar="DIR",
        help="tile artwork folder(s): faces m1..s9 as .svg/.png, Unicode mahjong fonts or a sprite SVG "
        "(a parent folder of several works too); without it faces are procedural only",
    )
    parser.add_argument(
        "--art-p",
        type=_probability,
        default=0.5,
        metavar="P",
        help="share of scenes drawn with --art faces instead of procedural ones (default 0.5)",
    )
    parser.add_argument(
        "--append",
        action="store_true",
        help="add the scenes to a folder that already holds some (with another seed); without it such "
        "a folder is refused: its scenes.jsonl holds the earlier scenes' true hands",
    )
    parser.add_argument(
        "--held-out-art",
        action="store_true",
        help="draw --art faces from the held-out sets alone (datasets.synth.art.HELD_OUT), for measuring "
        "a set no model trained on; without it those sets are never drawn. Never train on such scenes",
    )
    parser.add_argument(
        "--size", type=parse_size, default=(1280, 960), metavar="WxH", help="image size (default 1280x960)"
    )
    parser.add_argument(
        "--honours",
        type=_probability,
        default=0.3,
        metavar="P",
        help="share of scenes with honour tiles (winds, dragons, flowers) labelled 'honour' (default 0.3)",
    )
    parser.add_argument(
        "--win-apart",
        type=_probability,
        default=0.4,
        metavar="P",
        help="share of winning hands whose winning tile stands a little apart at the right of the row, as a "
        "player sets it before a photo (default 0.4; 1 for the videos of a hand held to the camera)",
    )
    parser.add_argument(
        "--fill",
        type=_fill_range,
        default=(0.55, 0.98),
        metavar="LO-HI",
        help="how much of the frame the player's tiles span, drawn from LO..HI (default 0.55-0.98; "
        "0.25-0.4 for phone photos where the hand is small in a large frame)",
    )
    parser.add_argument(
        "--exif-orientation",
        type=int,
        choices=(1, 6),
        default=1,
        help="6: store each JPEG turned a quarter with the EXIF tag that turns it upright, as phones do",
    )
    parser.add_argument(
        "--packed",
        action="store_true",
        help="the player's hand stands in a packed row, its tiles touching edge to edge (the winning "
        "tile may still stand apart), as players push a standing hand together",
    )
    parser.add_argument(
        "--style",
        type=int,
        choices=range(64),
        metavar="N",
        help="draw every scene's faces in procedural style N (0-63) instead of a random look: one set "
        "throughout, as at a real table (with --calibration: the photo that teaches it)",
    )
    parser.add_argument(
        "--set-seed",
        type=int,
        metavar="N",
        help="every scene shows one set, as a player uses one set all evening: its size, body, back, inks "
        "and red fives drawn once from seed N (with --style, --flower-four, --art as given); the same N "
        "with --calibration renders the photo that teaches that set. Without it each scene draws its own",
    )
    parser.add_argument(
        "--flower-four",
        action="store_true",
        help="print every 4 筒 with a red flower between its pips, as some sets do: the shipped classifier "
        "reads it as a 5 筒 in every copy (for measuring what a taught set reads; never train on it)",
    )
    parser.add_argument(
        "--calibration",
        action="store_true",
        help="photos of the layout a set is taught from (smj set add) instead of hands: the 27 suited tiles "
        "face up in three rows of nine (万, 筒, 条 from the top, 1 to 9 left to right), some with a back "
        "in a fourth row, some taken from across the table; scenes.jsonl's hand is null",
    )
    parser.add_argument(
        "--kind",
        choices=("hand", "loose", "closeup", "empty", "shelf"),
        default="hand",
        help="what the photos hold: hand (default) a hand and the table around it; loose: as hand, with "
        "tiles lying loose around it at any angle (a red-five set's fives among them, piles, tiles on a long "
        "edge, left unlabelled as don't-care) and keyboards, dominoes, printed pages; closeup: 3 to 12 loose "
        "tiles photographed close, each a tenth to a quarter of the photo's width; empty: keyboards, "
        "dominoes, dice, cards and printed pages with no tile at all (negatives); shelf: rows of books "
        "standing spines out behind a keyboard, seen from near the table's height, no tile either",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="K",
        help="processes rendering in parallel (default 1; 0 = one per CPU core)",
    )
    parser.add_argument(
        "--no-boxes", action="store_true", help="leave the per-tile boxes out of scenes.jsonl"
    )
    parser.add_argument(
        "--label-boxes",
        choices=("face", "outline"),
        default="face",
        help="what a face-up tile's label boxes: face (default) its visible face, as the real photos are "
        "labelled; outline all of the tile that shows, its top too, as the shipped localiser draws tiles "
        "(its synthetic training windows); scenes.jsonl holds both",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def parse_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().replace("×", "x").split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1280x960, got {text!r}") from None
    if not (64 <= width <= 8192 and 64 <= height <= 8192):
        raise argparse.ArgumentTypeError(f"size must be 64..8192 pixels each way, got {text!r}")
    return width, height


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _fill_range(text: str) -> tuple[float, float]:
    low, sep, high = text.partition("-")
    try:
        bounds = (float(low), float(high if sep else low))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO-HI such as 0.25-0.4, got {text!r}") from None
    if not 0.05 <= bounds[0] <= bounds[1] <= 1.0:
        raise argparse.ArgumentTypeError(f"expected 0.05 <= LO <= HI <= 1, got {text!r}")
    return bounds


def _probability(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text!r}")
    return value


def run_synth(args: argparse.Namespace) -> int:
    from datasets.labels import DatasetError
    from datasets.synth.art import ArtError, discover
    from datasets.synth.scene import SceneOptions
    from datasets.synth.writer import write_dataset

    try:
        sources = discover(args.art, held_out=args.held_out_art) if args.art else ()
    except ArtError as error:
        print(f"smj dataset synth: {error}", file=sys.stderr)
        return 2
    workers = args.workers if args.workers > 0 else (os.cpu_count() or 1)
    options = SceneOptions(
        size=args.size,
        honour_p=args.honours,
        win_apart_p=args.win_apart,
        art_p=args.art_p if sources else 0.0,
        fill=args.fill,
        exif_orientation=args.exif_orientation,
        packed=args.packed,
        hand_pose="stand" if args.packed else None,
        calibration=args.calibration,
        style=args.style,
        flower_four=args.flower_four,
        set_seed=args.set_seed,
        kind=args.kind,
    )
    try:
        summary = write_dataset(
            args.out,
            args.n,
            args.seed,
            sources,
            options,
            workers,
            progress=not args.quiet,
            with_boxes=not args.no_boxes,
            append=args.append,
            label_boxes=args.label_boxes,
        )
    except DatasetError as error:
        print(f"smj dataset synth: {error}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(
            f"wrote {summary.scenes} scenes to {summary.out} in {summary.seconds:.1f} s "
            f"({summary.per_second:.1f} scenes/s with {summary.workers} worker(s))",
            file=sys.stderr,
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m datasets.synth", description=register_synth.__doc__)
    add_synth_arguments(parser)
    return run_synth(parser.parse_args(argv))
