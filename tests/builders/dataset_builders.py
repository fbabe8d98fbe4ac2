"""Builders for the dataset tests: images of random pixels on disk."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def make_image(path: Path, size: tuple[int, int] = (64, 48), seed: int = 0) -> Path:
    """A ``size`` (width, height) image of random pixels at ``path`` (folders made as needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.random.default_rng(seed).integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path)
    return path
