"""The localiser's confidence that a box is a tile and the classifier's probabilities of its face, fused into
one reading: each tile's face, its confidence, and its likeliest other readings (``fuse``)."""

from __future__ import annotations

import numpy as np

from scoring.tiles import CLASS_NAMES
from vision.contract import NONE
from vision.detections import HONOUR

SUITED_COUNT = len(CLASS_NAMES)
ALTERNATIVES = 2  # other readings of each tile kept for re-reading an impossible hand


def fuse(
    box_scores: np.ndarray, probs: np.ndarray, conf: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For N boxes (the localiser's ``box_scores``) and their (N, C) face ``probs``: each one's face (the
    likeliest class), its confidence (the geometric mean of the two, which ranks as their product does),
    whether it is kept (not "no tile", at ``conf`` or above), its likeliest other suited faces and their
    confidences. A suited reading less likely than "an honour tile" or "no tile" is no other reading of that
    box: confidence 0, so it neither makes a tile of it (pooled readings) nor is tried by a re-reading."""
    at = np.arange(len(probs))
    classes = probs.argmax(1).astype(np.int64) if len(probs) else np.zeros(0, np.int64)
    suited = probs[:, :SUITED_COUNT].copy()  # the other choices: the likeliest other suited tiles
    first_suited = classes < SUITED_COUNT
    suited[at[first_suited], classes[first_suited]] = 0.0
    others = np.argsort(-suited, axis=1, kind="stable")[:, :ALTERNATIVES]
    scores = np.sqrt(box_scores * probs[at, classes]).astype(np.float32)
    keep = (classes != NONE) & (scores >= conf)
    other_probs = np.take_along_axis(suited, others, axis=1)
    other_probs[other_probs <= np.maximum(probs[:, HONOUR], probs[:, NONE])[:, None]] = 0.0
    other_scores = np.sqrt(box_scores[:, None] * other_probs)
    return classes, scores, keep, others, other_scores
