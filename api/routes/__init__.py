"""The routes, one module per concern; each is thin: parse (dependencies, schemas), call, return JSON.

``health`` (``/healthz``), ``photos`` (recognize, score-photo), ``hands`` (score, waits, group, presets,
conditions, tiles), ``settle`` (a round's payments), ``examples`` (saving corrected photos), ``sets`` (the
sets on the table, taught from photos and corrections), ``tables`` (a night's rounds and money), ``live`` (a
phone's camera read frame by frame), ``page`` (``/`` and its static files).
"""

from __future__ import annotations

from typing import Any

from api.schemas import ErrorResponse

API_PREFIX = "/api/v1"

_DESCRIPTIONS = {
    401: "the server's token is required (SMJ_EXAMPLES_TOKEN)",
    403: "not allowed here: saving is off, the request came from another site's page, or a wrong table code",
    404: "no such set (or example of it) in the store, or no such live session",
    409: "a conflict: a set of that name exists, a round still in play or over, or a write on a stale "
    "version of a round (its details hold the table as it is now)",
    413: "the upload is too large (bytes or pixels)",
    429: "too many wrong tokens or table codes from this address lately, too many live phones, or a live "
    "frame dropped (the phone's last one still read, or the server busy)",
    415: "the upload is not an image",
    422: "the request is malformed: invalid fields, tiles, preset, or an impossible hand",
    503: "the detector weights are not loaded, or the store can't be opened",
    507: "the examples folder is full (SMJ_MAX_EXAMPLES, SMJ_MAX_EXAMPLES_BYTES)",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` documenting the error shape for these statuses."""
    return {status: {"model": ErrorResponse, "description": _DESCRIPTIONS[status]} for status in statuses}
