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
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process in MB (Linux /proc); None where unavailable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _photo(path: str | None) -> tuple[str, bytes]:
    if path:
        return Path(path).name, Path(path).read_bytes()
    examples = sorted((ROOT / "examples").glob("*.jpg"))
    if examples:
        return examples[0].name, examples[0].read_bytes()
    from api.fakes import fake_photo

    return "drawn.jpg", fake_photo()


def start_server(fake: bool, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
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

    def one(_: int) -> tuple[float | None, str | None]:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(base_url=base, timeout=120)
        start = time.perf_counter()
        try:
            response = send(client)
        except httpx.HTTPError as error:
            return None, f"{type(error).__name__}: {error}"
        if response.status_code != expect:
            return None, f"{response.status_code}: {response.text[:200]}"
        return time.perf_counter() - start, None

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(one, range(count)))
    wall = time.perf_counter() - start
    return [t for t, _ in results if t is not None], [e for _, e in results if e is not None], wall


def photo_request(photo: tuple[str, bytes]) -> Callable[[httpx.Client], httpx.Response]:
    name, data = photo
    return lambda client: client.post("/api/v1/score-photo", files={"image": (name, data, "image/jpeg")})


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


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
    args = parser.parse_args(argv)
    if args.requests < 1 or args.concurrency < 1:
        parser.error("--requests and --concurrency must be at least 1")

    sys.path.insert(0, str(ROOT))
    photo = _photo(args.photo)
    server, base = launch_server(args.fake)
    try:
        try:
            health = wait_ready(base, server, args.startup_timeout)
        except RuntimeError as error:
            print(f"bench_api: {error}", file=sys.stderr)
            return 2
        if not health.get("model_loaded"):
            print(
                f"bench_api: the model is not loaded ({health.get('model_error')}); use --fake",
                file=sys.stderr,
            )
            return 2
        _, warm_errors, _ = load(base, photo_request(photo), args.warmup, args.concurrency)
        before = rss_mb(server.pid)
        sampler = Sampler(server.pid)
        sampler.start()
        start = time.perf_counter()
        latencies, errors, _ = load(base, photo_request(photo), args.requests, args.concurrency)
        wall = time.perf_counter() - start
        sampler.done.set()
        sampler.join()
        after = rss_mb(server.pid)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()

    errors = warm_errors + errors
    model = "fake detector" if args.fake else f"model {health.get('weights')}"
    print(f"bench_api: {args.requests} POST /api/v1/score-photo, {args.concurrency} clients, {model}")
    print(f"  photo: {photo[0]} ({len(photo[1]) / 1024:.0f} KiB)")
    print(f"  errors: {len(errors)}")
    for failure in errors[:5]:
        print(f"    {failure}")
    if latencies:
        print(
            f"  latency: p50 {percentile(latencies, 50) * 1000:.1f} ms, "
            f"p95 {percentile(latencies, 95) * 1000:.1f} ms, "
            f"max {max(latencies) * 1000:.1f} ms, mean {statistics.fmean(latencies) * 1000:.1f} ms"
        )
    print(f"  throughput: {len(latencies) / wall:.1f} requests/s over {wall:.2f} s")
    growth = None
    if before is not None and after is not None:
        growth = after - before
        print(
            f"  server RSS: {before:.1f} MB after warm-up, peak {sampler.peak:.1f} MB, "
            f"{after:.1f} MB at the end "
            f"({growth:+.1f} MB)"
        )
    else:
        print("  server RSS: not available on this system")
    if errors:
        return 1
    if growth is not None and growth > args.max_growth_mb:
        print(f"bench_api: memory grew by {growth:.1f} MB (> {args.max_growth_mb} MB)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
