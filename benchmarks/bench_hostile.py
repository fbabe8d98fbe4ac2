"""Hostile requests and load against ``smj serve`` on loopback: the service stays up, memory stays flat.

    python benchmarks/bench_hostile.py [--fake] [--photos 200] [--photo-clients 8] [--hands 1000]
                                       [--hand-clients 16] [--after-s 60] [--cases NAME,...]

Starts ``python smj.py serve`` on a free 127.0.0.1 port (``--fake``: the app with
``api.fakes.FakeDetector``, for a machine without the shipped model), then:

1. Replays each hostile request (``build_cases``: a fan of a billion, a 7000x7000 PNG, six of them at once,
   a decompression bomb, a 16-bit PNG, two files in one request, a mosaic of ~1,100 tiles, an example with
   a script after the JPEG's end, a cross-site form) and prints, per case, the status and error code
   answered against the expected ones, the time taken and the server's peak resident memory (RSS, /proc);
   for the mosaic also its RSS before and 10 s after.
2. While the slowest case runs again, probes ``/healthz`` and prints its slowest answer (target: 100 ms).
3. ``--photos`` ``POST /api/v1/score-photo`` from ``--photo-clients`` clients, then ``--hands``
   ``POST /api/v1/score`` from ``--hand-clients``: errors, p50/p95 latency, throughput, and RSS before,
   at the peak and ``--after-s`` seconds after (target: after within 50 MB of before).

4. ``--idle-sockets N`` (default 300): a second ``smj serve`` (always the real one), its file descriptors
   limited to ``--nofile`` (256), gets N connections that send nothing; prints the slowest ``/healthz``
   answer meanwhile, how long until the server had closed them all, and the bytes its log grew by (the
   accept loop's "Too many open files").

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
    after_s: float = 0.0  # > 0: the server's RSS is read this long after the case too (memory let go)


def mosaic_jpeg(copies: int = 5) -> bytes:
    """The bundled hand photo tiled ``copies`` x ``copies`` times in one JPEG (5: 5120x3840, ~1,100 tiles,
    2.4 MB): under every size limit, and no hand."""
    from PIL import Image

    hand = Image.open(ROOT / "examples" / "hand.jpg").convert("RGB")
    width, height = hand.size
    mosaic = Image.new("RGB", (width * copies, height * copies))
    for column in range(copies):
        for row in range(copies):
            mosaic.paste(hand, (column * width, row * height))
    out = io.BytesIO()
    mosaic.save(out, "JPEG", quality=90)
    return out.getvalue()


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


def _code_guesses(client: httpx.Client) -> list[httpx.Response]:
    """Fourteen wrong join codes, each claiming another address in X-Forwarded-For: the last answer."""
    answers = [
        client.post(
            "/api/v1/tables/join",
            json={"code": f"GUESS{n:03d}"},
            headers={"X-Forwarded-For": f"198.51.100.{n}"},
        )
        for n in range(14)
    ]
    return answers[-1:]


def _huge_comment(client: httpx.Client) -> list[httpx.Response]:
    made = client.post("/api/v1/tables", json={"players": ["A", "B", "C", "D"], "preset": "chengdu"})
    if made.status_code != 201:
        return [made]
    code = {"X-Table-Code": made.json()["code"]}
    url = f"/api/v1/tables/{made.json()['id']}"
    started = client.post(f"{url}/rounds", headers=code)
    if started.status_code != 200:  # held back (this address guessed codes a moment ago): said as it is
        return [started]
    version = started.json()["rounds"][0]["version"]
    kong = {"type": "kong", "player": "A", "kind": "concealed", "tile": "5p", "comment": "x" * 50_000}
    return [client.post(f"{url}/rounds/1/events", json={"version": version, "event": kong}, headers=code)]


def _forwarded_save(client: httpx.Client) -> list[httpx.Response]:
    name, data = example_photo()
    files = {"image": (name, data, "image/jpeg")}
    headers = {"X-Forwarded-For": "203.0.113.9"}
    return [client.post("/api/v1/examples", files=files, data=_example_form(), headers=headers)]


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
        Case(
            "mosaic_1000_tiles",
            (422, "too_many_tiles"),
            _photo("/api/v1/score-photo", mosaic_jpeg(), "mosaic.jpg", "image/jpeg"),
            after_s=10.0,
        ),
        Case("example_script_trailer", (201, None), _script_trailer),
        Case("example_cross_site", (403, "cross_site_request"), _cross_site),
        Case("example_forwarded_by_a_proxy", (403, "saving_disabled"), _forwarded_save),
        Case("table_event_comment_50kb", (422, "event_too_large"), _huge_comment),
        Case("example_fifth_copy", (422, "too_many_copies"), _impossible_example),
        # last: its guesses hold this address back from table writes for a minute
        Case("table_code_guesses_rotating_xff", (429, "too_many_guesses"), _code_guesses),
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
        # one probe at least: a case that ends before the first probe would otherwise read as 0 ms
        while True:
            start = time.perf_counter()
            client.get("/healthz")
            slowest = max(slowest, time.perf_counter() - start)
            if done.is_set():
                break
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
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "api.fakes:create_fake_app",
            "--no-proxy-headers",
        ]
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


# ---- the run


@dataclass(frozen=True)
class CaseRun:
    """A case replayed: the outcome of each request it sent, the server's peak RSS (MB) meanwhile, and
    whether a script sent after a JPEG's end was stored (looked for after the trailer case only)."""

    case: Case
    outcomes: tuple[Outcome, ...]
    peak_mb: float
    script_stored: bool = False
    before_mb: float = 0.0
    after_mb: float | None = None  # ``case.after_s`` after it, where the case asks

    @property
    def unexpected(self) -> int:
        """Answers other than the expected one, and a stored script."""
        wrong = sum((outcome.status, outcome.code) != self.case.expected for outcome in self.outcomes)
        return wrong + self.script_stored


@dataclass(frozen=True)
class LoadRun:
    """``requests`` requests of one kind: the latencies (s) of the answers of status 200, a description
    of every other answer, and the wall time (s)."""

    label: str
    requests: int
    latencies: tuple[float, ...]
    errors: tuple[str, ...]
    wall: float


@dataclass(frozen=True)
class HostileRun:
    """What one run against the server measured. Memory is the server's resident set in MB (0 where /proc
    is unavailable)."""

    server: str  # "uvicorn (fake)" or "smj serve"
    base: str
    model: str  # "fake detector", or "model <weights>"
    rss_start: float
    cases: tuple[CaseRun, ...]
    healthz: tuple[str, float] | None  # the slowest case, and the slowest /healthz answer (s) as it ran again
    loads: tuple[LoadRun, ...]  # the photos', then the hands' (those asked for)
    rss_before: float  # before the load runs
    rss_peak: float  # during them (at least rss_before)
    after_s: float
    rss_after: float  # after_s seconds after them
    stopped: int | None  # the exit status after SIGTERM; None when it had to be killed

    @property
    def failures(self) -> int:
        """Unexpected answers of the cases, and failed load requests."""
        return sum(run.unexpected for run in self.cases) + sum(len(run.errors) for run in self.loads)


class ServerDidNotStart(RuntimeError):
    """The server did not answer in time; ``stopped`` is its exit status after SIGTERM (None: killed)."""

    def __init__(self, message: str, stopped: int | None) -> None:
        super().__init__(message)
        self.stopped = stopped


def measure(
    cases: Sequence[Case],
    fake: bool = False,
    photos: int = 200,
    photo_clients: int = 8,
    hands: int = 1000,
    hand_clients: int = 16,
    after_s: float = 60.0,
    startup_timeout: float = 120.0,
) -> HostileRun:
    """Start the server (``fake``: the fake app), replay ``cases``, probe ``/healthz`` while the slowest
    runs again, send ``photos`` photo requests from ``photo_clients`` clients, then ``hands`` hand
    requests from ``hand_clients``, wait ``after_s`` seconds and stop the server with SIGTERM. Raises
    ``ServerDidNotStart`` when the server does not answer within ``startup_timeout`` seconds."""
    with tempfile.TemporaryDirectory(prefix="bench_hostile_") as data_dir:
        # the saved example of the trailer case goes to data_dir, removed after
        server, base = launch_server(fake, {"SMJ_DATASET_DIR": data_dir}, start_server)
        try:
            health = wait_ready(base, server, startup_timeout)
        except RuntimeError as error:
            raise ServerDidNotStart(str(error), stop_server(server)) from error
        try:
            rss_start = rss_mb(server.pid) or 0.0
            replayed, healthz = _replay(base, server.pid, cases, Path(data_dir))
            before = rss_mb(server.pid) or 0.0
            sampler = Sampler(server.pid)
            sampler.start()
            loads = _loads(base, photos, photo_clients, hands, hand_clients)
            sampler.done.set()
            sampler.join()
            time.sleep(max(after_s, 0.0))
            after = rss_mb(server.pid) or 0.0
        finally:
            stopped = stop_server(server)
    return HostileRun(
        "uvicorn (fake)" if fake else "smj serve",
        base,
        "fake detector" if fake else f"model {health.get('weights')}",
        rss_start,
        replayed,
        healthz,
        loads,
        before,
        max(sampler.peak, before),
        after_s,
        after,
        stopped,
    )


def _replay(
    base: str, pid: int, cases: Sequence[Case], data_dir: Path
) -> tuple[tuple[CaseRun, ...], tuple[str, float] | None]:
    """Each case run once, and the slowest ``/healthz`` answer while the slowest case runs again."""
    replayed: list[CaseRun] = []
    with httpx.Client(base_url=base, timeout=120) as client:
        for case in cases:
            before = rss_mb(pid) or 0.0
            outcomes, peak = run_case(client, case, pid)
            stored = case.name == "example_script_trailer" and bool(_stored_scripts(data_dir))
            after = None
            if case.after_s > 0:
                time.sleep(case.after_s)
                after = rss_mb(pid) or 0.0
            replayed.append(CaseRun(case, tuple(outcomes), peak, stored, before, after))
    if not replayed:
        return (), None
    slowest = max(replayed, key=lambda run: max(outcome.seconds for outcome in run.outcomes)).case
    return tuple(replayed), (slowest.name, healthz_while(base, slowest))


def _loads(base: str, photos: int, photo_clients: int, hands: int, hand_clients: int) -> tuple[LoadRun, ...]:
    """The load runs asked for: photo requests, then hand requests."""
    photo_name, photo = example_photo()
    runs: list[LoadRun] = []
    if photos:
        latencies, errors, wall = load(
            base,
            lambda client: client.post(
                "/api/v1/score-photo", files={"image": (photo_name, photo, "image/jpeg")}
            ),
            photos,
            photo_clients,
        )
        runs.append(
            LoadRun(f"photos ({photo_clients} clients)", photos, tuple(latencies), tuple(errors), wall)
        )
    if hands:
        latencies, errors, wall = load(
            base, lambda client: client.post("/api/v1/score", json={"hand": HAND}), hands, hand_clients
        )
        runs.append(LoadRun(f"hands ({hand_clients} clients)", hands, tuple(latencies), tuple(errors), wall))
    return tuple(runs)


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
    parser.add_argument(
        "--idle-sockets", type=int, default=300, help="idle connections of the last run (0: none)"
    )
    parser.add_argument("--nofile", type=int, default=256, help="file descriptor limit of that server")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    cases = build_cases(args.big_side)
    if args.cases:
        wanted = args.cases.split(",")
        unknown = sorted(set(wanted) - {case.name for case in cases})
        if unknown:
            parser.error(f"unknown cases {unknown}; known: {', '.join(case.name for case in cases)}")
        cases = [case for case in cases if case.name in wanted]
    try:
        run = measure(
            cases,
            args.fake,
            args.photos,
            args.photo_clients,
            args.hands,
            args.hand_clients,
            args.after_s,
            args.startup_timeout,
        )
    except ServerDidNotStart as error:
        print(f"bench_hostile: {error}", file=sys.stderr)
        print(_stopped(error.stopped))
        return 2
    print(f"bench_hostile: {run.server} on {run.base}, {run.model}")
    print(f"  server RSS at start: {run.rss_start:.0f} MB")
    print(f"  {'case':<24} {'expected':<26} {'answered':<26} {'seconds':>8} {'peak RSS':>9}")
    for replayed in run.cases:
        case = replayed.case
        for outcome in replayed.outcomes:
            ok = (outcome.status, outcome.code) == case.expected
            expected = f"{case.expected[0]} {case.expected[1] or ''}".strip()
            got = f"{outcome.status} {outcome.code or ''}".strip() if outcome.status else outcome.note[:26]
            mark = "" if ok else "  UNEXPECTED"
            print(
                f"  {case.name:<24} {expected:<26} {got:<26} {outcome.seconds:>8.2f} "
                f"{replayed.peak_mb:>6.0f} MB{mark}"
            )
        if replayed.script_stored:
            print(f"  {case.name:<24} UNEXPECTED: the script after the JPEG's end was stored")
        if replayed.after_mb is not None:
            print(
                f"  {case.name:<24} RSS before {replayed.before_mb:.0f} MB, peak {replayed.peak_mb:.0f} MB, "
                f"{case.after_s:g} s after {replayed.after_mb:.0f} MB "
                "(target: peak under +1 GB, after within 200 MB of before)"
            )
    if run.healthz is not None:
        name, worst = run.healthz
        print(f"  /healthz while {name} runs: slowest answer {worst * 1000:.0f} ms (target 100 ms)")
    for loaded in run.loads:
        print(load_report(loaded.label, loaded.latencies, loaded.errors, loaded.wall, loaded.requests))
    print(
        f"  server RSS: before {run.rss_before:.0f} MB, peak {run.rss_peak:.0f} MB, "
        f"{run.after_s:g} s after {run.rss_after:.0f} MB (target: within 50 MB of before)"
    )
    print(_stopped(run.stopped))
    if args.idle_sockets:
        idle = idle_sockets(args.idle_sockets, args.nofile)
        worst = (
            "no answer" if idle.slowest_healthz is None else f"slowest {idle.slowest_healthz * 1000:.0f} ms"
        )
        closed = "not within the run" if idle.all_closed_s is None else f"after {idle.all_closed_s:.1f} s"
        print(
            f"  {idle.opened} of {idle.sockets} idle connections under a {args.nofile} file limit: /healthz "
            f"{worst}; all closed by the server {closed}; the log grew {idle.log_bytes} bytes"
        )
    return 1 if run.failures else 0


@dataclass(frozen=True)
class IdleRun:
    sockets: int
    opened: int  # connections the server accepted
    slowest_healthz: float | None  # s; None: no answer within the run
    all_closed_s: float | None  # s after opening until the server had closed every one (None: not in time)
    log_bytes: int


def idle_sockets(sockets: int, nofile: int, seconds: float = 20.0) -> IdleRun:
    """``sockets`` idle connections to ``smj serve`` limited to ``nofile`` file descriptors."""
    import os
    import resource
    import socket

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    command = [sys.executable, "smj.py", "serve", "--port", str(port)]
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(
            command, cwd=ROOT, env=dict(os.environ), stdout=log, stderr=log, preexec_fn=limited
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_ready(base, server, 120.0)
            started = log.tell()
            conns = []
            for _ in range(sockets):
                try:
                    conns.append(socket.create_connection(("127.0.0.1", port), timeout=2))
                except OSError:
                    break
            opened_at = time.perf_counter()
            slowest: float | None = 0.0
            closed_at = None
            while time.perf_counter() - opened_at < seconds:
                start = time.perf_counter()
                try:
                    httpx.get(f"{base}/healthz", timeout=5)
                    slowest = max(slowest or 0.0, time.perf_counter() - start)
                except httpx.HTTPError:
                    slowest = None
                if closed_at is None and all(_closed(conn) for conn in conns):
                    closed_at = time.perf_counter() - opened_at
                time.sleep(0.5)
            for conn in conns:
                conn.close()
            log.seek(0, 2)
            return IdleRun(sockets, len(conns), slowest, closed_at, log.tell() - started)
        finally:
            stop_server(server)


def _closed(conn: object) -> bool:
    import socket

    assert isinstance(conn, socket.socket)
    conn.setblocking(False)
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _stopped(status: int | None) -> str:
    return f"  SIGTERM: {'stopped, status ' + str(status) if status is not None else 'had to be killed'}"


if __name__ == "__main__":
    raise SystemExit(main())
