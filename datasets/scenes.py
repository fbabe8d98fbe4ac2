"""A synthetic dataset's ``scenes.jsonl`` (``smj dataset synth``): one JSON object a line, each scene's image,
its true hand and boxes, and its don't-care outlines (``ignored``)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from datasets.labels import DatasetError

SCENES = "scenes.jsonl"


def scene_rows(folder: Path | str) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    """The scenes of ``folder/scenes.jsonl`` in order: its path, the line's number and the scene; none for a
    folder without one. A line that is not a JSON object is refused (``DatasetError`` naming it)."""
    path = Path(folder) / SCENES
    if not path.is_file():
        return
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as error:
            raise DatasetError(f"{path}:{number}: not a JSON scene ({error})") from None
        if not isinstance(row, dict):
            raise DatasetError(f"{path}:{number}: not a JSON scene (a {type(row).__name__})")
        yield path, number, row


def scene_images(folder: Path | str, images: bool = True) -> list[dict[str, Any]]:
    """The scenes of ``folder/scenes.jsonl`` a benchmark reads: ``DatasetError`` in one line where the
    folder has no ``scenes.jsonl`` or (``images``: the benchmark reads them) a scene's image is not where the
    line says (moved since)."""
    folder = Path(folder)
    if not (folder / SCENES).is_file():
        raise DatasetError(f"{folder}: no {SCENES} (smj dataset synth writes one)")
    rows = []
    for path, number, row in scene_rows(folder):
        image = row.get("image")
        if images and (not isinstance(image, str) or not (folder / image).is_file()):
            raise DatasetError(
                f"{path}:{number}: its image {image!r} is not in {folder} (moved since it was written?)"
            )
        rows.append(row)
    return rows


def one_line_errors(prog: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """For a benchmark's ``main``: a ``DatasetError`` (a missing ``scenes.jsonl``, a moved image) said in
    one line, ``prog: message``, exit status 2, not a traceback."""

    def wrap(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(*args: Any, **kwargs: Any) -> int:
            try:
                return main(*args, **kwargs)
            except DatasetError as error:
                print(f"{prog}: {error}", file=sys.stderr)
                return 2

        return run

    return wrap


def scene_line(row: dict[str, Any]) -> str:
    """One scene as its ``scenes.jsonl`` line (compact, CJK as it is, no newline)."""
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))


def write_scene_rows(folder: Path | str, rows: list[dict[str, Any]]) -> Path:
    """``rows`` written as ``folder/scenes.jsonl``, a line each (``scene_line``)."""
    path = Path(folder) / SCENES
    path.write_text("".join(scene_line(row) + "\n" for row in rows), encoding="utf-8")
    return path
