"""Decks a device made, studied on the web too, with Anki's own client against a real
`flashcards serve`, on SQLite and PostgreSQL: someone moving from AnkiWeb uploads a collection
of their own note types and decks; its cards become cards of decks of theirs here, with their
progress; answers on either side reach the other; an edit in Anki changes the card's text
here; an edit here is refused (the note is Anki's); a note deleted in Anki retires its cards;
a second device downloads the same notes and note types."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from anki.collection import (
    Collection,
    ImportAnkiPackageOptions,
    ImportAnkiPackageRequest,
)
from anki.models import NotetypeDict
from anki.sync_pb2 import SyncAuth, SyncCollectionResponse, SyncStatusResponse
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from flashcards.anki_sync import adopted_changes, note_edits, snapshot
from flashcards.anki_sync.adopted_export import export_any_deck
from flashcards.decks import own_decks
from flashcards.errors import CardOfAnkiNote
from flashcards.srs.subscriptions import unsubscribe
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    AnkiKeptObject,
    Card,
    CardMark,
    CardText,
    Deck,
    DeckText,
    ReviewLog,
    ReviewState,
    Subscription,
)
from flashcards.storage.schema import utcnow
from tests.factories import answer
from tests.test_anki_sync_client import downloaded, new_device, server, sign_in
from tests.test_anki_sync_upload import newcomer
from tests.test_servers import Server

__all__ = ["newcomer", "server"]  # the fixtures, shared with the upload's tests
pytestmark = pytest.mark.slow
Required = SyncCollectionResponse.ChangesRequired


def _note_type(col: Collection, name: str, fields: tuple[str, str], asked: str) -> NotetypeDict:
    """A note type of the device's own: two fields, one card asking `asked`, answered by
    the other."""
    models = col.models
    made = models.new(name)
    for field in fields:
        models.add_field(made, models.new_field(field))
    template = models.new_template("Card 1")
    (other,) = set(fields) - {asked}
    template["qfmt"] = "{{" + asked + "}}"
    template["afmt"] = "{{FrontSide}}<hr id=answer>{{" + other + "}}"
    models.add_template(made, template)
    models.add_dict(made)
    found = models.by_name(name)
    assert found is not None
    return found


def _fill(col: Collection) -> dict[str, int]:
    """Notes of Anki's own note types in decks of the device's own; one answered, one
    suspended. The ids of what the test follows."""
    basic, reversed_, cloze = (col.models.by_name(n) for n in
                               ("Basic", "Basic (and reversed card)", "Cloze"))  # fmt: skip
    assert basic is not None and reversed_ is not None and cloze is not None
    week = col.decks.id("Spanish::Week 1")
    assert week is not None
    hola = col.new_note(basic)
    hola["Front"], hola["Back"] = "hola", "hello"
    col.add_note(hola, week)
    agua = col.new_note(reversed_)
    agua["Front"], agua["Back"] = "agua", "water"
    col.add_note(agua, week)
    capital = col.new_note(cloze)
    capital["Text"] = "{{c1::Madrid}} is the capital of {{c2::Spain}}"
    col.add_note(capital, week)
    col.sched.suspend_cards([agua.cards()[1].id])
    col.sched.set_due_date([agua.cards()[0].id], "4")  # a review card, due in 4 days
    col.decks.select(week)
    card = col.sched.getCard()
    assert card is not None and card.nid == hola.id
    card.start_timer()
    col.sched.answerCard(card, 3)
    return {"week": week, "hola": hola.id, "agua": agua.id, "capital": capital.id,
            "hola_card": hola.cards()[0].id, "water_card": agua.cards()[1].id,
            "agua_card": agua.cards()[0].id}  # fmt: skip


def _upload(device: Collection, auth: SyncAuth) -> None:
    """The device's whole collection uploaded, as on "upload" in Anki's choice."""
    device.close_for_full_sync()
    device.full_upload_or_download(auth=auth, server_usn=None, upload=True)
    device.reopen(after_full_sync=True)


def _card(s: Session, anki_card_id: int) -> Card:
    return s.scalars(select(Card).where(Card.anki_card_id == anki_card_id)).one()


def test_a_devices_own_decks_are_studied_on_the_web_and_on_every_device(
    engine: Engine, newcomer: int, server: Server, tmp_path: Path
) -> None:
    phone = new_device(tmp_path)
    made = _fill(phone)
    auth = sign_in(phone, server)
    first = phone.sync_collection(auth, False)
    assert first.required == Required.FULL_UPLOAD
    phone.close_for_full_sync()
    phone.full_upload_or_download(auth=auth, server_usn=first.server_media_usn, upload=True)
    phone.reopen(after_full_sync=True)
    try:
        phone.sync_collection(auth, False)
        assert phone.sync_status(auth).required == SyncStatusResponse.NO_CHANGES
        # The phone counts days from its own creation, and its cards stay due when they were.
        agua = phone.get_card(made["agua_card"])
        assert (agua.type, agua.due - phone.sched.today) == (2, 4)
        with Session(engine) as s:
            agua_state = s.get(ReviewState, (newcomer, _card(s, made["agua_card"]).id))
            assert agua_state is not None
            assert (agua_state.due.date() - utcnow().date()).days in (3, 4)
            deck = s.scalars(select(Deck).where(Deck.anki_deck_id == made["week"])).one()
            assert deck.owner_user_id == newcomer
            assert s.get(DeckText, (deck.id, "en")).title == "Spanish::Week 1"  # type: ignore[union-attr]
            assert s.get(Subscription, (newcomer, deck.id)) is not None
            texts = {
                (t.question, t.answer)
                for t in s.scalars(select(CardText).join(Card).where(Card.deck_id == deck.id))
            }
            # Basic, both sides of the reversed note, each deletion of the Cloze note.
            assert {("hola", "hello"), ("agua", "water"), ("water", "agua")} <= texts
            assert ("[...] is the capital of Spain", "Madrid is the capital of Spain") in texts
            assert len(texts) == 5
            hola = _card(s, made["hola_card"])
            state = s.get(ReviewState, (newcomer, hola.id))
            assert state is not None and state.reps == 1
            assert s.scalar(select(func.count()).where(ReviewLog.card_id == hola.id)) == 1
            water = _card(s, made["water_card"])
            mark = s.get(CardMark, (newcomer, water.id))
            assert mark is not None and mark.suspended
            # Only the notes, note types and decks stay as Anki sent them: the cards are ours.
            kinds = set(s.scalars(select(AnkiKeptObject.kind).distinct()))
            assert snapshot.CARD not in kinds and snapshot.NOTE in kinds
            hola_id, water_id, deck_slug = hola.id, water.id, deck.slug

        # Answered on the web: the phone gets the answer and the new schedule.
        with transaction(engine) as s:
            answer(s, newcomer, hola_id, "good", now=utcnow())
        phone.sync_collection(auth, False)
        assert phone.get_card(made["hola_card"]).reps == 2
        assert phone.db.scalar("select count() from revlog where cid = ?", made["hola_card"]) == 2
        # Answered on the phone: an answer here.
        phone.sched.unsuspend_cards([made["water_card"]])
        phone.decks.select(made["week"])
        card = phone.get_card(made["water_card"])
        card.start_timer()
        phone.sched.answerCard(card, 1)
        phone.sync_collection(auth, False)
        with Session(engine) as s:
            assert s.scalar(select(func.count()).where(ReviewLog.card_id == water_id)) == 1
            mark = s.get(CardMark, (newcomer, water_id))
            assert mark is None or not mark.suspended

        # Edited in Anki: the text here follows. Edited here: refused, nothing changes.
        note = phone.get_note(made["hola"])
        note["Back"] = "hello, edited on the phone"
        phone.update_note(note)
        phone.sync_collection(auth, False)
        with Session(engine) as s:
            text = s.get(CardText, (hola_id, "en"))
            assert text is not None and text.answer == "hello, edited on the phone"
            key = s.get(Card, hola_id).key  # type: ignore[union-attr]
        with Session(engine) as s, pytest.raises(CardOfAnkiNote):
            own_decks.edit_card(s, newcomer, deck_slug, key, locale=None, question="x",
                                answer=None, explanation=None, tags=None, now=utcnow())  # fmt: skip

        # Deleted in Anki: its cards are retired here, history kept.
        phone.remove_notes([made["capital"]])
        phone.sync_collection(auth, False)
        with Session(engine) as s:
            live = s.scalar(
                select(func.count()).where(Card.deck_id == deck.id, Card.retired_at.is_(None))
            )
            assert live == 3

        # A second device gets the same notes and note types, and the progress.
        tablet, tablet_auth = downloaded(tmp_path, server, "tablet")
        try:
            got = tablet.get_note(made["agua"])
            assert got.note_type()["name"] == "Basic (and reversed card)"  # type: ignore[index]
            assert (got["Front"], got["Back"]) == ("agua", "water")
            assert tablet.get_note(made["hola"])["Back"] == "hello, edited on the phone"
            assert tablet.decks.name(tablet.get_card(made["hola_card"]).did) == "Spanish::Week 1"
            assert tablet.get_card(made["hola_card"]).reps == 2
            assert tablet.get_card(made["agua_card"]).due - tablet.sched.today == 4
            assert not tablet.find_notes(f"nid:{made['capital']}")
            assert tablet.card_count() == phone.card_count()
            for device, its_auth in ((phone, auth), (tablet, tablet_auth)):
                device.sync_collection(its_auth, False)
                assert device.sync_status(its_auth).required == SyncStatusResponse.NO_CHANGES
        finally:
            tablet.close()
    finally:
        phone.close()


def test_a_deck_made_on_a_device_after_the_upload_is_studied_here_too(
    engine: Engine, newcomer: int, server: Server, tmp_path: Path
) -> None:
    phone, auth = downloaded(tmp_path, server)
    try:
        # A downloaded collection has only the service's note type.
        basic = _note_type(phone, "Basic", ("Front", "Back"), "Front")
        deck_id = phone.decks.add_normal_deck_with_name("Kubernetes").id
        note = phone.new_note(basic)
        note["Front"], note["Back"] = "What is a taint?", "A node mark that repels pods"
        phone.add_note(note, deck_id)
        phone.sync_collection(auth, False)
        with Session(engine) as s:
            deck = s.scalars(select(Deck).where(Deck.anki_deck_id == deck_id)).one()
            card = _card(s, note.cards()[0].id)
            assert card.deck_id == deck.id
            text = s.get(CardText, (card.id, "en"))
            assert text is not None and text.question == "What is a taint?"
        # Renamed on the phone: renamed here.
        found = phone.decks.get(deck_id)
        assert found is not None
        found["name"] = "Work::Kubernetes"
        phone.decks.save(found)
        phone.sync_collection(auth, False)
        with Session(engine) as s:
            assert s.get(DeckText, (deck.id, "en")).title == "Work::Kubernetes"  # type: ignore[union-attr]
        assert phone.sync_status(auth).required == SyncStatusResponse.NO_CHANGES
    finally:
        phone.close()


def test_a_second_upload_updates_the_decks_studied_here_without_copies(
    engine: Engine, newcomer: int, server: Server, tmp_path: Path
) -> None:
    phone = new_device(tmp_path)
    made = _fill(phone)
    auth = sign_in(phone, server)
    _upload(phone, auth)
    try:
        phone.remove_notes([made["capital"]])
        basic = phone.models.by_name("Basic")
        assert basic is not None
        note = phone.new_note(basic)
        note["Front"], note["Back"] = "gato", "cat"
        phone.add_note(note, made["week"])
        _upload(phone, auth)
        with Session(engine) as s:
            assert s.scalar(select(func.count()).select_from(Deck)) == 1  # the same deck
            live = s.scalars(
                select(CardText.question).join(Card).where(Card.retired_at.is_(None))
            ).all()
            assert sorted(live) == ["agua", "gato", "hola", "water"]
            hola = _card(s, made["hola_card"])
            state = s.get(ReviewState, (newcomer, hola.id))
            assert state is not None and state.reps == 1  # its answer, once
            assert s.scalar(select(func.count()).where(ReviewLog.card_id == hola.id)) == 1
        phone.sync_collection(auth, False)
        assert phone.sync_status(auth).required == SyncStatusResponse.NO_CHANGES
        assert phone.get_card(made["hola_card"]).reps == 1
    finally:
        phone.close()


@pytest.fixture
def uploaded(
    engine: Engine, newcomer: int, server: Server, tmp_path: Path
) -> Iterator[tuple[Collection, SyncAuth, dict[str, int]]]:
    """A phone that uploaded `_fill`'s collection, then synced normally."""
    phone = new_device(tmp_path)
    made = _fill(phone)
    auth = sign_in(phone, server)
    _upload(phone, auth)
    try:
        phone.sync_collection(auth, False)
        yield phone, auth, made
    finally:
        phone.close()


def _in_step(device: Collection, auth: SyncAuth) -> None:
    """A normal sync after which the device and the service agree (no full sync asked)."""
    assert device.sync_collection(auth, False).required in (Required.NO_CHANGES,
                                                            Required.NORMAL_SYNC)  # fmt: skip
    assert device.sync_status(auth).required == SyncStatusResponse.NO_CHANGES


def _deck(s: Session, anki_deck_id: int) -> Deck:
    return s.scalars(select(Deck).where(Deck.anki_deck_id == anki_deck_id)).one()


def test_a_deck_left_on_the_web_and_used_on_a_device_is_studied_again(
    engine: Engine, newcomer: int, uploaded: tuple[Collection, SyncAuth, dict[str, int]]
) -> None:
    phone, auth, made = uploaded
    with transaction(engine) as s:
        unsubscribe(s, newcomer, _deck(s, made["week"]))
    _in_step(phone, auth)
    assert not phone.find_cards(f"did:{made['week']}")  # gone from the phone with it
    basic = phone.models.by_name("Basic")
    assert basic is not None
    note = phone.new_note(basic)
    note["Front"], note["Back"] = "gato", "cat"
    phone.add_note(note, made["week"])
    _in_step(phone, auth)
    with Session(engine) as s:
        deck = _deck(s, made["week"])
        assert s.get(Subscription, (newcomer, deck.id)) is not None
        assert s.scalar(select(func.count()).where(Card.anki_card_id == note.cards()[0].id)) == 1
    _in_step(phone, auth)
    assert phone.find_cards("hola")  # the deck's other cards are back too


def test_deck_names_and_deletions_go_both_ways(
    engine: Engine, newcomer: int, uploaded: tuple[Collection, SyncAuth, dict[str, int]]
) -> None:
    phone, auth, made = uploaded
    with transaction(engine) as s:
        own_decks.rename_own_deck(s, newcomer, _deck(s, made["week"]).slug, title="Semana 1")
    # The phone studies (its deck goes out for its counts) and syncs: the web's name stays.
    phone.decks.select(made["week"])
    card = phone.sched.getCard()
    assert card is not None
    phone.sched.answerCard(card, 3)
    _in_step(phone, auth)
    assert phone.decks.name(made["week"]) == "Semana 1"
    with Session(engine) as s:
        assert s.get(DeckText, (_deck(s, made["week"]).id, "en")).title == "Semana 1"  # type: ignore[union-attr]

    # Retired here while the phone deletes the same note: both agree, no full sync.
    with transaction(engine) as s:
        hola = _card(s, made["hola_card"])
        own_decks.retire_card(s, newcomer, _deck(s, made["week"]).slug, hola.key, now=utcnow())
    phone.remove_notes([made["hola"]])
    _in_step(phone, auth)

    # The deck deleted on the phone: its cards retired here, the deck no longer studied.
    phone.decks.remove([made["week"]])
    _in_step(phone, auth)
    with Session(engine) as s:
        deck = s.scalars(select(Deck).where(Deck.owner_user_id == newcomer)).one()
        assert deck.anki_deck_id is None
        assert s.get(Subscription, (newcomer, deck.id)) is None
        live = s.scalar(
            select(func.count()).where(Card.deck_id == deck.id, Card.retired_at.is_(None))
        )
        assert live == 0
        assert s.scalar(select(func.count()).select_from(ReviewLog)) >= 2  # history kept
    _in_step(phone, auth)


def test_a_deck_deleted_on_the_web_is_deleted_on_every_device(
    engine: Engine, newcomer: int, uploaded: tuple[Collection, SyncAuth, dict[str, int]]
) -> None:
    phone, auth, made = uploaded
    korean = phone.decks.id("Korean")
    assert phone.decks.get(made["week"], default=False) is not None and korean is not None
    verbs = phone.decks.id("Korean::Verbs")  # a subdeck, studied here too
    basic = phone.models.by_name("Basic")
    assert basic is not None and verbs is not None
    for text, deck in (("한국", korean), ("가다", verbs)):
        note = phone.new_note(basic)
        note["Front"], note["Back"] = text, "word"
        phone.add_note(note, deck)
    _in_step(phone, auth)
    with transaction(engine) as s:
        adopted_changes.delete_own_deck(s, newcomer, _deck(s, made["week"]).slug)
        adopted_changes.delete_own_deck(s, newcomer, _deck(s, korean).slug)
    _in_step(phone, auth)
    # Its notes and cards, and the deck itself, not left behind empty.
    assert phone.decks.get(made["week"], default=False) is None
    assert not phone.find_notes("hola") and not phone.find_notes("한국")
    assert phone.decks.by_name("Spanish") is not None  # its parent was not deleted
    # A deck with a subdeck stays, empty, so that the subdeck shows under it.
    assert phone.decks.by_name("Korean") is not None
    assert [n.name for n in phone.decks.all_names_and_ids()] == [
        "Default",
        "Korean",
        "Korean::Verbs",
        "Spanish",
    ]
    assert phone.find_notes("가다")
    with Session(engine) as s:
        assert not s.scalars(select(Deck).where(Deck.anki_deck_id == made["week"])).all()
        assert s.get(AnkiKeptObject, (newcomer, snapshot.DECK, made["week"])) is None
    _in_step(phone, auth)


def test_what_a_device_made_since_the_upload_and_deleted_here_goes_from_the_device(
    engine: Engine, newcomer: int, uploaded: tuple[Collection, SyncAuth, dict[str, int]]
) -> None:
    """A deck, and a note in a deck studied here, made on the phone after its upload and
    deleted here before its next sync: they go from it too, with no full sync asked."""
    phone, auth, made = uploaded
    basic = phone.models.by_name("Basic")
    assert basic is not None
    old = phone.decks.id("Old stuff")
    assert old is not None
    for text, deck in (("viejo", old), ("nuevo", made["week"])):
        note = phone.new_note(basic)
        note["Front"], note["Back"] = text, "word"
        phone.add_note(note, deck)
    _in_step(phone, auth)
    with transaction(engine) as s:
        adopted_changes.delete_own_deck(s, newcomer, _deck(s, old).slug)
        nuevo = _card(s, phone.get_note(phone.find_notes("nuevo")[0]).card_ids()[0])
        own_decks.retire_card(s, newcomer, _deck(s, made["week"]).slug, nuevo.key, now=utcnow())
    _in_step(phone, auth)
    assert phone.decks.get(old, default=False) is None
    assert not phone.find_notes("viejo") and not phone.find_notes("nuevo")


def test_a_deck_from_a_device_exports_as_its_notes_were_made(
    engine: Engine,
    newcomer: int,
    uploaded: tuple[Collection, SyncAuth, dict[str, int]],
    tmp_path: Path,
) -> None:
    """Its package holds the device's notes (note types, fields, ids): the device's own
    collection takes it for the same notes, a fresh one gets them as they were, with the
    progress."""
    phone, _auth, made = uploaded
    with transaction(engine) as s:
        deck_id = _deck(s, made["week"]).id
        package = export_any_deck(s, deck_id, locales=None, user_id=newcomer,
                                  with_scheduling=True, now=utcnow())  # fmt: skip
    path = tmp_path / "week.apkg"
    path.write_bytes(package.data)
    options = ImportAnkiPackageOptions(with_scheduling=True, with_deck_configs=False)
    request = ImportAnkiPackageRequest(package_path=str(path), options=options)
    log = phone.import_anki_package(request).log
    assert not log.conflicting and not log.new and len(log.duplicate) + len(log.updated) == 3
    fresh = Collection(str(tmp_path / "fresh.anki2"))
    try:
        log = fresh.import_anki_package(request).log
        assert len(log.new) == 3
        # Its own note types (Anki names them "Basic+" beside its stock ones, as for any
        # package from another collection).
        hola = fresh.get_note(made["hola"])
        assert hola.note_type()["name"].startswith("Basic")  # type: ignore[index]
        assert (hola["Front"], hola["Back"]) == ("hola", "hello")
        cloze = fresh.get_note(made["capital"])
        assert cloze["Text"] == "{{c1::Madrid}} is the capital of {{c2::Spain}}"
        assert fresh.get_card(made["hola_card"]).reps == 1
        assert fresh.decks.name(fresh.get_card(made["hola_card"]).did) == "Spanish::Week 1"
    finally:
        fresh.close()


def test_each_card_reads_as_its_template_shows_it(
    engine: Engine, newcomer: int, server: Server, tmp_path: Path
) -> None:
    """A note type whose template asks its second field, and a reversed card alone in its
    deck: the web asks what Anki asks."""
    phone = new_device(tmp_path)
    found = _note_type(phone, "Vocab", ("English", "Spanish"), "Spanish")
    reversed_ = phone.models.by_name("Basic (and reversed card)")
    assert reversed_ is not None
    words = phone.decks.id("Words")
    other = phone.decks.id("Other")
    assert words is not None and other is not None
    note = phone.new_note(found)
    note["English"], note["Spanish"] = "cat", "gato"
    phone.add_note(note, words)
    pair = phone.new_note(reversed_)
    pair["Front"], pair["Back"] = "perro", "dog"
    phone.add_note(pair, words)
    backwards = pair.cards()[1]
    backwards.did = other
    phone.update_card(backwards)
    auth = sign_in(phone, server)
    _upload(phone, auth)
    try:
        with Session(engine) as s:
            asked = {
                s.get(CardText, (_card(s, cid).id, "en")).question  # type: ignore[union-attr]
                for cid in (note.cards()[0].id, pair.cards()[0].id, backwards.id)
            }
            assert asked == {"gato", "perro", "dog"}
            assert _card(s, backwards.id).deck_id == _deck(s, other).id
        _in_step(phone, auth)
    finally:
        phone.close()


def test_a_card_edited_on_the_web_changes_its_note_on_every_device(
    engine: Engine, newcomer: int, uploaded: tuple[Collection, SyncAuth, dict[str, int]]
) -> None:
    phone, auth, made = uploaded
    with Session(engine) as s:
        slug = _deck(s, made["week"]).slug
        hola, water = _card(s, made["hola_card"]), _card(s, made["water_card"])
        agua = _card(s, made["agua_card"])
        cloze = s.scalars(
            select(Card).where(Card.anki_note_id == made["capital"]).order_by(Card.anki_ord)
        ).first()
        assert cloze is not None
        keys = {"hola": hola.key, "water": water.key, "cloze": cloze.key}
        agua_id = agua.id
    with transaction(engine) as s:
        note_edits.edit_card(
            s, newcomer, slug, keys["hola"], locale=None, question="hola (saludo)",
            answer="hello\r\nhi", explanation=None, tags=["greeting"], now=utcnow(),
        )  # fmt: skip
        # The reversed card asks the note's Back: the forward card answers with it at once.
        note_edits.edit_card(
            s, newcomer, slug, keys["water"], locale=None, question="water (to drink)",
            answer=None, explanation=None, tags=None, now=utcnow(),
        )  # fmt: skip
    with Session(engine) as s:
        text = s.get(CardText, (agua_id, "en"))
        assert text is not None and text.answer == "water (to drink)"
    with transaction(engine) as s, pytest.raises(CardOfAnkiNote):
        note_edits.edit_card(
            s, newcomer, slug, keys["cloze"], locale=None, question="x", answer=None,
            explanation=None, tags=None, now=utcnow(),
        )  # fmt: skip
    _in_step(phone, auth)
    note = phone.get_note(made["hola"])
    assert (note["Front"], note["Back"], note.tags) == ("hola (saludo)", "hello<br>hi",
                                                        ["greeting"])  # fmt: skip
    assert phone.get_note(made["agua"])["Back"] == "water (to drink)"
    assert phone.find_notes("capital")  # the Cloze note as it was

    # Edited on both sides since the phone's last sync: the later edit (here) wins.
    note["Back"] = "hello, from the phone"
    phone.update_note(note)
    time.sleep(1.1)  # a note's modification time counts seconds
    with transaction(engine) as s:
        note_edits.edit_card(
            s, newcomer, slug, keys["hola"], locale=None, question=None,
            answer="hello, from the web", explanation=None, tags=None, now=utcnow(),
        )  # fmt: skip
    phone.sync_collection(auth, False)
    _in_step(phone, auth)
    assert phone.get_note(made["hola"])["Back"] == "hello, from the web"
    with Session(engine) as s:
        text = s.get(CardText, (_card(s, made["hola_card"]).id, "en"))
        assert text is not None and text.answer == "hello, from the web"


def test_a_card_added_on_the_web_reaches_devices_as_a_note_of_the_decks_own_type(
    engine: Engine, newcomer: int, uploaded: tuple[Collection, SyncAuth, dict[str, int]]
) -> None:
    phone, auth, made = uploaded
    with transaction(engine) as s:
        slug = _deck(s, made["week"]).slug
        (key,) = note_edits.add_card(s, newcomer, slug, question="gato", answer="cat <3",
                                  explanation="", tags=["animals"], now=utcnow())  # fmt: skip
        # With an explanation, which a Basic note has no field for: a note of ours.
        note_edits.add_card(s, newcomer, slug, question="perro", answer="dog",
                            explanation="man's best friend", tags=None, now=utcnow())  # fmt: skip
    _in_step(phone, auth)
    (nid,) = phone.find_notes("gato")
    note = phone.get_note(nid)
    # As the deck's other Basic notes are: no tags of ours, its text as HTML.
    assert note.note_type()["name"] == "Basic"  # type: ignore[index]
    assert (note["Front"], note["Back"], note.tags) == ("gato", "cat &lt;3", ["animals"])
    (cid,) = note.card_ids()
    assert phone.get_card(cid).did == made["week"]
    assert phone.find_notes("perro")

    # Edited on the phone: the text here follows; edited here: the phone's note follows.
    note["Back"] = "cat (el gato)"
    phone.update_note(note)
    _in_step(phone, auth)
    with Session(engine) as s:
        card = _card(s, cid)
        assert card.key == key
        assert s.get(CardText, (card.id, "en")).answer == "cat (el gato)"  # type: ignore[union-attr]
    with transaction(engine) as s:
        note_edits.edit_card(s, newcomer, slug, key, locale=None, question="el gato",
                             answer=None, explanation=None, tags=None, now=utcnow())  # fmt: skip
    _in_step(phone, auth)
    assert phone.get_note(nid)["Front"] == "el gato"

    # Added here after the phone's last sync, then the phone deletes the one it had and
    # uploads its collection: the card it never had stays (a card of ours now), the one it
    # deleted is retired.
    with transaction(engine) as s:
        (later,) = note_edits.add_card(s, newcomer, slug, question="pájaro", answer="bird",
                                    explanation="", tags=None, now=utcnow())  # fmt: skip
    phone.remove_notes([nid])
    _upload(phone, auth)
    with Session(engine) as s:
        deck_id = _deck(s, made["week"]).id
        kept_here = s.scalars(select(Card).where(Card.deck_id == deck_id, Card.key == later)).one()
        assert kept_here.retired_at is None and kept_here.anki_ord is None
        assert _card(s, cid).retired_at is not None
    _in_step(phone, auth)
    assert phone.find_notes("pájaro") and not phone.find_notes("gato")


def test_a_card_moved_to_another_deck_on_a_device_moves_here(
    engine: Engine, newcomer: int, uploaded: tuple[Collection, SyncAuth, dict[str, int]]
) -> None:
    phone, auth, made = uploaded
    week2 = phone.decks.id("Spanish::Week 2")
    assert week2 is not None
    phone.set_deck([made["hola_card"]], week2)
    _in_step(phone, auth)
    with Session(engine) as s:
        hola = _card(s, made["hola_card"])
        assert hola.deck_id == _deck(s, week2).id
        assert s.get(DeckText, (hola.deck_id, "en")).title == "Spanish::Week 2"  # type: ignore[union-attr]
        state = s.get(ReviewState, (newcomer, hola.id))
        assert state is not None and state.reps == 1 and state.deck_id == hola.deck_id
    assert phone.get_card(made["hola_card"]).did == week2


def test_many_notes_deleted_on_a_device_leave_both_sides_in_step(
    engine: Engine, newcomer: int, server: Server, tmp_path: Path
) -> None:
    """Anki sends deletions 250 at a time, cards before notes: 200 notes' cards and notes
    come in different calls, and the counts still agree (no full sync)."""
    phone = new_device(tmp_path)
    basic = phone.models.by_name("Basic")
    week = phone.decks.id("Week")
    assert basic is not None and week is not None
    nids = []
    for i in range(200):
        note = phone.new_note(basic)
        note["Front"], note["Back"] = f"question {i}", f"answer {i}"
        phone.add_note(note, week)
        nids.append(note.id)
    auth = sign_in(phone, server)
    _upload(phone, auth)
    try:
        _in_step(phone, auth)
        phone.remove_notes(nids)
        _in_step(phone, auth)
        with Session(engine) as s:
            live = select(func.count()).where(Card.anki_ord.is_not(None), Card.retired_at.is_(None))
            assert s.scalar(live) == 0
    finally:
        phone.close()
