"""Photo endpoints: ``POST /api/v1/recognize`` and ``POST /api/v1/score-photo`` (multipart)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api.deps import (
    ContextFormDep,
    DetectorDep,
    PhotoUploadDep,
    PresetFormDep,
    SettingsDep,
    TileSetFormDep,
    WorkersDep,
    decode_upload,
)
from api.routes import API_PREFIX, error_responses
from api.schemas import RecognizeOut, ScorePhotoOut
from usecases import photos

router = APIRouter(prefix=API_PREFIX, tags=["photos"], responses=error_responses(404, 413, 415, 422, 503))


@router.post("/recognize", response_model=RecognizeOut, summary="detect and group the tiles in a photo")
async def recognize(
    data: PhotoUploadDep,
    detector: DetectorDep,
    settings: SettingsDep,
    workers: WorkersDep,
    tile_set: TileSetFormDep,
) -> dict[str, Any]:
    """The detections (boxes in pixels of the upright photo, ``width`` x ``height``), the hand they
    group into, the groups for drawing, and the grouper's warnings; faces read with the form field
    ``set`` (a stored set's name) when given."""
    photo = await decode_upload(data, workers, settings)
    return await workers.model(photos.recognition_json, photo, detector, settings.conf, tile_set)


@router.post("/score-photo", response_model=ScorePhotoOut, summary="recognize a photo and score its hand")
async def score_photo(
    data: PhotoUploadDep,
    detector: DetectorDep,
    context: ContextFormDep,
    rules: PresetFormDep,
    settings: SettingsDep,
    workers: WorkersDep,
    tile_set: TileSetFormDep,
) -> dict[str, Any]:
    """As ``recognize``, plus ``score``: null when no tile was found, ``valid: false`` with the reason when
    the hand read is not a win (the warnings name the tiles to check)."""
    photo = await decode_upload(data, workers, settings)
    return await workers.model(
        photos.score_photo_json, photo, detector, context, rules, settings.conf, tile_set
    )
