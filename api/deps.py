"""The dependencies routes declare, each named once: ``SettingsDep``, ``DetectorDep``, ``PhotoUploadDep``,
``ContextFormDep``, ``PresetFormDep``, ``WorkersDep``.

Tests swap the detector with ``app.dependency_overrides[get_detector] = lambda: FakeDetector()`` and the
settings with ``app.dependency_overrides[get_settings]`` (or ``create_app(settings)``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Depends, File, Form, Request, UploadFile
from starlette.datastructures import UploadFile as StarletteUploadFile

from api.errors import ApiError, upload_too_large_message
from api.service import TileDetector
from api.settings import Settings, get_settings
from api.work import Workers
from scoring import Rules, WinContext, get_preset
from scoring.presets import DEFAULT_PRESET

SettingsDep = Annotated[Settings, Depends(get_settings)]


def get_detector(request: Request) -> TileDetector:
    """The detector the lifespan loaded; 503 when the weights could not be loaded."""
    detector: TileDetector | None = getattr(request.app.state, "detector", None)
    if detector is None:
        reason = getattr(request.app.state, "model_error", None) or "the detector is not loaded"
        raise ApiError(503, "model_not_loaded", f"photo recognition is unavailable: {reason}")
    return detector


DetectorDep = Annotated[TileDetector, Depends(get_detector)]


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

    The body itself is cut off while it arrives by ``errors.BodySizeLimit``; this is the exact check on
    the file part.
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


def context_form(
    self_drawn: Annotated[bool, Form(description="自摸")] = False,
    gang_shang_hua: Annotated[bool, Form(description="杠上花")] = False,
    gang_shang_pao: Annotated[bool, Form(description="杠上炮")] = False,
    qiang_gang: Annotated[bool, Form(description="抢杠胡")] = False,
    hai_di: Annotated[bool, Form(description="海底")] = False,
    tian_hu: Annotated[bool, Form(description="天胡")] = False,
    di_hu: Annotated[bool, Form(description="地胡")] = False,
    dealer: Annotated[bool, Form(description="the winner is the dealer")] = False,
    void_suit: Annotated[
        Literal["m", "p", "s"] | None, Form(description="定缺: the declared void suit")
    ] = None,
) -> WinContext:
    """The win context as form fields, next to a photo (same names as ``ContextIn``)."""
    return WinContext(
        self_drawn=self_drawn,
        gang_shang_hua=gang_shang_hua,
        gang_shang_pao=gang_shang_pao,
        qiang_gang=qiang_gang,
        hai_di=hai_di,
        tian_hu=tian_hu,
        di_hu=di_hu,
        dealer=dealer,
        void_suit=void_suit,
    )


ContextFormDep = Annotated[WinContext, Depends(context_form)]


def preset_form(
    preset: Annotated[str, Form(max_length=64, description="rules preset")] = DEFAULT_PRESET,
) -> Rules:
    """Raises ``UnknownPresetError`` (422)."""
    return get_preset(preset)


PresetFormDep = Annotated[Rules, Depends(preset_form)]
