"""``POST /api/v1/settle``: the payments of a 血战到底 round (``scoring.settlement``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api.deps import WorkersDep
from api.routes import API_PREFIX, error_responses
from api.schemas import LedgerOut, SettleIn
from scoring import Rules, get_preset
from scoring.settlement import Round, parse_round, settle_round

router = APIRouter(prefix=API_PREFIX, tags=["settlement"])


@router.post("/settle", response_model=LedgerOut, responses=error_responses(422), summary="settle a round")
async def settle(request: SettleIn, workers: WorkersDep) -> dict[str, Any]:
    """Every payment of the round (刮风下雨, wins, 查花猪, 查叫, 退税) and each player's total, in base
    units times ``base``, as ``smj settle --json`` prints it. The round format is documented in
    ``scoring/settlement/__init__.py`` (see ``examples/round.json``); a malformed or impossible round is
    a 422 whose code is the ``RoundErrorCode`` (malformed, unknown_player, bad_win, ...; a given fan above
    ``MAX_FAN`` is ``fan_too_large``, an amount above 2**53-1 ``amount_too_large``)."""
    rules = get_preset(request.preset)
    return await workers.hands(_settle_json, parse_round(request.round), rules, request.base)


def _settle_json(round_: Round, rules: Rules, base: int) -> dict[str, Any]:
    return settle_round(round_, rules, base).to_json()
