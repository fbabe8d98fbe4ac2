"""Where the shared material lies (``../shared`` beside the checkout, or ``SMJ_SHARED``), for the tests that
use it; those tests skip where it is missing, and the run's summary says so (``conftest``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SMJ_SHARED") or ROOT.parent / "shared")
MISSING = "shared data missing"  # the start of every such skip's reason


def needs_shared(*parts: str) -> pytest.MarkDecorator:
    """Skip the test unless ``SHARED/parts`` exists, saying which path was looked for."""
    path = SHARED.joinpath(*parts)
    return pytest.mark.skipif(
        not path.exists(), reason=f"{MISSING}: no {path} (set SMJ_SHARED to the folder)"
    )
