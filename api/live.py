"""The live phones this serving process follows (``usecases.live.LiveReading`` each), bounded.

- At most ``SMJ_LIVE_PHONES`` sessions at once: one more is a 429 ``live_full`` (``Retry-After``).
- A session unused for ``SMJ_LIVE_IDLE_S`` is forgotten (a later frame of it is a 404 ``no_live_session``).
- One frame of a session in flight at a time, and none sooner than ``SMJ_LIVE_FRAME_INTERVAL_S`` after the
  last began; across sessions no more frames in flight than the model workers: a frame past any of these
  is dropped at once (429 ``frame_dropped``), never queued. A phone sends its next frame when the last is
  answered, so it reads at the rate the server keeps up with.
- A frame is read and dropped: nothing of it is kept but the votes of its tiles.

Session ids are 128 random bits (``secrets.token_urlsafe``). Like the tables' limiters, the sessions live in
one process: with several workers, a phone's frames must reach the worker that opened its session (one
worker, or a proxy keeping a client on one).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from api.errors import ApiError
from usecases.live import LiveReading

RETRY_S = 1  # Retry-After of a refused session or a dropped frame


@dataclass
class LiveSession:
    reading: LiveReading
    used: float  # when it was last used (the clock's seconds)
    began: float = float("-inf")  # when its last frame began
    busy: bool = False


@dataclass
class LiveSessions:
    """Every live session of this process; ``phones``: how many at once, ``idle_s``: how long one lasts
    unused, ``interval_s``: the least time between a session's frames, ``in_flight``: frames read at once
    across sessions."""

    phones: int
    idle_s: float
    interval_s: float
    in_flight: int
    clock: Callable[[], float] = time.monotonic
    _sessions: dict[str, LiveSession] = field(default_factory=dict)
    _reading: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def open(self, reading: LiveReading) -> str:
        """A new session's id; 429 ``live_full`` when ``phones`` are live."""
        with self._lock:
            self._sweep()
            if len(self._sessions) >= self.phones:
                raise ApiError(
                    429,
                    "live_full",
                    f"{self.phones} phones are reading live on this server: try again when one stops",
                    headers={"Retry-After": str(RETRY_S)},
                )
            key = secrets.token_urlsafe(16)
            self._sessions[key] = LiveSession(reading, self.clock())
            return key

    def close(self, key: str) -> None:
        """Forget a session (404 when there is none of that id)."""
        with self._lock:
            self._sweep()
            if self._sessions.pop(key, None) is None:
                raise _unknown()

    def __len__(self) -> int:
        with self._lock:
            self._sweep()
            return len(self._sessions)

    @contextmanager
    def frame(self, key: str) -> Iterator[LiveReading]:
        """The session's reading, for one frame; the frame dropped (429 ``frame_dropped``) when the session
        has one in flight, began one less than ``interval_s`` ago, or ``in_flight`` frames are being read."""
        with self._lock:
            self._sweep()
            session = self._sessions.get(key)
            if session is None:
                raise _unknown()
            now = self.clock()
            session.used = now
            if session.busy:
                raise frame_dropped("this phone's last frame is still being read")
            if now - session.began < self.interval_s:
                raise frame_dropped(f"frames come faster than one every {self.interval_s:g} s")
            if self._reading >= self.in_flight:
                raise frame_dropped("the server is reading other frames")
            session.busy, session.began = True, now
            self._reading += 1
        try:
            yield session.reading
        finally:
            with self._lock:
                session.busy = False
                session.used = self.clock()
                self._reading -= 1

    def _sweep(self) -> None:
        now = self.clock()
        for key in [k for k, s in self._sessions.items() if not s.busy and now - s.used > self.idle_s]:
            del self._sessions[key]


def _unknown() -> ApiError:
    return ApiError(
        404, "no_live_session", "no such live session: it ended, or was idle too long; start again"
    )


def frame_dropped(why: str) -> ApiError:
    return ApiError(429, "frame_dropped", f"frame dropped: {why}", headers={"Retry-After": str(RETRY_S)})
