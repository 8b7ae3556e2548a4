"""Anki's own sync client (the `anki` package: the Rust backend every current Anki runs)
against a real `flashcards serve`, on SQLite and PostgreSQL: signing in, a new device's full
download, and what Anki's scheduler then shows compared with our queue."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from anki.collection import Collection
from anki.errors import SyncError, SyncErrorKind
from anki.sync_pb2 import SyncAuth, SyncCollectionResponse
from fsrs import State
from sqlalchemy import Engine, delete, func, select, update
from sqlalchemy.orm import Session

from flashcards.anki.timing import anki_day
from flashcards.srs import card_actions, study, subscriptions
from flashcards.srs.queue import next_card
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    AnkiDevice,
    Card,
    CardMark,
    CardText,
    Deck,
    RateLimitCount,
    ReviewLog,
    ReviewState,
    TeamMember,
)
from flashcards.storage.schema import utcnow
from flashcards.teams.assignments import assign
from flashcards.teams.membership import create_team
from flashcards.teams.progress import dashboard
from tests.conftest import load_shipped_decks
from tests.factories import PASSWORD, answer, card_ids, make_deck, make_user, set_state, subscribe
from tests.test_servers import Server

pytestmark = pytest.mark.slow
Required = SyncCollectionResponse.ChangesRequired
EMAIL = "phone@example.com"


@dataclass
class Person:
    user_id: int
    deck_ids: list[int]


@pytest.fixture
def person(engine: Engine) -> Person:
    """Someone studying two decks: the shipped one in Spanish, with new, learning, due and
    not-yet-due cards, and one of their own in English with a lower new-card limit."""
    load_shipped_decks(engine)
    now = utcnow()
    with transaction(engine) as s:
        uid = make_user(s, EMAIL, timezone="America/Los_Angeles", desired_retention=0.85)
        shipped = s.scalars(select(Deck).where(Deck.slug == "eks-model-training")).one()
        subscribe(s, uid, shipped, "es")
        ids = card_ids(s, shipped.id)
        for card_id in ids[:3]:  # answered long ago: learning cards due now
            answer(s, uid, card_id, 3, now=now - timedelta(days=3))
        week_ago = now - timedelta(days=9)
        for card_id in ids[3:5]:  # reviews due well before today ends
            due = now - timedelta(days=2)
            set_state(s, uid, card_id, state=State.Review, due=due, last_review=week_ago,
                      introduced_at=week_ago)  # fmt: skip
        for card_id in ids[5:7]:  # reviews due in a few days
            due = now + timedelta(days=4)
            set_state(s, uid, card_id, state=State.Review, due=due, last_review=week_ago,
                      introduced_at=week_ago)  # fmt: skip
        own = make_deck(s, "own-deck", 6, locales=("en",))
        subscribe(s, uid, own, "en", new_per_day=2)
    return Person(uid, [shipped.id, own.id])


@pytest.fixture
def server(database_url: str, engine: Engine, tmp_path: Path) -> Iterator[Server]:
    started = Server(database_url, tmp_path / "server.log", workers=1)
    yield started
    started.stop()


def endpoint(server: Server) -> str:
    return f"http://127.0.0.1:{server.port}/"


def new_device(tmp_path: Path, name: str = "phone") -> Collection:
    folder = tmp_path / name
    folder.mkdir()
    return Collection(str(folder / "collection.anki2"))


def sign_in(col: Collection, server: Server, password: str = PASSWORD) -> SyncAuth:
    auth = col.sync_login(EMAIL, password, endpoint(server))
    auth.endpoint = endpoint(server)
    return auth


def full_download(col: Collection, auth: SyncAuth, server_usn: int) -> None:
    col.close_for_full_sync()
    col.full_upload_or_download(auth=auth, server_usn=server_usn, upload=False)
    col.reopen(after_full_sync=True)


def test_signing_in_with_a_wrong_password_is_refused_and_counted(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    col = new_device(tmp_path)
    try:
        with pytest.raises(SyncError) as refusal:
            sign_in(col, server, "not the password")
        assert refusal.value.kind == SyncErrorKind.AUTH
        auth = sign_in(col, server)
        assert len(auth.hkey) == 64
    finally:
        col.close()
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(AnkiDevice)) == 1
        # The failure was counted (and forgiven by the success that followed).
        assert conn.scalar(select(func.count()).select_from(RateLimitCount)) in (0, 1)


def test_a_new_device_downloads_exactly_the_persons_collection(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        # A card answered and then retired: its card is gone, its answers stay (as in Anki).
        retired = card_ids(s, person.deck_ids[0])[0]
        s.execute(update(Card).where(Card.id == retired).values(retired_at=utcnow()))
    col = new_device(tmp_path)
    try:
        auth = sign_in(col, server)
        first = col.sync_collection(auth, False)
        assert first.required == Required.FULL_DOWNLOAD  # the device is empty, we are not
        full_download(col, auth, first.server_media_usn)

        with Session(engine) as s:
            states = {
                (r.card_id): r
                for r in s.scalars(select(ReviewState).where(ReviewState.user_id == person.user_id))
            }
            logs = s.scalar(
                select(func.count())
                .select_from(ReviewLog)
                .where(ReviewLog.user_id == person.user_id)
            )
            live = {d: len(card_ids(s, d)) - (d == person.deck_ids[0]) for d in person.deck_ids}
        names = sorted(d.name for d in col.decks.all_names_and_ids())
        assert names == [
            "Cuestionario sobre entrenamiento de modelos en EKS",
            "Default",
            "own-deck (en)",
        ]
        assert col.card_count() == sum(live.values())
        assert col.db.scalar("select count() from revlog") == logs
        assert col.db.scalar("select count() from revlog where cid = ?", ID_BASE + retired * 64)
        studied = col.db.list("select id from cards where type != 0")
        assert len(studied) == len(states) - 1  # not the retired card
        for cid in studied:
            card = col.get_card(cid)
            ours = states[(cid - 1_600_000_000_000) // 64]
            assert card.memory_state is not None
            assert card.memory_state.stability == pytest.approx(ours.stability, abs=1e-4)
            assert card.memory_state.difficulty == pytest.approx(ours.difficulty, abs=5e-4)
        # Their desired retention and the deck's own new-card limit travel as deck options.
        own = col.decks.by_name("own-deck (en)")
        assert own is not None
        assert col.decks.config_dict_for_deck_id(own["id"])["new"]["perDay"] == 2
        assert col.decks.config_dict_for_deck_id(own["id"])["desiredRetention"] == 0.85

        # Nothing changed on either side since: the next sync has nothing to do.
        assert col.sync_collection(auth, False).required == Required.NO_CHANGES

        # Anki's scheduler shows what our queue shows today, deck by deck (its deck list).
        with Session(engine) as s:
            for deck_id in person.deck_ids:
                _, ours_today = next_card(s, person.user_id, now=utcnow(), deck_ids=[deck_id])
                anki_id = 1_600_000_000_000 + deck_id * 128 + 1  # stable: from our deck's id
                node = col.sched.deck_due_tree(anki_id)
                assert node is not None
                assert (node.new_count, node.learn_count, node.review_count) == (
                    ours_today.new,
                    ours_today.learning,
                    ours_today.review,
                ), deck_id
    finally:
        col.close()
    with engine.connect() as conn:
        assert conn.scalar(select(AnkiDevice.last_sync_at)) is not None


def test_a_revoked_device_is_asked_to_sign_in_again(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    col = new_device(tmp_path)
    try:
        auth = sign_in(col, server)
        with transaction(engine) as s:
            s.execute(delete(AnkiDevice))
        with pytest.raises(SyncError) as refusal:
            col.sync_collection(auth, False)
        assert refusal.value.kind == SyncErrorKind.AUTH
    finally:
        col.close()


def test_a_sync_may_reach_another_instance_between_its_requests(
    database_url: str, engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("several instances share PostgreSQL")
    other = Server(database_url, tmp_path / "other.log", workers=1)
    col = new_device(tmp_path)
    try:
        auth = sign_in(col, server)  # signed in on one instance...
        auth.endpoint = endpoint(other)  # ...meta and the download on the other
        first = col.sync_collection(auth, False)
        assert first.required == Required.FULL_DOWNLOAD
        auth.endpoint = endpoint(server)
        full_download(col, auth, first.server_media_usn)
        assert col.card_count() > 0
        auth.endpoint = endpoint(other)
        assert col.sync_collection(auth, False).required == Required.NO_CHANGES
    finally:
        col.close()
        other.stop()


# --- normal syncs, both ways ---


# Anki keeps difficulty to 3 decimals in a card's data (stability to 4).
def downloaded(tmp_path: Path, server: Server, name: str = "phone") -> tuple[Collection, SyncAuth]:
    col = new_device(tmp_path, name)
    auth = sign_in(col, server)
    first = col.sync_collection(auth, False)
    full_download(col, auth, first.server_media_usn)
    return col, auth


def shipped_deck_id(col: Collection, deck_id: int) -> int:
    anki_id = ID_BASE + deck_id * 128 + 1
    col.decks.select(anki_id)
    return anki_id


ID_BASE = 1_600_000_000_000


def our_card(anki_card_id: int) -> int:
    return (anki_card_id - ID_BASE) // 64


def test_answers_given_in_anki_become_ours_and_come_back(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    col, auth = downloaded(tmp_path, server)
    try:
        shipped_deck_id(col, person.deck_ids[0])
        answered = []
        for rating in (3, 1, 4, 3):
            card = col.sched.getCard()
            assert card is not None
            col.sched.answerCard(card, rating)
            answered.append(card.id)
        device_log = col.db.all("select id, cid, ease, time from revlog where usn = -1 order by id")
        assert len(device_log) == 4
        col.sync_collection(auth, False)  # a normal sync; its sanity check passed

        with Session(engine) as s:
            for revlog_id, cid, ease, taken in device_log:
                log = s.scalars(
                    select(ReviewLog)
                    .where(ReviewLog.user_id == person.user_id, ReviewLog.card_id == our_card(cid))
                    .order_by(ReviewLog.reviewed_at.desc())
                ).first()
                assert log is not None
                assert int(log.reviewed_at.timestamp() * 1000) == revlog_id
                assert (log.rating, log.duration_ms) == (ease, taken)
        # The same answers through the API's path give the same states (fuzz aside).
        with transaction(engine) as s:
            twin = make_user(s, "twin@example.com", timezone="America/Los_Angeles",
                             desired_retention=0.85)  # fmt: skip
            theirs = s.scalars(
                select(ReviewLog).where(ReviewLog.user_id == person.user_id)
                .order_by(ReviewLog.reviewed_at)
            ).all()  # fmt: skip
            for log in theirs:
                answer(s, twin, log.card_id, log.rating, now=log.reviewed_at + timedelta(seconds=1),
                       reviewed_at=log.reviewed_at)  # fmt: skip
        with Session(engine) as s:
            for cid in set(answered):
                ours = s.get(ReviewState, (person.user_id, our_card(cid)))
                twins = s.get(ReviewState, (twin, our_card(cid)))
                assert ours is not None and twins is not None
                assert (ours.state, ours.reps, ours.lapses) == (
                    twins.state,
                    twins.reps,
                    twins.lapses,
                )
                assert ours.stability == pytest.approx(twins.stability)
                assert ours.difficulty == pytest.approx(twins.difficulty)

        # Our states, recomputed from those answers, are the device's after its next sync.
        col.sync_collection(auth, False)
        with Session(engine) as s:
            for cid in set(answered):
                ours = s.get(ReviewState, (person.user_id, our_card(cid)))
                assert ours is not None
                card = col.get_card(cid)
                assert card.memory_state is not None
                assert card.memory_state.stability == pytest.approx(ours.stability, abs=1e-4)
                assert card.memory_state.difficulty == pytest.approx(ours.difficulty, abs=5e-4)
        assert col.sync_collection(auth, False).required == Required.NO_CHANGES
    finally:
        col.close()


def test_answers_given_on_the_web_reach_the_device(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    col, auth = downloaded(tmp_path, server)
    try:
        with transaction(engine) as s:
            card_id = card_ids(s, person.deck_ids[0])[10]
            answer(s, person.user_id, card_id, 3, now=utcnow())  # the web's answer path
        before = col.db.scalar("select count() from revlog")
        col.sync_collection(auth, False)
        assert col.db.scalar("select count() from revlog") == before + 1
        with Session(engine) as s:
            ours = s.get(ReviewState, (person.user_id, card_id))
        assert ours is not None
        card = col.get_card(ID_BASE + card_id * 64)
        assert card.type == 1  # learning, as here
        assert card.memory_state is not None
        assert card.memory_state.stability == pytest.approx(ours.stability, abs=1e-4)
    finally:
        col.close()


def test_suspended_buried_and_flagged_cards_reach_the_device(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        first, second, third = card_ids(s, person.deck_ids[0])[:3]
        card_actions.suspend(s, person.user_id, [first], now=utcnow())
    col, auth = downloaded(tmp_path, server)
    try:
        assert col.get_card(ID_BASE + first * 64).queue == -1  # in the first download
        with transaction(engine) as s:
            card_actions.bury(s, person.user_id, [second], now=utcnow())
            card_actions.set_flag(s, person.user_id, [third], 3, now=utcnow())
            card_actions.suspend(s, person.user_id, [first], now=utcnow(), on=False)
        col.sync_collection(auth, False)
        assert col.get_card(ID_BASE + first * 64).queue >= 0  # back in its queue
        assert col.get_card(ID_BASE + second * 64).queue == -3  # buried by hand
        col.sched.getCard()  # Anki's first queue of the day: the card stays buried
        assert col.get_card(ID_BASE + second * 64).queue == -3
        assert col.get_card(ID_BASE + third * 64).user_flag() == 3
    finally:
        col.close()


def test_subscriptions_assignments_and_edits_reach_the_device(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    col, auth = downloaded(tmp_path, server)
    try:
        now = utcnow()
        with transaction(engine) as s:
            extra = make_deck(s, "extra-deck", 4, locales=("en",))
            subscribe(s, person.user_id, extra, "en")
        col.sync_collection(auth, False)
        assert "extra-deck (en)" in {d.name for d in col.decks.all_names_and_ids()}
        assert col.card_count() == 15 + 6 + 4

        # A team's assignment subscribes them.
        with transaction(engine) as s:
            lead = make_user(s, "lead@example.com")
            team = create_team(s, lead, "Team", now=now)
            s.add(TeamMember(team_id=team.id, user_id=person.user_id, role="member", joined_at=now))
            assigned = make_deck(s, "assigned-deck", 3, locales=("en",))
            s.flush()
            assign(s, team.id, lead, "assigned-deck", None, now=now)
        col.sync_collection(auth, False)
        assert col.card_count() == 15 + 6 + 4 + 3

        # Studied on the device, the assigned deck's progress is on the team's dashboard.
        col.decks.select(ID_BASE + assigned.id * 128 + 1)
        studied = col.sched.getCard()
        assert studied is not None
        col.sched.answerCard(studied, 3)
        col.sync_collection(auth, False)
        with Session(engine) as s:
            rows = dashboard(s, team.id, lead, now=utcnow())
        (mine,) = [r for r in rows if r.user_id == person.user_id]
        assert mine.introduced == 1 and mine.answers_7d == 1

        # A text edit is a note update.
        with transaction(engine) as s:
            text = s.get(CardText, (card_ids(s, extra.id)[0], "en"))
            assert text is not None
            text.question = "An edited question"
            text.updated_at = utcnow()
        col.sync_collection(auth, False)
        note = col.get_note(ID_BASE + card_ids_of(engine, extra.id)[0] * 64)
        assert note["Front"] == "An edited question"

        # Leaving a deck takes it off the device.
        with transaction(engine) as s:
            subscriptions.unsubscribe(s, person.user_id, s.get(Deck, extra.id))
        col.sync_collection(auth, False)
        assert col.card_count() == 15 + 6 + 3
        assert "extra-deck (en)" not in {d.name for d in col.decks.all_names_and_ids()}
        assert assigned.id
    finally:
        col.close()


def card_ids_of(engine: Engine, deck_id: int) -> list[int]:
    with Session(engine) as s:
        return card_ids(s, deck_id)


def test_two_devices_answering_one_card_keep_both_answers(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    """Two phones offline answer the same card; whichever syncs first, both answers stay,
    and after both sync twice the state is the replay of the merged log everywhere."""
    phone, phone_auth = downloaded(tmp_path, server, "phone")
    tablet, tablet_auth = downloaded(tmp_path, server, "tablet")
    try:
        deck = ID_BASE + person.deck_ids[1] * 128 + 1  # their own deck: new cards only
        tablet.decks.select(deck)
        first = tablet.sched.getCard()
        assert first is not None
        tablet.sched.answerCard(first, 3)  # the earlier answer...
        time.sleep(0.05)
        phone.decks.select(deck)
        card = phone.sched.getCard()
        assert card is not None and card.id == first.id
        phone.sched.answerCard(card, 1)  # ...and a later one, on the other device
        phone.sync_collection(phone_auth, False)  # the later answer arrives first
        tablet.sync_collection(tablet_auth, False)  # then the earlier one
        for _ in range(2):
            phone.sync_collection(phone_auth, False)
            tablet.sync_collection(tablet_auth, False)

        ours = our_card(card.id)
        with Session(engine) as s:
            logs = s.scalars(
                select(ReviewLog).where(ReviewLog.card_id == ours).order_by(ReviewLog.reviewed_at)
            ).all()
            state = s.get(ReviewState, (person.user_id, ours))
        assert [log.rating for log in logs] == [3, 1]  # both, in time order
        assert state is not None and state.reps == 2 and state.lapses == 0
        for device in (phone, tablet):
            assert device.db.list(f"select ease from revlog where cid = {card.id} order by id") == [
                3,
                1,
            ]
            on_device = device.get_card(card.id)
            assert on_device.memory_state is not None
            assert on_device.memory_state.stability == pytest.approx(state.stability, abs=1e-4)
            assert on_device.reps == 2
    finally:
        phone.close()
        tablet.close()


def test_an_answer_given_in_anki_is_not_undone_on_the_web_and_a_forget_here_reaches_it(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    """Undo on the web takes back what was done on the web, as Anki's undo takes back what
    was done on its device. A card the device answered, forgotten here before its next sync
    (new again, as the device last got it), is new again on the device too."""
    col, auth = downloaded(tmp_path, server)
    try:
        with transaction(engine) as s:  # an answer on the web first, to a shipped card
            on_web = answer(s, person.user_id, card_ids(s, person.deck_ids[0])[10], 3,
                            now=utcnow() - timedelta(seconds=30))  # fmt: skip
        col.decks.select(ID_BASE + person.deck_ids[1] * 128 + 1)  # their own deck: new cards
        card = col.sched.getCard()
        assert card is not None
        col.sched.answerCard(card, 3)
        col.sync_collection(auth, False)
        assert col.get_card(card.id).reps == 1
        with transaction(engine) as s:
            # The web's undo offers the web's answer, past the phone's later one.
            assert study.undoable(s, person.user_id, now=utcnow()) == on_web.review_id
            card_actions.forget(s, person.user_id, [our_card(card.id)], now=utcnow(),
                                restore_position=True, reset_counts=True)  # fmt: skip
        col.sync_collection(auth, False)
        forgotten = col.get_card(card.id)
        assert (forgotten.type, forgotten.queue, forgotten.reps) == (0, 0, 0)  # as here
        assert col.sync_status(auth).required == SyncCollectionResponse.ChangesRequired.NO_CHANGES
    finally:
        col.close()


def test_a_due_date_set_and_a_card_forgotten_in_anki_are_taken_here(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    """Anki's Set Due Date and Forget are the same actions here (undoable on the web), and
    a second device gets the device's log of them."""
    col, auth = downloaded(tmp_path, server)
    tablet, tablet_auth = downloaded(tmp_path, server, "tablet")
    try:
        deck = ID_BASE + person.deck_ids[1] * 128 + 1  # their own deck: new cards
        first, second = (col.get_card(cid) for cid in sorted(col.find_cards(f"did:{deck}"))[:2])
        first.start_timer()
        col.sched.answerCard(first, 4)
        col.sync_collection(auth, False)
        col.sched.set_due_date([first.id], "10")
        second.start_timer()
        col.sched.answerCard(second, 3)
        col.sched.schedule_cards_as_new([second.id], restore_position=True, reset_counts=True)
        col.sync_collection(auth, False)
        with Session(engine) as s:
            moved = s.get(ReviewState, (person.user_id, our_card(first.id)))
            forgotten = s.get(ReviewState, (person.user_id, our_card(second.id)))
            assert moved is not None and forgotten is not None
            # Due on the day the device shows it (its days count as ours, `anki.timing`).
            assert anki_day(moved.due, "America/Los_Angeles", 4) == col.get_card(first.id).due
            assert (forgotten.state, forgotten.reps) == (0, 0)
            # Done on the device: undone there, not here.
            assert study.undoable_what(s, person.user_id, now=utcnow()) is None
        assert col.sync_collection(auth, False).required in (Required.NO_CHANGES,
                                                             Required.NORMAL_SYNC)  # fmt: skip
        assert col.get_card(first.id).due - col.sched.today == 10  # ours is the device's
        tablet.sync_collection(tablet_auth, False)
        assert tablet.get_card(first.id).due - tablet.sched.today == 10
        assert tablet.get_card(second.id).type == 0
        manual = "select count() from revlog where ease = 0 and type = 4 and cid in (?, ?)"
        assert (
            tablet.db.scalar(manual, first.id, second.id)
            == col.db.scalar(manual, first.id, second.id)
            > 0
        )
    finally:
        col.close()
        tablet.close()


def test_a_devices_later_changes_to_a_card_it_answered_are_taken(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    """A card answered at the device's last sync comes back to it with our state; what the
    device does to it after (flag, suspend, Forget then study) is newer, and is taken. A
    due date set on a card new here stays the device's."""
    col, auth = downloaded(tmp_path, server)
    try:
        deck = ID_BASE + person.deck_ids[1] * 128 + 1  # their own deck: new cards
        flagged, relearnt, dated, counted = (
            col.get_card(c) for c in sorted(col.find_cards(f"did:{deck}"))[:4]
        )
        for card in (flagged, relearnt, counted):
            card.start_timer()
            col.sched.answerCard(card, 4)
        col.sync_collection(auth, False)
        time.sleep(1.1)  # a card's modification time counts seconds
        col.set_user_flag_for_cards(2, [flagged.id])
        col.sched.suspend_cards([flagged.id])
        col.sched.schedule_cards_as_new([relearnt.id], restore_position=True, reset_counts=True)
        relearnt = col.get_card(relearnt.id)
        relearnt.start_timer()
        col.sched.answerCard(relearnt, 3)
        col.set_user_flag_for_cards(3, [relearnt.id])
        # Forgotten keeping its counts: the answer before it still counts, there and here.
        col.sched.schedule_cards_as_new([counted.id], restore_position=True, reset_counts=False)
        counted = col.get_card(counted.id)
        counted.start_timer()
        col.sched.answerCard(counted, 3)
        col.sched.set_due_date([dated.id], "5")
        for _ in range(2):
            col.sync_collection(auth, False)
        with Session(engine) as s:
            mark = s.get(CardMark, (person.user_id, our_card(flagged.id)))
            assert mark is not None and mark.suspended and mark.flag == 2
            state = s.get(ReviewState, (person.user_id, our_card(relearnt.id)))
            assert state is not None and state.state == State.Learning  # new again, then Good
            assert state.reps == col.get_card(relearnt.id).reps == 1  # counts reset there
            kept = s.get(ReviewState, (person.user_id, our_card(counted.id)))
            assert kept is not None and kept.reps == col.get_card(counted.id).reps == 2
            relearnt_mark = s.get(CardMark, (person.user_id, our_card(relearnt.id)))
            assert relearnt_mark is not None and relearnt_mark.flag == 3
        assert col.get_card(flagged.id).user_flag() == 2 and col.get_card(flagged.id).queue == -1
        assert col.get_card(relearnt.id).type == 1  # learning, here as there
        assert col.get_card(dated.id).due - col.sched.today == 5
    finally:
        col.close()


def test_a_card_changed_on_both_sides_keeps_the_later_change(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    """Flagged on the phone, then suspended here before the phone syncs: ours is the later
    change, and wins on both sides."""
    col, auth = downloaded(tmp_path, server)
    try:
        deck = ID_BASE + person.deck_ids[1] * 128 + 1
        cid = sorted(col.find_cards(f"did:{deck}"))[0]
        col.set_user_flag_for_cards(2, [cid])
        time.sleep(1.1)  # a card's modification time counts seconds
        with transaction(engine) as s:
            card_actions.suspend(s, person.user_id, [our_card(cid)], now=utcnow())
        for _ in range(2):
            col.sync_collection(auth, False)
        with Session(engine) as s:
            mark = s.get(CardMark, (person.user_id, our_card(cid)))
            assert mark is not None and mark.suspended and mark.flag == 0
        assert col.get_card(cid).queue == -1 and col.get_card(cid).user_flag() == 0
    finally:
        col.close()


def test_a_device_without_media_finds_nothing_to_sync(
    engine: Engine, person: Person, server: Server, tmp_path: Path
) -> None:
    col, auth = downloaded(tmp_path, server)
    try:
        col.sync_media(auth)
        deadline = time.monotonic() + 20
        while col.media_sync_status().active and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not col.media_sync_status().active
        col.sync_collection(auth, True)  # with media, as desktop Anki syncs
    finally:
        col.close()
