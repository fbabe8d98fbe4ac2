"""Live reading through the API (api.routes.live, api.live, usecases.live): a phone's frames followed until
the hand is locked, and the bounds on live phones and their frames."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.app import create_app
from api.deps import get_detector
from api.errors import ApiError
from api.fakes import FakeDetector, fake_photo
from api.live import LiveSessions
from api.settings import Settings
from scoring import CHENGDU, WinContext
from usecases.live import LiveReading

HAND = {"concealed": "123345m66999p", "melds": [{"type": "kong_exposed", "tile": "2p"}], "win_tile": "6p"}
OTHER_ROWS = (("1s1s1s2s3s4s5s5s5s7s8s9s9s", "9s"),)  # 清一色 of 条, won on 9s
OTHER_HAND = {"concealed": "11123455578999s", "melds": [], "win_tile": "9s"}
MISREAD = (("1m2m3m3m4m5s6p9p9p9p", "6p"), ("2p2p2p2p",))  # 5m read as 5s: three suits, no win
FRAME = fake_photo((640, 480))


def settings_for(tmp_path: Path, **limits: object) -> Settings:
    values = {"live_frame_interval_s": 0.0, **limits}
    return Settings(weights=tmp_path / "missing.onnx", dataset_dir=tmp_path / "dataset", **values)  # type: ignore[arg-type]


def app_with(settings: Settings, detector: FakeDetector | None = None) -> FastAPI:
    app = create_app(settings)
    app.dependency_overrides[get_detector] = lambda: detector or FakeDetector()
    return app


@pytest.fixture
def client(tmp_path: Path):
    with TestClient(app_with(settings_for(tmp_path))) as client:
        yield client


def send(client: TestClient, session: str, frame: bytes = FRAME):
    return client.post(f"/api/v1/live/{session}/frames", files={"image": ("frame.jpg", frame, "image/jpeg")})


def test_frames_of_a_held_hand_lock_it_after_hold_frames_and_score_it(client):
    opened = client.post("/api/v1/live", json={"hold": 3})
    assert opened.status_code == 201
    session = opened.json()["session"]
    assert len(session) >= 20 and opened.json()["hold"] == 3
    answers = [send(client, session).json() for _ in range(4)]
    assert [a["locked"] for a in answers] == [False, False, True, True]
    assert [a["steady"]["held"] for a in answers] == [1, 2, 3, 3]  # locked: it held long enough
    assert answers[0]["why"]["code"] == "changing" and answers[2]["why"] is None
    assert answers[2]["hand"] == HAND
    assert answers[2]["score"]["valid"] and answers[2]["score"]["total_fan"] == 1
    assert len(answers[0]["detections"]) == 15 and answers[0]["width"] == 640
    assert answers[0]["frame"] == 1 and answers[3]["frame"] == 4


def test_a_locked_hand_stays_until_the_view_changes_then_the_new_hand_locks(tmp_path):
    app = app_with(settings_for(tmp_path))
    with TestClient(app) as client:
        session = client.post("/api/v1/live", json={"hold": 2}).json()["session"]
        for _ in range(3):
            locked = send(client, session).json()
        assert locked["locked"] and locked["hand"] == HAND
        app.dependency_overrides[get_detector] = lambda: FakeDetector(OTHER_ROWS)
        answers = [send(client, session).json() for _ in range(2)]
        assert [a["locked"] for a in answers] == [False, True]
        assert answers[1]["hand"] == OTHER_HAND


def test_a_steady_reading_that_is_no_win_says_why_and_never_locks(tmp_path):
    with TestClient(app_with(settings_for(tmp_path), FakeDetector(MISREAD))) as client:
        session = client.post("/api/v1/live", json={"hold": 2}).json()["session"]
        answers = [send(client, session).json() for _ in range(4)]
    assert not any(a["locked"] for a in answers)
    assert answers[-1]["why"]["code"] == "not_a_win" and "suit" in answers[-1]["why"]["message"]


def test_a_hand_whose_frames_read_a_tile_torn_between_two_faces_is_not_locked_and_says_so(tmp_path):
    torn = FakeDetector(alternatives={3: ("m6", 0.85)})  # its second 3m nearly as likely a 6m, every frame
    with TestClient(app_with(settings_for(tmp_path), torn)) as client:
        session = client.post("/api/v1/live", json={"hold": 2}).json()["session"]
        answers = [send(client, session).json() for _ in range(4)]
    assert not any(a["locked"] for a in answers) and answers[-1]["steady"]["held"] >= 2
    assert answers[-1]["why"]["code"] == "unsure_tile" and "closer" in answers[-1]["why"]["message"]


def test_an_empty_view_advises_pointing_at_the_hand(tmp_path):
    with TestClient(app_with(settings_for(tmp_path), FakeDetector(()))) as client:
        session = client.post("/api/v1/live", json={}).json()["session"]
        answer = send(client, session).json()
    assert answer["why"]["code"] == "no_hand"
    assert [g["code"] for g in answer["guidance"]] == ["no_hand"]
    assert answer["next_side"] == 640


def test_the_live_phones_are_capped_and_a_closed_session_frees_its_place(tmp_path):
    with TestClient(app_with(settings_for(tmp_path, live_phones=1))) as client:
        first = client.post("/api/v1/live", json={}).json()["session"]
        refused = client.post("/api/v1/live", json={})
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "live_full"
        assert refused.headers["retry-after"] == "1"
        assert client.delete(f"/api/v1/live/{first}").status_code == 204
        assert client.post("/api/v1/live", json={}).status_code == 201
        gone = send(client, first)
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "no_live_session"


def test_frames_faster_than_the_interval_are_dropped_not_queued(tmp_path):
    with TestClient(app_with(settings_for(tmp_path, live_frame_interval_s=60))) as client:
        session = client.post("/api/v1/live", json={}).json()["session"]
        assert send(client, session).status_code == 200
        dropped = send(client, session)
    assert dropped.status_code == 429 and dropped.json()["error"]["code"] == "frame_dropped"


@pytest.mark.parametrize(
    ("limits", "frame"),
    [({"live_max_side": 320}, FRAME), ({"live_frame_bytes": 1000}, FRAME)],
    ids=["side", "bytes"],
)
def test_a_frame_past_the_limits_is_refused_by_name(tmp_path, limits, frame):
    with TestClient(app_with(settings_for(tmp_path, **limits))) as client:
        session = client.post("/api/v1/live", json={}).json()["session"]
        answer = send(client, session, frame)
    assert answer.status_code == 413 and answer.json()["error"]["code"] == "frame_too_large"


def test_bad_sessions_and_frames_are_refused_by_name(client):
    assert send(client, "no-such-session").json()["error"]["code"] == "no_live_session"
    session = client.post("/api/v1/live", json={}).json()["session"]
    assert send(client, session, b"not an image").json()["error"]["code"] == "not_an_image"
    assert client.post("/api/v1/live", json={"hold": 0}).status_code == 422
    assert client.post("/api/v1/live", json={"preset": "nope"}).json()["error"]["code"] == "unknown_preset"
    assert client.post("/api/v1/live", json={"set": "nope"}).status_code in (404, 422)
    assert client.delete("/api/v1/live/no-such-session").status_code == 404


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def reading() -> LiveReading:
    return LiveReading(CHENGDU, WinContext())


def test_a_session_idle_too_long_is_forgotten():
    clock = Clock()
    sessions = LiveSessions(phones=2, idle_s=60, interval_s=0, in_flight=2, clock=clock)
    key = sessions.open(reading())
    clock.now = 59
    with sessions.frame(key):
        pass
    clock.now = 118
    assert len(sessions) == 1
    clock.now = 120
    assert len(sessions) == 0
    with pytest.raises(ApiError) as error, sessions.frame(key):
        pass
    assert error.value.code == "no_live_session"


def test_a_phone_has_one_frame_in_flight_and_the_server_as_many_as_its_model_workers():
    sessions = LiveSessions(phones=3, idle_s=60, interval_s=0, in_flight=2, clock=Clock())
    a, b, c = (sessions.open(reading()) for _ in range(3))
    with sessions.frame(a):
        with pytest.raises(ApiError, match="still being read"), sessions.frame(a):
            pass
        with sessions.frame(b), pytest.raises(ApiError, match="other frames"), sessions.frame(c):
            pass
        with sessions.frame(c):
            pass
    with sessions.frame(a):
        pass
