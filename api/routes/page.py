"""``GET /``: the page (static HTML, JS and CSS; no build step, nothing loaded from elsewhere)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
# Nothing leaves the machine: scripts, styles, images, requests only from this origin (blob: the photo).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'"
)

router = APIRouter(tags=["page"])


@router.get("/", include_in_schema=False)
def page() -> FileResponse:
    return FileResponse(
        STATIC_DIR / "index.html", headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY}
    )
