"""Anki's own sync client (the `anki` package: the Rust backend every current Anki runs)
against a real `flashcards serve`, on SQLite and PostgreSQL: signing in, a new device's full
download, and what Anki's scheduler then shows compared with our queue."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from anki.collection import Collection
from anki.errors import SyncError, SyncErrorKind
from anki.sync_pb2 import SyncAuth, SyncCollectionResponse
from fsrs import State
from sqlalchemy import Engine, delete, func, select
from sqlalchemy.orm import Session

from flashcards.srs.queue import next_card
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    AnkiDevice,
    Deck,
    RateLimitCount,
    ReviewLog,
    ReviewState,
)
from flashcards.storage.schema import utcnow
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
            live = {d: len(card_ids(s, d)) for d in person.deck_ids}
        names = sorted(d.name for d in col.decks.all_names_and_ids())
        assert names == [
            "Cuestionario sobre entrenamiento de modelos en EKS",
            "Default",
            "own-deck (en)",
        ]
        assert col.card_count() == sum(live.values())
        assert col.db.scalar("select count() from revlog") == logs
        studied = col.db.list("select id from cards where type != 0")
        assert len(studied) == len(states)
        for cid in studied:
            card = col.get_card(cid)
            ours = states[(cid - 1_600_000_000_000) // 64]
            assert card.memory_state is not None
            assert card.memory_state.stability == pytest.approx(ours.stability, abs=1e-4)
            assert card.memory_state.difficulty == pytest.approx(ours.difficulty, abs=1e-4)
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
                _, ours_today = next_card(s, person.user_id, now=utcnow(), deck_id=deck_id)
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
