"""Decoding photos: EXIF orientation, reduced decoding, and clear errors for bad input."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision.detect.letterbox import letterbox, unletterbox
from vision.images import ImageError, decode_cost, load_photo

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hand.jpg"


def _jpeg(width: int, height: int, orientation: int | None = None) -> bytes:
    """A JPEG whose top-left quarter is red, so orientation can be checked by colour."""
    pixels = np.full((height, width, 3), 255, np.uint8)
    pixels[: height // 2, : width // 2] = (255, 0, 0)
    image = Image.fromarray(pixels)
    out = io.BytesIO()
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    image.save(out, "JPEG", quality=95, exif=exif.tobytes())
    return out.getvalue()


def test_plain_photo_keeps_its_size() -> None:
    photo = load_photo(_jpeg(64, 48))
    assert photo.size == (64, 48)
    assert photo.original_size == (64, 48)
    assert photo.scale == 1
    assert tuple(photo.pixels[5, 5]) == pytest.approx((255, 0, 0), abs=8)


@pytest.mark.parametrize(
    ("orientation", "red_corner"),
    [(1, (0, 0)), (3, (1, 1)), (6, (0, 1)), (8, (1, 0))],
    ids=["upright", "rotated-180", "rotated-90-cw", "rotated-90-ccw"],
)
def test_exif_orientation_is_applied(orientation: int, red_corner: tuple[int, int]) -> None:
    photo = load_photo(_jpeg(80, 40, orientation))
    expected_size = (40, 80) if orientation in (6, 8) else (80, 40)
    assert photo.size == expected_size
    assert photo.original_size == expected_size
    height, width = photo.pixels.shape[:2]
    row = 3 if red_corner[0] == 0 else height - 4
    col = 3 if red_corner[1] == 0 else width - 4
    assert photo.pixels[row, col, 1] < 60, "the red quarter should have moved with the orientation"


def test_reduced_decode_of_a_large_jpeg_reports_its_scale() -> None:
    photo = load_photo(_jpeg(2400, 1600, 6), reduce_to=500)
    assert photo.original_size == (1600, 2400)
    assert max(photo.size) < 2400
    assert max(photo.size) >= 500
    assert photo.scale == pytest.approx(1600 / photo.size[0])


@pytest.mark.parametrize(
    ("payload", "code", "said"),
    [
        (b"this is not an image", "not_an_image", "not an image"),
        (b"", "not_an_image", "the file is empty"),
        (_jpeg(64, 48)[:300], "corrupt_image", "truncated or corrupt"),
    ],
    ids=["text", "empty", "truncated"],
)
def test_bad_bytes_raise_a_clear_error(payload: bytes, code: str, said: str) -> None:
    with pytest.raises(ImageError) as caught:
        load_photo(payload)
    assert caught.value.code == code
    assert said in caught.value.message


def test_too_many_pixels_is_refused_before_decoding() -> None:
    with pytest.raises(ImageError) as caught:
        load_photo(_jpeg(400, 300), max_pixels=100_000)
    assert caught.value.code == "too_many_pixels"
    assert "400x300" in caught.value.message


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png(width: int, height: int, colour_type: int, rows: bytes, depth: int = 16) -> bytes:
    """A PNG written by hand (Pillow writes no 16-bit RGB): ``rows`` already filtered."""
    header = struct.pack(">IIBBBBB", width, height, depth, colour_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(rows))
        + _png_chunk(b"IEND", b"")
    )


def test_a_16_bit_grey_photo_keeps_its_tones() -> None:
    """Pillow opens it as I;16, whose convert("RGB") would clip every pixel to white."""
    grey = np.asarray(Image.open(EXAMPLE).convert("L"))
    out = io.BytesIO()
    Image.fromarray(grey.astype(np.uint16) * 257).save(out, "PNG")
    assert Image.open(io.BytesIO(out.getvalue())).mode == "I;16"
    photo = load_photo(out.getvalue())
    assert photo.size == (grey.shape[1], grey.shape[0])
    assert np.abs(photo.pixels[..., 0].astype(int) - grey).max() <= 1
    assert (photo.pixels[..., 0] == photo.pixels[..., 2]).all()


def test_a_16_bit_colour_photo_keeps_its_colours() -> None:
    rgb = np.asarray(Image.open(EXAMPLE).convert("RGB"))
    height, width = rgb.shape[:2]
    wide = (rgb.astype(">u2") * 257).reshape(height, width * 3)
    rows = b"".join(b"\x00" + row.tobytes() for row in wide)  # filter type 0 on every row
    photo = load_photo(_png(width, height, 2, rows))
    assert np.abs(photo.pixels.astype(int) - rgb).max() <= 1


def test_a_decompression_bomb_is_too_many_pixels() -> None:
    """A header of 40000x40000 (1.6 GP): Pillow refuses it on open, before any pixel is read."""
    bomb = _png(40_000, 40_000, 0, b"\x00" * 10, depth=1)
    with pytest.raises(ImageError) as caught:
        load_photo(bomb, max_pixels=10**10)
    assert caught.value.code == "too_many_pixels"


def test_decoding_stays_within_a_memory_budget() -> None:
    """A PNG cannot be decoded reduced: it meets the budget at fewer pixels than a JPEG, which is."""
    pixels = np.zeros((1500, 2000, 3), np.uint8)
    png = io.BytesIO()
    Image.fromarray(pixels).save(png, "PNG")
    budget = decode_cost("RGB", (2000, 1500)) - 1
    with pytest.raises(ImageError) as caught:
        load_photo(png.getvalue(), max_decode_bytes=budget, reduce_to=400)
    assert caught.value.code == "too_many_pixels" and "2000x1500 PNG" in caught.value.message
    photo = load_photo(_jpeg(2000, 1500), max_decode_bytes=budget, reduce_to=400)
    assert photo.original_size == (2000, 1500) and max(photo.size) < 2000
    assert load_photo(png.getvalue(), max_decode_bytes=budget + 1).size == (2000, 1500)


def test_a_png_over_the_budget_is_refused_before_any_pixel_is_decoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pillow's getexif() decodes a whole PNG (its eXIf chunk may follow the pixels): the budget comes
    first, so a 143 KB PNG of 7000x7000 costs nothing."""
    from PIL import PngImagePlugin

    def no_decoding(self: object) -> None:
        raise AssertionError("the PNG was decoded")

    monkeypatch.setattr(PngImagePlugin.PngImageFile, "load", no_decoding)
    out = io.BytesIO()
    Image.new("RGB", (1000, 1000)).save(out, "PNG")
    with pytest.raises(ImageError) as caught:
        load_photo(out.getvalue(), max_decode_bytes=1_000_000)
    assert caught.value.code == "too_many_pixels"


def test_the_decode_cost_counts_pillows_storage_and_the_copies() -> None:
    # the decoded image, its turned copy, the conversion to RGB, and the RGB bytes with the array made of them
    assert decode_cost("RGB", (10, 10)) == 100 * (4 + 6)
    assert decode_cost("L", (10, 10)) == 100 * (1 + 4 + 6)
    assert decode_cost("I;16", (10, 10), turned=True) == 100 * (2 + 2 + 10 + 6)


def test_missing_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(ImageError, match="no such file"):
        load_photo(tmp_path / "nothing.jpg")


@pytest.mark.parametrize("shape", [(480, 640), (640, 480), (300, 1000), (1000, 300), (640, 640)])
def test_letterbox_round_trip_maps_boxes_back(shape: tuple[int, int]) -> None:
    height, width = shape
    pixels = np.zeros((height, width, 3), np.uint8)
    square, gain, pad = letterbox(pixels, 320)
    assert square.shape == (320, 320, 3)
    original = np.array([[10, 20, 110, 220], [width - 50, height - 40, width, height]], np.float32)
    in_square = original * gain
    in_square[:, [0, 2]] += pad[0]
    in_square[:, [1, 3]] += pad[1]
    back = unletterbox(in_square, gain, pad, width, height)
    np.testing.assert_allclose(back, original, atol=1.0)
    # the picture itself sits where the padding says
    assert square[int(pad[1]) + 1, int(pad[0]) + 1].tolist() == [0, 0, 0]


@pytest.mark.parametrize("mode", ["I;16", "I", "F", "L", "P"])
def test_the_decode_budget_counts_what_turning_an_image_to_rgb_takes(mode: str) -> None:
    """The arrays ``as_rgb`` makes (traced) and Pillow's images (the decoded one, its L and RGB forms) fit in
    ``decode_cost``: a 16-bit or 32-bit image is no longer counted at half its real cost."""
    import tracemalloc

    from vision.images import STORAGE, as_rgb, decode_cost

    rng = np.random.default_rng(0)
    size = (1000, 750)
    if mode == "I;16":
        image = Image.frombytes("I;16", size, rng.integers(0, 65535, size[::-1], dtype=np.uint16).tobytes())
    elif mode == "I":
        image = Image.fromarray(rng.integers(0, 65535, size[::-1]).astype(np.int32))
    elif mode == "F":
        image = Image.fromarray(rng.random(size[::-1]).astype(np.float32))
    else:
        image = Image.fromarray(rng.integers(0, 255, size[::-1], dtype=np.uint8)).convert(mode)
    tracemalloc.start()
    pixels = np.asarray(as_rgb(image))
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    as_l = 0 if mode in ("L", "P") else 1
    pillow = size[0] * size[1] * (STORAGE.get(mode, 4) + as_l + 4)  # the decoded image, as L, as RGB
    assert pixels.shape == (size[1], size[0], 3)
    assert traced + pillow <= decode_cost(mode, size) + 65_536  # and a few Python objects' bytes


@pytest.mark.parametrize("orientation", range(1, 9))
def test_every_exif_orientation_turns_the_pixels_as_pillow_does(orientation: int) -> None:
    from PIL import ImageOps

    stored = np.random.default_rng(orientation).integers(0, 256, (30, 50, 3), np.uint8)
    exif = Image.Exif()
    exif[0x0112] = orientation
    out = io.BytesIO()
    Image.fromarray(stored).save(out, "PNG", exif=exif.tobytes())  # lossless: the pixels compare exactly
    photo = load_photo(out.getvalue())
    with Image.open(io.BytesIO(out.getvalue())) as image:
        expected = np.asarray(ImageOps.exif_transpose(image).convert("RGB"))
    np.testing.assert_array_equal(photo.pixels, expected)
    assert photo.original_size == (expected.shape[1], expected.shape[0])
