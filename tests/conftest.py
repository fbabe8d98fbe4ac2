"""Fixtures shared by the tests: the store of the run (``SMJ_DATABASE_URL``: a SQLite file of the run's
own, never the user's), and a throwaway PostgreSQL server (``postgres_url``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# the tests' builders (tests/builders/: scenes, hands, detections, photos, the browser, the benchmarks'
# loader, a throwaway PostgreSQL) are imported by name from every test folder
sys.path.insert(0, str(Path(__file__).resolve().parent / "builders"))

from postgres_server import postgres_server, server_binaries
from shared_data import MISSING, SHARED


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of this session's own; skipped, saying so, where no server programs exist."""
    if server_binaries() is None:
        pytest.skip("no PostgreSQL server programs here (setup.sh installs the postgresql package)")
    with postgres_server() as url:
        yield url


@pytest.fixture(scope="session", autouse=True)
def own_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every test that opens the default store opens this run's (a test may set its own URL)."""
    before = os.environ.get("SMJ_DATABASE_URL")
    os.environ["SMJ_DATABASE_URL"] = f"sqlite:///{tmp_path_factory.mktemp('store') / 'smj.db'}"
    yield
    if before is None:
        os.environ.pop("SMJ_DATABASE_URL", None)
    else:
        os.environ["SMJ_DATABASE_URL"] = before


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say so when tests skipped for want of the shared material (a checkout without ``../shared``)."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report.longrepr, tuple) and MISSING in str(report.longrepr[2])
    ]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} tests skipped: shared data missing at {SHARED} (set SMJ_SHARED to that folder)",
            yellow=True,
        )
