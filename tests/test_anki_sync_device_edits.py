"""What a device changes besides answering, with Anki's own client against a real
`flashcards serve`, on SQLite and PostgreSQL: cards suspended, buried and flagged, notes
added, edited and deleted, and the device's view of cards moved or decks left on the web."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from anki.sync_pb2 import SyncStatusResponse
from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session

from flashcards.anki.sanitize import html_to_text
from flashcards.anki_sync.ids import DECK_ID_STRIDE
from flashcards.decks import card_editing, own_decks
from flashcards.srs import card_actions, marks, subscriptions
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Card,
    CardMark,
    CardText,
    Deck,
    DeckText,
    ReviewState,
    User,
)
from flashcards.storage.schema import utcnow
from tests.factories import card_ids, make_deck, subscribe
from tests.test_anki_sync_client import ID_BASE, Person, downloaded, person, server
from tests.test_servers import Server

__all__ = ["person", "server"]  # the fixtures, shared with the sync client's tests
pytestmark = pytest.mark.slow


def device_zone() -> str:
    """This machine's time zone, where the `anki` client's day begins: a whole-hour offset as
    the IANA zone of that fixed offset (Etc/GMT's signs are the reverse of ISO's)."""
    hours = time.timezone // 3600  # seconds west of UTC
    return "UTC" if hours == 0 else f"Etc/GMT{'+' if hours > 0 else '-'}{abs(hours)}"


def test_suspending_burying_and_flagging_in_anki_reach_the_service(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        first, second, third, fourth = card_ids(s, person.deck_ids[0])[7:11]
        # The person's day is the device's here: where they differ (a person in Los Angeles,
        # a device on UTC), from the device's rollover to theirs Anki unburies every card as
        # a new day, as it would for someone travelling, and a bury could not be told apart.
        s.execute(update(User).where(User.id == person.user_id).values(timezone=device_zone()))
    col, auth = downloaded(tmp_path, server)
    try:
        on_device = [ID_BASE + card * 64 for card in (first, second, third, fourth)]
        col.sched.suspend_cards([on_device[0]])
        col.sched.bury_cards([on_device[1]])
        col.set_user_flag_for_cards(4, [on_device[2]])
        col.set_user_flag_for_cards(5, [on_device[3]])
        # Changed here too since the device's last sync: ours is kept, and sent again.
        with transaction(engine) as s:
            card_actions.set_flag(s, person.user_id, [fourth], 2, now=utcnow())
        col.sync_collection(auth, False)
        with Session(engine) as s:
            marks = {
                m.card_id: m
                for m in s.scalars(select(CardMark).where(CardMark.user_id == person.user_id))
            }
        assert marks[first].suspended
        assert marks[second].buried_until is not None and not marks[second].suspended
        assert marks[third].flag == 4
        assert marks[fourth].flag == 2  # ours was newer
        col.sync_collection(auth, False)
        assert col.get_card(on_device[3]).user_flag() == 2  # and reached the device

        # Taken back in Anki: unsuspended, unflagged.
        col.sched.unsuspend_cards([on_device[0]])
        col.set_user_flag_for_cards(0, [on_device[2]])
        col.sync_collection(auth, False)
        with Session(engine) as s:
            assert not s.get(CardMark, (person.user_id, first)).suspended  # type: ignore[union-attr]
            assert s.get(CardMark, (person.user_id, third)).flag == 0  # type: ignore[union-attr]
    finally:
        col.close()


def test_notes_edited_or_deleted_in_anki_change_the_cards_the_person_may_edit(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        mine = make_deck(s, "mine", 3, owner_user_id=person.user_id)
        subscribe(s, person.user_id, mine, "en")
        edited, emptied = card_ids(s, mine.id)[:2]
        shipped = card_ids(s, person.deck_ids[0])[0]  # answered: has progress
        before = s.get(ReviewState, (person.user_id, shipped))
        assert before is not None
    col, auth = downloaded(tmp_path, server)
    try:
        note = col.get_note(ID_BASE + edited * 64)
        note["Front"] = "What does <b>EKS</b> run?"
        note["Back"] = 'Kubernetes<div class="explanation">Managed by AWS.</div>'
        col.update_note(note)
        empty = col.get_note(ID_BASE + emptied * 64)
        original_front = empty["Front"]
        empty["Front"] = ""
        col.update_note(empty)
        theirs = col.get_note(ID_BASE + shipped * 64)
        shipped_front = theirs["Front"]
        theirs["Front"] = "Edited on the phone"
        col.update_note(theirs)
        col.sync_collection(auth, False)

        with Session(engine) as s:
            text = s.get(CardText, (edited, "en"))
            assert text is not None
            assert (text.question, text.answer, text.explanation) == (
                "What does EKS run?",
                "Kubernetes",
                "Managed by AWS.",
            )
            assert s.get(CardText, (emptied, "en")).question == html_to_text(original_front)  # type: ignore[union-attr]
            kept = s.get(CardText, (shipped, "es"))
            assert kept is not None and kept.question == html_to_text(shipped_front)
            after = s.get(ReviewState, (person.user_id, shipped))
            assert after is not None and after.reps == before.reps
        # The refused edit is undone on the device at its next sync; the shipped deck's stays.
        col.sync_collection(auth, False)
        assert col.get_note(ID_BASE + emptied * 64)["Front"] == original_front
        assert col.get_note(ID_BASE + shipped * 64)["Front"] == "Edited on the phone"

        # Deleted in Anki: a card of their own deck is retired here, history kept; a shipped
        # deck's card is not theirs to delete, and comes back.
        col.remove_notes([ID_BASE + edited * 64, ID_BASE + shipped * 64])
        col.sync_collection(auth, False)
        with Session(engine) as s:
            assert s.get(Card, edited).retired_at is not None  # type: ignore[union-attr]
            assert s.get(Card, shipped).retired_at is None  # type: ignore[union-attr]
            assert s.get(ReviewState, (person.user_id, shipped)) is not None
        # Sent back in the same sync: the device's counts agreed with ours at its end.
        assert col.find_notes(f"nid:{ID_BASE + shipped * 64}")
        assert col.get_card(ID_BASE + shipped * 64).reps == before.reps
        assert not col.find_notes(f"nid:{ID_BASE + edited * 64}")
        col.sync_collection(auth, False)
        assert col.find_notes(f"nid:{ID_BASE + shipped * 64}")
    finally:
        col.close()


def test_a_card_moved_between_own_decks_moves_on_the_device_and_back_on_undo(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        source = make_deck(s, "mine-a", 3, owner_user_id=person.user_id)
        target = make_deck(s, "mine-b", 2, owner_user_id=person.user_id)
        subscribe(s, person.user_id, source, "en")
        subscribe(s, person.user_id, target, "en")
        moved = card_ids(s, source.id)[0]
        moved_back = card_ids(s, target.id)[0]
        # As one import writes them: every card of both decks changed at the same time.
        decks_cards = Card.deck_id.in_([source.id, target.id])
        s.execute(update(Card).where(decks_cards).values(updated_at=utcnow()))
    col, auth = downloaded(tmp_path, server)
    try:
        decks = {d.name: d.id for d in col.decks.all_names_and_ids()}
        a, b = decks["mine-a (en)"], decks["mine-b (en)"]
        assert col.get_card(ID_BASE + moved * 64).did == a
        # A swap: each deck keeps its number of cards, so only the cards' times tell.
        with transaction(engine) as s:
            there = card_actions.move(s, person.user_id, [moved], "mine-b", now=utcnow())
            back = card_actions.move(s, person.user_id, [moved_back], "mine-a", now=utcnow())
        col.sync_collection(auth, False)
        assert col.get_card(ID_BASE + moved * 64).did == b
        assert col.get_card(ID_BASE + moved_back * 64).did == a
        with transaction(engine) as s:
            marks.revert(s, person.user_id, action_id=there.action_id)
            marks.revert(s, person.user_id, action_id=back.action_id)
        col.sync_collection(auth, False)
        assert col.get_card(ID_BASE + moved * 64).did == a
        assert col.get_card(ID_BASE + moved_back * 64).did == b
    finally:
        col.close()


def test_leaving_a_studied_deck_keeps_its_answers_on_the_device(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    col, auth = downloaded(tmp_path, server)
    try:
        answers = col.db.scalar("select count() from revlog")
        assert answers == 3
        with transaction(engine) as s:
            subscriptions.unsubscribe(s, person.user_id, s.get(Deck, person.deck_ids[0]))
        col.sync_collection(auth, False)  # Anki keeps the log of the cards it removes
        assert col.card_count() == 6
        assert col.db.scalar("select count() from revlog") == answers
        col.sync_collection(auth, False)
    finally:
        col.close()


def test_a_note_added_in_anki_becomes_a_card_of_the_deck_and_keeps_its_ids(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        mine = make_deck(s, "mine", 2, owner_user_id=person.user_id)
        subscribe(s, person.user_id, mine, "en")
        first = card_ids(s, mine.id)[0]
    col, auth = downloaded(tmp_path, server)
    try:
        ours = col.get_note(ID_BASE + first * 64).note_type()
        assert ours is not None
        note = col.new_note(ours)
        note["Front"] = "Which <b>node group</b> runs the GPUs?"
        note["Back"] = 'The p5 group<div class="explanation">Tainted for training.</div>'
        # The last three our export's own: the deck's mark (and an older export's), the language.
        note.tags = ["gpu", "flashcards::mine", "mine", "lang::en"]
        col.add_note(note, ID_BASE + mine.id * 128 + 1)
        added_card = note.cards()[0]
        added_card.start_timer()
        col.sched.answerCard(added_card, 3)  # studied on the phone before its first sync
        notes_before = col.note_count()
        col.sync_collection(auth, False)  # a normal sync: the counts agreed at its end

        with Session(engine) as s:
            card = s.scalars(
                select(Card).where(Card.deck_id == mine.id, Card.anki_note_id == note.id)
            ).one()
            assert card.anki_card_id == added_card.id and card.tags == ["gpu"]
            text = s.get(CardText, (card.id, "en"))
            assert text is not None and text.anki_guid == note.guid
            assert (text.question, text.answer, text.explanation) == (
                "Which node group runs the GPUs?",
                "The p5 group",
                "Tainted for training.",
            )
            state = s.get(ReviewState, (person.user_id, card.id))
            assert state is not None and state.reps == 1
            added = card.id
        # Our version comes back under the device's ids: the same note, not a second one.
        col.sync_collection(auth, False)
        assert col.note_count() == notes_before
        assert col.get_card(added_card.id).reps == 1
        assert col.sync_status(auth).required == SyncStatusResponse.NO_CHANGES

        # Edited on the web, then on the phone, then deleted there: one card all along.
        with transaction(engine) as s:
            card_editing.set_card(s, s.get(Deck, mine.id), card.key, locale="en",  # type: ignore[arg-type]
                                  question="Which node group runs GPU jobs?", answer=None,
                                  explanation=None, now=utcnow(), create=False)  # fmt: skip
        col.sync_collection(auth, False)
        assert col.get_note(note.id)["Front"] == "Which node group runs GPU jobs?"
        edited = col.get_note(note.id)
        edited["Back"] = "The p5 node group"
        col.update_note(edited)
        col.sync_collection(auth, False)
        with Session(engine) as s:
            assert s.get(CardText, (added, "en")).answer == "The p5 node group"  # type: ignore[union-attr]
        second, _ = downloaded(tmp_path, server, "tablet")
        try:
            assert second.get_note(note.id)["Back"] == "The p5 node group"
        finally:
            second.close()
        # Deleted right after an edit synced: the edit was the device's, not one made on
        # both sides, so the deletion is taken.
        col.remove_notes([note.id])
        col.sync_collection(auth, False)
        with Session(engine) as s:
            assert s.get(Card, added).retired_at is not None  # type: ignore[union-attr]
        col.sync_collection(auth, False)
        assert col.sync_status(auth).required == SyncStatusResponse.NO_CHANGES
    finally:
        col.close()


def test_what_a_device_makes_that_we_do_not_model_reaches_its_other_devices(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    col, auth = downloaded(tmp_path, server)
    try:
        # A note type, a deck and an options group of the phone's own, and notes we do not
        # take as cards: one of that type in that deck, one of ours in the shipped deck.
        vocab = col.models.new("Vocab")
        for name in ("Word", "Meaning", "Example"):
            col.models.add_field(vocab, col.models.new_field(name))
        template = col.models.new_template("Recall")
        template["qfmt"], template["afmt"] = "{{Word}}", "{{FrontSide}}<hr>{{Meaning}}"
        col.models.add_template(vocab, template)
        vocab["css"] = ".card { color: teal; }"
        col.models.add(vocab)
        vocab = col.models.by_name("Vocab")
        assert vocab is not None
        words = col.decks.id("Words::Week 1")
        assert words is not None
        group = col.decks.add_config_returning_id("Slow")
        deck = col.decks.get(words)
        assert deck is not None
        deck["conf"] = group
        col.decks.save(deck)
        word = col.new_note(vocab)
        word["Word"], word["Meaning"], word["Example"] = "taint", "a node mark", "NoSchedule"
        word.tags = ["k8s"]
        col.add_note(word, words)
        shipped = col.get_note(ID_BASE + card_ids_of_shipped(engine, person)[0] * 64)
        aside = col.new_note(shipped.note_type())  # type: ignore[arg-type]
        aside["Front"], aside["Back"] = "My own question", "My own answer"
        col.add_note(aside, shipped.cards()[0].did)
        studied = word.cards()[0]
        studied.start_timer()
        col.sched.answerCard(studied, 3)
        col.sync_collection(auth, False)  # a normal sync: the counts agreed

        with Session(engine) as s:
            # The word, in a deck of the phone's own, is studied here too, as it was there;
            # the note in the shipped deck is not (nobody edits that deck's cards).
            assert s.scalar(select(Card.id).where(Card.anki_note_id == aside.id)) is None
            card = s.scalars(select(Card).where(Card.anki_card_id == studied.id)).one()
            assert (card.anki_note_id, card.anki_ord) == (word.id, 0)
            text = s.get(CardText, (card.id, "en"))
            assert text is not None and (text.question, text.answer) == ("taint", "a node mark")
            assert s.get(ReviewState, (person.user_id, card.id)) is not None
        col.sync_collection(auth, False)  # ours again: the same objects, nothing doubled
        assert col.sync_status(auth).required == SyncStatusResponse.NO_CHANGES

        tablet, tablet_auth = downloaded(tmp_path, server, "tablet")
        try:
            got = tablet.get_note(word.id)
            assert (got["Word"], got["Meaning"], got["Example"]) == ("taint", "a node mark",
                                                                   "NoSchedule")  # fmt: skip
            assert got.tags == ["k8s"] and got.note_type()["css"] == ".card { color: teal; }"  # type: ignore[index]
            assert tablet.decks.name(got.cards()[0].did) == "Words::Week 1"
            assert tablet.decks.config_dict_for_deck_id(words)["name"] == "Slow"
            assert tablet.get_card(studied.id).reps == 1
            assert tablet.db.scalar("select count() from revlog where cid = ?", studied.id) == 1
            assert tablet.get_note(aside.id)["Front"] == "My own question"

            # Edited on the phone, deleted on the tablet: each reaches the other.
            word["Meaning"] = "a mark that repels pods"
            col.update_note(word)
            col.sync_collection(auth, False)
            tablet.sync_collection(tablet_auth, False)
            assert tablet.get_note(word.id)["Meaning"] == "a mark that repels pods"
            with Session(engine) as s:
                text = s.get(CardText, (card.id, "en"))
                assert text is not None and text.answer == "a mark that repels pods"
            tablet.remove_notes([aside.id])
            tablet.sync_collection(tablet_auth, False)
            col.sync_collection(auth, False)
            assert not col.find_notes(f"nid:{aside.id}")
            for device, its_auth in ((col, auth), (tablet, tablet_auth)):
                device.sync_collection(its_auth, False)
                assert device.sync_status(its_auth).required == SyncStatusResponse.NO_CHANGES
                assert device.note_count() == 1 + 15 + 6  # the shipped deck's, our own deck's
        finally:
            tablet.close()
    finally:
        col.close()


def card_ids_of_shipped(engine: Engine, person: Person) -> list[int]:
    with Session(engine) as s:
        return card_ids(s, person.deck_ids[0])


def test_tags_given_in_anki_become_the_persons_own(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    shipped = card_ids_of_shipped(engine, person)[0]
    col, auth = downloaded(tmp_path, server)
    try:
        note = col.get_note(ID_BASE + shipped * 64)
        assert "flashcards::eks-model-training" in note.tags  # our export's, not the person's
        note.tags = [*note.tags, "exam", "leech"]
        col.update_note(note)
        col.sync_collection(auth, False)
        with Session(engine) as s:
            mark = s.get(CardMark, (person.user_id, shipped))
            assert mark is not None and list(mark.tags) == ["exam"]  # leech is detection's
        note = col.get_note(note.id)
        note.tags = [t for t in note.tags if t != "exam"]
        col.update_note(note)
        col.sync_collection(auth, False)
        with Session(engine) as s:
            mark = s.get(CardMark, (person.user_id, shipped))
            assert mark is not None and list(mark.tags) == []
        # And one given on the web reaches the device.
        with transaction(engine) as s:
            card_actions.add_tag(s, person.user_id, [shipped], "review-me", now=utcnow())
        col.sync_collection(auth, False)
        assert "review-me" in col.get_note(note.id).tags
    finally:
        col.close()


def test_a_deck_renamed_in_anki_is_renamed_here_if_it_is_the_persons_own(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        mine = make_deck(s, "mine", 2, owner_user_id=person.user_id)
        subscribe(s, person.user_id, mine, "en")
        mine_id, shipped_id = mine.id, person.deck_ids[0]
        shipped_title = s.get(DeckText, (shipped_id, "es")).title  # type: ignore[union-attr]
    col, auth = downloaded(tmp_path, server)
    try:
        mine_did = ID_BASE + mine_id * DECK_ID_STRIDE + 1
        col.decks.rename(mine_did, "Phone::Mine")  # filed under a deck of the device's own
        col.decks.rename(ID_BASE + shipped_id * DECK_ID_STRIDE + 1, "Work::EKS")
        col.sync_collection(auth, False)
        with Session(engine) as s:
            assert s.get(DeckText, (mine_id, "en")).title == "Phone::Mine"  # type: ignore[union-attr]
            assert s.get(DeckText, (shipped_id, "es")).title == shipped_title  # type: ignore[union-attr]
        assert col.sync_status(auth).required == SyncStatusResponse.NO_CHANGES
        # Renamed again right after: the first rename was the device's, so this one is taken.
        col.decks.rename(mine_did, "Phone::Mine, week 2")
        col.sync_collection(auth, False)
        with Session(engine) as s:
            assert s.get(DeckText, (mine_id, "en")).title == "Phone::Mine, week 2"  # type: ignore[union-attr]
        # Renamed on the web: the device gets it; the shipped deck keeps the device's name.
        with transaction(engine) as s:
            own_decks.rename_own_deck(s, person.user_id, "mine", title="Mine, renamed")
        col.sync_collection(auth, False)
        assert col.decks.name(mine_did) == "Mine, renamed"
        assert col.decks.name(ID_BASE + shipped_id * DECK_ID_STRIDE + 1) == "Work::EKS"
    finally:
        col.close()
