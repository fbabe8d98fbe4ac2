"""``smj``: the one command-line entry point of the project.

Each package owns its commands in its own ``cli`` module; this file only wires them together and
imports the heavy ones (vision, api, datasets) when their command runs, so ``smj score --hand`` stays
instant.

Exit codes: 0 done, 1 the input was read but is not a win / not readable as a hand, 2 malformed input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

os.environ.setdefault("YOLO_OFFLINE", "1")

PHOTO_OPTIONS = ("annotate", "weights", "classifier", "conf", "set")  # smj score options of a photo only
HAND_OPTIONS = ("hand", "pong", "kong", "added-kong", "concealed-kong", "win")  # of a hand given as text


def build_parser() -> argparse.ArgumentParser:
    from scoring import cli as scoring_cli
    from vision import cli as vision_cli

    parser = argparse.ArgumentParser(
        prog="smj", description="Score Sichuan mahjong hands, from text or a photo."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    score = commands.add_parser(
        "score",
        help="score a hand given as text (--hand) or as a photo",
        description="Score a winning hand. Give the tiles with --hand, or a photo of the hand.",
    )
    score.add_argument("photo", nargs="?", help="a photo of the winning hand (instead of --hand)")
    score.add_argument("--annotate", metavar="OUT", help="with a photo: write it with boxes and groups drawn")
    score.add_argument("--weights", help="with a photo: detector weights (default: the shipped model)")
    score.add_argument(
        "--classifier", help="with a photo: tile classifier weights (default: the shipped one)"
    )
    score.add_argument(
        "--conf",
        type=vision_cli.confidence,
        default=None,
        help="with a photo: detection confidence threshold",
    )
    score.add_argument(
        "--set", metavar="NAME", help="with a photo: the set on the table (smj set add), read with its faces"
    )
    scoring_cli.add_hand_arguments(score, hand_required=False)
    scoring_cli.add_context_arguments(score)
    score.set_defaults(func=_run_score)

    scoring_cli.register(commands)
    _register_optional(commands, "vision.cli")
    _register_optional(commands, "datasets.cli")
    _register_optional(commands, "usecases.cli")
    _register_optional(commands, "api.cli")
    return parser


def _set_loader(args: argparse.Namespace):  # -> a function of the classifier giving the TileSet, or None
    from usecases import cli as store_cli

    return store_cli.set_loader(args.set) if args.set else None


def _register_optional(commands: argparse._SubParsersAction, module_name: str) -> None:
    """Register a package's commands; its module must import only light things at top level."""
    import importlib

    module = importlib.import_module(module_name)
    module.register(commands)


def _run_score(args: argparse.Namespace) -> int:
    from scoring import cli as scoring_cli

    if args.photo is None:
        photo_only = [option for option in PHOTO_OPTIONS if getattr(args, option) is not None]
        if photo_only:
            print(f"smj score: --{photo_only[0]} goes with a photo, not with --hand", file=sys.stderr)
            return 2
        return scoring_cli.run_score(args)
    hand_side = [option for option in HAND_OPTIONS if getattr(args, option.replace("-", "_"))]
    if hand_side[:1] == ["hand"]:
        print("smj score: give either --hand or a photo, not both", file=sys.stderr)
        return 2
    if hand_side:
        print(
            f"smj score: --{hand_side[0]} goes with --hand: a photo's melds and winning tile are read from "
            "it (correct them on the web page, or give the whole hand with --hand instead of the photo)",
            file=sys.stderr,
        )
        return 2
    from vision import cli as vision_cli

    return vision_cli.run_score_photo(args, _set_loader(args))


# the extra that installs each third-party package a command may need (pyproject.toml)
EXTRA_OF = {
    "numpy": "vision",
    "PIL": "vision",
    "cv2": "vision",
    "onnxruntime": "vision",
    "yaml": "vision",
    "tqdm": "vision",
    "sqlalchemy": "store",
    "alembic": "store",
    "psycopg": "store",
    "cairosvg": "datasets",
    "imagehash": "datasets",
    "fastapi": "serve",
    "uvicorn": "serve",
    "multipart": "serve",
    "pydantic_settings": "serve",
    "fastapi_offline": "serve",
    "torch": "train",
    "ultralytics": "train",
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except ModuleNotFoundError as error:  # an install of fewer trades than this command needs
        package = (error.name or "").split(".")[0]
        if package not in EXTRA_OF:
            raise
        extra = EXTRA_OF[package]
        print(
            f"smj {args.command}: needs {package}, which the [{extra}] extra installs: "
            f'pip install "sichuan-mahjong-scorer[{extra}]" (or ./setup.sh for everything)',
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
