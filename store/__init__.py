"""The project's store: tile sets (and, beside them, tables at the table) in one database through SQLAlchemy.

A SQLite file in the user's data folder by default (``database.default_url``); any SQLAlchemy URL in
``SMJ_DATABASE_URL`` (PostgreSQL for several workers or machines). The command line and the service read
the same store. ``open_store`` upgrades the schema to this version of the code (Alembic, ``migrations/``)
before anything reads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from store.database import Store, StoreError, default_url, open_store, user_data_dir

__all__ = ["Store", "StoreError", "default_url", "open_store", "user_data_dir"]


def __getattr__(name: str) -> Any:
    """The names of ``store.database``, imported when first used: ``import store.cli`` (every ``smj`` command
    registers it) must not need SQLAlchemy, which an install of the rules core alone lacks."""
    if name in __all__:
        from store import database

        return getattr(database, name)
    raise AttributeError(f"module 'store' has no attribute {name!r}")
