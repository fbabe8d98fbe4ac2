"""The sets on the table: ``POST /api/v1/sets`` (teach one from a photo of its layout), ``GET /api/v1/sets``,
``GET /api/v1/sets/{name}``, ``DELETE /api/v1/sets/{name}``, ``PATCH /api/v1/sets/{name}/examples/{id}``
(name an example another face), ``DELETE /api/v1/sets/{name}/examples/{id}`` and ``POST
/api/v1/sets/{name}/examples`` (a tile the player corrected teaches the set). Writing a set is guarded as
saving examples is (``api.guard``: the same setting and token); an existing set is replaced only when the
request says so (else 409)."""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import cv2
import numpy as np
from fastapi import APIRouter, Body, Depends, Form, Path, Query, Request
from pydantic import TypeAdapter

from api.deps import DetectorDep, PhotoUploadDep, SettingsDep, StoreDep, WorkersDep, decode_upload, set_reader
from api.errors import ApiError
from api.guard import check_may_write
from api.routes import API_PREFIX, error_responses
from api.routes.examples import _form_json
from api.schemas import (
    ExampleFaceIn,
    SetCorrectedOut,
    SetCorrectionIn,
    SetDetailOut,
    SetOut,
    SetsOut,
    SetTaughtOut,
)
from api.settings import Settings
from api.work import Workers
from store import Store
from store.sets import (
    SetSummary,
    examples_of,
    list_sets,
    remove_example,
    remove_set,
    rename_example,
    summary,
)
from usecases import sets as set_cases

router = APIRouter(prefix=API_PREFIX, tags=["sets"])
SetName = Annotated[str, Path(max_length=64, description="the set's name")]
ExampleId = Annotated[int, Path(ge=1, le=2**31 - 1, description="the example's id (GET /sets/{name})")]
WRITE_ERRORS = error_responses(401, 403, 404, 422, 429, 503)  # a write: the token's refusals, the store's
NameForm = Annotated[str, Form(max_length=64, description="the set's name (1-40 letters, digits, ' .-_')")]
TokenForm = Annotated[str | None, Form(max_length=200, description="SMJ_EXAMPLES_TOKEN, when set")]
_CORRECTION = TypeAdapter(SetCorrectionIn)


def _detail(store: Store, name: str) -> dict[str, Any]:
    head = summary(store, name).to_json()
    tiles = [
        {"id": example.id, "face": example.face, "origin": example.origin, "crop": _data_url(example.crops)}
        for example in examples_of(store, name)
    ]
    return {**head, "tiles": tiles}


def _data_url(crops: np.ndarray) -> str:
    """The view turned along its row (else as it lies) as a PNG data URL."""
    crop = crops[2] if len(crops) > 2 else crops[0]
    ok, png = cv2.imencode(".png", cv2.cvtColor(crop, cv2.COLOR_RGB2BGR))
    assert ok
    return "data:image/png;base64," + base64.b64encode(png.tobytes()).decode("ascii")


@router.post(
    "/sets",
    response_model=SetTaughtOut,
    status_code=201,
    responses=error_responses(401, 403, 409, 413, 415, 422, 429, 503),
    summary="teach a set from a photo of its tiles laid out",
)
async def teach(
    request: Request,
    data: PhotoUploadDep,
    name: NameForm,
    detector: DetectorDep,
    store: StoreDep,
    settings: SettingsDep,
    workers: WorkersDep,
    replace: Annotated[bool, Form(description="replace a stored set of this name")] = False,
    token: TokenForm = None,
) -> dict[str, Any]:
    """The photo: the 27 suited tiles face up in three rows of nine, 万 (m) on top, 筒 (p) in the middle, 条
    (s) at the bottom, 1 to 9 left to right, and an optional fourth row of variants in this order, each
    optional: a red 5万, a red 5筒, a red 5条, a back. Answers the set stored, each tile's crop under its
    name, and what the classifier alone reads each as. 422 ``not_a_layout`` says what was seen."""
    check_may_write(request, settings, token, "teaching a set")
    reader = set_reader(detector)
    model = reader.set_classifier().identity
    photo = await decode_upload(data, workers, settings)
    taught = await workers.model(set_cases.learn, photo, reader, name)
    kept = functools.partial(set_cases.keep, source="a photo of the layout", replace=replace)
    await workers.hands(kept, store, taught, name, model)
    detail = await workers.hands(_detail, store, name)
    return {**detail, "turned": taught.layout.turned, "taught": taught.faces()}


@router.get("/sets", response_model=SetsOut, responses=error_responses(503), summary="the stored sets")
async def listing(store: StoreDep, workers: WorkersDep) -> dict[str, Any]:
    return {"sets": [s.to_json() for s in await workers.hands(list_sets, store)]}


@router.get(
    "/sets/{name}",
    response_model=SetDetailOut,
    responses=error_responses(404, 503),
    summary="a set with each example's crop",
)
async def detail(name: SetName, store: StoreDep, workers: WorkersDep) -> dict[str, Any]:
    return await workers.hands(_detail, store, name)


@dataclass(frozen=True)
class SetWrite:
    """What a write to a stored set needs: the set named in the path, the store, and the check that this
    request may write (``api.guard.check_may_write``, the page's token)."""

    request: Request
    name: str
    store: Store
    settings: Settings
    workers: Workers

    async def run(self, what: str, work: Callable[..., Any], *args: Any) -> Any:
        """``work(store, name, *args)`` on a worker, once the request may do ``what`` (named in refusals)."""
        check_may_write(self.request, self.settings, None, what)
        return await self.workers.hands(work, self.store, self.name, *args)


async def _set_write(
    request: Request, name: SetName, store: StoreDep, settings: SettingsDep, workers: WorkersDep
) -> SetWrite:
    return SetWrite(request, name, store, settings, workers)


SetWriteDep = Annotated[SetWrite, Depends(_set_write)]


@router.delete(
    "/sets/{name}",
    status_code=204,
    responses=error_responses(401, 403, 404, 429, 503),
    summary="remove a set",
)
async def remove(write: SetWriteDep) -> None:
    await write.run("removing a set", remove_set)


@router.patch(
    "/sets/{name}/examples/{example}",
    response_model=SetDetailOut,
    responses=WRITE_ERRORS,
    summary="name one of a set's examples another face",
)
async def rename(
    write: SetWriteDep, example: ExampleId, body: Annotated[ExampleFaceIn, Body()]
) -> dict[str, Any]:
    detail: dict[str, Any] = await write.run("renaming a set's example", _renamed, example, body.face)
    return detail


def _renamed(store: Store, name: str, example: int, face: str) -> dict[str, Any]:
    rename_example(store, name, example, face)
    return _detail(store, name)


@router.delete(
    "/sets/{name}/examples/{example}",
    response_model=SetOut,
    responses=WRITE_ERRORS,
    summary="take one example out of a set",
)
async def remove_one(
    write: SetWriteDep,
    example: ExampleId,
    origin: Annotated[
        Literal["layout", "row", "correction"] | None,
        Query(description="only an example that came so (the page removes corrections only)"),
    ] = None,
) -> dict[str, Any]:
    """A tile the player corrected that was no tile after all: its example leaves the set."""
    removed: SetSummary = await write.run("removing a set's example", remove_example, example, origin)
    return removed.to_json()


@router.post(
    "/sets/{name}/examples",
    response_model=SetCorrectedOut,
    status_code=201,
    responses=error_responses(401, 403, 404, 413, 415, 422, 429, 503),
    summary="a tile the player corrected teaches the set",
)
async def correct(
    request: Request,
    name: SetName,
    data: PhotoUploadDep,
    detector: DetectorDep,
    store: StoreDep,
    settings: SettingsDep,
    workers: WorkersDep,
    correction: Annotated[
        str, Form(max_length=2_000, description='JSON {"box": [x1, y1, x2, y2], "face", "replaces"?}')
    ],
    token: TokenForm = None,
) -> dict[str, Any]:
    """The photo the tile is in, the tile's box (the upright photo's pixels, as the photo endpoints answer
    them) and the face the player named: the tile's views join the set's examples of that face (the newest
    few a face kept), so the next photo reads it right. ``replaces``: the ``example`` an earlier correction
    of the same tile answered, taken back in the same write (a player who named a tile wrong, then right,
    leaves only the right name in the set)."""

    check_may_write(request, settings, token, "teaching a set a corrected tile")
    reader = set_reader(detector)
    told: SetCorrectionIn = _form_json(_CORRECTION, correction, "correction")
    photo = await decode_upload(data, workers, settings)
    width, height = photo.original_size
    x1, y1, x2, y2 = told.box
    if not (0 <= x1 < x2 <= width and 0 <= y1 < y2 <= height):
        raise ApiError(422, "box_outside_image", f"correction.box lies outside the {width}x{height} photo")
    example = await workers.model(set_cases.correction, photo, reader, told.box, told.face)
    model = reader.set_classifier().identity
    added, example_id = await workers.hands(
        set_cases.add_correction, store, name, example, model, told.replaces
    )
    return {**added.to_json(), "example": example_id}
