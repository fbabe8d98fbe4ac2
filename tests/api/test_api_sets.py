"""Sets through the API with the shipped models: taught from a photo (guarded by the token as saving
examples is; replaced only when asked), listed, shown, renamed, removed; a photo read with the set; a
correction teaching the set. The set is one the shipped classifier misreads (``tests/set_builders.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from set_builders import layout_and_hand

from api.app import create_app
from api.settings import PROJECT_ROOT, Settings

pytestmark = pytest.mark.slow
TOKEN = "table-secret"


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes, dict[str, object]]:
    layout, hand, truth = layout_and_hand(tmp_path_factory.mktemp("set"))
    return layout.read_bytes(), hand.read_bytes(), truth


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(
        dataset_dir=tmp_path / "dataset",
        database_url=f"sqlite:///{tmp_path / 'store.db'}",
        examples_token=TOKEN,  # type: ignore[arg-type]
    )
    with TestClient(create_app(settings)) as client:
        yield client


def _teach(client: TestClient, layout: bytes, **fields: object) -> object:
    data = {"name": "flower", "token": TOKEN, **fields}
    return client.post("/api/v1/sets", files={"image": ("layout.jpg", layout, "image/jpeg")}, data=data)


def test_a_set_is_taught_only_with_the_token_and_replaced_only_when_asked(
    client: TestClient, photos: tuple[bytes, bytes, dict[str, object]]
) -> None:
    layout, _, _ = photos
    refused = _teach(client, layout, token="guess")
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "wrong_token"  # type: ignore[union-attr]
    assert refused.json()["error"]["message"].startswith("teaching a set: that is not")  # type: ignore[union-attr]
    missing = _teach(client, layout, token="")
    assert missing.json()["error"]["code"] == "token_required"  # type: ignore[union-attr]
    assert "teaching a set needs this server's token" in missing.json()["error"]["message"]  # type: ignore[union-attr]
    taught = _teach(client, layout)
    assert taught.status_code == 201, taught.text  # type: ignore[union-attr]
    body = taught.json()  # type: ignore[union-attr]
    assert body["name"] == "flower" and body["faces"] >= 27 and len(body["tiles"]) == body["examples"]
    assert {"face": "p4", "classifier_alone": "p5"} in body["taught"]
    assert all(tile["crop"].startswith("data:image/png;base64,") for tile in body["tiles"])
    again = _teach(client, layout)
    assert again.status_code == 409 and again.json()["error"]["code"] == "set_exists"  # type: ignore[union-attr]
    assert _teach(client, layout, replace="true").status_code == 201  # type: ignore[union-attr]
    listed = client.get("/api/v1/sets").json()["sets"]
    assert [s["name"] for s in listed] == ["flower"]


def test_a_photo_that_is_not_a_layout_is_refused_saying_what_was_seen(client: TestClient) -> None:
    hand = (PROJECT_ROOT / "examples" / "hand.jpg").read_bytes()
    response = _teach(client, hand)
    assert response.status_code == 422  # type: ignore[union-attr]
    error = response.json()["error"]  # type: ignore[union-attr]
    assert error["code"] == "not_a_layout" and "in rows of" in error["message"]
    assert client.get("/api/v1/sets").json()["sets"] == []  # nothing stored


def test_a_photo_with_no_tile_at_all_is_refused_as_no_layout(client: TestClient) -> None:
    import cv2
    import numpy as np

    ok, blank = cv2.imencode(".jpg", np.full((480, 640, 3), 128, np.uint8))  # no box for the localiser
    assert ok
    response = _teach(client, blank.tobytes())
    assert response.status_code == 422, response.text  # type: ignore[union-attr]
    error = response.json()["error"]  # type: ignore[union-attr]
    assert error["code"] == "not_a_layout" and "found 0 tiles in rows of none" in error["message"]
    assert client.get("/api/v1/sets").json()["sets"] == []


def test_a_photo_read_with_the_set_and_a_correction_teaching_it(
    client: TestClient, photos: tuple[bytes, bytes, dict[str, object]]
) -> None:
    layout, hand, truth = photos
    files = {"image": ("hand.jpg", hand, "image/jpeg")}
    alone = client.post("/api/v1/score-photo", files=files).json()
    assert alone["hand"]["concealed"] != truth["concealed"]  # its 4 筒 read as 5 筒
    missing = client.post("/api/v1/score-photo", files=files, data={"set": "flower"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "no_such_set"
    assert _teach(client, layout).status_code == 201  # type: ignore[union-attr]
    read = client.post("/api/v1/score-photo", files=files, data={"set": "flower"}).json()
    assert read["hand"]["concealed"] == truth["concealed"] and read["score"]["valid"]

    before = client.get("/api/v1/sets/flower").json()["examples"]
    p4 = next(d for d in read["detections"] if d["tile"] == "p4")
    correction = json.dumps({"box": p4["box"], "face": "p4"})
    refused = client.post(
        "/api/v1/sets/flower/examples", files=files, data={"correction": correction, "token": "no"}
    )
    assert refused.status_code == 401
    taught = client.post(
        "/api/v1/sets/flower/examples", files=files, data={"correction": correction, "token": TOKEN}
    )
    assert taught.status_code == 201, taught.text
    assert taught.json()["examples"] == before + 1
    first = taught.json()["example"]
    # the same tile named again replaces what its first naming taught; a layout example is no correction
    again = json.dumps({"box": p4["box"], "face": "p5", "replaces": first})
    renamed = client.post(
        "/api/v1/sets/flower/examples", files=files, data={"correction": again, "token": TOKEN}
    )
    assert renamed.status_code == 201 and renamed.json()["examples"] == before + 1
    second = renamed.json()["example"]
    tiles = client.get("/api/v1/sets/flower").json()["tiles"]
    assert [(t["id"], t["face"]) for t in tiles if t["origin"] == "correction"] == [(second, "p5")]
    layout_id = next(t["id"] for t in tiles if t["origin"] == "layout")
    stray = json.dumps({"box": p4["box"], "face": "p4", "replaces": layout_id})
    kept = client.post(
        "/api/v1/sets/flower/examples", files=files, data={"correction": stray, "token": TOKEN}
    )
    assert kept.status_code == 404 and kept.json()["error"]["code"] == "no_such_example"
    assert client.get("/api/v1/sets/flower").json()["examples"] == before + 1  # nothing written
    # a corrected tile that was no tile: its example leaves the set, with the token
    url = f"/api/v1/sets/flower/examples/{second}"
    assert client.delete(url).status_code == 401
    guarded = client.delete(
        f"/api/v1/sets/flower/examples/{layout_id}?origin=correction", headers={"X-SMJ-Token": TOKEN}
    )
    assert guarded.status_code == 404  # the page removes corrections only: a layout example stays
    removed = client.delete(url, headers={"X-SMJ-Token": TOKEN})
    assert removed.status_code == 200 and removed.json()["examples"] == before
    assert client.delete(url, headers={"X-SMJ-Token": TOKEN}).status_code == 404
    outside = json.dumps({"box": [0, 0, 5000, 5000], "face": "p4"})
    wrong = client.post(
        "/api/v1/sets/flower/examples", files=files, data={"correction": outside, "token": TOKEN}
    )
    assert wrong.status_code == 422 and wrong.json()["error"]["code"] == "box_outside_image"


def test_an_example_is_renamed_and_a_set_removed_with_the_token(
    client: TestClient, photos: tuple[bytes, bytes, dict[str, object]]
) -> None:
    layout, _, _ = photos
    assert _teach(client, layout).status_code == 201  # type: ignore[union-attr]
    tiles = client.get("/api/v1/sets/flower").json()["tiles"]
    first = tiles[0]
    headers = {"X-SMJ-Token": TOKEN}
    url = f"/api/v1/sets/flower/examples/{first['id']}"
    renamed = client.patch(url, json={"face": "m9"}, headers=headers)
    assert renamed.status_code == 200, renamed.text
    assert next(t for t in renamed.json()["tiles"] if t["id"] == first["id"])["face"] == "m9"
    assert client.patch(url, json={"face": "m9"}).status_code == 401
    unknown = client.patch("/api/v1/sets/flower/examples/999999", json={"face": "m1"}, headers=headers)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "no_such_example"
    bad_face = client.patch(
        f"/api/v1/sets/flower/examples/{first['id']}", json={"face": "m0"}, headers=headers
    )
    assert bad_face.status_code == 422
    assert client.delete("/api/v1/sets/flower").status_code == 401
    assert client.delete("/api/v1/sets/flower", headers=headers).status_code == 204
    assert client.get("/api/v1/sets/flower").status_code == 404
    assert client.delete("/api/v1/sets/flower", headers=headers).status_code == 404
