"""Reading photos: bytes or a path in, an upright RGB array out, with a clear error for bad input.

EXIF orientation is applied here, once, so every later stage (detector, grouper, annotations, saved
labels) works in the coordinates of the photo as a person sees it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, UnidentifiedImageError

from scoring.errors import SmjError

DEFAULT_MAX_PIXELS = 50_000_000  # a 48 MP phone photo still loads; a decompression bomb does not


class ImageError(SmjError):
    """The input is not a usable image. ``code`` is one of: not_an_image, corrupt_image, too_many_pixels,
    too_many_tiles (``vision.detect.detector.MAX_TILES``)."""

    def __init__(self, code: str, message: str, detail: str | None = None) -> None:
        super().__init__(message, code)  # the message is what a client is told: no text of the decoder's
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.message} ({self.detail})" if self.detail else self.message


@dataclass(frozen=True)
class Photo:
    """An upright RGB photo. ``pixels`` is (H, W, 3) uint8; ``scale`` > 1 when decoded reduced."""

    pixels: np.ndarray
    original_size: tuple[int, int]  # (width, height) of the full-resolution upright photo

    @property
    def size(self) -> tuple[int, int]:
        return int(self.pixels.shape[1]), int(self.pixels.shape[0])

    @property
    def scale(self) -> float:
        """Full-resolution pixels per decoded pixel."""
        return self.original_size[0] / self.size[0]


# bytes a pixel of a decoded image takes in Pillow, and what turning it to RGB (``as_rgb``) adds at its peak
STORAGE = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16B": 2, "I;16L": 2, "I;16N": 2, "RGB": 4}
CONVERSION = {
    "RGB": 0,
    "1": 4,
    "L": 4,
    "P": 4,
    "I;16": 10,  # its uint16 array 2, divided 2, to uint8 1, as L 1, as RGB 4
    "I": 14,  # its int32 array 4, clipped 4 (divided in place), to uint8 1, as L 1, as RGB 4
    "F": 26,  # its float32 array 4, scaled, clipped, cleaned 4 each (and a temporary), uint8 1, L 1, RGB 4
}


def decode_cost(mode: str, size: tuple[int, int], *, turned: bool = False) -> int:
    """Bytes decoding an image of this mode and (decoded) size takes at its peak.

    Pillow stores a pixel in 1 byte (modes 1, L, P), 2 (I;16) or 4 (everything else, RGB included);
    the peak holds the decoded image, the turned copy when EXIF orientation applies (counted as another
    decoded image: a bound on the 3-byte array turned upright), what turning it to RGB
    takes (``CONVERSION``: a 16-bit or 32-bit image goes through arrays of its own width first), and the
    3-byte pixels handed on as an array (made from a bytes copy of them: 6 bytes a pixel at the peak).
    """
    pixels = size[0] * size[1]
    storage = STORAGE.get(mode, 2 if mode.startswith("I;16") else 4)
    conversion = CONVERSION.get(mode, 10 if mode.startswith("I;16") else 4)
    return pixels * (storage * (2 if turned else 1) + conversion + 6)


def as_rgb(image: Image.Image) -> Image.Image:
    """RGB, keeping the tones of a 16-bit or 32-bit image (Pillow's own ``convert("RGB")`` clips every
    value above 255 to white). 16-bit values (0..65535) are scaled to 0..255; float images in 0..1 too.
    The arrays keep the image's own width (``CONVERSION`` counts them)."""
    if image.mode.startswith("I;16"):
        values = np.asarray(image)
        return Image.fromarray((values // 257).astype(np.uint8), "L").convert("RGB")
    if image.mode == "I":
        values = np.asarray(image)
        if values.max(initial=0) > 255:
            values = np.clip(values, 0, 65535)
            np.floor_divide(values, 257, out=values)
        return Image.fromarray(values.astype(np.uint8), "L").convert("RGB")
    if image.mode == "F":
        floats = np.asarray(image, dtype=np.float32)
        top = float(np.nanmax(floats, initial=0.0))
        scaled = floats * 255 if top <= 1.0 else floats
        return Image.fromarray(np.nan_to_num(np.clip(scaled, 0, 255)).astype(np.uint8), "L").convert("RGB")
    return image if image.mode == "RGB" else image.convert("RGB")


def _check_budget(
    name: str, image: Image.Image, max_decode_bytes: int | None, full: tuple[int, int], *, turned: bool
) -> None:
    """Raises ``too_many_pixels`` when decoding ``image`` (as drafted) would pass ``max_decode_bytes``."""
    if max_decode_bytes is None:
        return
    cost = decode_cost(image.mode, image.size, turned=turned)
    if cost > max_decode_bytes:
        width, height = full
        raise ImageError(
            "too_many_pixels",
            f"{name}: decoding this {width}x{height} {image.format or 'image'} takes about "
            f"{cost / 1e6:,.0f} MB, more than the {max_decode_bytes / 1e6:,.0f} MB allowed "
            "(a JPEG is decoded reduced; send a JPEG or a smaller image)",
        )


def load_photo(
    source: bytes | str | Path,
    *,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    reduce_to: int | None = None,
    max_decode_bytes: int | None = None,
) -> Photo:
    """Decode a photo and apply its EXIF orientation.

    ``reduce_to``: decode a large JPEG at a reduced size (Pillow's draft mode, a power-of-two
    reduction done by the JPEG decoder itself) whose long side is still at least this many pixels.
    ``max_decode_bytes``: refuse (``too_many_pixels``) an image whose decoding would take more memory
    than this (``decode_cost``, after any reduction): formats that cannot be decoded reduced (PNG, WebP,
    ...) get a lower pixel limit than JPEG this way. A decompression bomb Pillow itself refuses is
    ``too_many_pixels`` too.
    """
    name = "upload" if isinstance(source, bytes) else str(source)
    if isinstance(source, bytes):
        if not source:
            raise ImageError("not_an_image", f"{name}: the file is empty (0 bytes): choose the photo again")
        stream: io.BytesIO | Path = io.BytesIO(source)
    else:
        stream = Path(source)
        if not stream.is_file():
            raise ImageError("not_an_image", f"{name}: no such file")
    try:
        with Image.open(stream) as image:
            width, height = image.size
            if width * height > max_pixels:
                raise ImageError(
                    "too_many_pixels",
                    f"{name}: {width}x{height} is more than the {max_pixels:,} pixels allowed",
                )
            if reduce_to and image.format == "JPEG" and max(width, height) > 2 * reduce_to:
                # the decoder picks the largest reduction that keeps both sides at least this size
                fraction = reduce_to / max(width, height)
                image.draft("RGB", (round(width * fraction), round(height * fraction)))
            # before getexif(), which decodes a whole PNG to find an eXIf chunk after its pixels
            _check_budget(name, image, max_decode_bytes, (width, height), turned=False)
            orientation = image.getexif().get(0x0112, 1)
            if orientation not in (1, None):
                _check_budget(name, image, max_decode_bytes, (width, height), turned=True)
            image.load()
            pixels = upright(np.asarray(as_rgb(image)), orientation)
    except ImageError:
        raise
    except Image.DecompressionBombError:
        raise ImageError(
            "too_many_pixels", f"{name}: too many pixels to decode safely (a decompression bomb)"
        ) from None
    except (UnidentifiedImageError, ImportError):  # ImportError: a missing plugin (e.g. HEIF)
        raise ImageError("not_an_image", f"{name}: not an image (JPEG, PNG, WebP... expected)") from None
    except (OSError, SyntaxError, ValueError) as error:
        raise ImageError("corrupt_image", f"{name}: the image is truncated or corrupt", str(error)) from None
    full_size = (height, width) if orientation in (5, 6, 7, 8) else (width, height)
    return Photo(pixels, full_size)


# EXIF orientation -> how its stored pixels are turned upright (Pillow's ``ImageOps.exif_transpose``):
# a flip (cv2 flip code), a turn (cv2 rotate code), or a transpose, then a half turn for the transverse
_FLIPS = {2: 1, 4: 0}
_TURNS = {3: cv2.ROTATE_180, 6: cv2.ROTATE_90_CLOCKWISE, 8: cv2.ROTATE_90_COUNTERCLOCKWISE}


def upright(pixels: np.ndarray, orientation: int | None) -> np.ndarray:
    """``pixels`` as stored turned upright by their EXIF ``orientation`` (1-8), as Pillow's
    ``exif_transpose`` turns them: by OpenCV on the decoded array, in about a third of Pillow's time on a
    phone photo."""
    if orientation in _FLIPS:
        return cv2.flip(pixels, _FLIPS[orientation])
    if orientation in _TURNS:
        return cv2.rotate(pixels, _TURNS[orientation])
    if orientation == 5:
        return cv2.transpose(pixels)
    if orientation == 7:
        return cv2.rotate(cv2.transpose(pixels), cv2.ROTATE_180)
    return pixels
