"""The web API through ``TestClient``, with a fake detector swapped in by ``dependency_overrides``.

The fake (``api.fakes.FakeDetector``) answers every photo with the same hand laid out as a camera sees it:
123345m66999p standing, 6p set apart as the winning tile, a kong of 2p below (chengdu: 根, 1 fan, x2).
"""

from __future__ import annotations

import asyncio
import io
import json
import re
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from PIL import Image
from pydantic import TypeAdapter, ValidationError
from starlette.types import Message

import smj
from api.app import create_app
from api.deps import get_detector
from api.errors import MULTIPART_ALLOWANCE
from api.fakes import FakeDetector, create_fake_app, fake_photo
from api.schemas import ContextIn, DetectorClass, SuitedClass
from api.settings import Settings, get_settings
from scoring import PRESETS, WinContext
from vision.detections import BACK, DETECTOR_CLASSES

HAND = {"concealed": "123345m66999p", "melds": [{"type": "kong_exposed", "tile": "2p"}], "win_tile": "6p"}
MISREAD = (("1m2m3m3m4m5s6p9p9p9p", "6p"), ("2p2p2p2p",))  # 5m read as 5s: three suits
JPEG = "image/jpeg"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        weights=tmp_path / "missing.onnx",
        dataset_dir=tmp_path / "dataset",
        max_upload_bytes=2_000_000,
        save_examples="on",  # TestClient's requests reach "testserver", not a loopback address
    )


@pytest.fixture
def app(settings: Settings) -> FastAPI:
    app = create_app(settings)
    app.dependency_overrides[get_detector] = lambda: FakeDetector()
    return app


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as client:
        yield client


@pytest.fixture(scope="module")
def photo() -> bytes:
    return fake_photo()


def upload(data: bytes, name: str = "hand.jpg", kind: str = JPEG) -> dict[str, Any]:
    return {"image": (name, data, kind)}


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]
    return dict(body["error"])


def rotated_photo() -> bytes:
    """A 900x1200 portrait photo stored on its side with EXIF orientation 6."""
    upright = Image.open(io.BytesIO(fake_photo((900, 1200))))
    exif = Image.Exif()
    exif[0x0112] = 6
    out = io.BytesIO()
    upright.transpose(Image.Transpose.ROTATE_90).save(out, format="JPEG", exif=exif.tobytes())
    return out.getvalue()


def cli_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    smj.main(argv)
    return dict(json.loads(capsys.readouterr().out))


# ---- health and model loading


def test_healthz_with_a_loaded_model() -> None:
    with TestClient(create_fake_app()) as client:
        body = client.get("/healthz").json()
    assert body["status"] == "ok" and body["model_loaded"] is True and body["model_error"] is None


def test_missing_weights_start_the_service_and_photo_endpoints_answer_503(
    settings: Settings, photo: bytes
) -> None:
    with TestClient(create_app(settings)) as client:
        health = client.get("/healthz")
        assert health.status_code == 200
        assert health.json()["model_loaded"] is False and "missing.onnx" in health.json()["model_error"]
        assert str(settings.weights.parent) not in health.text  # file names, never the server's folders
        assert health.json()["weights"] == "missing.onnx"
        for path in ("/api/v1/recognize", "/api/v1/score-photo"):
            assert_error(client.post(path, files=upload(photo)), 503, "model_not_loaded")
        assert client.post("/api/v1/score", json={"hand": HAND}).status_code == 200  # the rest still works


def test_a_detector_that_fails_to_load_in_any_way_leaves_the_service_up(settings: Settings) -> None:
    def broken(_: Settings) -> FakeDetector:
        raise AttributeError("'NoneType' object has no attribute 'get'")  # as a loader's own bug would

    with TestClient(create_app(settings, load_detector=broken)) as client:
        health = client.get("/healthz").json()
        assert health["model_loaded"] is False and "failed to load" in health["model_error"]
        assert "NoneType" not in health["model_error"]  # an unexpected error's text stays in the log
        assert client.post("/api/v1/score", json={"hand": HAND}).status_code == 200


# ---- photos


def test_recognize_returns_detections_groups_and_the_hand(client: TestClient, photo: bytes) -> None:
    response = client.post("/api/v1/recognize", files=upload(photo))
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["width"], body["height"]) == (1200, 900)
    assert len(body["detections"]) == 15
    for detection in body["detections"]:
        x1, y1, x2, y2 = detection["box"]
        assert 0 <= x1 < x2 <= 1200 and 0 <= y1 < y2 <= 900
        assert detection["tile"] in DETECTOR_CLASSES
    assert body["hand"] == HAND
    assert [group["role"] for group in body["groups"]] == ["hand", "hand", "meld"]
    assert body["groups"][2] == {"role": "meld", "kind": "kong_exposed", "indices": [11, 12, 13, 14]}
    assert body["win_index"] == 10 and body["win_apart"] is True
    assert body["warnings"] == []


def test_score_photo_scores_the_hand_with_the_context_and_preset(client: TestClient, photo: bytes) -> None:
    body = client.post("/api/v1/score-photo", files=upload(photo)).json()
    assert body["score"]["valid"] is True
    assert (body["score"]["total_fan"], body["score"]["multiplier"]) == (1, 2)
    assert [fan["name_zh"] for fan in body["score"]["fans"]] == ["平胡", "根"]

    qq = client.post(
        "/api/v1/score-photo", files=upload(photo), data={"preset": "qq_xuezhan", "self_drawn": "true"}
    )
    assert qq.status_code == 200, qq.text
    assert qq.json()["score"]["preset"] == "qq_xuezhan" and qq.json()["score"]["total_fan"] == 2


def test_score_photo_with_a_misread_tile_is_200_with_the_reason(
    app: FastAPI, client: TestClient, photo: bytes
) -> None:
    app.dependency_overrides[get_detector] = lambda: FakeDetector(MISREAD)
    body = client.post("/api/v1/score-photo", files=upload(photo)).json()
    assert body["score"]["valid"] is False and body["score"]["error"]["code"] == "three_suits"


def test_score_photo_of_a_hand_one_tile_short_says_what_it_waits_on(
    app: FastAPI, client: TestClient, photo: bytes
) -> None:
    # the default hand without its 1m: 23345m66999p and a kong of 2p waits on 1m and 4m
    app.dependency_overrides[get_detector] = lambda: FakeDetector((("2m3m3m4m5m6p6p9p9p9p",), ("2p2p2p2p",)))
    body = client.post("/api/v1/score-photo", files=upload(photo)).json()
    assert body["score"]["error"]["code"] == "wrong_tile_count"
    assert body["waits"]["ready"] is True
    assert [wait["tile"] for wait in body["waits"]["waits"]] == ["1m", "4m"]
    app.dependency_overrides[get_detector] = lambda: FakeDetector()  # a win has no waits
    won = client.post("/api/v1/score-photo", files=upload(photo)).json()
    assert won["score"]["valid"] is True and won["waits"] is None


def test_score_photo_without_tiles_has_no_hand_and_a_warning(
    app: FastAPI, client: TestClient, photo: bytes
) -> None:
    app.dependency_overrides[get_detector] = lambda: FakeDetector(())
    body = client.post("/api/v1/score-photo", files=upload(photo)).json()
    assert body["hand"] is None and body["score"] is None and body["detections"] == []
    assert [warning["code"] for warning in body["warnings"]] == ["no_tiles"]


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({"preset": "nope"}, "unknown_preset"),
        ({"self_drawn": "maybe"}, "invalid_request"),
        ({"gang_shang_hua": "true"}, None),  # contradictory without self-drawn: a 200 with valid=false
    ],
    ids=["unknown-preset", "not-a-bool", "contradictory-context"],
)
def test_score_photo_form_fields(
    client: TestClient, photo: bytes, data: dict[str, str], code: str | None
) -> None:
    response = client.post("/api/v1/score-photo", files=upload(photo), data=data)
    if code is None:
        assert (
            response.status_code == 200
            and response.json()["score"]["error"]["code"] == "contradictory_context"
        )
    else:
        assert_error(response, 422, code)


def test_an_exif_rotated_photo_is_measured_upright(client: TestClient) -> None:
    body = client.post("/api/v1/recognize", files=upload(rotated_photo())).json()
    assert (body["width"], body["height"]) == (900, 1200)
    assert max(d["box"][2] for d in body["detections"]) <= 900
    assert body["hand"] == HAND


def test_a_large_photo_decoded_reduced_still_gets_full_resolution_boxes(client: TestClient) -> None:
    big = fake_photo((4000, 3000))
    body = client.post("/api/v1/recognize", files=upload(big)).json()
    assert (body["width"], body["height"]) == (4000, 3000)
    assert max(d["box"][2] for d in body["detections"]) > 3000  # the win tile sits right of 3/4 of the width
    assert body["hand"] == HAND


@pytest.mark.parametrize(
    ("data", "status", "code"),
    [
        (b"", 415, "not_an_image"),
        (b"this is not a photo", 415, "not_an_image"),
        (b"%PDF-1.4 not an image at all", 415, "not_an_image"),
    ],
    ids=["empty", "text", "pdf"],
)
def test_bad_uploads_are_4xx_json(client: TestClient, data: bytes, status: int, code: str) -> None:
    for path in ("/api/v1/recognize", "/api/v1/score-photo"):
        assert_error(client.post(path, files=upload(data)), status, code)


def test_a_truncated_photo_is_corrupt(client: TestClient, photo: bytes) -> None:
    assert_error(
        client.post("/api/v1/recognize", files=upload(photo[: len(photo) // 3])), 422, "corrupt_image"
    )
    png = io.BytesIO()
    Image.new("RGB", (64, 64)).save(png, format="PNG")
    assert_error(
        client.post("/api/v1/recognize", files=upload(png.getvalue()[:-30], "x.png", "image/png")),
        422,
        "corrupt_image",
    )


def test_too_many_pixels_is_413(app: FastAPI, client: TestClient, settings: Settings) -> None:
    app.dependency_overrides[get_settings] = lambda: settings.model_copy(update={"max_pixels": 1_000_000})
    assert_error(
        client.post("/api/v1/recognize", files=upload(fake_photo((1200, 900)))), 413, "too_many_pixels"
    )


def test_an_upload_over_the_limit_is_413(client: TestClient, settings: Settings) -> None:
    too_big = b"\xff\xd8" + bytes(settings.max_upload_bytes)
    for path in ("/api/v1/recognize", "/api/v1/score-photo", "/api/v1/examples"):
        error = assert_error(client.post(path, files=upload(too_big)), 413, "upload_too_large")
        assert "2,000,000" in error["message"]


def test_the_file_part_itself_is_limited(app: FastAPI, client: TestClient, settings: Settings) -> None:
    """A body under the overall limit whose file part is over ``max_upload_bytes``."""
    just_over = b"\xff\xd8" + bytes(settings.max_upload_bytes - 1)
    assert len(just_over) <= settings.max_upload_bytes + MULTIPART_ALLOWANCE
    assert_error(client.post("/api/v1/recognize", files=upload(just_over)), 413, "upload_too_large")


def test_the_limit_is_enforced_while_the_body_arrives(settings: Settings) -> None:
    """A chunked body without Content-Length: reading stops at the first chunk past the limit."""
    app = create_app(settings)
    chunk = 64 * 1024
    total_chunks = 200  # 12.8 MB offered, the limit is 2 MB
    boundary = "smjboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="image"; filename="big.jpg"\r\n'
        f"Content-Type: image/jpeg\r\n\r\n"
    ).encode()
    consumed = 0
    sent: list[Message] = []

    async def receive() -> Message:
        nonlocal consumed
        consumed += 1
        body = head if consumed == 1 else b"\0" * chunk
        return {"type": "http.request", "body": body, "more_body": consumed < total_chunks}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/v1/recognize",
        "raw_path": b"/api/v1/recognize",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"content-type", f"multipart/form-data; boundary={boundary}".encode()),
            (b"host", b"test"),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "state": {},
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["error"]["code"] == "upload_too_large"
    limit_chunks = (settings.max_upload_bytes + MULTIPART_ALLOWANCE) // chunk + 2
    assert consumed <= limit_chunks < total_chunks


def test_a_photo_request_without_the_image_is_422(client: TestClient) -> None:
    error = assert_error(client.post("/api/v1/recognize", data={"preset": "chengdu"}), 422, "invalid_request")
    assert error["details"] and error["details"][0]["loc"][-1] == "image"


# ---- scoring hands as JSON


def test_score_answers_what_smj_score_json_prints(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    response = client.post(
        "/api/v1/score", json={"hand": HAND, "context": {"self_drawn": True}, "preset": "chengdu"}
    )
    assert response.status_code == 200
    cli = cli_json(
        capsys, ["score", "--hand", "123345m66999p", "--kong", "2p", "--win", "6p", "--self-drawn", "--json"]
    )
    assert response.json() == cli


@pytest.mark.parametrize(
    ("hand", "context", "code"),
    [
        ({"concealed": "123m456p789s11m222p", "win_tile": "2p"}, {}, "three_suits"),
        ({"concealed": "123m456m789m11p246p"}, {}, "not_a_winning_shape"),
        ({"concealed": "123m456m789m11m234p"}, {"void_suit": "p"}, "void_suit_present"),
    ],
    ids=["three-suits", "no-shape", "void-suit"],
)
def test_a_hand_that_is_not_a_win_is_200_valid_false(
    client: TestClient, hand: dict[str, Any], context: dict[str, Any], code: str
) -> None:
    response = client.post("/api/v1/score", json={"hand": hand, "context": context})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["valid"] is False and body["error"]["code"] == code and body["total_fan"] is None


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"hand": {"concealed": "123m456m789m11m22m"}}, "wrong_tile_count"),
        ({"hand": {"concealed": "11111m234m567m999m"}}, "too_many_copies"),
        ({"hand": {"concealed": "123m456m789m11m234m", "win_tile": "9p"}}, "win_tile_not_in_hand"),
        ({"hand": HAND, "context": {"gang_shang_hua": True}}, "contradictory_context"),
        ({"hand": {"concealed": "123x"}}, "invalid_tile"),
        ({"hand": {"concealed": "11m", "melds": [{"type": "pong", "tile": "0z"}]}}, "invalid_tile"),
        ({"hand": {"concealed": ""}}, "invalid_tile"),
        ({"hand": {"concealed": "²m"}}, "invalid_tile"),
        ({"hand": HAND, "preset": "vegas"}, "unknown_preset"),
        ({}, "invalid_request"),
        ({"hand": {**HAND, "extra": 1}}, "invalid_request"),
        ({"hand": {"concealed": 123}}, "invalid_request"),
        ({"hand": HAND, "context": {"void_suit": "z"}}, "invalid_request"),
        ({"hand": {"concealed": "1m", "melds": [{"type": "chow", "tile": "1m"}]}}, "invalid_request"),
    ],
    ids=[
        "wrong-count", "fifth-copy", "win-not-in-hand", "contradictory", "unknown-tile", "unknown-meld-tile",
        "empty", "superscript-digit", "unknown-preset", "no-hand", "extra-field", "not-a-string",
        "bad-void-suit", "chow",
    ],
)  # fmt: skip
def test_malformed_or_impossible_hands_are_422(
    client: TestClient, payload: dict[str, Any], code: str
) -> None:
    assert_error(client.post("/api/v1/score", json=payload), 422, code)


TYPED = [
    "123345m66999p kong 2p win 6p",
    "123345m66999p 杠2p 胡6p",
    "KONG 2p 123 345m 66999p WIN 6p",
    "22m 碰3m 加杠4m 暗杠5m 面下杠6m",
    "123345万66999筒 明杠2筒",
    "12334567m66999p",
]


def test_a_typed_hand_is_read_into_the_hand_json_that_scores_as_the_text_does(client: TestClient) -> None:
    """``/typed`` (the page's typed-hand box) answers the hand JSON that ``/score`` and ``/waits`` take,
    scoring as the text itself does; a typo is refused naming the word in Chinese and English."""
    for text in TYPED:
        read = client.post("/api/v1/typed", json={"text": text})
        assert read.status_code == 200, read.text
        hand = read.json()
        assert set(hand) == {"concealed", "win_tile", "melds"}
        scored = [client.post("/api/v1/score", json={"hand": h, "preset": "chengdu"}) for h in (hand, text)]
        assert scored[0].status_code == scored[1].status_code, text
        answers = [answer.json() for answer in scored]
        for answer in answers:  # the melds' order apart (a hand as JSON is read by kind)
            answer.get("decomposition", []).sort()
        assert answers[0] == answers[1], text
    assert client.post("/api/v1/typed", json={"text": "123345m66999p kong 2p win 6p"}).json() == {
        "concealed": "123345m66999p",
        "win_tile": "6p",
        "melds": [{"type": "kong_exposed", "tile": "2p"}],
    }
    waiting = client.post("/api/v1/typed", json={"text": "12334567m66999p"}).json()
    assert waiting["win_tile"] is None
    waits = client.post("/api/v1/waits", json={"hand": {k: waiting[k] for k in ("concealed", "melds")}})
    assert waits.status_code == 200 and waits.json()["ready"]
    refused = client.post("/api/v1/typed", json={"text": "123456789m11p kang 5p"})
    assert_error(refused, 422, "typed_hand")
    message = refused.json()["error"]["message"]
    assert "“kang” 不是牌" in message and '"kang" is not tiles' in message and "pong, kong" in message
    assert_error(client.post("/api/v1/typed", json={"text": "1m" * 150}), 422, "invalid_request")


def test_a_hand_typed_as_the_page_takes_it_scores_as_its_json(client: TestClient) -> None:
    """``hand`` as text, the page's typed-hand syntax (``scoring.typed``), for /score and /waits."""
    as_json = {
        "concealed": "123345m66999p",
        "melds": [{"type": "kong_exposed", "tile": "2p"}],
        "win_tile": "6p",
    }
    for typed in ("123345m66999p kong 2p win 6p", "123345m 66999p 杠2p 胡6p"):
        scored = client.post("/api/v1/score", json={"hand": typed, "preset": "chengdu"})
        assert scored.status_code == 200, scored.text
        assert (
            scored.json() == client.post("/api/v1/score", json={"hand": as_json, "preset": "chengdu"}).json()
        )
    waits = client.post("/api/v1/waits", json={"hand": "12334567m66999p"})
    assert waits.status_code == 200, waits.text
    assert (
        waits.json() == client.post("/api/v1/waits", json={"hand": {"concealed": "12334567m66999p"}}).json()
    )
    for path, typed, says in (
        ("/api/v1/score", "123345m66999p kang 2p", "“kang”"),
        ("/api/v1/waits", "12334567m6699p win 9p", "winning tile"),
    ):
        refused = client.post(path, json={"hand": typed})
        assert_error(refused, 422, "typed_hand")
        assert says in refused.json()["error"]["message"] and " / " in refused.json()["error"]["message"]


def test_invalid_json_is_a_422_in_the_same_shape(client: TestClient) -> None:
    response = client.post(
        "/api/v1/score", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_error(response, 422, "invalid_request")


def test_waits_answer_what_smj_waits_json_prints(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    response = client.post(
        "/api/v1/waits",
        json={"hand": {"concealed": "1234m66999p2s", "melds": [{"type": "pong", "tile": "5s"}]}},
    )
    assert response.status_code == 200, response.text
    cli = cli_json(capsys, ["waits", "--hand", "1234m66999p2s", "--pong", "5s", "--json"])
    cli.pop("error")
    assert response.json() == cli
    assert response.json()["ready"] is False  # three suits: no wait is a legal win

    ready = client.post(
        "/api/v1/waits", json={"hand": {"concealed": "23m456m789m66p999p"}, "preset": "qq_xuezhan"}
    ).json()
    assert ready["ready"] is True and ready["preset"] == "qq_xuezhan"
    assert {wait["tile"] for wait in ready["waits"]} == {"1m", "4m", "7m"}
    assert ready["largest_fan"] == max(wait["score"]["total_fan"] for wait in ready["waits"])


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"hand": {"concealed": "1234m66999p2p"}}, "wrong_tile_count"),
        ({"hand": {"concealed": "11111m66999p222p"}}, "too_many_copies"),
        ({"hand": {"concealed": "1³m"}}, "invalid_tile"),
        ({"hand": {"concealed": "1234m66999p22p", "win_tile": "1m"}}, "invalid_request"),
        ({"hand": {"concealed": "1234m66999p22p"}, "preset": "x"}, "unknown_preset"),
    ],
    ids=["wrong-count", "fifth-copy", "superscript-digit", "win-tile-given", "unknown-preset"],
)
def test_waits_of_a_malformed_hand_are_422(client: TestClient, payload: dict[str, Any], code: str) -> None:
    assert_error(client.post("/api/v1/waits", json=payload), 422, code)


# ---- settling a round

ROUND = Path(__file__).resolve().parents[2] / "examples" / "round.json"


def test_settle_answers_what_smj_settle_json_prints(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    round_json = json.loads(ROUND.read_text(encoding="utf-8"))
    response = client.post("/api/v1/settle", json={"round": round_json, "preset": "xuezhan_3cap", "base": 2})
    assert response.status_code == 200, response.text
    assert response.json() == cli_json(
        capsys, ["settle", str(ROUND), "--preset", "xuezhan_3cap", "--base", "2", "--json"]
    )
    assert sum(response.json()["totals"]) == 0


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"round": {"events": [{"type": "win", "player": "A", "discarder": "A", "fan": 1}]}}, "bad_win"),
        ({"round": {"events": [{"type": "nap", "player": "A"}]}}, "malformed"),
        (
            {"round": {"events": [{"type": "win", "player": "Q", "self_drawn": True, "fan": 1}]}},
            "unknown_player",
        ),
        ({"round": {}}, "malformed"),
        ({"round": {"events": []}, "preset": "nope"}, "unknown_preset"),
        ({"round": {"events": []}, "base": 0}, "invalid_request"),
        ({"round": []}, "invalid_request"),
        (
            {"round": {"events": [{"type": "win", "player": "A", "self_drawn": True, "hand": "²m"}]}},
            "typed_hand",
        ),
    ],
    ids=[
        "discarder-wins",
        "unknown-event",
        "unknown-player",
        "no-events",
        "unknown-preset",
        "base-0",
        "not-an-object",
        "superscript",
    ],
)
def test_settle_refuses_a_malformed_or_impossible_round(
    client: TestClient, payload: dict[str, Any], code: str
) -> None:
    assert_error(client.post("/api/v1/settle", json=payload), 422, code)


# ---- grouping corrected detections


def test_group_reproduces_recognize_and_follows_corrections(client: TestClient, photo: bytes) -> None:
    recognized = client.post("/api/v1/recognize", files=upload(photo)).json()
    request = {k: recognized[k] for k in ("width", "height", "detections")}
    grouped = client.post("/api/v1/group", json=request).json()
    assert grouped == {
        k: recognized[k] for k in ("detections", "hand", "groups", "win_index", "win_apart", "warnings")
    }

    request["detections"][0]["tile"] = "m9"  # corrected 1m -> 9m
    corrected = client.post("/api/v1/group", json=request).json()
    assert corrected["hand"]["concealed"] == "233459m66999p"

    del request["detections"][0]  # a tile deleted: the count is off, and a warning says so
    short = client.post("/api/v1/group", json=request).json()
    assert [warning["code"] for warning in short["warnings"]] == ["tile_count"]
    assert all(0 <= i < 14 for i in short["warnings"][0]["indices"])


def test_group_judges_a_reading_under_the_win_s_context(
    client: TestClient, photo: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As /score-photo does: the reading's search is judged under the preset and how it was won."""
    from usecases import photos

    recognized = client.post("/api/v1/recognize", files=upload(photo)).json()
    judged: list[tuple[str, bool]] = []
    read_hand = photos.pipeline.read_hand

    def spy(detections: object, *, rules: object, context: object) -> object:
        judged.append((rules.name, context.self_drawn))  # type: ignore[attr-defined]
        return read_hand(detections, rules=rules, context=context)  # type: ignore[arg-type]

    monkeypatch.setattr(photos.pipeline, "read_hand", spy)
    request = {k: recognized[k] for k in ("width", "height", "detections")}
    body = {**request, "preset": "qq_xuezhan", "context": {"self_drawn": True}}
    assert client.post("/api/v1/group", json=body).status_code == 200
    assert judged == [("qq_xuezhan", True)]


def test_group_rereads_a_tile_as_an_alternative_sent_with_it(client: TestClient, photo: bytes) -> None:
    recognized = client.post("/api/v1/recognize", files=upload(photo)).json()
    request = {k: recognized[k] for k in ("width", "height", "detections")}
    misread = {"tile": "m9", "confidence": 0.5, "alternatives": [{"tile": "m1", "confidence": 0.4}]}
    request["detections"][0] |= misread  # 1m read as 9m, with 1m its runner-up: 233459m is no win
    reread = client.post("/api/v1/group", json=request).json()
    assert reread["hand"]["concealed"] == "123345m66999p"
    assert reread["detections"][0]["tile"] == "m1"  # the page shows the tile as re-read
    assert [(w["code"], w["indices"]) for w in reread["warnings"]] == [("reread_tile", [0])]

    request["detections"][0]["alternatives"] = []  # the user's own correction is taken as it is
    kept = client.post("/api/v1/group", json=request).json()
    assert kept["hand"]["concealed"] == "233459m66999p"
    assert "reread_tile" not in [w["code"] for w in kept["warnings"]]


@pytest.mark.parametrize(
    "alternatives",
    [
        [{"tile": "back", "confidence": 0.3}],  # not a suited tile
        [{"tile": "m1", "confidence": 1.5}],  # no confidence
        [{"tile": "m1", "confidence": 0.1}] * 5,  # more than MAX_ALTERNATIVES
    ],
)
def test_group_refuses_malformed_alternatives(
    client: TestClient, photo: bytes, alternatives: list[dict[str, Any]]
) -> None:
    recognized = client.post("/api/v1/recognize", files=upload(photo)).json()
    request = {k: recognized[k] for k in ("width", "height", "detections")}
    request["detections"][0]["alternatives"] = alternatives
    assert client.post("/api/v1/group", json=request).status_code == 422


def test_group_of_no_detections(client: TestClient) -> None:
    body = client.post("/api/v1/group", json={"width": 100, "height": 100, "detections": []}).json()
    assert body["hand"] is None and body["groups"] == [] and body["warnings"][0]["code"] == "no_tiles"


@pytest.mark.parametrize(
    "detection",
    [
        {"tile": "m1", "box": [10, 10, 5, 20]},
        {"tile": "m1", "box": [10, 10, 20]},
        {"tile": "m1", "box": [10, 10, 20, 200]},
        {"tile": "z1", "box": [10, 10, 20, 20]},
        {"tile": "m1", "box": [10, 10, 20, 20], "confidence": 2},
        {"tile": "m1", "box": [-5, 10, 20, 20]},
    ],
    ids=["inverted", "three-numbers", "outside", "unknown-class", "confidence", "negative"],
)
def test_group_rejects_bad_detections(client: TestClient, detection: dict[str, Any]) -> None:
    assert_error(
        client.post("/api/v1/group", json={"width": 100, "height": 100, "detections": [detection]}),
        422,
        "invalid_request",
    )


# Three scattered tiles (from a real model run on a drawn photo): the grouper must not fail on them.
SCATTERED = [
    {"tile": "honour", "confidence": 0.2972, "box": [370.0, 294.3, 463.3, 378.6]},
    {"tile": "honour", "confidence": 0.2965, "box": [476.9, 451.2, 528.6, 519.7]},
    {"tile": "s4", "confidence": 0.2555, "box": [630.8, 432.9, 707.2, 522.9]},
]


def test_group_of_scattered_tiles_is_not_a_server_error(app: FastAPI) -> None:
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/api/v1/group", json={"width": 1200, "height": 900, "detections": SCATTERED})
    assert response.status_code == 200, response.text
    assert response.json()["hand"] == {"concealed": "4s", "win_tile": "4s", "melds": []}


_BOX = st.tuples(st.floats(0, 560), st.floats(0, 400), st.floats(20, 120), st.floats(1.0, 1.6)).map(
    lambda t: [t[0], t[1], t[0] + t[2], t[1] + t[2] * t[3]]
)
_DETECTION = st.fixed_dictionaries(
    {"tile": st.sampled_from(DETECTOR_CLASSES), "box": _BOX, "confidence": st.floats(0.05, 1.0)}
)


@given(detections=st.lists(_DETECTION, max_size=24))
@hypothesis_settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking: bounded time
)
def test_group_never_answers_a_server_error(app: FastAPI, detections: list[dict[str, Any]]) -> None:
    """Any valid detections in a 700x600 photo: a grouping, whatever the layout."""
    client = TestClient(app, raise_server_exceptions=False)  # no lifespan: /group needs no model
    response = client.post("/api/v1/group", json={"width": 700, "height": 600, "detections": detections})
    assert response.status_code == 200, response.text


def test_group_rejects_non_finite_numbers(client: TestClient) -> None:
    body = b'{"width": 100, "height": 100, "detections": [{"tile": "m1", "box": [NaN, 1, 20, 20]}]}'
    assert_error(
        client.post("/api/v1/group", content=body, headers={"content-type": "application/json"}),
        422,
        "invalid_request",
    )


# ---- presets, tiles, page


def test_presets_list_every_preset_with_its_knobs(client: TestClient) -> None:
    body = client.get("/api/v1/presets").json()
    assert body["default"] == "chengdu"
    assert body["presets"] == [rules.to_json() for rules in PRESETS.values()]


def test_tiles_are_the_detector_classes(client: TestClient) -> None:
    tiles = client.get("/api/v1/tiles").json()["tiles"]
    assert [tile["name"] for tile in tiles] == list(DETECTOR_CLASSES)
    assert tiles[13] == {"class_id": 13, "name": "p5", "tile": "5p", "name_zh": "5筒"}
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    enums = {
        tuple(prop["enum"])
        for model in schema.values()
        for prop in model.get("properties", {}).values()
        if "enum" in prop
    }
    assert DETECTOR_CLASSES in enums and DETECTOR_CLASSES[:BACK] in enums  # from the lists, never typed again
    assert TypeAdapter(DetectorClass).validate_python("p5") == "p5"
    with pytest.raises(ValidationError, match="'x9' is not one of m1, m2"):
        TypeAdapter(SuitedClass).validate_python("x9")


def test_the_context_schema_is_win_context() -> None:
    assert list(ContextIn.model_fields) == [f.name for f in fields(WinContext)]
    assert ContextIn(self_drawn=True, void_suit="m").to_context() == WinContext(
        self_drawn=True, void_suit="m"
    )


def test_the_page_is_served_with_nothing_from_elsewhere(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert 'capture="environment"' in page.text and 'accept="image/*"' in page.text
    for asset in ("/static/app.js", "/static/app.css"):
        response = client.get(asset)
        assert response.status_code == 200
        assert not re.search(r"https?://|@import|url\(", response.text), (
            f"{asset} refers to something elsewhere"
        )
    assert not re.search(r"https?://", page.text)
    consent = re.search(r'<label class="consent">(.*?)</label>', page.text, re.S)
    assert consent is not None and "Save this photo" in consent.group(1)
    assert re.search(r"[\u4e00-\u9fff]", consent.group(1))  # said in Chinese too


def test_openapi_documents_the_versioned_api(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "recognize",
        "score",
        "score-photo",
        "waits",
        "settle",
        "group",
        "presets",
        "tiles",
        "examples",
    ):
        assert f"/api/v1/{path}" in paths
    assert "/healthz" in paths
    assert "413" in paths["/api/v1/recognize"]["post"]["responses"]
    docs = client.get("/docs")  # Swagger UI, its files served from here, never from a CDN
    assert docs.status_code == 200 and docs.headers["x-frame-options"] == "DENY"
    scripts = re.findall(r'src="([^"]+)"', docs.text) + re.findall(r'href="([^"]+\.css)"', docs.text)
    assert scripts and all(url.startswith(("/static/swagger/", "/static/docs.js")) for url in scripts)
    assert all(client.get(url).status_code == 200 for url in scripts)
    assert "frame-ancestors 'none'" in client.get("/").headers["content-security-policy"]
    rules = client.get("/rules")  # the rules document, linked from the page
    assert rules.status_code == 200 and rules.headers["content-type"].startswith("text/plain")
    assert "查花猪" in rules.text and "| preset | 直杠" in rules.text
    assert 'href="/rules"' in client.get("/").text


def test_unknown_paths_and_methods_answer_in_the_error_shape(client: TestClient) -> None:
    assert_error(client.get("/api/v1/nope"), 404, "not_found")
    assert_error(client.get("/api/v1/score"), 405, "method_not_allowed")
    # every method the path takes: a set is read (GET) and removed (DELETE)
    wrong = client.put("/api/v1/sets/home")
    assert_error(wrong, 405, "method_not_allowed")
    assert wrong.headers["allow"] == "DELETE, GET"
    assert client.post("/api/v1/tables/abc").headers["allow"] == "GET"


def test_every_answer_says_nosniff_and_keeps_its_referrer_here(client: TestClient) -> None:
    for answer in (
        client.get("/"),
        client.get("/api/v1/presets"),
        client.get("/api/v1/nope"),
        client.get("/docs"),
    ):
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "same-origin"
    docs = client.get("/docs").headers["content-security-policy"]
    assert (
        "script-src 'self'" in docs
        and "frame-ancestors 'none'" in docs
        and "<script>" not in client.get("/docs").text
    )


def test_a_table_s_players_are_named(client: TestClient) -> None:
    answer = client.post("/api/v1/tables", json={"players": ["A", "", "C", "D"], "preset": "chengdu"})
    assert_error(answer, 422, "invalid_request")
    schema = client.get("/openapi.json").json()["components"]["schemas"]["TableIn"]["properties"]["players"]
    assert schema["items"]["minLength"] == 1 and schema["items"]["maxLength"] == 24


# ---- saving labelled examples


def _example_form(
    detections: list[dict[str, Any]], hand: dict[str, Any] | None = None, consent: bool = True
) -> dict[str, str]:
    return {
        "detections": json.dumps(detections),
        "hand": json.dumps(hand or HAND),
        "consent": str(consent).lower(),
    }


def test_examples_need_consent_and_then_write_photo_labels_and_hand(
    client: TestClient, photo: bytes, settings: Settings
) -> None:
    detections = client.post("/api/v1/recognize", files=upload(photo)).json()["detections"]
    refused = client.post(
        "/api/v1/examples", files=upload(photo), data=_example_form(detections, consent=False)
    )
    assert_error(refused, 422, "consent_required")
    assert not settings.dataset_dir.exists()

    saved = [
        client.post("/api/v1/examples", files=upload(photo), data=_example_form(detections)) for _ in range(2)
    ]
    assert [response.status_code for response in saved] == [201, 201]
    first, second = (response.json() for response in saved)
    assert first["image"] != second["image"] and first["labels"] != second["labels"]
    root = settings.dataset_dir
    with Image.open(root / first["image"]) as stored, Image.open(io.BytesIO(photo)) as sent:
        assert stored.format == "JPEG" and stored.size == sent.size == (1200, 900)
        difference = np.abs(np.asarray(stored, np.int16) - np.asarray(sent.convert("RGB"), np.int16))
        assert difference.mean() < 3  # the pixels, re-encoded
    lines = (root / first["labels"]).read_text().splitlines()
    assert len(lines) == first["boxes"] == 15
    class_id, xc, _, _, h = lines[0].split()
    box = detections[0]["box"]
    assert DETECTOR_CLASSES[int(class_id)] == detections[0]["tile"]
    assert float(xc) == pytest.approx((box[0] + box[2]) / 2 / 1200, abs=1e-5)
    assert float(h) == pytest.approx((box[3] - box[1]) / 900, abs=1e-5)
    records = [json.loads(line) for line in (root / "hands.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [record["id"] for record in records] == [first["id"], second["id"]]
    assert records[0]["hand"] == HAND and (records[0]["width"], records[0]["height"]) == (1200, 900)
    assert "names" in (root / "data.yaml").read_text()


def test_a_rotated_example_is_saved_upright(client: TestClient, settings: Settings) -> None:
    data = rotated_photo()
    detections = client.post("/api/v1/recognize", files=upload(data)).json()["detections"]
    saved = client.post("/api/v1/examples", files=upload(data), data=_example_form(detections)).json()
    with Image.open(settings.dataset_dir / saved["image"]) as image:
        assert image.size == (900, 1200) and image.getexif().get(0x0112, 1) == 1


@pytest.mark.parametrize(
    ("form", "code"),
    [
        (_example_form([{"tile": "m1", "box": [0, 0, 2000, 10]}]), "box_outside_image"),
        (_example_form([{"tile": "q1", "box": [0, 0, 20, 10]}]), "invalid_request"),
        ({**_example_form([]), "detections": "not json"}, "invalid_request"),
        (_example_form([], {"concealed": "12x"}), "invalid_tile"),
        (_example_form([], {"concealed": "11111m2345p678p99p"}), "too_many_copies"),
        (_example_form([], {"concealed": "123m456p"}), "wrong_tile_count"),
        (_example_form([], {**HAND, "win_tile": "7s"}), "win_tile_not_in_hand"),
        ({"hand": json.dumps(HAND), "consent": "true"}, "invalid_request"),
    ],
    ids=[
        "box-outside",
        "unknown-class",
        "not-json",
        "bad-hand",
        "fifth-copy",
        "wrong-count",
        "win-not-held",
        "no-detections",
    ],
)
def test_bad_examples_are_refused(
    client: TestClient, photo: bytes, settings: Settings, form: dict[str, str], code: str
) -> None:
    assert_error(client.post("/api/v1/examples", files=upload(photo), data=form), 422, code)
    assert not (settings.dataset_dir / "hands.jsonl").exists()
    assert not list(settings.dataset_dir.glob("*/*"))  # no image or label either


@pytest.mark.parametrize("field", ["detections", "hand"])
def test_a_broken_json_field_of_an_example_is_named(client: TestClient, photo: bytes, field: str) -> None:
    form = {**_example_form([]), field: "{not json"}
    body = client.post("/api/v1/examples", files=upload(photo), data=form).json()["error"]
    assert body["code"] == "invalid_request" and body["message"].startswith(f"body.{field}")
    assert body["details"][0]["loc"][:2] == ["body", field]


# ---- settings, CORS, CLI


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SMJ_WEIGHTS", str(tmp_path / "w.onnx"))
    monkeypatch.setenv("SMJ_CONF", "0.4")
    monkeypatch.setenv("SMJ_MAX_UPLOAD_BYTES", "1000")
    monkeypatch.setenv("SMJ_ALLOWED_ORIGINS", "http://a.test, http://b.test")
    settings = Settings()
    assert (
        settings.weights == tmp_path / "w.onnx" and settings.conf == 0.4 and settings.max_upload_bytes == 1000
    )
    assert settings.allowed_origins == ["http://a.test", "http://b.test"]
    monkeypatch.setenv("SMJ_ALLOWED_ORIGINS", '["http://c.test"]')
    assert Settings().allowed_origins == ["http://c.test"]
    assert Settings.model_fields["max_upload_bytes"].default == 15_000_000


def test_cors_allows_only_the_configured_origins(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"allowed_origins": ["http://phone.test"]}))
    with TestClient(app) as client:
        allowed = client.get("/api/v1/presets", headers={"Origin": "http://phone.test"})
        other = client.get("/api/v1/presets", headers={"Origin": "http://evil.test"})
    assert allowed.headers["access-control-allow-origin"] == "http://phone.test"
    assert "access-control-allow-origin" not in other.headers


def test_smj_serve_is_registered(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        smj.main(["serve", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--host" in out and "--port" in out and "--workers" in out


def test_the_cli_module_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    heavy = "('fastapi', 'numpy', 'uvicorn', 'cv2')"
    code = f"import sys, api.cli; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.strip() == "[]"


def test_a_json_body_larger_than_a_hand_needs_is_refused_before_it_is_parsed(client: TestClient) -> None:
    """A 1.2 MB JSON object (a million keys would block the event loop while parsing) is a 413 at once."""
    huge = "{" + ",".join(f'"k{i}": {i}' for i in range(120_000)) + "}"
    response = client.post("/api/v1/settle", content=huge, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and response.json()["error"]["code"] == "body_too_large"
    round_ = {"round": json.loads(ROUND.read_text(encoding="utf-8")), "preset": "chengdu"}
    assert client.post("/api/v1/settle", json=round_).status_code == 200  # a real round passes


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/settle", '{"round": {"players": ["\\ud800", "B", "C", "D"], "events": []}}'),
        ("/api/v1/settle", '{"round": {"void_suits": {"\\udc00": "m"}, "events": []}}'),
        ("/api/v1/score", '{"hand": {"concealed": "123m\\ud83d"}}'),
        ("/api/v1/tables", '{"players": ["A", "B", "C", "\\ud800x"]}'),
    ],
)
def test_text_that_is_not_unicode_is_refused_at_the_edge(client: TestClient, path: str, body: str) -> None:
    response = client.post(path, content=body.encode(), headers={"Content-Type": "application/json"})
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_text"


def test_a_pair_of_surrogates_is_text(client: TestClient) -> None:
    body = '{"hand": {"concealed": "123345m66999p"}, "preset": "chengdu", "comment_": "\\ud83c\\udc04"}'
    response = client.post(
        "/api/v1/score", content=body.encode(), headers={"Content-Type": "application/json"}
    )
    assert (
        response.status_code == 422 and response.json()["error"]["code"] == "invalid_request"
    )  # not invalid_text


def test_win_conditions_are_strict_booleans_and_the_presets_an_enum(client: TestClient) -> None:
    refused = client.post("/api/v1/score", json={"hand": HAND, "context": {"dealer": 0}})
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_request"
    assert client.post("/api/v1/score", json={"hand": HAND, "context": {"dealer": True}}).status_code == 200
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert schemas["ScoreIn"]["properties"]["preset"]["enum"] == list(PRESETS)
