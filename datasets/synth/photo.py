"""What a phone camera does to a scene: uneven light, colour cast, glare, blur, noise and JPEG artefacts.

None of these moves a pixel (no warps, no flips), so the labels computed before stay exact.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class PhotoParams:
    gains: tuple[float, float, float]  # white balance
    exposure: float
    gradient: tuple[float, float, float]  # a, b, c of 1 + a*x + b*y (x, y in -1..1), plus vignette c
    glare: tuple[float, float, float, float] | None  # x, y (0..1), radius (fraction), strength
    blur_sigma: float
    motion: tuple[float, float] | None  # length px, angle degrees
    resample: float  # < 1: downscale then upscale
    noise_sigma: float
    chroma_noise: float
    precompress: int | None  # JPEG quality of an earlier compression
    gamma: float
    saturation: float
    jpeg_quality: int  # for the written file

    @property
    def blur_px(self) -> float:
        """The photo's blur as one Gaussian sigma in pixels: focus, shake (a streak L pixels long spreads as
        sigma L / sqrt 12; ``_blur`` draws it over an odd number of pixels) and a low-resolution pass
        (shrunk by r: about 0.5 (1 / r - 1)), combined."""
        motion = 0.0 if self.motion is None else _streak_px(self.motion[0]) / math.sqrt(12.0)
        resample = 0.5 * (1.0 / self.resample - 1.0)
        return math.sqrt(self.blur_sigma**2 + motion**2 + resample**2)

    def to_json(self) -> dict[str, object]:
        """What bears on a tile's legibility, for ``scenes.jsonl``."""
        return {
            "blur_px": round(self.blur_px, 2),
            "blur_sigma": round(self.blur_sigma, 2),
            "motion_px": 0.0 if self.motion is None else round(self.motion[0], 1),
            "resample": round(self.resample, 2),
            "noise_sigma": round(self.noise_sigma, 1),
            "precompress": self.precompress,
            "jpeg_quality": self.jpeg_quality,
        }


def random_photo_params(rng: np.random.Generator) -> PhotoParams:
    warm = rng.normal(0, 0.05)
    glare = None
    if rng.random() < 0.25:
        glare = (
            float(rng.uniform(0, 1)),
            float(rng.uniform(0, 1)),
            float(rng.uniform(0.1, 0.35)),
            float(rng.uniform(0.1, 0.45)),
        )
    motion = None
    if rng.random() < 0.15:
        motion = (float(rng.uniform(2, 7)), float(rng.uniform(0, 180)))
    return PhotoParams(
        gains=(
            float(1 + warm + rng.normal(0, 0.02)),
            float(1 + rng.normal(0, 0.02)),
            float(1 - warm + rng.normal(0, 0.02)),
        ),
        exposure=float(np.exp(rng.normal(0, 0.18))),
        gradient=(float(rng.normal(0, 0.12)), float(rng.normal(0, 0.12)), float(rng.uniform(0, 0.35))),
        glare=glare,
        blur_sigma=float(rng.choice([0.0, rng.uniform(0.3, 0.9), rng.uniform(0.9, 1.8)], p=(0.3, 0.5, 0.2))),
        motion=motion,
        resample=float(rng.uniform(0.45, 0.85)) if rng.random() < 0.2 else 1.0,
        noise_sigma=float(rng.uniform(1.0, 7.0)),
        chroma_noise=float(rng.uniform(0.0, 3.0)),
        precompress=int(rng.integers(35, 85)) if rng.random() < 0.3 else None,
        gamma=float(rng.uniform(0.85, 1.15)),
        saturation=float(rng.uniform(0.75, 1.25)),
        jpeg_quality=int(rng.integers(68, 96)),
    )


def plain_photo_params() -> PhotoParams:
    """No effects at all (tests, debugging)."""
    return PhotoParams(
        (1.0, 1.0, 1.0), 1.0, (0.0, 0.0, 0.0), None, 0.0, None, 1.0, 0.0, 0.0, None, 1.0, 1.0, 95
    )


def photograph(image: np.ndarray, params: PhotoParams, rng: np.random.Generator) -> np.ndarray:
    """Apply the camera's effects to an RGB uint8 image; returns a new RGB uint8 image.

    Works on uint8 with saturating cv2 arithmetic (fast); ``rng`` seeds the noise.
    """
    height, width = image.shape[:2]
    field = _light_field(width, height, params)  # (h, w, 3) uint8, 128 = 1.0
    result = cv2.multiply(image, field, scale=1 / 128.0)
    if params.glare is not None:
        gx, gy, radius, strength = params.glare
        blob = _blob(width, height, gx, gy, radius) * (255 * strength)
        result = cv2.add(result, cv2.merge([blob.astype(np.uint8)] * 3))
    if params.saturation != 1.0:
        grey = cv2.cvtColor(cv2.cvtColor(result, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
        result = cv2.addWeighted(result, params.saturation, grey, 1 - params.saturation, 0)
    if params.gamma != 1.0:
        lut = np.clip(255 * (np.arange(256) / 255.0) ** params.gamma + 0.5, 0, 255).astype(np.uint8)
        result = cv2.LUT(result, lut)
    result = _blur(result, params)
    if params.resample < 1.0:
        small = cv2.resize(
            result,
            (max(1, int(width * params.resample)), max(1, int(height * params.resample))),
            interpolation=cv2.INTER_AREA,
        )
        result = cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
    result = _noise(result, params, rng)
    if params.precompress is not None:
        ok, data = cv2.imencode(".jpg", result, [cv2.IMWRITE_JPEG_QUALITY, params.precompress])
        decoded = cv2.imdecode(data, cv2.IMREAD_UNCHANGED) if ok else None
        if decoded is not None:
            result = decoded
    return np.asarray(result)


def _light_field(width: int, height: int, params: PhotoParams) -> np.ndarray:
    a, b, vignette = params.gradient
    xs = np.linspace(-1, 1, 32, dtype=np.float32)
    ys = np.linspace(-1, 1, 24, dtype=np.float32)
    gx, gy = np.meshgrid(xs, ys)
    small = np.clip((1 + a * gx + b * gy) * (1 - vignette * 0.5 * (gx * gx + gy * gy)), 0.3, 1.6)
    field = small[..., None] * (np.asarray(params.gains, np.float32) * params.exposure)
    field = np.clip(field * 128 + 0.5, 0, 255).astype(np.uint8)
    return cv2.resize(field, (width, height), interpolation=cv2.INTER_LINEAR)


def _blob(width: int, height: int, x: float, y: float, radius: float) -> np.ndarray:
    xs = np.linspace(0, 1, 64, dtype=np.float32)
    ys = np.linspace(0, 1, 48, dtype=np.float32)
    gx, gy = np.meshgrid(xs, ys)
    aspect = width / height
    small = np.exp(-(((gx - x) * aspect) ** 2 + (gy - y) ** 2) / (2 * radius * radius))
    return cv2.resize(small.astype(np.float32), (width, height), interpolation=cv2.INTER_LINEAR)


def _streak_px(length: float) -> int:
    """The pixels a shake of ``length`` is drawn over: an odd kernel, so that it stays centred."""
    return math.ceil(length) | 1


def _blur(image: np.ndarray, params: PhotoParams) -> np.ndarray:
    if params.motion is not None:
        length, angle = params.motion
        size = _streak_px(length)
        line = np.zeros((size, size), np.float32)
        line[size // 2, :] = 1
        rotation = cv2.getRotationMatrix2D((size / 2 - 0.5, size / 2 - 0.5), angle, 1.0)
        kernel = np.asarray(cv2.warpAffine(line, rotation, (size, size)), np.float32)
        kernel /= max(kernel.sum(), 1e-6)
        image = cv2.filter2D(image, -1, kernel)
    if params.blur_sigma > 0.05:
        image = cv2.GaussianBlur(image, (0, 0), params.blur_sigma)
    return image


_BANK_SCALE = 64.0


@functools.cache
def _noise_bank(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Fixed fields of unit Gaussian noise (grey and colour, int16 scaled by 64), drawn once per process."""
    rng = np.random.default_rng(0x5EED)
    luma = rng.standard_normal((height, width), dtype=np.float32) * _BANK_SCALE
    chroma = rng.standard_normal((height, width, 3), dtype=np.float32) * _BANK_SCALE
    return luma.astype(np.int16), chroma.astype(np.int16)


def _noise(image: np.ndarray, params: PhotoParams, rng: np.random.Generator) -> np.ndarray:
    """Sensor noise at half resolution, smoothly enlarged (phone noise is not per-pixel white).

    A random window of fixed noise fields: as good as fresh noise for a detector, and much cheaper.
    """
    if params.noise_sigma <= 0 and params.chroma_noise <= 0:
        return image
    height, width = image.shape[:2]
    h, w = height // 2 + 1, width // 2 + 1
    luma_bank, chroma_bank = _noise_bank(h + 256, w + 256)
    y, x = (int(v) for v in rng.integers(0, 256, 2))
    luma = luma_bank[y : y + h, x : x + w]
    chroma = chroma_bank[y : y + h, x : x + w]
    small = cv2.addWeighted(
        cv2.merge([luma] * 3),
        params.noise_sigma * 1.4 / _BANK_SCALE,
        chroma,
        params.chroma_noise / _BANK_SCALE,
        0,
        dtype=cv2.CV_16S,
    )
    noise = cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
    return np.asarray(cv2.add(image, noise, dtype=cv2.CV_8U))
