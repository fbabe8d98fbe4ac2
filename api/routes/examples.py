"""``POST /api/v1/examples``: save a corrected photo as a labelled example, only when the user opts in."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form
from fastapi.exceptions import RequestValidationError
from pydantic import Field, TypeAdapter, ValidationError

from api import service
from api.deps import PhotoUploadDep, SettingsDep, WorkersDep
from api.errors import ApiError
from api.examples import save_example
from api.routes import API_PREFIX, error_responses
from api.schemas import MAX_DETECTIONS, DetectionIn, ExampleOut, HandIn

router = APIRouter(prefix=API_PREFIX, tags=["examples"])
_DETECTIONS = TypeAdapter(Annotated[list[DetectionIn], Field(max_length=MAX_DETECTIONS)])
_HAND = TypeAdapter(HandIn)


def _form_json(adapter: TypeAdapter[Any], text: str, field: str) -> Any:
    """A JSON form field validated; its errors name the field (``body.detections.0.box``)."""
    try:
        return adapter.validate_json(text)
    except ValidationError as error:
        raise RequestValidationError(
            [{**detail, "loc": ("body", field, *detail.get("loc", ()))} for detail in error.errors()]
        ) from None


@router.post(
    "/examples",
    response_model=ExampleOut,
    status_code=201,
    responses=error_responses(413, 415, 422),
    summary="save a corrected photo as a labelled example",
)
async def save(
    data: PhotoUploadDep,
    settings: SettingsDep,
    workers: WorkersDep,
    detections: Annotated[str, Form(max_length=200_000, description="JSON list of {tile, box, confidence}")],
    hand: Annotated[str, Form(max_length=10_000, description="JSON hand as Hand.to_json() writes it")],
    consent: Annotated[bool, Form(description="the user opted in to saving this photo")] = False,
) -> dict[str, Any]:
    """Write the photo, its YOLO labels (boxes in pixels of the upright photo) and the hand under
    ``SMJ_DATASET_DIR`` (images/, labels/, hands.jsonl), never overwriting; answers where."""
    if not consent:
        raise ApiError(422, "consent_required", "saving a photo needs the user's consent: send consent=true")
    boxes = _form_json(_DETECTIONS, detections, "detections")
    parsed_hand = _form_json(_HAND, hand, "hand").to_hand()
    photo = await workers.decode(service.decode_to_save, data, settings.max_pixels, settings.max_decode_bytes)
    corrected = service.detections_in_photo(
        [(d.tile, d.box, d.confidence, ()) for d in boxes], photo.original_size
    )
    saved = await workers.hands(save_example, settings.dataset_dir, data, photo, corrected, parsed_hand)
    return saved.to_json()
