"""Reading photos: bytes or a path in, an upright RGB array out, with a clear error for bad input.

EXIF orientation is applied here, once, so every later stage (detector, grouper, annotations, saved
labels) works in the coordinates of the photo as a person sees it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

DEFAULT_MAX_PIXELS = 50_000_000  # a 48 MP phone photo still loads; a decompression bomb does not


class ImageError(ValueError):
    """The input is not a usable image. ``code`` is one of: not_an_image, corrupt_image, too_many_pixels."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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


def load_photo(
    source: bytes | str | Path, *, max_pixels: int = DEFAULT_MAX_PIXELS, reduce_to: int | None = None
) -> Photo:
    """Decode a photo and apply its EXIF orientation.

    ``reduce_to``: decode a large JPEG at a reduced size (Pillow's draft mode, a power-of-two
    reduction done by the JPEG decoder itself) whose long side is still at least this many pixels.
    """
    name = "upload" if isinstance(source, bytes) else str(source)
    if isinstance(source, bytes):
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
            orientation = image.getexif().get(0x0112, 1)
            if reduce_to and image.format == "JPEG" and max(width, height) > 2 * reduce_to:
                # the decoder picks the largest reduction that keeps both sides at least this size
                fraction = reduce_to / max(width, height)
                image.draft("RGB", (round(width * fraction), round(height * fraction)))
            image.load()
            upright = ImageOps.exif_transpose(image) if orientation != 1 else image
            rgb = upright.convert("RGB")
    except ImageError:
        raise
    except (UnidentifiedImageError, ImportError):  # ImportError: a missing plugin (e.g. HEIF)
        raise ImageError("not_an_image", f"{name}: not an image (JPEG, PNG, WebP... expected)") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as error:
        raise ImageError("corrupt_image", f"{name}: the image is truncated or corrupt ({error})") from None
    full_size = (height, width) if orientation in (5, 6, 7, 8) else (width, height)
    return Photo(np.asarray(rgb), full_size)
