"""Opening the store: its URL, its engine, and its schema brought up to date (Alembic).

An upgrade is all or nothing and one at a time: on SQLite it runs in one ``BEGIN IMMEDIATE`` transaction on a
connection of its own (the driver's implicit transactions would commit each statement of a batch migration
alone, and a process killed midway would leave a half-made table behind), on PostgreSQL in one transaction
that holds an advisory lock first; a process that finds another upgrading waits, then finds nothing to do.
A temporary table a killed upgrade of an older version left (``_alembic_tmp_*``) is dropped first.
``smj serve`` upgrades once before its workers start, and the service at its start-up, never in a request;
``smj db upgrade`` does it as a deployment's own step.
"""

from __future__ import annotations

import os
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
URL_VARIABLE = "SMJ_DATABASE_URL"


class StoreError(RuntimeError):
    """The store can't be opened or upgraded; the message names the database (never its password)."""


def user_data_dir() -> Path:
    """This user's data folder for smj: ``$XDG_DATA_HOME/smj``, else ``~/.local/share/smj``
    (``%LOCALAPPDATA%\\smj`` on Windows); never inside the source tree."""
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "smj"
    base = os.environ.get("XDG_DATA_HOME") or ""
    return (Path(base) if Path(base).is_absolute() else Path.home() / ".local" / "share") / "smj"


def default_url() -> str:
    """``SMJ_DATABASE_URL`` when set, else a SQLite file ``smj.db`` in the user's data folder."""
    return os.environ.get(URL_VARIABLE) or f"sqlite:///{user_data_dir() / 'smj.db'}"


@dataclass(frozen=True, eq=False)
class Store:
    """An open store: ``transaction()`` is a unit of work (``with``: committed when the block ends,
    rolled back when it raises)."""

    url: str  # as shown to people: the password hidden
    engine: Engine
    sessions: sessionmaker[Session]

    def transaction(self) -> AbstractContextManager[Session]:
        return self.sessions.begin()

    def close(self) -> None:
        self.engine.dispose()


_OPENED: dict[str, Store] = {}
_LOCK = threading.Lock()


def open_store(url: str | None = None, *, upgrade: bool = True) -> Store:
    """The store at ``url`` (default ``default_url()``), its schema upgraded to this code's (``upgrade``;
    else checked to be at this code's revision); one engine per URL in a process. Raises ``StoreError``
    naming the database when it can't be reached, upgraded, or is at another revision."""
    url = url or default_url()
    with _LOCK:
        if url in _OPENED:
            return _OPENED[url]
        try:
            parsed = make_url(url)
        except ArgumentError:
            raise StoreError(f"{URL_VARIABLE}: {url!r} is not a database URL") from None
        shown = parsed.render_as_string(hide_password=True)
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            folder = Path(str(parsed.database)).parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as failure:
                raise StoreError(f"{shown}: can't open or upgrade the store ({failure.strerror})") from None
        try:
            engine = create_engine(parsed, pool_pre_ping=True)
        except (ArgumentError, ImportError) as failure:
            raise StoreError(f"{shown}: can't open this database ({failure})") from None
        if parsed.get_backend_name() == "sqlite":
            event.listen(engine, "connect", _sqlite_pragmas)
        try:
            if upgrade:
                _upgrade(parsed)
            else:
                _check_revision(engine)
        except (OperationalError, SQLAlchemyError) as failure:
            engine.dispose()
            reason = str(getattr(failure, "orig", None) or failure).strip().splitlines()[0]
            raise StoreError(f"{shown}: can't open or upgrade the store ({reason})") from None
        except StoreError as failure:
            engine.dispose()
            raise StoreError(f"{shown}: {failure}") from None
        store = Store(shown, engine, sessionmaker(engine, expire_on_commit=False))
        _OPENED[url] = store
        return store


def _sqlite_pragmas(connection: object, _record: object) -> None:
    cursor = connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA foreign_keys=ON")  # a set's examples go with it
    cursor.execute("PRAGMA busy_timeout=10000")  # the CLI and a server writing at once wait, not fail
    cursor.close()


UPGRADE_LOCK = 0x736D6A  # PostgreSQL's advisory lock key of an upgrade ("smj")


def _upgrade(url: URL) -> None:
    """Bring the schema to the newest revision in ``migrations/versions`` (an empty database included), in one
    transaction, one process at a time (the module's doc)."""
    from alembic import command
    from alembic.config import Config

    engine = create_engine(url, poolclass=NullPool)  # its own connection: the store's keeps the driver's ways
    sqlite = url.get_backend_name() == "sqlite"
    if sqlite:
        event.listen(engine, "connect", _sqlite_explicit)
        event.listen(engine, "begin", lambda connection: connection.exec_driver_sql("BEGIN IMMEDIATE"))
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as connection:
            if not sqlite:
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": UPGRADE_LOCK})
            for name in inspect(connection).get_table_names():
                if name.startswith("_alembic_tmp_"):  # left by a killed upgrade of an older version
                    connection.exec_driver_sql(f'DROP TABLE "{name}"')
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    finally:
        engine.dispose()


def _sqlite_explicit(connection: Any, _record: object) -> None:
    """The pysqlite driver begins no transaction before DDL on its own: here every transaction is begun
    explicitly (the ``begin`` event), so a migration's statements commit together or not at all."""
    _sqlite_pragmas(connection, _record)
    connection.isolation_level = None


def _check_revision(engine: Engine) -> None:
    """``StoreError`` unless the schema is at this code's revision (a store opened without upgrading it)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    if current != head_revision():
        raise StoreError(
            f"its schema is at {current or 'no'} revision, not {head_revision()}: run smj db upgrade"
        )


def new_revision(message: str, migrations: Path = MIGRATIONS) -> Path:
    """The next migration, written by Alembic from what ``store.schema`` holds beyond the newest revision
    (a SQLite store upgraded to it in a temporary folder is compared with the models): its file, numbered
    after the newest (``0005_...``). Read it and finish it by hand where Alembic can't tell (a rename, data
    to move), then test it as ``tests/store/test_store.py`` tests the others."""
    import tempfile

    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(migrations))
    head = ScriptDirectory.from_config(config).get_current_head() or "0000"
    with tempfile.TemporaryDirectory(prefix="smj-revision-") as folder:
        engine = create_engine(f"sqlite:///{folder}/head.db")
        try:
            with engine.begin() as connection:
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
                script = command.revision(config, message, autogenerate=True, rev_id=f"{int(head) + 1:04d}")
        finally:
            engine.dispose()
    assert script is not None and not isinstance(script, list)
    return Path(script.path)


def schema_revision(store: Store) -> str | None:
    """The revision the store's schema is at (Alembic's), None for a database it never touched."""
    from alembic.runtime.migration import MigrationContext

    with store.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str:
    """The newest revision this code knows."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return head
