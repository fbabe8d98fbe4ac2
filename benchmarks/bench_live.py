"""Live reading, measured: does a hand held in front of the camera lock right, how soon, against one frame?

    python benchmarks/bench_live.py DATA [DATA ...] [--size 640x480] [--limit N] [--shaken 12] [--steady 24]
        [--hold 3] [--single] [--photo-looks]
    python benchmarks/bench_live.py --phones 1,2,4 [--seconds 20] [--size 640x480] DATA
    python benchmarks/bench_live.py --memory-minutes 10 DATA
    python benchmarks/bench_live.py --browser DATA [--size 640x480] [--limit N] [--steady 60]

DATA: scenes of winning hands (``smj dataset synth`` output). Each winning scene becomes a video
(``datasets.camera_video``: the photo fitted to ``--size``, ``--shaken`` frames shaken and blurred, then
``--steady`` held steady, seeded by its index), and its frames are read one after another as a phone's are
(each as the page sends it: its long side scaled to the ``next_side`` the last answer asked for, 640 px for
the first, never enlarged, a JPEG at quality 85; read by ``usecases.live.LiveReading`` with the shipped
models). For each video: whether a hand was locked, whether it is the scene's hand (melds in any order),
and the frames from the first steady frame to the lock. Printed: the share of videos locked right, the
wrong locks (and of them those that lock the hand the photo shows: a concealed kong laid with its four faces
up, as some tables lay every kong, is an exposed kong to the eye), frames and seconds from steady to
locked (median, p90) and the median time a frame takes.
``--photo-looks``: each frame looked at as a photo is, a close-up that reads as no win looked at again
(``usecases.live.LIVE_SEARCH`` looks once). ``--single``: the same frames each read alone as a photo
(``vision.pipeline.score_photo``): the share of videos with at least one frame read exactly (the best single
frame) and the mean share of frames read exactly (a frame taken at random).

``--browser``: each video written as Y4M and played by Chromium's fake camera (a phone-sized headless
Chromium, as the tests drive it) to the page at ``/?live=1`` on the service: the hand the page locks
(``#live-result[data-hand]``, given the video's length and ``SLACK_S`` to appear; the videos play once:
``--steady 60`` gives the page six seconds of a steady hand) against the scene's, and the seconds
from the first steady frame (the page's first frame sent, plus the shaken frames' time) to the lock.

``--phones``: the service started on a loopback port (as ``bench_api``), each phone a thread sending one
video's frames in a loop, the next when the last is answered: frames a second the server answers, and
frames dropped, for each number of phones. ``--memory-minutes``: two phones for that long, the server's
resident memory sampled every 30 s.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

QUALITY = 85  # the page's JPEG quality for a frame
FIRST_SIDE = 640  # the long side the page sends its first frame at, then the server's ``next_side``
MAX_SIDE = 1280  # the service's ``SMJ_LIVE_MAX_SIDE``


@dataclass(frozen=True)
class VideoResult:
    locked: dict | None  # the hand locked, or None
    right: bool
    shown: bool  # the locked hand is the one the photo shows (``shown_hand``)
    why: str | None  # why the last frame was not locked
    frames_to_lock: int | None  # from the first steady frame
    seconds_per_frame: float
    single_exact: list[bool]  # each frame read alone as a photo: the hand exactly (with --single)


def canonical(hand: dict | None) -> str | None:
    """``usecases.live.hand_key`` (melds in any order), None for no hand."""
    from usecases.live import hand_key

    return None if hand is None else hand_key(hand)


def shown_hand(row: dict) -> dict:
    """The scene's hand as its photo shows it: a concealed kong laid with all four faces up (no back among
    its tiles' labels, as some tables lay every kong) is an exposed kong to anyone who sees the photo."""
    from vision.detections import BACK

    hand = row["hand"]
    backs = {b.get("group") for b in row.get("boxes") or () if b.get("role") == "meld" and b["cls"] == BACK}
    melds = [
        {**meld, "type": "kong_exposed"} if meld["type"] == "kong_concealed" and index not in backs else meld
        for index, meld in enumerate(hand["melds"])
    ]
    return {**hand, "melds": melds}


def verdict(locked: dict | None, row: dict) -> tuple[bool, bool]:
    """Whether the ``locked`` hand is the scene's, and whether it is the hand its photo shows."""
    key = canonical(locked)
    return key == canonical(row["hand"]), locked is not None and key == canonical(shown_hand(row))


def tally(locks: Sequence[tuple[dict | None, bool, bool]]) -> str:
    """The videos' locks (each: the hand locked or None, and its ``verdict``) counted in words."""
    right = sum(r for _, r, _ in locks)
    wrong = sum(locked is not None and not r for locked, r, _ in locks)
    unseen = sum(shown and not r for _, r, shown in locks)
    return (
        f"locked right {right}/{len(locks)} ({right / len(locks):.3f}), wrong locks {wrong} (of them the "
        f"hand the photo shows, a concealed kong face up: {unseen}), not locked {len(locks) - right - wrong}"
    )


def jpeg(frame: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(frame).save(out, "JPEG", quality=QUALITY)
    return out.getvalue()


def video_images(
    folder: Path, row: dict, size: tuple[int, int], shaken: int, steady: int, seed: int
) -> list[np.ndarray]:
    """The scene's video (``datasets.camera_video``): its frames as the camera gives them, RGB."""
    from datasets.camera_video import camera_frames

    photo = np.asarray(Image.open(folder / row["image"]).convert("RGB"))
    return camera_frames(photo, size, shaken=shaken, steady=steady, seed=seed)


def video_frames(
    folder: Path, row: dict, size: tuple[int, int], shaken: int, steady: int, seed: int
) -> list[bytes]:
    """The scene's video as the page sends it at the camera's own size: JPEGs."""
    return [jpeg(f) for f in video_images(folder, row, size, shaken, steady, seed)]


def sent(frame: np.ndarray, side: int) -> bytes:
    """A camera frame as the page sends it when the server asked for ``side``: its long side scaled to that
    (never enlarged), a JPEG (``api/static/live.js``)."""
    height, width = frame.shape[:2]
    scale = min(1.0, side / max(width, height))
    if scale < 1.0:
        frame = cv2.resize(frame, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
    return jpeg(frame)


def read_video(
    frames: Sequence[np.ndarray],
    row: dict,
    detector: object,
    hold: int,
    shaken: int,
    single: bool,
    photo_looks: bool = False,
) -> VideoResult:
    from scoring import CHENGDU, WinContext
    from usecases.live import LIVE_SEARCH, LiveReading
    from vision.detect.detector import DEFAULT_CONF
    from vision.grouping.search import SEARCH
    from vision.pipeline import decode_photo, score_photo

    truth = row["hand"]
    reading = LiveReading(CHENGDU, WinContext(), hold, reach=SEARCH if photo_looks else LIVE_SEARCH)
    locked_at = None
    locked = None
    why = None
    spent = 0.0
    side = FIRST_SIDE
    sides = []
    for index, frame in enumerate(frames):
        data = sent(frame, side)
        sides.append(data)
        start = time.perf_counter()
        answer = reading.frame(decode_photo(data), detector, DEFAULT_CONF)  # type: ignore[arg-type]
        spent += time.perf_counter() - start
        side = min(answer["next_side"], MAX_SIDE)
        if answer["locked"] and locked is None:
            locked, locked_at = answer["hand"], index
        why = answer["why"]["code"] if answer["why"] else None
    exact = []
    if single:
        for data in sides:
            read = score_photo(data, detector, WinContext(), CHENGDU)  # type: ignore[arg-type]
            exact.append(read.hand is not None and canonical(read.hand.to_json()) == canonical(truth))
    to_lock = None if locked_at is None else max(0, locked_at - shaken + 1)
    right, shown = verdict(locked, row)
    return VideoResult(locked, right, shown, None if locked else why, to_lock, spent / len(frames), exact)


def measure(args: argparse.Namespace, size: tuple[int, int]) -> int:
    from bench_api import percentile

    from datasets.scenes import scene_images
    from vision.detect.detector import DEFAULT_WEIGHTS
    from vision.factory.torch_models import reader

    detector = reader(DEFAULT_WEIGHTS)
    for folder in args.data:
        rows = [r for r in scene_images(folder) if r.get("winning")][: args.limit or None]
        results = []
        for index, row in enumerate(rows):
            frames = video_images(folder, row, size, args.shaken, args.steady, index)
            results.append(
                read_video(frames, row, detector, args.hold, args.shaken, args.single, args.photo_looks)
            )
            if args.verbose:
                r = results[-1]
                print(
                    f"  {row['image']}: apart {row.get('win_apart')}, right {r.right}, locked {r.locked}, "
                    f"why {r.why}, truth {row['hand']}",
                    flush=True,
                )
        waits = [r.frames_to_lock for r in results if r.right and r.frames_to_lock is not None]
        per_frame = statistics.median(r.seconds_per_frame for r in results)
        print(
            f"{folder} at {size[0]}x{size[1]} ({len(results)} videos, {args.shaken} shaken + {args.steady} "
            f"steady frames, hold {args.hold}): {tally([(r.locked, r.right, r.shown) for r in results])}; "
            f"frames from steady to locked "
            f"median {statistics.median(waits) if waits else float('nan'):.0f}, p90 "
            f"{percentile(waits, 90) if waits else float('nan'):.0f} (x {1000 * per_frame:.0f} ms a frame: "
            f"{(statistics.median(waits) if waits else float('nan')) * per_frame:.2f} s)",
            flush=True,
        )
        apart = [r for r, row in zip(results, rows, strict=True) if row.get("win_apart")]
        whys = Counter(r.why for r in results if r.locked is None)
        print(
            f"  winning tile set apart: locked right {sum(r.right for r in apart)}/{len(apart)}; "
            "not locked, why: " + ", ".join(f"{k} {v}" for k, v in whys.most_common()),
            flush=True,
        )
        if args.single:
            for name, chosen in (("every video", results), ("winning tile set apart", apart)):
                if not chosen:
                    continue
                best = sum(any(r.single_exact) for r in chosen) / len(chosen)
                rand = statistics.mean(statistics.mean(r.single_exact) for r in chosen)
                steady_only = statistics.mean(statistics.mean(r.single_exact[args.shaken :]) for r in chosen)
                locked = sum(r.right for r in chosen) / len(chosen)
                print(
                    f"  {name} ({len(chosen)}), one frame alone: the best frame exact {best:.3f}; a frame at "
                    f"random {rand:.3f} (a steady frame at random {steady_only:.3f}); the locked reading "
                    f"{locked:.3f}",
                    flush=True,
                )
    return 0


def played(
    base: str, frames: list[np.ndarray], shaken: int, wait_s: float
) -> tuple[dict | None, float | None]:
    """``frames`` played by Chromium's fake camera (a phone-sized headless Chromium, as the tests drive it:
    ``tests/builders/browser.py``) to the page at ``base/?live=1``: the hand it locks within ``wait_s`` (None:
    none), and the seconds from the first steady frame (the page's first frame sent, plus the ``shaken``
    frames' time) to the lock."""
    import tempfile

    from browser import fake_camera, mobile
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    from datasets.camera_video import FPS, write_y4m

    sent: list[float] = []

    def frame_sent(request: Any) -> None:
        if request.url.endswith("/frames") and not sent:
            sent.append(time.perf_counter())

    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as playwright:
        video = write_y4m(frames, Path(scratch) / "hand.y4m")
        context = mobile(playwright, Path(scratch) / "profile", extra_args=fake_camera(video))
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.on("request", frame_sent)
            page.goto(base + "/?live=1")
            try:
                page.wait_for_selector("#live-result[data-hand]", state="attached", timeout=1000 * wait_s)
            except PlaywrightTimeout:
                return None, None
            waited = time.perf_counter() - sent[0] - shaken / FPS if sent else None
            return json.loads(page.get_attribute("#live-result", "data-hand") or "null"), waited
        finally:
            context.close()


SLACK_S = 3.0  # Chromium's start and the camera's opening, beyond the video's own length


def warm_up(base: str, folder: Path, size: tuple[int, int]) -> None:
    """One live frame read before the videos, so the first video does not wait for the models to load."""
    import httpx

    from datasets.scenes import scene_images

    row = next(r for r in scene_images(folder) if r.get("winning"))
    frame = video_frames(folder, row, size, 0, 1, 0)[0]
    with httpx.Client(base_url=base, timeout=120) as client:
        session = client.post("/api/v1/live", json={}).json()["session"]
        client.post(f"/api/v1/live/{session}/frames", files={"image": ("f.jpg", frame, "image/jpeg")})
        client.delete(f"/api/v1/live/{session}")


def browser(args: argparse.Namespace, size: tuple[int, int]) -> int:
    """Each video played to the page by Chromium's fake camera (``played``), the service serving the page."""
    from bench_api import ROOT, launch_server, wait_ready

    from datasets.camera_video import FPS
    from datasets.scenes import scene_images

    sys.path.insert(0, str(ROOT / "tests" / "builders"))  # the tests' Chromium (``played``)
    server, base = launch_server(False)
    try:
        wait_ready(base, server, 120)
        warm_up(base, args.data[0], size)
        for folder in args.data:
            rows = [r for r in scene_images(folder) if r.get("winning")][: args.limit or None]
            locks: list[tuple[dict | None, bool, bool]] = []
            waits: list[float] = []
            for index, row in enumerate(rows):
                frames = video_images(folder, row, size, args.shaken, args.steady, index)
                wait_s = (args.shaken + args.steady) / FPS + SLACK_S
                locked, waited = played(base, frames, args.shaken, wait_s)
                is_right, shown = verdict(locked, row)
                locks.append((locked, is_right, shown))
                if is_right and waited is not None:
                    waits.append(waited)
                if args.verbose:
                    print(
                        f"  {row['image']}: right {is_right}, locked {locked}, truth {row['hand']}",
                        flush=True,
                    )
            print(
                f"{folder} at {size[0]}x{size[1]} through Chromium's fake camera ({len(rows)} videos, "
                f"{args.shaken} shaken + {args.steady} steady frames at {FPS} a second): {tally(locks)}; "
                f"seconds from steady to locked median "
                f"{statistics.median(waits) if waits else float('nan'):.2f}",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


def phones(args: argparse.Namespace, size: tuple[int, int]) -> int:
    import httpx
    from bench_api import Sampler, launch_server, rss_mb, wait_ready

    from datasets.scenes import scene_images

    folder = args.data[0]
    rows = [r for r in scene_images(folder) if r.get("winning")]
    videos = [video_frames(folder, rows[i % len(rows)], size, args.shaken, args.steady, i) for i in range(4)]
    counts = [int(n) for n in args.phones.split(",")] if args.phones else [2]
    seconds = args.memory_minutes * 60 if args.memory_minutes else args.seconds
    server, base = launch_server(
        False, {"SMJ_LIVE_PHONES": str(max(counts)), "SMJ_LIVE_FRAME_INTERVAL_S": "0"}
    )
    try:
        wait_ready(base, server, 120)
        for count in counts:
            answered, dropped = [0] * count, [0] * count
            stop = threading.Event()
            samples: list[tuple[float, float]] = []

            def phone(k: int, answered: list[int], dropped: list[int], stop: threading.Event) -> None:
                with httpx.Client(base_url=base, timeout=60) as client:
                    session = client.post("/api/v1/live", json={}).json()["session"]
                    frames = videos[k % len(videos)]
                    index = 0
                    while not stop.is_set():
                        data = frames[index % len(frames)]
                        index += 1
                        answer = client.post(
                            f"/api/v1/live/{session}/frames", files={"image": ("f.jpg", data, "image/jpeg")}
                        )
                        if answer.status_code == 200:
                            answered[k] += 1
                        elif answer.status_code == 429:
                            dropped[k] += 1
                            time.sleep(0.05)
                        else:
                            raise RuntimeError(f"{answer.status_code}: {answer.text[:200]}")
                    client.delete(f"/api/v1/live/{session}")

            sampler = Sampler(server.pid, 1.0)
            sampler.start()
            threads = [
                threading.Thread(target=phone, args=(k, answered, dropped, stop), daemon=True)
                for k in range(count)
            ]
            start = time.perf_counter()
            for thread in threads:
                thread.start()
            while time.perf_counter() - start < seconds:
                time.sleep(min(30.0, seconds))
                samples.append((time.perf_counter() - start, rss_mb(server.pid) or float("nan")))
            stop.set()
            for thread in threads:
                thread.join(timeout=120)
            sampler.done.set()
            wall = time.perf_counter() - start
            total = sum(answered)
            print(
                f"{count} phone(s), {wall:.0f} s: {total / wall:.1f} frames/s answered "
                f"({total / wall / count:.1f} a phone), {sum(dropped)} dropped; server RSS "
                + ", ".join(f"{t:.0f}s {mb:.0f} MB" for t, mb in samples)
                + f", peak {sampler.peak:.0f} MB",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from usecases.live import HOLD

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, nargs="+")
    parser.add_argument("--size", default="640x480", help="frame size, WxH (default 640x480)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N winning scenes of each")
    parser.add_argument("--shaken", type=int, default=12)
    parser.add_argument("--steady", type=int, default=24)
    parser.add_argument("--hold", type=int, default=HOLD, help=f"frames to lock (default {HOLD}, the page's)")
    parser.add_argument("--single", action="store_true", help="also read every frame alone as a photo")
    parser.add_argument(
        "--browser", action="store_true", help="each video played to the page by Chromium's fake camera"
    )
    parser.add_argument("--verbose", action="store_true", help="a line for each video")
    parser.add_argument(
        "--photo-looks",
        action="store_true",
        help="each frame looked at as a photo is (a close-up that reads as no win looked at again)",
    )
    parser.add_argument("--phones", default="", help="e.g. 1,2,4: frames a second the server holds")
    parser.add_argument("--seconds", type=float, default=20.0, help="each --phones run's length")
    parser.add_argument(
        "--memory-minutes", type=float, default=0.0, help="two phones this long, memory sampled"
    )
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.lower().split("x"))
    if args.phones or args.memory_minutes:
        return phones(args, (width, height))
    if args.browser:
        return browser(args, (width, height))
    return measure(args, (width, height))


if __name__ == "__main__":
    sys.exit(main())
