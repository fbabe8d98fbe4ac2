"""The store's upgrades under kill -9 and under processes racing: nothing lost, nothing left half made.

    python benchmarks/bench_store.py [--postgres URL] [--processes 3] [--trials 3]

1. Kill points: a SQLite store of revision 0002 holding a set is upgraded in a child process that kills
   itself (SIGKILL) just before each step of the batch migration 0003 (``KILL_POINTS``: the table copied, the
   old one dropped, the copy renamed, indexed, the revision recorded); then the store is opened here. Prints,
   per point, whether the child died there, whether the store then opened at the newest revision, and
   whether every example was still there.
2. Races: ``--processes`` processes open one fresh store at once (a SQLite file; and the PostgreSQL
   database of ``--postgres``, emptied first), ``--trials`` times: how many of them opened it.

Exit status 1 when a kill point loses the store or an example, or a process fails to open; the figures are
reported, never judged otherwise.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KILL_POINTS = {
    "copying": "INSERT INTO _alembic_tmp_set_examples",
    "dropping": "DROP TABLE set_examples",
    "renaming": "ALTER TABLE _alembic_tmp_set_examples",
    "indexing": "CREATE INDEX ix_set_examples_set_id",
    "recording": "UPDATE alembic_version",
}
KILLER = """
import os, signal, sys
from sqlalchemy import event
from sqlalchemy.engine import Engine
@event.listens_for(Engine, "before_cursor_execute")
def kill(conn, cursor, statement, *args):
    if statement.lstrip().startswith(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
from store import open_store
open_store(sys.argv[1])
"""
OPENER = "import sys; from store import open_store; open_store(sys.argv[1]); print('opened')"
FACES = ("m1", "p5")


@dataclass(frozen=True)
class Killed:
    point: str
    died_there: bool  # the child was killed at the point (not before, not after)
    opened: bool  # the store then opened at the newest revision
    examples: int  # the set's examples after (``len(FACES)`` before)


def at_revision_0002(url: str) -> None:
    """A store holding a set of ``FACES``, taken back to what revision 0002 made."""
    import numpy as np
    from sqlalchemy import create_engine

    from store import database, open_store
    from store.sets import Example, save_set

    store = open_store(url)
    crops, features = np.zeros((1, 8, 8, 3), np.uint8), np.ones((1, 4), np.float32)
    save_set(store, "kept", [Example(face, crops, features) for face in FACES], "x", "model-a")
    store.close()
    database._OPENED.pop(url, None)
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0002'")
    engine.dispose()


def kill_during_upgrade(folder: Path, point: str) -> Killed:
    """Upgrade a store of revision 0002 in a child killed before ``KILL_POINTS[point]``; then open it."""
    from store import StoreError, database, open_store
    from store.database import head_revision, schema_revision
    from store.sets import examples_of

    url = f"sqlite:///{folder / f'killed_{point}.db'}"
    at_revision_0002(url)
    child = subprocess.run(
        [sys.executable, "-c", KILLER, url, KILL_POINTS[point]], cwd=ROOT, capture_output=True, timeout=120
    )
    database._OPENED.pop(url, None)
    try:
        store = open_store(url)
    except StoreError:
        return Killed(point, child.returncode == -9, False, 0)
    opened = schema_revision(store) == head_revision()
    return Killed(point, child.returncode == -9, opened, len(examples_of(store, "kept")))


def race(url: str, processes: int) -> int:
    """``processes`` processes opening the store at ``url`` at once: how many opened it."""
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, url], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(processes)
    ]
    outs = [run.communicate(timeout=120)[0] for run in runs]
    return sum(run.returncode == 0 and out.strip() == b"opened" for run, out in zip(runs, outs, strict=True))


def emptied_postgres(url: str) -> str:
    """The PostgreSQL database at ``url`` with nothing in it (its public schema dropped and made again)."""
    from sqlalchemy import create_engine

    engine = create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    engine.dispose()
    return url


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--postgres", help="a PostgreSQL URL whose database the race may empty")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args(argv)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="bench_store_") as folder:
        print("kill -9 during the upgrade to the newest revision (SQLite):")
        for point in KILL_POINTS:
            killed = kill_during_upgrade(Path(folder), point)
            whole = killed.opened and killed.examples == len(FACES)
            failures += not whole
            print(
                f"  before {point:<10} killed there: {killed.died_there!s:<5} opened: {killed.opened!s:<5} "
                f"examples {killed.examples}/{len(FACES)}"
            )
        for trial in range(args.trials):
            url = f"sqlite:///{Path(folder) / f'fresh_{trial}.db'}"
            opened = race(url, args.processes)
            failures += opened != args.processes
            print(
                f"  SQLite, fresh store, trial {trial + 1}: {opened} of {args.processes} processes opened it"
            )
            if args.postgres:
                opened = race(emptied_postgres(args.postgres), args.processes)
                failures += opened != args.processes
                print(f"  PostgreSQL, fresh store, trial {trial + 1}: {opened} of {args.processes} opened it")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
