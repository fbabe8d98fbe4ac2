"""``GET /healthz``: liveness, and whether the detector is loaded."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from api.deps import SettingsDep
from api.schemas import HealthOut

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=HealthOut, summary="liveness and model status")
async def healthz(request: Request, settings: SettingsDep) -> dict[str, Any]:
    """Always 200 while the process serves; ``model_loaded`` false means photo endpoints answer 503."""
    return {
        "status": "ok",
        "model_loaded": getattr(request.app.state, "detector", None) is not None,
        "weights": str(getattr(request.app.state, "weights", settings.weights.name)),
        "model_error": getattr(request.app.state, "model_error", None),
    }
