"""A night at the table played on the page in headless Chromium at 412x915 (the real app, a fake detector
whose photo reads as 123345m66999p with an exposed kong of 2p, won on 6p): a table opened; round 1 with two
kongs, a win by photo and two winners on one discard (one of them typed); round 2 with a win typed as fan and
the wall's end with one player not ready and one 花猪; the night's totals equal ``smj settle`` on the same two
rounds; a second phone joins with the code, and the first phone, writing on the table as it read it before,
is shown the round as it is. Screenshots of each step go to ``tmp_path`` (``table_*.png``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import phone, served
from playwright.sync_api import Page, expect, sync_playwright

import smj
from api.fakes import FakeDetector, fake_photo
from scoring.presets import get_preset
from scoring.settlement import parse_round, settle_round

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


STORE: dict[str, str] = {}  # the served store's URL, for what smj reads of it


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("browser_table"), load_detector=lambda _: FakeDetector()) as (
        base,
        url,
    ):
        STORE["url"] = url
        yield base


def _night(page: Page) -> dict:
    """The table the page holds, as the API answers it now."""
    return dict(
        page.evaluate(
            "fetch('/api/v1/tables/' + JSON.parse(localStorage.getItem('smj-table')).id)"
            ".then((r) => r.json())"
        )
    )


def _record(page: Page, shots: Path, name: str) -> None:
    page.locator("#table-form button[type=submit]").click()
    expect(page.locator("#table-form")).to_be_hidden()
    page.screenshot(path=str(shots / f"table_{name}.png"), full_page=True)


def _kong(page: Page, who: int, kind: str, tile: str, discarder: int | None = None) -> None:
    page.locator("#event-kong").click()
    _kong_fields(page, who, kind, tile, discarder)


def _kong_fields(page: Page, who: int, kind: str, tile: str, discarder: int | None = None) -> None:
    form = page.locator("#table-form")
    form.locator("select").nth(0).select_option(str(who))
    form.locator("select").nth(1).select_option(kind)
    form.locator("input").first.fill(tile)
    if discarder is not None:
        form.locator("select").nth(2).select_option(str(discarder))


def _win(page: Page, winners: dict[int, tuple[str, str]], discarder: int | None) -> None:
    """``winners``: seat -> (photo | fan | typed, the fan or the tiles)."""
    page.locator("#event-win").click()
    form = page.locator("#table-form")
    for row in form.locator("fieldset.winner").all():
        box = row.locator("input[type=checkbox]")
        seat = int(box.get_attribute("value") or -1)
        if seat in winners:
            source, value = winners[seat]
            box.check()
            row.locator("select").select_option(source)
            if source != "photo":  # the photo's hand needs no box
                row.locator("input:not([type])").fill(value)
    form.locator("label", has_text="点炮").locator("select").select_option(
        "self" if discarder is None else str(discarder)
    )


def _open_table(page: Page, base: str | None = None) -> None:
    """A new table of Ann, Bo, Cai and Dee (``base``: its stake, else the page's default), opened."""
    page.locator("#table-new summary").click()
    # the four seats fit a phone's width: nothing scrolls sideways
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]  # type: ignore[index]
    for seat, name in enumerate(["Ann", "Bo", "Cai", "Dee"]):
        page.locator('#table-new input[name="seat"]').nth(seat).fill(name)
    if base is not None:
        page.fill("#table-base", base)
    page.locator("#table-create").click()
    expect(page.locator("#table-play")).to_be_visible()


def test_a_night_at_the_table_on_the_page(server: str, tmp_path: Path) -> None:
    with sync_playwright() as playwright:
        page = phone(playwright, tmp_path / "phone1", server)
        _open_table(page, base="2")
        code = page.locator("#table-info").inner_text().split("code ")[1].split(" ")[0]
        page.locator("#round-new").click()
        expect(page.locator("#event-kong")).to_be_visible()
        page.screenshot(path=str(tmp_path / "table_opened.png"), full_page=True)

        # round 1: Ann's direct kong of Dee's 2p, Dee's concealed kong of 7s
        _kong(page, 0, "direct", "2p", discarder=3)
        _record(page, tmp_path, "kong_direct")
        expect(page.get_by_test_id("total-0")).to_have_text("+4")  # 刮风: Dee pays Ann 2 x base 2
        _kong(page, 3, "concealed", "7s")
        _record(page, tmp_path, "kong_concealed")
        expect(page.get_by_test_id("total-3")).to_have_text("+8")  # 下雨: each pays Dee 2 x 2, less Ann's 4
        # Ann wins by photo on Cai's discard: the photo read first
        (tmp_path / "hand.jpg").write_bytes(fake_photo())
        page.set_input_files("#file", str(tmp_path / "hand.jpg"))
        expect(page.locator("#hand-text")).to_contain_text("123345m66999p")
        _win(page, {0: ("photo", "")}, discarder=2)
        _record(page, tmp_path, "win_photo")
        # Bo (typed hand) and Cai (2 fan) both win on Dee's discard; Cai's fan left empty first, and no
        # discarder said: each refused by name, nothing recorded
        _win(page, {1: ("typed", "123456789m55777p"), 2: ("fan", "")}, discarder=3)
        page.locator("#table-form button[type=submit]").click()
        expect(page.locator("#table-status")).to_contain_text("Enter Cai's fan")
        page.locator("#table-form fieldset.winner").nth(1).locator("input:not([type])").fill("2")
        page.locator("#table-form label", has_text="点炮").locator("select").select_option("")
        page.locator("#table-form button[type=submit]").click()
        expect(page.locator("#table-status")).to_contain_text("Say whose discard it was")
        page.locator("#table-form label", has_text="点炮").locator("select").select_option("3")
        _record(page, tmp_path, "two_winners")
        # three have won: the round ends by itself
        expect(page.locator("#round-new")).to_be_visible()
        expect(page.locator("#table-round")).to_contain_text("over")

        # round 2: Ann wins on Bo's discard (1 fan, typed as fan); the wall runs out: Bo not ready,
        # Cai a 花猪, Dee ready at 1 fan
        page.locator("#round-voids summary").click()  # 定缺: Ann plays without 条
        page.locator("#round-void-seats select").nth(0).select_option("s")
        page.locator("#round-banker").select_option("1")
        page.locator("#round-new").click()
        _win(page, {0: ("fan", "1")}, discarder=1)
        _record(page, tmp_path, "round2_win")
        page.locator("#event-end").click()
        form = page.locator("#table-form")
        states = form.locator("select")
        states.nth(0).select_option("not_ready")
        states.nth(1).select_option("hua_zhu")
        states.nth(2).select_option("ready")
        form.locator("input").nth(2).fill("1")
        _record(page, tmp_path, "wall_end")
        expect(page.locator("#round-new")).to_be_visible()

        # a past event corrected: round 1's concealed kong was Dee's 8s, not 7s (the totals stay; the
        # history keeps the round as it was)
        page.locator("#table-rounds details").nth(1).locator("summary").click()
        page.locator("#table-rounds details").nth(1).locator("li").nth(1).locator("button").click()
        _kong_fields(page, 3, "concealed", "8s")
        _record(page, tmp_path, "corrected")
        shown = [int(page.get_by_test_id(f"total-{seat}").inner_text()) for seat in range(4)]
        night = _night(page)
        rules = get_preset(night["preset"])
        settled = [0, 0, 0, 0]
        for played in night["rounds"]:
            round_json = {
                "players": night["players"],
                "events": played["events"],
                "void_suits": played["void_suits"],
            }
            if played["dealer"] is not None:
                round_json["dealer"] = played["dealer"]
            for seat, amount in enumerate(settle_round(parse_round(round_json), rules, night["base"]).totals):
                settled[seat] += amount
        assert shown == settled == night["totals"] and sum(shown) == 0
        assert [len(r["events"]) for r in night["rounds"]] == [5, 2]
        assert night["rounds"][1]["void_suits"] == {"0": "s"} and night["rounds"][1]["dealer"] == 1
        assert json.dumps(night["rounds"][0]["events"][3]).count('"player"') == 2  # two winners, one event
        assert night["rounds"][0]["events"][1]["tile"] == "8s"
        history = page.evaluate(
            "([id, code]) => fetch(`/api/v1/tables/${id}/rounds/1/history`,"
            " {headers: {'X-Table-Code': code}}).then((r) => r.json())",
            [night["id"], code],
        )
        assert history["revisions"][-1]["action"] == "event 1 corrected"

        # a second phone joins with the code; it writes on the round as it was: told, and shown the round now
        other = phone(playwright, tmp_path / "phone2", server)
        other.fill("#table-code", code)
        other.locator("#table-join").click()
        expect(other.get_by_test_id("total-0")).to_have_text(page.get_by_test_id("total-0").inner_text())
        other.locator("#round-new").click()
        expect(other.locator("#event-undo")).to_be_visible()
        page.locator("#round-new").click()  # the first phone, on the table it read before
        expect(page.locator("#table-round")).to_contain_text("Round 3")
        page.screenshot(path=str(tmp_path / "table_second_phone.png"), full_page=True)


def test_a_win_s_flags_are_listed_as_players_say_them(server: str, tmp_path: Path) -> None:
    """杠上炮 in the round's list of events, not the API's ``gang_shang_pao``."""
    with sync_playwright() as playwright:
        page = phone(playwright, tmp_path / "phone", server)
        _open_table(page)
        page.locator("#round-new").click()
        _kong(page, 1, "concealed", "7s")
        _record(page, tmp_path, "flag_kong")
        _win(page, {0: ("fan", "1")}, discarder=1)
        page.locator("#table-form label", has_text="杠上炮").locator("input").check()
        _record(page, tmp_path, "flag_win")
        events = page.locator("#table-rounds")
        expect(events).to_contain_text("杠上炮")
        expect(events).not_to_contain_text("gang_shang_pao")


def test_a_winner_holding_a_kong_types_the_hand_on_the_page(server: str, tmp_path: Path) -> None:
    """Bo declared 暗杠 5p and types the tiles in the hand: the kong is joined; a typo is refused in
    Chinese and English naming Bo and the word; a final hand at the wall's end is typed the same way."""
    with sync_playwright() as playwright:
        page = phone(playwright, tmp_path / "phone", server)
        _open_table(page, base="1")
        page.locator("#round-new").click()
        _kong(page, 1, "concealed", "5p")
        _record(page, tmp_path, "typed_kong")
        _kong(page, 2, "concealed", "9s")
        _record(page, tmp_path, "typed_kong2")
        _win(page, {1: ("typed", "123456789m11p kang 5p")}, discarder=0)
        page.locator("#table-form button[type=submit]").click()
        status = page.locator("#table-status")
        expect(status).to_contain_text("Bo 的手牌: “kang”")
        expect(status).to_contain_text("Bo's hand")
        assert "events[" not in status.inner_text()
        page.screenshot(path=str(tmp_path / "table_typed_typo.png"), full_page=True)
        page.locator("#table-form fieldset.winner").nth(1).locator("input:not([type])").fill("123456789m11p")
        _record(page, tmp_path, "typed_win_with_kong")
        expect(page.locator("#table-status")).not_to_have_class("error")
        # the wall runs out: Cai typed with her kong left out (ready on 1m/4m), Ann and Dee not ready
        page.locator("#event-end").click()
        form = page.locator("#table-form")
        form.locator("select").nth(0).select_option("not_ready")
        form.locator("select").nth(1).select_option("hand")
        form.locator("input").nth(1).fill("23m456789m11p")
        form.locator("select").nth(2).select_option("not_ready")
        _record(page, tmp_path, "typed_wall_end")
        night = _night(page)
        played = night["rounds"][0]
        assert played["finished"] and played["events"][2]["hand"] == "123456789m11p"
        assert played["events"][3]["hands"]["2"] == "23m456789m11p"  # Cai, by seat
        reasons = [payment["reason"] for payment in played["ledger"]["payments"]]
        assert reasons.count("下雨 暗杠 5p") == 3 and any(reason.startswith("点炮") for reason in reasons)


def test_a_past_event_is_corrected_from_its_filled_form_beside_it(server: str, tmp_path: Path) -> None:
    """改 Correct opens the form beside the event, filled with it as it was; the wall's end is corrected
    and undone like any event; a message left from before is cleared when a form opens."""
    with sync_playwright() as playwright:
        page = phone(playwright, tmp_path / "phone", server)
        _open_table(page, base="1")
        page.locator("#round-new").click()
        _win(page, {0: ("fan", "2")}, discarder=1)
        page.locator("#table-form label", has_text="海底").locator("input").check()
        _record(page, tmp_path, "fix_win")
        page.locator("#event-end").click()
        form = page.locator("#table-form")
        form.locator("select").nth(0).select_option("not_ready")
        form.locator("select").nth(1).select_option("ready")
        form.locator("input").nth(1).fill("1")
        form.locator("select").nth(2).select_option("hua_zhu")
        _record(page, tmp_path, "fix_end")
        before = _night(page)["totals"]

        # the win: Ann ticked, her 2 fan, Bo's discard, 海底, the form inside the event's line
        page.locator('#table-rounds li[data-at="1:0"] button').click()
        opened = page.locator('#table-rounds li[data-at="1:0"] #table-form')
        expect(opened).to_be_visible()
        ann = opened.locator("fieldset.winner").nth(0)
        expect(ann.locator("input[type=checkbox]")).to_be_checked()
        expect(ann.locator("select")).to_have_value("fan")
        expect(ann.locator("input:not([type])")).to_have_value("2")
        expect(opened.locator("label", has_text="点炮").locator("select")).to_have_value("1")
        expect(opened.locator("label", has_text="海底").locator("input")).to_be_checked()
        page.screenshot(path=str(tmp_path / "table_fix_win_form.png"), full_page=True)
        ann.locator("input:not([type])").fill("3")
        _record(page, tmp_path, "fix_win_done")
        night = _night(page)
        assert night["rounds"][0]["events"][0]["fan"] == 3 and night["rounds"][0]["events"][0]["hai_di"]
        assert night["totals"][0] > before[0]

        # another phone writes first: the message shows; opening a form clears it
        page.evaluate(
            """async () => {
                const {id, code} = JSON.parse(localStorage.getItem('smj-table'));
                const table = await fetch('/api/v1/tables/' + id).then((r) => r.json());
                await fetch(`/api/v1/tables/${id}/rounds/1/undo`, {method: 'POST',
                    headers: {'Content-Type': 'application/json', 'X-Table-Code': code},
                    body: JSON.stringify({version: table.rounds[0].version})});
            }"""
        )
        page.locator('#table-rounds li[data-at="1:1"] button').click()
        page.locator("#table-form button[type=submit]").click()
        page.wait_for_timeout(1000)
        print(
            "STATUS",
            page.locator("#table-status").inner_text(),
            page.locator("#table-status").evaluate("e => e.parentNode.id || e.parentNode.tagName"),
        )
        page.screenshot(path="/tmp/stale.png", full_page=True)
        expect(page.locator("#table-status")).to_contain_text("Another phone wrote")
        page.locator("#table-form button", has_text="Cancel").click()
        page.locator("#event-end").click()
        expect(page.locator("#table-status")).to_have_text("")

        # the wall's end entered again, then corrected from its filled form: Bo was ready for 2 fan
        form.locator("select").nth(0).select_option("not_ready")
        form.locator("select").nth(1).select_option("ready")
        form.locator("input").nth(1).fill("1")
        form.locator("select").nth(2).select_option("hua_zhu")
        _record(page, tmp_path, "fix_end_again")
        page.locator('#table-rounds li[data-at="1:1"] button').click()
        opened = page.locator('#table-rounds li[data-at="1:1"] #table-form')
        expect(opened.locator("select").nth(0)).to_have_value("not_ready")
        expect(opened.locator("select").nth(1)).to_have_value("ready")
        expect(opened.locator("input").nth(1)).to_have_value("1")
        expect(opened.locator("select").nth(2)).to_have_value("hua_zhu")
        opened.locator("select").nth(0).select_option("ready")
        opened.locator("input").nth(0).fill("2")
        _record(page, tmp_path, "fix_end_done")
        end = _night(page)["rounds"][0]["events"][1]
        assert end["type"] == "end" and end["hands"]["1"] == {"ready": True, "fan": 2}  # Bo, by seat
        page.locator("#event-undo").click()  # the wall's end taken back like any event
        expect(page.locator("#event-end")).to_be_visible()
        assert len(_night(page)["rounds"][0]["events"]) == 1


def test_the_next_dealer_the_export_and_the_photo_first(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a table in play, 拍照 Take photo is on the first screen (the night in one line above it); after
    a photo its score's line is too. A round over names its next dealer, chosen for the next round; the
    night downloaded from the page is what ``smj table export`` writes, by the code the page shows."""
    with sync_playwright() as playwright:
        page = phone(playwright, tmp_path / "phone", server)
        _open_table(page, base="1")
        code = page.locator("#table-info").inner_text().split("code ")[1].split(" ")[0]
        page.locator("#round-new").click()
        _win(page, {1: ("fan", "1")}, discarder=0)  # Bo wins first: the next dealer
        _record(page, tmp_path, "dealer_win1")
        _win(page, {2: ("fan", "2"), 3: ("fan", "0")}, discarder=0)
        _record(page, tmp_path, "dealer_win2")
        expect(page.locator("#table-round")).to_contain_text("next dealer Bo")
        expect(page.locator("#round-banker")).to_have_value("1")
        expect(page.locator("#table-bar")).to_contain_text(code)

        page.evaluate("window.scrollTo(0, 0)")
        photo_button = page.locator("label[for=camera]").bounding_box()
        assert photo_button is not None and photo_button["y"] + photo_button["height"] <= 915
        (tmp_path / "hand.jpg").write_bytes(fake_photo())
        page.set_input_files("#file", str(tmp_path / "hand.jpg"))
        expect(page.get_by_test_id("summary")).to_contain_text("番")
        page.evaluate("window.scrollTo(0, 0)")
        summary = page.get_by_test_id("summary").bounding_box()
        assert summary is not None and summary["y"] + summary["height"] <= 915, summary
        expect(page.get_by_test_id("summary")).to_contain_text("点炮 the discarder pays")
        page.screenshot(path=str(tmp_path / "table_first_screen.png"))

        with page.expect_download() as download:
            page.locator("#table-export-csv").click()
        csv_text = Path(download.value.path()).read_text(encoding="utf-8")
        with page.expect_download() as download:
            page.locator("#table-export-json").click()
        night = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    monkeypatch.setenv("SMJ_DATABASE_URL", STORE["url"])
    assert smj.main(["table", "export", code]) == 0
    assert capsys.readouterr().out.splitlines() == csv_text.splitlines()
    assert smj.main(["table", "export", code, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == night and night["totals"] == [-7, 2, 4, 1]
