"""Tables through the API: made, joined by code, a round entered event by event with its payments, refused
events answered with the settlement's code, the code required to write, a stale write answered 409 with the
table as it is now, undo, a correction, the history and the night's export."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.fakes import create_fake_app
from api.settings import Settings
from scoring.presets import get_preset
from scoring.settlement import parse_round, settle_round

ROUND = json.loads(
    (Path(__file__).resolve().parents[2] / "examples" / "round.json").read_text(encoding="utf-8")
)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(dataset_dir=tmp_path / "dataset", database_url=f"sqlite:///{tmp_path / 'store.db'}")
    with TestClient(create_fake_app(settings)) as client:
        yield client


def _table(client: TestClient) -> tuple[dict[str, Any], dict[str, str]]:
    made = client.post(
        "/api/v1/tables", json={"players": ["A", "B", "C", "D"], "preset": "chengdu", "base": 2}
    )
    assert made.status_code == 201, made.text
    table = made.json()
    return table, {"X-Table-Code": table["code"]}


def _enter(client: TestClient, url: str, version: int, event: dict[str, Any], code: dict[str, str]) -> Any:
    """Enter an event of round 1 on ``version``: the response."""
    return client.post(f"{url}/rounds/1/events", json={"version": version, "event": event}, headers=code)


def _version(response: Any) -> int:
    return int(response.json()["rounds"][0]["version"])


def test_a_round_played_through_the_api_settles_as_smj_settle_does(client: TestClient) -> None:
    table, code = _table(client)
    url = f"/api/v1/tables/{table['id']}"
    started = client.post(
        f"{url}/rounds", json={"dealer": 0, "void_suits": ROUND["void_suits"]}, headers=code
    )
    assert started.status_code == 200, started.text
    version = started.json()["rounds"][0]["version"]
    for event in ROUND["events"]:
        answer = client.post(
            f"{url}/rounds/1/events", json={"version": version, "event": event}, headers=code
        )
        assert answer.status_code == 200, answer.text
        played = answer.json()["rounds"][0]
        version = played["version"]
    expected = settle_round(parse_round(ROUND), get_preset("chengdu"), 2)
    assert played["finished"] and played["ledger"]["totals"] == list(expected.totals)
    assert client.get(url).json()["totals"] == list(expected.totals)
    joined = client.post("/api/v1/tables/join", json={"code": table["code"]})
    assert joined.status_code == 200 and joined.json()["id"] == table["id"] and "code" not in joined.json()
    assert client.get(f"{url}/export").status_code == 422  # the code is asked for, as writing asks
    assert (
        client.get(f"{url}/export", headers={"X-Table-Code": "WRONGWRO"}).json()["error"]["code"]
        == "wrong_code"
    )
    exported = client.get(f"{url}/export", headers=code)
    assert exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(exported.text)))
    assert rows[-1][2:] == [str(total) for total in expected.totals]
    night = client.get(f"{url}/export", params={"format": "json"}, headers=code).json()
    assert night["totals"] == list(expected.totals)
    assert rows[1][:2] == ["1", "1"]  # round 1, event 1: numbered as the page numbers them


def test_refusals_name_their_code(client: TestClient) -> None:
    table, code = _table(client)
    url = f"/api/v1/tables/{table['id']}"
    version = client.post(f"{url}/rounds", headers=code).json()["rounds"][0]["version"]
    win = {"type": "win", "player": "A", "self_drawn": True, "fan": 1}
    wrong = _enter(client, url, version, win, {"X-Table-Code": "X"})
    assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "wrong_code"
    missing = client.post(f"{url}/rounds/1/events", json={"version": version, "event": win})
    assert missing.status_code == 422  # no code header at all
    version = client.post(
        f"{url}/rounds/1/events", json={"version": version, "event": win}, headers=code
    ).json()["rounds"][0]["version"]
    again = {"type": "kong", "player": "A", "kind": "concealed", "tile": "3s"}
    refused = client.post(f"{url}/rounds/1/events", json={"version": version, "event": again}, headers=code)
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "already_won" and refused.json()["error"]["details"] == [
        {"event": 1}
    ]
    stale = client.post(f"{url}/rounds/1/events", json={"version": version - 1, "event": win}, headers=code)
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "stale_write"
    now = stale.json()["error"]["details"][0]["table"]
    assert now["rounds"][0]["version"] == version and now["rounds"][0]["events"] == [win]
    in_play = client.post(f"{url}/rounds", headers=code)
    assert in_play.status_code == 409 and in_play.json()["error"]["code"] == "round_in_play"
    assert client.get("/api/v1/tables/nothere").status_code == 404
    bad = client.post("/api/v1/tables", json={"players": ["A", "B", "C"], "preset": "chengdu"})
    assert bad.status_code == 422


def test_undo_and_correction_keep_the_history(client: TestClient) -> None:
    table, code = _table(client)
    url = f"/api/v1/tables/{table['id']}"
    version = client.post(f"{url}/rounds", headers=code).json()["rounds"][0]["version"]
    kong = {"type": "kong", "player": "B", "kind": "direct", "tile": "5p", "discarder": "C"}
    version = client.post(
        f"{url}/rounds/1/events", json={"version": version, "event": kong}, headers=code
    ).json()["rounds"][0]["version"]
    by_d = {**kong, "discarder": "D"}
    corrected = client.put(f"{url}/rounds/1/events/0", json={"version": version, "event": by_d}, headers=code)
    assert corrected.status_code == 200, corrected.text
    payments = corrected.json()["rounds"][0]["ledger"]["payments"]
    assert [(p["payer"], p["payee"]) for p in payments] == [(3, 1)]
    version = corrected.json()["rounds"][0]["version"]
    undone = client.post(f"{url}/rounds/1/undo", json={"version": version}, headers=code)
    assert undone.status_code == 200 and undone.json()["rounds"][0]["events"] == []
    empty = client.post(f"{url}/rounds/1/undo", json={"version": version + 1}, headers=code)
    assert empty.status_code == 404 and empty.json()["error"]["code"] == "no_event"
    assert client.get(f"{url}/rounds/1/history").status_code == 422  # no code
    revisions = client.get(f"{url}/rounds/1/history", headers=code).json()["revisions"]
    assert [r["action"] for r in revisions] == [
        "round 1 started",
        "event 0 entered: kong",
        "event 0 corrected",
        "event 0 taken back: kong",
    ]


def test_two_phones_writing_one_round_at_once_lose_nothing(client: TestClient) -> None:
    table, code = _table(client)
    url = f"/api/v1/tables/{table['id']}"
    version = client.post(f"{url}/rounds", headers=code).json()["rounds"][0]["version"]
    kongs = [
        {"type": "kong", "player": "ABCD"[i], "kind": "concealed", "tile": f"{i + 1}s"} for i in range(4)
    ]

    def write(event: dict[str, Any]) -> int:
        return client.post(
            f"{url}/rounds/1/events", json={"version": version, "event": event}, headers=code
        ).status_code

    with ThreadPoolExecutor(4) as pool:
        statuses = sorted(pool.map(write, kongs))
    assert statuses == [200, 409, 409, 409]
    assert len(client.get(url).json()["rounds"][0]["events"]) == 1


def test_a_winner_holding_a_kong_types_the_hand(client: TestClient) -> None:
    """The hand as the page's box takes it, the recorded kong named or left out; a typo is refused in
    Chinese and English naming the player and the word, never a JSON path."""
    table, code = _table(client)
    url = f"/api/v1/tables/{table['id']}"
    version = client.post(f"{url}/rounds", headers=code).json()["rounds"][0]["version"]
    kong = {"type": "kong", "player": "B", "kind": "concealed", "tile": "5p"}
    version = _version(_enter(client, url, version, kong, code))
    typo = _enter(
        client,
        url,
        version,
        {"type": "win", "player": "B", "discarder": "A", "hand": "123456789m11p kang 5p"},
        code,
    )
    assert typo.status_code == 422 and typo.json()["error"]["code"] == "typed_hand"
    message = typo.json()["error"]["message"]
    assert message.startswith("B 的手牌: “kang”") and "B's hand: " in message and "events[" not in message
    for typed in ("123456789m11p kong 5p", "123456789m11p"):
        won = _enter(
            client, url, version, {"type": "win", "player": "B", "discarder": "A", "hand": typed}, code
        )
        assert won.status_code == 200, won.text
        played = won.json()["rounds"][0]
        assert played["events"][-1]["hand"] == typed  # kept as typed
        reasons = [payment["reason"] for payment in played["ledger"]["payments"]]
        assert reasons.count("下雨 暗杠 5p") == 3 and reasons[-1].startswith("点炮")
        version = _version(
            client.post(f"{url}/rounds/1/undo", json={"version": played["version"]}, headers=code)
        )


def test_join_codes_cannot_be_guessed(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight characters of 31 letters; ten wrong codes a minute from one address, joins and writes alike,
    and its next try is 429 with Retry-After, the right code too; another address is not held back."""
    table, code = _table(client)
    assert len(table["code"]) == 8 and set(table["code"]) <= set("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
    url = f"/api/v1/tables/{table['id']}"
    for guess in range(5):
        wrong = client.post("/api/v1/tables/join", json={"code": f"WRONG{guess:03d}"})
        assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "wrong_code"
        written = client.post(f"{url}/rounds", headers={"X-Table-Code": f"BAD{guess:05d}"})
        assert written.status_code == 403
    held = client.post("/api/v1/tables/join", json={"code": table["code"]})
    assert held.status_code == 429 and held.json()["error"]["code"] == "too_many_guesses"
    assert "wrong table codes" in held.json()["error"]["message"] and int(held.headers["retry-after"]) > 0
    assert client.post(f"{url}/rounds", headers=code).status_code == 429
    other = TestClient(client.app, client=("203.0.113.7", 50000))
    assert other.post("/api/v1/tables/join", json={"code": table["code"]}).status_code == 200


def test_one_address_makes_a_limited_number_of_tables(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api.guard import Guesses

    code_guesses, _ = client.app.state.table_limits  # type: ignore[attr-defined]
    monkeypatch.setattr(
        client.app.state, "table_limits", (code_guesses, Guesses(3, 3600.0, "tables made", "too_many_tables"))
    )  # type: ignore[attr-defined]
    for _ in range(3):
        _table(client)
    refused = client.post("/api/v1/tables", json={"players": ["A", "B", "C", "D"], "preset": "chengdu"})
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "too_many_tables"


def test_a_code_stops_opening_its_table_a_day_after_its_last_write(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime, timedelta

    import store.tables as stored

    table, code = _table(client)
    url = f"/api/v1/tables/{table['id']}"
    assert client.post(f"{url}/rounds", headers=code).status_code == 200
    later = datetime.now(UTC) + timedelta(hours=stored.CODE_HOURS + 1)
    monkeypatch.setattr(stored, "now", lambda: later)
    for answer in (
        client.post("/api/v1/tables/join", json={"code": table["code"]}),
        client.post(f"{url}/rounds/1/undo", json={"version": 1}, headers=code),
        client.get(f"{url}/export", headers=code),
    ):
        assert answer.status_code == 403 and answer.json()["error"]["code"] == "code_expired", answer.text
        assert "open a new table" in answer.json()["error"]["message"]
    assert client.get(url).status_code == 200  # still readable by its id


def test_a_database_gone_after_start_answers_503_with_retry_after(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The database stops answering after start-up: 503 ``store_unavailable`` with Retry-After, one log line
    naming what happened, no traceback and no URL or path to the client."""
    from sqlalchemy.exc import OperationalError

    import store.tables as stored

    table, _ = _table(client)

    def gone(*args: object, **kwargs: object) -> None:
        raise OperationalError("SELECT tables.id", {}, Exception("unable to open database file /srv/smj.db"))

    monkeypatch.setattr(stored, "_state", gone)
    with caplog.at_level("WARNING", logger="api"):
        answer = client.get(f"/api/v1/tables/{table['id']}")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
    error = answer.json()["error"]
    assert (
        error["code"] == "store_unavailable"
        and "/srv" not in error["message"]
        and "sqlite" not in error["message"]
    )
    said = [record.getMessage() for record in caplog.records if "store is unavailable" in record.getMessage()]
    assert len(said) == 1 and "/srv/smj.db" in said[0]


def test_a_store_that_cannot_be_opened_is_a_503_naming_no_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    settings = Settings(dataset_dir=tmp_path / "dataset", database_url=f"sqlite:///{blocker}/inside/store.db")
    with TestClient(create_fake_app(settings)) as client:
        answer = client.post("/api/v1/tables", json={"players": ["A", "B", "C", "D"], "preset": "chengdu"})
    assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
    assert answer.json()["error"]["code"] == "store_unavailable" and str(tmp_path) not in answer.text


def test_table_events_have_a_schema_and_the_settlement_still_judges(client: TestClient) -> None:
    """Events cross the API as a union told apart by ``type`` (kong, win, end), so a client gets their
    schema; an event of no such kind is refused by the schema, one of a kind the rules refuse by the
    settlement; an event is stored as it was sent."""
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    union = schema["EventIn"]["properties"]["event"]
    assert union["discriminator"]["propertyName"] == "type"
    assert {"KongEventIn", "WinEventIn", "EndEventIn"} <= set(schema)
    assert "gang_shang_pao" in schema["WinEventIn"]["properties"]
    table, code = _table(client)
    url = f"/api/v1/tables/{table['id']}"
    version = client.post(f"{url}/rounds", headers=code).json()["rounds"][0]["version"]
    nap = _enter(client, url, version, {"type": "nap", "player": "A"}, code)
    assert nap.status_code == 422 and nap.json()["error"]["code"] == "invalid_request"
    self_fed = {"type": "kong", "player": "A", "kind": "direct", "tile": "5p", "discarder": "A"}
    refused = _enter(client, url, version, self_fed, code)
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "bad_kong"
    kong = {"type": "kong", "player": 1, "kind": "concealed", "tile": "9m"}
    kept = _enter(client, url, version, kong, code)
    assert kept.status_code == 200 and kept.json()["rounds"][0]["events"] == [kong]
