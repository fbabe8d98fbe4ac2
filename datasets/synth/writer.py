"""Write a synthetic dataset folder: ``images/*.jpg``, ``labels/*.txt``, ``data.yaml``, ``scenes.jsonl``.

Scene ``i`` is always rendered from ``(seed, i)``, so the labels and ``scenes.jsonl`` are byte-identical
for a seed whatever the number of workers; workers write their images and labels themselves and hand
back the scene's JSON line, which the parent writes in index order.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from datasets.labels import DatasetError
from datasets.scenes import scene_line
from datasets.synth.art import ArtSource
from datasets.synth.scene import LABEL_BOXES, Scene, SceneOptions, render_scene
from datasets.yolo import write_data_yaml
from vision.progress import progress


@dataclass(frozen=True)
class Job:
    out: str
    seed: int
    art: tuple[ArtSource, ...]
    options: SceneOptions
    with_boxes: bool
    label_boxes: str = "face"  # what a face-up tile's label boxes (``Scene.yolo_lines``)


@dataclass(frozen=True)
class Summary:
    out: Path
    scenes: int
    seconds: float
    workers: int

    @property
    def per_second(self) -> float:
        return self.scenes / self.seconds if self.seconds > 0 else float("inf")


def image_name(seed: int, index: int) -> str:
    return f"synth_{seed}_{index:06d}"


def write_dataset(
    out: Path | str,
    n: int,
    seed: int,
    art: tuple[ArtSource, ...] = (),
    options: SceneOptions | None = None,
    workers: int = 1,
    progress: bool = True,
    with_boxes: bool = True,
    append: bool = False,
    label_boxes: str = "face",
) -> Summary:
    """Render ``n`` scenes into ``out``; returns how long it took.

    A folder that already holds scenes (``scenes.jsonl``, the true hands of its images) is refused with
    ``DatasetError``, unless ``append``: then the new scenes' lines are added after the earlier ones,
    and scenes that would overwrite an earlier image (the same seed and index) are refused. ``label_boxes``:
    what a face-up tile's YOLO label boxes, its face or its whole outline (``Scene.yolo_lines``);
    ``scenes.jsonl`` holds both.
    """
    if label_boxes not in LABEL_BOXES:
        raise DatasetError(f"label boxes must be one of {', '.join(LABEL_BOXES)}, not {label_boxes!r}")
    out = Path(out).resolve()
    earlier = _earlier_scenes(out)
    if earlier and not append:
        raise DatasetError(
            f"{out}: already holds {len(earlier)} scenes (scenes.jsonl, their true hands); give a new "
            "folder, or append to it with another seed"
        )
    clashes = sorted(earlier & {f"images/{image_name(seed, i)}.jpg" for i in range(n)})
    if clashes:
        raise DatasetError(
            f"{out}: seed {seed} would overwrite {len(clashes)} earlier scenes ({clashes[0]}, ...); "
            "append with another seed"
        )
    others = _other_images(out, seed, n) - len(earlier)
    if others > 0:
        print(
            f"warning: {out / 'images'} already holds {others} other image(s); data.yaml will include them",
            file=sys.stderr,
        )
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "labels").mkdir(parents=True, exist_ok=True)
    job = Job(str(out), seed, art, options or SceneOptions(), with_boxes, label_boxes)
    workers = max(1, min(workers, n)) if n else 1
    start = time.perf_counter()
    with (out / "scenes.jsonl").open("a" if append else "w", encoding="utf-8", newline="\n") as lines:
        for line in _progress(_lines(job, n, workers), n, progress):
            lines.write(line + "\n")
    # ``train: images`` and no val: validating on the training images would measure nothing; validate on
    # real photos (``smj train --val``), or split with ``smj dataset split``
    write_data_yaml(out, ["train"], flat=True)
    return Summary(out, n, time.perf_counter() - start, workers)


def _earlier_scenes(out: Path) -> set[str]:
    """The images ``scenes.jsonl`` lists already (a line that is not JSON counts as a scene too)."""
    path = out / "scenes.jsonl"
    if not path.is_file():
        return set()
    images: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        try:
            images.add(str(json.loads(line)["image"]))
        except (ValueError, KeyError, TypeError):
            images.add(f"line {number + 1}")
    return images


def _other_images(out: Path, seed: int, n: int) -> int:
    folder = out / "images"
    if not folder.is_dir():
        return 0
    ours = {f"{image_name(seed, i)}.jpg" for i in range(n)}
    return sum(1 for p in folder.iterdir() if p.is_file() and p.name not in ours)


def _lines(job: Job, n: int, workers: int) -> Iterator[str]:
    if workers == 1:
        _init_worker(job)
        yield from (_render_one(i) for i in range(n))
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers, initializer=_init_worker, initargs=(job,)) as pool:
        yield from pool.imap(_render_one, range(n), chunksize=4)


def _progress(lines: Iterator[str], n: int, enabled: bool) -> Iterator[str]:
    return progress(lines, total=n, unit="scene", enabled=enabled and n >= 20)


_JOB: Job | None = None


def _init_worker(job: Job) -> None:
    global _JOB
    _JOB = job
    cv2.setNumThreads(1)


def _render_one(index: int) -> str:
    job = _JOB
    assert job is not None, "worker not initialised"
    scene = render_scene(job.seed, index, job.options.size, job.art, job.options)
    name = image_name(job.seed, index)
    out = Path(job.out)
    _write_atomic(out / "images" / f"{name}.jpg", encode_jpeg(scene, job.options.exif_orientation))
    _write_atomic(out / "labels" / f"{name}.txt", scene.yolo_lines(job.label_boxes).encode("utf-8"))
    record = scene.to_json(f"images/{name}.jpg", with_boxes=job.with_boxes)
    if job.options.set_seed is not None:  # one set in every scene: which (``smj dataset synth --set-seed``)
        record["set_seed"] = job.options.set_seed
    return scene_line(record)


def encode_jpeg(scene: Scene, orientation: int = 1) -> bytes:
    """The scene as JPEG bytes. Orientation 6 stores it turned a quarter counter-clockwise with the EXIF
    tag that turns it upright, as a phone held upright writes it; labels stay in the upright frame."""
    if orientation == 1:
        ok, data = cv2.imencode(
            ".jpg",
            cv2.cvtColor(scene.image, cv2.COLOR_RGB2BGR),
            [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg_quality],
        )
        if not ok:
            raise RuntimeError("could not encode the scene as JPEG")
        return bytes(data.tobytes())
    if orientation != 6:
        raise ValueError(f"EXIF orientation {orientation} is not supported (1 or 6)")
    stored = Image.fromarray(np.ascontiguousarray(np.rot90(scene.image, 1)))
    exif = Image.Exif()
    exif[0x0112] = 6
    buffer = io.BytesIO()
    stored.save(buffer, "JPEG", quality=scene.jpeg_quality, exif=exif)
    return buffer.getvalue()


def _write_atomic(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    temporary.replace(path)
