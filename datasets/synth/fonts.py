"""System fonts for procedural faces: the CJK fonts that hold every character a face prints (found with
``fc-list``), cached glyph masks."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

# Preferred first: brush Kai looks most like real tiles; a plain sans-serif for variety.
_KNOWN_CJK = (
    "/usr/share/fonts/truetype/arphic/ukai.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Bold.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc",
)
_KNOWN_LATIN = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/noto/NotoSansMono-Bold.ttf",
)
_GLYPH_PX = 128
# every character a procedural face may print (datasets.synth.faces): a font lacking one is not used
FACE_CHARACTERS = "一二三四五伍六七八九萬万東东南西北中發发白梅蘭竹菊春夏秋冬"
_CHARSET = " ".join(f"{ord(char):x}" for char in FACE_CHARACTERS)


@functools.cache
def cjk_fonts() -> tuple[str, ...]:
    """Paths of the CJK fonts on this machine that hold every ``FACE_CHARACTERS``, preferred ones first
    (empty when there are none)."""
    found = [path for path in _KNOWN_CJK if Path(path).is_file()]
    if shutil.which("fc-list"):
        try:
            listing = subprocess.run(
                ["fc-list", f":charset={_CHARSET}", "file"],
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            listing = ""
        extra = sorted({line.split(":")[0].strip() for line in listing.splitlines() if line.strip()})
        found += [path for path in extra if path not in found and Path(path).is_file()]
    return tuple(found)


@functools.cache
def latin_font() -> str | None:
    return next((path for path in _KNOWN_LATIN if Path(path).is_file()), None)


@functools.cache
def glyph_mask(font_path: str, text: str) -> np.ndarray | None:
    """The ink of ``text`` cropped to its bounding box, uint8 0..255 (None when the font lacks it)."""
    try:
        font = ImageFont.truetype(font_path, _GLYPH_PX, index=0)
    except OSError:
        return None
    image = Image.new("L", (_GLYPH_PX * (len(text) + 1), _GLYPH_PX * 2), 0)
    ImageDraw.Draw(image).text((_GLYPH_PX // 4, _GLYPH_PX // 4), text, font=font, fill=255)
    mask = np.asarray(image)
    rows, cols = np.nonzero(mask > 24)
    if rows.size < 8:
        return None
    return np.ascontiguousarray(mask[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1])


def fitted_glyph(font_path: str | None, text: str, width: int, height: int) -> np.ndarray | None:
    """The glyph scaled to exactly ``width`` x ``height`` pixels (float32 coverage 0..1)."""
    if font_path is None or width < 2 or height < 2:
        return None
    mask = glyph_mask(font_path, text)
    if mask is None:
        return None
    return cv2.resize(mask, (width, height), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
