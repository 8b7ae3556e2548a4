"""Siblings through Anki and back (issue 23): the deletions of a Cloze note and the cards of a
note with several templates reach Anki as one note, which buries them as siblings, and come
back as sibling cards. Checked with the real `anki` package."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from anki.collection import Collection
from sqlalchemy import Engine, select

from flashcards.anki import export_deck, import_package
from flashcards.anki.templates import render_card
from flashcards.decks.cloze import Cloze
from flashcards.decks.cloze_source import cloze_source
from flashcards.srs import answer_effects as effects
from flashcards.srs import card_actions as ca
from flashcards.srs import marks as mk
from flashcards.srs.days import study_date
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, Deck, ReviewState

from .factories import make_user, subscribe
from .test_anki_export import anki_import, skip_near_anki_rollover, wall_now
from .test_anki_import import anki_export, cloze_package

SIBLING_BURIED = -2
CLOZE_TEXT = "{{c1::Ribosomes}} make {{c2::proteins::what?}} from {{c3::RNA}}."


def reversed_package(tmp_path: Path) -> bytes:
    """A "Basic (and reversed card)" note (two cards), and a "Basic (optional reversed card)"
    note whose reverse is not asked for (one card)."""
    col = Collection(str(tmp_path / "reversed.anki2"))
    try:
        did = col.decks.id("Spanish")
        assert did is not None
        both = col.models.by_name("Basic (and reversed card)")
        optional = col.models.by_name("Basic (optional reversed card)")
        assert both is not None and optional is not None
        note = col.new_note(both)
        note["Front"], note["Back"] = "hola", "hello"
        col.add_note(note, did)
        note = col.new_note(optional)
        note["Front"], note["Back"] = "adiós", "goodbye"
        col.add_note(note, did)
        return anki_export(col, tmp_path / "reversed.apkg", legacy=False)
    finally:
        col.close()


def imported(engine: Engine, package: bytes, **options: bool) -> tuple[int, int]:
    """The package imported as a new person's deck, which they study with `options`."""
    now = wall_now()
    with transaction(engine) as s:
        user_id = make_user(s)
        report = import_package(s, package, owner_user_id=user_id, now=now)
        deck = s.get(Deck, report.deck_id)
        assert deck is not None
        subscribe(s, user_id, deck, now=now)
        effects.set_options(s, user_id, **options)
    return user_id, report.deck_id


def exported(engine: Engine, deck_id: int, user_id: int, **kwargs: Any) -> bytes:
    with transaction(engine) as s:
        kwargs.setdefault("locales", ["en"])
        return export_deck(s, deck_id, user_id=user_id, now=wall_now(), **kwargs).data


def notes_in_anki(col: Collection) -> dict[str, tuple[str, list[str], list[int]]]:
    """guid: (notetype name, fields, card ords) of every note."""
    found = {}
    for nid in col.find_notes(""):
        note = col.get_note(nid)
        model = note.note_type()
        assert model is not None
        ords = sorted(col.get_card(c).ord for c in note.card_ids())
        found[note.guid] = (model["name"], list(note.fields), ords)
    return found


def question_text(card: Any) -> str:
    """What Anki shows as the card's question, as text."""
    shown = re.sub(r"<style>.*?</style>|<[^>]+>", "", card.question(), flags=re.DOTALL)
    return html.unescape(shown).strip()


def answer_first_and_look_at_siblings(col: Collection, deck: str) -> list[int]:
    """Anki's queue of each sibling of the card Anki shows first, after answering it Good."""
    did = col.decks.id_for_name(deck)
    assert did is not None
    col.decks.select(did)
    card = col.sched.getCard()
    assert card is not None
    col.sched.answerCard(card, 3)
    return [col.get_card(c).queue for c in card.note().card_ids() if c != card.id]


def test_a_cloze_notes_deletions_reach_anki_as_one_cloze_note_that_buries_them(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    skip_near_anki_rollover(wall_now())
    user_id, deck_id = imported(
        loaded_engine, cloze_package(tmp_path, [CLOZE_TEXT], basic=1), bury_new=True
    )
    package = exported(loaded_engine, deck_id, user_id, with_scheduling=True)
    col, log = anki_import(tmp_path / "cloze.anki2", package)
    try:
        notes = notes_in_anki(col)
        assert len(log.new) == 2 and len(notes) == 2
        cloze = [n for n in notes.values() if n[0] == "Flashcards (cloze)"]
        assert len(cloze) == 1
        _name, fields, ords = cloze[0]
        assert fields[0] == CLOZE_TEXT and ords == [0, 1, 2]
        shown = {
            col.get_card(c).ord: question_text(col.get_card(c))
            for c in col.find_cards('"note:Flashcards (cloze)"')
        }
        assert shown == {
            0: "[...] make proteins from RNA.",
            1: "Ribosomes make [what?] from RNA.",
            2: "Ribosomes make proteins from [...].",
        }
        # The person's "bury new siblings" went along with the deck's options.
        assert answer_first_and_look_at_siblings(col, "Imported from Anki") == [
            SIBLING_BURIED,
            SIBLING_BURIED,
        ]
    finally:
        col.close()


def test_a_reversed_note_comes_in_as_two_siblings_and_goes_back_as_one_note(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    skip_near_anki_rollover(wall_now())
    user_id, deck_id = imported(loaded_engine, reversed_package(tmp_path), bury_new=True)
    with transaction(loaded_engine) as s:
        rows = s.execute(
            select(Card.key, Card.note_key, CardText.question, CardText.answer)
            .join(CardText)
            .where(Card.deck_id == deck_id)
            .order_by(Card.position)
        ).all()
    sides = [(r.question, r.answer) for r in rows]
    assert sides == [("hola", "hello"), ("hello", "hola"), ("adiós", "goodbye")]
    assert rows[0].note_key is not None and rows[0].note_key == rows[1].note_key
    assert rows[2].note_key is None  # one card: no siblings

    package = exported(loaded_engine, deck_id, user_id, with_scheduling=True)
    col, log = anki_import(tmp_path / "other-device.anki2", package)
    try:
        notes = notes_in_anki(col)
        assert len(log.new) == 2 and len(notes) == 2
        two = [n for n in notes.values() if n[0] == "Flashcards (2 cards a note)"]
        assert len(two) == 1 and two[0][2] == [0, 1]
        fronts = {question_text(col.get_card(c)) for c in col.find_cards("")}
        assert fronts == {"hola", "hello", "adiós"}
        assert answer_first_and_look_at_siblings(col, "Spanish") == [SIBLING_BURIED]
        again = anki_export(col, tmp_path / "again.apkg", legacy=False)
    finally:
        col.close()

    # Back from Anki, the same cards and siblings; exported again, the same notes.
    with transaction(loaded_engine) as s:
        back = import_package(s, again, owner_user_id=user_id, now=wall_now(), slug="back")
        found = s.execute(select(Card.key, Card.note_key).where(Card.deck_id == back.deck_id))
        keys = {row.key: row.note_key for row in found}
    assert keys == {row.key: row.note_key for row in rows}
    second = exported(loaded_engine, back.deck_id, user_id)
    col, _log = anki_import(tmp_path / "first.anki2", exported(loaded_engine, deck_id, user_id))
    try:
        first_notes = notes_in_anki(col)
    finally:
        col.close()
    col, _log = anki_import(tmp_path / "second.anki2", second)
    try:
        second_notes = notes_in_anki(col)
    finally:
        col.close()
    assert second_notes == first_notes and len(first_notes) == 2


def test_export_import_export_of_cloze_siblings_is_stable(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    user_id, deck_id = imported(loaded_engine, cloze_package(tmp_path, [CLOZE_TEXT], basic=1))
    first = exported(loaded_engine, deck_id, user_id)
    with transaction(loaded_engine) as s:
        again = import_package(s, first, owner_user_id=user_id, now=wall_now(), slug="again")
        siblings = s.scalars(
            select(Card.note_key).where(Card.deck_id == again.deck_id, Card.note_key.is_not(None))
        ).all()
    assert len(siblings) == 3 and len(set(siblings)) == 1
    second = exported(loaded_engine, again.deck_id, user_id)
    found = []
    for name, package in (("one", first), ("two", second)):
        col, _log = anki_import(tmp_path / f"{name}.anki2", package, with_scheduling=False)
        try:
            found.append(notes_in_anki(col))
        finally:
            col.close()
    assert found[0] == found[1] and len(found[0]) == 2


@pytest.mark.parametrize(
    "text",
    [
        CLOZE_TEXT,
        "{{c1::a}}{{c2::b}} side by side",
        "{{c1::Ribosomes {{c2::make}}}} proteins; {{c1::they}} read [brackets]",
        "before {{c1::[1]}} after",
    ],
)
def test_the_cloze_text_is_found_again_from_its_cards(text: str) -> None:
    parsed = Cloze(text)
    questions = {n: parsed.question(n) for n in parsed.numbers()}
    assert cloze_source(questions, parsed.answer()) == text


def test_cards_edited_apart_are_not_taken_for_a_cloze_text() -> None:
    parsed = Cloze(CLOZE_TEXT)
    questions = {n: parsed.question(n) for n in parsed.numbers()}
    questions[2] = "Something else entirely [...]"
    assert cloze_source(questions, parsed.answer()) is None


def test_templates_render_fields_sections_and_filters() -> None:
    fields = {"Word": "perro", "Meaning": "dog", "Example": "", "Audio": "[sound:x.mp3]"}
    question, answer = render_card(
        "{{Word}}{{#Example}}<br>{{Example}}{{/Example}}{{type:Meaning}}{{tts es_ES:Word}}",
        "{{FrontSide}}<hr id=answer>{{text:Meaning}}{{^Example}} (no example){{/Example}}",
        fields,
        limit=1000,
    )
    assert question == "perro"
    assert answer == "dog (no example)"
    # Unclosed sections and unknown fields are no failure: text, and nothing.
    assert render_card("{{#Word}}x {{Nope}}", "{{Meaning}}", fields, limit=1000) == (
        "{{#Word}}x ",
        "dog",
    )


def test_siblings_keep_their_own_suspension_flag_and_burying_both_ways(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    now = wall_now()
    skip_near_anki_rollover(now)  # Anki unburies at its own day's start
    user_id, deck_id = imported(loaded_engine, cloze_package(tmp_path, [CLOZE_TEXT]))
    with transaction(loaded_engine) as s:
        cards = dict(s.execute(select(Card.key, Card.id).where(Card.deck_id == deck_id)).all())
        by_number = {int(key.rsplit("-c", 1)[1]): card for key, card in cards.items()}
        ca.suspend(s, user_id, [by_number[1]], now=now)
        ca.set_flag(s, user_id, [by_number[2]], 5, now=now)
        ca.bury(s, user_id, [by_number[3]], now=now)
    package = exported(loaded_engine, deck_id, user_id, with_scheduling=True)
    col, _log = anki_import(tmp_path / "marked.anki2", package)
    try:
        by_ord = {col.get_card(c).ord: col.get_card(c) for c in col.find_cards("")}
        assert len(col.find_notes("")) == 1
        assert by_ord[0].queue == -1
        assert by_ord[1].user_flag() == 5 and by_ord[1].queue == 0
        assert by_ord[2].queue in (-2, -3)
        back = anki_export(col, tmp_path / "marked.apkg", legacy=False)
    finally:
        col.close()
    with transaction(loaded_engine) as s:
        report = import_package(
            s, back, owner_user_id=user_id, with_scheduling=True, now=now, slug="marked"
        )
        found = {
            key: mk.card_marks(s, user_id, card)
            for key, card in s.execute(
                select(Card.key, Card.id).where(Card.deck_id == report.deck_id)
            )
        }
        notes = set(s.scalars(select(Card.note_key).where(Card.deck_id == report.deck_id)))
    tomorrow = study_date(now, "UTC", 4) + timedelta(days=1)
    marks = {int(key.rsplit("-c", 1)[1]): m for key, m in found.items()}
    assert marks == {
        1: mk.Marks(suspended=True),
        2: mk.Marks(flag=5),
        3: mk.Marks(buried_until=tomorrow),
    }
    assert len(notes) == 1 and None not in notes


def test_each_template_card_brings_its_own_progress(loaded_engine: Engine, tmp_path: Path) -> None:
    skip_near_anki_rollover(wall_now())
    col = Collection(str(tmp_path / "studied.anki2"))
    try:
        both = col.models.by_name("Basic (and reversed card)")
        assert both is not None
        note = col.new_note(both)
        note["Front"], note["Back"] = "gato", "cat"
        col.add_note(note, 1)
        card = col.sched.getCard()
        assert card is not None and card.ord == 0
        col.sched.answerCard(card, 3)
        package = anki_export(col, tmp_path / "studied.apkg", legacy=True)
    finally:
        col.close()
    with transaction(loaded_engine) as s:
        user_id = make_user(s)
        report = import_package(
            s, package, owner_user_id=user_id, with_scheduling=True, now=wall_now()
        )
        rows = s.execute(
            select(Card.key, Card.note_key, ReviewState.reps)
            .outerjoin(ReviewState, ReviewState.card_id == Card.id)
            .where(Card.deck_id == report.deck_id)
            .order_by(Card.key)
        ).all()
    assert [(r.key.rsplit("-", 1)[1], r.reps) for r in rows] == [("t1", 1), ("t2", None)]
    assert rows[0].note_key == rows[1].note_key is not None
    assert report.review_states == 1 and report.review_logs == 1
