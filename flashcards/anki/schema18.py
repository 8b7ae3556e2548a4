"""A schema-18 collection's note types, decks, options groups and settings as schema 11's JSON
objects, the form the sync protocol and schema-11 files carry them in. Current Anki clients
keep these in tables with protobuf columns and upload their collection so; each object here
is what Anki itself gives as its schema-11 form (keys it has no column for travel in the
protobuf's `other`, JSON, and come back as they were).

Pure: an open, read-only `sqlite3` connection in, plain objects out.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .protobuf import Message, blob
from .structure import deck_name, reading

OTHER = 255  # every config message's JSON of keys it has no field for
# Notetype.Config.CardRequirement.kind
REQUIREMENT_KINDS = {0: "none", 1: "any", 2: "all"}


def _optional_id(value: int) -> int | None:
    return value if value > 0 else None


def notetypes(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    fields: dict[int, list[dict[str, Any]]] = {}
    templates: dict[int, list[dict[str, Any]]] = {}
    with reading("the note types (notetypes, fields, templates)"):
        for ntid, ord_, name, config in conn.execute(
            "SELECT ntid, ord, name, config FROM fields ORDER BY ntid, ord"
        ):
            fields.setdefault(int(ntid), []).append(_field(int(ord_), str(name), blob(config)))
        for ntid, ord_, name, mtime, usn, config in conn.execute(
            "SELECT ntid, ord, name, mtime_secs, usn, config FROM templates ORDER BY ntid, ord"
        ):
            templates.setdefault(int(ntid), []).append(
                _template(int(ord_), str(name), int(mtime), int(usn), blob(config))
            )
        return [
            _notetype(int(ntid), str(name), int(mtime), int(usn), blob(config),
                      fields.get(int(ntid), []), templates.get(int(ntid), []))
            for ntid, name, mtime, usn, config in conn.execute(
                "SELECT id, name, mtime_secs, usn, config FROM notetypes ORDER BY id"
            )
        ]  # fmt: skip


def _notetype(
    ntid: int,
    name: str,
    mtime: int,
    usn: int,
    config: bytes,
    fields: list[dict[str, Any]],
    templates: list[dict[str, Any]],
) -> dict[str, Any]:
    c = Message(config)
    out: dict[str, Any] = {
        "id": ntid,
        "name": name,
        "type": c.uint(1),
        "mod": mtime,
        "usn": usn,
        "sortf": c.uint(2),
        "did": _optional_id(c.int64(4)),
        "tmpls": templates,
        "flds": fields,
        "css": c.text(3),
        "latexPre": c.text(5),
        "latexPost": c.text(6),
        "latexsvg": c.flag(7),
        "req": [
            [r.uint(1), REQUIREMENT_KINDS.get(r.uint(2), "none"), r.uints(3)] for r in c.messages(8)
        ],
    }
    if c.uint(9):
        out["originalStockKind"] = c.uint(9)
    if c.has(10):
        out["originalId"] = c.int64(10)
    return {**out, **c.json_object(OTHER)}


def _field(ord_: int, name: str, config: bytes) -> dict[str, Any]:
    c = Message(config)
    out = {
        "name": name,
        "ord": ord_,
        "sticky": c.flag(1),
        "rtl": c.flag(2),
        "font": c.text(3),
        "size": c.uint(4),
        "description": c.text(5),
        "plainText": c.flag(6),
        "collapsed": c.flag(7),
        "excludeFromSearch": c.flag(8),
        "id": c.int64(9) if c.has(9) else None,
        "tag": c.uint(10) if c.has(10) else None,
        "preventDeletion": c.flag(11),
    }
    return {**out, **c.json_object(OTHER)}


def _template(ord_: int, name: str, mtime: int, usn: int, config: bytes) -> dict[str, Any]:
    c = Message(config)
    out = {
        "name": name,
        "ord": ord_,
        "qfmt": c.text(1),
        "afmt": c.text(2),
        "bqfmt": c.text(3),
        "bafmt": c.text(4),
        "did": _optional_id(c.int64(5)),
        "bfont": c.text(6),
        "bsize": c.uint(7),
        "id": c.int64(8) if c.has(8) else None,
    }
    return {**out, **c.json_object(OTHER)}


def decks(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    with reading("the decks (decks)"):
        return [
            _deck(int(did), deck_name(name), int(mtime), int(usn), blob(common), blob(kind))
            for did, name, mtime, usn, common, kind in conn.execute(
                "SELECT id, name, mtime_secs, usn, common, kind FROM decks ORDER BY id"
            )
        ]


def _deck(did: int, name: str, mtime: int, usn: int, common: bytes, kind: bytes) -> dict[str, Any]:
    c = Message(common)
    day = c.uint(3)
    out: dict[str, Any] = {
        "id": did,
        "mod": mtime,
        "name": name,
        "usn": usn,
        "lrnToday": [day, c.int32(6)],
        "revToday": [day, c.int32(5)],
        "newToday": [day, c.int32(4)],
        "timeToday": [day, c.int32(7)],
        "collapsed": c.flag(1),
        "browserCollapsed": c.flag(2),
    }
    container = Message(kind)
    normal, filtered = container.message(1), container.message(2)
    if filtered is not None:
        out.update(_filtered(filtered))
    else:
        out.update(_normal(normal or Message(b"")))
    return {**out, **c.json_object(OTHER)}


def _normal(n: Message) -> dict[str, Any]:
    out: dict[str, Any] = {
        "desc": n.text(4),
        "dyn": 0,
        "conf": n.int64(1),
        "extendNew": n.uint(2),
        "extendRev": n.uint(3),
        "reviewLimit": n.uint(6) if n.has(6) else None,
        "newLimit": n.uint(7) if n.has(7) else None,
        "reviewLimitToday": _day_limit(n.message(8)),
        "newLimitToday": _day_limit(n.message(9)),
        "desiredRetention": round(n.real(10) * 100) if n.has(10) else None,
    }
    if n.flag(5):
        out["md"] = True
    return out


def _day_limit(limit: Message | None) -> dict[str, int] | None:
    return None if limit is None else {"limit": limit.uint(1), "today": limit.uint(2)}


def _filtered(f: Message) -> dict[str, Any]:
    delays = f.reals(3)
    return {
        "desc": "",
        "dyn": 1,
        "resched": f.flag(1),
        "terms": [[t.text(1), t.uint(2), t.uint(3)] for t in f.messages(2)],
        "separate": True,
        "delays": delays or None,
        "previewDelay": f.uint(4),
        "previewAgainSecs": f.uint(7),
        "previewHardSecs": f.uint(5),
        "previewGoodSecs": f.uint(6),
    }


def deck_configs(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    with reading("the options groups (deck_config)"):
        return [
            _deck_config(int(dcid), str(name), int(mtime), int(usn), blob(config))
            for dcid, name, mtime, usn, config in conn.execute(
                "SELECT id, name, mtime_secs, usn, config FROM deck_config ORDER BY id"
            )
        ]


def _deck_config(dcid: int, name: str, mtime: int, usn: int, config: bytes) -> dict[str, Any]:
    c = Message(config)
    out: dict[str, Any] = {
        "id": dcid,
        "mod": mtime,
        "name": name,
        "usn": usn,
        "maxTaken": c.uint(24),
        "autoplay": not c.flag(23),
        "timer": 1 if c.flag(25) else 0,
        "replayq": not c.flag(26),
        "new": {
            "bury": c.flag(27),
            "delays": c.reals(1),
            "initialFactor": round(c.real(11) * 1000),
            "ints": [c.uint(18), c.uint(19), 0],
            # Schema 11 numbers the insertion order the other way round (1: in order added).
            "order": 0 if c.uint(20) == 1 else 1,
            "perDay": c.uint(9),
        },
        "rev": {
            "bury": c.flag(28),
            "ease4": c.real(12),
            "ivlFct": c.real(15),
            "maxIvl": c.uint(16),
            "perDay": c.uint(10),
            "hardFactor": c.real(13),
        },
        "lapse": {
            "delays": c.reals(2),
            "leechAction": c.uint(21),
            "leechFails": c.uint(22),
            "minInt": c.uint(17),
            "mult": c.real(14),
        },
        "dyn": False,
        "newMix": c.uint(30),
        "newPerDayMinimum": c.uint(35),
        "interdayLearningMix": c.uint(31),
        "reviewOrder": c.uint(33),
        "newSortOrder": c.uint(32),
        "newGatherPriority": c.uint(34),
        "buryInterdayLearning": c.flag(29),
        "fsrsWeights": c.reals(3),
        "fsrsParams5": c.reals(5),
        "fsrsParams6": c.reals(6),
        "desiredRetention": c.real(37),
        "ignoreRevlogsBeforeDate": c.text(46),
        "easyDaysPercentages": c.reals(4),
        "stopTimerOnAnswer": c.flag(38),
        "secondsToShowQuestion": c.real(41),
        "secondsToShowAnswer": c.real(42),
        "questionAction": c.uint(36),
        "answerAction": c.uint(43),
        "waitForAudio": c.flag(44),
        "sm2Retention": c.real(40),
        "weightSearch": c.text(45),
    }
    other = c.json_object(OTHER)
    # Keys of the new, review and lapse parts that schema 18 has no field for come back
    # into those parts, not in place of them.
    for part in ("new", "rev", "lapse"):
        extra = other.pop(part, None)
        if isinstance(extra, dict):
            out[part] = {**extra, **out[part]}
    return {**out, **other}


def tags(conn: sqlite3.Connection) -> list[str]:
    with reading("the tags (tags)"):
        return [str(tag) for (tag,) in conn.execute("SELECT tag FROM tags ORDER BY tag")]
