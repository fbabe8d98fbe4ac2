"""The tile detector: built once from a weights path, shared by every request.

Two stages: a YOLO localiser finds the tiles (one class, "tile", for the shipped model), and the tile
classifier (``vision.detect.classifier``) names each box from a crop of the photo. A localiser trained with
all the tile classes works alone. Serving opens ``.onnx`` weights through ONNX Runtime; a ``.pt`` checkpoint
is the model factory's (``smj ship`` makes the ``.onnx``; ``vision.factory.torch_models`` reads a ``.pt``
through the same looks, to measure a run before shipping it). ``detect`` keeps no
state between calls and takes its thresholds as arguments, so one ``Detector`` is safe to use from
many threads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from vision.detect import looks, parts, rowfit
from vision.detect.classifier import ClassifierError, TileClassifier
from vision.detect.fusion import fuse
from vision.detect.letterbox import decode_output, letterbox, unletterbox
from vision.detect.onnx_model import Runtime, load_onnx
from vision.detect.tileset import TileSet
from vision.detect.view import AS_IS, ONE_VIEW, Located, View, Views
from vision.detections import DETECTOR_CLASSES, Detections
from vision.images import ImageError, Photo

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
DEFAULT_WEIGHTS = MODELS_DIR / "tiles.onnx"
DEFAULT_CLASSIFIER = MODELS_DIR / "tile_faces.onnx"
LOCALISER_NAMES = (["tile"], ["item"])  # a single-class model: ultralytics names it "item"
DEFAULT_CONF = 0.55  # the operating point of best exact-tiles rate on the real validation photos
BOX_CONF = 0.3  # with a classifier: the localiser's own floor, whatever ``conf`` is asked for
MAX_TILES = 400
"""The most tiles a photo is read with: a photo of a whole table (four players' rows, melds, discards) shows
under 150; beyond this it is no photo of a hand (a mosaic, a wall of tiles) and is refused,
``ImageError`` ``too_many_tiles``, before any face is read."""
DEFAULT_IOU = 0.6  # non-maximum suppression of a close-up's boxes
# ... and of a whole table's (its tiles small at the first look): its flat tiles in diagonal rows and
# packed discards get boxes that overlap a neighbour's as much as a second box on one tile (IoU 0.4-0.6):
# at 0.5 more 12 MP scenes read their whole multiset of tiles; a close-up at 0.5 loses tiles of concealed
# kongs, so it keeps 0.6 (models/HISTORY.md, "The reader's constants").
LARGE_PHOTO_IOU = 0.5
Found = tuple[np.ndarray, np.ndarray, np.ndarray]  # boxes (photo pixels), scores, classes


class Sought(NamedTuple):
    """What ``Detector.find_tiles`` found: boxes (photo pixels), scores, classes, and ``close_up``: the photo
    was read in its first look (its tiles large enough there), not looked at closer."""

    boxes: np.ndarray
    scores: np.ndarray
    classes: np.ndarray
    close_up: bool


class ModelError(RuntimeError):
    """The weights are missing or not a tile detector of this project."""


@dataclass(frozen=True, eq=False)
class Examples:
    """Every tile the localiser is sure of in a photo of a set (``Detector.examples``): ``boxes`` in photo
    pixels, the classifier's ``probabilities``, and the features and crops of every view the reader uses,
    (N, 4, D) and (N, 4, S, S, 3), as ``TileClassifier.example_views`` orders them."""

    boxes: np.ndarray
    scores: np.ndarray  # the localiser's
    probabilities: np.ndarray
    features: np.ndarray
    crops: np.ndarray


class Detector:
    """``Detector(path)`` loads ``.onnx`` weights with ONNX Runtime.

    A single-class localiser reads the faces with ``classifier`` (default: the shipped
    ``models/tile_faces.onnx``); a classifier given to a multi-class model re-reads its boxes.
    """

    # the most boxes a photo is read with (None: any number, for the tools that cut a dataset's crops
    # from every false alarm of a cluttered photo)
    max_tiles: int | None = MAX_TILES

    def __init__(
        self,
        weights: Path | str = DEFAULT_WEIGHTS,
        *,
        classifier: Path | str | None = None,
        threads: int | None = None,
        fit_rows: bool = True,
        runtime: Runtime | None = None,
        max_tiles: int | None = MAX_TILES,
    ) -> None:
        self.weights = Path(weights)
        self.max_tiles = max_tiles
        # boxes of packed standing rows split and snapped at their seams (vision.detect.rowfit)
        self.fit_rows = fit_rows
        if not self.weights.is_file():
            raise ModelError(f"{self.weights}: no such weights file (the shipped model is models/tiles.onnx)")
        # one model call at a time (the classifier's likewise): ultralytics predictors keep state, and two
        # ONNX Runtime calls at once on one session gain nothing on cores the first already fills, while its
        # memory arena grows to hold both (models/HISTORY.md)
        self._lock = threading.Lock()
        self.runtime = runtime  # the one it loaded with (load_onnx)
        names = self._load(threads)
        self.localiser = names in LOCALISER_NAMES
        self._class_map = np.zeros(1, np.int64) if self.localiser else _class_map(names)
        if self.localiser and classifier is None:
            classifier = DEFAULT_CLASSIFIER
        try:
            self.classifier = self._classifier(Path(classifier), threads) if classifier else None
        except ClassifierError as error:
            raise ModelError(str(error)) from None

    def _classifier(self, weights: Path, threads: int | None) -> TileClassifier:
        return TileClassifier(weights, threads=threads, runtime=self.runtime)

    def _load(self, threads: int | None) -> list[str]:
        """Open the localiser's ONNX weights; its class names."""
        model = load_onnx(self.weights, threads, ModelError, "detect", self.runtime)
        self.runtime = model.runtime
        self._session = model.session
        self.imgsz = model.imgsz
        self.end2end = model.metadata.get("end2end", "False") == "True"
        self._input = model.input.name
        self.dynamic = not all(isinstance(side, int) for side in model.input.shape[2:])
        return model.names

    def set_classifier(self) -> TileClassifier:
        """The classifier that reads a tile set (it gives each crop's features); ``ModelError`` when this
        detector has none."""
        if self.classifier is None or not self.classifier.has_features:
            raise ModelError("this detector's classifier gives no features: it reads no tile sets")
        return self.classifier

    @property
    def class_names(self) -> tuple[str, ...]:
        return DETECTOR_CLASSES

    def detect(
        self,
        photo: Photo | np.ndarray,
        view: View = AS_IS,
        *,
        conf: float = DEFAULT_CONF,
        iou: float | None = None,
        box_conf: float | None = None,
        tile_set: TileSet | None = None,
    ) -> Detections:
        """Tiles in ``view`` of an RGB image (``locate``, then ``read``); boxes in the image's own pixels.
        The view is the caller's to choose (``vision.reading``: a whole table whose rows run slantwise is
        read turned level, a close-up that reads as no win looked at again): the detector decides none."""
        located = self.locate(photo, view, conf=conf, iou=iou, box_conf=box_conf)
        return self.read(located, conf=conf, tile_set=tile_set)

    def read(
        self,
        located: Located,
        *,
        conf: float = DEFAULT_CONF,
        tile_set: TileSet | None = None,
    ) -> Detections:
        """The tiles ``locate`` found, their faces read; boxes in the photo's own pixels. ``tile_set``: the
        set on the table; its examples name the faces with the classifier (``vision.detect.tileset``)."""
        read, boxes, scores, classes = self._fitted(located)
        width, height = located.size
        if self.classifier is None:
            keep = (classes >= 0) & (scores >= conf)
            return Detections(boxes[keep], classes[keep], scores[keep], (width, height))
        # a box the localiser is sure enough of, named by the classifier (unless "none"; ``fusion.fuse``).
        # Every tile is read from two views (``TileClassifier.read_views``): a whole table's row tiles turned
        # along their row both ways up (other players' rows face the camera upside down), a close-up's from
        # their box and turned along the row (the views measured against others: models/HISTORY.md)
        if tile_set is not None:
            self.set_classifier()
        views = self.classifier.read_views(located.pixels, read, scores, flip_row_tiles=not located.close_up)
        probs = views.probabilities
        if tile_set is not None:
            assert views.features is not None
            probs = tile_set.read(probs, views.features)
        classes, scores, keep, others, other_scores = fuse(scores, probs, conf)
        return Detections(
            boxes[keep], classes[keep], scores[keep], (width, height), others[keep], other_scores[keep]
        )

    def examples(self, located: Located) -> Examples:
        """What a set is taught from, in a photo of it (``Examples``): the tiles ``locate`` found there."""
        classifier = self.set_classifier()
        read, boxes, scores, _ = self._fitted(located)
        crops, features, probabilities = classifier.example_views(located.pixels, read, scores)
        assert features is not None
        return Examples(boxes, scores, probabilities, features, crops)

    def boxes(self, located: Located) -> np.ndarray:
        """The boxes of the tiles ``locate`` found, in the photo's own pixels, as ``read`` names them (before
        the classifier leaves out what is no tile)."""
        return self._fitted(located)[1]

    def _fitted(self, located: Located) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The boxes the faces are read from (in the view's pixels), the boxes in the photo's own pixels, and
        their scores and classes: two boxes on the halves of a turned meld tile become one, a box across two
        touching tiles of a standing row a box for each, and the boxes of such rows are snapped to their
        seams (``vision.detect.rowfit``). The faces are read from the localiser's boxes (joined and split):
        from the fitted ones 12 MP packed rows of the usual styles read their player's tiles exactly in 11 of
        20 scenes against 13."""
        read = boxes = located.boxes
        scores, classes = located.scores, located.classes
        if self.fit_rows:
            read, source, boxes = rowfit.fit(located.pixels, boxes, scores, located.rows)
            scores, classes = scores[source], classes[source]
        turn = located.view.turn
        return read, boxes if turn is None else turn.boxes_back(boxes), scores, classes

    def locate(
        self,
        photo: Photo | np.ndarray,
        view: View = AS_IS,
        *,
        conf: float = DEFAULT_CONF,
        iou: float | None = None,
        box_conf: float | None = None,
    ) -> Located:
        """The localiser's tiles in ``view`` of an RGB image, before their faces are read
        (``find_tiles``), the boxes on parts of a tile (a pip, a half) dropped or joined
        (``vision.detect.parts``).

        ``box_conf`` is the localiser's own floor: by default ``BOX_CONF`` with a classifier (a box must
        be that sure of being a tile, whatever its face) and ``conf`` without one; an evaluation lowers it
        to rank every box. ``iou``: the suppression threshold of every look, by default ``DEFAULT_IOU``
        for a photo read in its first look and ``LARGE_PHOTO_IOU`` for one looked at closer."""
        pixels = photo.pixels if isinstance(photo, Photo) else photo
        height, width = pixels.shape[:2]
        floor = box_conf if box_conf is not None else BOX_CONF if self.classifier is not None else conf
        if view.turn is not None:
            pixels = view.turn.pixels(pixels)
        sought = self.find_tiles(pixels, floor, iou, enlarged=view.enlarged)
        boxes, scores, classes = parts.without_parts(sought.boxes, sought.scores, sought.classes)
        if self.max_tiles is not None and len(boxes) > self.max_tiles:
            raise ImageError(
                "too_many_tiles",
                f"the photo shows {len(boxes)} tiles; a photo of a hand holds at most {self.max_tiles}: "
                "photograph the hand, not the wall",
            )
        return Located(view, pixels, boxes, scores, classes, (width, height), sought.close_up)

    def _close_up_side(self, *, enlarged: bool = False) -> int:
        return looks.close_up_side(self.imgsz, enlarged=enlarged) if self.dynamic else self.imgsz

    def views(self, located: Located) -> Views:
        """The views this detector can take of a photo whose view as it is found ``located``: a photo whose
        tiles were looked at closer, turned level when its rows run slantwise; a close-up (its tiles read in
        the first look) that reads as no win, turned level or enlarged. A model of one input shape has one
        view."""
        if not self.dynamic:
            return ONE_VIEW
        if located.close_up:
            if located.view != AS_IS:
                return Views()
            return Views(second=(looks.SecondLook.TURNED, looks.SecondLook.ENLARGED))
        return Views(level=True)

    def find_tiles(
        self, pixels: np.ndarray, conf: float, iou: float | None = None, *, enlarged: bool = False
    ) -> Sought:
        """The localiser's boxes, scores and classes in photo pixels, and whether the photo was read in its
        first look (a close-up).

        The route follows the tiles, not the photo's pixel count: every photo is first looked at whole at
        ``looks.close_up_side`` (448 px for a 384 px localiser; 512 px ``enlarged``), so the same scene
        stored at any size shows the localiser the same first look. Where its tiles come out larger than it
        trained on (``looks.LARGE_TILE_PX``) the photo is looked at again reduced (``looks.farther_look``;
        kept when it finds as many tiles); where they come out small (``looks.SMALL_TILE_PX``) the region
        around them is looked at closer, at the trained scale (``looks.closer_looks``: windows sized by the
        tiles in the photo's own pixels), and again as its own boxes measure them, merged with the first
        look's boxes outside that region. Otherwise (tiles legible, or none seen) the first look is the
        reading: a close-up. A model of one input shape looks at that shape, and closer in windows of it.
        """
        height, width = pixels.shape[:2]
        first = looks.whole_photo(width, height, self._close_up_side(enlarged=enlarged))
        close_iou = DEFAULT_IOU if iou is None else iou
        found = self._look(pixels, first, conf, close_iou)
        big = looks.large_tile(found[0], found[1], first.scale) if self.dynamic else None
        if big is not None:  # tiles larger than it trained on: seen again reduced to the trained size
            farther = self._look(pixels, looks.farther_look(width, height, big), conf, close_iou)
            if looks.confident_count(farther[1]) >= looks.confident_count(found[1]):
                return Sought(*farther, close_up=True)
            return Sought(*found, close_up=True)
        tile = looks.typical_tile(found[0], found[1])
        searched = tile is None and self.dynamic
        if searched:  # no tile legible: too small to see there
            found = self._search(pixels, found, conf, LARGE_PHOTO_IOU if iou is None else iou)
            tile = looks.typical_tile(found[0], found[1])
        if tile is None or tile * first.scale >= looks.SMALL_TILE_PX:
            return Sought(*found, close_up=True)  # nothing legible anywhere, or tiles large enough already
        whole_table = tile * first.scale < looks.FAR_TILE_PX
        if iou is None:
            iou = LARGE_PHOTO_IOU if whole_table else DEFAULT_IOU
        if whole_table and self.dynamic and not searched:
            # the whole table seen again at the localiser's input size, as it trained on whole scenes: its
            # boxes place the region and size the closer looks (the 448 px look's place it worse on the
            # held-out 12 MP hands, models/HISTORY.md)
            at_input = self._look(pixels, looks.whole_photo(width, height, self.imgsz), conf, iou)
            measured = looks.typical_tile(at_input[0], at_input[1])
            if measured is not None:
                found, tile = at_input, measured
        region = looks.region_around(found[0], found[1], tile, width, height)
        max_side = looks.MAX_LOOK_SIDE if self.dynamic else self.imgsz
        outside = ~looks.inside(found[0], region)
        elsewhere = (found[0][outside], found[1][outside], found[2][outside])
        closer = looks.closer_looks(region, tile, max_side)
        merged = self._merged(pixels, closer, conf, iou, elsewhere)
        # its tiles measured again in the closer looks (vision.detect.looks)
        for _ in range(looks.REFINES if self.dynamic else 0):
            inner = looks.inside(merged[0], region)
            measured = looks.typical_tile(merged[0][inner], merged[1][inner])
            refined = looks.refined_tile(tile, measured, closer[0].scale)
            if refined is None:
                break
            tile, closer = refined, looks.closer_looks(region, refined, max_side)
            merged = self._merged(pixels, closer, conf, iou, elsewhere)
        return Sought(*merged, close_up=not whole_table)

    def _search(self, pixels: np.ndarray, found: Found, conf: float, iou: float) -> Found:
        """The whole photo at finer scales in turn (``looks.SEARCH_SIDES`` that it has the pixels for: a
        photo smaller than the first is never searched), while each shows more tiles than the last and until
        one shows a hand (``looks.HAND_TILES``)."""
        height, width = pixels.shape[:2]
        long_side = max(width, height)
        for side in looks.SEARCH_SIDES:
            if side > long_side:
                break
            searched = self._merged(
                pixels, looks.search_looks(width, height, side, looks.MAX_LOOK_SIDE), conf, iou
            )
            if looks.confident_count(searched[1]) <= looks.confident_count(found[1]):
                break  # a finer scale shows no more: the photo holds few tiles
            found = searched
            if looks.confident_count(found[1]) >= looks.HAND_TILES or side >= long_side:
                break
        return found

    def _merged(
        self,
        pixels: np.ndarray,
        windows: list[looks.Look],
        conf: float,
        iou: float,
        elsewhere: Found | None = None,
    ) -> Found:
        """The boxes of ``windows`` (a tile a seam cuts is left to the window holding it whole) and
        ``elsewhere`` (boxes, scores, classes found outside them), one box per tile."""
        parts = [self._look(pixels, look, conf, iou, seams=True) for look in windows]
        if elsewhere is not None:
            parts.append(elsewhere)
        boxes = np.concatenate([part[0] for part in parts]).reshape(-1, 4)
        scores = np.concatenate([part[1] for part in parts])
        classes = np.concatenate([part[2] for part in parts])
        keep = looks.merge(boxes, scores, classes, iou)
        return boxes[keep], scores[keep], classes[keep]

    def _look(
        self, pixels: np.ndarray, look: looks.Look, conf: float, iou: float, *, seams: bool = False
    ) -> Found:
        """Run the localiser on ``look``, boxes in photo pixels; ``seams``: drop tiles a window edge cuts."""
        x1, y1, x2, y2 = look.region
        crop = pixels[y1:y2, x1:x2]
        in_w, in_h = look.input_size
        shape = (looks.round_up(in_h), looks.round_up(in_w)) if self.dynamic else (self.imgsz, self.imgsz)
        boxes, scores, classes = self._infer(crop, shape, conf, iou)
        boxes = boxes + np.array([x1, y1, x1, y1], np.float32)
        keep = classes >= 0
        if seams:
            keep &= ~looks.cut_at_seam(boxes, look, pixels.shape[1], pixels.shape[0])
        return boxes[keep], scores[keep], classes[keep]

    def _infer(self, pixels: np.ndarray, shape: tuple[int, int], conf: float, iou: float) -> Found:
        """One run of the localiser on ``pixels`` letterboxed to ``shape``: boxes in their pixels."""
        canvas, gain, pad = letterbox(pixels, shape)
        # the network's (1, 3, H, W) float input in [0, 1], filled and scaled in one array: a quarter of the
        # time of a contiguous copy and a divided second one, the same values
        blob = np.empty((1, 3, *canvas.shape[:2]), np.float32)
        blob[0] = canvas.transpose(2, 0, 1)
        np.divide(blob, np.float32(255.0), out=blob)
        with self._lock:
            output = self._session.run(None, {self._input: blob})[0][0]
        boxes, scores, classes = decode_output(output, conf, iou, end2end=self.end2end)
        boxes = unletterbox(boxes, gain, pad, pixels.shape[1], pixels.shape[0])
        return boxes, scores.astype(np.float32), self._class_map[classes]


def _class_map(names: list[str]) -> np.ndarray:
    """Model class index -> this project's class id (-1 for a class we don't know)."""
    return np.array([DETECTOR_CLASSES.index(n) if n in DETECTOR_CLASSES else -1 for n in names], np.int64)
