"""The HTTP server's own edges, below the app: connections that send nothing are closed (after a deadline, or
the oldest first when the connections reach their cap), a request HTTP cannot parse is answered in the API's
JSON error shape, the number of connections is capped below the file descriptor limit, and an error repeated
many times a second (the accept loop when the process is out of file descriptors) is logged once per interval.

``smj serve`` runs uvicorn with ``GuardedH11Protocol`` as its HTTP protocol and ``server_options()``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import time
from collections.abc import Sequence

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from api.errors import error_body
from api.settings import get_settings

KEEP_ALIVE_S = 5  # an idle keep-alive connection is closed after this (uvicorn's timeout_keep_alive)
SPARE_FILES = 64  # file descriptors left for the store, the models and the logs when capping connections
MAX_CONNECTIONS = 1000
LOG_INTERVAL_S = 10.0  # one message repeated within this is logged once, with a count when next logged


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with a deadline on every request head: a connection that opens and sends
    nothing, or sends its headers a byte at a time, is closed ``SMJ_HEAD_TIMEOUT_S`` (10 s) after it opened
    (or after its last response), so idle sockets cannot use up the process's file descriptors. A request
    HTTP cannot parse is answered 400 in the API's JSON shape."""

    _head_timer: asyncio.TimerHandle | None = None
    _opened = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._opened = time.monotonic()
        self._arm_head_timer()
        if self.limit_concurrency is not None and len(self.connections) >= self.limit_concurrency:
            self._evict_idle()

    def _evict_idle(self) -> None:
        """At the connection cap, close the connections waiting for a request head longest (the oldest
        first) until a tenth of the cap is free: a flood of idle sockets then never keeps a request out, nor
        runs the process out of file descriptors."""
        waiting = sorted(
            (
                c
                for c in self.connections
                if isinstance(c, GuardedH11Protocol) and c is not self and c._idle()
            ),
            key=lambda c: c._opened,
        )
        assert self.limit_concurrency is not None
        excess = len(self.connections) - int(self.limit_concurrency * 0.9)
        for connection in waiting[: max(0, excess)]:
            connection.transport.close()

    def _idle(self) -> bool:
        return self.conn.their_state is h11.IDLE and not self.transport.is_closing()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # a whole head arrived: the app's own limits apply now
            self._cancel_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_head_timer()  # the next request's head has the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        body = json.dumps(
            error_body("bad_http_request", f"{msg.rstrip('.')}: not an HTTP/1.1 request")
        ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        try:
            for event in (
                h11.Response(status_code=400, headers=headers),
                h11.Data(data=body),
                h11.EndOfMessage(),
            ):
                self.transport.write(self.conn.send(event))
        except h11.LocalProtocolError:  # the parser already failed past the point of answering
            pass
        self.transport.close()

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(get_settings().head_timeout_s, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._idle():
            self.transport.close()


def connection_cap() -> int:
    """How many connections one process serves at once: its file descriptor limit less ``SPARE_FILES``,
    at most ``MAX_CONNECTIONS``; beyond it uvicorn answers 503."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft - SPARE_FILES))


class OncePerInterval(logging.Filter):
    """Lets a message through once per ``interval`` seconds; the next one that passes says how many of it
    were held back. Keyed by the message's template, so a flood of the same error is a line a while."""

    def __init__(self, interval: float = LOG_INTERVAL_S) -> None:
        super().__init__()
        self.interval = interval
        self._last: dict[str, tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = f"{record.name}:{record.msg}"
        now = time.monotonic()
        last, held = self._last.get(key, (-float("inf"), 0))
        if now - last < self.interval:
            self._last[key] = (last, held + 1)
            return False
        self._last[key] = (now, 0)
        if held:
            record.msg = f"{record.msg} (and {held} more like it in the last {self.interval:g} s)"
        return True


def quiet_floods() -> None:
    """Install ``OncePerInterval`` on the loggers a flood comes through: asyncio's (the accept loop) and
    uvicorn's."""
    for name in ("asyncio", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, OncePerInterval) for f in logger.filters):
            logger.addFilter(OncePerInterval())


def server_options(trusted_proxies: Sequence[str] = ()) -> dict[str, object]:
    """The uvicorn settings of ``smj serve`` besides host, port and workers. ``X-Forwarded-For`` is read only
    from ``trusted_proxies`` (``SMJ_TRUSTED_PROXIES``): otherwise the client is the peer that connected, so
    a header a client writes itself changes no address a limit counts against."""
    return {
        "http": GuardedH11Protocol,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "limit_concurrency": connection_cap(),
        "proxy_headers": bool(trusted_proxies),
        "forwarded_allow_ips": ",".join(trusted_proxies) if trusted_proxies else None,
    }
