"""Protobuf messages read by hand: the few that Anki's newer collections keep in their columns
(note types, decks, options groups) and its package meta. Only the wire format is needed,
so no generated code: each reader names the field numbers it uses.

Every blob is untrusted; a damaged one is an `AnkiPackageError`.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

from .errors import AnkiPackageError

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
MAX_DEPTH = 8  # nested messages read; Anki's are two deep
# A config blob of Anki's is a few kilobytes (a note type's CSS and templates the most); an
# INTEGER where a blob belongs would otherwise become that many zero bytes.
MAX_BLOB = 4 * 1024 * 1024


def blob(value: object) -> bytes:
    """A column's protobuf blob, refused unless it is one of a sane size."""
    if type(value) is not bytes or len(value) > MAX_BLOB:
        raise _damaged()
    return value


def _damaged() -> AnkiPackageError:
    return AnkiPackageError("the collection has a damaged protobuf field")


def _varint(raw: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(raw) or shift > 63:
            raise _damaged()
        byte = raw[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if result >> 64:
                raise _damaged()  # a tenth byte past 64 bits
            return result, pos
        shift += 7


def _f32(raw: bytes) -> float:
    """A 32-bit float as the shortest decimal that is the same float (1.3, not
    1.2999999523162842): what Anki writes into its JSON."""
    (value,) = struct.unpack("<f", raw)
    if not math.isfinite(value):
        raise _damaged()  # no JSON holds it
    for digits in range(1, 10):
        short = float(f"{value:.{digits}g}")
        if struct.pack("<f", short) == raw:
            return short
    return float(value)


def strict_json(text: str | bytes) -> Any:
    """JSON as the standard has it: Python would also read NaN and Infinity, which no JSON
    column or client takes (ValueError, as for any text that is not JSON)."""
    return json.loads(text, parse_constant=_not_a_number)


def _not_a_number(name: str) -> None:
    raise ValueError(name)


class Message:
    """One message's fields by number, each the list of its values in order: an int for a
    varint, bytes for a length-delimited or fixed-width value."""

    def __init__(self, raw: bytes, depth: int = 0) -> None:
        if depth > MAX_DEPTH or len(raw) > MAX_BLOB:
            raise _damaged()
        self.depth = depth
        self.fields: dict[int, list[tuple[int, int | bytes]]] = {}
        pos = 0
        while pos < len(raw):
            key, pos = _varint(raw, pos)
            wire, number = key & 7, key >> 3
            value: int | bytes
            if wire == VARINT:
                value, pos = _varint(raw, pos)
            elif wire in (FIXED64, FIXED32):
                width = 8 if wire == FIXED64 else 4
                value, pos = raw[pos : pos + width], pos + width
                if pos > len(raw):
                    raise _damaged()
            elif wire == LENGTH:
                length, pos = _varint(raw, pos)
                if pos + length > len(raw):
                    raise _damaged()
                value, pos = raw[pos : pos + length], pos + length
            else:
                raise _damaged()
            self.fields.setdefault(number, []).append((wire, value))

    def has(self, number: int) -> bool:
        return number in self.fields

    def _last(self, number: int, wire: int) -> int | bytes | None:
        for found_wire, value in reversed(self.fields.get(number, ())):
            if found_wire == wire:
                return value
        return None

    def uint(self, number: int) -> int:
        value = self._last(number, VARINT)
        return value if isinstance(value, int) else 0

    def int64(self, number: int) -> int:
        """A signed 64-bit field (int64: two's complement in ten bytes)."""
        value = self.uint(number)
        return value - (1 << 64) if value >= 1 << 63 else value

    def int32(self, number: int) -> int:
        value = self.uint(number) & 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value

    def flag(self, number: int) -> bool:
        return bool(self.uint(number))

    def data(self, number: int) -> bytes:
        value = self._last(number, LENGTH)
        return value if isinstance(value, bytes) else b""

    def text(self, number: int) -> str:
        return self.data(number).decode("utf-8", "replace")

    def real(self, number: int) -> float:
        value = self._last(number, FIXED32)
        return _f32(value) if isinstance(value, bytes) else 0.0

    def reals(self, number: int) -> list[float]:
        """A repeated float, packed (one length-delimited run) or not."""
        out: list[float] = []
        for wire, value in self.fields.get(number, ()):
            if wire not in (FIXED32, LENGTH) or not isinstance(value, bytes) or len(value) % 4:
                raise _damaged()
            out.extend(_f32(value[i : i + 4]) for i in range(0, len(value), 4))
        return out

    def uints(self, number: int) -> list[int]:
        """A repeated varint, packed or not."""
        out: list[int] = []
        for _wire, value in self.fields.get(number, ()):
            if isinstance(value, int):
                out.append(value)
                continue
            pos = 0
            while pos < len(value):
                item, pos = _varint(value, pos)
                out.append(item)
        return out

    def message(self, number: int) -> Message | None:
        value = self._last(number, LENGTH)
        return Message(value, self.depth + 1) if isinstance(value, bytes) else None

    def messages(self, number: int) -> list[Message]:
        return [
            Message(value, self.depth + 1)
            for wire, value in self.fields.get(number, ())
            if wire == LENGTH and isinstance(value, bytes)
        ]

    def json_object(self, number: int) -> dict[str, Any]:
        """A field holding JSON text of an object (Anki's `other`: keys it has no field
        for), {} if absent or not an object."""
        try:
            value = strict_json(self.data(number) or b"{}")
        except (ValueError, RecursionError):
            raise _damaged() from None
        return value if isinstance(value, dict) else {}
