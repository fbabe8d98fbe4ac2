"""``smj dataset ...``: import, export, check, split and autolabel labelled tile datasets (and ``synth``);
``smj eval``: measure a detector on a labelled dataset (``vision.factory.evaluate``).

Top-level imports stay light (standard library only): numpy, Pillow and the detector load inside the
command that needs them, so ``smj score --hand`` never pays for them.

Exit codes: 0 done, 1 ``check`` found label errors, 2 bad input (a missing folder, malformed JSON, an
unknown class name, a corrupt image...), reported as one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datasets.split import SplitCounts

FORMATS = ("yolo", "coco", "labelstudio")
DEFAULT_RATIOS = "0.8,0.1,0.1"


def register(commands: argparse._SubParsersAction) -> None:
    dataset = commands.add_parser(
        "dataset",
        help="import, export, check, split and auto-label tile datasets",
        description="Labelled tile datasets in this project's YOLO layout (images/<split>, labels/<split>, "
        "data.yaml with the 29 detector classes, sources.csv).",
    )
    sub = dataset.add_subparsers(dest="dataset_command", required=True, metavar="COMMAND")
    _register_import(sub)
    _register_export(sub)
    _register_check(sub)
    _register_split(sub)
    _register_autolabel(sub)
    _register_crops(sub)
    _register_crops_mix(sub)
    _register_windows(sub)
    _register_synth(sub)
    _register_eval(commands)


def _register_import(sub: argparse._SubParsersAction) -> None:
    """``smj dataset import``."""
    imp = sub.add_parser(
        "import",
        help="read a YOLO, COCO or Label Studio dataset into this project's layout",
        description="Class names are mapped to ours (m1..s9, back; winds, dragons and flowers to 'honour'). "
        "Images are hard-linked (or copied), never moved.",
    )
    imp.add_argument("src", metavar="SRC", help="the dataset folder, or a COCO / Label Studio JSON file")
    imp.add_argument("--format", required=True, choices=FORMATS, help="the format of SRC")
    imp.add_argument("--out", required=True, help="a new (or empty) folder for the dataset")
    imp.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="NAME=CLASS",
        help="map a class name of SRC to one of ours (m1..s9, back, honour), or to 'drop' to leave it out",
    )
    imp.add_argument(
        "--map-file",
        metavar="FILE",
        help="class map: YAML / JSON {NAME: CLASS} or lines NAME=CLASS; --map entries win over it",
    )
    imp.add_argument(
        "--split-ratios",
        metavar="R",
        help=f"re-split by source photo, e.g. {DEFAULT_RATIOS} (default: keep SRC's splits; "
        f"{DEFAULT_RATIOS} when it has none)",
    )
    imp.add_argument(
        "--lenient",
        action="store_true",
        help="import despite problems, fixing them: clip boxes to the image, polygons and turned boxes to "
        "upright boxes, rescale the boxes of an image whose real size differs from the size declared, skip "
        "labels without images, unreadable or missing images, doubled ids and bad lines or annotations "
        "(counted); by default every problem is listed (file and line or id) and nothing is written",
    )
    imp.add_argument("--images", metavar="DIR", help="labelstudio: the folder to find the tasks' images in")
    imp.add_argument("--copy", action="store_true", help="copy the images instead of hard-linking them")
    imp.set_defaults(func=_guarded(run_import))


def _register_export(sub: argparse._SubParsersAction) -> None:
    """``smj dataset export``."""
    exp = sub.add_parser("export", help="write a dataset of this project's layout in another format")
    exp.add_argument("dir", metavar="DIR", help="a dataset in this project's layout")
    exp.add_argument("--format", required=True, choices=FORMATS, help="the format to write")
    exp.add_argument("--out", required=True, metavar="DST", help="a new (or empty) folder")
    exp.add_argument(
        "--image-root",
        metavar="PREFIX",
        help="labelstudio: put before each image path relative to DIR (default: /data/local-files/?d= and "
        "DIR's absolute path, for Label Studio local storage with LOCAL_FILES_DOCUMENT_ROOT=/)",
    )
    exp.add_argument(
        "--as",
        dest="kind",
        choices=("predictions", "annotations"),
        default="predictions",
        help="labelstudio: boxes as pre-annotations to review (default) or as finished annotations",
    )
    exp.add_argument("--copy", action="store_true", help="copy the images instead of hard-linking them")
    exp.set_defaults(func=_guarded(run_export))


def _register_check(sub: argparse._SubParsersAction) -> None:
    """``smj dataset check``."""
    check = sub.add_parser(
        "check",
        help="statistics and label errors of a dataset, and a contact sheet of crops",
        description="Exits 1 when there are label errors (each printed as file:line), 0 when clean.",
    )
    check.add_argument("dir", metavar="DIR", help="a YOLO dataset")
    check.add_argument(
        "--sheet", metavar="OUT.png", help="write a contact sheet: random crops, a row per class"
    )
    check.add_argument("--per-class", type=int, default=8, metavar="N", help="crops per class on the sheet")
    check.add_argument("--seed", type=int, default=0, help="which random crops the sheet shows")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(func=_guarded(run_check))


def _register_split(sub: argparse._SubParsersAction) -> None:
    """``smj dataset split``."""
    split = sub.add_parser(
        "split",
        help="re-split a dataset, keeping each source photo (and its copies) in one part",
        description="Moves files between images/<split> folders in place, or writes a new dataset to --out.",
    )
    split.add_argument("dir", metavar="DIR", help="a YOLO dataset")
    split.add_argument("--by", choices=("source",), default="source", help="what must stay together")
    split.add_argument(
        "--ratios", default=DEFAULT_RATIOS, help=f"train,val[,test] (default {DEFAULT_RATIOS})"
    )
    split.add_argument("--out", metavar="DST", help="write a new dataset here instead of moving files in DIR")
    split.set_defaults(func=_guarded(run_split))


def _register_autolabel(sub: argparse._SubParsersAction) -> None:
    """``smj dataset autolabel``."""
    auto = sub.add_parser(
        "autolabel",
        help="label new photos with the detector, for review in Label Studio",
        description="Writes OUT in this project's layout plus OUT/tasks.json (the detections as Label Studio "
        "predictions) and OUT/label_config.xml.",
    )
    auto.add_argument("images", nargs="+", metavar="IMAGE", help="photos, or folders of photos")
    auto.add_argument("--out", required=True, help="a new (or empty) folder")
    auto.add_argument("--weights", help="detector weights (default: the shipped models/tiles.onnx)")
    auto.add_argument("--conf", type=float, default=None, help="confidence threshold (default 0.4)")
    auto.add_argument("--image-root", metavar="PREFIX", help="as for export --format labelstudio")
    auto.add_argument("--quiet", action="store_true", help="no progress bar (none is drawn off a terminal)")
    auto.set_defaults(func=_guarded(run_autolabel))


def _register_crops(sub: argparse._SubParsersAction) -> None:
    """``smj dataset crops``."""
    crops = sub.add_parser(
        "crops",
        help="cut tile crops from labelled datasets, for training the tile classifier",
        description="Each DATA is a dataset folder of this project's layout, optionally with how to cut it: "
        "DIR[:COPIES[:PER_IMAGE]] (jittered crops per box, at most PER_IMAGE boxes per image). Train images "
        "give jittered, turned training crops; val images give validation crops; 'none' crops are "
        "patches away from every tile.",
    )
    crops.add_argument("data", nargs="*", metavar="DATA")
    crops.add_argument(
        "--out", required=True, help="a new (or empty) folder (OUT/train/<class>, OUT/val/<class>)"
    )
    crops.add_argument(
        "--size", type=int, default=None, help="crop side in pixels (default: the shipped classifier's, 96)"
    )
    crops.add_argument("--seed", type=int, default=0)
    crops.add_argument("--quiet", action="store_true", help="no progress bar (none is drawn off a terminal)")
    crops.add_argument(
        "--min-side",
        type=float,
        default=0.0,
        metavar="PX",
        help="training crops skip tiles whose box's shorter side is under this many pixels (unreadable)",
    )
    crops.add_argument(
        "--rendered",
        type=int,
        default=0,
        metavar="N",
        help="add N training crops rendered without a scene, each of a fresh face style (default 0)",
    )
    crops.add_argument(
        "--art",
        action="extend",
        nargs="+",
        default=[],
        metavar="DIR",
        help="tile artwork folder(s) that some rendered crops' faces come from (as for smj dataset synth)",
    )
    crops.add_argument(
        "--red-fives",
        type=float,
        default=None,
        metavar="P",
        help="share of the rendered crops' tile sets whose fives are red (default 0.25)",
    )
    crops.add_argument(
        "--one-ink",
        type=float,
        default=0.0,
        metavar="P",
        help="share of the rendered crops' tile sets printing every face in one ink: red, blue, green or "
        "black (default 0)",
    )
    crops.add_argument(
        "--rendered-classes",
        default="",
        metavar="NAMES",
        help="render only these classes, comma-separated (e.g. m5,p5,s5)",
    )
    crops.add_argument(
        "--straddles",
        type=int,
        default=0,
        metavar="N",
        help="per training image, up to N 'none' crops of a box over the seam between two neighbouring tiles",
    )
    crops.add_argument(
        "--parts",
        type=int,
        default=0,
        metavar="N",
        help="per training image, up to N 'none' crops of a part of a labelled tile: a half, one pip's "
        "square, a sliver along a side (the localiser's boxes on a pip or a half are no tile)",
    )
    crops.add_argument(
        "--false-alarms",
        type=int,
        default=0,
        metavar="N",
        help="per training image, up to N 'none' crops of the boxes the localiser (--weights) finds on no "
        "labelled tile: its false alarms on keyboards, dominoes, patterned cloth (smj dataset synth --kind "
        "empty photos hold nothing else)",
    )
    crops.add_argument(
        "--as-found",
        type=int,
        default=0,
        metavar="N",
        help="per training image, up to N crops of the boxes the localiser (--weights) finds on labelled "
        "tiles, named as the tile each overlaps most (IoU >= 0.5): the crops the reader itself cuts, of "
        "tiles lying at an angle or seen from the side",
    )
    crops.add_argument(
        "--weights",
        help="with --false-alarms or --as-found: the localiser (default: the shipped models/tiles.onnx)",
    )
    crops.set_defaults(func=_guarded(run_crops))


def _register_crops_mix(sub: argparse._SubParsersAction) -> None:
    """``smj dataset crops-mix``."""
    mix = sub.add_parser(
        "crops-mix",
        help="a crop dataset of links to the training crops of others (shares, repeats) and one's val crops",
        description="Each PART is DIR[:SHARE[:COPIES[:PREFIX]]]: a random SHARE of DIR/train's crops whose "
        "file names start with PREFIX (!PREFIX: those that do not), each linked COPIES times.",
    )
    mix.add_argument("parts", nargs="+", metavar="PART")
    mix.add_argument("--val", required=True, metavar="DIR", help="the crop folder whose val/ crops validate")
    mix.add_argument("--out", required=True, help="a new (or empty) folder")
    mix.add_argument("--seed", type=int, default=0)
    mix.set_defaults(func=_guarded(run_crops_mix))


def _register_windows(sub: argparse._SubParsersAction) -> None:
    """``smj dataset windows``."""
    windows = sub.add_parser(
        "windows",
        help="cut input-sized windows at a chosen scale, to train the localiser at the tiles' real scale",
        description="Each image is rescaled by a factor drawn from --scale and windows of --size pixels "
        "are cut around its tiles; boxes are clipped, a tile mostly outside a window is left out. "
        "Splits are kept.",
    )
    windows.add_argument("src", metavar="SRC", help="a dataset folder of this project's layout")
    windows.add_argument("--out", required=True, help="a new (or empty) folder")
    windows.add_argument("--size", type=int, default=384, help="window side in pixels (default 384)")
    windows.add_argument("--scale", default="1", metavar="LO-HI", help="rescale factor range (default 1)")
    windows.add_argument("--per-image", type=int, default=1, help="windows per image (default 1)")
    windows.add_argument("--limit", type=int, default=None, help="only this many images, drawn at random")
    windows.add_argument("--seed", type=int, default=0)
    windows.add_argument(
        "--grey-dont-care",
        action="store_true",
        help="grey out a synthetic dataset's don't-care regions (scenes.jsonl 'ignored': tiles on their long "
        "edge, slivers), so the localiser learns them as neither tile nor background",
    )
    windows.set_defaults(func=_guarded(run_windows))


def _register_eval(commands: argparse._SubParsersAction) -> None:
    """``smj eval``."""
    from vision.cli import CLASSIFIER_HELP, confidence

    evaluate = commands.add_parser("eval", help="measure a detector on a labelled dataset")
    evaluate.add_argument("--data", required=True, help="a dataset folder in this project's layout")
    evaluate.add_argument("--split", default="val", help="which part to measure (train, val, test, all)")
    evaluate.add_argument("--group", help="only images of this source group (e.g. hand_series)")
    evaluate.add_argument(
        "--leave-out",
        nargs="+",
        default=[],
        metavar="NAME",
        help="leave out the images whose file name starts with NAME (e.g. photos whose labels sit off "
        "their tiles); the summary names them",
    )
    evaluate.add_argument(
        "--weights",
        help="weights (.onnx, or a run's .pt checkpoint, read through torch); default models/tiles.onnx",
    )
    evaluate.add_argument("--classifier", help=CLASSIFIER_HELP)
    evaluate.add_argument("--conf", type=confidence, default=None, help="operating threshold (default 0.55)")
    evaluate.add_argument("--out", help="folder for confusion.png and metrics.json")
    evaluate.add_argument("--json", action="store_true")
    evaluate.set_defaults(func=run_eval)


def _register_synth(sub: argparse._SubParsersAction) -> None:
    """``smj dataset synth``, when the synthetic-data package is installed."""
    try:
        module = importlib.import_module("datasets.synth.cli")
    except ModuleNotFoundError as error:
        if error.name in ("datasets.synth", "datasets.synth.cli"):
            return
        raise
    module.register_synth(sub)
    synth = sub.choices.get("synth")
    if synth is not None:  # a folder that holds scenes is refused as one line, not a traceback
        synth.set_defaults(func=_guarded(synth.get_default("func")))


def _guarded(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Bad input becomes one line on stderr and exit code 2, never a traceback."""

    def guarded(args: argparse.Namespace) -> int:
        from datasets.labels import DatasetError
        from vision.images import ImageError

        try:
            return run(args)
        except (DatasetError, ImageError, OSError) as error:
            return _fail(args, str(error))

    guarded.__name__ = run.__name__
    return guarded


def run_eval(args: argparse.Namespace) -> int:
    """``smj eval --data DIR``: mAP, precision, recall and exact-tiles rates; exit 2 on unreadable input."""
    from datasets.labels import DatasetError
    from datasets.yolo import read_yolo
    from vision.detect.detector import DEFAULT_CONF, DEFAULT_WEIGHTS, ModelError
    from vision.factory.evaluate import evaluate, save_confusion_png
    from vision.factory.torch_models import reader

    try:  # a run's .pt checkpoint is measured as it is, before it is shipped
        weights = Path(args.weights) if args.weights else DEFAULT_WEIGHTS
        detector = reader(weights, classifier=Path(args.classifier) if args.classifier else None)
        images = read_yolo(args.data)
    except (ModelError, DatasetError) as error:
        return _fail_eval(str(error))
    if args.split != "all":
        images = [i for i in images if i.split == args.split]
    if args.group:
        images = [i for i in images if i.meta.get("source_group", "") == args.group]
    left_out = sorted(i.image.name for i in images if i.image.name.startswith(tuple(args.leave_out)))
    unmatched = [name for name in args.leave_out if not any(n.startswith(name) for n in left_out)]
    if unmatched:
        return _fail_eval(f"{args.data}: --leave-out {', '.join(unmatched)}: no such image in the split")
    images = [i for i in images if i.image.name not in left_out]
    if not images:
        return _fail_eval(
            f"{args.data}: no images in split {args.split!r}"
            + (f" group {args.group!r}" if args.group else "")
        )
    result = evaluate(detector, images, conf=DEFAULT_CONF if args.conf is None else args.conf)
    summary = result.summary()
    summary["weights"] = str(detector.weights)
    summary["data"] = f"{args.data} [{args.split}{', ' + args.group if args.group else ''}]"
    if left_out:
        summary["left_out"] = left_out
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        summary["confusion_png"] = str(save_confusion_png(result.confusion, out / "confusion.png"))
        (out / "metrics.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['data']}: {summary['images']} images, weights {summary['weights']}")
        if left_out:
            print(f"  left out: {', '.join(left_out)}")
        for key in (
            "map50",
            "map50_95",
            "map30",
            "precision",
            "recall",
            "precision30",
            "recall30",
            "exact_tiles_rate",
            "exact_near_labels_rate",
            "honour_as_suited",
            "back_ap50",
            "median_ms",
        ):
            print(f"  {key:22s} {summary[key]}")
        worst = sorted(result.per_class_ap50.items(), key=lambda kv: kv[1])[:5]
        print("  weakest classes   " + ", ".join(f"{k} {v:.2f}" for k, v in worst))
        for row in summary["worst"]:  # type: ignore[attr-defined]
            print(f"  worst: {row['image']} ({row['errors']} tile errors)")
        for row in summary["slowest"][:3]:  # type: ignore[index]
            print(f"  slowest: {row['image']} ({row['ms']} ms)")
    return 0


def _fail_eval(message: str) -> int:
    print(f"smj eval: {message}", file=sys.stderr)
    return 2


def _fail(args: argparse.Namespace, message: str) -> int:
    text = " ".join(message.split())
    print(f"smj dataset {args.dataset_command}: {text}", file=sys.stderr)
    return 2


def parse_mapping(pairs: list[str], map_file: str | None = None) -> dict[str, str]:
    """``["East=honour", ...]`` -> ``{"East": "honour"}``, after the entries of ``map_file`` if given;
    every target must be one of our classes or drop (all bad ones named at once)."""
    from datasets.labels import DROP_CLASSES, DatasetError, class_id_for_name, read_map_file

    mapping: dict[str, str] = {}
    origin: dict[str, str] = {}
    if map_file:
        for name, target in read_map_file(map_file).items():
            mapping[name], origin[name] = target, f"{map_file}: {name}={target}"
    for pair in pairs:
        name, sep, target = pair.partition("=")
        if not sep or not name.strip() or not target.strip():
            raise DatasetError(f"--map {pair!r}: expected NAME=CLASS")
        mapping[name.strip()], origin[name.strip()] = target.strip(), f"--map {pair}"
    bad = []
    for name, target in mapping.items():
        if target.lower() in DROP_CLASSES:
            continue
        try:
            class_id_for_name(target)
        except DatasetError:
            bad.append(f"{origin[name]!r}")
    if bad:
        raise DatasetError(f"{', '.join(bad)}: not one of our classes (m1..s9, back, honour) nor 'drop'")
    return mapping


def _fresh_folder(path: str, *, not_inside: Path | None = None) -> Path:
    from datasets.labels import DatasetError

    out = Path(path).resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DatasetError(f"{out}: already exists and is not empty; give a new folder")
    if not_inside is not None and (out == not_inside or out.is_relative_to(not_inside)):
        raise DatasetError(f"{out}: is inside {not_inside}; give a folder outside the dataset")
    return out


def run_import(args: argparse.Namespace) -> int:
    from datasets.duplicates import find_duplicates
    from datasets.labels import DatasetError
    from datasets.problems import ImportProblems, ImportRefused
    from datasets.split import (
        assign_splits,
        keep_sources_together,
        merge_duplicate_sources,
        parse_ratios,
        split_counts,
    )
    from datasets.yolo import write_yolo

    mapping = parse_mapping(args.map, args.map_file)
    ratios = parse_ratios(args.split_ratios) if args.split_ratios else None
    src = Path(args.src).resolve()
    if not src.exists():
        raise DatasetError(f"{src}: no such file or folder")
    out = _fresh_folder(args.out, not_inside=src if src.is_dir() else None)
    problems = ImportProblems()
    if args.format == "yolo":
        from datasets.yolo import read_yolo

        images = read_yolo(src, mapping, problems)
    elif args.format == "coco":
        from datasets.coco import read_coco

        images = read_coco(src, mapping, problems)
    else:
        from datasets.labelstudio import read_labelstudio

        images = read_labelstudio(src, mapping, args.images, problems)
    if problems and not args.lenient:
        for problem in problems.problems:
            print(problem, file=sys.stderr)
        raise ImportRefused(problems)
    if problems:
        print(f"fixed {len(problems.problems)} problems: {problems.summary()}")
        unlabelled = [i for i in images if i.meta.get("labelstudio") == "unlabelled"]
        if unlabelled:
            print(f"left out {len(unlabelled)} tasks with neither annotations nor predictions")
            images = [i for i in images if i.meta.get("labelstudio") != "unlabelled"]
            if not images:
                raise DatasetError(f"{src}: no task has annotations or predictions")
    groups = find_duplicates(item.image for item in images)
    if groups:
        images = merge_duplicate_sources(images, groups)
        copies = sum(len(group.paths) for group in groups)
        print(
            f"{copies} images are copies of one another in {len(groups)} groups: each group kept in one split"
        )
    if ratios is None and any(not item.split for item in images):
        ratios = parse_ratios(DEFAULT_RATIOS)
        print(f"SRC has no split for some images: splitting all by source photo at {DEFAULT_RATIOS}")
    elif ratios is None and not any(item.split == "val" for item in images):
        ratios = parse_ratios(DEFAULT_RATIOS)
        print(f"SRC has no validation split: splitting all by source photo at {DEFAULT_RATIOS}")
    if ratios is not None:
        images = assign_splits(images, ratios)
    else:
        images, moved = keep_sources_together(images)
        if moved:
            print(f"moved {moved} images so that copies of one photo share a split")
    data_yaml = write_yolo(images, out, link=not args.copy)
    _print_counts(split_counts(images))
    print(f"wrote {data_yaml}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from datasets.split import split_counts
    from datasets.yolo import read_yolo

    root = Path(args.dir).resolve()
    images = read_yolo(root)
    out = _fresh_folder(args.out, not_inside=root)
    if args.format == "yolo":
        from datasets.yolo import write_yolo

        written = [write_yolo(images, out, link=not args.copy)]
    elif args.format == "coco":
        from datasets.coco import write_coco

        written = write_coco(images, out, link=not args.copy)
    else:
        from datasets.labelstudio import write_labelstudio

        written = list(write_labelstudio(images, out, root=root, image_root=args.image_root, kind=args.kind))
    _print_counts(split_counts(images))
    for path in written:
        print(f"wrote {path}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from datasets.check import check_dataset, contact_sheet

    report = check_dataset(args.dir)
    sheet = None
    if args.sheet:
        if args.per_class < 1:
            return _fail(args, f"--per-class must be at least 1, got {args.per_class}")
        sheet = contact_sheet(report, args.sheet, per_class=args.per_class, seed=args.seed)
    if args.json:
        data = report.to_json()
        if sheet:
            data["sheet"] = str(sheet)
        print(json.dumps(data, ensure_ascii=False, indent=1))
    else:
        print(report.as_text())
        if sheet:
            print(f"contact sheet: {sheet}")
    return 0 if report.ok else 1


def run_split(args: argparse.Namespace) -> int:
    from datasets.split import parse_ratios, resplit, split_counts

    ratios = parse_ratios(args.ratios)
    root = Path(args.dir).resolve()
    out = _fresh_folder(args.out, not_inside=root) if args.out else None
    images = resplit(root, ratios, out)
    _print_counts(split_counts(images))
    print(f"wrote {out or root}")
    return 0


def run_crops(args: argparse.Namespace) -> int:
    from datasets.crops import CropSource, build_crop_dataset
    from datasets.labels import DatasetError
    from datasets.synth.art import ArtError
    from datasets.synth.face_crops import art_sets_in
    from datasets.synth.look import RED_FIVES_P
    from datasets.windows import dont_care_regions
    from datasets.yolo import read_yolo
    from vision.contract import CLASSIFIER_CLASSES

    folders = [spec.split(":")[0] for spec in args.data]
    sources = [
        CropSource.parse(spec, read_yolo(folder), dont_care_regions(folder))
        for spec, folder in zip(args.data, folders, strict=True)
    ]
    if args.rendered < 0:
        raise DatasetError(f"--rendered {args.rendered}: a number of crops, 0 or more")
    if not sources and not args.rendered:
        raise DatasetError("nothing to cut: give labelled datasets, --rendered N, or both")
    classes = tuple(name for name in args.rendered_classes.split(",") if name)
    unknown = [name for name in classes if name not in CLASSIFIER_CLASSES or name == "none"]
    if unknown:
        raise DatasetError(f"--rendered-classes: {', '.join(unknown)} not tile classes")
    red_fives = RED_FIVES_P if args.red_fives is None else args.red_fives  # the synth package loads lazily
    for flag, share in (("--red-fives", red_fives), ("--one-ink", args.one_ink)):
        if not 0.0 <= share <= 1.0:
            raise DatasetError(f"{flag} {share}: a share from 0 to 1")
    try:
        art_sets = art_sets_in(args.art) if args.art and args.rendered else []
    except ArtError as error:
        raise DatasetError(str(error)) from None
    for flag, number in (
        ("--parts", args.parts),
        ("--false-alarms", args.false_alarms),
        ("--as-found", args.as_found),
    ):
        if number < 0:
            raise DatasetError(f"{flag} {number}: a number of crops, 0 or more")
    localise = _localiser(args.weights) if args.false_alarms or args.as_found else None
    out = _fresh_folder(args.out)
    from vision.contract import CROP_SIZE

    counts = build_crop_dataset(
        sources,
        out,
        seed=args.seed,
        size=args.size or CROP_SIZE,
        min_side=args.min_side,
        rendered=args.rendered,
        art_sets=art_sets,
        red_five_p=red_fives,
        one_ink_p=args.one_ink,
        rendered_classes=classes,
        straddles=args.straddles,
        parts=args.parts,
        false_alarms=args.false_alarms,
        as_found=args.as_found,
        localise=localise,
        quiet=args.quiet,
    )
    for split, per_class in counts.items():
        print(
            f"{split}: {sum(per_class.values())} crops, "
            + ", ".join(f"{k} {v}" for k, v in sorted(per_class.items()))
        )
    print(f"wrote {out}")
    return 0


def _localiser(weights: str | None):  # -> datasets.crops.Localise
    """The boxes a localiser finds in a photo, for ``--false-alarms`` and ``--as-found`` (the floor the reader
    boxes at)."""
    import numpy as np

    from datasets.labels import DatasetError
    from vision.detect.detector import DEFAULT_CONF, DEFAULT_WEIGHTS, Detector, ModelError
    from vision.images import Photo
    from vision.reading import first_view

    try:
        # every box of a cluttered photo is a false alarm to learn from, however many it shows
        detector = Detector(Path(weights) if weights else DEFAULT_WEIGHTS, max_tiles=None)
    except ModelError as error:
        raise DatasetError(str(error)) from None

    def localise(pixels: np.ndarray) -> np.ndarray:
        photo = Photo(pixels, (pixels.shape[1], pixels.shape[0]))
        return detector.boxes(first_view(photo, detector, conf=DEFAULT_CONF))

    return localise


def run_crops_mix(args: argparse.Namespace) -> int:
    from datasets.crops import MixPart, mix_crop_folders

    parts = [MixPart.parse(spec) for spec in args.parts]
    out = _fresh_folder(args.out)
    counts = mix_crop_folders(out, parts, args.val, seed=args.seed)
    print(f"train: {sum(counts.values())} crops, " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"wrote {out}")
    return 0


def run_windows(args: argparse.Namespace) -> int:
    from datasets.labels import DatasetError
    from datasets.split import split_counts
    from datasets.windows import dont_care_regions, write_windows
    from datasets.yolo import read_yolo

    low, _, high = args.scale.partition("-")
    try:
        scale = (float(low), float(high or low))
    except ValueError:
        raise DatasetError(f"--scale {args.scale!r}: expected LO-HI such as 0.5-1.0") from None
    if not 0 < scale[0] <= scale[1] or args.size < 32 or args.per_image < 1:
        raise DatasetError(
            "--scale must be positive and LO <= HI, --size at least 32, --per-image at least 1"
        )
    src = Path(args.src).resolve()
    dont_care = dont_care_regions(src) if args.grey_dont_care else None
    if dont_care == {}:
        raise DatasetError(
            f"--grey-dont-care: {src} has no scenes.jsonl with don't-care outlines (smj dataset synth)"
        )
    out = _fresh_folder(args.out, not_inside=src)
    written = write_windows(
        read_yolo(src),
        out,
        size=args.size,
        scale=scale,
        per_image=args.per_image,
        limit=args.limit,
        seed=args.seed,
        dont_care=dont_care,
    )
    _print_counts(split_counts(written))
    print(f"wrote {len(written)} windows to {out}")
    return 0


def run_autolabel(args: argparse.Namespace) -> int:
    from datasets.autolabel import DEFAULT_CONF, autolabel, find_photos

    if args.conf is not None and not 0 <= args.conf <= 1:
        return _fail(args, f"--conf must be between 0 and 1, got {args.conf}")
    photos = find_photos(args.images)  # before loading the model: a typo should not wait for it
    out = _fresh_folder(args.out)
    from vision.detect.detector import DEFAULT_WEIGHTS, Detector, ModelError

    weights = Path(args.weights) if args.weights else DEFAULT_WEIGHTS
    if not weights.is_file():
        hint = "" if args.weights else "; train one with 'smj train' or pass --weights"
        return _fail(args, f"{weights}: no such weights file{hint}")
    try:
        detector = Detector(weights)
    except ModelError as error:
        return _fail(args, str(error))
    conf = DEFAULT_CONF if args.conf is None else args.conf
    result = autolabel(photos, out, detector, conf=conf, image_root=args.image_root, quiet=args.quiet)
    print(f"labelled {result.images} photos, {result.boxes} boxes (conf >= {conf})")
    print(f"wrote {result.data_yaml}")
    print(f"previews with the boxes drawn: {result.previews}")
    print(f"review in Label Studio: import {result.tasks} with the labelling config {result.config}")
    return 0


def _print_counts(counts: Mapping[str, SplitCounts]) -> None:
    for split, count in counts.items():
        print(f"{split:<6} {count.images:>6} images {count.sources:>6} sources {count.boxes:>8} boxes")
