"""A set's example ids start past any an earlier version could have given: the SQLite sequence moved on.

Migration 0003 made ``set_examples`` AUTOINCREMENT, its sequence starting at the highest id then in the table;
but before it SQLite gave a new row the highest id in use plus one, and an example removed from the top had
given its id to no row left, so 0003 would give it out again. Which ids were given and removed is recorded
nowhere: the sequence moves ``ID_MARGIN`` past the highest (a store holds a few hundred examples a set), so
no id a phone may still hold answers to a new example. PostgreSQL's sequences never gave an id twice.

Revision ID: 0004
Revises: 0003
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

ID_MARGIN = 1_000_000


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    highest = op.get_bind().exec_driver_sql("SELECT coalesce(max(id), 0) FROM set_examples").scalar() or 0
    known = (
        op.get_bind().exec_driver_sql("SELECT seq FROM sqlite_sequence WHERE name = 'set_examples'").scalar()
    )
    moved = max(highest, known or 0) + ID_MARGIN
    if known is None:
        op.execute(f"INSERT INTO sqlite_sequence (name, seq) VALUES ('set_examples', {moved})")
    else:
        op.execute(f"UPDATE sqlite_sequence SET seq = {moved} WHERE name = 'set_examples'")


def downgrade() -> None:
    """Nothing to undo: ids given past the margin stay given."""
