"""The schema-11 collection layout genanki writes and every Anki since 2.1 imports.

Only the pieces an importer reads are filled in; the JSON blobs carry the keys Anki's
`*Schema11` serde structs expect so that nothing falls back to surprising defaults.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

# Fixed forever: Anki matches notetypes by id, so a new id on each export would make every
# re-import create another notetype. A plausible millisecond stamp (2024-02) keeps Anki's
# "ids in the future" check quiet. The name is not a stock one, which Anki would rename.
NOTETYPE_ID = 1_708_000_000_001
NOTETYPE_NAME = "Flashcards (front/back)"
FIELDS = ("Front", "Back", "Key")
EXPLANATION_CLASS = "explanation"
DEFAULT_DECK_ID = 1
DECK_CONFIG_ID = 1
# A package's options group: Anki adds options by id and keeps one it has, so the id of its
# own Default (1) would leave the package's options behind. Fixed forever, like NOTETYPE_ID.
PACKAGE_CONFIG_ID = 1_708_000_000_003
# Deck, note and card ids only need to be consistent inside one package (Anki matches decks
# by name and notes by guid); deriving them from our ids keeps them stable across exports.
ID_BASE = 1_600_000_000_000

# Anki keeps a card's FSRS memory state to 4 decimals (`cards.data`). Every stability and
# difficulty that crosses a package goes through `memory_value`: an exported card's state,
# and an imported card's state and its log, which then agree (the log's last answer is the
# state it left, as for an answer given here).
MEMORY_DECIMALS = 4


def memory_value(value: float) -> float:
    return round(value, MEMORY_DECIMALS)


TABLES = """
CREATE TABLE col (
    id integer primary key, crt integer not null, mod integer not null,
    scm integer not null, ver integer not null, dty integer not null,
    usn integer not null, ls integer not null, conf text not null,
    models text not null, decks text not null, dconf text not null, tags text not null
);
CREATE TABLE notes (
    id integer primary key, guid text not null, mid integer not null,
    mod integer not null, usn integer not null, tags text not null,
    flds text not null, sfld integer not null, csum integer not null,
    flags integer not null, data text not null
);
CREATE TABLE cards (
    id integer primary key, nid integer not null, did integer not null,
    ord integer not null, mod integer not null, usn integer not null,
    type integer not null, queue integer not null, due integer not null,
    ivl integer not null, factor integer not null, reps integer not null,
    lapses integer not null, left integer not null, odue integer not null,
    odid integer not null, flags integer not null, data text not null
);
CREATE TABLE revlog (
    id integer primary key, cid integer not null, usn integer not null,
    ease integer not null, ivl integer not null, lastIvl integer not null,
    factor integer not null, time integer not null, type integer not null
);
CREATE TABLE graves (usn integer not null, oid integer not null, type integer not null);
"""
# Made once the rows are in: one sort per index instead of an index update per row.
INDEXES = """
CREATE INDEX ix_notes_usn on notes (usn);
CREATE INDEX ix_cards_usn on cards (usn);
CREATE INDEX ix_revlog_usn on revlog (usn);
CREATE INDEX ix_cards_nid on cards (nid);
CREATE INDEX ix_cards_sched on cards (did, queue, due);
CREATE INDEX ix_revlog_cid on revlog (cid);
CREATE INDEX ix_notes_csum on notes (csum);
"""

CSS = """.card { font-family: arial; font-size: 20px; text-align: center; color: black;
  background-color: white; }
.explanation { margin-top: 1em; font-size: 0.85em; color: #555; }
"""


# Siblings (cards from one note) go out as one note, so that Anki buries them as siblings:
# the deletions of a Cloze note as a Cloze note, any others as a note of a type with one card
# template per sibling (ids fixed per sibling count, like NOTETYPE_ID).
CLOZE_NOTETYPE_ID = 1_708_000_000_002
CLOZE_NOTETYPE_NAME = "Flashcards (cloze)"
CLOZE_FIELDS = ("Text", "Back Extra", "Key")
SIBLINGS_NOTETYPE_BASE = 1_708_000_001_000  # + the number of siblings
MAX_SIBLINGS = 100
SIBLINGS_NOTE_FIELD = "Note"


def siblings_fields(count: int) -> tuple[str, ...]:
    """Front, back and key of each sibling, then the note's own key."""
    per_card = ((f"Front {i}", f"Back {i}", f"Key {i}") for i in range(1, count + 1))
    return (*(name for names in per_card for name in names), SIBLINGS_NOTE_FIELD)


def _notetype(
    ntid: int,
    name: str,
    kind: int,
    fields: Sequence[str],
    templates: Sequence[tuple[str, str]],
    mod: int,
) -> dict[str, Any]:
    field_defs = [
        {"name": field, "ord": i, "sticky": False, "rtl": False, "font": "Arial", "size": 20}
        for i, field in enumerate(fields)
    ]
    return {
        "id": ntid,
        "name": name,
        "type": kind,
        "mod": mod,
        "usn": -1,
        "sortf": 0,
        "did": None,
        "tags": [],
        "vers": [],
        "flds": field_defs,
        "tmpls": [
            {
                "name": f"Card {i + 1}",
                "ord": i,
                "qfmt": qfmt,
                "afmt": afmt,
                "bqfmt": "",
                "bafmt": "",
                "did": None,
            }
            for i, (qfmt, afmt) in enumerate(templates)
        ],
        "css": CSS,
        "latexPre": "\\documentclass[12pt]{article}\n\\begin{document}\n",
        "latexPost": "\\end{document}",
        "latexsvg": False,
        "req": [[i, "any", [fields.index(q[2:-2])]] for i, (q, _a) in enumerate(templates)]
        if kind == 0
        else [],
    }


def _answer(back: str) -> str:
    return f"{{{{FrontSide}}}}\n\n<hr id=answer>\n\n{back}"


def notetype(mod: int) -> dict[str, Any]:
    # Key is a field (so it survives a round trip through Anki and lets our importer
    # recognise the card) but no template shows it.
    return _notetype(
        NOTETYPE_ID, NOTETYPE_NAME, 0, FIELDS, [("{{Front}}", _answer("{{Back}}"))], mod
    )


def cloze_notetype(mod: int) -> dict[str, Any]:
    template = ("{{cloze:Text}}", "{{cloze:Text}}<br>\n{{Back Extra}}")
    return _notetype(CLOZE_NOTETYPE_ID, CLOZE_NOTETYPE_NAME, 1, CLOZE_FIELDS, [template], mod)


def siblings_notetype(count: int, mod: int) -> dict[str, Any]:
    templates = [(f"{{{{Front {i}}}}}", _answer(f"{{{{Back {i}}}}}")) for i in range(1, count + 1)]
    name = f"Flashcards ({count} cards a note)"
    return _notetype(
        SIBLINGS_NOTETYPE_BASE + count, name, 0, siblings_fields(count), templates, mod
    )


def deck(
    deck_id: int, name: str, mod: int, description: str = "", conf_id: int = DECK_CONFIG_ID
) -> dict[str, Any]:
    return {
        "id": deck_id,
        "name": name,
        "desc": description,
        "mod": mod,
        "usn": -1,
        "dyn": 0,
        "conf": conf_id,
        "collapsed": False,
        "browserCollapsed": False,
        "extendNew": 0,
        "extendRev": 0,
        "newToday": [0, 0],
        "revToday": [0, 0],
        "lrnToday": [0, 0],
        "timeToday": [0, 0],
    }


def deck_config(
    mod: int,
    *,
    learning_steps: Sequence[int],
    relearning_steps: Sequence[int],
    maximum_interval: int,
    new_per_day: int,
    reviews_per_day: int,
    desired_retention: float,
    parameters: Sequence[float],
    config_id: int = DECK_CONFIG_ID,
    name: str = "Flashcards",
    bury_new: bool = False,
    bury_reviews: bool = False,
    bury_interday: bool = False,
    leech_threshold: int = 8,
    leech_suspend: bool = False,
) -> dict[str, Any]:
    """Anki's schema-11 deck options with our FSRS settings (steps in minutes, as Anki has them)
    and a person's sibling burying and leech options (by default Anki's own)."""
    return {
        "id": config_id,
        "name": name,
        "mod": mod,
        "usn": -1,
        "maxTaken": 60,
        "autoplay": True,
        "timer": 0,
        "replayq": True,
        "dyn": False,
        "new": {
            "delays": [s / 60 for s in learning_steps],
            "ints": [1, 4, 0],
            "initialFactor": 2500,
            "order": 1,
            "perDay": new_per_day,
            "bury": bury_new,
        },
        "lapse": {
            "delays": [s / 60 for s in relearning_steps],
            "mult": 0.0,
            "minInt": 1,
            "leechFails": leech_threshold,
            "leechAction": 0 if leech_suspend else 1,  # Anki's: 0 suspend, 1 tag only
        },
        "rev": {
            "perDay": reviews_per_day,
            "ease4": 1.3,
            "maxIvl": maximum_interval,
            "hardFactor": 1.2,
            "bury": bury_reviews,
        },
        "buryInterdayLearning": bury_interday,
        "desiredRetention": desired_retention,
        "fsrsParams6": list(parameters),
        "fsrsWeights": [],
        "fsrsParams5": [],
        "sm2Retention": 0.9,
        "weightSearch": "",
    }


def create_tables(conn: sqlite3.Connection) -> None:
    conn.executescript(TABLES)


def create_indexes(conn: sqlite3.Connection) -> None:
    conn.executescript(INDEXES)


def write_col(
    conn: sqlite3.Connection,
    *,
    mod_ms: int,
    crt: int,
    conf: dict[str, Any],
    decks: Iterable[dict[str, Any]],
    dconf: dict[str, Any] | Sequence[dict[str, Any]],
    scm_ms: int | None = None,
    usn: int = 0,
    notetypes: Sequence[dict[str, Any]] | None = None,
    tags: Iterable[str] = (),
) -> None:
    """The `col` row. `dconf`: one deck options group, or several (each under its "id").
    `scm_ms` and `usn` are the schema time and update number a sync server gives its
    collection (a package's are its `mod` and 0). `notetypes`: by default our front/back one.
    `tags`: the collection's tag list."""
    groups = [dconf] if isinstance(dconf, dict) else list(dconf)
    conn.execute(
        "INSERT INTO col VALUES (1, ?, ?, ?, 11, 0, ?, 0, ?, ?, ?, ?, ?)",
        (
            crt,
            mod_ms,
            mod_ms if scm_ms is None else scm_ms,
            usn,
            json.dumps(conf),
            json.dumps({str(n["id"]): n for n in notetypes or [notetype(mod_ms // 1000)]}),
            json.dumps({str(d["id"]): d for d in decks}),
            json.dumps({str(g["id"]): g for g in groups}),
            json.dumps(dict.fromkeys(sorted(tags), usn)),
        ),
    )
