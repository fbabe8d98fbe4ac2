"""``smj serve [--host 127.0.0.1] [--port 8000] [--workers 1]``: the web API and page.

uvicorn serves it with the edges of ``api.server``: a request head must arrive within 10 s, idle keep-alive
connections close after 5 s, connections are capped below the file descriptor limit, and a request HTTP
cannot parse is answered 400 in the API's JSON shape.

Top-level imports stay light (this module is imported for every ``smj`` command); uvicorn and the app
load when ``serve`` runs. Settings come from the environment (``SMJ_WEIGHTS``, ... see api/settings.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping


def register(subparsers: argparse._SubParsersAction) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="serve the web API and the phone page",
        description="Serve the API (/api/v1, schema at /openapi.json) and the page (/). Settings come from "
        "SMJ_* environment variables: SMJ_WEIGHTS, SMJ_CONF, SMJ_MAX_UPLOAD_BYTES, SMJ_MAX_PIXELS, "
        "SMJ_MAX_DECODE_BYTES, SMJ_DECODE_WORKERS, SMJ_MODEL_WORKERS, SMJ_HAND_WORKERS, SMJ_MODEL_THREADS, "
        "SMJ_REQUEST_TIMEOUT_S, SMJ_HEAD_TIMEOUT_S, SMJ_DATASET_DIR, SMJ_SAVE_EXAMPLES, SMJ_EXAMPLES_TOKEN, "
        "SMJ_MAX_EXAMPLES, "
        "SMJ_MAX_EXAMPLES_BYTES, SMJ_DATABASE_URL (the store of sets and tables), SMJ_ALLOWED_ORIGINS "
        "(api/settings.py).",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes, each loads the model (default 1); the cores' model threads are divided "
        "among them (SMJ_MODEL_THREADS, unless set)",
    )
    serve.set_defaults(func=run_serve)


def worker_environment(workers: int, environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with ``SMJ_MODEL_THREADS`` for each of ``workers`` processes: the manifest's threads
    divided among them (``Runtime.per_worker``) on the cores this process may use. Left as it is for one
    worker, when the operator set it, or when the manifest's settings are unusable (the worker's loading
    says why)."""
    if workers == 1 or environ.get("SMJ_MODEL_THREADS"):
        return dict(environ)
    from api.settings import get_settings
    from vision.detect.onnx_model import Runtime

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        runtime = Runtime.beside(get_settings().weights)
    except ValueError:
        return dict(environ)
    return {**environ, "SMJ_MODEL_THREADS": str(runtime.per_worker(workers, cores))}


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    if args.workers < 1:
        print("smj serve: --workers must be at least 1", file=sys.stderr)
        return 2
    from api.server import server_options
    from api.settings import get_settings

    environ = worker_environment(args.workers, os.environ)
    if environ != os.environ:  # the workers, started afresh, read their settings from this environment
        os.environ.update(environ)
        threads = environ["SMJ_MODEL_THREADS"]
        print(f"smj serve: {args.workers} workers, each model call on {threads} thread(s)", file=sys.stderr)

    # the store's schema upgraded once, here, before any worker starts (they would race to do it)
    from store import StoreError, open_store

    try:
        open_store(get_settings().database_url)
    except StoreError as error:
        print(f"smj serve: the store can't be opened, sets and tables answer 503: {error}", file=sys.stderr)
    # on SIGTERM, requests in flight get their time limit to finish, then the server stops regardless
    grace = int(get_settings().request_timeout_s) + 1
    uvicorn.run(
        "api.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        timeout_graceful_shutdown=grace,
        **server_options(get_settings().trusted_proxies),  # type: ignore[arg-type]
    )
    return 0
