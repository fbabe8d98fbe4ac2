"""Fixtures shared by the store's tests: a throwaway PostgreSQL server (``postgres_url``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgres_server import postgres_server, server_binaries


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of this session's own; skipped, saying so, where no server programs exist."""
    if server_binaries() is None:
        pytest.skip("no PostgreSQL server programs here (setup.sh installs the postgresql package)")
    with postgres_server() as url:
        yield url
