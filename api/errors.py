"""Every error the service answers, in one JSON shape, with a 4xx status (a 5xx only for a bug or no model).

Shape, for every error including FastAPI's own validation errors and unknown paths::

    {"error": {"code": "unknown_preset", "message": "unknown rules preset 'x'; valid presets: ...",
               "details": null}}

``details`` is a list of ``{loc, msg, type}`` for ``invalid_request`` and ``null`` otherwise.

==========================  ======  ==============================================================
code                        status  raised by
==========================  ======  ==============================================================
``invalid_request``         422     a body, form or query that does not fit the schema (FastAPI / pydantic)
``invalid_tile``            422     ``scoring.TileParseError``: text that is not a tile
``typed_hand``              422     ``scoring.typed.TypedHandError``: a typed hand that is not tiles and meld
                                    words (the message in Chinese and English names the word)
``unknown_preset``          422     ``scoring.UnknownPresetError``
``wrong_tile_count`` ...    422     an impossible hand (``ScoreError`` codes of ``scoring.errors``: wrong tile
                                    count, a fifth copy, the winning tile not in the hand, a contradictory
                                    context), from ``/score`` or ``scoring.InvalidHandError`` from ``/waits``
``malformed``, ...          422     ``scoring.settlement.RoundError`` from ``/settle``: its ``RoundErrorCode``
                                    (malformed, unknown_player, out_of_order, bad_kong, bad_win, ...)
``box_outside_image``       422     ``/examples``: a corrected box does not lie in the photo
``consent_required``        422     ``/examples`` without ``consent=true``
``saving_disabled``         403     ``/examples`` where saving is off (``SMJ_SAVE_EXAMPLES``: api.examples)
``cross_site_request``      403     ``/examples`` sent by another site's page (its ``Origin``)
``token_required``          401     ``/examples`` or a set's write without ``SMJ_EXAMPLES_TOKEN`` (one is set)
``wrong_token``             401     ... with a token other than ``SMJ_EXAMPLES_TOKEN``
``too_many_guesses``        429     10 wrong tokens, or 10 wrong table codes, in a minute from one address
                                    (``api.examples.Guesses``; ``Retry-After`` says when to try again)
``too_many_tables``         429     30 tables made in an hour from one address
``code_expired``            403     a table's code used a day after the table's last write
``quota_full``              507     ``/examples`` past ``SMJ_MAX_EXAMPLES`` or ``SMJ_MAX_EXAMPLES_BYTES``
``not_an_image``            415     ``vision.images.ImageError``: the upload is not an image
``corrupt_image``           422     ``vision.images.ImageError``: a truncated or corrupt image
``too_many_pixels``         413     ``vision.images.ImageError``: more pixels than ``SMJ_MAX_PIXELS``
``too_many_tiles``          422     a photo showing more than ``vision.detect.detector.MAX_TILES`` (400) tiles
``upload_too_large``        413     a body larger than ``SMJ_MAX_UPLOAD_BYTES`` (checked while it arrives)
``body_too_large``          413     a JSON body larger than ``SMJ_MAX_JSON_BYTES`` (refused before parsing)
``invalid_text``            422     a JSON body holding a lone surrogate (text that is not Unicode)
``not_found``               404     an unknown path
``method_not_allowed``      405     a known path with another method
``too_many_files``          422     a photo request with more than one file
``fan_too_large``           422     ``/settle``: a given fan above ``scoring.settlement.MAX_FAN`` (36)
``amount_too_large``        422     ``/settle``: a payment or total above 2**53-1 (lower the base)
``model_not_loaded``        503     a photo endpoint while the detector weights could not be loaded
``empty_set``               422     a set holding no example read with (a removal never leaves one so)
``event_too_large``         422     a table event over 4 KB as JSON, or its ``comment`` over 300 characters
``store_unavailable``       503     sets and tables while the store can't be reached (``Retry-After``; the
                                    database is named in the server's log only)
``request_timeout``         503     a request not answered within ``SMJ_REQUEST_TIMEOUT_S``
``bad_http_request``        400     bytes that are no HTTP/1.1 request (``api.server``, before the app)
``internal_error``          500     a bug; the message says no more than that
==========================  ======  ==============================================================

``ApiError`` is the one exception the web layer raises itself; the library's exceptions are mapped here,
so routes stay thin and let them propagate.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scoring import InvalidHandError, TileParseError, UnknownPresetError
from scoring.settlement import RoundError
from scoring.typed import TypedHandError
from vision.images import ImageError

log = logging.getLogger("api")

IMAGE_ERROR_STATUS = {
    "not_an_image": 415,
    "corrupt_image": 422,
    "too_many_pixels": 413,
    "too_many_tiles": 422,
}
MULTIPART_ALLOWANCE = 256 * 1024  # room for the form fields that travel with a photo


class ApiError(Exception):
    """An error answered as ``{"error": {"code", "message"}}`` with ``status_code``."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code
        self.message = message
        self.details = details  # e.g. the table as it is now, with a 409 on a stale write
        self.headers = headers or {}  # e.g. Retry-After with a 429


STORE_RETRY_S = 5  # a store that is unavailable: when a client tries again (Retry-After)


def store_unavailable(reason: object) -> ApiError:
    """The 503 ``store_unavailable`` for a store that can't be reached (``reason``, naming the database, goes
    to the server's log in one line; a client sees no URL or path)."""
    log.warning(
        "the store is unavailable: %s", str(reason).strip().splitlines()[0] if str(reason) else reason
    )
    return ApiError(
        503,
        "store_unavailable",
        "the store (sets and tables) is unavailable: try again shortly",
        headers={"Retry-After": str(STORE_RETRY_S)},
    )


def upload_too_large_message(limit: int) -> str:
    return f"the upload is larger than the {limit:,} bytes allowed"


def error_body(code: str, message: str, details: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details}}


def error_response(
    status_code: int, code: str, message: str, details: list[dict[str, Any]] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(code, message, details), status_code=status_code)


def _validation_details(errors: Any) -> list[dict[str, Any]]:
    """pydantic's error list without ``input`` / ``ctx`` (which may hold bytes or the whole body)."""
    return [
        {
            "loc": [str(part) for part in error.get("loc", ())],
            "msg": str(error.get("msg", "")),
            "type": str(error.get("type", "")),
        }
        for error in errors
    ]


def _validation_message(details: list[dict[str, Any]]) -> str:
    if not details:
        return "the request does not fit the schema"
    first = details[0]
    where = ".".join(first["loc"]) or "request"
    more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def install_error_handlers(app: FastAPI) -> None:
    """Map every exception to the one error shape."""

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, error: ApiError) -> JSONResponse:
        response = error_response(error.status_code, error.code, error.message, error.details)
        response.headers.update(error.headers)
        return response

    @app.exception_handler(RequestValidationError)
    async def _request_validation(_: Request, error: RequestValidationError) -> JSONResponse:
        details = _validation_details(error.errors())
        return error_response(422, "invalid_request", _validation_message(details), details)

    @app.exception_handler(ValidationError)
    async def _model_validation(_: Request, error: ValidationError) -> JSONResponse:
        details = _validation_details(error.errors())
        return error_response(422, "invalid_request", _validation_message(details), details)

    @app.exception_handler(ImageError)
    async def _image(_: Request, error: ImageError) -> JSONResponse:
        return error_response(IMAGE_ERROR_STATUS.get(error.code, 422), error.code, error.message)

    @app.exception_handler(TileParseError)
    async def _tile(_: Request, error: TileParseError) -> JSONResponse:
        return error_response(422, "invalid_tile", str(error))

    @app.exception_handler(DBAPIError)
    async def _database(_: Request, error: DBAPIError) -> JSONResponse:
        # the database went away after start-up (a stopped server, a deleted file): a 503, not a traceback
        unavailable = store_unavailable(f"{type(error.orig).__name__}: {error.orig}")
        response = error_response(unavailable.status_code, unavailable.code, unavailable.message)
        response.headers.update(unavailable.headers)
        return response

    @app.exception_handler(TypedHandError)
    async def _typed(_: Request, error: TypedHandError) -> JSONResponse:
        return error_response(422, "typed_hand", str(error))

    @app.exception_handler(UnknownPresetError)
    async def _preset(_: Request, error: UnknownPresetError) -> JSONResponse:
        return error_response(422, "unknown_preset", str(error))

    @app.exception_handler(InvalidHandError)
    async def _invalid_hand(_: Request, error: InvalidHandError) -> JSONResponse:
        return error_response(422, error.error.code.value, error.error.message)

    @app.exception_handler(RoundError)
    async def _round(_: Request, error: RoundError) -> JSONResponse:
        where = f"event {error.event}: " if error.event is not None else ""
        path = f"{error.path}: " if error.path else ""
        return error_response(422, error.code.value, where + path + error.message)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, error: StarletteHTTPException) -> JSONResponse:
        if error.status_code == 400:  # FastAPI could not parse the body (not UTF-8, a broken multipart)
            log.info("unreadable request body: %s", error.detail)
            return error_response(
                422,
                "invalid_request",
                "the request body could not be read (not UTF-8 JSON, or a broken form)",
            )
        codes = {404: "not_found", 405: "method_not_allowed", 413: "upload_too_large"}
        code = codes.get(error.status_code, "bad_request" if error.status_code < 500 else "internal_error")
        response = error_response(error.status_code, code, str(error.detail))
        if error.headers:
            response.headers.update(error.headers)
        if error.status_code == 405:  # every method the path takes, not those of its first route alone
            response.headers["Allow"] = _allowed_methods(request, response.headers.get("Allow", ""))
        return response

    @app.exception_handler(Exception)
    async def _bug(_: Request, error: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=error)
        return error_response(500, "internal_error", "the server failed on this request; it has been logged")


class _BodyTooLarge(Exception):
    pass


async def send_error(
    send: Send, status: int, code: str, message: str, headers: list[tuple[bytes, bytes]]
) -> None:
    """Answer an error body at the ASGI level (from a middleware, before or instead of the app)."""
    body = json.dumps(error_body(code, message), separators=(",", ":")).encode()
    start_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": start_headers + headers})
    await send({"type": "http.response.body", "body": body})


class BodySizeLimit:
    """Refuse a request body larger than ``max_bytes`` with 413, counting bytes as they arrive; a JSON
    body (``Content-Type: application/json``) larger than ``max_json_bytes`` likewise, before anything
    parses it (a real hand, round or table event takes a few KB).

    A ``Content-Length`` above the limit is refused before anything is read; a chunked body is cut off
    at the first chunk past it (whatever the app would have answered is replaced by the 413).
    """

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        allowed_upload: int | None = None,
        max_json_bytes: int | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.allowed_upload = allowed_upload if allowed_upload is not None else max_bytes
        self.max_json_bytes = max_json_bytes if max_json_bytes is not None else max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        is_json = headers.get(b"content-type", b"").split(b";")[0].strip().lower() == b"application/json"
        limit = min(self.max_json_bytes, self.max_bytes) if is_json else self.max_bytes
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._refuse(send, is_json)
            return
        received = 0
        too_large = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, too_large
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    too_large = True
                    raise _BodyTooLarge()
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if too_large:
                return  # the app's answer to a body cut short is replaced by the 413
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not too_large:
                raise
        if too_large and not started:
            await self._refuse(send, is_json)

    async def _refuse(self, send: Send, is_json: bool = False) -> None:
        if is_json:
            message = (
                f"a JSON body is at most {self.max_json_bytes:,} bytes: a hand, round or event is far smaller"
            )
            await send_error(send, 413, "body_too_large", message, [(b"connection", b"close")])
            return
        message = upload_too_large_message(self.allowed_upload)
        await send_error(send, 413, "upload_too_large", message, [(b"connection", b"close")])


# a \uD800-\uDBFF escape not followed by a \uDC00-\uDFFF one, or the latter not after the former
_LONE_SURROGATE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


class JsonTextCheck:
    """Answer 422 ``invalid_text`` to a JSON body holding a lone surrogate escape (``"\\ud800"``): text that
    cannot be written as UTF-8 would fail later, in any string field, as a 500. The body is read whole (a JSON
    body is small: ``BodySizeLimit`` bounds it first) and handed on as it came."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or ()) if scope["type"] == "http" else {}
        if headers.get(b"content-type", b"").split(b";")[0].strip().lower() != b"application/json":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, receive, send)  # the client left: nothing to check
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        found = _LONE_SURROGATE.search(body)
        if found is not None:
            where = found.start()
            message_text = (
                f"the JSON holds text that is not Unicode (a lone surrogate, {found.group().decode()}, at "
                f"byte {where}): send UTF-8 text"
            )
            await send_error(send, 422, "invalid_text", message_text, [])
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _allowed_methods(request: Request, given: str) -> str:
    """Every method the API's paths matching the request's take (its OpenAPI schema's), else ``given``."""
    methods: set[str] = set()
    for template, operations in request.app.openapi().get("paths", {}).items():
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, request.url.path):
            methods |= {method.upper() for method in operations}
    return ", ".join(sorted(methods)) if methods else given


class SecurityHeaders:
    """Every answer tells the browser not to guess its type from its bytes (``nosniff``: a saved photo is
    never run as a script) and to send no ``Referer`` off this origin (a table's id stays here)."""

    HEADERS = ((b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin"))

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in self.HEADERS if name not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)


class RequestTimeLimit:
    """Answer 503 ``request_timeout`` to a request not answered within ``seconds``, reading its body
    included (a slow upload is cut off too). The request's work is cancelled where it waits: a job
    queued for a worker is dropped, one running in a worker (``api.work``) finishes alone.
    """

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        timed_out = False

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if timed_out:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        with anyio.move_on_after(self.seconds) as limit:
            await self.app(scope, receive, guarded_send)
        if not limit.cancelled_caught:
            return
        timed_out = True
        log.warning("%s %s: no answer within %g s", scope.get("method"), scope.get("path"), self.seconds)
        if started:
            return  # half an answer went out: the server closes the connection
        message = f"the request took longer than the {self.seconds:g} s allowed"
        await send_error(send, 503, "request_timeout", message, [(b"retry-after", b"1")])
