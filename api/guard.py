"""The write guard: who may save a corrected photo (``POST /api/v1/examples``, written by
``datasets.corrections``) or write a set (``/api/v1/sets``), and the limits on guessing (``Guesses``: wrong
tokens, wrong table codes, tables made), counted by the client's own address (``client_key``).

Checked in this order, each refusal a 4xx naming the setting to change:

1. ``SMJ_SAVE_EXAMPLES=off``: 403 ``saving_disabled``.
2. A request another site's page made the browser send: an ``Origin`` other than the server's own (or one
   of ``SMJ_ALLOWED_ORIGINS``), or ``Sec-Fetch-Site: cross-site`` without one: 403 ``cross_site_request``.
   A plain HTML form on any site can post multipart to the server without it (no preflight), so this is
   what keeps a visitor's browser from saving for that site.
3. ``SMJ_EXAMPLES_TOKEN`` set: the form field ``token`` or the header ``X-SMJ-Token`` must match:
   401 ``token_required`` when none is given, ``wrong_token`` when another is; after 10 wrong tokens in a
   minute from one address, 429 ``too_many_guesses``.
4. Else, under ``auto`` (the default): the request must have reached a loopback address by a loopback
   name (``localhost``, ``127.0.0.1``, ``[::1]``; a page on another name that resolves here, DNS
   rebinding, does not pass) and carry no forwarding header (``Forwarded``, ``X-Forwarded-For``, ...: a
   reverse proxy on this machine makes every request look local): 403 ``saving_disabled``. A local
   ``smj serve`` saves; one bound to another address, or behind a proxy, does not, unless
   ``SMJ_SAVE_EXAMPLES=on`` or a token is set.
"""

from __future__ import annotations

import ipaddress
import secrets
import threading
import time
from collections import defaultdict, deque
from urllib.parse import urlsplit

from fastapi import Request

from api.errors import ApiError
from api.settings import Settings

TOKEN_HEADER = "x-smj-token"
# a proxy in front says whom it forwards for: such a request is from elsewhere, however local its peer
FORWARDING_HEADERS = ("forwarded", "x-forwarded-for", "x-forwarded-host", "x-real-ip")
_LOOPBACK_NAMES = {"localhost", "localhost."}


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_name(host_header: str) -> str:
    """The name of a ``Host`` header (``[::1]:8000`` -> ``::1``)."""
    return urlsplit(f"//{host_header}").hostname or ""


class Guesses:
    """What a client did lately that counts against it (a wrong token, a wrong table code, a table made):
    past ``limit`` within ``window_s`` seconds, its next tries are refused (429 ``code``, the message saying
    ``what`` and when to try again) until the oldest falls out of the window. Keyed on the client's own
    address (``client_key``). Per process, in memory: a guesser against several workers still meets the
    limit in each."""

    def __init__(
        self,
        limit: int = 10,
        window_s: float = 60.0,
        what: str = "wrong tokens",
        code: str = "too_many_guesses",
    ) -> None:
        self.limit, self.window_s, self.what, self.code = limit, window_s, what, code
        self._failures: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._failures[client]
        while times and now - times[0] > self.window_s:
            times.popleft()
        return times

    def check(self, client: str) -> None:
        with self._lock:
            times = self._recent(client, time.monotonic())
            if len(times) >= self.limit:
                wait = int(self.window_s - (time.monotonic() - times[0])) + 1
                raise ApiError(
                    429,
                    self.code,
                    f"too many {self.what} from this address: try again in {wait} s",
                    headers={"Retry-After": str(wait)},
                )
            if not times:
                self._failures.pop(client, None)  # no memory kept of clients who stopped guessing

    def count(self, client: str) -> None:
        """One more against ``client`` (a wrong token or code, a table made)."""
        with self._lock:
            self._recent(client, time.monotonic()).append(time.monotonic())


def client_key(request: Request) -> str:
    """The address a limit counts against: the peer that connected (behind a proxy named in
    ``SMJ_TRUSTED_PROXIES``, the client it forwarded for; uvicorn sets it so, ``api.server``)."""
    return (request.client.host if request.client else "") or "?"


guesses = Guesses()


def check_may_write(
    request: Request, settings: Settings, token: str | None, what: str = "saving examples"
) -> None:
    """Raises ``ApiError`` (403 / 401 / 429) unless this request may save an example or write a set (see
    the module doc); ``what`` names the write in the messages."""
    if settings.save_examples == "off":
        raise ApiError(
            403, "saving_disabled", "saving examples is off on this server (SMJ_SAVE_EXAMPLES=off)"
        )
    host_header = request.headers.get("host", "")
    origin = request.headers.get("origin")
    if origin is not None:
        own = f"{request.url.scheme}://{host_header}"
        if origin != own and origin not in settings.allowed_origins:
            raise ApiError(403, "cross_site_request", "examples are saved only from this server's own page")
    elif request.headers.get("sec-fetch-site") == "cross-site":
        raise ApiError(403, "cross_site_request", "examples are saved only from this server's own page")
    expected = settings.examples_token
    if expected is not None:
        client = client_key(request)
        guesses.check(client)
        given = token or request.headers.get(TOKEN_HEADER) or ""
        if not given:
            raise ApiError(
                401, "token_required", f"{what} needs this server's token (SMJ_EXAMPLES_TOKEN): enter it"
            )
        if not secrets.compare_digest(given.encode(), expected.get_secret_value().encode()):
            guesses.count(client)
            raise ApiError(
                401, "wrong_token", f"{what}: that is not this server's token (SMJ_EXAMPLES_TOKEN)"
            )
        return
    if settings.save_examples == "on":
        return
    if any(name in request.headers for name in FORWARDING_HEADERS):
        raise ApiError(
            403,
            "saving_disabled",
            "a request forwarded by a proxy is not from this machine: behind a proxy, set SMJ_EXAMPLES_TOKEN "
            "(or SMJ_SAVE_EXAMPLES=on)",
        )
    server = request.scope.get("server") or ("", 0)
    if not (is_loopback(str(server[0])) and is_loopback(_host_name(host_header))):
        raise ApiError(
            403,
            "saving_disabled",
            "this server saves examples only for requests from its own machine: set SMJ_SAVE_EXAMPLES=on "
            "or SMJ_EXAMPLES_TOKEN to save from elsewhere",
        )
