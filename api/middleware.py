"""The service's middlewares, pure ASGI, outermost first as ``api.app`` stacks them: every answer's security
headers (``SecurityHeaders``), a request's time limit (``RequestTimeLimit``), a body's size limit
(``BodySizeLimit``), and JSON text that is Unicode (``JsonTextCheck``). Their refusals answer in the one error
shape (``api.errors``)."""

from __future__ import annotations

import json
import logging
import re

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import error_body, upload_too_large_message

log = logging.getLogger("api")


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
