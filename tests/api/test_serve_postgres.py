"""Two ``smj serve`` processes sharing one PostgreSQL store: a table written through one is read through the
other, and a write made through the second on the version the first already moved on is refused."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _call(
    base: str, path: str, body: dict[str, Any] | None = None, code: str | None = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method="GET" if body is None else "POST")
    request.add_header("Content-Type", "application/json")
    if code:
        request.add_header("X-Table-Code", code)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture
def servers(postgres_url: str, tmp_path: Path) -> Iterator[list[str]]:
    env = {**os.environ, "SMJ_DATABASE_URL": postgres_url, "SMJ_DATASET_DIR": str(tmp_path / "dataset")}
    started, bases = [], []
    for _ in range(2):
        port = _port()
        command = [sys.executable, str(ROOT / "smj.py"), "serve", "--port", str(port)]
        started.append(subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.DEVNULL))
        bases.append(f"http://127.0.0.1:{port}")
    try:
        for base, process in zip(bases, started, strict=True):
            deadline = time.monotonic() + 90
            while True:
                try:
                    with urllib.request.urlopen(base + "/healthz", timeout=2):
                        break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"smj serve on {base} did not start") from None
                    time.sleep(0.3)
        yield bases
    finally:
        for process in started:
            process.terminate()
            process.wait(timeout=30)


def test_a_table_written_through_one_server_is_read_through_the_other(servers: list[str]) -> None:
    first, second = servers
    status, table = _call(first, "/api/v1/tables", {"players": ["A", "B", "C", "D"], "preset": "chengdu"})
    assert status == 201
    code, path = table["code"], f"/api/v1/tables/{table['id']}"
    status, table = _call(first, f"{path}/rounds", {}, code)
    kong = {"type": "kong", "player": "A", "kind": "concealed", "tile": "5p"}
    status, table = _call(first, f"{path}/rounds/1/events", {"version": 1, "event": kong}, code)
    assert status == 200
    status, seen = _call(second, path)
    assert status == 200 and seen["rounds"][0]["events"] == [kong] and seen["totals"] == table["totals"]
    status, joined = _call(second, "/api/v1/tables/join", {"code": code})
    assert status == 200 and joined["id"] == table["id"]
    late = {"type": "kong", "player": "B", "kind": "concealed", "tile": "6p"}
    status, refused = _call(second, f"{path}/rounds/1/events", {"version": 1, "event": late}, code)
    assert status == 409 and refused["error"]["details"][0]["table"]["rounds"][0]["events"] == [kong]
