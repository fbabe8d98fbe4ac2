"""Fuzz every operation of the OpenAPI schema in-process (schemathesis on the ASGI app): never a 5xx, every
error in the one JSON shape, every answer as documented.

The detector is the fake one; the dataset folder is a temporary one (a fuzzed example is refused before it
is written anyway: random bytes are not a photo). Bounded: 30 examples per operation.
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from api.app import create_app
from api.deps import get_detector
from api.fakes import FakeDetector
from api.settings import Settings


def _skip_assertion_rewriting(package: str) -> None:
    """pytest rewrites the asserts of every module of a plugin's distribution (schemathesis: 300+ modules,
    ~8 s on each run where bytecode is not cached). Its asserts are not ours: import it plain. Uses a
    private attribute of pytest's import hook; without it, nothing changes but the time."""
    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        if isinstance(marked, set):
            marked.discard(package)
            getattr(finder, "_marked_for_rewrite_cache", {}).clear()


_skip_assertion_rewriting("schemathesis")
schemathesis = pytest.importorskip(
    "schemathesis", reason="schemathesis is not installed (pip install -e .[dev])"
)
from schemathesis.checks import (  # noqa: E402
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = pytest.mark.timeout(120)


# A module-level schema (schemathesis' ``from_fixture`` needs a pytest private attribute pytest 9 removed).
_FOLDER = Path(tempfile.mkdtemp(prefix="smj-fuzz-"))
atexit.register(shutil.rmtree, _FOLDER, ignore_errors=True)
_APP = create_app(
    Settings(weights=_FOLDER / "none.onnx", dataset_dir=_FOLDER / "dataset", max_upload_bytes=1_000_000)
)
_APP.dependency_overrides[get_detector] = lambda: FakeDetector()
schema = schemathesis.openapi.from_asgi("/openapi.json", _APP)


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_no_server_errors_and_errors_in_one_shape(case: Any) -> None:
    response = case.call()
    case.validate_response(
        response,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )
    if response.status_code >= 400:
        error = response.json()["error"]
        assert isinstance(error["code"], str) and isinstance(error["message"], str)
