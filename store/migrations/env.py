"""Alembic's environment for the store: it upgrades the connection ``store.database`` hands it."""

from alembic import context

from store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
