"""``smj serve --tls``: the self-signed certificate a phone's camera needs (api.tls), made once, kept, made
again when it no longer serves, and a real https server answering with it."""

from __future__ import annotations

import ssl
import stat
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn

import api.tls
from api.cli import secure
from api.fakes import create_fake_app
from api.settings import Settings
from api.tls import certificate, local_names

NAMES = ("127.0.0.1", "192.168.1.20", "localhost")


def test_the_certificate_is_made_once_and_kept(tmp_path: Path):
    made = certificate(tmp_path / "tls", NAMES)
    again = certificate(tmp_path / "tls", NAMES)
    assert again.fingerprint == made.fingerprint and len(made.fingerprint.split(":")) == 32
    assert set(NAMES) <= set(made.names)
    assert stat.S_IMODE(made.key.stat().st_mode) == 0o600
    assert made.cert.read_bytes().startswith(b"-----BEGIN CERTIFICATE-----")


def test_a_new_address_an_unreadable_file_or_an_ending_certificate_makes_a_new_one(tmp_path, monkeypatch):
    folder = tmp_path / "tls"
    first = certificate(folder, NAMES)
    moved = certificate(folder, ("127.0.0.1", "10.0.0.7", "localhost"))
    assert moved.fingerprint != first.fingerprint and "10.0.0.7" in moved.names
    moved.cert.write_text("not a certificate")
    mended = certificate(folder, NAMES)
    assert mended.fingerprint != moved.fingerprint and set(NAMES) <= set(mended.names)
    monkeypatch.setattr(api.tls, "VALID_DAYS", 3)  # ends within RENEW_DAYS: made again at once
    short = certificate(tmp_path / "short", NAMES)
    assert certificate(tmp_path / "short", NAMES).fingerprint != short.fingerprint


def test_this_machine_s_names_include_localhost_and_its_loopback():
    names = local_names()
    assert "localhost" in names and "127.0.0.1" in names


def test_smj_serve_tls_prints_where_and_the_fingerprint(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    options = secure("0.0.0.0", 8443)
    printed = capsys.readouterr().err
    assert Path(options["ssl_certfile"]).parent == tmp_path / "smj" / "tls"
    made = certificate(tmp_path / "smj" / "tls")
    assert made.fingerprint in printed and ":8443/" in printed


def test_an_https_server_with_it_answers_a_client_that_trusts_it(tmp_path: Path):
    made = certificate(tmp_path / "tls", ("127.0.0.1", "localhost"))
    app = create_fake_app(Settings(dataset_dir=tmp_path / "d", database_url=f"sqlite:///{tmp_path / 's.db'}"))
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        ssl_certfile=str(made.cert),
        ssl_keyfile=str(made.key),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the https server did not start"
        time.sleep(0.05)
    try:
        port = server.servers[0].sockets[0].getsockname()[1]
        trusting = ssl.create_default_context(cafile=str(made.cert))
        with httpx.Client(verify=trusting) as client:
            assert client.get(f"https://127.0.0.1:{port}/healthz").status_code == 200
        with httpx.Client() as client, pytest.raises(httpx.ConnectError):
            client.get(f"https://127.0.0.1:{port}/healthz")  # one that does not trust it is refused
    finally:
        server.should_exit = True
        thread.join(timeout=10)
