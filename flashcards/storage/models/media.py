"""A person's media files (images, sounds), as Anki's media sync keeps them: by file name,
with a usn per change so that each device fetches what changed since its last sync."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from ..schema import Base


class MediaFile(Base):
    """One name in a person's media folder. A deleted file keeps its row (size 0, its usn
    the deletion's), as devices learn of deletions from it; its content goes."""

    __tablename__ = "media_files"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(255), primary_key=True)  # NFC, as Anki sends it
    sha1: Mapped[str] = mapped_column(String(40))  # hex, of the content (last, if deleted)
    size: Mapped[int] = mapped_column(Integer)  # bytes; 0: deleted
    usn: Mapped[int] = mapped_column(Integer)
    mtime: Mapped[datetime] = mapped_column()

    # A device asks for the changes after its usn: one range of this index.
    __table_args__ = (Index("ix_media_files_user_usn", "user_id", "usn"),)


class MediaBlob(Base):
    """A media file's content, stored once per person however many names share it."""

    __tablename__ = "media_blobs"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    sha1: Mapped[str] = mapped_column(String(40), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)
