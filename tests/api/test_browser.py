"""The page in real headless Chromium (Debian's ``chromium``, driven by Playwright), on a phone-sized screen.

A uvicorn server on 127.0.0.1 runs the real app with a fake detector that misreads one tile (5m as 5s, so
the photo first reads as no win); the test uploads a photo, sees the tiles boxed, corrects the misread
tile from the palette, reads the new score, deletes and re-adds a tile, changes the rules, saves a
labelled example and checks an EXIF-rotated photo is shown the way the server measured it. No request
may leave the machine. Screenshots go to ``tmp_path`` (``page.png``, ``palette.png``).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.app import create_app
from api.fakes import FakeDetector, fake_photo
from api.settings import Settings

pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[dev])")
from browser import CHROMIUM, mobile, running
from playwright.sync_api import Page, expect, sync_playwright

if not Path(CHROMIUM).exists():
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium, or ./setup.sh)",
        allow_module_level=True,
    )

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

MISREAD = (("1m2m3m3m4m5s6p9p9p9p", "6p"), ("2p2p2p2p",))  # the 6th tile, 5m, read as 5s
RUNNER_UP = {5: ("m5", 0.01)}  # its second reading, too unsure for the grouper to take by itself


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(base URL, dataset folder) of a server running the app with the misreading fake detector."""
    dataset = tmp_path_factory.mktemp("dataset")
    detector = FakeDetector(MISREAD, alternatives=RUNNER_UP)
    app = create_app(Settings(dataset_dir=dataset), load_detector=lambda _: detector)
    with running(app) as base:
        yield base, dataset


@pytest.fixture
def page(tmp_path: Path, server: tuple[str, Path]) -> Iterator[Page]:
    base, _ = server
    with sync_playwright() as playwright:
        context = mobile(playwright, tmp_path / "profile", (390, 844), service_workers="block")
        context.set_default_timeout(10_000)
        page = context.pages[0] if context.pages else context.new_page()
        outside: list[str] = []
        page.on(
            "request", lambda request: outside.append(request.url) if not _local(request.url, base) else None
        )
        page.goto(base + "/")
        page.wait_for_selector("body[data-ready=true]")
        yield page
        context.close()
        assert outside == [], f"the page made requests off the machine: {outside}"


def _local(url: str, base: str) -> bool:
    return url.startswith((base + "/", "blob:", "data:"))


def _rotated_photo() -> bytes:
    """A portrait photo stored turned on its side, with EXIF orientation 6 (as phones write them)."""
    from PIL import Image

    upright = Image.open(io.BytesIO(fake_photo((900, 1200))))
    stored = upright.transpose(Image.Transpose.ROTATE_90)  # counter-clockwise: orientation 6 turns it back
    exif = Image.Exif()
    exif[0x0112] = 6
    out = io.BytesIO()
    stored.save(out, format="JPEG", exif=exif.tobytes(), quality=90)
    return out.getvalue()


def _score_text(page: Page) -> str:
    return page.locator("#score").inner_text()


def test_photo_correct_score_and_save(page: Page, server: tuple[str, Path], tmp_path: Path) -> None:
    _, dataset = server
    photo = tmp_path / "hand.jpg"
    photo.write_bytes(fake_photo())
    page.set_input_files("#file", str(photo))

    boxes = page.locator("#overlay .tile-box")
    expect(boxes).to_have_count(15)
    expect(page.locator("#score")).to_contain_text("不是胡牌 Not a win")
    expect(page.locator("#overlay .group-outline.meld")).to_have_count(1)
    assert "5条" in boxes.nth(5).inner_text()

    # The misread tile: tap it on the photo, pick 5万, offered first as its likely reading.
    boxes.nth(5).click()
    expect(page.locator("#palette")).to_be_visible()
    expect(page.locator("#palette-tiles button")).to_have_count(27)
    expect(page.locator("#palette-likely button")).to_have_count(1)
    page.screenshot(path=str(tmp_path / "palette.png"))
    page.click("#palette-likely button[data-tile=m5]")
    expect(page.locator("#palette")).to_be_hidden()
    expect(page.locator("[data-testid=total-fan]")).to_have_text("1 番")
    expect(page.locator("#hand-text")).to_contain_text("123345m66999p")
    text = _score_text(page)
    assert "根" in text and "Root" in text and "×2" in text and "平胡" in text
    expect(page.locator("[data-testid=payment]")).to_have_text("点炮 the discarder pays 2 底 base")

    # A deleted tile is a wrong count (no score, a warning); adding it back restores the score.
    boxes.nth(0).click()
    expect(page.locator("#palette-likely-row")).to_be_hidden()  # no second reading for this tile
    page.click("#palette [data-action=delete]")
    expect(page.locator("#score")).to_contain_text("不能计分")
    expect(page.locator("#warnings li[data-code=tile_count]")).to_have_count(1)
    # one tile short: the hand is a waiting one, and the page says what it waits on (听牌)
    expect(page.locator("[data-testid=waits]")).to_contain_text("waiting on 2")
    expect(page.locator("[data-testid=waits] li")).to_have_count(2)
    assert page.locator("[data-testid=waits] li").nth(0).inner_text().startswith("1万")
    expect(page.locator("#hand-text")).not_to_contain_text("胡 win")  # a waiting hand has no winning tile
    first = boxes.nth(0).bounding_box()
    assert first is not None
    page.click("#add-tile")
    page.mouse.click(first["x"] - first["width"] * 0.55, first["y"] + first["height"] / 2)
    page.click("#palette-tiles button[data-tile=m1]")
    expect(boxes).to_have_count(15)
    expect(page.locator("[data-testid=total-fan]")).to_have_text("1 番")
    expect(page.locator("#warnings li")).to_have_count(0)

    # The player names the tile they won on: the hand's winning tile, the score the same hand's
    chosen = page.locator('#overlay .tile-box[data-index="1"]')
    face = chosen.get_attribute("data-tile") or "?"
    won_on = f"胡 win {face[1:]}{face[0]}"  # the tile's face as a hand writes it ("m3": 3m)
    expect(page.locator("#hand-text")).not_to_contain_text(won_on)
    chosen.click()
    page.click("#palette [data-action=win]")
    expect(page.locator("#hand-text")).to_contain_text(won_on)
    expect(chosen).to_have_class(re.compile(r"\bwin\b"))
    expect(page.locator("[data-testid=total-fan]")).to_have_text("1 番")

    # Other rules, other numbers: QQ 血战 counts 平胡 as 1 fan.
    page.select_option("#preset", "qq_xuezhan")
    expect(page.locator("[data-testid=total-fan]")).to_have_text("2 番")
    page.check("#flags input[name=tian_hu]")  # implies self-drawn and dealer; impossible with a kong
    assert page.is_checked("#flags input[name=self_drawn]") and page.is_checked("#flags input[name=dealer]")
    expect(page.locator("#score")).to_contain_text("天胡")
    page.uncheck("#flags input[name=tian_hu]")  # what it brought goes with it: 自摸 and 庄家 unticked
    assert not page.is_checked("#flags input[name=self_drawn]") and not page.is_checked(
        "#flags input[name=dealer]"
    )
    expect(page.locator("[data-testid=total-fan]")).to_have_text("2 番")
    expect(page.locator("[data-testid=payment]")).to_contain_text("点炮 the discarder pays")
    page.check("#flags input[name=self_drawn]")  # ticked by the player: it stays when 天胡 comes and goes
    page.check("#flags input[name=tian_hu]")
    page.uncheck("#flags input[name=tian_hu]")
    assert page.is_checked("#flags input[name=self_drawn]") and not page.is_checked(
        "#flags input[name=dealer]"
    )
    expect(page.locator("[data-testid=payment]")).to_contain_text("自摸 each player still in pays")

    # Saving is opt-in.
    assert page.is_disabled("#save-example")
    page.check("#consent")
    page.click("#save-example")
    expect(page.locator("#save-status")).to_contain_text("Saved images/")
    record = json.loads((dataset / "hands.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert record["hand"]["concealed"] == "123345m66999p"
    assert len((dataset / record["labels"]).read_text().splitlines()) == 15

    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(tmp_path / "page.png"), full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is wider than the phone screen: {width}px"


def test_rotated_photo_boxes_follow_the_upright_image(page: Page, tmp_path: Path) -> None:
    photo = tmp_path / "portrait.jpg"
    photo.write_bytes(_rotated_photo())
    page.set_input_files("#camera", str(photo))
    expect(page.locator("#overlay .tile-box")).to_have_count(15)
    shown = page.locator("#photo").bounding_box()
    first = page.locator("#overlay .tile-box").nth(0).bounding_box()
    assert shown is not None and first is not None
    assert shown["height"] / shown["width"] == pytest.approx(1200 / 900, rel=0.01)  # shown upright
    # The fake's first tile starts 32% down the upright photo.
    assert (first["y"] - shown["y"]) / shown["height"] == pytest.approx(0.32, abs=0.01)
    page.screenshot(path=str(tmp_path / "portrait.png"))


def test_a_blurred_photo_keeps_its_warning_through_corrections(page: Page, tmp_path: Path) -> None:
    """A warning about the photo itself (``blurred_photo``) is no tile's to correct: it stays on the page
    after the tiles are corrected and re-grouped, and a sharp photo read next drops it."""
    import cv2
    import numpy as np

    sharp = fake_photo()
    pixels = cv2.imdecode(np.frombuffer(sharp, np.uint8), cv2.IMREAD_COLOR)
    blurred = tmp_path / "blurred.jpg"
    blurred.write_bytes(cv2.imencode(".jpg", cv2.GaussianBlur(pixels, (0, 0), 8.0))[1].tobytes())
    page.set_input_files("#file", str(blurred))
    boxes = page.locator("#overlay .tile-box")
    expect(boxes).to_have_count(15)
    warning = page.locator("#warnings li[data-code=blurred_photo]")
    expect(warning).to_have_count(1)
    expect(warning).to_contain_text("blurred")

    boxes.nth(5).click()  # the misread tile, corrected: the hand re-grouped without the photo
    page.click("#palette-likely button[data-tile=m5]")
    expect(page.locator("[data-testid=total-fan]")).to_have_text("1 番")
    expect(warning).to_have_count(1)

    photo = tmp_path / "sharp.jpg"
    photo.write_bytes(sharp)
    page.set_input_files("#file", str(photo))
    expect(page.locator("#score")).to_contain_text("不是胡牌 Not a win")
    expect(warning).to_have_count(0)


def test_a_hand_typed_is_scored_without_a_photo(page: Page, tmp_path: Path) -> None:
    page.fill("#typed-hand", "123345m66999p kong 2p win 6p")
    page.locator("#typed button[type=submit]").click()
    expect(page.locator("#hand-text")).to_contain_text("123345m66999p")
    expect(page.get_by_test_id("total-fan")).to_have_text("1 番")  # 根: the kong's four 2p
    page.fill("#typed-hand", "123345m66999p bump 2p")
    page.locator("#typed button[type=submit]").click()
    expect(page.locator("#status")).to_contain_text("“bump” 不是牌")
    expect(page.locator("#status")).to_contain_text('"bump" is not tiles: unknown character')
    expect(page.locator("#status")).to_contain_text("(words: pong, kong, exposed, added")
    page.screenshot(path=str(tmp_path / "typed.png"), full_page=True)


def test_a_condition_that_scores_nothing_under_the_preset_says_so(page: Page, tmp_path: Path) -> None:
    # every preset is named in Chinese in the list, as the players say it
    for name in page.locator("#preset option").all_inner_texts():
        assert re.search(r"[\u4e00-\u9fff]", name), f"{name!r} is not named in Chinese"
    page.fill("#typed-hand", "123345m66999p kong 2p win 6p")
    page.locator("#typed button[type=submit]").click()
    expect(page.get_by_test_id("total-fan")).to_have_text("1 番")
    page.check("#flags input[name=hai_di]")
    expect(page.locator("#score")).to_contain_text("scores nothing under chengdu")
    page.select_option("#preset", "sichuan_bloody")
    expect(page.locator("#score")).not_to_contain_text("scores nothing")


def test_names_never_pile_up_nor_stand_outside_the_photo(
    page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tiles drawn overlapping, their last row on the photo's bottom edge: every name shown stands clear of
    the others and inside the photo, the groups' labels first; the strip still names every tile."""
    import dataclasses

    import api.fakes as fakes

    plain = fakes.layout

    def crowded(rows: Any, *, aspect: float = 4 / 3) -> list[fakes.Placed]:
        placed = plain(rows, aspect=aspect)
        down = 1 - max(p.box[3] for p in placed)
        moved = []
        for p in placed:
            x1 = 0.5 + (p.box[0] - 0.5) * 0.75  # a quarter of each tile under its neighbour
            box = (x1, p.box[1] + down, x1 + p.box[2] - p.box[0], p.box[3] + down)
            moved.append(dataclasses.replace(p, box=box))
        return moved

    monkeypatch.setattr(fakes, "layout", crowded)
    photo = tmp_path / "crowded.jpg"
    photo.write_bytes(fakes.fake_photo((1200, 900)))
    page.set_input_files("#file", str(photo))
    expect(page.locator("#overlay .tile-box")).to_have_count(15)
    expect(page.locator("#strip .chip")).to_have_count(15)
    laid = page.evaluate(
        """() => {
        const box = (node) => {
          const r = node.getBoundingClientRect();
          return [r.left, r.top, r.right, r.bottom];
        };
        const labels = [...document.querySelectorAll('#overlay .tag, #overlay .group-outline > span')];
        return {
          stage: box(document.getElementById('stage')),
          shown: labels.filter((n) => !n.hidden).map(box),
          hidden: labels.filter((n) => n.hidden).length,
          meld: [...document.querySelectorAll('#overlay .group-outline.meld > span')]
            .filter((n) => !n.hidden).length,
        };
    }"""
    )
    page.screenshot(path=str(tmp_path / "crowded.png"), full_page=True)
    left, top, right, bottom = laid["stage"]
    shown = laid["shown"]
    assert len(shown) >= 8 and laid["hidden"] >= 3  # about every other name of the touching tiles
    for i, (x1, y1, x2, y2) in enumerate(shown):
        assert left - 1 <= x1 and x2 <= right + 1 and top - 1 <= y1 and y2 <= bottom + 1
        for a1, b1, a2, b2 in shown[i + 1 :]:
            assert not (x1 < a2 and a1 < x2 and y1 < b2 and b1 < y2), "two names overlap"
    assert laid["meld"] == 1  # the kong's label, below it as a rule, is drawn inside it on the photo's edge


def test_the_hands_label_is_never_drawn_across_its_row(
    page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hand's row on the photo's top edge (no room for its label above): the label is drawn below the
    row or not at all, never over the hand's tiles."""
    import dataclasses

    import api.fakes as fakes

    plain = fakes.layout

    def on_top(rows: Any, *, aspect: float = 4 / 3) -> list[fakes.Placed]:
        placed = plain(rows, aspect=aspect)
        up = min(p.box[1] for p in placed) - 0.002
        return [
            dataclasses.replace(p, box=(p.box[0], p.box[1] - up, p.box[2], p.box[3] - up)) for p in placed
        ]

    monkeypatch.setattr(fakes, "layout", on_top)
    photo = tmp_path / "top.jpg"
    photo.write_bytes(fakes.fake_photo((1200, 900)))
    page.set_input_files("#file", str(photo))
    expect(page.locator("#overlay .tile-box")).to_have_count(15)
    laid = page.evaluate(
        """() => {
        const box = (node) => {
          const r = node.getBoundingClientRect();
          return [r.left, r.top, r.right, r.bottom];
        };
        return {
          labels: [...document.querySelectorAll('#overlay .group-outline.hand > span')]
            .filter((n) => !n.hidden).map(box),
          tiles: [...document.querySelectorAll('#overlay .tile-box')].map(box),
        };
    }"""
    )
    page.screenshot(path=str(tmp_path / "top.png"), full_page=True)
    for x1, y1, x2, y2 in laid["labels"]:
        for a1, b1, a2, b2 in laid["tiles"]:
            assert not (x1 < a2 - 1 and a1 + 1 < x2 and y1 < b2 - 1 and b1 + 1 < y2), "a label over a tile"


def test_a_large_photo_is_shrunk_in_the_browser_before_it_is_sent(page: Page, tmp_path: Path) -> None:
    large = tmp_path / "large.jpg"
    large.write_bytes(fake_photo((4000, 3000)))
    sent: list[int] = []

    def record(request: Any) -> None:
        if "score-photo" in request.url:
            sent.append(len(request.post_data_buffer or b""))

    page.on("request", record)
    with page.expect_response("**/api/v1/score-photo") as answer:
        page.set_input_files("#file", str(large))
    body = answer.value.json()
    assert (body["width"], body["height"]) == (2048, 1536)  # what the reader decodes, upright
    assert sent and sent[0] < large.stat().st_size
    expect(page.locator("#overlay .tile-box")).to_have_count(15)


def test_a_small_hand_in_a_large_photo_is_shown_zoomed_to_its_tiles(
    page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tiles a fortieth of the photo wide: the stage shows the hand's region, its boxes large enough to tap
    with their names; the whole photo on asking, where boxes too small for a name show none."""
    import api.fakes as fakes

    monkeypatch.setattr(fakes, "TILE_W", 0.025)
    photo = tmp_path / "wide.jpg"
    photo.write_bytes(fakes.fake_photo((4000, 3000)))
    page.set_input_files("#file", str(photo))
    boxes = page.locator("#overlay .tile-box")
    expect(boxes).to_have_count(15)
    expect(page.locator("#zoom")).to_have_text("全图 Whole photo")
    zoomed = boxes.nth(0).bounding_box()
    assert zoomed is not None and zoomed["width"] >= 20
    assert page.locator("#overlay .tile-box .tag").count() == 15
    boxes.nth(5).click()  # a tap lands on the tile drawn there
    expect(page.locator("#palette-title")).to_contain_text("tile 6 of the hand")
    page.keyboard.press("Escape")
    page.locator("#zoom").click()
    whole = boxes.nth(0).bounding_box()
    assert whole is not None and whole["width"] < zoomed["width"] / 2
    assert page.locator("#overlay .tile-box .tag").count() == 0  # too small to name without piling up
    page.screenshot(path=str(tmp_path / "zoomed.png"), full_page=True)


def test_the_api_docs_render_in_chromium_and_try_it_out_answers(page: Page, server: tuple[str, Path]) -> None:
    """``/docs`` (Swagger UI 5, served from here) reads the OpenAPI 3.1 FastAPI writes: every operation is
    listed, and "Try it out" on /api/v1/score sends its example and shows the answer."""
    base, _ = server
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(base + "/docs")
    expect(page.locator(".opblock").first).to_be_visible(timeout=20_000)
    assert "Unable to render this definition" not in page.content()
    paths = set(page.locator(".opblock-summary-path").all_inner_texts())
    schema = page.evaluate("fetch('/openapi.json').then((r) => r.json())")
    assert {path.replace("\u200b", "") for path in paths} == set(schema["paths"])
    score = page.locator(".opblock-post", has=page.locator(".opblock-summary-path", has_text="/api/v1/score"))
    score = score.filter(has_not=page.locator(".opblock-summary-path", has_text="score-photo")).first
    score.locator(".opblock-summary").click()
    score.locator("button.try-out__btn").click()
    score.locator("button.execute").click()
    answer = score.locator(".live-responses-table tbody td.response-col_status").first
    expect(answer).to_have_text("200")
    expect(score.locator(".live-responses-table .microlight").first).to_contain_text('"valid": true')
