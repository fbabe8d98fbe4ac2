"""A throwaway PostgreSQL server for the store's tests: ``initdb`` in a temporary folder, started on a Unix
socket there (no TCP port), as an unprivileged user when the tests run as root (PostgreSQL refuses root),
stopped and removed at the end. ``server_binaries`` finds the server's programs (Debian keeps them off the
PATH, in /usr/lib/postgresql/VERSION/bin)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PORT = 5433
USER = "smj"


def server_binaries() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``, or None where no server is installed."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(folder, "initdb").is_file() and Path(folder, "pg_ctl").is_file():
            return Path(folder)
    return None


def _as_user() -> tuple[list[str], str | None]:
    """The prefix that runs a server program as an unprivileged user, and that user (None: as we are)."""
    if os.geteuid() != 0:
        return [], None
    name = pwd.getpwuid(65534).pw_name  # nobody
    return ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--"], name


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server; yields its SQLAlchemy URL (psycopg, over the socket in its folder)."""
    binaries = server_binaries()
    if binaries is None:
        raise FileNotFoundError("no PostgreSQL server programs (initdb, pg_ctl) on this machine")
    prefix, user = _as_user()
    root = Path(tempfile.mkdtemp(prefix="smj-pg-"))
    if user is not None:
        os.chmod(root, 0o755)
        shutil.chown(root, user=65534, group=65534)
    data = root / "data"
    log = root / "server.log"
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    run = dict(check=True, capture_output=True, env=env, cwd=root)
    initdb, pg_ctl = str(binaries / "initdb"), str(binaries / "pg_ctl")
    subprocess.run([*prefix, initdb, "-D", str(data), "-U", USER, "-A", "trust", "-E", "UTF8"], **run)
    options = f"-k {root} -p {PORT} -c listen_addresses='' -c fsync=off"
    subprocess.run([*prefix, pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "start"], **run)
    try:
        yield f"postgresql+psycopg://{USER}@/postgres?host={root}&port={PORT}"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], **run)
        shutil.rmtree(root, ignore_errors=True)
