"""Suspended, buried, flagged and leech cards, and Cloze siblings, through Anki and back:
checked with the real `anki` package, as the other package tests are."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import Engine, select

from flashcards.anki import export_deck, import_package
from flashcards.srs import answer_effects as effects
from flashcards.srs import card_actions as ca
from flashcards.srs import marks as mk
from flashcards.srs.days import study_date
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardMark, Deck

from .factories import answer, make_user, subscribe
from .test_anki_export import (
    anki_import,
    card_id,
    deck_id,
    export,
    skip_near_anki_rollover,
    study_eks,
    wall_now,
)
from .test_anki_import import anki_export, cloze_package

SUSPENDED, BURIED, FLAGGED, LEECH = (
    "tensor-parallelism",
    "planning-200b-model",
    "nccl-over-efa",
    "slurmctld-vs-slurmdbd",
)


def test_marks_go_to_anki_and_come_back(loaded_engine: Engine, tmp_path: Path) -> None:
    now = wall_now()
    skip_near_anki_rollover(now)  # Anki unburies at its own day's start
    user_id = study_eks(loaded_engine, now)
    with transaction(loaded_engine) as s:
        ca.suspend(s, user_id, [card_id(s, SUSPENDED)], now=now)
        ca.bury(s, user_id, [card_id(s, BURIED)], now=now)
        ca.set_flag(s, user_id, [card_id(s, FLAGGED)], 4, now=now)
        s.add(CardMark(user_id=user_id, card_id=card_id(s, LEECH), deck_id=deck_id(s), leech=True))
    package = export(loaded_engine, now, user_id=user_id, with_scheduling=True)
    col, _log = anki_import(tmp_path / "marks.anki2", package)
    try:

        def anki_card(key: str) -> object:
            found = col.find_cards(f'"Key:{key}"')
            assert len(found) == 1, key
            return col.get_card(found[0])

        assert anki_card(SUSPENDED).queue == -1  # type: ignore[attr-defined]
        assert anki_card(BURIED).queue in (-2, -3)  # type: ignore[attr-defined]
        assert anki_card(FLAGGED).user_flag() == 4  # type: ignore[attr-defined]
        leech_note = anki_card(LEECH).note()  # type: ignore[attr-defined]
        assert "leech" in leech_note.tags and "flashcards::eks-model-training" in leech_note.tags
        assert "leech" not in anki_card(FLAGGED).note().tags  # type: ignore[attr-defined]
        # Cards without marks are as Anki would have them.
        assert anki_card("nccl-over-efa").queue >= 0  # type: ignore[attr-defined]
        data = anki_export(col, tmp_path / "back.apkg", legacy=False)
    finally:
        col.close()

    with transaction(loaded_engine) as s:
        report = import_package(
            s, data, owner_user_id=user_id, with_scheduling=True, now=now, slug="back"
        )
        back = s.get(Deck, report.deck_id)
        assert back is not None
        marks = {
            key: mk.card_marks(s, user_id, card)
            for key, card in s.execute(select(Card.key, Card.id).where(Card.deck_id == back.id))
        }
        leech_tags = s.scalar(select(Card.tags).where(Card.deck_id == back.id, Card.key == LEECH))
    tomorrow = study_date(now, "UTC", 4) + timedelta(days=1)
    assert marks[SUSPENDED] == mk.Marks(suspended=True)
    assert marks[BURIED] == mk.Marks(buried_until=tomorrow)
    assert marks[FLAGGED] == mk.Marks(flag=4)
    assert marks[LEECH] == mk.Marks(leech=True)
    # `leech` is the person's, not a tag of the card (which another person may study).
    assert leech_tags is not None and "leech" not in leech_tags
    assert sum(1 for m in marks.values() if m != mk.Marks()) == 4
    # Without progress, nobody's marks go out.
    plain = export(loaded_engine, now)
    col, _log = anki_import(tmp_path / "plain.anki2", plain, with_scheduling=False)
    try:
        assert all(col.get_card(c).queue == 0 for c in col.find_cards(""))
        assert all(col.get_card(c).user_flag() == 0 for c in col.find_cards(""))
        assert not col.find_cards("tag:leech")
    finally:
        col.close()


def test_the_deletions_of_a_cloze_note_are_siblings_and_bury_each_other(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    data = cloze_package(tmp_path, ["{{c1::Ribosomes}} make {{c2::proteins}} from {{c3::RNA}}."], 1)
    now = wall_now()
    with transaction(loaded_engine) as s:
        user_id = make_user(s, "siblings@example.com")
        report = import_package(s, data, owner_user_id=user_id, now=now)
        deck = s.get(Deck, report.deck_id)
        assert deck is not None
        subscribe(s, user_id, deck, now=now)
        rows = s.execute(select(Card.id, Card.note_key).where(Card.deck_id == deck.id))
        notes = {row.id: row.note_key for row in rows}
        effects.set_options(s, user_id, bury_new=True)
    cloze_cards = [card for card, note in notes.items() if note is not None]
    assert len(cloze_cards) == 3 and len(set(notes.values())) == 2  # one note, and None
    with transaction(loaded_engine) as s:
        answer(s, user_id, cloze_cards[0], "good", now=now)
        buried = [mk.card_marks(s, user_id, c).buried(study_date(now, "UTC", 4)) for c in notes]
    assert sum(buried) == 2  # the two other deletions; never the Basic note's card

    # Exported and imported again, the siblings are siblings still.
    with transaction(loaded_engine) as s:
        package = export_deck(s, report.deck_id, locales=None, now=now).data
        again = import_package(s, package, owner_user_id=user_id, now=now, slug="again")
        rows = s.execute(select(Card.key, Card.note_key).where(Card.deck_id == again.deck_id))
        keys = {row.key: row.note_key for row in rows}
    assert sorted(n for n in keys.values() if n) == sorted(n for n in notes.values() if n)
