"""The labelled-image data model shared by every dataset format, and the mapping of class names.

A dataset on disk in this project's own layout is a YOLO folder: ``images/``, ``labels/`` and
``data.yaml`` whose ``names:`` are ``vision.detections.DETECTOR_CLASSES`` (m1..s9, back, honour).
Readers of other formats map their class names through ``class_id_for_name``: suited tiles by any
usual spelling (``m1``, ``1m``, ``1万``, ``5筒``), face-down tiles to ``back``, and tiles that are not
Sichuan tiles (winds, dragons, flowers, seasons) to ``honour``: a class of its own, so they are never
learned as background.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scoring.errors import SmjError
from scoring.tiles import TileParseError, parse_tile
from vision.detections import BACK, DETECTOR_CLASSES, HONOUR

EDGE_TOLERANCE = 1e-3  # normalised: rounding in exports often overshoots the image by a hair


DUPLICATE_IOU = 0.9  # one class twice over this IoU in one image: a box labelled twice


class DatasetError(SmjError):
    """A dataset could not be read or written; the message names the file and the problem."""

    code = "bad_dataset"


@dataclass(frozen=True)
class Box:
    """One labelled box, normalised YOLO style: centre x, centre y, width, height in 0..1."""

    class_id: int
    xc: float
    yc: float
    w: float
    h: float

    def xyxy(self, width: int, height: int) -> tuple[float, float, float, float]:
        return (
            (self.xc - self.w / 2) * width,
            (self.yc - self.h / 2) * height,
            (self.xc + self.w / 2) * width,
            (self.yc + self.h / 2) * height,
        )

    @classmethod
    def from_xyxy(cls, class_id: int, box: tuple[float, float, float, float], width: int, height: int) -> Box:
        x1, y1, x2, y2 = box
        return cls(
            class_id, (x1 + x2) / 2 / width, (y1 + y2) / 2 / height, (x2 - x1) / width, (y2 - y1) / height
        )

    @property
    def name(self) -> str:
        return DETECTOR_CLASSES[self.class_id]


@dataclass(frozen=True)
class LabelledImage:
    image: Path  # absolute path of the image file
    boxes: tuple[Box, ...]
    width: int
    height: int
    source: str = ""  # the source photo this image was made from (augmented copies share it)
    split: str = ""  # train / val / test, or "" when not assigned
    meta: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def stem(self) -> str:
        return self.image.stem


_HONOUR_WORDS = (
    r"\d|east|south|west|north|red|green|white|plum|orchid|chrysanthemum|bamboo|spring|summer|autumn|winter"
)
_HONOUR_PATTERNS = [
    r"h[a-z]{2}",  # hwe, hdr... (winds/dragons in the Roboflow set)
    r"b[fs]\d",  # bonus flowers / seasons
    r"f\d",
    r"[1-7]z",  # Riichi notation (tenhou, mjai): 1z-4z winds, 5z-7z dragons
    r"bonus[\s_\-].+",  # bonus-flower-plum, bonus-season-1: every bonus tile is a flower or a season
    r"(east|south|west|north)([\s_\-]*wind)?",
    r"(red|green|white)([\s_\-]*dragon)?",
    rf"(wind|dragon|flower|season|honou?r)s?([\s_\-]*({_HONOUR_WORDS}))?",  # not joker_x: map it
    r"[东南西北中发發白]",
    r"(dong|nan|xi|bei|zhong|fa|bai)",
    r"(plum|orchid|chrysanthemum|bamboo flower|spring|summer|autumn|winter)",
]
# Public tile datasets' own spellings of suited tiles: Riichi's red fives 0m/0p/0s (a 5 in red), and the
# Roboflow mahjong sets' s<suit><rank> (sb bamboo, sc characters, sd dots).
_RED_FIVE = re.compile(r"0([mps])")
_ROBOFLOW_SUITED = re.compile(r"s([bcd])([1-9])")
_ROBOFLOW_SUITS = {"b": "s", "c": "m", "d": "p"}
_HONOUR_RE = re.compile("|".join(f"(?:{p})" for p in _HONOUR_PATTERNS))
_BACK_NAMES = {"back", "backs", "facedown", "face_down", "face-down", "hidden", "tile_back", "背"}
_NUMBER_WORDS = {
    word: rank
    for rank, word in enumerate(("one", "two", "three", "four", "five", "six", "seven", "eight", "nine"), 1)
}
_SUIT_WORDS = {
    "m": "m",
    "man": "m",
    "wan": "m",
    "character": "m",
    "characters": "m",
    "crak": "m",
    "craks": "m",
    "p": "p",
    "pin": "p",
    "tong": "p",
    "dot": "p",
    "dots": "p",
    "circle": "p",
    "circles": "p",
    "s": "s",
    "sou": "s",
    "suo": "s",
    "tiao": "s",
    "bamboo": "s",
    "bam": "s",
    "bams": "s",
}


def class_id_for_name(name: str, mapping: dict[str, str] | None = None) -> int:
    """This project's class id for a class name of another dataset; raises ``DatasetError`` if unknown.

    ``mapping`` (from ``--map NAME=CLASS``) wins over the built-in spellings.
    """
    raw = name.strip()
    if mapping and raw in mapping:
        return class_id_for_name(mapping[raw])
    if raw in DETECTOR_CLASSES:
        return DETECTOR_CLASSES.index(raw)
    lowered = raw.lower()
    if lowered in _BACK_NAMES:
        return BACK
    try:
        return parse_tile(raw)
    except TileParseError:
        pass
    red_five = _RED_FIVE.fullmatch(lowered)
    if red_five:
        return parse_tile(f"5{red_five.group(1)}")
    roboflow = _ROBOFLOW_SUITED.fullmatch(lowered)
    if roboflow:
        return parse_tile(f"{roboflow.group(2)}{_ROBOFLOW_SUITS[roboflow.group(1)]}")
    words = re.split(r"[\s_\-.]+", lowered)
    if len(words) == 2:
        first, second = words
        for rank_word, suit_word in ((first, second), (second, first)):
            rank = _NUMBER_WORDS.get(rank_word) or (int(rank_word) if rank_word.isdigit() else None)
            suit = _SUIT_WORDS.get(suit_word.rstrip("s")) or _SUIT_WORDS.get(suit_word)
            if rank and suit and 1 <= rank <= 9:
                return parse_tile(f"{rank}{suit}")
    if _HONOUR_RE.fullmatch(lowered):
        return HONOUR
    raise DatasetError(
        f"unknown class name {name!r}: not a suited tile (m1..s9, 1m, 1万), a back or an honour; "
        f"map it with --map {name}=CLASS (or --map {name}=drop to leave those boxes out)"
    )


DROP_CLASSES = frozenset({"drop", "skip"})
_UNKNOWN_HINT = (
    "not suited tiles (m1..s9, 1m, 1万), backs or honours; map them with --map NAME=CLASS (or =drop to "
    "leave their boxes out), or list them in a --map-file"
)


def map_class_names(
    names: Iterable[str], mapping: dict[str, str] | None = None, where: dict[str, str] | None = None
) -> dict[str, int | None]:
    """Every name's class id (``None``: dropped), or one ``DatasetError`` naming every unknown name
    (with ``where`` it is first used, when given)."""
    mapped: dict[str, int | None] = {}
    unknown: list[str] = []
    for name in dict.fromkeys(names):
        try:
            mapped[name] = mapped_class_id(name, mapping)
        except DatasetError:
            unknown.append(name)
    if unknown:
        places = where or {}
        listed = ", ".join(
            f"{name!r} ({places[name]})" if name in places else repr(name) for name in sorted(unknown)
        )
        plural = f"{len(unknown)} unknown class names" if len(unknown) > 1 else "unknown class name"
        raise DatasetError(f"{plural} {listed}: {_UNKNOWN_HINT}")
    return mapped


def read_map_file(path: Path | str) -> dict[str, str]:
    """A class map: YAML or JSON ``{name: class}`` (``.yaml``, ``.yml``, ``.json``), or text lines
    ``NAME=CLASS`` / ``NAME,CLASS`` / ``NAME<tab>CLASS`` (``#`` starts a comment). Targets are checked
    by the caller (``smj dataset import --map-file``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DatasetError(f"{path}: cannot read the class map ({error.__class__.__name__})") from None
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        import yaml

        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as error:
            raise DatasetError(f"{path}: not valid YAML or JSON: {error}") from None
        if not isinstance(data, dict):
            raise DatasetError(f"{path}: expected a mapping of class name to class")
        return {str(name).strip(): str(target).strip() for name, target in data.items()}
    mapping: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name = target = ""
        for separator in ("=", "\t", ","):
            before, found, after = line.partition(separator)
            if found:
                name, target = before.strip(), after.strip()
                break
        if not name or not target:
            raise DatasetError(f"{path}:{number}: expected NAME=CLASS, got {line!r}")
        mapping[name] = target
    return mapping


def mapped_class_id(name: str, mapping: dict[str, str] | None = None) -> int | None:
    """``class_id_for_name``, or ``None`` when ``--map NAME=drop`` says to leave that class's boxes out."""
    raw = name.strip()
    if mapping and raw in mapping and mapping[raw].strip().lower() in DROP_CLASSES:
        return None
    return class_id_for_name(raw, mapping)


def repeated_boxes(boxes: Sequence[Box]) -> list[tuple[int, int, float]]:
    """(later, earlier, IoU) for each box that repeats an earlier one of its image: the same class at an IoU
    over ``DUPLICATE_IOU`` (each reported once, against the first box it repeats). Import and check both
    report these (``datasets.problems``, ``datasets.check``)."""
    if len(boxes) < 2:
        return []
    classes = np.array([b.class_id for b in boxes])
    xyxy = np.array([b.xyxy(1, 1) for b in boxes], float)
    area = (xyxy[:, 2] - xyxy[:, 0]).clip(0) * (xyxy[:, 3] - xyxy[:, 1]).clip(0)
    top_left = np.maximum(xyxy[:, None, :2], xyxy[None, :, :2])
    bottom_right = np.minimum(xyxy[:, None, 2:], xyxy[None, :, 2:])
    inter = (bottom_right - top_left).clip(0).prod(axis=2)
    union = area[:, None] + area[None, :] - inter
    iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    same = (classes[:, None] == classes[None, :]) & (iou > DUPLICATE_IOU)
    repeats = []
    for later, earlier in zip(*np.nonzero(np.tril(same, k=-1)), strict=True):
        if int(np.argmax(same[later])) == earlier:
            repeats.append((int(later), int(earlier), float(iou[later, earlier])))
    return repeats
