"""Reading an `.apkg` safely: size limits while unpacking, both collection layouts.

Everything is parsed into plain dataclasses before the importer writes anything, so a bad
package fails before the first row is added. The collection is copied to a temporary
directory (always removed) because SQLite reads files, and opened read-only.
"""

from __future__ import annotations

import io
import sqlite3
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple, TypeVar

import zstandard

from .errors import AnkiPackageError, Kind
from .protobuf import MAX_BLOB, Message, strict_json
from .structure import (
    CLOZE,
    NORMAL,
    SHAPE_ERRORS,
    Notetype,
    json_value,
    proto_varint,
    read_structure,
    reading,
    stored_tables,
)

__all__ = ["CLOZE", "NORMAL", "Notetype"]
T = TypeVar("T")
CHUNK = 1 << 16
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# A collection is an untrusted SQLite file: its size is capped while unpacking, and what
# reading it may cost is capped too. A view or a generated column can make rows without end
# or values of any size from a few bytes of schema, so neither is read (stored values are
# bounded by the file's size); rows are counted before they are read, and all of the
# reading has a time budget.
READ_SECONDS = 10.0
MAX_REVIEWS = 1_000_000
CARDS_PER_NOTE = 10  # rows of `cards` read per note allowed (Cloze makes several)
_CHECK_EVERY = 1_000  # SQLite steps between two looks at the clock


@dataclass(frozen=True)
class Note:
    id: int
    guid: str
    mid: int
    mod: int
    tags: list[str]
    fields: list[str]


@dataclass(frozen=True)
class AnkiCard:
    id: int
    nid: int
    did: int
    ord: int
    type: int
    queue: int
    due: int
    ivl: int
    factor: int
    reps: int
    lapses: int
    left: int
    odue: int
    odid: int
    data: dict[str, Any]
    flags: int = 0  # the low 3 bits: Anki's flag, 0 none to 7


class Revlog(NamedTuple):
    # A tuple, not a dataclass: a package has up to MAX_REVIEWS of them.
    id: int
    cid: int
    ease: int
    ivl: int
    last_ivl: int
    factor: int
    time: int
    type: int


@dataclass
class Collection:
    crt: int
    conf: dict[str, Any]
    notetypes: dict[int, Notetype]
    decks: dict[int, str]
    notes: list[Note]
    cards: list[AnkiCard]
    revlog: list[Revlog] = field(default_factory=list)
    media_files: int = 0
    # Each media file by name, when the reader was asked for them (`with_media`).
    media: dict[str, bytes] = field(default_factory=dict)


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1 << 20:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1 << 20):.1f} MiB"


def _copy_limited(source: IO[bytes], target: IO[bytes], limit: int, what: str) -> int:
    total = 0
    while chunk := source.read(CHUNK):
        total += len(chunk)
        if total > limit:
            raise AnkiPackageError(
                f"{what} unpacks to more than {human_size(limit)}; refusing it "
                "(the limit protects the server from zip bombs)",
                kind="unpacks_too_large",
                limit=limit,
            )
        target.write(chunk)
    return total


def _member(
    archive: zipfile.ZipFile, name: str, limit: int, kind: Kind = "unpacks_too_large"
) -> zipfile.ZipInfo:
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise AnkiPackageError(
            f"the package's {name} would unpack to {human_size(info.file_size)}, over the "
            f"limit of {human_size(limit)}",
            kind=kind,
            limit=limit,
        )
    return info


def _choose_collection(archive: zipfile.ZipFile) -> tuple[str, bool]:
    names = set(archive.namelist())
    if "meta" in names:
        # A real meta is a few bytes: a large one is damage, not a package too large to take.
        with archive.open(_member(archive, "meta", 1024, kind="damaged")) as f:
            version = proto_varint(f.read(1025), 1) or 0
        chosen = {1: ("collection.anki2", False), 2: ("collection.anki21", False),
                  3: ("collection.anki21b", True)}.get(version)  # fmt: skip
        if chosen is None:
            raise AnkiPackageError(
                f"this package uses format version {version}, which we cannot read; "
                "export it again from Anki (File > Export, .apkg)",
                kind="unsupported_version",
            )
        if chosen[0] not in names:
            raise AnkiPackageError(
                f"not an Anki package: {chosen[0]} is missing", kind="not_a_package"
            )
        return chosen
    for name in ("collection.anki21", "collection.anki2"):
        if name in names:
            return name, False
    raise AnkiPackageError(
        "not an Anki package: the zip has no collection in it", kind="not_a_package"
    )


def _media_listing(archive: zipfile.ZipFile, zstd: bool) -> dict[str, str]:
    """Each media file's member of the zip, by file name: the `media` member is a JSON map
    of member to name, or (format 3) zstd-compressed `MediaEntries`, whose n-th entry is
    member "n" unless it names its member (`legacy_zip_filename`, field 255)."""
    if "media" not in archive.namelist():
        return {}
    with archive.open(_member(archive, "media", MAX_BLOB, kind="damaged")) as f:
        raw = f.read(MAX_BLOB + 1)
    listing: dict[str, str] = {}
    if zstd:
        out = io.BytesIO()
        _copy_limited(zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)), out,
                      MAX_BLOB, "the media list")  # fmt: skip
        for index, entry in enumerate(Message(out.getvalue()).messages(1)):
            member = str(entry.uint(255)) if entry.has(255) else str(index)
            listing[entry.text(1)] = member
        return listing
    try:
        found = strict_json(raw or b"{}")
    except (ValueError, RecursionError):
        raise AnkiPackageError("the package's media list is damaged") from None
    if not isinstance(found, dict):
        raise AnkiPackageError("the package's media list is damaged")
    for member, name in found.items():
        if isinstance(name, str):
            listing[name] = member
    return listing


def _media_files(
    archive: zipfile.ZipFile, zstd: bool, wanted: Callable[[str], bool], budget: int
) -> dict[str, bytes]:
    """The contents of the media files `wanted` says to read (valid names), within `budget`
    bytes in all; a file the list names but the zip lacks is left out, as Anki does."""
    files: dict[str, bytes] = {}
    members = set(archive.namelist())
    total = 0
    for name, member in _media_listing(archive, zstd).items():
        if member not in members or not wanted(name):
            continue
        out = io.BytesIO()
        with archive.open(_member(archive, member, budget - total)) as f:
            source: IO[bytes] = zstandard.ZstdDecompressor().stream_reader(f) if zstd else f
            total += _copy_limited(source, out, budget - total, "the package's media")
        files[name] = out.getvalue()
    return files


@contextmanager
def open_collection(
    source: bytes | Path,
    *,
    max_bytes: int,
    max_unpacked_bytes: int,
    media_wanted: Callable[[str], bool] | None = None,
) -> Iterator[tuple[sqlite3.Connection, int, dict[str, bytes]]]:
    """The package's collection as a read-only SQLite connection, its media file count, and
    the media files `media_wanted` says to read, by name (none without it)."""
    size = len(source) if isinstance(source, bytes) else source.stat().st_size
    if size > max_bytes:
        raise AnkiPackageError(
            f"the package is {human_size(size)}, over the limit of {human_size(max_bytes)}",
            kind="too_large",
        )
    with tempfile.TemporaryDirectory(prefix="flashcards-apkg-") as tmp:
        path = Path(tmp) / "collection.sqlite"
        try:
            stream: IO[bytes] = (
                io.BytesIO(source) if isinstance(source, bytes) else source.open("rb")
            )
            with stream, zipfile.ZipFile(stream) as archive:
                name, zstd = _choose_collection(archive)
                info = _member(archive, name, max_unpacked_bytes)
                media = sum(1 for n in archive.namelist() if n.isdigit())
                with archive.open(info) as member, path.open("wb") as out:
                    if zstd:
                        reader = zstandard.ZstdDecompressor().stream_reader(member)
                        unpacked = _copy_limited(reader, out, max_unpacked_bytes, "the collection")
                    else:
                        unpacked = _copy_limited(member, out, max_unpacked_bytes, "the collection")
                files = (
                    {} if media_wanted is None
                    else _media_files(archive, zstd, media_wanted, max_unpacked_bytes - unpacked)
                )  # fmt: skip
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error) as exc:
            # zlib.error: a member whose deflate stream is damaged (zipfile does not wrap it).
            raise AnkiPackageError(
                f"not a readable .apkg (zip) file: {exc}", kind="not_a_package"
            ) from None
        except zstandard.ZstdError as exc:
            raise AnkiPackageError(f"the package's collection is damaged: {exc}") from None
        except (KeyError, NotImplementedError, RuntimeError, ValueError) as exc:
            # RuntimeError: an encrypted member; ValueError: a damaged header.
            raise AnkiPackageError(f"the package is damaged: {exc}") from None
        with read_only(path, "the package's collection") as conn:
            yield conn, media, files


@contextmanager
def read_only(path: Path, what: str) -> Iterator[sqlite3.Connection]:
    """An untrusted collection file opened to read, within the time budget; any failure an
    `AnkiPackageError` naming `what` ("the package's collection")."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    deadline = time.monotonic() + READ_SECONDS
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.set_progress_handler(lambda: time.monotonic() > deadline, _CHECK_EVERY)
        # Schema 18's name columns and their indexes are declared with Anki's own collation.
        conn.create_collation("unicase", unicase)
        yield conn
    except SHAPE_ERRORS:
        # Hand-made collections can have values of the wrong shape anywhere; the readers
        # name the part, this is for anything they do not cover.
        raise AnkiPackageError(
            f"{what} is damaged: a value is not in the form Anki writes"
        ) from None
    except sqlite3.DatabaseError as exc:
        if time.monotonic() > deadline:
            raise AnkiPackageError(
                f"reading {what} took over {READ_SECONDS:.0f} s; a real collection of this"
                " size reads in a fraction of that"
            ) from None
        raise AnkiPackageError(
            f"{what} is not a readable Anki database: {exc}", kind="not_a_package"
        ) from None
    finally:
        conn.close()


def unicase(a: str, b: str) -> int:
    """Anki's `unicase` collation: Unicode text compared without case."""
    a, b = a.casefold(), b.casefold()
    return (a > b) - (a < b)


def count_rows(conn: sqlite3.Connection, table: str) -> int:
    # `table` is one of ours, never the package's.
    return int(conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])


def read_notes(conn: sqlite3.Connection) -> Iterator[Note]:
    for nid, guid, mid, mod, tags, flds in conn.execute(
        "SELECT id, guid, mid, mod, tags, flds FROM notes ORDER BY id"
    ):
        yield Note(
            int(nid), str(guid), int(mid), int(mod), str(tags).split(), str(flds).split("\x1f")
        )


def read_cards(conn: sqlite3.Connection) -> Iterator[AnkiCard]:
    for row in conn.execute(
        "SELECT id, nid, did, ord, type, queue, due, ivl, factor, reps, lapses, left, odue, odid,"
        " data, flags FROM cards ORDER BY nid, ord"
    ):
        data = json_value(row[14], "a card's data (cards.data)")
        cid, nid, did, ord_, ctype, queue, due, ivl, factor, reps, lapses, left, odue, odid = (
            int(v) for v in row[:14]
        )
        yield AnkiCard(
            cid, nid, did, ord_, ctype, queue, due, ivl, factor, reps, lapses, left, odue, odid,
            data=data if isinstance(data, dict) else {}, flags=int(row[15]) & 7,
        )  # fmt: skip


def read_revlog(conn: sqlite3.Connection) -> Iterator[Revlog]:
    if "revlog" not in stored_tables(conn):
        return
    for row in conn.execute(
        "SELECT id, cid, ease, ivl, lastIvl, factor, time, type FROM revlog ORDER BY cid, id"
    ):
        yield Revlog._make(map(int, row))


def _read_all(what: str, rows: Iterator[T]) -> list[T]:
    with reading(what):
        return list(rows)


def read_package(
    source: bytes | Path,
    *,
    max_bytes: int,
    max_unpacked_bytes: int,
    max_notes: int,
    with_revlog: bool,
    media_wanted: Callable[[str], bool] | None = None,
) -> Collection:
    with open_collection(
        source,
        max_bytes=max_bytes,
        max_unpacked_bytes=max_unpacked_bytes,
        media_wanted=media_wanted,
    ) as (conn, media, files):
        crt, conf, notetypes, decks = read_structure(conn)
        count = count_rows(conn, "notes")
        if count > max_notes:
            raise AnkiPackageError(
                f"the package has {count} notes, over the limit of {max_notes}",
                kind="too_many_notes",
                count=count,
                limit=max_notes,
            )
        cards, card_limit = count_rows(conn, "cards"), max_notes * CARDS_PER_NOTE
        if cards > card_limit:
            raise AnkiPackageError(
                f"the package has {cards} cards, over the limit of {card_limit}",
                kind="too_many_cards",
                count=cards,
                limit=card_limit,
            )
        reviews = (
            count_rows(conn, "revlog") if with_revlog and "revlog" in stored_tables(conn) else 0
        )
        if reviews > MAX_REVIEWS:
            raise AnkiPackageError(
                f"the package has {reviews} reviews, over the limit of {MAX_REVIEWS}",
                kind="too_many_reviews",
                count=reviews,
                limit=MAX_REVIEWS,
            )
        return Collection(
            crt=crt,
            conf=conf if isinstance(conf, dict) else {},
            notetypes=notetypes,
            decks=decks,
            notes=_read_all("the notes (notes)", read_notes(conn)),
            cards=_read_all("the cards (cards)", read_cards(conn)),
            revlog=_read_all("the review log (revlog)", read_revlog(conn)) if with_revlog else [],
            media_files=media,
            media=files,
        )
