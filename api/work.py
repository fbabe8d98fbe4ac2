"""Where the routes' CPU work runs: three bounded thread pools, never the event loop.

``decode`` (photos decoded, ``SMJ_DECODE_WORKERS`` at once: each takes up to ``SMJ_MAX_DECODE_BYTES``),
``model`` (detector and classifier runs, ``SMJ_MODEL_WORKERS``) and ``hands`` (scoring, waits, grouping
and settling JSON, ``SMJ_HAND_WORKERS``). A request waits for a free worker instead of starting one more
decode, so memory is bounded by the pools' sizes, not by the number of requests arriving; the event loop
stays free to answer ``/healthz`` and to time requests out (``api.middleware.RequestTimeLimit``): a request
that gives up waiting leaves the queue, and one cut off mid-run lets its worker finish alone.

When the last photo job of a burst ends, the heap's free pages go back to the system
(``api.memory.release_free_memory``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from api import memory

P = ParamSpec("P")
T = TypeVar("T")


class Workers:
    """The service's thread pools; ``await workers.decode(fn, *args)`` runs ``fn`` in one."""

    def __init__(self, decode: int = 2, model: int = 2, hands: int = 4) -> None:
        self._pools = {
            "decode": ThreadPoolExecutor(decode, thread_name_prefix="smj-decode"),
            "model": ThreadPoolExecutor(model, thread_name_prefix="smj-model"),
            "hands": ThreadPoolExecutor(hands, thread_name_prefix="smj-hands"),
        }
        self._photo_jobs = 0
        self._lock = threading.Lock()

    async def decode(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run("decode", True, fn, *args, **kwargs)

    async def model(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run("model", True, fn, *args, **kwargs)

    async def hands(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run("hands", False, fn, *args, **kwargs)

    async def _run(self, pool: str, photo: bool, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        def job() -> T:
            if not photo:
                return fn(*args, **kwargs)
            with self._lock:
                self._photo_jobs += 1
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self._photo_jobs -= 1
                    idle = self._photo_jobs == 0
                if idle:
                    memory.release_free_memory()

        # cancelling the await (a timed-out request) drops a job not yet started
        return await asyncio.wrap_future(self._pools[pool].submit(job))

    def shutdown(self) -> None:
        """Stop taking jobs and drop the queued ones; running ones finish on their own."""
        for pool in self._pools.values():
            pool.shutdown(wait=False, cancel_futures=True)
