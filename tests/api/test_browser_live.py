"""The page's live mode in real headless Chromium, its camera Chromium's fake one playing a video the test
renders: a bundled photo of a hand shaken and blurred, then held steady (``datasets.camera_video``). The real
reader follows the frames and locks the hand; ``#live-result`` carries it as ``data-hand``. Also: one frame
in flight at a time however slow the server, and the photo buttons when the camera is refused."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from browser import fake_camera, mobile, running
from PIL import Image
from playwright.sync_api import Page, expect, sync_playwright

from api.app import create_app
from api.fakes import FakeDetector
from api.settings import PROJECT_ROOT, Settings
from datasets.camera_video import camera_frames, write_y4m

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

EXAMPLE = PROJECT_ROOT / "examples" / "hand.jpg"


def hand_video(folder: Path, size: tuple[int, int] = (640, 480)) -> Path:
    photo = np.asarray(Image.open(EXAMPLE).convert("RGB"))
    return write_y4m(camera_frames(photo, size, shaken=12, steady=28, seed=3), folder / "hand.y4m")


def truth() -> dict:
    hand = json.loads((EXAMPLE.with_suffix(".json")).read_text())["hand"]
    return {**hand, "melds": sorted(hand["melds"], key=json.dumps)}


@pytest.fixture
def live_page(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Page]:
    """The page at ``/?live=1`` on a server with the real models, its camera playing the hand's video."""
    settings = Settings(dataset_dir=tmp_path / "dataset", database_url=f"sqlite:///{tmp_path / 's.db'}")
    with running(create_app(settings)) as base, sync_playwright() as playwright:
        context = mobile(playwright, tmp_path / "profile", extra_args=fake_camera(hand_video(tmp_path)))
        context.set_default_timeout(20_000)
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(base + "/?live=1")
        yield page
        context.close()


def test_the_fake_camera_s_hand_is_locked_and_scored(live_page: Page, tmp_path: Path) -> None:
    result = live_page.locator("#live-result[data-hand]")
    expect(result).to_have_count(1, timeout=90_000)
    hand = json.loads(result.get_attribute("data-hand") or "null")
    assert {**hand, "melds": sorted(hand["melds"], key=json.dumps)} == truth()
    expect(live_page.locator("[data-testid=total-fan]")).to_be_visible()
    expect(live_page.locator("#hand-text")).to_contain_text("22789999m")
    live_page.screenshot(path=str(tmp_path / "live.png"))
    live_page.click("#live-stop")
    expect(live_page.locator("#live")).to_be_hidden()
    expect(live_page.locator("#live-start")).to_be_visible()


class SlowDetector(FakeDetector):
    """The fake hand, read in ``seconds``; counts the frames read at once."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.reading = 0
        self.most = 0
        self.lock = threading.Lock()

    def answer(self, located, conf):  # type: ignore[no-untyped-def]
        with self.lock:
            self.reading += 1
            self.most = max(self.most, self.reading)
        time.sleep(self.seconds)
        with self.lock:
            self.reading -= 1
        return super().answer(located, conf)


def test_a_slow_server_gets_one_frame_at_a_time_never_a_queue(tmp_path: Path) -> None:
    detector = SlowDetector(0.4)
    settings = Settings(dataset_dir=tmp_path / "dataset", database_url=f"sqlite:///{tmp_path / 's.db'}")
    app = create_app(settings, load_detector=lambda _: detector)
    with running(app) as base, sync_playwright() as playwright:
        context = mobile(playwright, tmp_path / "profile", extra_args=fake_camera(hand_video(tmp_path)))
        page = context.pages[0] if context.pages else context.new_page()
        flying: list[int] = [0, 0, 0]  # now, most, answered

        def sent(request) -> None:  # type: ignore[no-untyped-def]
            if request.url.endswith("/frames"):
                flying[0] += 1
                flying[1] = max(flying[:2])

        def done(request) -> None:  # type: ignore[no-untyped-def]
            if request.url.endswith("/frames"):
                flying[0] -= 1
                flying[2] += 1

        page.on("request", sent)
        page.on("requestfinished", done)
        page.on("requestfailed", done)
        page.goto(base + "/?live=1")
        deadline = time.monotonic() + 30
        while flying[2] < 6 and time.monotonic() < deadline:  # six frames read, 0.4 s each
            page.wait_for_timeout(200)
        context.close()
    assert flying[2] >= 6 and flying[1] == 1 and detector.most == 1


def test_a_refused_camera_leaves_the_photo_buttons(tmp_path: Path) -> None:
    from api.fakes import create_fake_app

    settings = Settings(dataset_dir=tmp_path / "dataset", database_url=f"sqlite:///{tmp_path / 's.db'}")
    with running(create_fake_app(settings)) as base, sync_playwright() as playwright:
        context = mobile(playwright, tmp_path / "profile")
        context.add_init_script(
            "navigator.mediaDevices.getUserMedia = () => "
            "Promise.reject(new DOMException('refused', 'NotAllowedError'));"
        )
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(base + "/?live=1")
        expect(page.locator("#live-result[data-state=fallback]")).to_have_count(1)
        expect(page.locator("#status")).to_contain_text("the camera was refused")
        expect(page.locator("#live")).to_be_hidden()
        expect(page.locator("label[for=camera]")).to_be_visible()
        expect(page.locator("label[for=file]")).to_be_visible()
        context.close()
