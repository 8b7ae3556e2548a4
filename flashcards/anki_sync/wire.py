"""The envelope of a version-11 sync request and its answer, without Flask.

A request names its protocol version, host key, client and session in the `anki-sync` header
(JSON) and sends a zstd-compressed body; the answer is zstd-compressed with its uncompressed
size in `anki-original-size`. Anki answers a refusal with a bare HTTP status whose body is
the status's reason phrase, and its clients act on the status alone (`rslib/src/sync/
error.rs`, `error/network.rs`): 403 is "sign in again", 409 "another sync is running", 501
"upgrade Anki", 400 "check the database", other 4xx a network error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import IO, Any, TypeGuard, cast

import zstandard

from ..anki.protobuf import strict_json

HEADER = "anki-sync"
ORIGINAL_SIZE = "anki-original-size"
VERSION = 11
# Protocol versions 8-10 send a gzip'd multipart form without the header; this server speaks
# 11 only, which every client since Anki 2.1.57 (January 2023) speaks.
OLDEST_LEGACY_VERSION = 8
# Anki's own server takes 100 MB compressed and three times that once decompressed.
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
UNCOMPRESSED_FACTOR = 3
READ_SIZE = 64 * 1024
MAX_FIELD_LENGTH = 200  # host key, client version, session id: far longer is no client's


class Refused(Exception):
    """A request the protocol answers with `status` alone; `detail` is for the log."""

    def __init__(self, status: int, detail: str, *, retry_after: int | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.retry_after = retry_after

    @property
    def body(self) -> bytes:
        return HTTPStatus(self.status).phrase.encode()


def bad_request(detail: str) -> Refused:
    return Refused(HTTPStatus.BAD_REQUEST, detail)


LOWEST, HIGHEST = -(2**63), 2**63 - 1
PLAIN_TYPES = frozenset({int, float, str, type(None)})


def is_plain_row(entry: object, length: int) -> TypeGuard[Sequence[Any]]:
    """A list (or a row read from a file) of at least `length` plain values (numbers of 64
    bits, text, null): a row as a device sends it. Checked by type, not value by value: an
    upload has millions."""
    if not isinstance(entry, list | tuple) or len(entry) < length:
        return False
    if not PLAIN_TYPES.issuperset(map(type, entry)):
        return False
    ints = [v for v in entry if type(v) is int]
    if ints and (min(ints) < LOWEST or max(ints) > HIGHEST):
        return False
    # A REAL infinity (SQLite makes one of "1e999" in an INTEGER column): no JSON holds it.
    return all(math.isfinite(v) for v in entry if type(v) is float)


def is_whole(value: object) -> TypeGuard[int]:
    """A whole number that fits Anki's (and our) 64-bit columns: ids, usns, times."""
    return type(value) is int and LOWEST <= value <= HIGHEST  # not a bool, an int subclass


@dataclass(frozen=True)
class SyncHeader:
    version: int
    key: str  # the host key; empty on hostKey itself
    client: str  # e.g. "anki,26.09.3 (abcdef),lin"
    session: str  # random per sync, the same on each of its requests


def parse_header(value: str | None) -> SyncHeader:
    """The request's `anki-sync` header. Without one, the client speaks a version before 11,
    which gets the answer that makes Anki ask for an upgrade (501, as Anki's server answers
    an unsupported version in `meta`); a version newer than 11 is a 400, as Anki's own."""
    if value is None:
        raise Refused(HTTPStatus.NOT_IMPLEMENTED, "legacy multipart sync (versions 8-10)")
    try:
        raw = json.loads(value)
    except ValueError:
        raise bad_request("the anki-sync header is not JSON") from None
    if not isinstance(raw, dict):
        raise bad_request("the anki-sync header is not a JSON object")
    version = raw.get("v")
    if not isinstance(version, int) or isinstance(version, bool):
        raise bad_request("the anki-sync header has no version")
    if version < VERSION:
        raise Refused(HTTPStatus.NOT_IMPLEMENTED, f"unsupported sync version {version}")
    if version > VERSION:
        raise bad_request(f"unsupported sync version {version}")
    fields = {}
    for name in ("k", "c", "s"):
        text = raw.get(name, "")
        if not isinstance(text, str) or len(text) > MAX_FIELD_LENGTH or "\x00" in text:
            raise bad_request(f"the anki-sync header's {name!r} is not a short string")
        fields[name] = text
    return SyncHeader(version, fields["k"], fields["c"], fields["s"])


class _Capped:
    """A body stream that refuses to give more than `limit` bytes (the compressed limit),
    counting as it reads, so that a body without a length is cut off as it streams in."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self.stream = stream
        self.limit = limit
        self.taken = 0

    def read(self, size: int = -1) -> bytes:
        want = READ_SIZE if size is None or size < 0 else size
        data = self.stream.read(min(want, self.limit + 1 - self.taken))
        self.taken += len(data)
        if self.taken > self.limit:
            raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "compressed body over the limit")
        return data


def read_body(stream: IO[bytes], *, max_bytes: int) -> bytes:
    """The request's body, decompressed. Both sizes are checked while reading: more than
    `max_bytes` compressed or `UNCOMPRESSED_FACTOR` times that decompressed is a 413, so a
    decompression bomb stops at the limit instead of filling the memory. A body that is not
    zstd is a 400."""
    max_plain = max_bytes * UNCOMPRESSED_FACTOR
    capped = cast(IO[bytes], _Capped(stream, max_bytes))  # it has the `read` zstd calls
    reader = zstandard.ZstdDecompressor().stream_reader(
        capped, read_size=READ_SIZE, read_across_frames=True
    )
    parts: list[bytes] = []
    size = 0
    try:
        while chunk := reader.read(READ_SIZE):
            size += len(chunk)
            if size > max_plain:
                raise Refused(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "decompressed body over the limit"
                )
            parts.append(chunk)
    except zstandard.ZstdError:
        raise bad_request("the body is not zstd-compressed") from None
    return b"".join(parts)


def parse_json(body: bytes) -> Any:
    """The body's JSON; a 400 for anything else (Anki's own "invalid json")."""
    try:
        return strict_json(body)
    except ValueError:  # UnicodeDecodeError included
        raise bad_request("the body is not JSON") from None


def json_object(body: bytes) -> dict[str, Any]:
    value = parse_json(body)
    if not isinstance(value, dict):
        raise bad_request("the body is not a JSON object")
    return value


def encode_json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def compress(data: bytes) -> bytes:
    # Level 3 is zstd's default: at collection sizes it compresses at several hundred MB/s.
    return zstandard.ZstdCompressor(level=3).compress(data)


def compress_file(data: bytes) -> bytes:
    """A collection file, which a download waits for: level 2 takes about a third less time
    than 3 for 2 % more bytes (an 11 MB collection: 2.47 MB against 2.43), and every core
    works on it (the output is one frame still, as the client's decoder wants)."""
    return zstandard.ZstdCompressor(level=2, threads=-1).compress(data)


def decompress(data: bytes, size: int) -> bytes:
    """What `compress` made of `size` bytes (a file we keep, not a client's body)."""
    return zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
