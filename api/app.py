"""``create_app()``: the FastAPI service and its page.

    smj serve                                   # or: uvicorn --factory api.app:create_app --no-proxy-headers

(uvicorn alone reads ``X-Forwarded-For`` from local peers, so a client on this machine could name any
address and escape the limits that count by address; ``smj serve`` reads it only from
``SMJ_TRUSTED_PROXIES``.)

The detector is loaded once, in the lifespan, from ``SMJ_WEIGHTS``; when that fails the service still
starts, ``/healthz`` says ``model_loaded: false`` and photo endpoints answer 503. Everything else
(settings, error shape, upload and time limits, the bounded worker pools) is in ``api.settings``,
``api.errors``, ``api.deps`` and ``api.work``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

from api import memory
from api.errors import MULTIPART_ALLOWANCE, install_error_handlers
from api.middleware import BodySizeLimit, JsonTextCheck, RequestTimeLimit, SecurityHeaders
from api.routes import examples, hands, health, live, page, photos, sets, settle, tables
from api.routes.page import STATIC_DIR, SWAGGER_DIR, SWAGGER_URL
from api.server import quiet_floods
from api.settings import Settings, get_settings
from api.work import Workers
from datasets.corrections import remove_leftovers
from store import StoreError, open_store
from vision.reading import Reader

log = logging.getLogger("api")

DetectorLoader = Callable[[Settings], Reader]


def load_detector(settings: Settings) -> Reader:
    """The real detector (ONNX Runtime or ultralytics); raises ``vision.detect.detector.ModelError``."""
    from vision.detect.detector import Detector

    return Detector(settings.weights, classifier=settings.classifier, threads=settings.model_threads or None)


_FOLDERS = re.compile(r"(?<![\w.~])(?:[A-Za-z]:)?(?:[\\/][^\s\\/:'\"]+)*[\\/]([^\s\\/:'\"]+)")


def without_folders(text: str) -> str:
    """``text`` with every absolute path cut to its file name (``/srv/m/tiles.onnx`` -> ``tiles.onnx``)."""
    return _FOLDERS.sub(r"\1", text)


def new_workers(settings: Settings) -> Workers:
    return Workers(settings.decode_workers, settings.model_workers, settings.hand_workers)


def create_app(settings: Settings | None = None, *, load_detector: DetectorLoader = load_detector) -> FastAPI:
    """The app. ``settings`` default to the environment's; ``load_detector`` runs in the lifespan."""
    explicit = settings is not None
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from vision.detect.detector import ModelError

        memory.tune_malloc()
        quiet_floods()  # in each worker process, after uvicorn has set its logging up
        app.state.workers.shutdown()  # the pools made with the app (no thread started yet) ...
        app.state.workers = new_workers(settings)  # ... give way to fresh ones each time it starts
        app.state.weights = settings.weights.name
        try:  # a save killed midway leaves a temporary file: gone before the first save counts the folder
            removed = remove_leftovers(settings.dataset_dir)
            if removed:
                log.info("removed %d temporary files a stopped save left", removed)
        except OSError as error:
            log.warning("could not clean the examples folder: %s", error)
        try:
            app.state.detector = load_detector(settings)
            app.state.model_error = None
        except Exception as error:
            known = isinstance(error, ModelError | OSError)
            if not known:
                log.exception("the detector failed to load")
            log.warning("starting without the detector: %s", error)
            app.state.detector = None
            # clients see file names, never the server's folders, and no text of an unexpected error
            app.state.model_error = (
                without_folders(str(error)) if known else "the detector failed to load (see the server's log)"
            )
        try:  # the store's schema upgraded here, at start-up, never inside a request
            await app.state.workers.hands(open_store, settings.database_url)
        except StoreError as error:
            log.warning("starting without the store (sets and tables answer 503): %s", error)
        yield
        app.state.workers.shutdown()
        app.state.detector = None

    app = FastAPI(
        title="smj: Sichuan mahjong scorer",
        version="1.0.0",
        description=(
            "Score a Sichuan (血战到底) mahjong hand from a phone photo or from text. Every error answers "
            '`{"error": {"code", "message", "details"}}` with a 4xx status (503 when the detector is not '
            "loaded); see the codes in api/errors.py."
        ),
        lifespan=lifespan,
        docs_url=None,  # FastAPI's Swagger UI loads its scripts from a CDN: page.py's /docs serves them here
        redoc_url=None,
    )
    app.state.detector = None
    app.state.model_error = "the service is starting"
    app.state.workers = new_workers(settings)
    app.state.table_limits = tables.limits()  # each app its own (per process, in memory)
    app.state.live = live.live_sessions(settings)  # so are its live phones
    if explicit:
        app.dependency_overrides[get_settings] = lambda: settings
    install_error_handlers(app)
    for module in (health, photos, live, hands, settle, examples, sets, tables, page):
        app.include_router(module.router)
    app.mount(SWAGGER_URL, StaticFiles(directory=SWAGGER_DIR), name="swagger")
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    if settings.allowed_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.allowed_origins,
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
            allow_headers=["*"],
        )
    app.add_middleware(JsonTextCheck)  # inside the size limit: it reads a JSON body whole
    app.add_middleware(
        BodySizeLimit,
        max_bytes=settings.max_upload_bytes + MULTIPART_ALLOWANCE,
        allowed_upload=settings.max_upload_bytes,
        max_json_bytes=settings.max_json_bytes,
    )
    app.add_middleware(RequestTimeLimit, seconds=settings.request_timeout_s)  # the whole request
    app.add_middleware(SecurityHeaders)  # outermost: on every answer, a timed-out one's too
    return app
