"""A set's examples as one picture laid out as the set is taught: a row each of 万, 筒 and 条 (1 to 9), then
back, honour and none where the set has them; each face's cell holds its examples side by side (the view
turned along its row, as the reader sees a tile of a hand), its name and how many it has under them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from store.sets import Example
from vision.contract import CLASSIFIER_CLASSES

GAP = 8
CAPTION = 18
SHOWN = 3  # examples drawn a face (the newest); the caption counts them all
TURNED = 2  # the view shown: turned along its row (``TileClassifier.example_views``)


def contact_sheet(examples: Sequence[Example], out: Path) -> Path:
    """Write the examples' sheet to ``out`` (PNG); raises OSError when it can't be written."""
    size = examples[0].crops.shape[1] if examples else 64
    most = max((sum(e.face == face for e in examples) for face in CLASSIFIER_CLASSES), default=1)
    cell_w, cell_h = min(SHOWN, max(most, 1)) * size + GAP, size + CAPTION + GAP
    others = tuple(face for face in CLASSIFIER_CLASSES[27:] if any(e.face == face for e in examples))
    lines = [CLASSIFIER_CLASSES[row * 9 : row * 9 + 9] for row in range(3)] + ([others] if others else [])
    sheet = np.full((GAP + len(lines) * cell_h, GAP + 9 * cell_w, 3), 245, np.uint8)
    for r, line in enumerate(lines):
        for c, face in enumerate(line):
            found = [e for e in examples if e.face == face]
            left, top = GAP + c * cell_w, GAP + r * cell_h
            for k, example in enumerate(found[-SHOWN:]):
                crop = example.crops[min(TURNED, len(example.crops) - 1)]
                sheet[top : top + size, left + k * size : left + (k + 1) * size] = crop
            caption = f"{face} x{len(found)}" if found else f"{face}: none"
            colour = (30, 30, 30) if found else (200, 40, 40)
            baseline = top + size + CAPTION - 4
            font = cv2.FONT_HERSHEY_SIMPLEX
            cv2.putText(sheet, caption, (left, baseline), font, 0.5, colour, 1, cv2.LINE_AA)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), cv2.cvtColor(sheet, cv2.COLOR_RGB2BGR)):
        raise OSError(f"could not write a PNG to {out}")
    return out
