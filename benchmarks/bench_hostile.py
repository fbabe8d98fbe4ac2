"""Hostile requests and load against ``smj serve`` on loopback: the service stays up, memory stays flat.

    python benchmarks/bench_hostile.py [--fake] [--photos 200] [--photo-clients 8] [--hands 1000]
                                       [--hand-clients 16] [--after-s 60] [--cases NAME,...]

Starts ``python smj.py serve`` on a free 127.0.0.1 port (``--fake``: the app with
``api.fakes.FakeDetector``, for a machine without the shipped model), then:

1. Replays each hostile request of issue 29 (``CASES``: a fan of a billion, a 7000x7000 PNG, six of them
   at once, a decompression bomb, a 16-bit PNG, two files in one request, an example with a script
   after the JPEG's end, a cross-site form) and prints, per case, the status and error code answered
   against the expected ones, the time taken and the server's peak resident memory (RSS, /proc).
2. While the slowest case runs again, probes ``/healthz`` and prints its slowest answer (target: 100 ms).
3. ``--photos`` ``POST /api/v1/score-photo`` from ``--photo-clients`` clients, then ``--hands``
   ``POST /api/v1/score`` from ``--hand-clients``: errors, p50/p95 latency, throughput, and RSS before,
   at the peak and ``--after-s`` seconds after (target: after within 50 MB of before).

Exit status 1 when a case answers other than expected or a load request fails; 2 when the server does
not start. Timings and memory are reported, never judged here. Nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import io
import json
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_api import Sampler, launch_server, load, percentile, rss_mb, wait_ready  # noqa: E402

HAND = {"concealed": "123345m66999p", "melds": [{"type": "kong_exposed", "tile": "2p"}], "win_tile": "6p"}


# ---- hostile payloads


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def flat_png(side: int) -> bytes:
    """A ``side`` x ``side`` RGB PNG of one colour, compressed row by row (a 7000 px one is ~140 KB)."""
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    compressor = zlib.compressobj(9)
    row = b"\0" + b"\x40\x80\x40" * side
    parts = [compressor.compress(row) for _ in range(side)]
    data = b"".join(parts) + compressor.flush()
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", data) + _chunk(b"IEND", b"")


def bomb_png() -> bytes:
    """A PNG header of 40000 x 40000 one-bit pixels and hardly any data: Pillow refuses to decode it."""
    header = struct.pack(">IIBBBBB", 40_000, 40_000, 1, 0, 0, 0, 0)
    idat = zlib.compress(b"\0" * 64)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def sixteen_bit_png(photo: Path) -> bytes:
    """A real photo as a 16-bit grey PNG (Pillow's I;16)."""
    import numpy as np
    from PIL import Image

    grey = np.asarray(Image.open(photo).convert("L")).astype(np.uint16) * 257
    out = io.BytesIO()
    Image.fromarray(grey).save(out, "PNG")
    return out.getvalue()


def example_photo() -> tuple[str, bytes]:
    examples = sorted((ROOT / "examples").glob("*.jpg"))
    if examples:
        return examples[0].name, examples[0].read_bytes()
    from api.fakes import fake_photo

    return "drawn.jpg", fake_photo()


# ---- cases


@dataclass(frozen=True)
class Outcome:
    status: int | None  # None: no answer (a transport error)
    code: str | None
    seconds: float
    note: str = ""


@dataclass(frozen=True)
class Case:
    name: str
    expected: tuple[int, str | None]  # status, error code (None: a success without one)
    send: Callable[[httpx.Client], list[httpx.Response]]


def _settle(fan: int, base: int = 1) -> Callable[[httpx.Client], list[httpx.Response]]:
    round_ = {"events": [{"type": "win", "player": "A", "self_drawn": True, "fan": fan}]}
    body = {"preset": "qq_xuezhan", "round": round_, "base": base}
    return lambda client: [client.post("/api/v1/settle", json=body)]


def _photo(
    path: str, data: bytes, name: str = "photo.png", kind: str = "image/png", copies: int = 1
) -> Callable[[httpx.Client], list[httpx.Response]]:
    def send(client: httpx.Client) -> list[httpx.Response]:
        def one(_: int) -> httpx.Response:
            return client.post(path, files={"image": (name, data, kind)})

        if copies == 1:
            return [one(0)]
        with ThreadPoolExecutor(copies) as pool:
            return list(pool.map(one, range(copies)))

    return send


def _two_files(client: httpx.Client) -> list[httpx.Response]:
    name, data = example_photo()
    files = [("image", (name, data, "image/jpeg")), ("image", ("second.jpg", data, "image/jpeg"))]
    return [client.post("/api/v1/recognize", files=files)]


def _example_form() -> dict[str, str]:
    boxes = [{"tile": "m1", "box": [10, 10, 60, 80]}]
    return {"detections": json.dumps(boxes), "hand": json.dumps(HAND), "consent": "true"}


def _script_trailer(client: httpx.Client) -> list[httpx.Response]:
    name, data = example_photo()
    tainted = data + b"<script>alert(document.cookie)</script>" + b"\0" * 1_000_000
    return [
        client.post("/api/v1/examples", files={"image": (name, tainted, "image/jpeg")}, data=_example_form())
    ]


def _cross_site(client: httpx.Client) -> list[httpx.Response]:
    name, data = example_photo()
    headers = {"origin": "http://evil.example", "sec-fetch-site": "cross-site"}
    files = {"image": (name, data, "image/jpeg")}
    return [client.post("/api/v1/examples", files=files, data=_example_form(), headers=headers)]


def _impossible_example(client: httpx.Client) -> list[httpx.Response]:
    name, data = example_photo()
    form = {**_example_form(), "hand": json.dumps({"concealed": "11111m2345p678p99p"})}
    return [client.post("/api/v1/examples", files={"image": (name, data, "image/jpeg")}, data=form)]


def build_cases(big_side: int = 7000) -> list[Case]:
    """Every hostile request of issue 29, with the answer the service should give."""
    big = flat_png(big_side)
    return [
        Case("settle_fan_1e9", (422, "fan_too_large"), _settle(1_000_000_000)),
        Case("settle_fan_3e6", (422, "fan_too_large"), _settle(3_000_000)),
        Case("settle_fan_1e6", (422, "fan_too_large"), _settle(1_000_000)),
        Case("settle_amount_2e53", (422, "amount_too_large"), _settle(36, base=1_000_000)),
        Case("png_7000px", (413, "too_many_pixels"), _photo("/api/v1/recognize", big)),
        Case("six_png_7000px", (413, "too_many_pixels"), _photo("/api/v1/recognize", big, copies=6)),
        Case("decompression_bomb", (413, "too_many_pixels"), _photo("/api/v1/score-photo", bomb_png())),
        Case(
            "png_16_bit",
            (200, None),
            _photo("/api/v1/recognize", sixteen_bit_png(ROOT / "examples" / "hand.jpg")),
        ),
        Case("two_files", (422, "too_many_files"), _two_files),
        Case("example_script_trailer", (201, None), _script_trailer),
        Case("example_cross_site", (403, "cross_site_request"), _cross_site),
        Case("example_fifth_copy", (422, "too_many_copies"), _impossible_example),
    ]


def run_case(client: httpx.Client, case: Case, pid: int) -> tuple[list[Outcome], float]:
    """The outcome of each request the case sends, and the server's peak RSS (MB) meanwhile."""
    sampler = Sampler(pid, interval=0.02)
    sampler.start()
    start = time.perf_counter()
    try:
        responses = case.send(client)
        elapsed = time.perf_counter() - start
        outcomes = [Outcome(r.status_code, _code(r), elapsed) for r in responses]
    except httpx.HTTPError as error:
        outcomes = [Outcome(None, None, time.perf_counter() - start, f"{type(error).__name__}: {error}")]
    finally:
        sampler.done.set()
        sampler.join()
    return outcomes, sampler.peak


def _code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("code")) if isinstance(error, dict) else None


def healthz_while(base: str, case: Case) -> float:
    """The slowest ``/healthz`` answer (s) while ``case`` runs in another client."""
    done = threading.Event()

    def slow() -> None:
        with httpx.Client(base_url=base, timeout=120) as client:
            try:
                case.send(client)
            finally:
                done.set()

    worker = threading.Thread(target=slow, daemon=True)
    worker.start()
    slowest = 0.0
    with httpx.Client(base_url=base, timeout=10) as client:
        while not done.is_set():
            start = time.perf_counter()
            client.get("/healthz")
            slowest = max(slowest, time.perf_counter() - start)
            time.sleep(0.02)
    worker.join()
    return slowest


def _stored_scripts(data_dir: Path) -> list[Path]:
    """Saved files that carry the trailer case's script."""
    return [path for path in data_dir.rglob("*") if path.is_file() and b"<script>" in path.read_bytes()]


# ---- load


def load_report(
    label: str, latencies: Sequence[float], errors: Sequence[str], wall: float, count: int
) -> str:
    lines = [f"{label}: {count} requests, errors: {len(errors)}"]
    lines += [f"    {failure}" for failure in errors[:5]]
    if latencies:
        lines.append(
            f"  latency p50 {percentile(latencies, 50) * 1000:.1f} ms, "
            f"p95 {percentile(latencies, 95) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms; "
            f"throughput {count / wall:.1f} requests/s"
        )
    return "\n".join(lines)


# ---- the server


def start_server(fake: bool, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``smj serve`` (``--fake``: uvicorn with ``api.fakes:create_fake_app``) on 127.0.0.1:``port``."""
    if fake:
        command = [sys.executable, "-m", "uvicorn", "--factory", "api.fakes:create_fake_app"]
        command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log"]
    else:
        command = [sys.executable, "smj.py", "serve", "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_server(server: subprocess.Popen[bytes]) -> int | None:
    """SIGTERM, and the exit status (None when it had to be killed after 30 s)."""
    server.terminate()
    try:
        return server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fake", action="store_true", help="serve with the fake detector")
    parser.add_argument("--photos", type=int, default=200, help="photo requests of the load run")
    parser.add_argument("--photo-clients", type=int, default=8)
    parser.add_argument("--hands", type=int, default=1000, help="hand requests of the load run")
    parser.add_argument("--hand-clients", type=int, default=16)
    parser.add_argument("--after-s", type=float, default=60.0, help="seconds idle before the last RSS")
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--big-side", type=int, default=7000, help="side of the large PNG cases")
    parser.add_argument("--startup-timeout", type=float, default=120.0)
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    cases = build_cases(args.big_side)
    if args.cases:
        wanted = args.cases.split(",")
        unknown = sorted(set(wanted) - {case.name for case in cases})
        if unknown:
            parser.error(f"unknown cases {unknown}; known: {', '.join(case.name for case in cases)}")
        cases = [case for case in cases if case.name in wanted]
    with tempfile.TemporaryDirectory(prefix="bench_hostile_") as data_dir:
        return _run(args, cases, Path(data_dir))


def _run(args: argparse.Namespace, cases: Sequence[Case], data_dir: Path) -> int:
    # the saved example of the trailer case goes to data_dir, removed after
    server, base = launch_server(args.fake, {"SMJ_DATASET_DIR": str(data_dir)}, start_server)
    failures = 0
    try:
        try:
            health = wait_ready(base, server, args.startup_timeout)
        except RuntimeError as error:
            print(f"bench_hostile: {error}", file=sys.stderr)
            return 2
        model = "fake detector" if args.fake else f"model {health.get('weights')}"
        print(f"bench_hostile: {'uvicorn (fake)' if args.fake else 'smj serve'} on {base}, {model}")
        print(f"  server RSS at start: {rss_mb(server.pid) or 0:.0f} MB")
        print(f"  {'case':<24} {'expected':<26} {'answered':<26} {'seconds':>8} {'peak RSS':>9}")
        slowest: tuple[float, Case] | None = None
        with httpx.Client(base_url=base, timeout=120) as client:
            for case in cases:
                outcomes, peak = run_case(client, case, server.pid)
                for outcome in outcomes:
                    answered = (outcome.status, outcome.code)
                    ok = answered == case.expected
                    failures += 0 if ok else 1
                    expected = f"{case.expected[0]} {case.expected[1] or ''}".strip()
                    got = (
                        f"{outcome.status} {outcome.code or ''}".strip()
                        if outcome.status
                        else outcome.note[:26]
                    )
                    mark = "" if ok else "  UNEXPECTED"
                    print(
                        f"  {case.name:<24} {expected:<26} {got:<26} {outcome.seconds:>8.2f} "
                        f"{peak:>6.0f} MB{mark}"
                    )
                if case.name == "example_script_trailer" and _stored_scripts(data_dir):
                    failures += 1
                    print(f"  {case.name:<24} UNEXPECTED: the script after the JPEG's end was stored")
                took = max(outcome.seconds for outcome in outcomes)
                if slowest is None or took > slowest[0]:
                    slowest = (took, case)
        if slowest is not None:
            worst = healthz_while(base, slowest[1])
            print(
                f"  /healthz while {slowest[1].name} runs: slowest answer {worst * 1000:.0f} ms "
                "(target 100 ms)"
            )

        photo_name, photo = example_photo()
        before = rss_mb(server.pid) or 0.0
        sampler = Sampler(server.pid)
        sampler.start()
        if args.photos:
            latencies, errors, wall = load(
                base,
                lambda client: client.post(
                    "/api/v1/score-photo", files={"image": (photo_name, photo, "image/jpeg")}
                ),
                args.photos,
                args.photo_clients,
            )
            failures += len(errors)
            print(load_report(f"photos ({args.photo_clients} clients)", latencies, errors, wall, args.photos))
        if args.hands:
            latencies, errors, wall = load(
                base,
                lambda client: client.post("/api/v1/score", json={"hand": HAND}),
                args.hands,
                args.hand_clients,
            )
            failures += len(errors)
            print(load_report(f"hands ({args.hand_clients} clients)", latencies, errors, wall, args.hands))
        sampler.done.set()
        sampler.join()
        time.sleep(max(args.after_s, 0.0))
        after = rss_mb(server.pid) or 0.0
        print(
            f"  server RSS: before {before:.0f} MB, peak {max(sampler.peak, before):.0f} MB, "
            f"{args.after_s:g} s after {after:.0f} MB (target: within 50 MB of before)"
        )
    finally:
        status = stop_server(server)
        print(f"  SIGTERM: {'stopped, status ' + str(status) if status is not None else 'had to be killed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
