"""Hands as JSON: ``score``, ``waits``, ``group`` (corrected detections), ``presets``, ``conditions`` and
``tiles``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api.deps import WorkersDep
from api.detections_in import detections_from
from api.routes import API_PREFIX, error_responses
from api.schemas import (
    ConditionsOut,
    GroupedOut,
    GroupIn,
    HandOut,
    PresetsOut,
    ScoreIn,
    ScoreOut,
    TilesOut,
    TypedIn,
    WaitsIn,
    WaitsOut,
    hand_of,
    waiting_hand_of,
)
from scoring import PRESETS, get_preset
from scoring.conditions import conditions_json
from scoring.presets import DEFAULT_PRESET
from scoring.settlement.events import WIN_FLAGS
from scoring.tiles import tile_name, tile_name_zh
from scoring.typed import parse_typed
from usecases import hands, photos
from vision.detections import BACK, DETECTOR_CLASSES

router = APIRouter(prefix=API_PREFIX, tags=["hands"])


@router.post("/score", response_model=ScoreOut, responses=error_responses(422), summary="score a hand")
async def score_hand(request: ScoreIn, workers: WorkersDep) -> dict[str, Any]:
    """The score, the same fields as ``smj score --json``.

    A hand that is not a win (three suits, a tile of the void suit, no 4 sets + a pair) answers 200 with
    ``valid: false`` and ``error`` giving the reason. An impossible hand (wrong tile count, a fifth copy,
    a winning tile not in the hand, a contradictory context) or an unknown tile or preset is a 422.
    """
    rules = get_preset(request.preset)
    hand = hand_of(request.hand)
    return await workers.hands(hands.score_json, hand, request.context.to_context(), rules)


@router.post("/typed", response_model=HandOut, responses=error_responses(422), summary="read a typed hand")
async def typed_hand(request: TypedIn) -> dict[str, Any]:
    """The hand a player typed (``scoring.typed``: tiles, then meld words and their tiles) as the hand JSON
    ``/score`` and ``/waits`` take, read outside a round: ``kong`` is a 直杠, ``win_tile`` null where none
    was named. The page reads its typed-hand box so, one reading for the page and the API. A word that is
    no tile nor meld word is a 422 ``typed_hand`` naming it in Chinese and English."""
    return parse_typed(request.text).to_json()


@router.post(
    "/waits", response_model=WaitsOut, responses=error_responses(422), summary="the waits of a ready hand"
)
async def hand_waits(request: WaitsIn, workers: WorkersDep) -> dict[str, Any]:
    """Every tile that completes a hand one tile short (13 tiles + 1 per kong), each with its best score
    (as a win on a discard unless the context says otherwise). ``ready: false`` when none does; a hand
    of the wrong size or with a fifth copy is a 422."""
    rules = get_preset(request.preset)
    concealed, melds = waiting_hand_of(request.hand)
    return await workers.hands(hands.waits_json, concealed, melds, request.context.to_context(), rules)


@router.post(
    "/group", response_model=GroupedOut, responses=error_responses(422), summary="group corrected detections"
)
async def group(request: GroupIn, workers: WorkersDep) -> dict[str, Any]:
    """Group detections (as ``recognize`` answered them, possibly corrected: tiles renamed, boxes added or
    removed) into a hand, with the grouper's warnings. As in ``recognize``, a reading that is no winning
    hand is re-read with the tiles' ``alternatives`` (a ``reread_tile`` warning names each tile read
    otherwise) and the least sure of a tile or two too many are left out (``left_out_tile``);
    ``detections`` comes back as grouped. A tile sent without alternatives, such as one the user
    corrected, is never re-read. Legality is judged under ``preset``'s rules (an unknown preset is a
    422) and the win's ``context``, as ``/score-photo`` judges a photo's reading."""
    items = [
        (d.tile, d.box, d.confidence, [(a.tile, a.confidence) for a in d.alternatives])
        for d in request.detections
    ]
    detections = detections_from(items, (request.width, request.height))
    rules, context = get_preset(request.preset), request.context.to_context()
    return await workers.hands(photos.group_json, detections, rules, context)


@router.get(
    "/presets",
    response_model=PresetsOut,
    response_model_exclude_unset=True,
    summary="the rules presets and their knobs",
)
async def presets() -> dict[str, Any]:
    return {"default": DEFAULT_PRESET, "presets": [rules.to_json() for rules in PRESETS.values()]}


@router.get("/conditions", response_model=ConditionsOut, summary="the win conditions, for the page's choices")
async def conditions() -> dict[str, Any]:
    """The win conditions of a context (``scoring.conditions.WIN_CONDITIONS``), in order, with what each
    implies, requires and excludes, and what ticking it ticks (``brings``) and unticks (``clears``)."""
    return {"conditions": conditions_json(), "win_event_flags": list(WIN_FLAGS)}


@router.get("/tiles", response_model=TilesOut, summary="the detector's classes, for the page's palette")
async def tiles() -> dict[str, Any]:
    """The 27 suited tiles (from ``scoring.tiles``), then ``back`` (face down) and ``honour``."""
    rows = []
    for class_id, name in enumerate(DETECTOR_CLASSES):
        suited = class_id < BACK
        rows.append(
            {
                "class_id": class_id,
                "name": name,
                "tile": tile_name(class_id) if suited else None,
                "name_zh": tile_name_zh(class_id) if suited else {"back": "背", "honour": "字"}[name],
            }
        )
    return {"tiles": rows}
