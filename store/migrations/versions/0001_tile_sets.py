"""Tile sets and their examples.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tile_sets",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "set_examples",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "set_id",
            sa.Integer,
            sa.ForeignKey("tile_sets.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("face", sa.String(8), nullable=False),
        sa.Column("origin", sa.String(16), nullable=False),
        sa.Column("crops", sa.LargeBinary, nullable=False),
        sa.Column("features", sa.LargeBinary, nullable=False),
        sa.Column("views", sa.Integer, nullable=False),
        sa.Column("model", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("set_examples")
    op.drop_table("tile_sets")
