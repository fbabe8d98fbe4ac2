"""What an import found wrong, all of it in one pass: ``ImportProblems``, filled by the readers.

Each problem is a file and line (0: the whole file), a kind, a message, and the fix a lenient import
applies: ``clip`` (a box reaching outside the image is cut to it), ``convert`` (a polygon becomes its
bounding box, a turned rectangle the upright box around it), ``rescale`` (the boxes of an image whose real
size differs from the size its annotations declare are scaled from the one to the other) or ``skip`` (a
label without its image, an image that cannot be decoded, a line that is not a box, a box of no area). The
readers always apply the fix and report it; ``smj dataset import`` refuses when any was needed (printing
each, as ``check`` does) unless ``--lenient``, which imports and counts the fixes in its summary.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from datasets.labels import EDGE_TOLERANCE, Box, DatasetError, repeated_boxes

FIXES = ("clip", "convert", "rescale", "skip")


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int
    kind: str
    message: str
    fix: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.kind}: {self.message} ({self.fix} with --lenient)"


@dataclass
class ImportProblems:
    problems: list[Problem] = field(default_factory=list)

    def add(self, path: Path, line: int, kind: str, message: str, fix: str) -> None:
        assert fix in FIXES, fix
        self.problems.append(Problem(path, line, kind, message, fix))

    def __bool__(self) -> bool:
        return bool(self.problems)

    def counts(self) -> Counter[str]:
        """How many of each fix: ``{"clip": 3, "skip": 1}``."""
        return Counter(problem.fix for problem in self.problems)

    def summary(self) -> str:
        counts = self.counts()
        verbs = {"clip": "clipped", "convert": "converted", "rescale": "rescaled", "skip": "skipped"}
        return ", ".join(f"{verbs[fix]} {counts[fix]}" for fix in FIXES if counts[fix])

    def clipped(self, box: Box, path: Path, line: int, what: str = "") -> Box | None:
        """``box`` cut to the image (reported when it reached outside); ``None`` when nothing is left, or when
        a number of it is not finite (NaN, infinity: a malformed box, skipped)."""
        if not all(math.isfinite(value) for value in (box.xc, box.yc, box.w, box.h)):
            numbers = f"{box.xc:g} {box.yc:g} {box.w:g} {box.h:g}"
            self.add(
                path, line, "malformed", f"{what}box with a number that is not finite ({numbers})", "skip"
            )
            return None
        x1, y1, x2, y2 = box.xc - box.w / 2, box.yc - box.h / 2, box.xc + box.w / 2, box.yc + box.h / 2
        inside = (
            x1 >= -EDGE_TOLERANCE
            and y1 >= -EDGE_TOLERANCE
            and x2 <= 1 + EDGE_TOLERANCE
            and y2 <= 1 + EDGE_TOLERANCE
        )
        if box.w <= 0 or box.h <= 0:
            self.add(path, line, "degenerate", f"{what}box of width {box.w:g} and height {box.h:g}", "skip")
            return None
        if inside:
            return box
        cx1, cy1, cx2, cy2 = max(x1, 0.0), max(y1, 0.0), min(x2, 1.0), min(y2, 1.0)
        if cx2 <= cx1 or cy2 <= cy1:
            self.add(path, line, "out_of_range", f"{what}box lies wholly outside the image", "skip")
            return None
        extent = f"x {x1:.3f}..{x2:.3f}, y {y1:.3f}..{y2:.3f} of 0..1"
        self.add(path, line, "out_of_range", f"{what}box reaches outside the image ({extent})", "clip")
        return Box(box.class_id, (cx1 + cx2) / 2, (cy1 + cy2) / 2, cx2 - cx1, cy2 - cy1)

    def without_repeats(self, boxes: list[tuple[Box, int, str]], path: Path) -> list[Box]:
        """``boxes`` (each with its line, 0 for none, and what names it, e.g. ``annotation 7: ``) less each
        one that repeats an earlier box of its image (``labels.repeated_boxes``: labelled twice), reported
        ``duplicate`` and skipped, as ``smj dataset check`` reports it."""
        repeats = repeated_boxes([box for box, _, _ in boxes])
        for later, earlier, iou in repeats:
            _, line, what = boxes[later]
            _, first_line, first = boxes[earlier]
            again = f"line {first_line}" if first_line else first.rstrip(": ")
            self.add(path, line, "duplicate", f"{what}the same box as {again} (IoU {iou:.2f})", "skip")
        dropped = {later for later, _, _ in repeats}
        return [box for i, (box, _, _) in enumerate(boxes) if i not in dropped]


class ImportRefused(DatasetError):
    """The import needed fixes and was not lenient; ``problems`` lists them."""

    def __init__(self, problems: ImportProblems) -> None:
        self.problems = problems
        super().__init__(
            f"{len(problems.problems)} problems (listed above); nothing was written. --lenient would "
            f"import with them fixed: {problems.summary()}"
        )
