"""Hostile requests: each is answered with a clear error, and none stalls or stops the service.

A fan of a billion, a 16-bit PNG, a PNG too large to decode within the memory budget, a decompression
bomb, two files in one request, a request past the time limit, a burst of photos against the bounded
worker pools, and SIGTERM to a running ``smj serve``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from PIL import Image

from api.app import create_app
from api.deps import get_detector
from api.fakes import FakeDetector, fake_photo
from api.settings import Settings
from scoring.settlement import MAX_FAN
from vision.images import decode_cost

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "hand.jpg"


def settings_for(tmp_path: Path, **changes: Any) -> Settings:
    return Settings(weights=tmp_path / "missing.onnx", dataset_dir=tmp_path / "dataset", **changes)


def assert_error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code, body
    return str(body["error"]["message"])


class GatedDetector(FakeDetector):
    """The fake hand, once ``gate`` is open; counts the runs going on at once and keeps the pixels seen."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.entered = threading.Semaphore(0)
        self.lock = threading.Lock()
        self.running = 0
        self.most_at_once = 0
        self.runs = 0
        self.seen: list[np.ndarray] = []

    def read(self, located: Any, **kwargs: Any) -> Any:
        with self.lock:
            self.running += 1
            self.runs += 1
            self.most_at_once = max(self.most_at_once, self.running)
            self.seen.append(located.pixels)
        self.entered.release()
        try:
            assert self.gate.wait(30), "the test never opened the gate"
            return super().read(located, **kwargs)
        finally:
            with self.lock:
                self.running -= 1


def client_with(app: FastAPI, detector: FakeDetector) -> TestClient:
    app.dependency_overrides[get_detector] = lambda: detector
    return TestClient(app)


def open_detector() -> GatedDetector:
    detector = GatedDetector()
    detector.gate.set()
    return detector


def upload(data: bytes, name: str = "hand.png", kind: str = "image/png") -> dict[str, Any]:
    return {"image": (name, data, kind)}


def png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG")
    return out.getvalue()


# ---- settle: a fan no hand has


@pytest.mark.parametrize("fan", [1_000_000_000, 3_000_000, 1_000_000, MAX_FAN + 1])
def test_a_fan_no_hand_has_is_refused_at_once(tmp_path: Path, fan: int) -> None:
    round_ = {"events": [{"type": "win", "player": "A", "self_drawn": True, "fan": fan}]}
    with TestClient(create_app(settings_for(tmp_path))) as client:
        response = client.post("/api/v1/settle", json={"preset": "qq_xuezhan", "round": round_})
        message = assert_error(response, 422, "fan_too_large")
        assert message.startswith("event 0: ") and str(MAX_FAN) in message
        assert client.get("/healthz").status_code == 200


def test_an_amount_no_json_reader_keeps_is_refused(tmp_path: Path) -> None:
    round_ = {"events": [{"type": "win", "player": "A", "self_drawn": True, "fan": MAX_FAN}]}
    with TestClient(create_app(settings_for(tmp_path))) as client:
        settled = client.post("/api/v1/settle", json={"preset": "qq_xuezhan", "round": round_})
        assert settled.status_code == 200 and settled.json()["totals"][0] == 3 * 2 ** (MAX_FAN - 1) + 3
        response = client.post(
            "/api/v1/settle", json={"preset": "qq_xuezhan", "round": round_, "base": 1_000_000}
        )
        assert_error(response, 422, "amount_too_large")


# ---- the event loop stays free, and every request has a time limit


def test_healthz_answers_while_photos_are_being_read(tmp_path: Path) -> None:
    detector = GatedDetector()
    with client_with(create_app(settings_for(tmp_path)), detector) as client:
        results: list[int] = []
        worker = threading.Thread(
            target=lambda: results.append(
                client.post(
                    "/api/v1/recognize", files=upload(fake_photo(), "a.jpg", "image/jpeg")
                ).status_code
            )
        )
        worker.start()
        assert detector.entered.acquire(timeout=30)  # the photo is in the detector, held there
        assert client.get("/healthz").json()["status"] == "ok"
        assert (
            client.post("/api/v1/score", json={"hand": {"concealed": "11122233344455m"}}).status_code == 200
        )
        assert not results  # the photo is still held
        detector.gate.set()
        worker.join(30)
    assert results == [200]


def test_a_request_past_the_time_limit_is_503_and_the_service_carries_on(tmp_path: Path) -> None:
    detector = GatedDetector()
    app = create_app(settings_for(tmp_path, request_timeout_s=0.5))
    with client_with(app, detector) as client:
        response = client.post("/api/v1/recognize", files=upload(fake_photo(), "a.jpg", "image/jpeg"))
        assert_error(response, 503, "request_timeout")
        assert response.headers["retry-after"] == "1"
        detector.gate.set()
        assert client.post("/api/v1/recognize", files=upload(fake_photo(), "b.jpg", "image/jpeg")).is_success


def test_decodes_and_model_runs_are_bounded(tmp_path: Path) -> None:
    """Eight photos at once against one model worker: one detector run at a time, all answered."""
    detector = GatedDetector()
    app = create_app(settings_for(tmp_path, decode_workers=1, model_workers=1))
    photo = fake_photo((400, 300))
    with client_with(app, detector) as client:
        statuses: list[int] = []
        threads = [
            threading.Thread(
                target=lambda: statuses.append(
                    client.post("/api/v1/recognize", files=upload(photo, "a.jpg", "image/jpeg")).status_code
                )
            )
            for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        assert detector.entered.acquire(timeout=30)
        assert client.get("/healthz").status_code == 200
        detector.gate.set()
        for thread in threads:
            thread.join(60)
    assert statuses == [200] * 8
    assert detector.runs == 8 and detector.most_at_once == 1


# ---- images: memory budget, bombs, 16 bits, two files


def test_a_png_over_the_decode_budget_is_too_many_pixels_and_a_jpeg_of_that_size_is_read(
    tmp_path: Path,
) -> None:
    width, height = 3400, 2400  # a JPEG over twice DECODE_LONG_SIDE is decoded reduced
    budget = decode_cost("RGB", (width, height)) - 1
    app = create_app(settings_for(tmp_path, max_decode_bytes=budget))
    with client_with(app, open_detector()) as client:
        big_png = png(np.full((height, width, 3), 40, np.uint8))
        message = assert_error(
            client.post("/api/v1/recognize", files=upload(big_png)), 413, "too_many_pixels"
        )
        assert "3400x2400 PNG" in message and "MB" in message
        jpeg = fake_photo((width, height))
        answer = client.post("/api/v1/recognize", files=upload(jpeg, "a.jpg", "image/jpeg"))
        assert answer.status_code == 200 and (answer.json()["width"], answer.json()["height"]) == (
            width,
            height,
        )


def _bomb() -> bytes:
    """A PNG header of 40000x40000 one-bit pixels (1.6 GP) and hardly any data: Pillow refuses it."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 40_000, 40_000, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + chunk(b"IEND", b"")
    )


def test_a_decompression_bomb_is_too_many_pixels(tmp_path: Path) -> None:
    """With the pixel limit raised past Pillow's own: Pillow refuses it, and that is too_many_pixels."""
    app = create_app(settings_for(tmp_path, max_pixels=10**10))
    with client_with(app, open_detector()) as client:
        for path in ("/api/v1/recognize", "/api/v1/score-photo"):
            assert_error(client.post(path, files=upload(_bomb())), 413, "too_many_pixels")


def test_a_16_bit_photo_reaches_the_detector_with_its_tones(tmp_path: Path) -> None:
    grey = np.asarray(Image.open(EXAMPLE).convert("L"))
    sixteen = io.BytesIO()
    Image.fromarray(grey.astype(np.uint16) * 257).save(sixteen, "PNG")
    detector = open_detector()
    with client_with(create_app(settings_for(tmp_path)), detector) as client:
        response = client.post("/api/v1/recognize", files=upload(sixteen.getvalue()))
    assert response.status_code == 200
    (seen,) = detector.seen
    assert seen.shape[:2] == grey.shape and np.abs(seen[..., 1].astype(int) - grey).max() <= 1


@pytest.mark.parametrize(
    "files",
    [
        [("image", ("a.jpg", b"1", "image/jpeg")), ("image", ("b.jpg", b"2", "image/jpeg"))],
        [("image", ("a.jpg", b"1", "image/jpeg")), ("photo", ("b.jpg", b"2", "image/jpeg"))],
    ],
    ids=["two-images", "image-and-another-file"],
)
def test_two_files_in_one_request_are_refused(tmp_path: Path, files: list[Any]) -> None:
    with client_with(create_app(settings_for(tmp_path)), open_detector()) as client:
        for path in ("/api/v1/recognize", "/api/v1/score-photo", "/api/v1/examples"):
            message = assert_error(client.post(path, files=files), 422, "too_many_files")
            assert "2 files" in message


# ---- SIGTERM


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _serve(tmp_path: Path, nofile: int = 0, **env: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``python smj.py serve`` on a free loopback port (no weights: it starts without the detector);
    ``nofile``: its file descriptor limit."""
    import resource

    def limit() -> None:
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    port = _free_port()
    env = {
        **os.environ,
        "SMJ_WEIGHTS": str(tmp_path / "missing.onnx"),
        "SMJ_DATASET_DIR": str(tmp_path),
        **env,
    }
    server = subprocess.Popen(
        [sys.executable, "smj.py", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=limit,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            pytest.fail("smj serve did not start")
        yield server, url
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        if server.stderr is not None:
            server.stderr.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    with _serve(tmp_path) as server:
        yield server


@pytest.fixture
def served_briefly(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``served``, with request heads given 1 s to arrive."""
    with _serve(tmp_path, SMJ_HEAD_TIMEOUT_S="1") as server:
        yield server


def test_sigterm_stops_the_server_cleanly(served: tuple[subprocess.Popen[bytes], str]) -> None:
    server, url = served
    round_ = {"events": [{"type": "win", "player": "A", "self_drawn": True, "fan": 1_000_000_000}]}
    answer = httpx.post(f"{url}/api/v1/settle", json={"preset": "qq_xuezhan", "round": round_}, timeout=10)
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "fan_too_large"
    server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("smj serve did not stop on SIGTERM")
    assert code in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
    assert server.stderr is not None
    log = server.stderr.read().decode()
    assert "Application shutdown complete" in log and "Traceback" not in log


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1024) == b""
    except TimeoutError:
        return False


def test_idle_and_slow_header_connections_are_closed(
    served_briefly: tuple[subprocess.Popen[bytes], str],
) -> None:
    _, url = served_briefly
    port = int(url.rsplit(":", 1)[1])
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # and never the blank line that ends the head
    try:
        assert all(_closed_by_server(sock, 5) for sock in idle)
        assert _closed_by_server(slow, 5)
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200  # serving on, untouched
    finally:
        for sock in [*idle, slow]:
            sock.close()


def test_a_kept_alive_connection_gets_the_same_deadline_for_its_next_request(
    served_briefly: tuple[subprocess.Popen[bytes], str],
) -> None:
    _, url = served_briefly
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(5)
        answer = sock.recv(65536)
        while not answer.endswith(b"}"):  # the head and the JSON body may come in two pieces
            answer += sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # a second head, left unfinished
        assert _closed_by_server(sock, 5)


def test_bytes_that_are_no_http_request_get_the_json_error_shape(
    served: tuple[subprocess.Popen[bytes], str],
) -> None:
    _, url = served
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as sock:
        sock.sendall(b"\x16\x03\x01 this is not HTTP\r\n\r\n")
        sock.settimeout(5)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"content-type: application/json" in head.lower()
    assert json.loads(body)["error"]["code"] == "bad_http_request"


def test_at_the_connection_cap_the_longest_idle_connections_make_room(tmp_path: Path) -> None:
    with _serve(tmp_path, nofile=128) as (_, url):  # a cap of 128 - 64 connections
        port = int(url.rsplit(":", 1)[1])
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(100)]
        try:
            started = time.perf_counter()
            assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
            assert time.perf_counter() - started < 3  # long before the 10 s head deadline
            assert sum(_closed_by_server(sock, 0.2) for sock in idle[:30]) >= 25  # the oldest went first
        finally:
            for sock in idle:
                sock.close()
