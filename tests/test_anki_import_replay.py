"""What an import with progress stores, value by value: each replayed answer's state before and
after, and each card's state, pinned to what the import stored when its replay was first made
fast, so that a faster replay or faster inserts cannot change a stored value unnoticed."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from anki.collection import Collection, ExportAnkiPackageOptions
from sqlalchemy import Engine, insert, select

from flashcards.anki import import_package
from flashcards.anki.import_rows import REVIEW_ID_NAMESPACE, review_uuids
from flashcards.anki.tables import insert_rows, table
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, ReviewLog, ReviewState

from .factories import make_deck, make_user

NOW = datetime(2026, 3, 10, 15, 30, tzinfo=UTC)
CRT = int(datetime(2026, 1, 1, 4, tzinfo=UTC).timestamp())
TODAY = (NOW - datetime(2026, 1, 1, 4, tzinfo=UTC)).days  # Anki's day number of NOW


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


# Per note (front): the card's columns, and its revlog (id as time, ease, ivl, type, time).
CARDS: dict[str, tuple[dict[str, Any], list[tuple[str, int, int, int, int]]]] = {
    # A review card with Anki's memory state, studied across New York midnights and the
    # person's 2:00 day start, one answer logged out of time order, and a manual entry.
    "review": (
        {
            "type": 2,
            "queue": 2,
            "ivl": 12,
            "due": TODAY + 5,
            "reps": 6,
            "lapses": 1,
            "data": {"s": 11.3, "d": 6.2, "lrt": ms("2026-03-03T05:10:00+00:00") // 1000},
        },
        [
            ("2026-02-01T23:50:00+00:00", 3, -600, 0, 8000),
            ("2026-02-02T00:05:00+00:00", 3, -1800, 0, 5000),
            ("2026-02-02T06:59:00+00:00", 3, 1, 0, 4000),
            ("2026-02-02T06:40:00+00:00", 4, 3, 1, 3000),  # before the one above in time
            ("2026-02-04T06:59:00+00:00", 1, -300, 1, 9000),
            ("2026-02-04T07:10:00+00:00", 3, 2, 3, 2000),
            ("2026-02-06T02:00:00+00:00", 0, 0, 4, 0),  # a manual change, not an answer
            ("2026-02-20T06:30:00+00:00", 2, 8, 1, 7000),
            ("2026-03-03T05:10:00+00:00", 4, 12, 1, 6000),
        ],
    ),
    # A relearning card without a memory state: the replay's decides.
    "relearn": (
        {
            "type": 3,
            "queue": 1,
            "ivl": 1,
            "due": ms("2026-03-10T15:40:00+00:00") // 1000,
            "reps": 4,
            "lapses": 1,
            "left": 1,
            "data": {},
        },
        [
            ("2026-03-01T12:00:00+00:00", 4, 4, 0, 2500),
            ("2026-03-05T12:00:00+00:00", 3, 9, 1, 2500),
            ("2026-03-10T14:00:00+00:00", 1, -600, 1, 2500),
            ("2026-03-10T15:25:00+00:00", 1, -900, 2, 2500),
        ],
    ),
    # A learning card, one step in.
    "learn": (
        {
            "type": 1,
            "queue": 1,
            "ivl": 0,
            "due": ms("2026-03-10T15:45:00+00:00") // 1000,
            "reps": 2,
            "lapses": 0,
            "left": 1002,
            "data": {},
        },
        [
            ("2026-03-10T15:00:00+00:00", 1, -30, 0, 1000),
            ("2026-03-10T15:05:00+00:00", 3, -300, 0, 1000),
        ],
    ),
}


def package(tmp_path: Path) -> bytes:
    col = Collection(str(tmp_path / "replay.anki2"))
    try:
        basic = col.models.by_name("Basic")
        assert basic is not None
        for front, (columns, revlog) in CARDS.items():
            note = col.new_note(basic)
            note["Front"], note["Back"] = front, f"back of {front}"
            col.add_note(note, 1)
            (cid,) = col.find_cards(f'"front:{front}"')
            col.db.execute(
                "update cards set type=?, queue=?, ivl=?, due=?, reps=?, lapses=?, left=?,"
                " data=? where id=?",
                columns["type"], columns["queue"], columns["ivl"], columns["due"],
                columns["reps"], columns["lapses"], columns.get("left", 0),
                json.dumps(columns["data"]), cid,
            )  # fmt: skip
            for when, ease, ivl, kind, duration in revlog:
                col.db.execute(
                    "insert into revlog (id, cid, usn, ease, ivl, lastIvl, factor, time, type)"
                    " values (?, ?, -1, ?, ?, 0, 0, ?, ?)",
                    ms(when), cid, ease, ivl, duration, kind,
                )  # fmt: skip
        col.db.execute("update col set crt = ?", CRT)
        col.set_config("creationOffset", 0)
        col.set_config("rollover", 4)
        path = tmp_path / "replay.apkg"
        options = ExportAnkiPackageOptions(
            with_scheduling=True, with_deck_configs=True, with_media=False, legacy=True
        )
        col.export_anki_package(out_path=str(path), options=options, limit=None)
        return path.read_bytes()
    finally:
        col.close()


def plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


STATE_COLUMNS = ("state", "step", "stability", "difficulty", "due", "last_review", "reps",
                 "lapses", "introduced_at")  # fmt: skip
LOG_COLUMNS = ("rating", "reviewed_at", "duration_ms", "state_before", "step_before",
               "stability_before", "difficulty_before", "due_before", "last_review_before",
               "reps_before", "lapses_before", "introduced_at_before", "state", "step",
               "stability", "difficulty", "due", "reps", "lapses")  # fmt: skip


def stored(engine: Engine, deck_id: int) -> tuple[dict[str, tuple[Any, ...]], dict[str, Any]]:
    with transaction(engine) as s:
        front = dict(
            s.execute(
                select(Card.id, CardText.question)
                .join(CardText, CardText.card_id == Card.id)
                .where(Card.deck_id == deck_id)
            ).all()
        )
        states = {
            front[row.card_id]: tuple(plain(getattr(row, c)) for c in STATE_COLUMNS)
            for row in s.scalars(select(ReviewState).where(ReviewState.deck_id == deck_id))
        }
        logs: dict[str, list[tuple[Any, ...]]] = {}
        for row in s.scalars(
            select(ReviewLog).where(ReviewLog.deck_id == deck_id).order_by(ReviewLog.id)
        ):
            logs.setdefault(front[row.card_id], []).append(
                tuple(plain(getattr(row, c)) for c in LOG_COLUMNS)
            )
    return states, logs


EXPECTED_STATES: dict[str, tuple[Any, ...]] = {
    "review": (
        2,
        None,
        11.3,
        6.2,
        "2026-03-15T06:00:00+00:00",
        "2026-03-03T05:10:00+00:00",
        6,
        1,
        "2026-02-01T23:50:00+00:00",
    ),
    "relearn": (
        3,
        1,
        0.7233,
        9.008,
        "2026-03-10T15:40:00+00:00",
        "2026-03-10T15:25:00+00:00",
        4,
        1,
        "2026-03-01T12:00:00+00:00",
    ),
    "learn": (
        1,
        1,
        0.2467,
        6.4021,
        "2026-03-10T15:45:00+00:00",
        "2026-03-10T15:05:00+00:00",
        2,
        0,
        "2026-03-10T15:00:00+00:00",
    ),
}
EXPECTED_LOGS: dict[str, list[tuple[Any, ...]]] = {
    "review": [
        (
            3,
            "2026-02-01T23:50:00+00:00",
            8000,
            None,
            None,
            None,
            None,
            None,
            None,
            0,
            0,
            None,
            1,
            1,
            2.3065,
            2.1181,
            "2026-02-02T00:00:00+00:00",
            1,
            0,
        ),
        (
            3,
            "2026-02-02T00:05:00+00:00",
            5000,
            1,
            1,
            2.3065,
            2.1181,
            "2026-02-02T00:00:00+00:00",
            "2026-02-01T23:50:00+00:00",
            1,
            0,
            "2026-02-01T23:50:00+00:00",
            1,
            2,
            2.3065,
            2.1112,
            "2026-02-02T00:35:00+00:00",
            2,
            0,
        ),
        (
            4,
            "2026-02-02T06:40:00+00:00",
            3000,
            1,
            2,
            2.3065,
            2.1112,
            "2026-02-02T00:35:00+00:00",
            "2026-02-02T00:05:00+00:00",
            2,
            0,
            "2026-02-01T23:50:00+00:00",
            2,
            None,
            3.9461,
            1.0,
            "2026-02-05T06:40:00+00:00",
            3,
            0,
        ),
        (
            3,
            "2026-02-02T06:59:00+00:00",
            4000,
            2,
            None,
            3.9461,
            1.0,
            "2026-02-05T06:40:00+00:00",
            "2026-02-02T06:40:00+00:00",
            3,
            0,
            "2026-02-01T23:50:00+00:00",
            2,
            None,
            3.9461,
            1.0,
            "2026-02-03T06:59:00+00:00",
            4,
            0,
        ),
        (
            1,
            "2026-02-04T06:59:00+00:00",
            9000,
            2,
            None,
            3.9461,
            1.0,
            "2026-02-03T06:59:00+00:00",
            "2026-02-02T06:59:00+00:00",
            4,
            0,
            "2026-02-01T23:50:00+00:00",
            3,
            0,
            0.8559,
            7.027,
            "2026-02-04T07:04:00+00:00",
            5,
            1,
        ),
        (
            3,
            "2026-02-04T07:10:00+00:00",
            2000,
            3,
            0,
            0.8559,
            7.027,
            "2026-02-04T07:04:00+00:00",
            "2026-02-04T06:59:00+00:00",
            5,
            1,
            "2026-02-01T23:50:00+00:00",
            3,
            1,
            2.953,
            7.0152,
            "2026-02-06T07:10:00+00:00",
            6,
            1,
        ),
        (
            2,
            "2026-02-20T06:30:00+00:00",
            7000,
            3,
            1,
            2.953,
            7.0152,
            "2026-02-06T07:10:00+00:00",
            "2026-02-04T07:10:00+00:00",
            6,
            1,
            "2026-02-01T23:50:00+00:00",
            3,
            1,
            11.0785,
            8.0038,
            "2026-02-28T06:30:00+00:00",
            7,
            1,
        ),
        (
            4,
            "2026-03-03T05:10:00+00:00",
            6000,
            3,
            1,
            11.0785,
            8.0038,
            "2026-02-28T06:30:00+00:00",
            "2026-02-20T06:30:00+00:00",
            7,
            1,
            "2026-02-01T23:50:00+00:00",
            2,
            None,
            33.4011,
            7.322,
            "2026-03-15T05:10:00+00:00",
            8,
            1,
        ),
    ],
    "relearn": [
        (
            4,
            "2026-03-01T12:00:00+00:00",
            2500,
            None,
            None,
            None,
            None,
            None,
            None,
            0,
            0,
            None,
            2,
            None,
            8.2956,
            1.0,
            "2026-03-05T12:00:00+00:00",
            1,
            0,
        ),
        (
            3,
            "2026-03-05T12:00:00+00:00",
            2500,
            2,
            None,
            8.2956,
            1.0,
            "2026-03-05T12:00:00+00:00",
            "2026-03-01T12:00:00+00:00",
            1,
            0,
            "2026-03-01T12:00:00+00:00",
            2,
            None,
            26.1948,
            1.0,
            "2026-03-14T12:00:00+00:00",
            2,
            0,
        ),
        (
            1,
            "2026-03-10T14:00:00+00:00",
            2500,
            2,
            None,
            26.1948,
            1.0,
            "2026-03-14T12:00:00+00:00",
            "2026-03-05T12:00:00+00:00",
            2,
            0,
            "2026-03-01T12:00:00+00:00",
            3,
            0,
            2.1419,
            7.027,
            "2026-03-10T14:10:00+00:00",
            3,
            1,
        ),
        (
            1,
            "2026-03-10T15:25:00+00:00",
            2500,
            3,
            0,
            2.1419,
            7.027,
            "2026-03-10T14:10:00+00:00",
            "2026-03-10T14:00:00+00:00",
            3,
            1,
            "2026-03-01T12:00:00+00:00",
            3,
            0,
            0.7233,
            9.008,
            "2026-03-10T15:40:00+00:00",
            4,
            1,
        ),
    ],
    "learn": [
        (
            1,
            "2026-03-10T15:00:00+00:00",
            1000,
            None,
            None,
            None,
            None,
            None,
            None,
            0,
            0,
            None,
            1,
            0,
            0.212,
            6.4133,
            "2026-03-10T15:00:30+00:00",
            1,
            0,
        ),
        (
            3,
            "2026-03-10T15:05:00+00:00",
            1000,
            1,
            0,
            0.212,
            6.4133,
            "2026-03-10T15:00:30+00:00",
            "2026-03-10T15:00:00+00:00",
            1,
            0,
            "2026-03-10T15:00:00+00:00",
            1,
            1,
            0.2467,
            6.4021,
            "2026-03-10T15:10:00+00:00",
            2,
            0,
        ),
    ],
}


def test_an_import_stores_each_replayed_answer_and_state_as_pinned(
    engine: Engine, tmp_path: Path
) -> None:
    data = package(tmp_path)
    with transaction(engine) as s:
        user_id = make_user(
            s, timezone="America/New_York", day_start_hour=2, learning_steps=[30, 300, 1200],
            relearning_steps=[300, 900], desired_retention=0.85,
        )  # fmt: skip
        report = import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=NOW)
    assert report.review_states == 3 and report.review_logs == 14
    states, logs = stored(engine, report.deck_id)
    assert states == EXPECTED_STATES
    assert logs == EXPECTED_LOGS
    with transaction(engine) as s:
        review_ids = set(
            s.scalars(select(ReviewLog.review_id).where(ReviewLog.deck_id == report.deck_id))
        )
    assert review_ids == {
        str(uuid.uuid5(REVIEW_ID_NAMESPACE, f"{user_id}:{report.deck_id}:{ms(when)}"))
        for _, revlog in CARDS.values()
        for when, ease, *_ in revlog
        if ease
    }


def test_review_ids_are_uuid5_of_the_user_deck_and_revlog_id() -> None:
    for user_id, deck_id in [(0, 1), (12, 345), (2**31 - 1, 2**31 - 1)]:
        review_id = review_uuids(user_id, deck_id)
        for revlog_id in [0, 1, -7, 1_733_400_000_123, 2**63 - 1, -(2**63)]:
            name = f"{user_id}:{deck_id}:{revlog_id}"
            assert review_id(revlog_id) == str(uuid.uuid5(REVIEW_ID_NAMESPACE, name))


def test_insert_rows_stores_what_core_stores(engine: Engine) -> None:
    """Binary COPY (a card's texts), text COPY (a card's JSON tags) and SQLite's executemany."""
    when = datetime(2026, 3, 10, 15, 30, 1, 123456, tzinfo=UTC)
    with transaction(engine) as s:
        deck_id = make_deck(s, "inserted", 0).id
        columns = ("deck_id", "key", "position", "tags", "retired_at", "note_key", "created_at",
                   "updated_at")  # fmt: skip
        rows = [
            (deck_id, f"core-{i}", i, ["a", f"é{i}"], None if i else when, None, when, when)
            for i in range(3)
        ]
        s.execute(insert(table(Card)), [dict(zip(columns, r, strict=True)) for r in rows])
        insert_rows(s, Card, columns, [(r[0], f"bulk-{r[2]}", *r[2:]) for r in rows])
        with pytest.raises(ValueError, match="needs tags"):
            insert_rows(s, Card, ("deck_id", "key", "position"), [])
        ids = dict(s.execute(select(Card.key, Card.id).where(Card.deck_id == deck_id)).all())
        text_columns = ("card_id", "locale", "question", "answer", "explanation", "updated_at",
                        "anki_guid")  # fmt: skip
        insert_rows(
            s, CardText, text_columns,
            [(ids[f"bulk-{i}"], "en", "q\ttab\\n", "a\n'b'", "", when, None) for i in range(3)],
        )  # fmt: skip
        s.execute(
            insert(table(CardText)),
            [dict(zip(text_columns, (ids[f"core-{i}"], "en", "q\ttab\\n", "a\n'b'", "", when,
                                     None), strict=True)) for i in range(3)],
        )  # fmt: skip
    with transaction(engine) as s:
        cards = {
            c.key: (c.position, c.tags, c.retired_at, c.note_key, c.created_at, c.updated_at)
            for c in s.scalars(select(Card).where(Card.deck_id == deck_id))
        }
        texts = {
            t.card_id: (t.locale, t.question, t.answer, t.explanation, t.updated_at, t.anki_guid)
            for t in s.scalars(select(CardText).where(CardText.card_id.in_(ids.values())))
        }
    for i in range(3):
        assert cards[f"bulk-{i}"] == cards[f"core-{i}"]
        assert texts[ids[f"bulk-{i}"]] == texts[ids[f"core-{i}"]]
    assert cards["bulk-0"][1:3] == (["a", "é0"], when)
