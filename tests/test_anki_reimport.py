"""A package imported again updates the deck it came from (issue 25), by note GUID, keeping
progress: packages of Anki's own (checked with the real `anki` package), our exports of a deck
made here, through the domain, the API and the web form."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from typing import Any

from anki.collection import Collection
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select
from werkzeug.datastructures import FileStorage, MultiDict
from werkzeug.test import TestResponse, encode_multipart

from flashcards.anki import export_deck, import_package
from flashcards.anki.names import shorten
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, Deck, ReviewLog, ReviewState

from . import factories as f
from .test_anki_export import anki_import, wall_now
from .test_anki_import import anki_export, edited_package, studied_in_anki
from .test_api_apkg import OCTET, World, deck_count
from .test_api_apkg import world as world  # the fixture, by its name
from .web_helpers import csrf, sign_up


def anki_deck(path: Path, out: Path) -> bytes:
    """Three Basic notes made in Anki, two of them answered there."""
    col = Collection(str(path))
    try:
        studied_in_anki(col, 3, (3, 3))
        return anki_export(col, out, legacy=False)
    finally:
        col.close()


def edited_in_anki(path: Path, out: Path) -> bytes:
    """The same collection with one note's back edited and a note added."""
    col = Collection(str(path))
    try:
        nid = next(n for n in col.find_notes("") if col.get_note(n)["Front"] == "q1")
        note = col.get_note(nid)
        note["Back"] = "a1, edited in Anki"
        col.update_note(note)
        basic = col.models.by_name("Basic")
        assert basic is not None
        new = col.new_note(basic)
        new["Front"], new["Back"] = "q3", "a3"
        col.add_note(new, 1)
        return anki_export(col, out, legacy=False)
    finally:
        col.close()


def progress(session: Any, deck_id: int) -> dict[str, tuple[int, int]]:
    """Reps and logs of each card with progress, by the card's front."""
    rows = session.execute(
        select(CardText.question, ReviewState.reps, ReviewState.card_id)
        .join(ReviewState, ReviewState.card_id == CardText.card_id)
        .where(ReviewState.deck_id == deck_id)
    )
    out = {}
    for question, reps, card_id in rows:
        logs = session.scalar(
            select(func.count()).select_from(ReviewLog).where(ReviewLog.card_id == card_id)
        )
        out[question] = (reps, logs or 0)
    return out


def test_an_anki_deck_imported_again_updates_its_deck_and_keeps_progress(
    engine: Engine, tmp_path: Path
) -> None:
    first = anki_deck(tmp_path / "home.anki2", tmp_path / "one.apkg")
    now = wall_now()
    with transaction(engine) as s:
        user_id = f.make_user(s)
        report = import_package(
            s, first, owner_user_id=user_id, with_scheduling=True, now=now, update_existing=True
        )
        assert not report.updated
        deck_id = report.deck_id
        studied = progress(s, deck_id)
        card = s.scalar(select(Card.id).join(CardText).where(CardText.question == "q2"))
        assert card is not None
        f.answer(s, user_id, card, "good", now=now)  # progress made here since
        studied = progress(s, deck_id)
        decks = s.scalar(select(func.count()).select_from(Deck))
    assert len(studied) == 3

    second = edited_in_anki(tmp_path / "home.anki2", tmp_path / "two.apkg")
    with transaction(engine) as s:
        again = import_package(
            s, second, owner_user_id=user_id, with_scheduling=True, now=now, update_existing=True
        )
        assert s.scalar(select(func.count()).select_from(Deck)) == decks  # no second copy
        texts = dict(
            s.execute(
                select(CardText.question, CardText.answer).join(Card).where(Card.deck_id == deck_id)
            ).all()
        )
        after = progress(s, deck_id)
    assert again.updated and again.deck_id == deck_id
    assert (again.changed, again.added, again.cards) == (1, 1, 4)
    assert texts == {"q0": "a0", "q1": "a1, edited in Anki", "q2": "a2", "q3": "a3"}
    assert after == studied  # everyone's progress as it was: q3 is new everywhere

    # Asked for a copy, it is one.
    with transaction(engine) as s:
        copy = import_package(s, second, owner_user_id=user_id, now=now)
        assert not copy.updated and copy.deck_id != deck_id


def test_our_export_of_a_deck_made_here_updates_it_when_imported_back(
    engine: Engine, tmp_path: Path
) -> None:
    now = wall_now()
    with transaction(engine) as s:
        user_id = f.make_user(s)
        deck = f.make_deck(s, "mine", 3, owner_user_id=user_id, locales=("en", "es"))
        deck_id = deck.id
        f.subscribe(s, user_id, deck)
        f.answer(s, user_id, f.card_ids(s, deck_id)[0], "easy", now=now)
        package = export_deck(s, deck_id, locales=None, now=now).data

    def edit(db: sqlite3.Connection) -> None:
        db.execute("UPDATE notes SET flds = replace(flds, 'mine q2 es', 'mine q2 es, editado')")

    edited = edited_package(package, tmp_path, edit)
    with transaction(engine) as s:
        report = import_package(s, edited, owner_user_id=user_id, now=now, update_existing=True)
        question = s.scalar(
            select(CardText.question)
            .join(Card)
            .where(Card.deck_id == deck_id, Card.key == "c02", CardText.locale == "es")
        )
        states = s.scalar(select(func.count()).select_from(ReviewState))
    assert report.updated and report.deck_id == deck_id
    assert (report.changed, report.added, report.cards, report.texts) == (1, 0, 3, 6)
    assert question == "mine q2 es, editado" and states == 1
    # The deck's mark is "flashcards::mine", no tag of its cards; an older export's bare slug
    # finds the deck too.
    assert report.tagged == 0

    def older(db: sqlite3.Connection) -> None:
        edit(db)
        db.execute("UPDATE notes SET tags = replace(tags, ' flashcards::mine ', ' mine ')")
        assert db.execute("SELECT count(*) FROM notes WHERE tags LIKE '% mine %'").fetchone()[0]

    with transaction(engine) as s:
        again = import_package(s, edited_package(package, tmp_path, older), owner_user_id=user_id,
                               now=now, update_existing=True)  # fmt: skip
    assert again.updated and again.deck_id == deck_id and again.added == 0

    # Someone else's deck is never theirs to update: another person gets a deck of their own.
    with transaction(engine) as s:
        other = f.make_user(s)
        theirs = import_package(s, edited, owner_user_id=other, now=now, update_existing=True)
    assert not theirs.updated and theirs.deck_id != deck_id


def test_a_deck_studied_but_not_owned_takes_back_progress_from_anki_and_keeps_its_texts(
    engine: Engine, tmp_path: Path
) -> None:
    now = wall_now()
    with transaction(engine) as s:
        user_id = f.make_user(s)
        deck = f.make_deck(s, "shipped", 3)  # no owner: a shipped deck
        deck_id = deck.id
        f.subscribe(s, user_id, deck)
        studied = f.card_ids(s, deck_id)[0]
        f.answer(s, user_id, studied, "good", now=now)
        package = export_deck(
            s, deck_id, locales=["en"], user_id=user_id, with_scheduling=True, now=now
        ).data
        texts = {(t.card_id, t.question, t.answer) for t in s.scalars(select(CardText))}
        decks = s.scalar(select(func.count()).select_from(Deck))
    # In Anki: a new card answered, a note's back edited, a note added.
    col, _log = anki_import(tmp_path / "anki.anki2", package)
    try:
        (anki_deck_id,) = [d.id for d in col.decks.all_names_and_ids() if d.name != "Default"]
        col.decks.set_current(anki_deck_id)
        card = col.sched.getCard()
        assert card is not None and card.type == 0
        col.sched.answerCard(card, 3)
        note = col.get_note(col.find_notes("")[-1])
        note.fields[1] = "edited in Anki"
        col.update_note(note)
        added = col.new_note(note.note_type())
        added.fields[0], added.fields[1] = "new in Anki", "an answer"
        col.add_note(added, anki_deck_id)
        back = anki_export(col, tmp_path / "back.apkg", legacy=False)
    finally:
        col.close()
    with transaction(engine) as s:
        report = import_package(
            s, back, owner_user_id=user_id, with_scheduling=True, now=wall_now(),
            update_existing=True,
        )  # fmt: skip
        assert {(t.card_id, t.question, t.answer) for t in s.scalars(select(CardText))} == texts
        assert s.scalar(select(func.count()).select_from(Deck)) == decks
        logs = dict(
            s.execute(
                select(ReviewLog.card_id, func.count())
                .where(ReviewLog.user_id == user_id)
                .group_by(ReviewLog.card_id)
            ).all()
        )
    assert report.updated and report.deck_id == deck_id
    assert (report.added, report.changed) == (0, 0)
    assert report.skipped == {"not_owned_new": 1, "not_owned_edited": 1}
    # The card studied here keeps its one answer; the one answered in Anki brings its own.
    assert logs[studied] == 1 and len(logs) == 2 and report.review_states == 1
    assert any("do not own" in m for m in report.messages)


def test_api_answers_200_updated_and_copy_makes_a_new_deck(
    client: FlaskClient, world: World, engine: Engine
) -> None:
    package = client.get(
        "/api/v1/decks/alpha/export.apkg?locale=en&with_scheduling=true", headers=world.ana_h
    ).data
    url = "/api/v1/imports?with_scheduling=true"
    before = deck_count(engine)
    # Alpha is a deck Ana studies, not hers: her own export of it comes back to it, with
    # nothing to add, instead of making a copy whose cards she would study twice.
    first = client.post(url, data=package, headers={**world.ana_h, **OCTET})
    assert first.status_code == 200, first.get_data(as_text=True)
    body = first.get_json()
    assert body["updated"] is True and body["deck"]["slug"] == "alpha"
    assert (body["cards_added"], body["cards_changed"], body["review_states"]) == (0, 0, 0)
    assert body["skipped"] == {} and deck_count(engine) == before
    copy = client.post(f"{url}&copy=true", data=package, headers={**world.ana_h, **OCTET})
    assert copy.status_code == 201 and copy.get_json()["updated"] is False
    assert copy.get_json()["deck"]["slug"] != "alpha"
    assert deck_count(engine) == before + 1
    # A copy imported before is updated again, not copied once more.
    again = client.post(url, data=package, headers={**world.ana_h, **OCTET})
    assert again.status_code == 200, again.get_data(as_text=True)
    assert again.get_json()["deck"] == copy.get_json()["deck"]
    assert deck_count(engine) == before + 1
    bad = client.post(f"{url}&copy=maybe", data=package, headers={**world.ana_h, **OCTET})
    assert bad.status_code == 422 and deck_count(engine) == before + 1


def upload(client: FlaskClient, data: bytes, *, copy: bool = False) -> TestResponse:
    form = MultiDict[str, Any]([("package", FileStorage(io.BytesIO(data), "deck.apkg"))])
    form.add("csrf_token", csrf(client, "/"))
    if copy:
        form.add("copy", "1")
    boundary, body = encode_multipart(form)
    return client.post(
        "/decks/import", data=body, content_type=f"multipart/form-data; boundary={boundary}"
    )


def test_the_web_form_updates_the_deck_and_says_so(
    app: Flask, client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    sign_up(client)
    package = anki_deck(tmp_path / "web.anki2", tmp_path / "web.apkg")
    first = upload(client, package)
    assert first.status_code == 302, first.get_data(as_text=True)
    before = deck_count(loaded_engine)
    again = upload(client, package)
    assert again.headers["Location"] == first.headers["Location"]
    page = client.get(again.headers["Location"]).get_data(as_text=True)
    assert "so that deck was updated instead of copied" in page
    assert "Nothing in it had changed." in page
    assert deck_count(loaded_engine) == before
    copy = upload(client, package, copy=True)
    assert copy.headers["Location"] != first.headers["Location"]
    assert deck_count(loaded_engine) == before + 1
    assert "Import as a new copy" in client.get("/").get_data(as_text=True)


def test_subdeck_names_are_kept_and_a_long_one_is_shortened_visibly(
    engine: Engine, tmp_path: Path
) -> None:
    col = Collection(str(tmp_path / "work.anki2"))
    try:
        basic = col.models.by_name("Basic")
        assert basic is not None
        for deck, front in (("Work::Onboarding::EKS::Week 1", "q1"), ("Default", "q2")):
            note = col.new_note(basic)
            note["Front"], note["Back"] = front, "a"
            col.add_note(note, col.decks.id(deck) or 1)
        package = anki_export(col, tmp_path / "work.apkg", legacy=False)
    finally:
        col.close()
    with transaction(engine) as s:
        report = import_package(s, package, owner_user_id=f.make_user(s), now=wall_now())
    assert report.title == "Work::Onboarding::EKS::Week 1"
    assert report.slug.endswith("-work-onboarding-eks-week-1")


def test_a_long_name_keeps_its_top_and_innermost_decks_and_whole_characters() -> None:
    inner = "Week 1 " + "x" * 50
    name = "::".join(["Work", "Onboarding " * 10, "EKS " * 40, inner])
    assert shorten(name) == f"Work::…::{inner}"
    family = "👨\u200d👩\u200d👧"  # one emoji of five code points
    for text in ("a" * 196 + family * 3, "e" + "e\u0301" * 150, "🇪🇸" * 120, "한" * 250):
        short = shorten(text)
        assert len(short) <= 200 and short.endswith("…")
        kept = short[:-1]
        assert text.startswith(kept)
        # No reader-visible character is cut: the rest begins at a character's start.
        rest = text[len(kept) :]
        assert not rest.startswith(("\u200d", "\u0301", "👩", "👧")) and kept[-1:] != "\u200d"
        assert len(kept) % 2 == 0 or not text.startswith("🇪🇸")
    assert shorten("short") == "short"
