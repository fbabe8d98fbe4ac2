"""``GET /``: the page (static HTML, JS and CSS; no build step, nothing loaded from elsewhere)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
# Swagger UI's own files (5.x: it reads the OpenAPI 3.1 FastAPI writes), as PyPI fastapi-offline ships them
SWAGGER_DIR = Path(str(files("fastapi_offline") / "static"))
SWAGGER_URL = "/static/swagger"
RULES = files("scoring") / "RULES.md"  # the rules the project scores and settles, in Chinese and English
# Nothing leaves the machine: scripts, styles, images, requests only from this origin (blob: the photo).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"  # no other site may frame the page (a click on it would be theirs)
)

router = APIRouter(tags=["page"])


@router.get("/", include_in_schema=False)
def page() -> FileResponse:
    return FileResponse(
        STATIC_DIR / "index.html",
        headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY, "X-Frame-Options": "DENY"},
    )


DOCS_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>smj API</title>
<link rel="stylesheet" href="{SWAGGER_URL}/swagger-ui.css"><link rel="icon" href="{SWAGGER_URL}/favicon.png">
</head><body><div id="swagger-ui"></div>
<script src="{SWAGGER_URL}/swagger-ui-bundle.js"></script><script src="/static/docs.js"></script>
</body></html>"""
# Swagger UI's scripts and its start (static/docs.js) from this origin, no inline script; it styles its
# elements inline (style attributes), so styles may be inline
DOCS_SECURITY_POLICY = CONTENT_SECURITY_POLICY.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")


@router.get("/docs", include_in_schema=False)
def docs() -> HTMLResponse:
    """The API's interactive documentation (Swagger UI 5, served from this server: PyPI fastapi-offline)."""
    return HTMLResponse(
        DOCS_PAGE, headers={"Content-Security-Policy": DOCS_SECURITY_POLICY, "X-Frame-Options": "DENY"}
    )


@router.get("/rules", include_in_schema=False)
def rules() -> PlainTextResponse:
    """The rules document (``scoring/RULES.md``), as text: the page links to it."""
    return PlainTextResponse(RULES.read_text(encoding="utf-8"), headers={"X-Frame-Options": "DENY"})
