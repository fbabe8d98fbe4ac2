"""The store's tables as SQLAlchemy sees them; ``migrations/versions`` creates and changes them."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime, ForeignKey, Integer, LargeBinary, MetaData, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

metadata = MetaData()


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
