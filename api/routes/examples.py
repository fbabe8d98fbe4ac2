"""``POST /api/v1/examples``: save a corrected photo as a labelled example, only when the user opts in."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form
from pydantic import TypeAdapter

from api import service
from api.deps import PhotoUploadDep, SettingsDep
from api.errors import ApiError
from api.examples import save_example
from api.routes import API_PREFIX, error_responses
from api.schemas import DetectionIn, ExampleOut, GroupRequest, HandIn

router = APIRouter(prefix=API_PREFIX, tags=["examples"])
_DETECTIONS = TypeAdapter(list[DetectionIn])


@router.post(
    "/examples",
    response_model=ExampleOut,
    status_code=201,
    responses=error_responses(413, 415, 422),
    summary="save a corrected photo as a labelled example",
)
def save(
    data: PhotoUploadDep,
    settings: SettingsDep,
    detections: Annotated[str, Form(max_length=200_000, description="JSON list of {tile, box, confidence}")],
    hand: Annotated[str, Form(max_length=10_000, description="JSON hand as Hand.to_json() writes it")],
    consent: Annotated[bool, Form(description="the user opted in to saving this photo")] = False,
) -> dict[str, Any]:
    """Write the photo, its YOLO labels (boxes in pixels of the upright photo) and the hand under
    ``SMJ_DATASET_DIR`` (images/, labels/, hands.jsonl), never overwriting; answers where."""
    if not consent:
        raise ApiError(422, "consent_required", "saving a photo needs the user's consent: send consent=true")
    boxes = _DETECTIONS.validate_json(detections)
    parsed_hand = HandIn.model_validate_json(hand).to_hand()
    photo = service.decode(data, settings.max_pixels, reduce=False)
    width, height = photo.original_size
    try:
        checked = GroupRequest(width=width, height=height, detections=boxes)
    except ValueError as error:
        raise ApiError(422, "box_outside_image", str(error).splitlines()[-1].strip()) from None
    items = [(d.tile, d.box, d.confidence) for d in checked.detections]
    saved = save_example(
        settings.dataset_dir, data, photo, service.detections_from(items, (width, height)), parsed_hand
    )
    return saved.to_json()
