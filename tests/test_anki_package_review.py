"""Findings of the package code's review: a re-import whose new card brings answers the deck
has already, a package sharing a few notes with a deck, hostile card templates, tag-only
changes reaching Anki devices, a lone sibling's GUID, copied Cloze and sibling notes.
Packages made with the real `anki` package."""

from __future__ import annotations

import html
import sqlite3
import time
from datetime import timedelta
from pathlib import Path

import pytest
from anki.collection import Collection
from flask.testing import FlaskClient
from sqlalchemy import Engine, delete, func, select, update
from sqlalchemy.orm import Session

from flashcards.anki import AnkiPackageError, export_deck, import_package, planning
from flashcards.decks.card_editing import retire_card
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, Deck, ReviewLog, ReviewState, User

from . import factories as f
from .test_anki_export import anki_import, skip_near_anki_rollover, wall_now
from .test_anki_import import anki_export, cloze_package, edited_package
from .test_anki_reimport import anki_deck, progress, upload
from .test_anki_siblings import CLOZE_TEXT, exported, imported, reversed_package
from .test_api_apkg import OCTET, World
from .test_api_apkg import world as world  # the fixture, by its name
from .web_helpers import sign_up


def both_cards_answered(tmp_path: Path) -> bytes:
    """A "Basic (and reversed card)" note whose two cards were answered in Anki."""
    col = Collection(str(tmp_path / "both.anki2"))
    try:
        both = col.models.by_name("Basic (and reversed card)")
        assert both is not None
        note = col.new_note(both)
        note["Front"], note["Back"] = "gato", "cat"
        col.add_note(note, 1)
        for _ in range(4):
            if all(col.get_card(c).reps for c in note.card_ids()):
                break
            card = col.sched.getCard()
            assert card is not None
            col.sched.answerCard(card, 3)
        assert all(col.get_card(c).reps for c in note.card_ids())
        return anki_export(col, tmp_path / "both.apkg", legacy=False)
    finally:
        col.close()


def as_before_siblings(session: Session, deck_id: int) -> None:
    """The deck of a reversed note shaped as an import made before siblings: one card
    `anki-<nid>`, carrying the reverse card's answers."""
    cards = dict(session.execute(select(Card.key, Card.id).where(Card.deck_id == deck_id)).all())
    forward = next(c for k, c in cards.items() if k.endswith("-t1"))
    reverse_key = next(k for k in cards if k.endswith("-t2"))
    for model in (ReviewLog, ReviewState, CardText):
        session.execute(delete(model).where(model.card_id == forward))  # type: ignore[attr-defined]
    session.execute(delete(Card).where(Card.id == forward))
    session.execute(
        update(Card)
        .where(Card.id == cards[reverse_key])
        .values(key=reverse_key.rsplit("-", 1)[0], note_key=None)
    )


def test_a_new_card_whose_answers_the_deck_has_already_comes_without_them(
    engine: Engine, tmp_path: Path
) -> None:
    skip_near_anki_rollover(wall_now())
    package = both_cards_answered(tmp_path)
    now = wall_now()
    with transaction(engine) as s:
        user_id = f.make_user(s)
        report = import_package(s, package, owner_user_id=user_id, with_scheduling=True, now=now)
        deck_id = report.deck_id
        as_before_siblings(s, deck_id)
        logs_before = s.scalar(select(func.count()).select_from(ReviewLog))
    assert logs_before

    with transaction(engine) as s:
        again = import_package(
            s, package, owner_user_id=user_id, with_scheduling=True, now=now, update_existing=True
        )
        rows = s.execute(
            select(Card.key, ReviewState.reps)
            .outerjoin(ReviewState, ReviewState.card_id == Card.id)
            .where(Card.deck_id == deck_id)
        ).all()
        logs_after = s.scalar(select(func.count()).select_from(ReviewLog))
    assert again.updated and again.added == 1
    reps = {key.rsplit("-", 1)[1] if key.endswith("-t2") else "old": reps for key, reps in rows}
    # The old card keeps the reverse's progress; the reverse, new, starts without a copy of it.
    assert reps["old"] and reps["t2"] is None
    assert logs_after == logs_before and again.review_logs == 0


def test_the_api_imports_it_again_without_an_error(
    client: FlaskClient, world: World, engine: Engine, tmp_path: Path
) -> None:
    skip_near_anki_rollover(wall_now())
    package = both_cards_answered(tmp_path)
    url = "/api/v1/imports?with_scheduling=true"
    first = client.post(url, data=package, headers={**world.ana_h, **OCTET})
    assert first.status_code == 201, first.get_data(as_text=True)
    with transaction(engine) as s:
        deck_id = s.scalar(select(Deck.id).where(Deck.slug == first.get_json()["deck"]["slug"]))
        assert deck_id is not None
        as_before_siblings(s, deck_id)
    again = client.post(url, data=package, headers={**world.ana_h, **OCTET})
    assert again.status_code == 200, again.get_data(as_text=True)
    body = again.get_json()
    assert body["updated"] is True and body["cards_added"] == 1 and body["review_logs"] == 0


def notes_package(col: Collection, out: Path, fronts: list[str]) -> bytes:
    """The collection with Basic notes of exactly these fronts (others removed, new added)."""
    basic = col.models.by_name("Basic")
    assert basic is not None
    have = {col.get_note(n)["Front"]: n for n in col.find_notes("")}
    col.remove_notes([n for front, n in have.items() if front not in fronts])
    for front in fronts:
        if front not in have:
            note = col.new_note(basic)
            note["Front"], note["Back"] = front, f"back of {front}"
            col.add_note(note, 1)
    return anki_export(col, out, legacy=False)


def test_a_deck_is_updated_only_by_a_package_mostly_of_its_notes(
    engine: Engine, tmp_path: Path
) -> None:
    col = Collection(str(tmp_path / "spanish.anki2"))
    try:
        first = notes_package(col, tmp_path / "1.apkg", ["uno", "dos", "tres", "cuatro"])
        more = notes_package(col, tmp_path / "2.apkg", ["uno", "dos", "tres", "cuatro", "cinco"])
        other = notes_package(col, tmp_path / "3.apkg", ["uno", "seis", "siete", "ocho", "nueve"])
    finally:
        col.close()
    now = wall_now()
    with transaction(engine) as s:
        user_id = f.make_user(s)
        deck_id = import_package(s, first, owner_user_id=user_id, now=now).deck_id
    with transaction(engine) as s:
        grown = import_package(s, more, owner_user_id=user_id, now=now, update_existing=True)
    assert grown.updated and grown.deck_id == deck_id and grown.added == 1
    with transaction(engine) as s:
        # "Spanish 2", sharing one of its five notes with "Spanish 1": a deck of its own.
        second = import_package(s, other, owner_user_id=user_id, now=now, update_existing=True)
        kept = s.scalar(select(func.count()).select_from(Card).where(Card.deck_id == deck_id))
    assert not second.updated and second.deck_id != deck_id and second.cards == 5
    assert kept == 5


def hostile_package(tmp_path: Path, notes: int) -> bytes:
    """Notes of a two-template note type whose reverse side repeats a field 20,000 times."""
    col = Collection(str(tmp_path / "hostile.anki2"))
    try:
        mm = col.models
        model = mm.new("Hostile")
        for name in ("Front", "Back"):
            mm.add_field(model, mm.new_field(name))
        for name, question in (("Card 1", "{{Front}}"), ("Card 2", "{{Back}}" * 20_000)):
            template = mm.new_template(name)
            template["qfmt"], template["afmt"] = question, "{{FrontSide}}<hr id=answer>x"
            mm.add_template(model, template)
        mm.add(model)
        kind = mm.by_name("Hostile")
        basic = mm.by_name("Basic")
        assert kind is not None and basic is not None
        for i in range(notes):
            note = col.new_note(kind)
            note["Front"], note["Back"] = f"q{i}", "many words " * 20
            col.add_note(note, 1)
        note = col.new_note(basic)
        note["Front"], note["Back"] = "harmless", "fine"
        col.add_note(note, 1)
        return anki_export(col, tmp_path / "hostile.apkg", legacy=False)
    finally:
        col.close()


def test_a_template_of_thousands_of_fields_is_left_out_quickly(
    engine: Engine, tmp_path: Path
) -> None:
    package = hostile_package(tmp_path, 200)
    with transaction(engine) as s:
        started = time.monotonic()
        report = import_package(s, package, owner_user_id=f.make_user(s), now=wall_now())
        took = time.monotonic() - started
    assert report.cards == 1 and report.skipped == {"too_long": 200}
    assert took < 10, took  # was 40 MB of HTML a note


def test_making_cards_has_a_time_budget(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = hostile_package(tmp_path, 200)
    monkeypatch.setattr(planning, "PLAN_SECONDS", 0.0)  # the budget spent at once
    with transaction(engine) as s:
        user_id = f.make_user(s)
    with pytest.raises(AnkiPackageError, match="took over 0 s"), transaction(engine) as s:
        import_package(s, package, owner_user_id=user_id, now=wall_now())
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(Card)) == 0


def test_templates_making_too_much_text_in_all_are_refused_on_the_web(
    client: FlaskClient, engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sign_up(client, language="ko")
    package = hostile_package(tmp_path, 200)
    # Each side is capped; a package of enough notes passes the cap of all of them.
    monkeypatch.setattr(planning, "MAX_TEMPLATE_TEXT", 100)
    response = upload(client, package)
    assert response.status_code == 422
    assert "카드 템플릿은 필드를 너무 많이 반복합니다" in response.get_data(as_text=True)
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(Card)) == 0


def test_a_re_import_changing_only_tags_dates_the_cards_for_anki_devices(
    engine: Engine, tmp_path: Path
) -> None:
    now = wall_now()
    with transaction(engine) as s:
        user_id = f.make_user(s)
        deck = f.make_deck(s, "tagged", 2, owner_user_id=user_id, now=now - timedelta(days=3))
        deck_id = deck.id
        package = export_deck(s, deck_id, locales=["en"], now=now).data

    def tag(db: sqlite3.Connection) -> None:
        db.execute("UPDATE notes SET tags = tags || 'verbs '")

    later = now + timedelta(hours=1)
    with transaction(engine) as s:
        report = import_package(
            s, edited_package(package, tmp_path, tag), owner_user_id=user_id, now=later,
            update_existing=True,
        )  # fmt: skip
        rows = s.execute(select(Card.tags, Card.updated_at).where(Card.deck_id == deck_id)).all()
    assert report.updated and report.changed == 2
    assert [(tags, when.replace(tzinfo=None)) for tags, when in rows] == [
        (["verbs"], later.replace(tzinfo=None))
    ] * 2


def test_a_lone_siblings_guid_finds_its_deck_again(engine: Engine) -> None:
    now = wall_now()
    with transaction(engine) as s:
        user_id = f.make_user(s)
        deck = f.make_deck(s, "pair", 2, owner_user_id=user_id, locales=("en", "es"))
        deck_id = deck.id
        s.execute(update(Card).where(Card.deck_id == deck_id).values(note_key="pair-note"))
        second = s.scalar(select(Card.id).where(Card.deck_id == deck_id, Card.key == "c02"))
        # In Spanish only the first card: it goes out alone, under a GUID of its own, and the
        # deck is found by half of the package's notes only with it.
        s.execute(delete(CardText).where(CardText.card_id == second, CardText.locale == "es"))
        package = export_deck(s, deck_id, locales=None, now=now).data
    with transaction(engine) as s:
        report = import_package(s, package, owner_user_id=user_id, now=now, update_existing=True)
    assert report.updated and report.deck_id == deck_id
    assert (report.added, report.changed, report.skipped) == (0, 0, {})


@pytest.mark.parametrize("kind", ["cloze", "reversed"])
def test_a_copied_note_of_siblings_comes_in_beside_its_original(
    loaded_engine: Engine, tmp_path: Path, kind: str
) -> None:
    source = (
        cloze_package(tmp_path, [CLOZE_TEXT]) if kind == "cloze" else reversed_package(tmp_path)
    )
    user_id, deck_id = imported(loaded_engine, source)
    package = exported(loaded_engine, deck_id, user_id)
    col, _log = anki_import(tmp_path / "copies.anki2", package, with_scheduling=False)
    try:
        # Anki's "Create copy": a new note with every field, our Key field too.
        original = max(
            (col.get_note(n) for n in col.find_notes("")), key=lambda n: len(n.card_ids())
        )
        model = original.note_type()
        assert model is not None
        copy = col.new_note(model)
        copy.fields = list(original.fields)
        col.add_note(copy, col.decks.id("Copies") or 1)
        copied = anki_export(col, tmp_path / "copied.apkg", legacy=False)
        cards = len(original.card_ids())
    finally:
        col.close()
    with transaction(loaded_engine) as s:
        report = import_package(s, copied, owner_user_id=f.make_user(s), now=wall_now())
        note_keys = s.execute(
            select(Card.note_key, func.count())
            .where(Card.deck_id.in_([d.deck_id for d in report.decks]))
            .group_by(Card.deck_id, Card.note_key)
        ).all()  # fmt: skip
    # The copy made in its own Anki deck comes in as that deck, beside the original's.
    assert len(report.decks) == 2 and "Copies" in [d.title for d in report.decks]
    assert "duplicate" not in report.skipped
    siblings = sorted(n for key, n in note_keys if key is not None)
    assert siblings == [cards, cards]


def test_the_web_form_says_why_a_note_new_to_the_deck_was_left_out(
    client: FlaskClient, engine: Engine, tmp_path: Path
) -> None:
    sign_up(client, language="es")
    now = wall_now()
    with transaction(engine) as s:
        user_id = s.scalar(select(User.id).where(User.email == "ana@example.com"))
        deck = f.make_deck(s, "mine", 2, owner_user_id=user_id, locales=("en", "es"))
        package = export_deck(s, deck.id, locales=["es"], now=now).data

    def add_spanish_note(db: sqlite3.Connection) -> None:
        # A note added in Anki to the Spanish subdeck, of our note type: no English text.
        db.execute(
            "INSERT INTO notes SELECT id + 7, guid || 'x', mid, mod, usn, tags,"
            " replace(flds, 'c01', 'c09'), sfld, csum, flags, data FROM notes"
            " WHERE flds LIKE '%c01%'"
        )

    response = upload(client, edited_package(package, tmp_path, add_spanish_note))
    assert response.status_code == 302, response.get_data(as_text=True)
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "no tiene texto en el idioma del mazo" in html.unescape(page)


def test_a_card_removed_here_comes_back_with_its_progress_when_its_package_is_imported_again(
    engine: Engine, tmp_path: Path
) -> None:
    package = anki_deck(tmp_path / "home.anki2", tmp_path / "home.apkg")
    now = wall_now()
    with transaction(engine) as s:
        user_id = f.make_user(s)
        report = import_package(s, package, owner_user_id=user_id, with_scheduling=True, now=now)
        deck = s.get(Deck, report.deck_id)
        assert deck is not None
        key = s.scalar(select(Card.key).join(CardText).where(CardText.question == "q0"))
        assert key is not None
        retire_card(s, deck, key, now=now)
        before = progress(s, deck.id)
    later = now + timedelta(minutes=5)
    with transaction(engine) as s:
        again = import_package(
            s, package, owner_user_id=user_id, with_scheduling=True, now=later,
            update_existing=True,
        )  # fmt: skip
        card = s.scalar(select(Card).where(Card.deck_id == deck.id, Card.key == key))
        assert card is not None
        after = progress(s, deck.id)
    # Anki adds a note deleted since the package was made: the card is back, as it was.
    assert again.updated and (again.added, again.changed) == (0, 1)
    assert card.retired_at is None and card.updated_at.replace(tzinfo=None) == later.replace(
        tzinfo=None
    )
    assert after == before and "q0" in after
