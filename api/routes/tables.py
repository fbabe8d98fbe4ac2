"""Tables at the table (``store.tables``): a night of 血战到底 kept round by round.

``POST /api/v1/tables`` makes one and answers its join code; ``POST /api/v1/tables/join`` opens one by its
code; ``GET /api/v1/tables/{id}`` reads it (rounds, events, payments, the totals). Writes, a round's history
and the export send the code in the header ``X-Table-Code`` (never in a URL, where logs keep it), writes also
the round's ``version`` they were made on: a write on an older version is answered 409 ``stale_write`` with
the table as it is now (``error.details[0].table``), never a lost update. Ten wrong codes a minute from one
address and it is refused (429) for the rest of the minute; one address makes at most 30 tables an hour;
a code stops opening its table a day after the table's last write (403 ``code_expired``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Path, Query, Request
from fastapi.responses import PlainTextResponse

from api.deps import StoreDep, WorkersDep
from api.guard import Guesses, client_key
from api.routes import API_PREFIX, error_responses
from api.schemas import EventIn, HistoryOut, JoinIn, NewTableOut, RoundIn, TableIn, TableOut, VersionIn
from store.tables import (
    HISTORY_PAGE,
    TableError,
    add_event,
    coded_state,
    correct_event,
    create_table,
    export_csv,
    history,
    join,
    start_round,
    table_state,
    undo,
)

router = APIRouter(prefix=API_PREFIX, tags=["tables"])
TableId = Annotated[str, Path(max_length=32, description="the table's id")]
RoundNumber = Annotated[int, Path(ge=1, le=10_000)]
CodeHeader = Annotated[str, Header(alias="X-Table-Code", max_length=16, description="the table's join code")]
WRITE_ERRORS = error_responses(403, 404, 409, 422, 429, 503)


def limits() -> tuple[Guesses, Guesses]:
    """An app's limits on tables (``create_app`` keeps one pair in ``app.state``): a join code is guessed at
    most 10 times a minute from one address (850 billion codes: hopeless), and one address makes at most 30
    tables an hour."""
    return Guesses(10, 60.0, "wrong table codes"), Guesses(30, 3600.0, "tables made", "too_many_tables")


async def _with_code(request: Request, workers: Any, function: Any, *args: Any, **kwargs: Any) -> Any:
    """A store call (in the hands pool) that takes the table's code: a client past its wrong codes is refused
    (429) before the store is asked, and each wrong code counts against it."""
    client = client_key(request)
    code_guesses, _ = request.app.state.table_limits
    code_guesses.check(client)
    try:
        return await workers.hands(function, *args, **kwargs)
    except TableError as error:
        if error.code == "wrong_code":
            code_guesses.count(client)
        raise


@router.post(
    "/tables",
    response_model=NewTableOut,
    status_code=201,
    responses=error_responses(422, 503),
    summary="a table",
)
async def new_table(
    request: Request, body: Annotated[TableIn, Body()], store: StoreDep, workers: WorkersDep
) -> dict[str, Any]:
    """Four seats, the preset and the base stake; answers the table and its join code (shown once: give it to
    the other players, whose phones join with it)."""
    client = client_key(request)
    _, tables_made = request.app.state.table_limits
    tables_made.check(client)
    state, code = await workers.hands(create_table, store, body.players, body.preset, body.base, body.set)
    tables_made.count(client)
    return {**state.to_json(), "code": code}


@router.post(
    "/tables/join", response_model=TableOut, responses=error_responses(403, 422, 429, 503), summary="join"
)
async def join_table(
    request: Request, body: Annotated[JoinIn, Body()], store: StoreDep, workers: WorkersDep
) -> dict[str, Any]:
    return (await _with_code(request, workers, join, store, body.code)).to_json()


@router.get(
    "/tables/{table}", response_model=TableOut, responses=error_responses(404, 503), summary="a table"
)
async def read_table(table: TableId, store: StoreDep, workers: WorkersDep) -> dict[str, Any]:
    return (await workers.hands(table_state, store, table)).to_json()


@router.post("/tables/{table}/rounds", response_model=TableOut, responses=WRITE_ERRORS, summary="a new round")
async def new_round(
    request: Request,
    table: TableId,
    code: CodeHeader,
    store: StoreDep,
    workers: WorkersDep,
    body: Annotated[RoundIn | None, Body()] = None,
) -> dict[str, Any]:
    """Starts the next round (the last must be over): its dealer and 定缺, both optional."""
    body = body or RoundIn()
    state = await _with_code(
        request, workers, start_round, store, table, code, dealer=body.dealer, void_suits=body.void_suits
    )
    return state.to_json()


@router.post(
    "/tables/{table}/rounds/{number}/events",
    response_model=TableOut,
    responses=WRITE_ERRORS,
    summary="enter the next event of a round",
)
async def enter_event(
    request: Request,
    table: TableId,
    number: RoundNumber,
    body: Annotated[EventIn, Body()],
    code: CodeHeader,
    store: StoreDep,
    workers: WorkersDep,
) -> dict[str, Any]:
    """A kong (刮风下雨), a win (on a discard, self-drawn, several winners on one discard), the wall's end:
    checked against the round so far as ``smj settle`` checks a round (a 422 with the settlement's code
    and the event's index in ``details``); the answer holds the round's payments at once. The win that makes
    the third winner ends the round in the same write (its end event, ``three_won``, is added)."""
    state = await _with_code(
        request, workers, add_event, store, table, code, number, body.version, body.as_round_event()
    )
    return state.to_json()


@router.post(
    "/tables/{table}/rounds/{number}/undo",
    response_model=TableOut,
    responses=WRITE_ERRORS,
    summary="take back a round's last event",
)
async def undo_event(
    request: Request,
    table: TableId,
    number: RoundNumber,
    body: Annotated[VersionIn, Body()],
    code: CodeHeader,
    store: StoreDep,
    workers: WorkersDep,
) -> dict[str, Any]:
    return (await _with_code(request, workers, undo, store, table, code, number, body.version)).to_json()


@router.put(
    "/tables/{table}/rounds/{number}/events/{index}",
    response_model=TableOut,
    responses=WRITE_ERRORS,
    summary="correct an event of a round, a past one too",
)
async def correct(
    request: Request,
    table: TableId,
    number: RoundNumber,
    index: Annotated[int, Path(ge=0, le=1_000)],
    body: Annotated[EventIn, Body()],
    code: CodeHeader,
    store: StoreDep,
    workers: WorkersDep,
) -> dict[str, Any]:
    """The round is checked whole again and the night's totals follow; the round as it was stays in its
    history (``GET .../history``)."""
    state = await _with_code(
        request,
        workers,
        correct_event,
        store,
        table,
        code,
        number,
        body.version,
        index,
        body.as_round_event(),
    )
    return state.to_json()


@router.get(
    "/tables/{table}/rounds/{number}/history",
    response_model=HistoryOut,
    responses=error_responses(403, 404, 429, 503),
    summary="a round as every write left it",
)
async def round_history(
    request: Request,
    table: TableId,
    number: RoundNumber,
    code: CodeHeader,
    store: StoreDep,
    workers: WorkersDep,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=HISTORY_PAGE)] = HISTORY_PAGE,
) -> dict[str, Any]:
    """For holders of the table's code (``X-Table-Code``), as writing is. Oldest first, a page at a time
    (``offset``, ``limit``: at most 50); ``total`` says how many are kept (a round keeps its newest 100)."""
    revisions, total = await _with_code(request, workers, history, store, table, code, number, offset, limit)
    return {"revisions": revisions, "total": total, "offset": offset}


@router.get(
    "/tables/{table}/export",
    responses={
        **error_responses(403, 404, 429, 503),
        200: {"content": {"text/csv": {}, "application/json": {}}},
    },
    summary="the night as CSV or JSON",
)
async def export(
    request: Request,
    table: TableId,
    store: StoreDep,
    workers: WorkersDep,
    code: CodeHeader,
    format: Annotated[str, Query(pattern="^(csv|json)$")] = "csv",
) -> Any:
    """For holders of the table's code (``X-Table-Code``), as writing is."""
    state = await _with_code(request, workers, coded_state, store, table, code)
    if format == "json":
        return state.to_json()
    return PlainTextResponse(
        export_csv(state),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="table-{state.id}.csv"'},
    )
