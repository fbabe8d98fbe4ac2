"""``smj detect``, ``train``, ``card``, ``ship`` and the photo half of ``smj score`` (``smj eval``, which
reads labelled datasets, is ``datasets.cli``'s).

Top-level imports stay light: numpy, OpenCV and ultralytics load inside the command that needs them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

SetLoader = Callable[[Any], Any]  # the detector -> the vision.detect.tileset.TileSet to read with

CLASSIFIER_HELP = "tile classifier weights (.onnx); default models/tile_faces.onnx"


def confidence(text: str) -> float:
    """An argparse type: a confidence threshold, above 0 and at most 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a confidence: give one above 0 and at most 1")
    return value


def register(commands: argparse._SubParsersAction) -> None:
    _register_detect(commands)
    _register_train(commands)
    _register_card(commands)
    _register_ship(commands)


def _register_detect(commands: argparse._SubParsersAction) -> None:
    """``smj detect``."""
    detect = commands.add_parser("detect", help="find the tiles in photos with the shipped detector")
    detect.add_argument("images", nargs="+", metavar="IMAGE")
    detect.add_argument("--conf", type=confidence, default=None, help="confidence threshold (default 0.55)")
    detect.add_argument("--weights", help="weights (.onnx); default models/tiles.onnx")
    detect.add_argument("--classifier", help=CLASSIFIER_HELP)
    detect.add_argument("--annotate", metavar="DIR", help="write each image with its boxes drawn into DIR")
    detect.add_argument("--json", action="store_true", help="print a JSON array, one object per image")
    detect.set_defaults(func=run_detect)


def _register_train(commands: argparse._SubParsersAction) -> None:
    """``smj train``."""
    train = commands.add_parser(
        "train",
        help="train the tile localiser or the tile classifier (ultralytics, CPU or GPU)",
        description="--task detect (default) trains the localiser on dataset folders of this project's "
        "layout; --task classify trains the tile classifier on a folder made by 'smj dataset crops'.",
    )
    train.add_argument("--task", choices=("detect", "classify"), default="detect")
    train.add_argument(
        "--backbone",
        default="efficientnet-lite0",
        help="classify: efficientnet-lite0 (default), -lite1 or -lite2, fine-tuned from their ImageNet "
        "weights (vision/factory/face_net.py), or yolo26n-cls (ultralytics, from scratch or --model)",
    )
    train.add_argument(
        "--data",
        required=True,
        help="detect: dataset folders in this project's layout, comma-separated; classify: a crops folder",
    )
    train.add_argument("--val", default="", help="datasets used only for validation, comma-separated")
    train.add_argument("--out", required=True, help="run folder (checkpoints every epoch in OUT/weights)")
    train.add_argument("--resume", action="store_true", help="resume the interrupted run in OUT")
    train.add_argument(
        "--quiet",
        action="store_true",
        help="the classifier's run: no progress bar (none is drawn off a terminal)",
    )
    train.add_argument("--epochs", type=int, default=None)
    train.add_argument("--imgsz", type=int, default=None)
    train.add_argument("--batch", type=int, default=None)
    train.add_argument(
        "--model", help="a config such as yolo26n.yaml (from scratch) or our own .pt (fine-tune)"
    )
    train.add_argument("--lr0", type=float, default=None)
    train.add_argument(
        "--optimizer", default=None, help="classify with a pretrained backbone: AdamW (default) or SGD"
    )
    train.add_argument(
        "--light",
        action="store_true",
        help="to finish a fine-tune: classify without RandAugment or erasing, detect without mosaic",
    )
    train.add_argument("--device", default=None, help="cpu (default) or a CUDA device such as 0")
    train.add_argument(
        "--hours",
        dest="time",
        metavar="H",
        type=float,
        default=None,
        help="detect: train this long (overrides --epochs: the epochs and the schedule are fitted to it)",
    )
    train.add_argument(
        "--close-mosaic", type=int, default=None, metavar="N", help="detect: the last N epochs without mosaic"
    )
    train.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="data-loading processes (default 2; not for efficientnet)",
    )
    train.add_argument(
        "--cache", choices=("ram", "disk"), default=None, help="detect: keep the decoded windows"
    )
    train.add_argument(
        "--freeze",
        type=int,
        default=None,
        metavar="N",
        help="detect: the first N layers keep the weights they start from (YOLO26n's backbone: 11)",
    )
    train.add_argument(
        "--low-res",
        dest="low_res_p",
        metavar="P",
        type=float,
        default=None,
        help="classify (efficientnet): share of training crops first reduced to a small tile's size in a "
        "640x480 photo (18-36 px wide) and enlarged back, as the reader enlarges such a tile (default 0)",
    )
    train.add_argument(
        "--distill",
        metavar="W",
        type=float,
        default=None,
        help="classify (efficientnet), with --model: weight of the start checkpoint's own reading of every "
        "tile crop beside the labels, so a fine-tune teaching 'none' keeps what it read of the tiles "
        "(default 0)",
    )
    train.set_defaults(func=run_train)


def _register_card(commands: argparse._SubParsersAction) -> None:
    """``smj card``."""
    card = commands.add_parser(
        "card", help="write the model card's measured table (models/README.md) from models/manifest.json"
    )
    card.add_argument("--check", action="store_true", help="only say whether the card is up to date (exit 1)")
    card.add_argument("--models", default=None, help="the models folder (default: the shipped models/)")
    card.set_defaults(func=run_card)


def _register_ship(commands: argparse._SubParsersAction) -> None:
    """``smj ship``."""
    ship = commands.add_parser("ship", help="copy trained weights into models/ with ONNX export and manifest")
    ship.add_argument(
        "weights",
        nargs="?",
        help="a trained localiser .pt (e.g. RUN/weights/best.pt); several, comma-separated, fine-tuned from "
        "the same weights, are averaged; leave it out to ship --classifier alone",
    )
    ship.add_argument("--imgsz", type=int, default=640, help="the localiser's input size")
    ship.add_argument(
        "--classifier",
        help="a trained tile classifier .pt, shipped as models/tile_faces.*; several, comma-separated, "
        "fine-tuned from the same weights, are averaged (a model soup)",
    )
    ship.add_argument(
        "--calibration",
        help="crop dataset (smj dataset crops) calibrating the classifier's INT8 ONNX; "
        "default: the crops it was trained on",
    )
    ship.add_argument(
        "--float",
        action="store_true",
        help="ship the classifier's ONNX in float32, not INT8 (the shipped one: it reads more tiles right "
        "on CPUs without VNNI, models/HISTORY.md)",
    )
    ship.set_defaults(func=run_ship)


def _fail(message: str) -> int:
    print(f"smj: {message}", file=sys.stderr)
    return 2


def load_detector(args: argparse.Namespace):  # -> vision.detect.detector.Detector
    from vision.detect.detector import DEFAULT_WEIGHTS, Detector

    classifier = getattr(args, "classifier", None)
    return Detector(
        Path(args.weights) if args.weights else DEFAULT_WEIGHTS,
        classifier=Path(classifier) if classifier else None,
    )


def run_detect(args: argparse.Namespace, tile_set_for: SetLoader | None = None) -> int:
    """``smj detect``; ``tile_set_for`` gives the set on the table (``--set``) for the detector."""
    from vision.annotate import draw_detections, save_rgb
    from vision.detect.detector import DEFAULT_CONF, ModelError
    from vision.images import ImageError
    from vision.pipeline import detect_tiles

    try:
        detector = load_detector(args)
        tile_set = tile_set_for(detector) if tile_set_for is not None else None
    except (ModelError, ValueError) as error:
        return _fail(str(error))
    conf = DEFAULT_CONF if args.conf is None else args.conf
    if args.annotate and Path(args.annotate).exists() and not Path(args.annotate).is_dir():
        return _fail(f"--annotate {args.annotate}: not a folder (annotated images are written into one)")
    results, status = [], 0
    written: set[str] = set()
    for image in args.images:
        try:
            photo, detections = detect_tiles(image, detector, conf=conf, tile_set=tile_set)
        except ImageError as error:
            print(f"smj detect: {error.message}", file=sys.stderr)
            status = 2
            continue
        width, height = photo.original_size
        results.append({"image": image, "width": width, "height": height, "detections": detections.to_json()})
        if args.annotate:
            out = Path(args.annotate) / f"{_unique_stem(Path(image).stem, written)}.jpg"
            try:
                save_rgb(draw_detections(photo.pixels, detections.scaled(1 / photo.scale)), out)
            except OSError as error:
                print(f"smj detect: {error}", file=sys.stderr)
                status = 2
        if not args.json:
            print(f"{image}: {width}x{height}, {len(detections)} tiles")
            for det in sorted(detections, key=lambda d: (d.box[1] // 50, d.box[0])):
                box = ", ".join(f"{v:.0f}" for v in det.box)
                print(f"  {det.name:6s} {det.confidence:.2f}  [{box}]")
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
    return status


def _unique_stem(stem: str, taken: set[str]) -> str:
    """``stem``, or ``stem_2``, ``stem_3``... when photos of one name from several folders are annotated."""
    name, count = stem, 1
    while name in taken:
        count += 1
        name = f"{stem}_{count}"
    taken.add(name)
    return name


def _given(args: argparse.Namespace, *keys: str) -> dict[str, Any]:
    """The recipe fields among ``keys`` the command line set."""
    return {key: getattr(args, key) for key in keys if getattr(args, key) is not None}


def run_train(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from vision.factory.train import ClassifierRecipe, Recipe, train, train_classifier

    overrides = _given(args, "epochs", "imgsz", "batch", "model", "lr0")
    loader = _given(args, "workers")  # the ultralytics models' data loaders
    detect_only = _given(args, "close_mosaic", "cache", "time", "freeze")  # --hours is the recipe's time
    if detect_only and args.task != "detect":
        return _fail("--hours, --close-mosaic, --cache and --freeze are for --task detect")
    if args.freeze is not None and args.freeze < 1:
        return _fail(f"--freeze {args.freeze}: give a number of layers above 0")
    if args.time is not None and args.time <= 0:
        return _fail(f"--hours {args.time}: give a time above 0")
    if args.light and args.close_mosaic is not None:
        return _fail("--light trains without mosaic throughout: --close-mosaic has nothing to do")
    if loader and args.task == "classify" and args.backbone != "yolo26n-cls":
        return _fail("--workers is for the localiser and the yolo26n-cls classifier")
    if args.low_res_p is not None and (args.task != "classify" or args.backbone == "yolo26n-cls"):
        return _fail(
            "--low-res is for the pretrained classifiers (--task classify, an efficientnet backbone)"
        )
    if args.low_res_p is not None and not 0 <= args.low_res_p <= 1:
        return _fail(f"--low-res {args.low_res_p}: give a share between 0 and 1")
    if args.distill is not None and (args.task != "classify" or args.backbone == "yolo26n-cls"):
        return _fail(
            "--distill is for the pretrained classifiers (--task classify, an efficientnet backbone)"
        )
    if args.distill is not None and (args.distill < 0 or (args.model is None and not args.resume)):
        return _fail(f"--distill {args.distill}: give a weight of 0 or more and the --model it keeps")

    try:
        if args.task == "classify" and args.backbone != "yolo26n-cls":
            return _train_face_net(args)
        if args.task == "classify":
            faces = replace(ClassifierRecipe(), **overrides, **loader)
            best = train_classifier(
                args.data,
                args.out,
                faces.light() if args.light else faces,
                resume=args.resume,
                device=args.device or "cpu",
            )
        else:
            localiser = replace(Recipe(), **overrides, **loader, **detect_only)
            best = train(
                args.data.split(","),
                args.out,
                localiser.light() if args.light else localiser,
                val_dirs=[d for d in args.val.split(",") if d],
                resume=args.resume,
                device=args.device or "cpu",
            )
    except (FileNotFoundError, ValueError) as error:
        return _fail(str(error))
    print(f"best weights: {best}")
    return 0


def _train_face_net(args: argparse.Namespace) -> int:
    """``smj train --task classify`` on a pretrained backbone (``vision.factory.face_net``)."""
    from dataclasses import replace

    from vision.factory.face_net import FaceNetError, FaceNetRecipe, train_face_net

    if args.light or args.val or args.device not in (None, "cpu"):
        return _fail("--light, --val and --device are for the ultralytics models (--backbone yolo26n-cls)")
    overrides = _given(args, "epochs", "imgsz", "batch", "lr0", "optimizer", "low_res_p", "distill")
    recipe = replace(FaceNetRecipe(backbone=args.backbone), **overrides)
    try:
        best = train_face_net(
            args.data, args.out, recipe, resume=args.resume, start=args.model, quiet=args.quiet
        )
    except (FaceNetError, FileNotFoundError) as error:
        return _fail(str(error))
    print(f"best weights: {best}")
    return 0


def run_card(args: argparse.Namespace) -> int:
    from vision.detect.detector import MODELS_DIR
    from vision.factory.card import CardError, write_card

    models = Path(args.models) if args.models else MODELS_DIR
    card, manifest = models / "README.md", models / "manifest.json"
    try:
        agrees = write_card(card, manifest, check=args.check)
    except (CardError, OSError, json.JSONDecodeError) as error:
        return _fail(f"{card}: {error}")
    if args.check and not agrees:
        print(f"{card} disagrees with {manifest}: run 'smj card'", file=sys.stderr)
        return 1
    print(f"{card}: {'up to date' if args.check else 'written'} from {manifest}")
    return 0


def run_ship(args: argparse.Namespace) -> int:
    import tempfile

    from vision.factory.ship import average_checkpoints, ship

    localisers = [Path(p) for p in args.weights.split(",") if p] if args.weights else []
    classifiers = [Path(p) for p in args.classifier.split(",") if p] if args.classifier else []
    if not localisers and not classifiers:
        return _fail("nothing to ship: give a localiser's weights, --classifier, or both")
    for path in localisers + classifiers:
        if not path.is_file():
            return _fail(f"{path}: no such weights file")
    with tempfile.TemporaryDirectory() as scratch:

        def one(sources: list[Path], name: str) -> Path | None:
            """Several checkpoints fine-tuned from one model ship as their average (a model soup)."""
            if len(sources) <= 1:
                return sources[0] if sources else None
            return average_checkpoints(sources, Path(scratch) / f"{name}.pt")

        try:
            weights, classifier = one(localisers, "localiser"), one(classifiers, "classifier")
            calibration = Path(args.calibration) if args.calibration else None
            manifest = ship(
                weights,
                imgsz=args.imgsz,
                classifier=classifier,
                calibration=calibration,
                quantize=not args.float,
            )
        except ValueError as error:
            return _fail(str(error))
    for sources, files in (
        (localisers, "models/tiles.pt, models/tiles.onnx"),
        (
            classifiers,
            f"models/tile_faces.pt, models/tile_faces.onnx ({'float32' if args.float else 'INT8'})",
        ),
    ):
        if sources:
            what = sources[0] if len(sources) == 1 else f"the average of {', '.join(map(str, sources))}"
            print(f"shipped {what} -> {files}")
    print(f"manifest {manifest}")
    return 0


def _caption(payload: dict[str, Any], size: str) -> list[str]:
    """The lines under an annotated photo (ASCII: OpenCV draws no Chinese): the hand, the score, the size."""
    hand = payload.get("hand")
    lines = []
    if hand:
        melds = " ".join(f"[{m['type']} {m['tile']}]" for m in hand["melds"])
        lines.append(f"hand: {hand['concealed']} {melds} win {hand['win_tile']}".replace("  ", " "))
    score = payload.get("score")
    if score and score.get("valid"):
        fans = ", ".join(f"{fan['name_en']} {fan['fan']:+d}" for fan in score["fans"])
        lines.append(f"{score['total_fan']} fan, x{score['multiplier']}: {fans}")
    elif score:
        lines.append(f"not a win: {score['error']['code']}")
    lines.append(f"drawn at {size}")
    return lines


def run_score_photo(args: argparse.Namespace, tile_set_for: SetLoader | None = None) -> int:
    """``smj score PHOTO``: detect, group and score a photographed hand (its faces read with the set
    ``tile_set_for`` gives for the detector, ``--set``)."""
    from scoring import cli as scoring_cli
    from vision.annotate import check_image_path, draw_detections, save_rgb
    from vision.detect.detector import DEFAULT_CONF, ModelError
    from vision.images import ImageError
    from vision.pipeline import score_photo

    try:
        context, rules = scoring_cli.context_from_args(args)
        if args.annotate:
            check_image_path(args.annotate)
    except (ValueError, OSError) as error:
        return _fail(str(error))
    try:
        detector = load_detector(args)
        tile_set = tile_set_for(detector) if tile_set_for is not None else None
        result = score_photo(
            args.photo,
            detector,
            context,
            rules,
            conf=DEFAULT_CONF if args.conf is None else args.conf,
            tile_set=tile_set,
        )
    except (ModelError, ImageError, ValueError) as error:
        return _fail(str(error))
    payload = result.to_json(args.photo)
    if args.json:
        print(json.dumps(payload, ensure_ascii=False, indent=1))
    else:
        print(f"{args.photo}: {len(result.detections)} tiles found")
        if result.hand is not None:
            hand = payload["hand"]
            melds = " ".join(f"[{m['type']} {m['tile']}]" for m in hand["melds"])  # type: ignore[index]
            print(f"hand: {hand['concealed']} {melds} win {hand['win_tile']}")  # type: ignore[index]
        for warning in payload["warnings"]:  # type: ignore[attr-defined]
            print(f"warning: {warning['message']}")
        if result.score is not None:
            print(scoring_cli.format_score(result.score, rules))
        if result.waits is not None:
            print(scoring_cli.describe_waits(result.waits, rules))
    if args.annotate:  # after the result is printed: a folder that cannot be written loses nothing
        photo = result.photo
        width, height = photo.size
        size = f"{width}x{height}"
        if photo.scale > 1:  # drawn on the photo as the reader decoded it
            size += (
                f", {1 / photo.scale:.2g} of the photo's {photo.original_size[0]}x{photo.original_size[1]}"
            )
        pixels = draw_detections(
            photo.pixels,
            result.detections.scaled(1 / photo.scale),
            [g.indices for g in result.grouping.groups],
            result.grouping.win_index,
            caption=_caption(payload, size),
        )
        try:
            save_rgb(pixels, args.annotate)
        except OSError as error:
            return _fail(str(error))
        if not args.json:
            print(f"annotated: {args.annotate} ({size})")
    return 0 if result.score is not None and result.score.valid else 1
