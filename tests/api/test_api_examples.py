"""Saving corrected photos (``POST /api/v1/examples``): who may save, what is stored, the quotas.

``api.guard`` decides who may save (the setting, the token, no cross-site form, loopback under
``auto``); ``datasets.corrections`` writes (pixels only, atomic, record last, quotas).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image

from api.app import create_app
from api.deps import get_detector
from api.fakes import FakeDetector, fake_photo
from api.settings import PROJECT_ROOT, Settings
from datasets import corrections
from datasets.corrections import CorrectionError, Quota, save_correction
from datasets.labels import Box
from scoring import Hand

HAND = {"concealed": "123345m66999p", "melds": [{"type": "kong_exposed", "tile": "2p"}], "win_tile": "6p"}
LOCAL = "http://127.0.0.1:8000"


@pytest.fixture(scope="module")
def photo() -> bytes:
    return fake_photo((800, 600))


def make_client(tmp_path: Path, base_url: str = LOCAL, **changes: Any) -> TestClient:
    settings = Settings(weights=tmp_path / "missing.onnx", dataset_dir=tmp_path / "dataset", **changes)
    app = create_app(settings)
    app.dependency_overrides[get_detector] = lambda: FakeDetector()
    return TestClient(app, base_url=base_url)


@pytest.fixture
def local(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(tmp_path) as client:
        yield client


def form(token: str | None = None, hand: dict[str, Any] | None = None) -> dict[str, str]:
    fields = {
        "detections": json.dumps([{"tile": "m1", "box": [10, 10, 60, 80]}]),
        "hand": json.dumps(hand or HAND),
        "consent": "true",
    }
    return fields if token is None else {**fields, "token": token}


def save(client: TestClient, data: bytes, headers: dict[str, str] | None = None, **fields: Any) -> Any:
    return client.post(
        "/api/v1/examples",
        files={"image": ("hand.jpg", data, "image/jpeg")},
        data=form(**fields),
        headers=headers,
    )


def assert_refused(response: Any, status: int, code: str, root: Path) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert not (root / "hands.jsonl").exists() and not list(root.glob("*/*"))


# ---- who may save


def test_a_local_serve_saves_by_default(local: TestClient, photo: bytes, tmp_path: Path) -> None:
    response = save(local, photo)
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"saved", "id", "image", "labels", "hands", "boxes"}
    assert not any(str(tmp_path) in str(value) for value in body.values())  # no server folders
    assert (tmp_path / "dataset" / body["image"]).is_file()


@pytest.mark.parametrize(
    ("base_url", "why"),
    [("http://192.168.1.20:8000", "another address"), ("http://evil.test:8000", "a name, not loopback")],
)
def test_auto_refuses_requests_from_elsewhere(tmp_path: Path, photo: bytes, base_url: str, why: str) -> None:
    with make_client(tmp_path, base_url) as client:
        response = save(client, photo)
    assert_refused(response, 403, "saving_disabled", tmp_path / "dataset")
    assert "SMJ_SAVE_EXAMPLES=on" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "forwarded",
    [{"x-forwarded-for": "198.51.100.4"}, {"forwarded": "for=198.51.100.4"}, {"x-real-ip": "198.51.100.4"}],
    ids=["x-forwarded-for", "forwarded", "x-real-ip"],
)
def test_auto_refuses_a_request_a_local_proxy_forwarded(
    local: TestClient, photo: bytes, tmp_path: Path, forwarded: dict[str, str]
) -> None:
    """Behind nginx on the same machine every request reaches loopback: one carrying a forwarding header is
    from elsewhere, and ``auto`` does not save it (a token is the way behind a proxy)."""
    response = save(local, photo, headers=forwarded)
    assert_refused(response, 403, "saving_disabled", tmp_path / "dataset")
    assert "SMJ_EXAMPLES_TOKEN" in response.json()["error"]["message"]


def test_a_rebound_name_on_loopback_is_refused(tmp_path: Path, photo: bytes) -> None:
    """DNS rebinding: a page of evil.test whose name now resolves to 127.0.0.1 sends its own Host."""
    with make_client(tmp_path) as client:
        response = save(client, photo, headers={"host": "evil.test:8000", "origin": "http://evil.test:8000"})
    assert_refused(response, 403, "saving_disabled", tmp_path / "dataset")


def test_off_refuses_even_locally(tmp_path: Path, photo: bytes) -> None:
    with make_client(tmp_path, save_examples="off") as client:
        assert_refused(save(client, photo), 403, "saving_disabled", tmp_path / "dataset")


def test_on_saves_from_any_address(tmp_path: Path, photo: bytes) -> None:
    with make_client(tmp_path, "http://192.168.1.20:8000", save_examples="on") as client:
        assert save(client, photo).status_code == 201


def test_a_token_is_needed_where_one_is_set(tmp_path: Path, photo: bytes) -> None:
    with make_client(tmp_path, "http://192.168.1.20:8000", examples_token="s3cret-token") as client:
        root = tmp_path / "dataset"
        assert_refused(save(client, photo), 401, "token_required", root)
        assert_refused(save(client, photo, token="wrong"), 401, "wrong_token", root)
        assert save(client, photo, token="s3cret-token").status_code == 201
        assert save(client, photo, headers={"x-smj-token": "s3cret-token"}).status_code == 201


@pytest.mark.parametrize(
    "headers",
    [{"origin": "http://evil.test"}, {"origin": "null"}, {"sec-fetch-site": "cross-site"}],
    ids=["other-origin", "opaque-origin", "cross-site-fetch"],
)
def test_a_cross_site_form_cannot_save(tmp_path: Path, photo: bytes, headers: dict[str, str]) -> None:
    """A plain multipart form on another site posts without a preflight; its Origin gives it away."""
    with make_client(tmp_path, save_examples="on") as client:
        assert_refused(save(client, photo, headers=headers), 403, "cross_site_request", tmp_path / "dataset")


def test_the_page_of_the_server_itself_saves(local: TestClient, photo: bytes) -> None:
    headers = {"origin": LOCAL, "sec-fetch-site": "same-origin"}
    assert save(local, photo, headers=headers).status_code == 201


# ---- what is stored


def test_only_the_pixels_are_stored(local: TestClient, photo: bytes, tmp_path: Path) -> None:
    """A script after the JPEG's end and megabytes of padding do not reach the dataset."""
    trailer = b"<script>alert(1)</script>" + b"\0" * 1_000_000
    body = save(local, photo + trailer).json()
    stored = (tmp_path / "dataset" / body["image"]).read_bytes()
    assert b"<script>" not in stored and len(stored) < len(photo) * 2
    with Image.open(io.BytesIO(stored)) as image:
        assert image.format == "JPEG" and image.size == (800, 600)


def test_a_large_photo_is_stored_reduced_with_its_labels_normalised(
    local: TestClient, tmp_path: Path
) -> None:
    big = fake_photo((6000, 4500))
    body = save(local, big).json()
    root = tmp_path / "dataset"
    with Image.open(root / body["image"]) as image:
        assert image.size == (3000, 2250)
    record = json.loads((root / "hands.jsonl").read_text())
    assert (record["width"], record["height"]) == (3000, 2250)
    _, xc, _, _, h = (root / body["labels"]).read_text().split()
    assert float(xc) == pytest.approx(35 / 6000, abs=1e-6) and float(h) == pytest.approx(70 / 4500, abs=1e-6)


# ---- quotas


def test_the_count_quota(tmp_path: Path, photo: bytes) -> None:
    with make_client(tmp_path, max_examples=2) as client:
        assert [save(client, photo).status_code for _ in range(2)] == [201, 201]
        refused = save(client, photo)
    assert refused.status_code == 507 and refused.json()["error"]["code"] == "quota_full"
    assert len((tmp_path / "dataset" / "hands.jsonl").read_text().splitlines()) == 2
    assert len(list((tmp_path / "dataset" / "images").iterdir())) == 2


def test_the_size_quota(tmp_path: Path, photo: bytes) -> None:
    with make_client(tmp_path, max_examples_bytes=len(photo) // 10) as client:
        refused = save(client, photo)
    assert_refused(refused, 507, "quota_full", tmp_path / "dataset")


# ---- the writer


def test_a_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def disk_full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(corrections, "_append_line", disk_full)
    pixels = np.zeros((60, 80, 3), np.uint8)
    with pytest.raises(OSError):
        save_correction(tmp_path, pixels, [Box(0, 0.5, 0.5, 0.1, 0.1)], Hand.from_json(HAND))
    assert not list((tmp_path / "images").iterdir()) and not list((tmp_path / "labels").iterdir())
    assert not (tmp_path / "hands.jsonl").exists()


def test_the_writer_refuses_an_impossible_hand(tmp_path: Path) -> None:
    with pytest.raises(CorrectionError) as caught:
        save_correction(
            tmp_path, np.zeros((8, 8, 3), np.uint8), [], Hand.parse("11111m2345p678p99p"), Quota()
        )
    assert caught.value.code == "too_many_copies" and not tmp_path.joinpath("images").exists()


def test_the_default_folder_is_the_users_not_the_source_tree(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SMJ_DATASET_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert Settings().dataset_dir == tmp_path / "data" / "smj" / "corrections"
    monkeypatch.delenv("XDG_DATA_HOME")
    default = Settings().dataset_dir
    assert default == Path.home() / ".local" / "share" / "smj" / "corrections"
    assert not default.is_relative_to(PROJECT_ROOT)


def test_a_save_killed_midway_leaves_nothing_counted_and_nothing_after_start(
    tmp_path: Path, photo: bytes
) -> None:
    """Temporary files a killed save left are not counted against the quota, and are removed when the
    service starts and before a save counts the folder."""
    folder = tmp_path / "dataset"
    (folder / "images").mkdir(parents=True)
    leftover = folder / "images" / ".20260101T000000-dead.jpg.0badf00d.tmp"
    leftover.write_bytes(b"x" * 5000)
    with make_client(tmp_path):
        assert not leftover.exists()  # gone at start-up
    leftover.write_bytes(b"x" * 5000)
    pixels = np.zeros((40, 60, 3), np.uint8)
    boxes = [Box(0, 0.5, 0.5, 0.2, 0.2)]
    saved = save_correction(
        folder, pixels, boxes, Hand.from_json(HAND), Quota(10, 5000)
    )  # the leftover: not counted
    assert (folder / saved.image).is_file() and not leftover.exists()


@pytest.mark.slow
@pytest.mark.parametrize(("size", "orientation"), [((4032, 3024), 6), ((4032, 3024), 3), ((8000, 6000), 8)])
def test_a_turned_phone_photo_is_saved_as_the_reader_reads_it(
    local: TestClient, tmp_path: Path, size: tuple[int, int], orientation: int
) -> None:
    """12 MP and 48 MP JPEGs stored turned with their EXIF tag, as phones store portrait photos: saved,
    upright, at the size the reader decodes (they used to be refused as too many pixels to decode)."""
    stored = Image.new("RGB", size, (40, 120, 70))
    exif = Image.Exif()
    exif[0x0112] = orientation
    buffer = io.BytesIO()
    stored.save(buffer, format="JPEG", quality=80, exif=exif)
    response = save(local, buffer.getvalue())
    assert response.status_code == 201, response.text
    with Image.open(tmp_path / "dataset" / response.json()["image"]) as saved:
        upright = (size[1], size[0]) if orientation in (6, 8) else size
        assert saved.width / saved.height == pytest.approx(upright[0] / upright[1], rel=0.01)
        assert 1600 <= max(saved.size) <= 3200  # what the reader decodes of it


def test_saved_examples_are_a_dataset_that_never_validates_on_its_own_training_images(
    local: TestClient, photo: bytes, tmp_path: Path
) -> None:
    import yaml

    assert save(local, photo).status_code == 201
    data = yaml.safe_load((tmp_path / "dataset" / "data.yaml").read_text(encoding="utf-8"))
    assert data["train"] == "images" and "val" not in data and len(data["names"]) == 29


def test_guessing_the_token_is_slowed_down(
    tmp_path: Path, photo: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After 10 wrong tokens in a minute from one address, even the right one waits: 429."""
    from api import guard

    monkeypatch.setattr(guard, "guesses", guard.Guesses(limit=10, window_s=60))
    with make_client(tmp_path, examples_token="right-token") as client:
        answers = [save(client, photo, token=f"guess{i}").status_code for i in range(10)]
        assert answers == [401] * 10
        blocked = save(client, photo, token="right-token")
        assert blocked.status_code == 429 and blocked.json()["error"]["code"] == "too_many_guesses"
    monkeypatch.setattr(guard, "guesses", guard.Guesses(limit=10, window_s=60))
    with make_client(tmp_path, examples_token="right-token") as client:
        assert save(client, photo, token="right-token").status_code == 201  # a fresh window: it passes
