"""ruff (lint and format) and mypy pass over the project, as ``pyproject.toml`` configures them; a tool
that is not installed is skipped."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _tool(name: str) -> str:
    """The tool installed next to this Python (the project's .venv), else on PATH; skip when neither."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.is_file() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e .[dev])")
    return found


@pytest.mark.parametrize(
    "command",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], ["mypy"]],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_the_tool_finds_nothing(command: list[str]) -> None:
    done = subprocess.run(
        [_tool(command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=580, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
