"""``POST /api/v1/examples``: save a corrected photo as a labelled example, only when the user opts in and
the server allows it (``api.guard``: a setting, a token, no cross-site form); the writing and its
quotas are ``datasets.corrections``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.exceptions import RequestValidationError
from pydantic import Field, TypeAdapter, ValidationError

from api.deps import PhotoUploadDep, SettingsDep, WorkersDep, decode_upload
from api.detections_in import detections_in_photo
from api.errors import ApiError
from api.guard import check_may_write
from api.routes import API_PREFIX, error_responses
from api.schemas import MAX_DETECTIONS, DetectionIn, ExampleOut, HandIn
from datasets.corrections import CorrectionError, Quota, check_hand, save_correction
from datasets.labels import Box

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


def _refused(error: CorrectionError) -> ApiError:
    if error.code == "quota_full":
        return ApiError(507, error.code, error.message)
    return ApiError(422, error.code, error.message)


@router.post(
    "/examples",
    response_model=ExampleOut,
    status_code=201,
    responses=error_responses(401, 403, 413, 415, 422, 507),
    summary="save a corrected photo as a labelled example",
)
async def save(
    request: Request,
    data: PhotoUploadDep,
    settings: SettingsDep,
    workers: WorkersDep,
    detections: Annotated[str, Form(max_length=200_000, description="JSON list of {tile, box, confidence}")],
    hand: Annotated[str, Form(max_length=10_000, description="JSON hand as Hand.to_json() writes it")],
    consent: Annotated[bool, Form(description="the user opted in to saving this photo")] = False,
    token: Annotated[str | None, Form(max_length=200, description="SMJ_EXAMPLES_TOKEN, when set")] = None,
) -> dict[str, Any]:
    """Write the photo as decoded and re-encoded (upright; nothing else the upload carried), its YOLO
    labels (boxes in pixels of the upright photo) and the hand under ``SMJ_DATASET_DIR``; answers the
    files' names relative to it. The hand must be possible, as ``/score`` checks (a hand that is simply
    not a win is kept: it is what the photo shows)."""
    check_may_write(request, settings, token)
    if not consent:
        raise ApiError(422, "consent_required", "saving a photo needs the user's consent: send consent=true")
    boxes = _form_json(_DETECTIONS, detections, "detections")
    parsed_hand = _form_json(_HAND, hand, "hand").to_hand()
    try:
        check_hand(parsed_hand)  # before decoding: an impossible hand costs nothing
    except CorrectionError as error:
        raise _refused(error) from None
    photo = await decode_upload(data, workers, settings)
    corrected = detections_in_photo([(d.tile, d.box, d.confidence, ()) for d in boxes], photo.original_size)
    width, height = photo.original_size
    labels = [Box.from_xyxy(d.class_id, d.box, width, height) for d in corrected]
    quota = Quota(settings.max_examples, settings.max_examples_bytes)
    try:
        saved = await workers.hands(
            save_correction, settings.dataset_dir, photo.pixels, labels, parsed_hand, quota
        )
    except CorrectionError as error:
        raise _refused(error) from None
    return saved.to_json()
