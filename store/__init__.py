"""The project's store: tile sets (and, beside them, tables at the table) in one database through SQLAlchemy.

A SQLite file in the user's data folder by default (``database.default_url``); any SQLAlchemy URL in
``SMJ_DATABASE_URL`` (PostgreSQL for several workers or machines). The command line and the service read
the same store. ``open_store`` upgrades the schema to this version of the code (Alembic, ``migrations/``)
before anything reads it.
"""

from store.database import Store, StoreError, default_url, open_store, user_data_dir

__all__ = ["Store", "StoreError", "default_url", "open_store", "user_data_dir"]
