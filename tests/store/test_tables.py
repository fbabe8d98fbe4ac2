"""A night at the table in the store: rounds entered event by event (each checked as the settlement checks
it), refused with their codes, undone and corrected with the totals recomputed and the history kept; the
table's code required to write; a write on a stale version refused, also when two writers race; on SQLite
and on a real PostgreSQL server."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from smj_runner import run
from sqlalchemy import update

import smj
from scoring.presets import get_preset
from scoring.settlement import parse_round, settle_round
from store import open_store
from store.database import Store
from store.schema import RevisionRow
from store.tables import (
    StaleWrite,
    TableError,
    add_event,
    correct_event,
    create_table,
    export_csv,
    find_table,
    history,
    join,
    round_json,
    start_round,
    table_state,
    undo,
)

ROUND = json.loads(
    (Path(__file__).resolve().parents[2] / "examples" / "round.json").read_text(encoding="utf-8")
)
VOIDS = ROUND["void_suits"]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "sqlite":
        return open_store(f"sqlite:///{tmp_path / 'store.db'}")
    opened = open_store(request.getfixturevalue("postgres_url"))
    with opened.engine.begin() as connection:
        for table in ("round_revisions", "rounds", "tables"):
            connection.exec_driver_sql(f"DELETE FROM {table}")
    return opened


def _played(store: Store, events: list[dict[str, Any]]) -> tuple[str, str, int]:
    """A table with round 1 entered up to ``events``: (id, code, the round's version)."""
    state, code = create_table(store, ["A", "B", "C", "D"], "chengdu", 1)
    state = start_round(store, state.id, code, dealer=0, void_suits=VOIDS)
    version = state.rounds[0].version
    for event in events:
        state = add_event(store, state.id, code, 1, version, event)
        version = state.rounds[0].version
    return state.id, code, version


def test_a_round_entered_event_by_event_settles_as_smj_settle_does(store: Store) -> None:
    table_id, code, _ = _played(store, ROUND["events"])
    state = table_state(store, table_id)
    expected = settle_round(parse_round(ROUND), get_preset("chengdu"), 1)
    assert state.rounds[0].finished and state.totals == list(expected.totals)
    assert [p.to_json() for p in state.rounds[0].ledger.payments] == [p.to_json() for p in expected.payments]
    assert round_json(state, 1)["events"] == ROUND["events"]  # what smj settle --table reads back
    rows = export_csv(state).splitlines()
    assert rows[0] == "round,event,payer,payee,amount,reason" and rows[-1] == ",," + ",".join(
        map(str, state.totals)
    )
    assert join(store, code.lower()).id == table_id  # the code read aloud, in any case


def test_an_event_the_rules_refuse_is_refused_with_its_code_and_nothing_changes(store: Store) -> None:
    table_id, code, version = _played(store, ROUND["events"][:2])
    won = {"type": "win", "player": "A", "self_drawn": True, "fan": 1}
    state = add_event(store, table_id, code, 1, version, won)
    version = state.rounds[0].version
    again = {"type": "kong", "player": "A", "kind": "concealed", "tile": "1m"}
    with pytest.raises(TableError) as refused:
        add_event(store, table_id, code, 1, version, again)  # A has won: acts no more
    assert refused.value.code == "already_won" and refused.value.event == 3
    fifth = {"type": "kong", "player": "B", "kind": "concealed", "tile": "5p"}
    with pytest.raises(TableError) as copies:
        add_event(store, table_id, code, 1, version, fifth)  # B's direct kong of 5p holds four already
    assert copies.value.code in ("too_many_copies", "bad_kong")
    assert table_state(store, table_id).rounds[0].version == version  # nothing written


def test_undo_and_a_correction_of_a_past_round_move_the_totals_and_keep_the_history(store: Store) -> None:
    table_id, code, version = _played(store, ROUND["events"])
    before = table_state(store, table_id).totals
    state = start_round(store, table_id, code, dealer=1)
    second = state.rounds[1].version
    state = add_event(
        store, table_id, code, 2, second, {"type": "win", "player": "B", "discarder": "C", "fan": 2}
    )
    state = undo(store, table_id, code, 2, state.rounds[1].version)
    assert state.rounds[1].events == [] and state.totals == before
    # round 1's self-drawn win was entered with its hand: the table says it scored 1 fan
    scored = {"type": "win", "player": "A", "self_drawn": True, "fan": 1}
    state = correct_event(store, table_id, code, 1, version, 2, scored)
    assert state.totals != before and sum(state.totals) == 0
    fixed = {**ROUND, "events": [*ROUND["events"][:2], scored, *ROUND["events"][3:]]}
    assert state.rounds[0].ledger.totals == settle_round(parse_round(fixed), get_preset("chengdu"), 1).totals
    revisions, _ = history(store, table_id, code, 1)
    assert [r["action"] for r in revisions][-1] == "event 2 corrected"
    assert revisions[-2]["events"] == ROUND["events"]  # the round as it was


def test_the_third_win_ends_the_round_and_an_undo_takes_both_back(store: Store) -> None:
    wins = [
        {"type": "win", "player": "A", "self_drawn": True, "fan": 1},
        {"type": "win", "winners": [{"player": "B", "fan": 2}, {"player": "C", "fan": 0}], "discarder": "D"},
    ]
    table_id, code, version = _played(store, wins[:1])
    assert not table_state(store, table_id).rounds[0].finished  # one winner: the round plays on
    state = add_event(store, table_id, code, 1, version, wins[1])
    played = state.rounds[0]
    assert played.finished and played.events == [*wins, {"type": "end", "reason": "three_won"}]
    assert (
        played.ledger.totals
        == settle_round(
            parse_round(
                {"players": ["A", "B", "C", "D"], "void_suits": VOIDS, "dealer": 0, "events": played.events}
            ),
            get_preset("chengdu"),
            1,
        ).totals
    )
    with pytest.raises(TableError) as over:
        add_event(store, table_id, code, 1, played.version, {"type": "end", "reason": "three_won"})
    assert over.value.code == "round_over"
    assert (
        history(store, table_id, code, 1)[0][-1]["action"]
        == "event 1 entered: win; the round ends: three_won"
    )
    state = undo(store, table_id, code, 1, played.version)
    assert state.rounds[0].events == wins[:1] and not state.rounds[0].finished


def test_a_correction_to_the_last_winners_ends_the_round_and_undo_after_a_later_fix_takes_both(
    store: Store,
) -> None:
    kong = {"type": "kong", "player": "D", "kind": "concealed", "tile": "9m"}
    first = {"type": "win", "player": "A", "self_drawn": True, "fan": 1}
    table_id, code, version = _played(
        store, [kong, first, {"type": "win", "player": "B", "discarder": "D", "fan": 2}]
    )
    both = {
        "type": "win",
        "winners": [{"player": "B", "fan": 2}, {"player": "C", "fan": 0}],
        "discarder": "D",
    }
    state = correct_event(store, table_id, code, 1, version, 2, both)  # 一炮多响: B and C, three have won
    assert state.rounds[0].finished and state.rounds[0].events[-1] == {"type": "end", "reason": "three_won"}
    other = {"type": "kong", "player": "D", "kind": "concealed", "tile": "8m"}
    state = correct_event(store, table_id, code, 1, state.rounds[0].version, 0, other)  # a later fix
    state = undo(store, table_id, code, 1, state.rounds[0].version)
    assert state.rounds[0].events == [other, first] and not state.rounds[0].finished


def test_an_end_entered_on_its_own_is_taken_back_alone(store: Store) -> None:
    wins = [
        {"type": "win", "player": "A", "self_drawn": True, "fan": 1},
        {"type": "win", "winners": [{"player": "B", "fan": 2}, {"player": "C", "fan": 0}], "discarder": "D"},
    ]
    table_id, code, version = _played(store, wins)
    # as a round entered before the end came by itself holds it: the end a write of its own
    with store.engine.begin() as connection:
        ended = update(RevisionRow).where(RevisionRow.action.endswith("the round ends: three_won"))
        assert connection.execute(ended.values(action="event 2 entered: end")).rowcount == 1
    state = undo(store, table_id, code, 1, version)
    assert state.rounds[0].events == wins and not state.rounds[0].finished


def test_writing_needs_the_code_and_a_round_in_play_blocks_the_next(store: Store) -> None:
    table_id, code, version = _played(store, ROUND["events"][:1])
    with pytest.raises(TableError) as wrong:
        add_event(store, table_id, "NOPE42", 1, version, ROUND["events"][1])
    assert wrong.value.code == "wrong_code"
    with pytest.raises(TableError) as unknown:
        join(store, "ZZZZZZ")
    assert unknown.value.code == "wrong_code"
    with pytest.raises(TableError) as in_play:
        start_round(store, table_id, code)
    assert in_play.value.code == "round_in_play"
    with pytest.raises(TableError) as bad:
        create_table(store, ["A", "A", "B", "C"], "chengdu")
    assert bad.value.code == "bad_table"
    with pytest.raises(TableError, match="preset"):
        create_table(store, ["A", "B", "C", "D"], "nowhere")


def test_a_write_on_a_stale_version_is_refused_with_the_round_as_it_is(store: Store) -> None:
    table_id, code, version = _played(store, ROUND["events"][:1])
    add_event(store, table_id, code, 1, version, ROUND["events"][1])
    with pytest.raises(StaleWrite) as stale:
        add_event(store, table_id, code, 1, version, ROUND["events"][2])  # made on the version before
    assert stale.value.code == "stale_write"
    assert stale.value.current.rounds[0].events == ROUND["events"][:2]


def test_two_writers_on_one_version_lose_nothing(store: Store) -> None:
    """Eight phones enter a kong each on the same version at once: one is written, the others are told."""
    table_id, code, version = _played(store, [])
    barrier = threading.Barrier(8)
    outcomes: list[str] = []
    kongs = [
        {"type": "kong", "player": "ABCD"[i % 4], "kind": "concealed", "tile": f"{i + 1}m"} for i in range(8)
    ]

    def write(event: dict[str, Any]) -> None:
        barrier.wait()
        try:
            add_event(store, table_id, code, 1, version, event)
            outcomes.append("written")
        except StaleWrite:
            outcomes.append("stale")

    threads = [threading.Thread(target=write, args=(kong,)) for kong in kongs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["stale"] * 7 + ["written"]
    state = table_state(store, table_id)
    assert len(state.rounds[0].events) == 1 and state.rounds[0].version == version + 1
    assert history(store, table_id, code, 1)[1] == 2  # started, one kong: no write lost or doubled


def test_a_table_is_found_by_its_id_or_the_code_the_page_shows(store: Store) -> None:
    table_id, code, _ = _played(store, ROUND["events"][:2])
    for given in (table_id, table_id.upper(), code, code.lower(), f" {code} "):
        assert find_table(store, given).id == table_id, given
    with pytest.raises(TableError) as caught:
        find_table(store, "QQQQQQ")
    assert caught.value.code == "no_such_table" and "QQQQQQ" in str(caught.value)


def test_smj_table_and_settle_take_the_join_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``smj table show|export`` and ``smj settle --table`` read a table by the code the page shows, as
    by its id."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("SMJ_DATABASE_URL", url)
    table_id, code, _ = _played(open_store(url), ROUND["events"])
    by_id = run(smj.main, capsys, "table", "export", table_id, "--format", "json")
    by_code = run(smj.main, capsys, "table", "export", code, "--format", "json")
    assert by_id[0] == 0 and by_code == by_id and json.loads(by_code[1])["id"] == table_id
    shown = run(smj.main, capsys, "table", "show", code.lower())
    assert shown[0] == 0 and f"table {table_id}" in shown[1]
    settled = run(smj.main, capsys, "settle", "--table", code, "--json")
    assert settled[0] == 0 and json.loads(settled[1])["totals"] == json.loads(by_id[1])["totals"]
    missing = run(smj.main, capsys, "table", "show", "NOSUCH")
    assert missing[0] != 0 and "no table has the id or join code 'NOSUCH'" in missing[2]


def test_a_round_s_history_is_bounded_paged_and_never_loaded_to_append(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A round keeps its newest ``MAX_REVISIONS`` revisions, answers them a page at a time, and a write
    appends its revision without reading the others; an event's comment and size are capped."""
    from sqlalchemy import event as sql_event

    import store.tables as stored

    monkeypatch.setattr(stored, "MAX_REVISIONS", 6)
    table_id, code, version = _played(store, [])
    kong = {"type": "kong", "player": "A", "kind": "concealed", "tile": "5p"}
    for _ in range(4):  # entered and taken back: two revisions each
        version = add_event(store, table_id, code, 1, version, kong).rounds[0].version
        version = undo(store, table_id, code, 1, version).rounds[0].version
    revisions, total = history(store, table_id, code, 1)
    assert total == 6 and len(revisions) == 6 and revisions[-1]["action"].startswith("event 0 taken back")
    page, _ = history(store, table_id, code, 1, offset=4, limit=10)
    assert [r["version"] for r in page] == [r["version"] for r in revisions[4:]]
    statements: list[str] = []

    def seen(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(" ".join(statement.split()))

    sql_event.listen(store.engine, "before_cursor_execute", seen)
    try:
        add_event(store, table_id, code, 1, version, kong)
    finally:
        sql_event.remove(store.engine, "before_cursor_execute", seen)
    reads = [s for s in statements if s.startswith("SELECT") and "FROM round_revisions" in s]
    assert reads == [], reads  # only the DELETE's bounded subquery touches them
    for too_much, says in (
        ({**kong, "tile": "6p", "comment": "x" * (stored.MAX_COMMENT + 1)}, "comment"),
        ({**kong, "tile": "6p", "comment": "x" * 200, "hai_di": ["y" * 100] * 50}, "bytes"),
    ):
        with pytest.raises(TableError) as caught:
            add_event(store, table_id, code, 1, version + 1, too_much)
        assert caught.value.code == "event_too_large" and says in str(caught.value)


def test_a_read_settles_no_round_already_settled(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each round's ledger is kept under its version: reading the table again settles nothing, and a write
    settles the round it changes (once, or twice when its win ends the round) and no other."""
    import store.tables as stored

    table_id, code, _ = _played(store, ROUND["events"])  # round 1, over
    state = start_round(store, table_id, code, dealer=1)
    second = state.rounds[1].version
    settled: list[int] = []
    real = stored._settle
    monkeypatch.setattr(stored, "_settle", lambda *args: settled.append(1) or real(*args))
    before = table_state(store, table_id)
    table_state(store, table_id)
    assert settled == [] and before.totals == table_state(store, table_id).totals
    add_event(
        store, table_id, code, 2, second, {"type": "kong", "player": "A", "kind": "concealed", "tile": "9s"}
    )
    assert len(settled) == 1  # the round written; round 1 not again
