"""The dependencies routes declare, each named once: ``SettingsDep``, ``DetectorDep``, ``PhotoUploadDep``,
``ContextFormDep``, ``PresetFormDep``, ``WorkersDep``, ``StoreDep``, ``TileSetFormDep``.

Tests swap the detector with ``app.dependency_overrides[get_detector] = lambda: FakeDetector()`` and the
settings with ``app.dependency_overrides[get_settings]`` (or ``create_app(settings)``).
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal

from fastapi import Depends, File, Form, Request, UploadFile
from starlette.datastructures import UploadFile as StarletteUploadFile

from api.errors import ApiError, store_unavailable, upload_too_large_message
from api.schemas import VOID_SUIT_HELP
from api.settings import Settings, get_settings
from api.work import Workers
from scoring import Rules, WinContext, get_preset
from scoring.conditions import WIN_CONDITIONS
from scoring.presets import DEFAULT_PRESET, PRESETS
from store import Store, StoreError, open_store
from usecases.sets import tile_set
from vision.detect.classifier import TileClassifier
from vision.detect.tileset import TileSet
from vision.images import Photo
from vision.pipeline import decode_photo
from vision.reading import Reader, SetReader

SettingsDep = Annotated[Settings, Depends(get_settings)]


def get_detector(request: Request) -> Reader:
    """The detector the lifespan loaded; 503 when the weights could not be loaded."""
    detector: Reader | None = getattr(request.app.state, "detector", None)
    if detector is None:
        reason = getattr(request.app.state, "model_error", None) or "the detector is not loaded"
        raise ApiError(503, "model_not_loaded", f"photo recognition is unavailable: {reason}")
    return detector


DetectorDep = Annotated[Reader, Depends(get_detector)]


def get_workers(request: Request) -> Workers:
    """The thread pools ``create_app`` made (``api.work``)."""
    workers: Workers = request.app.state.workers
    return workers


WorkersDep = Annotated[Workers, Depends(get_workers)]


async def read_photo_upload(
    request: Request,
    settings: SettingsDep,
    image: Annotated[UploadFile, File(description="the photo: JPEG, PNG, WebP, HEIF is not supported")],
) -> bytes:
    """The uploaded photo's bytes, at most ``SMJ_MAX_UPLOAD_BYTES`` (413 beyond); a request carrying
    more than one file is a 422 ``too_many_files`` (which one to read would be a guess).

    The body itself is cut off while it arrives by ``api.middleware.BodySizeLimit``; this is the exact check
    on the file part.
    """
    form = await request.form()  # parsed once: FastAPI read the same form
    files = [name for name, value in form.multi_items() if isinstance(value, StarletteUploadFile)]
    if len(files) > 1:
        names = ", ".join(sorted({repr(name[:40]) for name in files}))
        raise ApiError(
            422,
            "too_many_files",
            f"the request carries {len(files)} files ({names}): send one photo, as 'image'",
        )
    data = await image.read(settings.max_upload_bytes + 1)
    if len(data) > settings.max_upload_bytes:
        raise ApiError(413, "upload_too_large", upload_too_large_message(settings.max_upload_bytes))
    return data


PhotoUploadDep = Annotated[bytes, Depends(read_photo_upload)]


def context_form(**fields: Any) -> WinContext:
    """The win context as form fields, next to a photo: the fields of ``ContextIn``, one per win
    condition (``scoring.conditions.WIN_CONDITIONS``) and ``void_suit``."""
    return WinContext(**fields)


# FastAPI reads the form fields from the signature: one per win condition, then the void suit.
context_form.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        inspect.Parameter(
            condition.key,
            inspect.Parameter.KEYWORD_ONLY,
            default=False,
            annotation=Annotated[bool, Form(description=condition.describe())],
        )
        for condition in WIN_CONDITIONS
    ]
    + [
        inspect.Parameter(
            "void_suit",
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[Literal["m", "p", "s"] | None, Form(description=VOID_SUIT_HELP)],
        )
    ],
    return_annotation=WinContext,
)


ContextFormDep = Annotated[WinContext, Depends(context_form)]


def preset_form(
    preset: Annotated[
        str, Form(max_length=64, description="rules preset", json_schema_extra={"enum": list(PRESETS)})
    ] = DEFAULT_PRESET,
) -> Rules:
    """Raises ``UnknownPresetError`` (422)."""
    return get_preset(preset)


PresetFormDep = Annotated[Rules, Depends(preset_form)]


def get_store(settings: SettingsDep) -> Store:
    """The store (``SMJ_DATABASE_URL``), as the start-up opened and upgraded it; where that failed, opened now
    without upgrading (a request never upgrades it). 503 ``store_unavailable`` with ``Retry-After`` when it
    can't be: the database named in the server's log, never to the client."""
    try:
        return open_store(settings.database_url, upgrade=False)
    except StoreError as error:
        raise store_unavailable(error) from None


StoreDep = Annotated[Store, Depends(get_store)]


async def tile_set_form(
    settings: SettingsDep,
    detector: DetectorDep,
    workers: WorkersDep,
    name: Annotated[
        str | None,
        Form(alias="set", max_length=64, description="the set on the table (POST /api/v1/sets) to read with"),
    ] = None,
) -> TileSet | None:
    """The stored set named by the form field ``set`` (``stored_tile_set``); None without one."""
    return await stored_tile_set(name, settings, detector, workers) if name else None


async def stored_tile_set(name: str, settings: Settings, detector: Reader, workers: Workers) -> TileSet:
    """The stored set ``name`` as the detector's classifier reads it. 404 ``no_such_set``; 422 when this
    detector reads no sets."""
    classifier = set_classifier(detector)
    return await workers.hands(tile_set, get_store(settings), name, classifier)


TileSetFormDep = Annotated[TileSet | None, Depends(tile_set_form)]


def set_reader(detector: Reader) -> SetReader:
    """The detector as a reader of sets (``vision.reading.SetReader``); 422 ``sets_unsupported`` for one
    that reads none (the fake, or weights whose classifier gives no features)."""
    from vision.detect.detector import ModelError

    try:
        if not isinstance(detector, SetReader):
            raise ModelError("this detector reads no tile sets")
        detector.set_classifier()
    except ModelError:
        raise ApiError(422, "sets_unsupported", "this server's detector reads no tile sets") from None
    return detector


def set_classifier(detector: Reader) -> TileClassifier:
    """The classifier of a detector that reads sets (``set_reader``)."""
    return set_reader(detector).set_classifier()


async def decode_upload(data: bytes, workers: Workers, settings: Settings) -> Photo:
    """An upload decoded as the reader reads it (``vision.pipeline.decode_photo``: a large JPEG reduced by the
    decoder itself), in the decode pool, under the service's pixel and decoding-memory limits; raises
    ``ImageError`` (not_an_image, corrupt_image, too_many_pixels). A photo saved as an example is decoded so
    too: one the reader reads is never too large to save."""
    return await workers.decode(
        decode_photo, data, max_pixels=settings.max_pixels, max_decode_bytes=settings.max_decode_bytes
    )
