"""The app served on a loopback port for a test (``running``), and a phone-sized headless Chromium on it
(``phone``: Debian's ``chromium`` driven by Playwright)."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running(app: FastAPI, start_s: float = 60) -> Iterator[str]:
    """The app served by uvicorn on a free loopback port for the block: its base URL."""
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_s
    while not instance.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        instance.should_exit = True
        thread.join(timeout=10)


@contextmanager
def served(folder: Path, **create: Any) -> Iterator[tuple[str, str]]:
    """The real app (``create``: ``create_app``'s keywords, e.g. ``load_detector``) with a dataset folder and
    a SQLite store of its own in ``folder``, served for the block: its base URL and the store's URL."""
    from api.app import create_app
    from api.settings import Settings

    url = f"sqlite:///{folder / 'store.db'}"
    with running(create_app(Settings(dataset_dir=folder / "dataset", database_url=url), **create)) as base:
        yield base, url


def fake_camera(video: Path) -> tuple[str, ...]:
    """Chromium's switches for a camera that plays ``video`` (a ``.y4m``, ``datasets.camera_video``) and is
    granted without asking: ``mobile``'s ``extra_args``."""
    return (
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-video-capture={video}",
    )


def mobile(
    playwright: Any,
    folder: Path,
    size: tuple[int, int] = (412, 915),
    extra_args: tuple[str, ...] = (),
    **options: Any,
) -> Any:
    """A phone-sized headless Chromium of its own profile ``folder`` (``extra_args``: more of Chromium's
    switches; ``options``: Playwright's, such as ``service_workers``): the browser context."""
    width, height = size
    return playwright.chromium.launch_persistent_context(
        str(folder),
        executable_path=CHROMIUM,
        headless=True,
        args=[*CHROMIUM_ARGS, *extra_args],
        viewport={"width": width, "height": height},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        **options,
    )


def phone(playwright: Any, folder: Path, base: str, timeout_ms: int = 15_000) -> Any:
    """A phone-sized Chromium (412x915) of its own profile ``folder``, on the page at ``base``, ready (a
    Playwright ``Page``)."""
    context = mobile(playwright, folder)
    context.set_default_timeout(timeout_ms)
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(base + "/")
    page.wait_for_selector("body[data-ready=true]")
    return page
