"""The shipped detector: loading, box mapping, EXIF, runtimes agreeing, thread safety, and what it finds."""

from __future__ import annotations

import io
import json
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision.detect.detector import DEFAULT_WEIGHTS, MODELS_DIR, Detector, ModelError, Sought
from vision.detections import DETECTOR_CLASSES, Detections
from vision.geometry.boxes import box_iou
from vision.images import load_photo
from vision.reading import first_detections

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_NAMES = ["hand", "hand_melds", "hand_rotated"]

pytestmark = pytest.mark.skipif(not DEFAULT_WEIGHTS.is_file(), reason="no shipped model in models/")


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector(DEFAULT_WEIGHTS)


def _truth(name: str) -> tuple[np.ndarray, np.ndarray]:
    scene = json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
    boxes = np.array([b["box"] for b in scene["boxes"]], np.float32)
    classes = np.array([b["cls"] for b in scene["boxes"]], np.int64)
    return boxes, classes


def test_missing_or_bad_weights_raise_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no such weights"):
        Detector(tmp_path / "none.onnx")
    bogus = tmp_path / "bogus.onnx"
    bogus.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="not a loadable"):
        Detector(bogus)


def test_the_wrong_kind_of_model_is_refused_by_name() -> None:
    from vision.detect.classifier import ClassifierError, TileClassifier

    with pytest.raises(ModelError, match=r"a tile classifier .* where a tile localiser .* is needed"):
        Detector(MODELS_DIR / "tile_faces.onnx")
    with pytest.raises(ClassifierError, match=r"a tile localiser .* where a tile classifier .* is needed"):
        TileClassifier(MODELS_DIR / "tiles.onnx")


def test_a_pt_file_that_is_no_trained_detector_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("ultralytics")
    config = tmp_path / "notes.pt"
    config.write_text("# not a checkpoint\n", encoding="utf-8")
    from vision.factory.torch_models import TorchDetector

    with pytest.raises(ModelError, match=r"notes\.pt: serving opens \.onnx weights; a \.pt checkpoint"):
        Detector(config)
    with pytest.raises(ModelError, match=r"notes\.pt"):
        TorchDetector(config)
    with pytest.raises(ModelError, match=r"a tile classifier .* where a tile localiser .* is needed"):
        TorchDetector(MODELS_DIR / "tile_faces.pt")


def test_detections_are_in_image_pixels(detector: Detector) -> None:
    photo = load_photo(EXAMPLES / "hand.jpg")
    found = detector.detect(photo, conf=0.05)
    assert isinstance(found, Detections)
    assert found.image_size == photo.size
    if len(found):
        assert found.boxes[:, [0, 2]].max() <= photo.size[0] + 0.5
        assert found.boxes[:, [1, 3]].max() <= photo.size[1] + 0.5
        assert found.boxes.min() >= 0
        assert set(found.names) <= set(DETECTOR_CLASSES)


def test_a_higher_threshold_keeps_a_subset(detector: Detector) -> None:
    photo = load_photo(EXAMPLES / "hand_melds.jpg")
    low = detector.detect(photo, conf=0.05)
    high = detector.detect(photo, conf=0.5)
    assert len(high) <= len(low)
    assert (high.confidences >= 0.5).all()


def test_exif_rotated_photo_gives_rotated_boxes(detector: Detector) -> None:
    """The same pixels stored sideways with EXIF orientation 6 must give the same boxes, upright."""
    upright = Image.open(EXAMPLES / "hand.jpg")
    stored = upright.transpose(Image.Transpose.ROTATE_90)  # what a phone stores; EXIF 6 turns it back
    exif = Image.Exif()
    exif[0x0112] = 6
    buffer = io.BytesIO()
    stored.save(buffer, "JPEG", quality=95, exif=exif.tobytes())
    rotated = detector.detect(load_photo(buffer.getvalue()), conf=0.2)
    direct = detector.detect(load_photo(EXAMPLES / "hand.jpg"), conf=0.2)
    assert rotated.image_size == direct.image_size
    if len(direct) and len(rotated):
        ious = box_iou(direct.boxes, rotated.boxes)
        assert np.median(ious.max(axis=1)) > 0.7


def test_shared_between_threads_gives_the_same_answers(detector: Detector) -> None:
    photos = [load_photo(EXAMPLES / f"{name}.jpg") for name in EXAMPLE_NAMES]
    alone = [detector.detect(p, conf=0.1) for p in photos]
    with ThreadPoolExecutor(max_workers=3) as pool:
        together = list(pool.map(lambda p: detector.detect(p, conf=0.1), photos * 2))
    for first, again in zip(alone * 2, together, strict=True):
        np.testing.assert_allclose(first.boxes, again.boxes, atol=1e-3)
        assert first.class_ids.tolist() == again.class_ids.tolist()


class _CountingSession:
    """An ONNX Runtime session's stand-in that counts how many of its ``run`` calls are in flight at once."""

    def __init__(self, session: object) -> None:
        self._session = session
        self._guard = threading.Lock()
        self.in_flight = 0
        self.most = 0

    def run(self, *args: object, **kwargs: object) -> object:
        with self._guard:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            time.sleep(0.01)  # long enough for another thread to come in, were it let in
            return self._session.run(*args, **kwargs)  # type: ignore[attr-defined]
        finally:
            with self._guard:
                self.in_flight -= 1


def test_threads_sharing_it_call_each_model_one_at_a_time() -> None:
    """Concurrent requests in one serving worker queue for each model instead of running it together:
    two calls at once on a 2-core machine are no faster, and each grows the session's memory arena."""
    shared = Detector(DEFAULT_WEIGHTS)
    assert shared.classifier is not None
    localiser = _CountingSession(shared._session)
    classifier = _CountingSession(shared.classifier._session)
    shared._session, shared.classifier._session = localiser, classifier
    photos = [load_photo(EXAMPLES / f"{name}.jpg") for name in EXAMPLE_NAMES]
    with ThreadPoolExecutor(max_workers=3) as pool:
        found = list(pool.map(shared.detect, photos * 2))
    assert all(len(tiles) for tiles in found)
    assert localiser.most == 1 and classifier.most == 1


def test_onnx_and_torch_runtimes_agree(detector: Detector) -> None:
    """At the operating threshold the two runtimes find the same tiles and read them alike; a tile the
    classifier is torn about (the 1m pong of this photo lies in a tilted column, 一 beside a stroke of
    its neighbour) may flip on a one-pixel difference of its box, but only to its next reading."""
    from vision.factory.torch_models import TorchDetector

    torch_detector = TorchDetector(MODELS_DIR / "tiles.pt", classifier=MODELS_DIR / "tile_faces.pt")
    photo = load_photo(EXAMPLES / "hand_melds.jpg")
    a = detector.detect(photo)
    b = torch_detector.detect(photo)
    assert abs(len(a) - len(b)) <= max(2, len(a) // 10)
    assert len(a) and len(b)
    assert a.alternatives is not None and b.alternatives is not None
    ious = box_iou(a.boxes, b.boxes)
    best = ious.argmax(axis=1)
    matched = np.flatnonzero(ious.max(axis=1) > 0.8)
    assert len(matched) > 0.8 * len(a)
    same = a.class_ids[matched] == b.class_ids[best[matched]]
    assert same.mean() > 0.8
    for i in matched[~same]:
        j = best[i]
        assert b.class_ids[j] in a.alternatives[i] and a.class_ids[i] in b.alternatives[j]


def test_shipped_model_finds_the_tiles_of_the_bundled_photos(detector: Detector) -> None:
    """Recall and precision of suited tiles at the operating threshold on the bundled synthetic photos.

    The floor is what the shipped model measurably does (models/README.md): it rises with the model.
    """
    hits = truths = found_total = 0
    for name in EXAMPLE_NAMES:
        boxes, classes = _truth(name)
        found = first_detections(load_photo(EXAMPLES / f"{name}.jpg"), detector)  # as a reading sees it
        ious = box_iou(found.boxes, boxes)
        for i in range(len(found)):
            if ious.shape[1] and ious[i].max() >= 0.5 and classes[ious[i].argmax()] == found.class_ids[i]:
                hits += 1
        truths += len(boxes)
        found_total += len(found)
    manifest = json.loads((MODELS_DIR / "manifest.json").read_text(encoding="utf-8"))
    floor = manifest["test_floors"]["examples_recall"]
    assert floor > 0
    assert hits / truths >= floor, Counter({"hits": hits, "truths": truths})
    assert found_total == 0 or hits / found_total >= floor * 0.8


def test_a_suited_reading_less_likely_than_an_honour_is_no_other_reading(
    detector: Detector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tile read s1 0.30, honour 0.25, p8 0.20, m1 0.15: the honour is likelier than p8 and m1, so they
    are no other readings (confidence 0): the tile is not kept for its pooled readings, nor re-read as p8."""
    from vision.contract import CLASSIFIER_CLASSES
    from vision.detect.classifier import Views

    boxes = np.array([[10, 10, 40, 50], [60, 10, 90, 50]], np.float32)
    monkeypatch.setattr(
        detector,
        "find_tiles",
        lambda *_, **__: Sought(boxes, np.full(2, 0.9, np.float32), np.zeros(2, int), True),
    )
    probs = np.zeros((2, len(CLASSIFIER_CLASSES)), np.float32)
    s1, p8, m1, honour = (DETECTOR_CLASSES.index(name) for name in ("s1", "p8", "m1", "honour"))
    probs[0, [s1, honour, p8, m1]] = [0.30, 0.25, 0.20, 0.15]
    probs[1, [s1, p8, m1, honour]] = [0.30, 0.25, 0.20, 0.15]  # both others likelier than an honour
    assert detector.classifier is not None
    monkeypatch.setattr(detector.classifier, "read_views", lambda *_, **__: Views(probs, None))
    found = detector.detect(np.zeros((100, 100, 3), np.uint8), conf=0.3)
    assert found.alternatives is not None and found.alternative_confidences is not None
    assert [DETECTOR_CLASSES[c] for c in found.alternatives[0]] == ["p8", "m1"]
    np.testing.assert_allclose(found.alternative_confidences[0], [0.0, 0.0])
    np.testing.assert_allclose(
        found.alternative_confidences[1], np.sqrt(0.9 * np.array([0.25, 0.20])), rtol=1e-5
    )
    assert found.presences[0] == pytest.approx(found.confidences[0])
    assert found.presences[1] > found.confidences[1]


def _models_with_runtime(folder: Path, runtime: object) -> Path:
    """A models folder of links to the shipped weights and a manifest holding ``runtime``."""
    folder.mkdir()
    for name in ("tiles.onnx", "tile_faces.onnx"):
        (folder / name).symlink_to(MODELS_DIR / name)
    (folder / "manifest.json").write_text(json.dumps({"runtime": runtime}), encoding="utf-8")
    return folder


def test_both_models_take_onnx_runtimes_settings_from_the_manifest(tmp_path: Path) -> None:
    import onnxruntime as ort

    folder = _models_with_runtime(
        tmp_path / "models",
        {"intra_op_threads": 1, "graph_optimization": "basic", "cpu_mem_arena": False, "spinning": False},
    )
    detector = Detector(folder / "tiles.onnx", classifier=folder / "tile_faces.onnx")
    assert detector.classifier is not None
    for session in (detector._session, detector.classifier._session):
        options = session.get_session_options()
        assert options.intra_op_num_threads == 1 and not options.enable_cpu_mem_arena
        assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    # the shipped manifest's settings are the ones measured best here (benchmarks/bench_runtime.py)
    shipped = json.loads((MODELS_DIR / "manifest.json").read_text(encoding="utf-8"))["runtime"]
    assert Detector().runtime.graph_optimization == shipped["graph_optimization"] == "all"
    assert Detector().runtime.spinning is shipped["spinning"] is False


@pytest.mark.parametrize(
    "runtime", [{"threads": 2}, {"graph_optimization": "fastest"}, {"intra_op_threads": -1}]
)
def test_unusable_runtime_settings_are_refused_naming_the_manifest(tmp_path: Path, runtime: dict) -> None:
    folder = _models_with_runtime(tmp_path / "models", runtime)
    with pytest.raises(ModelError, match=r"manifest\.json: unusable runtime settings"):
        Detector(folder / "tiles.onnx", classifier=folder / "tile_faces.onnx")


@pytest.mark.parametrize(
    ("threads", "workers", "cores", "each"),
    [(0, 1, 2, 2), (0, 2, 2, 1), (0, 4, 2, 1), (0, 4, 16, 4), (8, 3, 16, 2)],
)
def test_workers_divide_the_model_threads_among_them(
    threads: int, workers: int, cores: int, each: int
) -> None:
    from vision.detect.onnx_model import Runtime

    assert Runtime(intra_op_threads=threads).per_worker(workers, cores) == each
    with pytest.raises(ValueError, match="at least 1"):
        Runtime().per_worker(0, cores)


def test_smj_serve_gives_each_worker_its_share_of_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """``smj serve --workers N`` sets SMJ_MODEL_THREADS for the workers it starts (unless set), and the
    service's detector opens both models' sessions with that many threads."""
    import os

    import uvicorn

    import smj
    from api.app import load_detector
    from api.cli import worker_environment
    from api.settings import Settings, get_settings
    from vision.detect.onnx_model import Runtime

    cores = len(os.sched_getaffinity(0))
    runtime = Runtime.beside(MODELS_DIR / "tiles.onnx")
    assert (
        worker_environment(1, {}) == {}
        and worker_environment(2, {"SMJ_MODEL_THREADS": "3"})["SMJ_MODEL_THREADS"] == "3"
    )
    assert worker_environment(2, {})["SMJ_MODEL_THREADS"] == str(runtime.per_worker(2, cores))
    seen: list[str | None] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: seen.append(os.environ.get("SMJ_MODEL_THREADS")))
    monkeypatch.setenv("SMJ_MODEL_THREADS", "1")
    monkeypatch.delenv("SMJ_MODEL_THREADS")  # unset, and unset again after the test
    get_settings.cache_clear()
    assert smj.main(["serve", "--workers", "4"]) == 0
    monkeypatch.setenv("SMJ_MODEL_THREADS", "3")  # a setting of the operator's own is kept
    assert smj.main(["serve", "--workers", "4"]) == 0
    assert seen == [str(runtime.per_worker(4, cores)), "3"]
    monkeypatch.delenv("SMJ_MODEL_THREADS")
    get_settings.cache_clear()
    detector = load_detector(Settings(model_threads=1))
    assert detector.classifier is not None
    for session in (detector._session, detector.classifier._session):
        assert session.get_session_options().intra_op_num_threads == 1


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_a_photo_stored_at_half_or_twice_its_size_gives_the_same_tiles(
    detector: Detector, factor: float
) -> None:
    """The bundled 1024x768 photo of a hand with its melds (tiles 60-90 px) stored again at 512x384 and
    2048x1536: the same route (a close-up: its tiles are large at the first look, whatever the pixels), the
    same tiles in the same places."""
    path = Path(__file__).resolve().parents[2] / "examples" / "hand_melds.jpg"
    original = Image.open(path).convert("RGB")
    found = []
    for scale in (1.0, factor):
        copy = original.resize((round(original.width * scale), round(original.height * scale)), Image.LANCZOS)
        data = io.BytesIO()
        copy.save(data, "JPEG", quality=95)
        photo = load_photo(data.getvalue())
        assert detector.locate(photo).close_up
        tiles = first_detections(photo, detector)
        found.append((Counter(DETECTOR_CLASSES[c] for c in tiles.class_ids), tiles.boxes / scale))
    (tiles, boxes), (tiles_scaled, boxes_scaled) = found
    assert tiles == tiles_scaled and sum(tiles.values()) >= 14
    assert (box_iou(boxes, boxes_scaled).max(axis=1) > 0.85).all()


class _BatchSizes:
    """An ONNX Runtime session's stand-in that records the batch of every call."""

    def __init__(self, session: object) -> None:
        self._session = session
        self.batches: list[int] = []

    def run(self, outputs: object, feeds: dict[str, np.ndarray]) -> object:
        self.batches.append(len(next(iter(feeds.values()))))
        return self._session.run(outputs, feeds)  # type: ignore[attr-defined]


def test_the_classifier_reads_any_number_of_crops_in_bounded_chunks(detector: Detector) -> None:
    """However many tiles a photo shows, the network sees at most ``CHUNK`` crops a call (its memory is
    bounded), and each crop reads as it does alone."""
    from vision.detect.classifier import CHUNK

    classifier = detector.classifier
    assert classifier is not None
    crops = np.random.default_rng(5).integers(0, 255, (2 * CHUNK + 7, 96, 96, 3), dtype=np.uint8)
    whole, features = classifier.infer(crops)
    spy = _BatchSizes(classifier._session)
    classifier._session, kept = spy, classifier._session
    try:
        chunked, chunked_features = classifier.infer(crops)
    finally:
        classifier._session = kept
    assert spy.batches == [CHUNK, CHUNK, 7]
    alone = classifier.infer(crops[CHUNK + 3 : CHUNK + 4])[0]
    np.testing.assert_allclose(chunked[CHUNK + 3 : CHUNK + 4], alone, atol=1e-4)
    np.testing.assert_allclose(chunked, whole, atol=1e-5)
    assert features is not None and chunked_features is not None and chunked_features.shape == features.shape


def test_a_photo_of_more_tiles_than_a_hand_holds_is_refused_before_any_face_is_read(
    detector: Detector, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vision.detect.detector import MAX_TILES
    from vision.images import ImageError

    many = MAX_TILES + 1
    boxes = np.array(
        [[(i % 40) * 20, (i // 40) * 30, (i % 40) * 20 + 18, (i // 40) * 30 + 26] for i in range(many)]
    )
    sought = Sought(boxes.astype(np.float32), np.full(many, 0.9, np.float32), np.zeros(many, np.int64), True)
    monkeypatch.setattr(detector, "find_tiles", lambda *args, **kwargs: sought)
    read: list[int] = []
    monkeypatch.setattr(detector.classifier, "read_views", lambda *args, **kwargs: read.append(1))
    with pytest.raises(ImageError) as caught:
        detector.detect(np.zeros((480, 820, 3), np.uint8))
    assert caught.value.code == "too_many_tiles" and f"{many} tiles" in caught.value.message and not read
    # the dataset tools cutting crops of every false alarm take them all
    monkeypatch.setattr(detector, "max_tiles", None)
    assert len(detector.boxes(detector.locate(np.zeros((480, 820, 3), np.uint8)))) == many
