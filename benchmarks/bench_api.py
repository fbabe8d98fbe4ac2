"""Load check of the web API: photo requests from concurrent clients against a server it starts on 127.0.0.1.

    python benchmarks/bench_api.py [--fake] [--requests 200] [--concurrency 8] [--photo PATH]

Starts ``uvicorn`` (the real app with the shipped model, or with ``--fake`` the app with
``api.fakes.FakeDetector``) on a free loopback port, sends ``--warmup`` requests, then ``--requests``
``POST /api/v1/score-photo`` from ``--concurrency`` clients. Prints the error count, p50/p95/max latency,
throughput, and the server's resident memory (RSS, from /proc) after the warm-up, at its peak and at the
end. Exit status 1 when a request failed or the RSS grew by more than ``--max-growth-mb``; 2 when the
server could not start (e.g. no model shipped yet: use ``--fake``).

The photo: ``--photo``, else the first ``examples/*.jpg``, else a drawn one (``api.fakes.fake_photo``).
Nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

from api.cli import worker_environment

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def tree_rss_mb(pid: int) -> tuple[float, ...]:
    """Resident memory (MB) of a process and of each of its descendants that serve (uvicorn's worker
    processes under its supervisor), the process first; empty where /proc is unavailable."""
    found: list[float] = []
    pending = [pid]
    while pending:
        current = pending.pop(0)
        rss = rss_mb(current)
        if rss is None:
            continue
        try:  # multiprocessing's resource tracker serves no request: not a worker
            tracker = b"resource_tracker" in Path(f"/proc/{current}/cmdline").read_bytes()
        except OSError:
            tracker = False
        if not tracker:
            found.append(rss)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            pass
    return tuple(found)


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process in MB (Linux /proc); None where unavailable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _import_from_this_checkout() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def _photo(path: str | None) -> tuple[str, bytes]:
    if path:
        return Path(path).name, Path(path).read_bytes()
    examples = sorted((ROOT / "examples").glob("*.jpg"))
    if examples:
        return examples[0].name, examples[0].read_bytes()
    from api.fakes import fake_photo

    return "drawn.jpg", fake_photo()


def start_server(fake: bool, port: int, env: dict[str, str], workers: int = 1) -> subprocess.Popen[bytes]:
    """uvicorn serving the app (``fake``: with the fake detector) with ``workers`` worker processes (more than
    one: each loads the models, a supervisor shares the port among them), as ``smj serve --workers``."""
    factory = "api.fakes:create_fake_app" if fake else "api.app:create_app"
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        factory,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    command += ["--log-level", "warning", "--no-access-log"]
    if workers > 1:
        command += ["--workers", str(workers)]
        env = worker_environment(workers, env)  # as smj serve --workers starts them
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)


def launch_server(
    fake: bool,
    extra_env: dict[str, str] | None = None,
    start: Callable[[bool, int, dict[str, str]], subprocess.Popen[bytes]] = start_server,
) -> tuple[subprocess.Popen[bytes], str]:
    """The service (or its fake) started by ``start`` on a free loopback port with this checkout's code;
    the process and its base URL."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return start(fake, port, {**env, **(extra_env or {})}), f"http://127.0.0.1:{port}"


def wait_ready(base: str, server: subprocess.Popen[bytes], timeout: float) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with status {server.returncode}")
        try:
            return dict(httpx.get(f"{base}/healthz", timeout=1).json())
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"the server did not answer within {timeout:.0f} s")


class Sampler(threading.Thread):
    """Samples a process's RSS every ``interval`` seconds; ``peak`` is the largest seen."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak = pid, interval, 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, rss_mb(self.pid) or 0.0)
            self.done.wait(self.interval)


def load(
    base: str, send: Callable[[httpx.Client], httpx.Response], count: int, clients: int, expect: int = 200
) -> tuple[list[float], list[str], float]:
    """``count`` requests made by ``send`` from ``clients`` threads (one HTTP client each): latencies (s)
    of the answers with status ``expect``, a description of every other answer, and the wall time."""
    local = threading.local()
    opened: list[httpx.Client] = []

    def one(_: int) -> tuple[float | None, str | None]:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(base_url=base, timeout=120)
            opened.append(client)
        start = time.perf_counter()
        try:
            response = send(client)
        except httpx.HTTPError as error:
            return None, f"{type(error).__name__}: {error}"
        if response.status_code != expect:
            return None, f"{response.status_code}: {response.text[:200]}"
        return time.perf_counter() - start, None

    start = time.perf_counter()
    try:
        with ThreadPoolExecutor(clients) as pool:
            results = list(pool.map(one, range(count)))
    finally:
        for client in opened:  # each thread's connections, closed with the run
            client.close()
    wall = time.perf_counter() - start
    return [t for t, _ in results if t is not None], [e for _, e in results if e is not None], wall


def photo_request(photo: tuple[str, bytes]) -> Callable[[httpx.Client], httpx.Response]:
    name, data = photo
    return lambda client: client.post("/api/v1/score-photo", files={"image": (name, data, "image/jpeg")})


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


@dataclass(frozen=True)
class ApiLoad:
    """One load run: what was sent, the answers that were not 200, the latencies (s) of those that were,
    the run's wall time (s) and the server's RSS (MB) after the warm-up, at the peak and at the end (None
    where /proc is unavailable)."""

    requests: int
    clients: int
    model: str  # "fake detector", or "model <weights>"
    photo: str
    photo_bytes: int
    errors: tuple[str, ...]  # the warm-up's first
    latencies: tuple[float, ...]
    wall: float
    rss_before: float | None
    rss_peak: float
    rss_after: float | None
    workers: int = 1
    worker_rss: tuple[float, ...] = ()  # MB of each worker process at the end (with --workers over 1)

    @property
    def throughput(self) -> float:
        """Answers of status 200 per second."""
        return len(self.latencies) / self.wall

    @property
    def growth(self) -> float | None:
        """MB the server's RSS grew by from the end of the warm-up to the end."""
        if self.rss_before is None or self.rss_after is None:
            return None
        return self.rss_after - self.rss_before


def measure(
    fake: bool,
    requests: int = 200,
    clients: int = 8,
    warmup: int = 64,
    photo: tuple[str, bytes] | None = None,
    startup_timeout: float = 60.0,
    workers: int = 1,
) -> ApiLoad:
    """Start the service (``fake``: with the fake detector), send ``warmup`` requests, then ``requests``
    ``POST /api/v1/score-photo`` of ``photo`` (default: the first example, else a drawn one) from
    ``clients`` clients, and stop it. Raises ``RuntimeError`` when the server does not start or its model
    is not loaded."""
    _import_from_this_checkout()
    name, data = photo if photo is not None else _photo(None)
    send = photo_request((name, data))

    def start(fake: bool, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
        return start_server(fake, port, env, workers)

    server, base = launch_server(fake, start=start)
    try:
        health = wait_ready(base, server, startup_timeout)
        if not health.get("model_loaded"):
            raise RuntimeError(f"the model is not loaded ({health.get('model_error')}); use --fake")
        _, warm_errors, _ = load(base, send, warmup, clients)
        before = rss_mb(server.pid)
        sampler = Sampler(server.pid)
        sampler.start()
        start = time.perf_counter()
        latencies, errors, _ = load(base, send, requests, clients)
        wall = time.perf_counter() - start
        sampler.done.set()
        sampler.join()
        after = rss_mb(server.pid)
        worker_rss = tree_rss_mb(server.pid)[1:] if workers > 1 else ()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    model = "fake detector" if fake else f"model {health.get('weights')}"
    return ApiLoad(
        requests,
        clients,
        model,
        name,
        len(data),
        (*warm_errors, *errors),
        tuple(latencies),
        wall,
        before,
        sampler.peak,
        after,
        workers,
        worker_rss,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--fake", action="store_true", help="serve with the fake detector instead of the shipped model"
    )
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=64, help="requests before the memory baseline")
    parser.add_argument("--photo", help="the photo to send (default: examples/*.jpg or a drawn one)")
    parser.add_argument(
        "--max-growth-mb", type=float, default=40.0, help="allowed RSS growth after the warm-up"
    )
    parser.add_argument("--startup-timeout", type=float, default=60.0)
    parser.add_argument(
        "--workers", type=int, default=1, help="worker processes behind the one port (as smj serve --workers)"
    )
    args = parser.parse_args(argv)
    if args.requests < 1 or args.concurrency < 1:
        parser.error("--requests and --concurrency must be at least 1")

    _import_from_this_checkout()
    try:
        run = measure(
            args.fake,
            args.requests,
            args.concurrency,
            args.warmup,
            _photo(args.photo),
            args.startup_timeout,
            args.workers,
        )
    except RuntimeError as error:
        print(f"bench_api: {error}", file=sys.stderr)
        return 2
    print(f"bench_api: {run.requests} POST /api/v1/score-photo, {run.clients} clients, {run.model}")
    print(f"  photo: {run.photo} ({run.photo_bytes / 1024:.0f} KiB)")
    print(f"  errors: {len(run.errors)}")
    for failure in run.errors[:5]:
        print(f"    {failure}")
    if run.latencies:
        print(
            f"  latency: p50 {percentile(run.latencies, 50) * 1000:.1f} ms, "
            f"p95 {percentile(run.latencies, 95) * 1000:.1f} ms, "
            f"max {max(run.latencies) * 1000:.1f} ms, mean {statistics.fmean(run.latencies) * 1000:.1f} ms"
        )
    print(f"  throughput: {run.throughput:.1f} requests/s over {run.wall:.2f} s")
    if run.growth is not None:
        print(
            f"  server RSS: {run.rss_before:.1f} MB after warm-up, peak {run.rss_peak:.1f} MB, "
            f"{run.rss_after:.1f} MB at the end "
            f"({run.growth:+.1f} MB)"
        )
    else:
        print("  server RSS: not available on this system")
    if run.worker_rss:
        print(
            f"  {run.workers} workers, RSS at the end: "
            + ", ".join(f"{rss:.1f} MB" for rss in run.worker_rss)
        )
    if run.errors:
        return 1
    if run.growth is not None and run.growth > args.max_growth_mb:
        print(f"bench_api: memory grew by {run.growth:.1f} MB (> {args.max_growth_mb} MB)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
