"""A set's example ids are never given again: ``set_examples`` on SQLite with AUTOINCREMENT.

SQLite otherwise gives a new row the highest id in use plus one, so an example removed (a set taught again,
a correction replaced) could lend its id to a new one, and a phone still holding the old id would change the
wrong example. PostgreSQL's sequences never give an id twice: nothing to do there.

Revision ID: 0003
Revises: 0002
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    # copied into a new table with the same rows and ids; the sequence starts at the highest id
    with op.batch_alter_table("set_examples", recreate="always", table_kwargs={"sqlite_autoincrement": True}):
        pass


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table(
        "set_examples", recreate="always", table_kwargs={"sqlite_autoincrement": False}
    ):
        pass
