"""Photo endpoints: ``POST /api/v1/recognize`` and ``POST /api/v1/score-photo`` (multipart)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api import service
from api.deps import ContextFormDep, DetectorDep, PhotoUploadDep, PresetFormDep, SettingsDep
from api.routes import API_PREFIX, error_responses
from api.schemas import RecognizeOut, ScorePhotoOut
from vision import pipeline

router = APIRouter(prefix=API_PREFIX, tags=["photos"], responses=error_responses(413, 415, 422, 503))


@router.post("/recognize", response_model=RecognizeOut, summary="detect and group the tiles in a photo")
def recognize(data: PhotoUploadDep, detector: DetectorDep, settings: SettingsDep) -> dict[str, Any]:
    """The detections (boxes in pixels of the upright photo, ``width`` x ``height``), the hand they
    group into, the groups for drawing, and the grouper's warnings."""
    photo = service.decode(data, settings.max_pixels)
    detections, grouping = service.recognise(photo, detector, settings.conf)
    return pipeline.recognition_json(photo, detections, grouping)


@router.post("/score-photo", response_model=ScorePhotoOut, summary="recognize a photo and score its hand")
def score_photo(
    data: PhotoUploadDep,
    detector: DetectorDep,
    context: ContextFormDep,
    rules: PresetFormDep,
    settings: SettingsDep,
) -> dict[str, Any]:
    """As ``recognize``, plus ``score``: null when no tile was found, ``valid: false`` with the reason when
    the hand read is not a win (the warnings name the tiles to check)."""
    photo = service.decode(data, settings.max_pixels)
    return service.score_photo_json(photo, detector, context, rules, settings.conf)
