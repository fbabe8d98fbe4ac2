"""Every ``curl`` line of the README and its pages (``docs/``), run as written against a served app (the
shipped models, a fresh store): each answers 2xx, so none can rot. ``EXAMPLE_ID``, ``TABLE_ID``,
``TABLE_CODE`` and ``LIVE_SESSION`` are filled in from the answers before them, as a reader would;
``layout.jpg`` and ``hand.jpg`` are a set's photos (``tests/set_builders.py``)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import served
from set_builders import layout_and_hand

from api.settings import PROJECT_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
# the README and the pages it links to (docs/): every curl line a user reads
README = "\n".join(
    path.read_text(encoding="utf-8")
    for path in [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
)


def _commands() -> list[str]:
    """The README's curl commands, each with its continuation lines (the indented lines after it)."""
    commands: list[str] = []
    for line in README.splitlines():
        if line.startswith("curl "):
            commands.append(line)
        elif commands and line.startswith((" ", "\t")) and commands[-1].rstrip().endswith(("\\", ",")):
            commands[-1] += "\n" + line
    return commands


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("readme")) as (url, _):
        yield url


def test_every_curl_line_of_the_readme_answers(base: str, tmp_path: Path) -> None:
    commands = _commands()
    assert len(commands) >= 20 and sum("/api/v1/tables" in c for c in commands) >= 5
    layout_and_hand(tmp_path)  # layout.jpg, hand.jpg where the README's lines find them
    (tmp_path / "examples").symlink_to(PROJECT_ROOT / "examples")
    filled: dict[str, str] = {}
    for command in commands:
        for placeholder, value in filled.items():
            command = command.replace(placeholder, value)
        said = re.sub(r"\s#.*", "", command).rstrip()  # a comment may name what the answer holds
        unfilled = re.search(r"\b(EXAMPLE_ID|TABLE_ID|TABLE_CODE|LIVE_SESSION)\b", said)
        assert not unfilled, f"nothing to fill in: {command}"
        run = command.replace("http://localhost:8000", base).replace("curl ", "curl -sS --fail-with-body ")
        done = subprocess.run(["bash", "-c", run], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        if command == "curl http://localhost:8000/api/v1/sets/home":  # the set, its tiles listed
            filled["EXAMPLE_ID"] = str(json.loads(done.stdout)["tiles"][0]["id"])
        if said.endswith("/api/v1/tables"):  # the table made: its id and code
            made = json.loads(done.stdout)
            filled.update(TABLE_ID=made["id"], TABLE_CODE=made["code"])
        if said.endswith("/api/v1/live"):  # a live session opened: its id
            filled["LIVE_SESSION"] = json.loads(done.stdout)["session"]
    assert {"EXAMPLE_ID", "TABLE_ID", "TABLE_CODE", "LIVE_SESSION"} <= set(filled)
