"""Reading an `.apkg` safely: size limits while unpacking, both collection layouts.

Everything is parsed into plain dataclasses before the importer writes anything, so a bad
package fails before the first row is added. The collection is copied to a temporary
directory (always removed) because SQLite reads files, and opened read-only.
"""

from __future__ import annotations

import html
import io
import re
import sqlite3
import tempfile
import time
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Set
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple, TypeVar
from urllib.parse import unquote

import zstandard

from ..people.media_folder import MAX_FILE_BYTES
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


# Where a field names a media file: an attribute's `src`, or Anki's sound tag. Read before the
# fields are sanitized, so it finds a superset of the names the cards keep (`sanitize`).
MEDIA_NAMED_RE = re.compile(
    r"""src\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))|\[sound:([^\[\]]+)\]""", re.IGNORECASE
)
# A package's media unpack to at most twice its size and this: images and sounds are
# compressed already, so media that unpack to much more than the package are a bomb.
MEDIA_SLACK = 1 << 20


def named_media(notes: Iterable[Note]) -> set[str]:
    """The file names the notes' fields may name (`names_in_fields`)."""
    return names_in_fields(field_html for note in notes for field_html in note.fields)


def names_in_fields(fields: Iterable[str]) -> set[str]:
    """The file names Anki fields may name, as written, unescaped and unquoted."""
    found: set[str] = set()
    for field_html in fields:
        if "src" not in field_html and "[sound:" not in field_html:
            continue
        for match in MEDIA_NAMED_RE.finditer(field_html):
            raw = next(g for g in match.groups() if g is not None)
            name = html.unescape(raw)
            found.update((raw, name, unquote(name)))
    return found


@dataclass
class PackageMedia:
    """A package's media files, read by name on demand (only the files the cards use), within
    `budget` bytes in all and Anki's 100 MiB a file."""

    archive: zipfile.ZipFile
    zstd: bool
    budget: int

    def listing(self) -> dict[str, str]:
        """Each media file's member of the zip, by file name: the `media` member is a JSON
        map of member to name, or (format 3) zstd-compressed `MediaEntries`, whose n-th entry
        is member "n" unless it names its member (`legacy_zip_filename`, field 255)."""
        if "media" not in self.archive.namelist():
            return {}
        with self.archive.open(_member(self.archive, "media", MAX_BLOB, kind="damaged")) as f:
            raw = f.read(MAX_BLOB + 1)
        pairs: list[tuple[object, object]] = []
        if self.zstd:
            out = io.BytesIO()
            _copy_limited(zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)), out,
                          MAX_BLOB, "the media list")  # fmt: skip
            for index, entry in enumerate(Message(out.getvalue()).messages(1)):
                member = str(entry.uint(255)) if entry.has(255) else str(index)
                pairs.append((entry.text(1), member))
        else:
            try:
                found = strict_json(raw or b"{}")
            except (ValueError, RecursionError):
                raise AnkiPackageError("the package's media list is damaged") from None
            if not isinstance(found, dict):
                raise AnkiPackageError("the package's media list is damaged")
            pairs = [(name, member) for member, name in found.items()]
        listing = {n: m for n, m in pairs if isinstance(n, str) and isinstance(m, str)}
        # Each file is a member of its own: a list naming one member for several files is
        # damage (or a way to have one member unpacked many times over).
        if len(set(listing.values())) < len(listing):
            raise AnkiPackageError("the package's media list is damaged")
        return listing

    def read(self, names: Set[str]) -> dict[str, bytes]:
        """The content of each of these names the package has; a name its list has but its
        zip lacks is left out, as Anki does."""
        files: dict[str, bytes] = {}
        total = 0
        with zip_errors():
            members = set(self.archive.namelist())
            for name, member in self.listing().items():
                if name not in names or member not in members:
                    continue
                limit = min(self.budget - total, MAX_FILE_BYTES)
                out = io.BytesIO()
                with self.archive.open(_member(self.archive, member, limit)) as f:
                    source: IO[bytes] = (
                        zstandard.ZstdDecompressor().stream_reader(f) if self.zstd else f
                    )
                    total += _copy_limited(source, out, limit, "the package's media")
                files[name] = out.getvalue()
        return files


@contextmanager
def zip_errors() -> Iterator[None]:
    """The errors of reading a damaged zip or zstd stream, as `AnkiPackageError`s."""
    try:
        yield
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error) as exc:
        # zlib.error: a member whose deflate stream is damaged (zipfile does not wrap it).
        raise AnkiPackageError(
            f"not a readable .apkg (zip) file: {exc}", kind="not_a_package"
        ) from None
    except zstandard.ZstdError as exc:
        raise AnkiPackageError(f"the package is damaged: {exc}") from None
    except (KeyError, NotImplementedError, RuntimeError, ValueError) as exc:
        # RuntimeError: an encrypted member; ValueError: a damaged header.
        raise AnkiPackageError(f"the package is damaged: {exc}") from None


@contextmanager
def open_collection(
    source: bytes | Path, *, max_bytes: int, max_unpacked_bytes: int
) -> Iterator[tuple[sqlite3.Connection, int, PackageMedia]]:
    """The package's collection as a read-only SQLite connection, its media file count, and
    its media files to read (while the collection is open)."""
    size = len(source) if isinstance(source, bytes) else source.stat().st_size
    if size > max_bytes:
        raise AnkiPackageError(
            f"the package is {human_size(size)}, over the limit of {human_size(max_bytes)}",
            kind="too_large",
        )
    with tempfile.TemporaryDirectory(prefix="flashcards-apkg-") as tmp, ExitStack() as stack:
        path = Path(tmp) / "collection.sqlite"
        with zip_errors():
            stream: IO[bytes] = stack.enter_context(
                io.BytesIO(source) if isinstance(source, bytes) else source.open("rb")
            )
            archive = stack.enter_context(zipfile.ZipFile(stream))
            name, zstd = _choose_collection(archive)
            info = _member(archive, name, max_unpacked_bytes)
            count = sum(1 for n in archive.namelist() if n.isdigit())
            with archive.open(info) as member, path.open("wb") as out:
                if zstd:
                    reader = zstandard.ZstdDecompressor().stream_reader(member)
                    unpacked = _copy_limited(reader, out, max_unpacked_bytes, "the collection")
                else:
                    unpacked = _copy_limited(member, out, max_unpacked_bytes, "the collection")
        budget = min(max_unpacked_bytes - unpacked, 2 * size + MEDIA_SLACK)
        media = PackageMedia(archive, zstd, budget)
        with read_only(path, "the package's collection") as conn:
            yield conn, count, media


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
    with_media: bool = False,
) -> Collection:
    """The package's collection; `with_media`, the media files its notes name too."""
    with open_collection(source, max_bytes=max_bytes, max_unpacked_bytes=max_unpacked_bytes) as (
        conn,
        media,
        files,
    ):
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
        notes = _read_all("the notes (notes)", read_notes(conn))
        return Collection(
            crt=crt,
            conf=conf if isinstance(conf, dict) else {},
            notetypes=notetypes,
            decks=decks,
            notes=notes,
            cards=_read_all("the cards (cards)", read_cards(conn)),
            revlog=_read_all("the review log (revlog)", read_revlog(conn)) if with_revlog else [],
            media_files=media,
            media=files.read(named_media(notes)) if with_media else {},
        )
