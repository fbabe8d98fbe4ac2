"""Tables at the table: four seats, their rounds of 血战到底 as events, and every change's revision.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tables",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("code_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("players", sa.JSON, nullable=False),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("base", sa.Integer, nullable=False),
        sa.Column("tile_set", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "rounds",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "table_id",
            sa.String(16),
            sa.ForeignKey("tables.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("dealer", sa.Integer, nullable=True),
        sa.Column("void_suits", sa.JSON, nullable=False),
        sa.Column("events", sa.JSON, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("table_id", "number", name="uq_rounds_table_number"),
    )
    op.create_table(
        "round_revisions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "round_id",
            sa.Integer,
            sa.ForeignKey("rounds.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("action", sa.Text, nullable=False),
        sa.Column("dealer", sa.Integer, nullable=True),
        sa.Column("void_suits", sa.JSON, nullable=False),
        sa.Column("events", sa.JSON, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("round_revisions")
    op.drop_table("rounds")
    op.drop_table("tables")
