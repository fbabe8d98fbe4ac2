"""Live reading (``api.live``): ``POST /api/v1/live`` opens a session for one phone, ``POST
/api/v1/live/{session}/frames`` reads one camera frame of it (multipart ``image``), ``DELETE
/api/v1/live/{session}`` ends it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Request, Response, UploadFile

from api.deps import DetectorDep, SettingsDep, WorkersDep, decode_upload, stored_tile_set
from api.errors import ApiError
from api.live import LiveSessions, frame_dropped
from api.routes import API_PREFIX, error_responses
from api.schemas.live import LiveFrameOut, LiveIn, LiveOut
from api.settings import Settings
from scoring import get_preset
from usecases.live import LiveReading
from vision.images import Photo
from vision.reading import Reader

router = APIRouter(prefix=API_PREFIX, tags=["live"])


def sessions(request: Request) -> LiveSessions:
    live: LiveSessions = request.app.state.live
    return live


def live_sessions(settings: Settings) -> LiveSessions:
    """The live sessions of one app, under ``settings``' limits."""
    return LiveSessions(
        settings.live_phones, settings.live_idle_s, settings.live_frame_interval_s, settings.model_workers
    )


@router.post(
    "/live",
    response_model=LiveOut,
    status_code=201,
    responses=error_responses(404, 422, 429, 503),
    summary="start reading a phone's camera live",
)
async def open_live(
    body: LiveIn, request: Request, detector: DetectorDep, settings: SettingsDep, workers: WorkersDep
) -> dict[str, Any]:
    """A session for one phone's frames: the win's context and preset score the hand once it is locked,
    ``set`` names the set on the table, ``hold`` the frames the reading must hold. 429 ``live_full`` when
    ``SMJ_LIVE_PHONES`` are live."""
    rules = get_preset(body.preset)
    faces = await stored_tile_set(body.set, settings, detector, workers) if body.set else None
    reading = LiveReading(rules, body.context.to_context(), body.hold, faces)
    key = sessions(request).open(reading)
    return {
        "session": key,
        "hold": body.hold,
        "max_side": settings.live_max_side,
        "max_bytes": settings.live_frame_bytes,
        "interval_s": settings.live_frame_interval_s,
        "idle_s": settings.live_idle_s,
    }


@router.post(
    "/live/{session}/frames",
    response_model=LiveFrameOut,
    responses=error_responses(404, 413, 415, 422, 429, 503),
    summary="read one camera frame of a live session",
)
async def live_frame(
    session: str,
    request: Request,
    image: Annotated[UploadFile, File(description="the frame: a JPEG (or PNG, WebP)")],
    detector: DetectorDep,
    settings: SettingsDep,
    workers: WorkersDep,
) -> dict[str, Any]:
    """The frame's tiles, the advice for a better one, how long the reading has held, and the hand and its
    score once locked (``usecases.live``). A frame that comes while this phone's last one is read, sooner
    than ``SMJ_LIVE_FRAME_INTERVAL_S`` after it, or while the server reads as many frames as it has model
    workers is dropped: 429 ``frame_dropped``, never queued. 404 ``no_live_session`` for a session that
    ended or idled out; 413 ``frame_too_large`` past ``SMJ_LIVE_FRAME_BYTES`` or ``SMJ_LIVE_MAX_SIDE``."""
    with sessions(request).frame(session) as reading:
        data = await image.read(settings.live_frame_bytes + 1)
        if len(data) > settings.live_frame_bytes:
            raise ApiError(
                413, "frame_too_large", f"a live frame may be {settings.live_frame_bytes:,} bytes at most"
            )
        photo = await decode_upload(data, workers, settings)
        width, height = photo.original_size
        if max(width, height) > settings.live_max_side:
            raise ApiError(
                413,
                "frame_too_large",
                f"a live frame's longest side may be {settings.live_max_side} px; this one is "
                f"{width}x{height}: scale it down before sending",
            )
        return await workers.model(_read_frame, reading, photo, detector, settings.conf)


def _read_frame(reading: LiveReading, photo: Photo, detector: Reader, conf: float) -> dict[str, Any]:
    """One frame read in the model pool; a frame whose reading is still running (its request cut off by the
    time limit, its worker finishing alone) drops this one."""
    if not reading.lock.acquire(blocking=False):
        raise frame_dropped("this phone's last frame is still being read")
    try:
        return reading.frame(photo, detector, conf)
    finally:
        reading.lock.release()


@router.delete(
    "/live/{session}", status_code=204, responses=error_responses(404), summary="end a live session"
)
async def close_live(session: str, request: Request) -> Response:
    sessions(request).close(session)
    return Response(status_code=204)
