"""The store's tables as SQLAlchemy sees them; ``migrations/versions`` creates and changes them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# every constraint and index named by rule, so a migration can name what it alters (Alembic's advice)
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = MetaData(naming_convention=NAMING)


def now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = metadata


class TileSetRow(Base):
    """A set on the table, by its name."""

    __tablename__ = "tile_sets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    source: Mapped[str] = mapped_column(Text)  # what it was taught from, as told to people
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    examples: Mapped[list[ExampleRow]] = relationship(
        back_populates="tile_set",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="ExampleRow.id",
    )


class ExampleRow(Base):
    """One example of a face of a set: its crops, one a view, as a PNG strip, and each view's features
    as the classifier ``model`` (its weights' sha256) gave them."""

    __tablename__ = "set_examples"
    __table_args__ = ({"sqlite_autoincrement": True},)  # an id is never given twice (migration 0003)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    set_id: Mapped[int] = mapped_column(ForeignKey("tile_sets.id", ondelete="CASCADE"), index=True)
    face: Mapped[str] = mapped_column(String(8))  # a class name: m1..s9, back, honour, none
    origin: Mapped[str] = mapped_column(String(16))  # layout | row | correction
    crops: Mapped[bytes] = mapped_column(LargeBinary)
    features: Mapped[bytes] = mapped_column(LargeBinary)  # float32, views x D
    views: Mapped[int] = mapped_column(Integer)
    model: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    tile_set: Mapped[TileSetRow] = relationship(back_populates="examples")


class TableRow(Base):
    """A table: four seats, the rules they play, the base stake; written by holders of its code."""

    __tablename__ = "tables"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 of the join code
    players: Mapped[list[str]] = mapped_column(JSON)
    preset: Mapped[str] = mapped_column(String(64))
    base: Mapped[int] = mapped_column(Integer)
    tile_set: Mapped[str | None] = mapped_column(
        String(64), nullable=True
    )  # the set its photos are read with
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    rounds: Mapped[list[RoundRow]] = relationship(
        back_populates="table",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="RoundRow.number",
    )


class RoundRow(Base):
    """A round: its events in the order they happened (the round JSON of ``scoring.settlement``), and a
    version that every write moves on (a write made on an older one is refused)."""

    __tablename__ = "rounds"
    __table_args__ = (UniqueConstraint("table_id", "number", name="uq_rounds_table_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    dealer: Mapped[int | None] = mapped_column(Integer, nullable=True)
    void_suits: Mapped[dict[str, str]] = mapped_column(JSON)
    events: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    version: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    table: Mapped[TableRow] = relationship(back_populates="rounds")
    # every UPDATE says WHERE version = the one read, and moves it on: two writers, one wins
    __mapper_args__ = {"version_id_col": version}  # noqa: RUF012
    revisions: Mapped[list[RevisionRow]] = relationship(
        cascade="all, delete-orphan", passive_deletes=True, order_by="RevisionRow.version"
    )


class RevisionRow(Base):
    """A round as one write left it: the history a correction keeps."""

    __tablename__ = "round_revisions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(Text)
    dealer: Mapped[int | None] = mapped_column(Integer, nullable=True)
    void_suits: Mapped[dict[str, str]] = mapped_column(JSON)
    events: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
