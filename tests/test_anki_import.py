"""`.apkg` import: our own packages round-tripped through Anki, Anki's own decks, bad input."""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import zstandard
from anki.collection import Collection, ExportAnkiPackageOptions
from click.testing import CliRunner
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from flashcards.anki import AnkiPackageError, export_deck, import_package, planning, reader
from flashcards.anki.reader import read_package
from flashcards.cli import main
from flashcards.srs import queue, study
from flashcards.srs.days import study_date
from flashcards.srs.subscriptions import subscribe
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Card,
    CardText,
    Deck,
    ReviewLog,
    ReviewState,
    Subscription,
    User,
)

from .factories import answer, make_user
from .test_anki_export import (
    anki_import,
    card_id,
    export,
    our_states,
    skip_near_anki_rollover,
    study_eks,
    wall_now,
)


def anki_export(col: Collection, path: Path, *, legacy: bool) -> bytes:
    options = ExportAnkiPackageOptions(
        with_scheduling=True, with_deck_configs=True, with_media=True, legacy=legacy
    )
    col.export_anki_package(out_path=str(path), options=options, limit=None)
    return path.read_bytes()


def studied_in_anki(col: Collection, notes: int, eases: Sequence[int]) -> None:
    """`notes` Basic notes (fronts q0, q1…) in the default deck, the one Anki's scheduler
    studies, then one answer per ease, each to the card Anki shows next."""
    basic = col.models.by_name("Basic")
    assert basic is not None
    for i in range(notes):
        note = col.new_note(basic)
        note["Front"], note["Back"] = f"q{i}", f"a{i}"
        col.add_note(note, 1)
    for ease in eases:
        card = col.sched.getCard()
        assert card is not None
        col.sched.answerCard(card, ease)


def texts_by_key(session: Session, deck_id: int) -> dict[tuple[str, str], tuple[str, str, str]]:
    rows = session.execute(
        select(Card.key, CardText.locale, CardText.question, CardText.answer, CardText.explanation)
        .join(CardText)
        .where(Card.deck_id == deck_id)
    )
    return {(k, loc): (q, a, e) for k, loc, q, a, e in rows}


def counts(session: Session) -> tuple[int, ...]:
    return tuple(
        session.scalar(select(func.count()).select_from(model)) or 0
        for model in (Deck, Card, CardText, ReviewState, ReviewLog)
    )


@pytest.mark.parametrize("legacy", [True, False], ids=["anki21", "anki21b"])
def test_round_trip_through_anki_gives_back_cards_and_states(
    loaded_engine: Engine, tmp_path: Path, legacy: bool
) -> None:
    now = wall_now()
    user_id = study_eks(loaded_engine, now)
    states = our_states(loaded_engine, user_id)
    col, _ = anki_import(
        tmp_path / "c.anki2",
        export(loaded_engine, now, locales=None, user_id=user_id, with_scheduling=True),
    )
    try:
        data = anki_export(col, tmp_path / "out.apkg", legacy=legacy)
    finally:
        col.close()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert ("collection.anki21b" in z.namelist()) is not legacy

    with transaction(loaded_engine) as s:
        report = import_package(
            s, data, owner_user_id=user_id, with_scheduling=True, now=now, slug="back"
        )
        original = s.scalar(select(Deck.id).where(Deck.slug == "eks-model-training"))
        assert original is not None
        assert texts_by_key(s, report.deck_id) == texts_by_key(s, original)
        deck = s.get(Deck, report.deck_id)
        assert deck is not None and deck.default_locale == "en" and deck.owner_user_id == user_id
    assert report.cards == 15 and report.texts == 45 and report.media_left_out == 0
    # The deck's mark our export wrote ("flashcards::<slug>") is no tag of the copy's cards.
    assert "tensor-parallelism" not in report.tags and report.tagged == 0

    with transaction(loaded_engine) as s:
        rows = s.execute(
            select(Card.key, ReviewState)
            .join(Card, Card.id == ReviewState.card_id)
            .where(ReviewState.deck_id == report.deck_id)
        ).all()
        back = dict(rows)
        logs = s.execute(
            select(
                Card.key,
                ReviewLog.rating,
                ReviewLog.reviewed_at,
                ReviewLog.state_before,
                ReviewLog.state,
                ReviewLog.step,
                ReviewLog.due,
                ReviewLog.reps,
                ReviewLog.lapses,
                ReviewLog.stability,
                ReviewLog.difficulty,
            )
            .join(Card, Card.id == ReviewLog.card_id)
            .where(ReviewLog.deck_id == report.deck_id)
            .order_by(ReviewLog.reviewed_at)
        ).all()
        original_logs = s.execute(
            select(
                Card.key,
                ReviewLog.rating,
                ReviewLog.reviewed_at,
                ReviewLog.state_before,
                ReviewLog.state,
                ReviewLog.step,
                ReviewLog.due,
                ReviewLog.reps,
                ReviewLog.lapses,
                ReviewLog.stability,
                ReviewLog.difficulty,
            )
            .join(Card, Card.id == ReviewLog.card_id)
            .where(ReviewLog.deck_id == original)
            .order_by(ReviewLog.reviewed_at)
        ).all()
    original_states = {k: v for k, v in states.items() if v.deck_id == original}
    assert back.keys() == original_states.keys() and len(back) == 4
    for key, mine in original_states.items():
        got = back[key]
        assert (got.state, got.step, got.reps, got.lapses) == (
            mine.state,
            mine.step,
            mine.reps,
            mine.lapses,
        ), key
        assert got.due == mine.due and got.last_review == mine.last_review, key
        assert got.stability == pytest.approx(mine.stability, abs=1e-3)
        assert got.difficulty == pytest.approx(mine.difficulty, abs=1e-3)

    assert [r[:-2] for r in logs] == [r[:-2] for r in original_logs]
    for got_log, mine_log in zip(logs, original_logs, strict=True):
        # Imported memory states are kept to Anki's 4 decimals (schema.memory_value).
        assert tuple(got_log[-2:]) == pytest.approx(tuple(mine_log[-2:]), abs=1e-3)


def anki_native_package(tmp_path: Path) -> bytes:
    """A deck made in Anki: Basic notes with unsafe HTML, tags and an image, and a Cloze note."""
    col = Collection(str(tmp_path / "native.anki2"))
    try:
        did = col.decks.id("Biology::Cells")
        basic = col.models.by_name("Basic")
        assert basic is not None
        image = col.media.write_data("cell.png", b"\x89PNG fake")
        for front, back, tags in [
            ("What is a <b>cell</b>?<script>alert(1)</script>", "The unit of life", ["bio"]),
            (
                '<img src="http://evil.example/x.png" onerror="alert(1)">Mitochondria?',
                f'Powerhouse<img src="{image}"><br><a href="javascript:alert(1)">more</a>',
                ["bio", "organelles"],
            ),
            ("1 &lt; 2?", "Yes &amp; always", []),
        ]:
            note = col.new_note(basic)
            note["Front"], note["Back"] = front, back
            note.tags = tags
            col.add_note(note, did)
        cloze = col.models.by_name("Cloze")
        assert cloze is not None
        note = col.new_note(cloze)
        note["Text"] = "{{c1::Ribosomes}} make proteins"
        col.add_note(note, did)
        return anki_export(col, tmp_path / "native.apkg", legacy=False)
    finally:
        col.close()


def test_a_long_deck_name_imported_three_times_gets_three_names(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    col = Collection(str(tmp_path / "long.anki2"))
    try:
        did = col.decks.id("A deck whose name is longer than any slug may be " * 2)
        basic = col.models.by_name("Basic")
        assert basic is not None
        note = col.new_note(basic)
        note["Front"], note["Back"] = "Q", "A"
        col.add_note(note, did)
        package = anki_export(col, tmp_path / "long.apkg", legacy=False)
    finally:
        col.close()
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "long@example.com")
    slugs = []
    for _ in range(3):
        with transaction(loaded_engine) as s:
            report = import_package(s, package, owner_user_id=user_id, now=wall_now())
            slugs.append(report.slug)
    assert len(set(slugs)) == 3 and all(len(slug) <= 100 for slug in slugs), slugs


def test_deck_made_in_anki_is_sanitized_and_reports_media_and_tags(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    data = anki_native_package(tmp_path)
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "importer@example.com", locale="en")
        report = import_package(s, data, owner_user_id=user_id, now=wall_now())
        texts = sorted(texts_by_key(s, report.deck_id).values())
        deck = s.get(Deck, report.deck_id)
        assert (
            deck is not None
            and deck.slug == f"user{user_id}-biology-cells"
            and deck.owner_user_id == user_id
        )
    assert texts == [
        ("1 < 2?", "Yes & always", ""),
        ("Mitochondria?", "Powerhouse\nmore", ""),
        ("What is a cell?", "The unit of life", ""),
        ("[...] make proteins", "Ribosomes make proteins", ""),
    ]
    assert report.cards == 4 and report.media_left_out == 1 and report.title == "Biology::Cells"
    assert sorted(map(sorted, report.tags.values())) == [["bio"], ["bio", "organelles"]]
    with transaction(loaded_engine) as s:
        stored = s.scalars(select(Card.tags).where(Card.deck_id == report.deck_id)).all()
    assert sorted(map(sorted, stored)) == [[], [], ["bio"], ["bio", "organelles"]]
    joined = " ".join(report.messages)
    assert "note(s) left out" not in joined and report.skipped == {} and report.cloze_notes == 1
    assert "1 Cloze note(s) became question-and-answer cards" in joined
    assert "1 media file(s)" in joined and "formatting" in joined


def in_a_filtered_deck(col: Collection, home: str, notes: int) -> list[int]:
    """`notes` Basic notes in the deck `home`, their cards pulled into a filtered deck "Cram",
    as Anki's custom study does; returns the card ids."""
    did = col.decks.id(home)
    basic = col.models.by_name("Basic")
    assert basic is not None
    for i in range(notes):
        note = col.new_note(basic)
        note["Front"], note["Back"] = f"q{i}", f"a{i}"
        col.add_note(note, did)
    cram = col.decks.new_filtered("Cram")
    filtered = col.decks.get(cram)
    assert filtered is not None
    filtered["terms"] = [[f'deck:"{home}"', 100, 0]]
    col.decks.save(filtered)
    col.sched.rebuild_filtered_deck(cram)
    cards = list(col.find_cards(""))
    assert {col.get_card(c).did for c in cards} == {cram}
    return cards


def test_cards_in_a_filtered_deck_name_the_deck_after_their_home_deck(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    col = Collection(str(tmp_path / "filtered.anki2"))
    try:
        in_a_filtered_deck(col, "Biology::Cells", 3)
        data = anki_export(col, tmp_path / "filtered.apkg", legacy=True)
    finally:
        col.close()
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "filtered@example.com")
        report = import_package(
            s, data, owner_user_id=user_id, with_scheduling=True, now=wall_now()
        )
    # The subdeck's whole name, not its top deck's (issue 25).
    assert report.title == "Biology::Cells" and report.slug == f"user{user_id}-biology-cells"
    assert report.cards == 3


def suspended_package(tmp_path: Path) -> bytes:
    """Four Basic notes made and studied in Anki, two of them suspended (one in review, one
    new), and a "Basic (and reversed card)" note with only its reverse card suspended."""
    col = Collection(str(tmp_path / "suspended.anki2"))
    try:
        studied_in_anki(col, 4, (4, 3))
        by_front = {col.get_card(c).note()["Front"]: c for c in col.find_cards("")}
        assert col.get_card(by_front["q0"]).type == 2 and col.get_card(by_front["q3"]).type == 0
        reversed_type = col.models.by_name("Basic (and reversed card)")
        assert reversed_type is not None
        both_ways = col.new_note(reversed_type)
        both_ways["Front"], both_ways["Back"] = "front", "back"
        col.add_note(both_ways, 1)
        reverse = [c for c in both_ways.card_ids() if col.get_card(c).ord == 1]
        col.sched.suspend_cards([by_front["q0"], by_front["q3"], *reverse])
        return anki_export(col, tmp_path / "suspended.apkg", legacy=False)
    finally:
        col.close()


SUSPENDED_MESSAGE = (
    "3 card(s) suspended in Anki were imported as active, without progress: import with "
    "progress to keep them suspended."
)


@pytest.mark.parametrize("with_scheduling", [True, False])
def test_suspended_cards_stay_suspended_with_progress_and_are_reported_without(
    loaded_engine: Engine, tmp_path: Path, with_scheduling: bool
) -> None:
    skip_near_anki_rollover(wall_now())
    data = suspended_package(tmp_path)
    now = wall_now()
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "suspender@example.com")
        report = import_package(
            s, data, owner_user_id=user_id, with_scheduling=with_scheduling, now=now
        )
        deck = s.get(Deck, report.deck_id)
        assert deck is not None
        subscribe(s, user_id, deck, None, now=now)
        _card, due = queue.next_card(s, user_id, now=now + timedelta(days=400))
    # The reversed note's two cards are two sibling cards here, as in Anki.
    assert report.cards == 6
    if with_scheduling:
        # Suspending is part of the progress: the three stay suspended, nothing to report;
        # the reversed note's front card is studied, its suspended reverse is not.
        assert report.suspended_made_active == 0 and SUSPENDED_MESSAGE not in report.messages
        assert (due.review, due.review + due.learning + due.new) == (0, 3)
    else:
        assert report.suspended_made_active == 3 and SUSPENDED_MESSAGE in report.messages
        assert (due.review, due.review + due.learning + due.new) == (0, 6)


def test_cloze_notes_become_a_card_per_deletion_with_their_progress(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    col = Collection(str(tmp_path / "cloze.anki2"))
    try:
        cloze = col.models.by_name("Cloze")
        assert cloze is not None
        note = col.new_note(cloze)
        note["Text"] = (
            "{{c1::Ribosomes}} make {{c2::proteins::what?}}; {{c1::they}} read"
            " {{c3::messenger {{c4::RNA}}}}."
        )
        note["Back Extra"] = "<i>Cell biology</i>"
        col.add_note(note, 1)
        # Anki shows the note's cards in order: the first (c1) is answered Good.
        card = col.sched.getCard()
        assert card is not None and card.ord == 0
        col.sched.answerCard(card, 3)
        data = anki_export(col, tmp_path / "cloze.apkg", legacy=True)
    finally:
        col.close()
    now = wall_now()
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "cloze@example.com", locale="en")
        report = import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=now)
        texts = texts_by_key(s, report.deck_id)
        reps = {
            key: state_reps
            for key, state_reps in s.execute(
                select(Card.key, ReviewState.reps)
                .join(ReviewState, ReviewState.card_id == Card.id)
                .where(Card.deck_id == report.deck_id, ReviewState.user_id == user_id)
            )
        }
    whole = "Ribosomes make proteins; they read messenger RNA."
    questions = {
        key: q for (key, _loc), (q, a, e) in texts.items() if (a, e) == (whole, "Cell biology")
    }
    assert sorted(questions.values()) == [
        "Ribosomes make [what?]; they read messenger RNA.",
        "Ribosomes make proteins; they read [...].",
        "Ribosomes make proteins; they read messenger [...].",
        "[...] make proteins; [...] read messenger RNA.",
    ]
    assert report.cards == 4 and report.cloze_notes == 1 and report.skipped == {}
    assert report.formatting_simplified == 1  # the note's italics, said once for four cards
    # The progress made in Anki is on the card of the deletion it was made on.
    first = next(key for key, q in questions.items() if q.startswith("[...] make"))
    assert reps == {first: 1} and report.review_logs == 1


def cloze_package(tmp_path: Path, texts: list[str], basic: int = 0) -> bytes:
    """A new collection each call: Cloze notes with `texts`, then `basic` Basic notes."""
    name = f"clozes{len(list(tmp_path.glob('clozes*.anki2')))}"
    col = Collection(str(tmp_path / f"{name}.anki2"))
    try:
        cloze = col.models.by_name("Cloze")
        kind = col.models.by_name("Basic")
        assert cloze is not None and kind is not None
        for text in texts:
            note = col.new_note(cloze)
            note["Text"] = text
            col.add_note(note, 1)
        for i in range(basic):
            note = col.new_note(kind)
            note["Front"], note["Back"] = f"q{i}", f"a{i}"
            col.add_note(note, 1)
        return anki_export(col, tmp_path / f"{name}.apkg", legacy=True)
    finally:
        col.close()


def test_cloze_notes_are_limited_in_cards_per_note_and_in_all(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    many = " ".join(f"{{{{c{n}::w{n}}}}}" for n in range(1, 102))  # 101 deletion numbers
    data = cloze_package(tmp_path, [many], basic=1)
    with transaction(loaded_engine) as s:
        report = import_package(s, data, owner_user_id=None, now=wall_now())
    assert report.cards == 1 and report.skipped == {"too_many_deletions": 1}
    assert "1 note(s) left out: they are Cloze notes with more than 100" in report.messages[0]
    # Four cards from one note and one from another: over a limit of four, nothing written.
    data = cloze_package(tmp_path, ["{{c1::a}} {{c2::b}} {{c3::c}} {{c4::d}}"], basic=1)
    with transaction(loaded_engine) as s:
        before = counts(s)
        with pytest.raises(AnkiPackageError) as refused:
            import_package(s, data, owner_user_id=None, now=wall_now(), max_notes=4)
        assert counts(s) == before
    assert (refused.value.kind, refused.value.count, refused.value.limit) == (
        "too_many_cards",
        5,
        4,
    )


def test_cloze_notes_making_too_much_text_are_refused_with_nothing_written(
    loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(planning, "MAX_CLOZE_TEXT", 1_000)  # 50 million characters, here 1,000
    long_note = "x" * 100 + " ".join(f"{{{{c{n}::w}}}}" for n in range(1, 5))  # 4 cards of ~140
    data = cloze_package(tmp_path, [long_note, long_note], basic=1)
    with transaction(loaded_engine) as s:
        before = counts(s)
        with pytest.raises(AnkiPackageError) as refused:
            import_package(s, data, owner_user_id=None, now=wall_now())
        assert counts(s) == before
    assert refused.value.kind == "cloze_too_large"


def edited_package(package: bytes, tmp: Path, edit: Callable[[sqlite3.Connection], None]) -> bytes:
    """The package with its legacy collection changed by `edit` (an open SQLite connection)."""
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    path = tmp / "edited.anki2"
    path.write_bytes(members["collection.anki2"])
    db = sqlite3.connect(path)
    with db:
        edit(db)
    db.close()
    members["collection.anki2"] = path.read_bytes()
    path.unlink()
    return zip_of(members)


def zip_of(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as z:
        for name, content in members.items():
            z.writestr(name, content)
    return buffer.getvalue()


def sqlite_bytes(tmp_path: Path, notes: int, models: str = "{}") -> bytes:
    path = tmp_path / f"notes{notes}-{len(models)}.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE col (crt, ver, conf, models, decks);"
        "CREATE TABLE notes (id, guid, mid, mod, tags, flds);"
        "CREATE TABLE cards (id);"
    )
    conn.execute("INSERT INTO col VALUES (0, 11, '{}', ?, '{}')", (models,))
    conn.executemany(
        "INSERT INTO notes VALUES (?, 'g', 1, 0, '', 'a')", [(i,) for i in range(notes)]
    )
    conn.commit()
    conn.close()
    return path.read_bytes()


def bad_packages(tmp_path: Path) -> dict[str, tuple[bytes, str, dict[str, Any]]]:
    zeros = b"\0" * (4 << 20)
    return {
        "corrupt": (b"PK\x03\x04 this is not really a zip", "not a readable .apkg", {}),
        "not anki": (zip_of({"readme.txt": b"hello"}), "no collection", {}),
        "bomb": (zip_of({"collection.anki2": zeros}), "unpacks to more than|would unpack", {}),
        "zstd bomb": (
            zip_of({"meta": b"\x08\x03", "collection.anki21b": zstandard.compress(zeros)}),
            "unpacks to more than",
            {},
        ),
        "too new": (zip_of({"meta": b"\x08\x07", "collection.anki2": b""}), "format version 7", {}),
        "not sqlite": (
            zip_of({"collection.anki2": b"x" * 5000}),
            "not a readable Anki database",
            {},
        ),
        "too many notes": (
            zip_of({"collection.anki2": sqlite_bytes(tmp_path, 11)}),
            "11 notes, over the limit of 10",
            {"max_notes": 10},
        ),
        "damaged json": (
            zip_of({"collection.anki2": sqlite_bytes(tmp_path, 1, '{"1": {"name": 3}}')}),
            "damaged",
            {},
        ),
        "too big": (
            zip_of({"collection.anki2": b"x" * 300_000}, zipfile.ZIP_STORED),
            "over the limit",
            {"max_bytes": 200_000},
        ),
    }


def test_bad_packages_are_refused_with_nothing_written(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    for name, (data, message, limits) in bad_packages(tmp_path).items():
        limits.setdefault("max_bytes", 1 << 20)  # unpacked limit: 10 MiB
        limits["max_unpacked_bytes"] = 2 << 20
        with transaction(loaded_engine) as s:
            before = counts(s)
            with pytest.raises(AnkiPackageError, match=message):
                import_package(s, data, owner_user_id=None, now=wall_now(), **limits)
            assert counts(s) == before, name


def test_a_zip_bomb_is_told_apart_from_a_large_package(tmp_path: Path) -> None:
    """The edges word "unpacks to more than the limit" apart from "the file is too large"."""
    packages = bad_packages(tmp_path)
    for name, kind, limit in [
        ("bomb", "unpacks_too_large", 2 << 20),  # the zip's header tells the size
        ("zstd bomb", "unpacks_too_large", 2 << 20),  # only unpacking tells it
        ("too big", "too_large", 0),
    ]:
        with pytest.raises(AnkiPackageError) as refused:
            read_package(
                packages[name][0], max_bytes=200_000, max_unpacked_bytes=2 << 20,
                max_notes=10, with_revlog=False,
            )  # fmt: skip
        assert (refused.value.kind, refused.value.limit) == (kind, limit), name


def test_cli_exports_and_imports(loaded_engine: Engine, cli: CliRunner, tmp_path: Path) -> None:
    now = wall_now()
    study_eks(loaded_engine, now - timedelta(minutes=1))
    out = tmp_path / "eks.apkg"
    result = cli.invoke(
        main,
        ["apkg", "export", "eks-model-training", "--all-locales", "--user", "learner@example.com",
         "--with-scheduling", "-o", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "45 notes" in result.output and out.stat().st_size > 0
    result = cli.invoke(
        main,
        ["apkg", "import", str(out), "--deck", "mine", "--user", "learner@example.com",
         "--with-scheduling"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with transaction(loaded_engine) as s:
        learner = s.scalar(select(User.id).where(User.email == "learner@example.com"))
        # A user's deck is named in their own space, as the web and the API name it.
        slug = f"user{learner}-mine"
        assert f"Imported 15 cards (45 texts, 8 reviews) into the new deck '{slug}'" in (
            result.output
        )
        mine = s.scalar(select(Deck).where(Deck.slug == slug))
        assert mine is not None and mine.owner_user_id == learner
        subscription = s.get(Subscription, (mine.owner_user_id, mine.id))
        assert subscription is not None and subscription.locale == "en"
    bad = tmp_path / "bad.apkg"
    bad.write_bytes(b"nope")
    with transaction(loaded_engine) as s:
        before = counts(s)
    result = cli.invoke(main, ["apkg", "import", str(bad)])
    assert result.exit_code == 1 and "Error: not a readable .apkg" in result.output
    assert "Traceback" not in result.output
    with transaction(loaded_engine) as s:
        assert counts(s) == before
    result = cli.invoke(main, ["apkg", "export", "nope", "-o", str(out)])
    assert result.exit_code == 1 and "no deck 'nope'" in result.output


def test_progress_made_in_anki_without_fsrs_becomes_review_state(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    skip_near_anki_rollover(wall_now())
    col = Collection(str(tmp_path / "studied.anki2"))
    try:
        # SM-2 answers: no FSRS memory state in the package.
        studied_in_anki(col, 3, (3, 3, 4, 1, 3))
        expected = {}
        for cid in col.find_cards(""):
            card = col.get_card(cid)
            days = card.due - col.sched.today if card.queue == 2 else None
            expected[card.note()["Front"]] = (card.type, days, card.due, card.reps)
        data = anki_export(col, tmp_path / "studied.apkg", legacy=True)
    finally:
        col.close()
    now = wall_now()
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "ankiuser@example.com")
        report = import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=now)
        rows = s.execute(
            select(CardText.question, ReviewState)
            .join(ReviewState, ReviewState.card_id == CardText.card_id)
            .where(ReviewState.deck_id == report.deck_id)
        ).all()
        log_count = s.scalar(
            select(func.count()).select_from(ReviewLog).where(ReviewLog.deck_id == report.deck_id)
        )
    assert report.review_states == 3 and log_count == 5
    today = study_date(now, "UTC", 4)
    for question, state in rows:
        ctype, days, due, reps = expected[question]
        assert (state.state, state.reps) == (ctype, reps)
        assert state.stability and state.stability > 0 and 1 <= (state.difficulty or 0) <= 10
        if days is None:
            assert state.step == 0 and state.due == datetime.fromtimestamp(due, UTC)
        else:
            assert (study_date(state.due, "UTC", 4) - today).days == days


def hostile_package(
    engine: Engine, tmp_path: Path, edit: Callable[[sqlite3.Connection], object]
) -> tuple[datetime, int, bytes]:
    """Our export of a studied deck, its collection changed by `edit`: (now, user, package)."""
    now = wall_now()
    user_id = study_eks(engine, now)
    package = export(engine, now, user_id=user_id, with_scheduling=True)
    with zipfile.ZipFile(io.BytesIO(package)) as z:
        collection = z.read("collection.anki2")
    path = tmp_path / "hostile.anki2"
    path.write_bytes(collection)
    conn = sqlite3.connect(path)
    edit(conn)
    conn.commit()
    conn.close()
    return now, user_id, zip_of({"collection.anki2": path.read_bytes()})


def test_absurd_numbers_in_a_package_do_not_break_the_import(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    huge = 2**62

    def edit(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE col SET crt = ?", (huge,))
        conn.execute(
            "UPDATE cards SET due = ?, ivl = ?, reps = ?, data = '{\"lrt\": -5}'",
            (huge, huge, huge),
        )
        conn.execute("UPDATE revlog SET ivl = ?, time = ?", (-huge, huge))

    now, user_id, data = hostile_package(loaded_engine, tmp_path, edit)
    with transaction(loaded_engine) as s:
        report = import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=now)
        assert report.review_states == 4 and report.review_logs == 8


ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)"
# Schema 18's tables, with its deck names from a view that never ends.
ENDLESS_DECKS = (
    "CREATE TABLE notetypes (id INTEGER PRIMARY KEY, name TEXT, config BLOB);"
    " CREATE TABLE config (KEY TEXT, val BLOB); CREATE TABLE fields (ntid INTEGER,"
    f" ord INTEGER, name TEXT); CREATE VIEW decks AS {ENDLESS} SELECT n AS id, 'x' AS name"
    " FROM r"
)
COMPUTED_FIELDS = (
    "ALTER TABLE notes RENAME TO old_notes; CREATE TABLE notes (id INTEGER PRIMARY KEY,"
    " guid TEXT, mid INTEGER, mod INTEGER, usn INTEGER, tags TEXT,"
    " flds TEXT GENERATED ALWAYS AS (printf('%.*c', 200000000, 'x')) VIRTUAL, sfld TEXT,"
    " csum INTEGER, flags INTEGER, data TEXT); INSERT INTO notes (id, guid, mid, mod, usn,"
    " tags, sfld, csum, flags, data) SELECT id, guid, mid, mod, usn, tags, sfld, csum, flags,"
    " data FROM old_notes; DROP TABLE old_notes"
)


@pytest.mark.parametrize(
    ("script", "kind"),
    [
        (ENDLESS_DECKS, "damaged"),  # rows without end from a view
        (COMPUTED_FIELDS, "not_a_package"),  # 200 MB values from a few bytes of schema
        ("INSERT INTO cards (id, nid, did, ord, mod, usn, type, queue, due, ivl, factor, reps,"
         " lapses, left, odue, odid, flags, data) SELECT c.id * 1000 + n.id, c.nid, c.did, c.ord,"
         " 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '' FROM cards c, notes n, (SELECT 1 UNION"
         " SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7"
         " UNION SELECT 8 UNION SELECT 9 UNION SELECT 10 UNION SELECT 11) n2 LIMIT 200",
         "too_many_cards"),
    ],
    ids=["endless-view", "computed-column", "card-rows"],
)  # fmt: skip
def test_a_collection_that_would_cost_too_much_to_read_is_refused(
    loaded_engine: Engine, tmp_path: Path, script: str, kind: str
) -> None:
    now, user_id, data = hostile_package(loaded_engine, tmp_path, lambda c: c.executescript(script))
    with pytest.raises(AnkiPackageError) as refused, transaction(loaded_engine) as s:
        import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=now, max_notes=15)
    assert refused.value.kind == kind, refused.value.detail


def test_reading_a_collection_has_a_time_budget_and_a_review_limit(
    loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now, user_id, data = hostile_package(loaded_engine, tmp_path, lambda c: None)
    with transaction(loaded_engine) as s:
        monkeypatch.setattr(reader, "MAX_REVIEWS", 7)  # the package has 8
        with pytest.raises(AnkiPackageError) as refused:
            import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=now)
        assert (refused.value.kind, refused.value.count) == ("too_many_reviews", 8)
        # Without progress its reviews are not read, so not counted either.
        import_package(s, data, owner_user_id=user_id, with_scheduling=False, now=now)
        monkeypatch.setattr(reader, "READ_SECONDS", 0.0)
        monkeypatch.setattr(reader, "_CHECK_EVERY", 1)  # else a read this small ends unchecked
        with pytest.raises(AnkiPackageError, match="took over"):
            import_package(s, data, owner_user_id=user_id, with_scheduling=False, now=now)


@pytest.mark.parametrize(
    "conf",
    [{"rollover": 30}, {"creationOffset": 10**10}, {"creationOffset": 1e300, "rollover": 1e300},
     {"creationOffset": True, "rollover": -1}],
)  # fmt: skip
def test_day_settings_out_of_ankis_range_are_read_as_absent(
    loaded_engine: Engine, tmp_path: Path, conf: dict[str, Any]
) -> None:
    now, user_id, data = hostile_package(
        loaded_engine,
        tmp_path,
        lambda conn: conn.execute("UPDATE col SET conf = ?", (json.dumps(conf),)),
    )
    with transaction(loaded_engine) as s:
        report = import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=now)
        assert report.review_states == 4


def test_a_relearning_card_without_memory_or_history_can_be_studied(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    def edit(conn: sqlite3.Connection) -> None:
        due = int(wall_now().timestamp()) - 60
        conn.execute("UPDATE cards SET type = 3, queue = 1, due = ?, left = 1, data = ''", (due,))
        conn.execute("DELETE FROM revlog")

    now, user_id, data = hostile_package(loaded_engine, tmp_path, edit)
    with transaction(loaded_engine) as s:
        report = import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=now)
        states = s.scalars(select(ReviewState).where(ReviewState.deck_id == report.deck_id)).all()
        assert states and all(st.state == 3 and st.stability and st.difficulty for st in states)
        deck = s.get(Deck, report.deck_id)
        assert deck is not None
        subscribe(s, user_id, deck, None, now=now)
        card, counts = queue.next_card(s, user_id, now=now, deck_ids=[deck.id])
        assert card is not None and counts.learning == len(states)
        for state in states:
            answer(s, user_id, state.card_id, "good", now=now + timedelta(minutes=1))


@pytest.mark.parametrize(
    ("table", "column"),
    [("col", "ver"), ("col", "crt"), ("notes", "mod"), ("cards", "due"), ("revlog", "ivl")],
)
def test_an_infinite_number_in_a_package_is_refused_cleanly(
    loaded_engine: Engine, tmp_path: Path, table: str, column: str
) -> None:
    # SQLite stores 9e999 as a REAL infinity, which Python's int() cannot take.
    now, user_id, data = hostile_package(
        loaded_engine, tmp_path, lambda conn: conn.execute(f"UPDATE {table} SET {column} = 9e999")
    )
    with transaction(loaded_engine) as s:
        decks_before = s.scalar(select(func.count()).select_from(Deck))
    with pytest.raises(AnkiPackageError, match="damaged"), transaction(loaded_engine) as s:
        import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=now)
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).select_from(Deck)) == decks_before


def test_undo_after_importing_progress_undoes_the_last_answer_given_here(
    loaded_engine: Engine,
) -> None:
    # A fixed time well inside the person's study day (UTC, from 4:00): the answers two
    # minutes before it are today's, whenever the suite runs.
    now = datetime(2026, 3, 2, 12, 0, 0, 654321, tzinfo=UTC)
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "both@example.com")
        first, last = card_id(s, "bf16-vs-fp16"), card_id(s, "tensor-parallelism")
        answer(s, user_id, first, "good", now=now - timedelta(minutes=2))
        answer(s, user_id, last, "good", now=now - timedelta(minutes=1))
    # The history comes back as a deck of its own: its logs are written after the answers
    # above (higher ids), at the same times to the millisecond (Anki keeps no finer).
    package = export(loaded_engine, now, user_id=user_id, with_scheduling=True)
    with transaction(loaded_engine) as s:
        report = import_package(s, package, owner_user_id=user_id, with_scheduling=True, now=now)
        assert report.review_logs == 2
        undone = study.undo(s, user_id, now=now)
        assert undone.card_id == last
        assert s.get(ReviewState, (user_id, last)) is None  # back to new
        imported = s.scalars(select(ReviewState).where(ReviewState.deck_id == report.deck_id))
        assert [state.reps for state in imported] == [1, 1]


@pytest.mark.parametrize("memory", ['{"s": -1, "d": 99}', '{"s": 0, "d": 5}', '{"s": 1e400}'])
def test_a_memory_state_fsrs_cannot_use_is_taken_as_none(
    loaded_engine: Engine, tmp_path: Path, memory: str
) -> None:
    now = wall_now()
    user_id = study_eks(loaded_engine, now)
    package = export(loaded_engine, now, user_id=user_id, with_scheduling=True)
    package = edited_package(
        package, tmp_path, lambda db: db.execute("UPDATE cards SET data = ?", (memory,))
    )
    with transaction(loaded_engine) as s:
        report = import_package(s, package, owner_user_id=user_id, with_scheduling=True, now=now)
        states = s.scalars(select(ReviewState).where(ReviewState.deck_id == report.deck_id)).all()
        assert states and all(st.stability is None or st.stability >= 0.001 for st in states), [
            (st.stability, st.difficulty) for st in states
        ]
        assert all(st.difficulty is None or 1 <= st.difficulty <= 10 for st in states)
        # Every imported card can be studied: the queue shows them, and each takes an answer.
        deck = s.get(Deck, report.deck_id)
        assert deck is not None
        subscribe(s, user_id, deck, None, now=now)
        _card, counts = queue.next_card(s, user_id, now=now + timedelta(days=400))
        assert counts.review + counts.learning >= len(states)
        for state in states:
            answer(s, user_id, state.card_id, "good", now=now + timedelta(minutes=1))


def test_a_deck_from_anki_goes_back_to_anki_as_the_same_notes(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    """Anki, here, then Anki again: its notes are recognised by their guid, not added twice."""
    path = tmp_path / "home.anki2"
    col = Collection(str(path))
    try:
        studied_in_anki(col, 3, (3, 3))
        guids = sorted(col.get_note(n).guid for n in col.find_notes(""))
        data = anki_export(col, tmp_path / "home.apkg", legacy=False)
    finally:
        col.close()
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "roundtrip@example.com")
        report = import_package(
            s, data, owner_user_id=user_id, with_scheduling=True, now=wall_now()
        )
        assert (
            sorted(
                s.scalars(
                    select(CardText.anki_guid).join(Card).where(Card.deck_id == report.deck_id)
                )
            )
            == guids
        )
    with transaction(loaded_engine) as s:
        back = export_deck(
            s, report.deck_id, locales=None, user_id=user_id, with_scheduling=True, now=wall_now()
        ).data
    col, log = anki_import(path, back)
    try:
        assert len(log.new) == 0, log
        assert sorted(col.get_note(n).guid for n in col.find_notes("")) == guids  # no copies
    finally:
        col.close()
