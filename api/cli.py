"""``smj serve [--host 127.0.0.1] [--port 8000] [--workers 1] [--tls]``: the web API and page.

``--tls`` serves https with a self-signed certificate made once (``api.tls``), so that a phone on the local
network may open its camera for the live mode; its fingerprint is printed.

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
    serve.add_argument(
        "--tls",
        action="store_true",
        help="serve https with a self-signed certificate made once and kept in the user's data folder "
        "(a phone's browser opens its camera only on a secure page); its fingerprint is printed",
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
    tls: dict[str, str] = {}
    if args.tls:
        tls = secure(args.host, args.port)
    # on SIGTERM, requests in flight get their time limit to finish, then the server stops regardless
    grace = int(get_settings().request_timeout_s) + 1
    uvicorn.run(
        "api.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        timeout_graceful_shutdown=grace,
        **tls,  # type: ignore[arg-type]
        **server_options(get_settings().trusted_proxies),  # type: ignore[arg-type]
    )
    return 0


def secure(host: str, port: int) -> dict[str, str]:
    """uvicorn's https settings with this machine's certificate (``api.tls``), made if need be, and where a
    phone reaches the page, printed with the certificate's fingerprint."""
    from api.tls import certificate, local_names
    from store.database import user_data_dir

    names = local_names()
    made = certificate(user_data_dir() / "tls", names)
    addresses = (
        [n for n in names if n[0].isdigit() and n != "127.0.0.1"] if host in ("0.0.0.0", "::") else [host]
    )
    for address in addresses or ["localhost"]:
        print(
            f"smj serve: https://{address}:{port}/ (a phone: the same Wi-Fi, then ?live=1)", file=sys.stderr
        )
    print(
        f"smj serve: self-signed certificate {made.cert}; a phone asks once whether to trust it: "
        f"its SHA-256 fingerprint is {made.fingerprint}",
        file=sys.stderr,
    )
    return {"ssl_certfile": str(made.cert), "ssl_keyfile": str(made.key)}
