"""The server's own edges (``api.server``): a flood of one log message is a line a while, and the connection
cap stays under the file descriptor limit."""

from __future__ import annotations

import logging
import resource

import pytest

from api import server


def _record(message: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, args, None)


def test_a_message_repeated_within_the_interval_is_let_through_once_then_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(server.time, "monotonic", lambda: clock[0])
    once = server.OncePerInterval(interval=10)
    accept = "socket.accept() out of system resource"
    assert once.filter(_record(accept))
    assert [once.filter(_record(accept)) for _ in range(500)] == [False] * 500
    assert once.filter(_record("another message"))  # each message has its own interval
    clock[0] += 10.5
    later = _record(accept)
    assert once.filter(later) and "500 more like it in the last 10 s" in later.getMessage()
    assert not once.filter(_record(accept))


def test_messages_of_one_template_with_different_values_count_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server.time, "monotonic", lambda: 5.0)
    once = server.OncePerInterval()
    assert once.filter(_record("Too many open files: %s", 1))
    assert not once.filter(_record("Too many open files: %s", 2))


def test_the_filter_is_installed_once_on_the_flooding_loggers() -> None:
    server.quiet_floods()
    server.quiet_floods()
    for name in ("asyncio", "uvicorn.error"):
        assert sum(isinstance(f, server.OncePerInterval) for f in logging.getLogger(name).filters) == 1


def test_connections_are_capped_below_the_file_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resource, "getrlimit", lambda _: (256, 4096))
    assert server.connection_cap() == 256 - server.SPARE_FILES
    monkeypatch.setattr(resource, "getrlimit", lambda _: (1_048_576, 1_048_576))
    assert server.connection_cap() == server.MAX_CONNECTIONS
    options = server.server_options()
    assert (
        options["http"] is server.GuardedH11Protocol and options["timeout_keep_alive"] == server.KEEP_ALIVE_S
    )
    # a client's own X-Forwarded-For is read only from proxies the operator names (SMJ_TRUSTED_PROXIES)
    assert options["proxy_headers"] is False and options["forwarded_allow_ips"] is None
    behind = server.server_options(["10.0.0.5", "10.0.0.6"])
    assert behind["proxy_headers"] is True and behind["forwarded_allow_ips"] == "10.0.0.5,10.0.0.6"
