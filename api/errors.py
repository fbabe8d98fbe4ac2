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
``saving_disabled``         403     ``/examples`` where saving is off (``SMJ_SAVE_EXAMPLES``: api.guard)
``cross_site_request``      403     ``/examples`` sent by another site's page (its ``Origin``)
``token_required``          401     ``/examples`` or a set's write without ``SMJ_EXAMPLES_TOKEN`` (one is set)
``wrong_token``             401     ... with a token other than ``SMJ_EXAMPLES_TOKEN``
``too_many_guesses``        429     10 wrong tokens, or 10 wrong table codes, in a minute from one address
                                    (``api.guard.Guesses``; ``Retry-After`` says when to try again)
``too_many_tables``         429     30 tables made in an hour from one address
``live_full``               429     ``/live``: ``SMJ_LIVE_PHONES`` phones reading live already (Retry-After)
``frame_dropped``           429     ``/live/{session}/frames``: the phone's last frame still read, frames
                                    faster than ``SMJ_LIVE_FRAME_INTERVAL_S``, or the server busy with others
``no_live_session``         404     a live session that ended or idled out (``SMJ_LIVE_IDLE_S``)
``frame_too_large``         413     a live frame past ``SMJ_LIVE_FRAME_BYTES`` or ``SMJ_LIVE_MAX_SIDE``
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

Every refusal is a ``scoring.errors.SmjError`` (each layer's: a tile that is no tile, a photo that is no
image, a stale write, ...) with its ``code``: one handler answers them all, its status by the one table
``STATUS`` (a 422 for any code not there). ``ApiError`` is the web layer's own, with its own status;
routes stay thin and let the library's refusals propagate.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException

from scoring.errors import SmjError

log = logging.getLogger("api")

MULTIPART_ALLOWANCE = 256 * 1024  # room for the form fields that travel with a photo


STATUS = {
    "not_an_image": 415,
    "too_many_pixels": 413,
    "no_such_table": 404,
    "no_such_round": 404,
    "no_event": 404,
    "no_such_set": 404,
    "no_such_example": 404,
    "wrong_code": 403,
    "code_expired": 403,
    "stale_write": 409,
    "round_in_play": 409,
    "round_over": 409,
    "round_started": 409,
    "set_exists": 409,
}
"""The one table from a refusal's code (``scoring.errors.SmjError.code``, any layer's) to its HTTP status;
every code not here is a 422."""


class ApiError(SmjError):
    """A refusal of the web layer itself, with its own ``status_code`` (and ``headers``: Retry-After with a
    429 or a 503)."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message, code)
        self.status_code = status_code
        self._details = details
        self.headers = headers or {}

    @property
    def details(self) -> list[dict[str, Any]] | None:
        return self._details


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


def refusal_response(error: SmjError) -> JSONResponse:
    """Any layer's refusal answered: its code, its status by the one table (the web's own carries its own
    status and headers)."""
    status = error.status_code if isinstance(error, ApiError) else STATUS.get(str(error.code), 422)
    response = error_response(status, str(error.code), error.told, error.details)
    response.headers.update(getattr(error, "headers", {}))
    return response


def install_error_handlers(app: FastAPI) -> None:
    """Map every exception to the one error shape."""

    @app.exception_handler(SmjError)
    async def _refused(_: Request, error: SmjError) -> JSONResponse:
        return refusal_response(error)

    @app.exception_handler(RequestValidationError)
    async def _request_validation(_: Request, error: RequestValidationError) -> JSONResponse:
        details = _validation_details(error.errors())
        return error_response(422, "invalid_request", _validation_message(details), details)

    @app.exception_handler(ValidationError)
    async def _model_validation(_: Request, error: ValidationError) -> JSONResponse:
        details = _validation_details(error.errors())
        return error_response(422, "invalid_request", _validation_message(details), details)

    @app.exception_handler(DBAPIError)
    async def _database(_: Request, error: DBAPIError) -> JSONResponse:
        # the database went away after start-up (a stopped server, a deleted file): a 503, not a traceback
        return refusal_response(store_unavailable(f"{type(error.orig).__name__}: {error.orig}"))

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


def _allowed_methods(request: Request, given: str) -> str:
    """Every method the API's paths matching the request's take (its OpenAPI schema's), else ``given``."""
    methods: set[str] = set()
    for template, operations in request.app.openapi().get("paths", {}).items():
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, request.url.path):
            methods |= {method.upper() for method in operations}
    return ", ".join(sorted(methods)) if methods else given
