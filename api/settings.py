"""The service's settings, read from the environment (prefix ``SMJ_``) once, by ``get_settings()``.

===========================  =========================================  ======================================
variable                     meaning                                    default
===========================  =========================================  ======================================
``SMJ_WEIGHTS``              detector weights (.onnx)                   ``models/tiles.onnx`` of this project
``SMJ_CLASSIFIER``           tile classifier weights (.onnx)            ``models/tile_faces.onnx``
``SMJ_CONF``                 detection confidence threshold             0.55
``SMJ_MAX_UPLOAD_BYTES``     largest photo accepted (413 above)         15 MB (15,000,000 bytes)
``SMJ_MAX_PIXELS``           largest photo in pixels (413 above)        50,000,000
``SMJ_MAX_JSON_BYTES``       largest JSON body (413 before parsing)     128 KB (128,000 bytes)
``SMJ_MAX_DECODE_BYTES``     memory one decode may take (413 above;     100 MB (100,000,000 bytes)
                             a JPEG is decoded reduced, a PNG is not)
``SMJ_DECODE_WORKERS``       photos decoded at once                     2
``SMJ_MODEL_WORKERS``        detector / classifier runs at once         2
``SMJ_HAND_WORKERS``         hands scored, grouped or settled at once   4
``SMJ_MODEL_THREADS``        threads one model call uses                the manifest's (one per core); ``smj
                                                                        serve --workers N`` divides them by N
``SMJ_REQUEST_TIMEOUT_S``    time limit of a request (503 after)        30 seconds
``SMJ_HEAD_TIMEOUT_S``       time a request's head may take to arrive   10 seconds
                             (the connection is closed after)
``SMJ_DATASET_DIR``          where ``/api/v1/examples`` saves photos    ``smj/corrections`` in the user's data
                                                                        folder (``$XDG_DATA_HOME``, else
                                                                        ``~/.local/share``)
``SMJ_SAVE_EXAMPLES``        ``auto``: saving only for requests that    ``auto``
                             reach a loopback address (a local ``smj
                             serve``); ``on``; ``off``
``SMJ_EXAMPLES_TOKEN``       when set, every save must send it (form    none
                             field ``token`` or ``X-SMJ-Token``), from
                             any address (unless ``off``)
``SMJ_MAX_EXAMPLES``         examples the folder takes (507 after)      2,000
``SMJ_MAX_EXAMPLES_BYTES``   bytes its images and labels may hold       2 GB (2,000,000,000 bytes)
``SMJ_DATABASE_URL``         the store: tile sets (a SQLAlchemy URL,    ``smj.db`` (SQLite) in the user's data
                             e.g. ``postgresql+psycopg://...``)         folder
``SMJ_ALLOWED_ORIGINS``      CORS origins, comma-separated or JSON      none (the page is served same-origin)
``SMJ_LIVE_PHONES``          phones reading live at once (429 after)    4
``SMJ_LIVE_IDLE_S``          a live session unused this long ends       60 seconds
``SMJ_LIVE_FRAME_INTERVAL_S`` least time between a phone's frames       0.1 seconds (10 frames a second)
``SMJ_LIVE_MAX_SIDE``        a live frame's longest side (413 above)    1280 pixels
``SMJ_LIVE_FRAME_BYTES``     a live frame's largest upload (413 above)  2 MB (2,000,000 bytes)
===========================  =========================================  ======================================

A relative path is taken from the working directory.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from store.database import user_data_dir

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SMJ_", extra="ignore", frozen=True)

    weights: Path = Field(default=PROJECT_ROOT / "models" / "tiles.onnx", description="detector weights file")
    classifier: Path = Field(
        default=PROJECT_ROOT / "models" / "tile_faces.onnx", description="tile classifier weights file"
    )
    conf: float = Field(default=0.55, gt=0, le=1, description="detection confidence threshold")
    max_upload_bytes: int = Field(default=15 * MB, gt=0, description="largest photo upload, in bytes")
    max_pixels: int = Field(default=50_000_000, gt=0, description="largest photo, in pixels (width x height)")
    max_json_bytes: int = Field(
        default=128_000, gt=0, description="largest JSON body (a hand, a round, a table event), in bytes"
    )
    max_decode_bytes: int = Field(
        default=100 * MB, gt=0, description="memory one photo's decoding may take, in bytes"
    )
    decode_workers: int = Field(default=2, ge=1, le=64, description="photos decoded at once")
    model_workers: int = Field(default=2, ge=1, le=64, description="detector runs at once")
    hand_workers: int = Field(default=4, ge=1, le=64, description="JSON hands handled at once")
    model_threads: int = Field(
        default=0, ge=0, le=256, description="threads one model call uses; 0: the manifest's runtime settings"
    )
    request_timeout_s: float = Field(default=30.0, gt=0, le=3600, description="time limit of a request")
    head_timeout_s: float = Field(
        default=10.0, gt=0, le=300, description="time a request's head may take to arrive (closed after)"
    )
    dataset_dir: Path = Field(
        default_factory=lambda: user_data_dir() / "corrections", description="saved examples"
    )
    save_examples: Literal["auto", "on", "off"] = Field(
        default="auto", description="auto: saving only for requests reaching a loopback address"
    )
    examples_token: SecretStr | None = Field(default=None, description="a save must send this token")
    max_examples: int = Field(default=2_000, ge=0, description="examples the folder takes")
    max_examples_bytes: int = Field(default=2_000 * MB, ge=0, description="bytes the saved examples may hold")
    database_url: str | None = Field(
        default=None, description="the store (tile sets): a SQLAlchemy URL; default a SQLite file"
    )
    live_phones: int = Field(default=4, ge=0, le=1000, description="phones reading live at once")
    live_idle_s: float = Field(
        default=60.0, gt=0, le=3600, description="a live session unused this long ends"
    )
    live_frame_interval_s: float = Field(
        default=0.1, ge=0, le=60, description="least time between a live phone's frames"
    )
    live_max_side: int = Field(default=1280, ge=64, le=8192, description="a live frame's longest side")
    live_frame_bytes: int = Field(default=2 * MB, gt=0, description="a live frame's largest upload, in bytes")
    allowed_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="origins allowed by CORS; empty: same-origin only"
    )
    trusted_proxies: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="addresses of the reverse proxies whose X-Forwarded-For names the client (limits key on "
        "it); empty: the peer that connected is the client, and forwarding headers are ignored",
    )

    @field_validator("allowed_origins", "trusted_proxies", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        """Accept ``a,b`` as well as a JSON list ``["a", "b"]``."""
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                import json

                return json.loads(text)
            return [origin.strip() for origin in text.split(",") if origin.strip()]
        return value


@lru_cache
def get_settings() -> Settings:
    """The settings of this process, read from the environment on first use."""
    return Settings()
