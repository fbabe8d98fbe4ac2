"""The API with the shipped detector (models/tiles.onnx), loaded by the lifespan as in production.

Skipped while the model is not shipped. The photo is the first ``examples/*.jpg`` (a real photo of a
hand) or, without one, a drawn hand: these tests check the service around the model (loading, decoding,
EXIF, concurrency), not the model's accuracy (``smj eval`` measures that).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from api.app import create_app
from api.fakes import fake_photo
from api.settings import PROJECT_ROOT, Settings

WEIGHTS = PROJECT_ROOT / "models" / "tiles.onnx"
EXAMPLES = sorted((PROJECT_ROOT / "examples").glob("*.jpg"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not WEIGHTS.is_file(), reason=f"{WEIGHTS} is not shipped yet (smj ship puts it there)"
    ),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = Settings(weights=WEIGHTS, dataset_dir=tmp_path_factory.mktemp("dataset"))
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.fixture(scope="module")
def photo() -> bytes:
    return EXAMPLES[0].read_bytes() if EXAMPLES else fake_photo()


def _size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        turned = image.getexif().get(0x0112, 1) in (5, 6, 7, 8)
        return (image.height, image.width) if turned else (image.width, image.height)


def test_the_lifespan_loads_the_shipped_model(client: TestClient) -> None:
    health = client.get("/healthz").json()
    assert health["model_loaded"] is True and health["weights"].endswith("tiles.onnx")


def test_score_photo_with_the_model(client: TestClient, photo: bytes) -> None:
    response = client.post("/api/v1/score-photo", files={"image": ("hand.jpg", photo, "image/jpeg")})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["width"], body["height"]) == _size(photo)
    for detection in body["detections"]:
        x1, y1, x2, y2 = detection["box"]
        assert 0 <= x1 <= x2 <= body["width"] and 0 <= y1 <= y2 <= body["height"]
    suited = [d for d in body["detections"] if d["tile"] not in ("back", "honour")]
    if suited:  # what was found became a hand, scored or explained
        assert body["hand"] is not None
        assert body["score"] is not None or body["warnings"]
    else:
        assert body["hand"] is None and any(w["code"] == "no_tiles" for w in body["warnings"])


def test_the_shared_detector_gives_the_same_answer_to_concurrent_requests(
    client: TestClient, photo: bytes
) -> None:
    def recognize(_: int) -> list[dict[str, object]]:
        response = client.post("/api/v1/recognize", files={"image": ("hand.jpg", photo, "image/jpeg")})
        assert response.status_code == 200
        return list(response.json()["detections"])

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(recognize, range(4)))
    assert all(answer == answers[0] for answer in answers)


def test_concurrent_requests_for_different_photos_each_get_their_own_answer(client: TestClient) -> None:
    photos = [path.read_bytes() for path in EXAMPLES[:3]] or [fake_photo()]

    def recognize(data: bytes) -> list[dict[str, object]]:
        response = client.post("/api/v1/recognize", files={"image": ("photo.jpg", data, "image/jpeg")})
        assert response.status_code == 200
        return list(response.json()["detections"])

    alone = [recognize(data) for data in photos]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(recognize, photos * 2))
    assert together == alone * 2
    assert len({str(answer) for answer in alone}) == len(photos)  # the photos differ, and so do their answers


def test_an_unusable_weights_file_is_named_without_the_librarys_text(tmp_path: Path) -> None:
    broken = tmp_path / "tiles.onnx"
    broken.write_bytes(b"\x08\x01not really a protobuf" * 40)
    with TestClient(create_app(Settings(weights=broken, dataset_dir=tmp_path / "dataset"))) as client:
        health = client.get("/healthz").json()
        refused = client.post("/api/v1/recognize", files={"image": ("hand.jpg", fake_photo(), "image/jpeg")})
    assert health["model_loaded"] is False
    assert health["model_error"].startswith("tiles.onnx: not a loadable ONNX model")
    said = health["model_error"].lower()
    assert "onnxruntime" not in said and "protobuf" not in said and "[" not in said
    assert refused.status_code == 503 and "tiles.onnx: not a loadable" in refused.json()["error"]["message"]


def test_a_mosaic_of_a_thousand_tiles_is_refused_by_name(client: TestClient) -> None:
    """A photo holding ~1,100 tiles (the bundled hand 5x5 times) is no hand: 422 ``too_many_tiles``, before
    the classifier reads a face (its memory: ``benchmarks/bench_hostile.py``, case ``mosaic_1000_tiles``)."""
    from bench_loader import load_benchmark

    mosaic = load_benchmark("bench_hostile").mosaic_jpeg(5)
    for path in ("/api/v1/recognize", "/api/v1/score-photo"):
        answer = client.post(path, files={"image": ("mosaic.jpg", mosaic, "image/jpeg")})
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["code"] == "too_many_tiles" and "at most 400" in error["message"]
