"""Tables at the table: a night of 血战到底 kept round by round (the rules stay in ``scoring.settlement``).

A table has four seats with names, a preset, a base stake and a join code (stored hashed: only holders
of it may write or read a round's history; the code stops opening the table ``CODE_HOURS`` after its last
write). Its rounds are lists of events in the round JSON ``scoring.settlement`` reads (a kong, a win with
one or several winners, the end); every event is checked as it is entered, against the round so far,
by the settlement's own checks (``parse_round`` and ``settle_round``), and the round's payments and the
night's totals are recomputed from the events each time, so a correction of a past round moves the totals and
nothing is stored twice. Every write names the version of the round it was made on and moves it on; a write
made on an older version is refused (``StaleWrite``, with the round as it is now), never a lost update. Each
write leaves a revision: the history a correction keeps.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, object_session
from sqlalchemy.orm.exc import StaleDataError

from scoring.errors import SmjError
from scoring.presets import UnknownPresetError, get_preset
from scoring.settlement import Ledger, RoundError, parse_round, settle_round
from store.database import Store
from store.schema import RevisionRow, RoundRow, TableRow, now

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L: read aloud across a table
CODE_LENGTH = 8  # 31**8: 850 billion codes, against 10 wrong guesses a minute (``api.routes.tables``)
CODE_HOURS = 24  # a code opens its table until this long after the table's last write (the night is over)
ID_BYTES = 8
MAX_NAME = 24
MAX_BASE = 1_000_000
WRITE_ATTEMPTS = 5
MAX_EVENTS = 60  # a round has at most 4 kongs a player, 3 wins and an end; well below this
MAX_COMMENT = 300  # characters of an event's ``comment`` (kept, never read by the rules)
MAX_EVENT_BYTES = 4096  # an event as JSON: a win of three typed hands with every flag is under 1 KB
MAX_REVISIONS = 100  # revisions kept a round: the newest; each stores the round as a write left it
HISTORY_PAGE = 50  # revisions a history answer holds at most
THREE_WON = {"type": "end", "reason": "three_won"}  # what the last winner's win brings (``add_event``)
ENDED_BY_WIN = "; the round ends: three_won"  # ... and how its write's revision says so (``undo``)


class TableError(SmjError):
    """A request about a table that can't be done: ``code`` says which (``no_such_table``, ``no_such_round``,
    ``wrong_code``, ``bad_table``, ``round_over``, ``round_in_play``, ``round_started``, ``no_event``,
    ``too_many_events``, ``stale_write`` (``StaleWrite``), or a
    ``scoring.settlement.RoundErrorCode`` for an event the rules refuse), ``event`` the event's index."""

    def __init__(self, code: str, message: str, event: int | None = None) -> None:
        super().__init__(message, code)
        self.event = event

    @property
    def details(self) -> list[dict[str, object]] | None:
        return None if self.event is None else [{"event": self.event}]


class StaleWrite(TableError):
    """A write made on a version of the round that is no longer the latest: ``current`` is the table now."""

    def __init__(self, given: int, current: TableState) -> None:
        super().__init__("stale_write", f"the round changed since version {given}: read it again and redo")
        self.current = current

    @property
    def details(self) -> list[dict[str, object]] | None:
        return [{"table": self.current.to_json()}]


@dataclass(frozen=True)
class RoundState:
    number: int
    version: int
    dealer: int | None
    void_suits: dict[str, str]
    events: list[dict[str, Any]]
    ledger: Ledger

    @property
    def finished(self) -> bool:
        return self.ledger.finished

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "version": self.version,
            "dealer": self.dealer,
            "void_suits": dict(self.void_suits),
            "events": list(self.events),
            "finished": self.finished,
            "ledger": self.ledger.to_json(),
        }


@dataclass(frozen=True)
class TableState:
    id: str
    players: list[str]
    preset: str
    base: int
    tile_set: str | None
    rounds: list[RoundState]

    @property
    def totals(self) -> list[int]:
        """The night's totals a seat, every round counted (one still in play as it stands)."""
        sums = [0, 0, 0, 0]
        for played in self.rounds:
            for seat, amount in enumerate(played.ledger.totals):
                sums[seat] += amount
        return sums

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "players": list(self.players),
            "preset": self.preset,
            "base": self.base,
            "set": self.tile_set,
            "rounds": [played.to_json() for played in self.rounds],
            "totals": self.totals,
        }


def _hash(code: str) -> str:
    return hashlib.sha256(code.strip().upper().encode()).hexdigest()


def _checked_players(players: Sequence[str]) -> list[str]:
    names = [str(name).strip() for name in players]
    if len(names) != 4 or any(not name or len(name) > MAX_NAME for name in names):
        raise TableError("bad_table", f"a table has four seats, each named in 1-{MAX_NAME} characters")
    if len(set(names)) != 4:
        raise TableError("bad_table", "the four players' names must differ")
    return names


def create_table(
    store: Store, players: Sequence[str], preset: str, base: int = 1, tile_set: str | None = None
) -> tuple[TableState, str]:
    """A new table and its join code (shown once: only its hash is kept)."""
    names = _checked_players(players)
    try:
        get_preset(preset)
    except UnknownPresetError as error:
        raise TableError("bad_table", str(error)) from None
    if not 1 <= base <= MAX_BASE:
        raise TableError("bad_table", f"the base stake is a whole number from 1 to {MAX_BASE}")
    for _ in range(8):  # a code already taken by another table: draw again
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        table_id = secrets.token_hex(ID_BYTES)
        try:
            with store.transaction() as session:
                session.add(
                    TableRow(
                        id=table_id,
                        code_hash=_hash(code),
                        players=names,
                        preset=preset,
                        base=base,
                        tile_set=tile_set,
                    )
                )
        except IntegrityError:
            continue
        return table_state(store, table_id), code
    raise TableError("bad_table", "no free table code: try again")  # pragma: no cover - 31^6 codes


def join(store: Store, code: str) -> TableState:
    """The table a join code opens; ``wrong_code`` when none does."""
    with store.transaction() as session:
        row = session.scalar(select(TableRow).where(TableRow.code_hash == _hash(code)))
        if row is None:
            raise TableError("wrong_code", "no table has this code")
        _live(row)
        table_id = row.id
    return table_state(store, table_id)


def table_state(store: Store, table_id: str) -> TableState:
    with store.transaction() as session:
        return _state(_table(session, table_id))


def coded_state(store: Store, table_id: str, code: str) -> TableState:
    """The table, for a holder of its code (its export): ``wrong_code`` / ``code_expired`` otherwise."""
    with store.transaction() as session:
        return _state(_coded(session, table_id, code, "exporting this table"))


def find_table(store: Store, table: str) -> TableState:
    """The table named by its id or by its join code (as the page shows it): ``no_such_table`` when
    neither opens one."""
    with store.transaction() as session:
        row = session.get(TableRow, table.strip().lower())
        if row is None:
            row = session.scalar(select(TableRow).where(TableRow.code_hash == _hash(table)))
        if row is None:
            raise TableError("no_such_table", f"no table has the id or join code {table!r}")
        return _state(row)


def start_round(
    store: Store,
    table_id: str,
    code: str,
    *,
    dealer: int | None = None,
    void_suits: dict[str, str] | None = None,
) -> TableState:
    """A new round; the last one must be over (``round_in_play``). ``dealer`` (a seat) and ``void_suits``
    (定缺: seat or name -> m, p or s) are optional and checked as the settlement checks a round. Two players
    starting one round at once: the second is told (``round_started``)."""
    try:
        with store.transaction() as session:
            table = _writable(session, table_id, code)
            last = table.rounds[-1] if table.rounds else None
            if last is not None and not LEDGERS.get(table, last).finished:
                raise TableError("round_in_play", f"round {last.number} is still in play: end it first")
            number = last.number + 1 if last is not None else 1
            played = RoundRow(number=number, dealer=dealer, void_suits=dict(void_suits or {}), events=[])
            _settle(table, played.dealer, played.void_suits, [])
            table.rounds.append(played)
            session.flush()
            _revise(session, played, f"round {number} started")
            return _state(table)
    except IntegrityError:
        raise TableError(
            "round_started", "another player started this round just now: read the table"
        ) from None


def add_event(
    store: Store, table_id: str, code: str, number: int, version: int, event: dict[str, Any]
) -> TableState:
    """Enter the next event of round ``number``, made on its ``version``; checked against the round so far."""

    _check_size(event)

    def change(events: list[dict[str, Any]], _: RoundRow) -> tuple[list[dict[str, Any]], str]:
        if len(events) >= MAX_EVENTS:
            raise TableError("too_many_events", f"a round holds at most {MAX_EVENTS} events")
        return [*events, event], f"event {len(events)} entered: {event.get('type', '?')}"

    return _write(store, table_id, code, number, version, change, open_only=True, end_when_won=True)


def undo(store: Store, table_id: str, code: str, number: int, version: int) -> TableState:
    """Take back the last event of round ``number`` (the round reopens if it was its end). An end the last
    winner's win brought (``add_event``, the write's revision says so) goes back with that win; an end
    entered on its own goes back alone."""

    def change(events: list[dict[str, Any]], played: RoundRow) -> tuple[list[dict[str, Any]], str]:
        if not events:
            raise TableError("no_event", f"round {number} has no event to take back")
        last = len(events) - 1
        if events[-1] == THREE_WON and _brought_by_win(played, len(events)):
            return events[:-2], f"events {last - 1} and {last} taken back: a win and the end it brought"
        return events[:-1], f"event {last} taken back: {events[-1].get('type', '?')}"

    return _write(store, table_id, code, number, version, change)


def correct_event(
    store: Store, table_id: str, code: str, number: int, version: int, index: int, event: dict[str, Any]
) -> TableState:
    """Replace event ``index`` of round ``number`` (a past round too): the round is checked whole again and
    the totals follow; the round as it was stays in its revisions."""

    _check_size(event)

    def change(events: list[dict[str, Any]], _: RoundRow) -> tuple[list[dict[str, Any]], str]:
        if not 0 <= index < len(events):
            raise TableError("no_event", f"round {number} has no event {index}")
        return [*events[:index], event, *events[index + 1 :]], f"event {index} corrected"

    # the last event corrected into a win of the last winners ends the round, as if entered so
    return _write(store, table_id, code, number, version, change, end_when_won=True)


def history(
    store: Store, table_id: str, code: str, number: int, offset: int = 0, limit: int = HISTORY_PAGE
) -> tuple[list[dict[str, Any]], int]:
    """Round ``number`` as its writes left it, oldest first (its newest ``MAX_REVISIONS`` kept), from the
    ``offset``-th, at most ``limit`` (for holders of the table's code); and how many are kept."""
    with store.transaction() as session:
        played = _round(_coded(session, table_id, code), number)
        kept = select(RevisionRow).where(RevisionRow.round_id == played.id)
        total = session.scalar(select(func.count()).select_from(kept.subquery())) or 0
        page = session.scalars(kept.order_by(RevisionRow.id).offset(offset).limit(min(limit, HISTORY_PAGE)))
        return [
            {
                "version": revision.version,
                "action": revision.action,
                "events": list(revision.events),
                "at": revision.at.isoformat(),
            }
            for revision in page
        ], total


def export_csv(state: TableState) -> str:
    """The night as CSV: a line a payment (round, event, payer, payee, amount, reason; rounds and events
    numbered from 1, as the page numbers them), then the totals."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["round", "event", "payer", "payee", "amount", "reason"])
    for played in state.rounds:
        for payment in played.ledger.payments:
            payer, payee = state.players[payment.payer], state.players[payment.payee]
            event = payment.event + 1 if payment.event is not None else ""
            writer.writerow([played.number, event, payer, payee, payment.amount, payment.reason])
    writer.writerow([])
    writer.writerow(["total", "", *state.players])
    writer.writerow(["", "", *state.totals])
    return out.getvalue()


def round_json(state: TableState, number: int) -> dict[str, Any]:
    """A stored round as the round JSON ``smj settle`` reads."""
    for played in state.rounds:
        if played.number == number:
            return _round_json(state.players, played.dealer, played.void_suits, played.events)
    raise TableError("no_such_round", f"table {state.id} has no round {number}")


# --- inside a transaction ----------------------------------------------------------------------------------


def _table(session: Session, table_id: str) -> TableRow:
    row = session.get(TableRow, table_id)
    if row is None:
        raise TableError("no_such_table", f"no table {table_id!r}")
    return row


def _writable(session: Session, table_id: str, code: str) -> TableRow:
    return _coded(session, table_id, code, "writing to this table")


def _coded(session: Session, table_id: str, code: str, what: str = "this") -> TableRow:
    """The table, for a holder of its code while the code is live; ``wrong_code`` / ``code_expired``."""
    table = _table(session, table_id)
    if not secrets.compare_digest(table.code_hash, _hash(code or "")):
        raise TableError("wrong_code", f"{what} needs the table's code")
    return _live(table)


def _live(table: TableRow) -> TableRow:
    """The table while its code still opens it: ``code_expired`` ``CODE_HOURS`` after its last write."""
    written = [table.created_at, *(played.updated_at for played in table.rounds)]
    last = max(moment if moment.tzinfo else moment.replace(tzinfo=UTC) for moment in written)
    hours = (now() - last).total_seconds() / 3600
    if hours > CODE_HOURS:
        raise TableError(
            "code_expired",
            f"this table's code stopped opening it {CODE_HOURS} hours after its last write ({hours:.0f} "
            "hours ago): its rounds stay readable by its id; open a new table for a new night",
        )
    return table


def _round(table: TableRow, number: int) -> RoundRow:
    for played in table.rounds:
        if played.number == number:
            return played
    raise TableError("no_such_round", f"table {table.id} has no round {number}")


def _write(
    store: Store,
    table_id: str,
    code: str,
    number: int,
    version: int,
    change: Any,
    *,
    open_only: bool = False,
    end_when_won: bool = False,
) -> TableState:
    """Apply ``change`` ((events, the round) -> (events, what was done)) to round ``number`` if it is still at
    ``version``. The UPDATE itself checks the version (``RoundRow``'s ``version_id_col``), so of two writers
    on one version the second is refused whichever reads first; a database busy with another writer
    (SQLite) is tried again, where the version then decides. ``end_when_won``: a win that makes the last
    winner the rules allow (血战到底: the third) ends the round in the same write."""
    for attempt in range(WRITE_ATTEMPTS):
        try:
            with store.transaction() as session:
                table = _writable(session, table_id, code)
                played = _round(table, number)
                if played.version != version:
                    raise StaleWrite(version, _state(table))
                if open_only and LEDGERS.get(table, played).finished:
                    raise TableError(
                        "round_over", f"round {number} is over: start the next one, or correct it"
                    )
                events, action = change(list(played.events), played)
                ledger = _settle(table, played.dealer, played.void_suits, events)
                if end_when_won and _all_won(table.preset, events, ledger):
                    events, action = [*events, dict(THREE_WON)], f"{action}{ENDED_BY_WIN}"
                    ledger = _settle(table, played.dealer, played.void_suits, events)
                played.events, played.updated_at = events, now()
                session.flush()  # UPDATE ... WHERE version = the one read; it moves on
                LEDGERS.put(table, played, ledger)  # the answer's read settles it no more
                _revise(session, played, action)
                return _state(table)
        except StaleDataError:
            return_state = table_state(store, table_id)
            raise StaleWrite(version, return_state) from None
        except OperationalError:
            if attempt == WRITE_ATTEMPTS - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")  # pragma: no cover


def _brought_by_win(played: RoundRow, count: int) -> bool:
    """Whether the round's end, its event ``count - 1``, came with the win before it (``add_event`` or
    ``correct_event`` added it): the write that first held it there says so in its revision."""
    added = None
    session = object_session(played)
    assert session is not None
    newest_first = session.scalars(
        select(RevisionRow).where(RevisionRow.round_id == played.id).order_by(RevisionRow.id.desc())
    )
    for revision in newest_first:  # back to the write that added the end (a few, never the whole history)
        if len(revision.events) != count or revision.events[-1] != THREE_WON:
            break
        added = revision
    return added is not None and added.action.endswith(ENDED_BY_WIN)


def _all_won(preset: str, events: list[dict[str, Any]], ledger: Ledger) -> bool:
    """Whether the last event is a win that leaves as many winners as the rules allow (``ledger``: the
    round settled so far)."""
    last_is_win = bool(events) and events[-1].get("type") == "win"
    return last_is_win and len(ledger.won) >= get_preset(preset).settlement.max_winners


def _revise(session: Session, played: RoundRow, action: str) -> None:
    """The round as this write left it, as a revision (added alone: the round's past ones are never loaded);
    beyond ``MAX_REVISIONS`` the oldest go."""
    session.add(
        RevisionRow(
            round_id=played.id,
            version=played.version,
            action=action,
            dealer=played.dealer,
            void_suits=dict(played.void_suits),
            events=list(played.events),
        )
    )
    session.flush()
    newest = (
        select(RevisionRow.id)
        .where(RevisionRow.round_id == played.id)
        .order_by(RevisionRow.id.desc())
        .limit(MAX_REVISIONS)
    )
    session.execute(
        delete(RevisionRow)
        .where(RevisionRow.round_id == played.id, RevisionRow.id.not_in(newest.scalar_subquery()))
        .execution_options(synchronize_session=False)
    )


def _check_size(event: dict[str, Any]) -> None:
    """An event of a size a round needs: its ``comment`` at most ``MAX_COMMENT`` characters, the whole at
    most ``MAX_EVENT_BYTES`` as JSON (``event_too_large``)."""
    comment = event.get("comment") if isinstance(event, dict) else None
    if isinstance(comment, str) and len(comment) > MAX_COMMENT:
        raise TableError("event_too_large", f"an event's comment holds at most {MAX_COMMENT} characters")
    size = len(json.dumps(event, ensure_ascii=False).encode())
    if size > MAX_EVENT_BYTES:
        raise TableError("event_too_large", f"an event of {size:,} bytes: at most {MAX_EVENT_BYTES:,}")


def _round_json(
    players: Sequence[str], dealer: int | None, void_suits: dict[str, str], events: list[dict[str, Any]]
) -> dict[str, Any]:
    data: dict[str, Any] = {"players": list(players), "events": list(events)}
    if dealer is not None:
        data["dealer"] = dealer
    if void_suits:
        data["void_suits"] = dict(void_suits)
    return data


def _settle(
    table: TableRow, dealer: int | None, void_suits: dict[str, str], events: list[dict[str, Any]]
) -> Ledger:
    """The round's ledger under the table's rules; an event the rules refuse raises ``TableError`` with the
    settlement's code and the event's index."""
    try:
        played = parse_round(_round_json(table.players, dealer, void_suits, events))
        return settle_round(played, get_preset(table.preset), table.base)
    except RoundError as error:
        raise TableError(error.code.value, error.message, error.event) from None


class _Ledgers:
    """The ledgers of rounds as they stand, by (table, round, version): a round's version moves on with every
    write to it, so a ledger kept under it is never stale, and a read settles only what was written since
    (each phone polls the table every few seconds). The newest ``size`` kept, per process."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._kept: OrderedDict[tuple[str, int, int], Ledger] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, table: TableRow, played: RoundRow, ledger: Ledger) -> None:
        with self._lock:
            self._kept[(table.id, played.number, played.version)] = ledger
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)

    def get(self, table: TableRow, played: RoundRow) -> Ledger:
        key = (table.id, played.number, played.version)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        ledger = _settle(table, played.dealer, played.void_suits, played.events)
        self.put(table, played, ledger)
        return ledger


LEDGERS = _Ledgers()


def _state(table: TableRow) -> TableState:
    rounds = [
        RoundState(
            played.number,
            played.version,
            played.dealer,
            dict(played.void_suits),
            list(played.events),
            LEDGERS.get(table, played),
        )
        for played in table.rounds
    ]
    return TableState(table.id, list(table.players), table.preset, table.base, table.tile_set, rounds)
