"""From photo to score: decode -> read (``vision.reading``: the looks at the photo, its tiles detected and
grouped, the reading searched) -> warn -> score. Every entry point (CLI, API) goes through here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoring import CHENGDU, ErrorCode, InvalidHandError, Score, score, waits
from scoring.hand import Hand, WinContext
from scoring.presets import Rules
from scoring.waits import Wait, waits_to_json
from vision.detect.detector import DEFAULT_CONF, Examples
from vision.detect.tileset import ROW_SUITS, Layout, TileSet, name_layout
from vision.detections import DETECTOR_CLASSES, Detections
from vision.grouping.grouper import GROUPER, GrouperConfig, Grouping
from vision.grouping.search import DISCARD_WIN, SEARCH, SearchConfig, Searched, Terms, search
from vision.images import DEFAULT_MAX_PIXELS, Photo, load_photo
from vision.reading import Reader, SetReader, first_detections, first_view, read_photo

# Large JPEGs are decoded reduced (by the JPEG decoder itself) to at least this long a side:
# the detector sees 640 pixels, and a 12 MP photo decodes several times faster.
DECODE_LONG_SIDE = 1600


def decode_photo(
    source: bytes | str | Path, *, max_pixels: int = DEFAULT_MAX_PIXELS, max_decode_bytes: int | None = None
) -> Photo:
    """Raises ``ImageError`` (not_an_image, corrupt_image, too_many_pixels)."""
    return load_photo(
        source, max_pixels=max_pixels, reduce_to=DECODE_LONG_SIDE, max_decode_bytes=max_decode_bytes
    )


def detect_tiles(
    source: bytes | str | Path | Photo,
    detector: Reader,
    *,
    conf: float = DEFAULT_CONF,
    tile_set: TileSet | None = None,
) -> tuple[Photo, Detections]:
    """Decode (unless given a Photo) and detect in the photo's first view (``vision.reading.first_view``; the
    faces read with ``tile_set``, the set on the table, when given); boxes are in the upright full-resolution
    photo's pixels."""
    photo = source if isinstance(source, Photo) else decode_photo(source)
    detections = first_detections(photo, detector, conf=conf, tile_set=tile_set)
    return photo, detections.scaled(photo.scale)


@dataclass(frozen=True, eq=False)
class Taught:
    """A set learnt from a photo of its layout (``teach_set``): the photo's tiles (``Examples``), the layout
    naming them, and the set they make."""

    photo: Photo
    examples: Examples
    layout: Layout
    tile_set: TileSet

    def faces(self) -> list[dict[str, str]]:
        """Each tile of the layout, in its order: ``face`` (named by its place) and ``classifier_alone``
        (what the classifier reads it as without the set: a class name, or ``none``)."""
        names = [*DETECTOR_CLASSES, "none"]
        alone = self.examples.probabilities[list(self.layout.tiles)].argmax(axis=1)
        return [
            {"face": DETECTOR_CLASSES[face], "classifier_alone": names[int(read)]}
            for face, read in zip(self.layout.faces, alone, strict=True)
        ]


def teach_set(
    source: bytes | str | Path | Photo, detector: SetReader, name: str, suits: tuple[str, ...] = ROW_SUITS
) -> Taught:
    """Learn a set from a photo of its layout (``vision.detect.tileset.name_layout``; ``suits``: its rows).
    Raises ``ImageError`` for a photo that can't be read and ``LayoutError`` for one that is not the
    layout."""
    detector.set_classifier()  # a reader that learns no sets is refused before any look
    photo = source if isinstance(source, Photo) else decode_photo(source)
    examples = detector.examples(first_view(photo, detector, conf=DEFAULT_CONF))
    layout = name_layout(examples.boxes, examples.probabilities, suits, examples.scores)
    tiles = list(layout.tiles)
    views = examples.features.shape[1]
    faces = np.repeat(np.asarray(layout.faces, np.int64), views)
    features = examples.features[tiles].reshape(len(tiles) * views, -1)
    return Taught(photo, examples, layout, TileSet.of(name, faces, features))


def tile_views(photo: Photo, detector: SetReader, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The crops (N, 4, S, S, 3) and features (N, 4, D) of tiles at ``boxes`` (the upright full-resolution
    photo's pixels, as ``detect_tiles`` gives them) in every view the reader uses: what a set keeps of a
    tile the player named (``TileClassifier.example_views``). Raises ``ModelError`` for a classifier that
    gives no features (``Detector.set_classifier``)."""
    classifier = detector.set_classifier()
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4) / photo.scale
    crops, features, _ = classifier.example_views(photo.pixels, boxes)
    assert features is not None
    return crops, features


def recognition_json(photo: Photo, detections: Detections, grouping: Grouping) -> dict[str, object]:
    """``{"width", "height"}`` of the upright photo, ``"detections"`` and the grouping (``Grouping.to_json``):
    what the API's ``recognize`` answers."""
    width, height = photo.original_size
    return {"width": width, "height": height, "detections": detections.to_json(), **grouping.to_json()}


@dataclass(frozen=True)
class PhotoScore:
    photo: Photo
    detections: Detections
    grouping: Grouping
    score: Score | None  # None when no hand could be read
    rules: Rules
    waits: tuple[Wait, ...] | None = None  # what a hand read one tile short of a win waits on (听牌)
    groupings: int = 1  # groupings the reading search spent, over every look

    @property
    def hand(self) -> Hand | None:
        return self.grouping.hand

    def to_json(self, image: str | None = None) -> dict[str, object]:
        """What ``smj score PHOTO --json`` prints (``image``: the path as given) and the API's
        ``score-photo`` answers (without it)."""
        return {
            **({"image": image} if image is not None else {}),
            **recognition_json(self.photo, self.detections, self.grouping),
            "score": None if self.score is None else self.score.to_json(),
            "waits": None if self.waits is None else waits_to_json(self.waits, self.rules),
        }


@dataclass(frozen=True)
class Recognition:
    """A photo's tiles as read (``detections``, as the search for a winning reading left them) and their
    ``grouping``; ``groupings``: how many the reading search spent over every look."""

    photo: Photo
    detections: Detections
    grouping: Grouping
    groupings: int


def recognize(
    source: bytes | str | Path | Photo,
    detector: Reader,
    *,
    conf: float = DEFAULT_CONF,
    rules: Rules = CHENGDU,
    context: WinContext = DISCARD_WIN,
    tile_set: TileSet | None = None,
    grouper: GrouperConfig = GROUPER,
    reach: SearchConfig = SEARCH,
) -> Recognition:
    """Decode (unless given a Photo) and read the hand (``vision.reading.read_photo``: the photo's looks and
    the edits of their readings, cheapest first), so the detections returned may differ from the
    detector's: a tile re-read, an unsure tile (found below ``conf``) taken back, a tile left out. The
    reading is warned of blur and of tiles torn between two faces. ``tile_set``: the set on the table, whose
    examples name the faces (``vision.detect.tileset``); ``grouper``: the grouper's settings, handed to every
    grouping; ``reach``: the search's (``SearchConfig``)."""
    photo = source if isinstance(source, Photo) else decode_photo(source)
    read = read_photo(photo, detector, Terms(conf, rules, context, reach, grouper), tile_set)
    return Recognition(photo, read.detections, read.grouping, read.groupings)


def read_hand(
    detections: Detections,
    unsure: Detections | None = None,
    *,
    threshold: float = DEFAULT_CONF,
    rules: Rules = CHENGDU,
    context: WinContext = DISCARD_WIN,
    grouper: GrouperConfig = GROUPER,
) -> Searched:
    """Group the detections (with ``grouper``'s settings); a reading that is no legal win under ``rules`` in
    ``context`` goes through the search for a winning one (``vision.grouping.search``): tiles re-read as
    the classifier's next choices, ``unsure`` tiles (found below ``threshold``) taken back, the least sure
    tiles left out."""
    return search(detections, unsure, threshold=threshold, rules=rules, context=context, grouper=grouper)


def score_photo(
    source: bytes | str | Path | Photo,
    detector: Reader,
    context: WinContext,
    rules: Rules,
    *,
    conf: float = DEFAULT_CONF,
    tile_set: TileSet | None = None,
    grouper: GrouperConfig = GROUPER,
) -> PhotoScore:
    read = recognize(
        source, detector, conf=conf, rules=rules, context=context, tile_set=tile_set, grouper=grouper
    )
    hand = read.grouping.hand
    result = score(hand, context, rules) if hand is not None else None
    error = result.error if result is not None else None
    wrong_count = error is not None and error.code is ErrorCode.WRONG_TILE_COUNT
    waiting = _waits(hand, context, rules) if hand is not None and wrong_count else None
    return PhotoScore(read.photo, read.detections, read.grouping, result, rules, waiting, read.groupings)


def _waits(hand: Hand, context: WinContext, rules: Rules) -> tuple[Wait, ...] | None:
    """What ``hand`` waits on when it is one tile short of a win (a photo of a waiting hand, or a tile
    missed), else None."""
    try:
        return waits(hand.concealed, hand.melds, context, rules)
    except InvalidHandError:
        return None
