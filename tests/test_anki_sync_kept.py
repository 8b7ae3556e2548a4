"""What a device makes that the service does not model, message by message through the Flask
test client (`anki_sync.kept`): a deletion wins over another device's edit, an older copy
does not replace a newer one, ids are bounded and resolved only among the person's own
cards, and a note whose ids another card already has stays the device's. The real client
is in `test_anki_sync_device_edits.py`."""

from __future__ import annotations

from typing import Any

import pytest
import zstandard
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select

from flashcards.anki import schema
from flashcards.anki_sync import kept, snapshot
from flashcards.storage.engine import transaction
from flashcards.storage.models import AnkiKeptObject, Card, CardMark, ReviewLog, SchedulerSettings
from flashcards.storage.schema import utcnow
from tests.factories import card_ids, make_deck, make_user, subscribe
from tests.test_anki_sync_wire import (
    CLIENT,
    ID_BASE,
    answer_json,
    count,
    person,
    post,
    refused,
    start,
    synced,
)

__all__ = ["person", "synced"]  # the fixtures, shared with the protocol's tests

OWN_DECK = 1_760_000_000_001  # a deck made on the device: its id is a time in ms


def own_deck(mod: int, name: str = "Words") -> dict[str, Any]:
    return {**schema.deck(OWN_DECK, name, mod), "usn": -1}


def apply_changes(client: FlaskClient, key: str, session: str, **changes: Any) -> Any:
    body = {"changes": {"models": [], "decks": [[], []], "tags": [], **changes}}
    return answer_json(post(client, "applyChanges", body, key=key, session=session))


def finish(client: FlaskClient, key: str, session: str) -> None:
    assert isinstance(answer_json(post(client, "finish", {}, key=key, session=session)), int)


def kept_payloads(engine: Engine, kind: int) -> list[Any]:
    with engine.connect() as conn:
        return list(conn.scalars(select(AnkiKeptObject.payload).where(AnkiKeptObject.kind == kind)))


def begin(client: FlaskClient, key: str, session: str) -> None:
    answer_json(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key, session=session))


def test_a_deck_deleted_on_one_device_is_not_sent_back_though_another_changed_it(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    start(client, key, usn)
    apply_changes(client, key, "n1", decks=[[own_deck(10)], []])  # a device made it
    finish(client, key, "n1")
    # A second device, which has it, renames it and syncs.
    begin(client, key, "n2")
    start(client, key, usn + 1, session="n2")
    apply_changes(client, key, "n2", decks=[[own_deck(20, "Words, renamed")], []])
    finish(client, key, "n2")
    # The first device, which has not got the new name, deletes it.
    begin(client, key, "n3")
    start(client, key, usn + 1, session="n3")
    body = {"chunk": {"cards": [], "notes": [], "decks": [OWN_DECK]}}
    assert answer_json(post(client, "applyGraves", body, key=key, session="n3")) is None
    changes = apply_changes(client, key, "n3")
    assert [d["id"] for d in changes["decks"][0]] == []  # not sent back to what deleted it
    assert kept_payloads(engine, snapshot.DECK) == []


def test_an_older_copy_of_a_kept_deck_does_not_replace_the_newer(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    start(client, key, usn)
    apply_changes(client, key, "n1", decks=[[own_deck(20, "Newer")], []])
    finish(client, key, "n1")
    begin(client, key, "n2")
    start(client, key, usn, session="n2")
    changes = apply_changes(client, key, "n2", decks=[[own_deck(10, "Older")], []])
    assert [d["name"] for d in kept_payloads(engine, snapshot.DECK)] == ["Newer"]
    # The device with the older copy gets the newer one.
    assert [d["name"] for d in changes["decks"][0]] == ["Newer"]


@pytest.mark.parametrize(
    ("method", "body"),
    [
        ("applyGraves", {"chunk": {"cards": [2**63], "notes": [], "decks": []}}),
        ("applyChanges", {"changes": {"models": [{"id": 2**64}], "decks": [[], []]}}),
        ("applyChunk", {"chunk": {"notes": [[2**63, "g", 1, 1, -1, "", "a", "a", 0, 0, ""]]}}),
        ("applyChunk", {"chunk": {"revlog": [[1, 2, -1, 3, 1, 0, 0, 1, 2**70]]}}),
        ("applyChunk", {"chunk": {"cards": [[-(2**63) - 1, *[0] * 17]]}}),
    ],
)
def test_numbers_past_64_bits_are_a_bad_request_and_change_nothing(
    client: FlaskClient, engine: Engine, synced: tuple[str, int], method: str, body: Any
) -> None:
    key, usn = synced
    start(client, key, usn)
    refused(post(client, method, body, key=key, session="n1"), 400, "Bad Request")
    assert count(engine, AnkiKeptObject) == 0


def test_ids_of_cards_not_the_persons_are_kept_as_theirs_not_applied_to_ours(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    with transaction(engine) as s:
        foreign = card_ids(s, make_deck(s, "not-subscribed", 2).id)[0]
    start(client, key, usn)
    anki_id = ID_BASE + foreign * 64  # what that card would be in a sync of its deck
    card = [anki_id, anki_id, OWN_DECK, 0, 1, -1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, ""]
    when = int(utcnow().timestamp() * 1000)
    row = [when, anki_id, -1, 3, 1, 0, 0, 1000, 0]
    body = {"chunk": {"done": True, "cards": [card], "revlog": [row]}}
    assert answer_json(post(client, "applyChunk", body, key=key, session="n1")) is None
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).where(ReviewLog.card_id == foreign)) == 0
        assert conn.scalar(select(func.count()).where(CardMark.card_id == foreign)) == 0
    assert [c[0] for c in kept_payloads(engine, snapshot.CARD)] == [anki_id]
    assert [r[0] for r in kept_payloads(engine, kept.REVLOG)] == [when]


def test_a_note_whose_card_id_another_persons_card_has_stays_the_devices(
    client: FlaskClient, engine: Engine, person: int, synced: tuple[str, int]
) -> None:
    key, usn = synced
    taken_cid = 1_760_000_000_500
    with transaction(engine) as s:
        mine = make_deck(s, "mine", 1, owner_user_id=person)
        subscribe(s, person, mine, "en")
        theirs = make_deck(s, "theirs", 1, owner_user_id=make_user(s, "other@example.com"))
        other = s.get(Card, card_ids(s, theirs.id)[0])
        assert other is not None
        other.anki_note_id, other.anki_card_id = 1_760_000_000_400, taken_cid
        mine_id = mine.id
    start(client, key, usn)
    did = ID_BASE + mine_id * 128 + 1
    nid = 1_760_000_000_600
    fields = "\x1f".join(["Which node group?", "p5", ""])
    note = [nid, "guid-1", schema.NOTETYPE_ID, 1, -1, "", fields, "Which", 0, 0, ""]
    card = [taken_cid, nid, did, 0, 1, -1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, ""]
    body = {"chunk": {"done": True, "notes": [note], "cards": [card]}}
    assert answer_json(post(client, "applyChunk", body, key=key, session="n1")) is None
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).where(Card.deck_id == mine_id)) == 1
    assert [n[0] for n in kept_payloads(engine, snapshot.NOTE)] == [nid]


def test_kept_objects_past_the_limit_are_refused_and_nothing_is_kept(
    client: FlaskClient, engine: Engine, synced: tuple[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    key, usn = synced
    monkeypatch.setattr(kept, "LIMIT", 1)
    start(client, key, usn)
    decks = [own_deck(10), {**own_deck(10, "Two"), "id": OWN_DECK + 1}]
    body = {"changes": {"models": [], "decks": [decks, []], "tags": []}}
    answered = post(client, "applyChanges", body, key=key, session="n1")
    refused(answered, 413, "Request Entity Too Large")
    assert count(engine, AnkiKeptObject) == 0


def test_the_default_deck_as_a_device_changed_it_replaces_ours_and_counts_once(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    start(client, key, usn)
    default = {**schema.deck(schema.DEFAULT_DECK_ID, "Default", 20), "collapsed": True}
    apply_changes(client, key, "n1", decks=[[default], []])
    counts = [[0, 0, 0], 15, 15, 3, 0, 1, 2, 2]  # the same deck count as before
    answered = answer_json(post(client, "sanityCheck2", {"client": counts}, key=key,
                                session="n1"))  # fmt: skip
    assert answered["status"] == "ok", answered
    finish(client, key, "n1")
    begin(client, key, "n2")
    start(client, key, usn, session="n2")  # a device that has not got it
    (sent,) = [d for d in apply_changes(client, key, "n2")["decks"][0] if d["id"] == 1]
    assert sent["collapsed"] is True


def test_device_ids_that_fall_on_our_id_pattern_past_any_card_id_are_kept(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    start(client, key, usn)
    # A device's ids are times in ms: one in 64 looks like an id a sync gave one of our
    # cards, of a card id past what the database's ids hold (PostgreSQL's integer).
    anki_id = ID_BASE + (2**31 + 5) * 64
    card = [anki_id, anki_id, anki_id + 1, 0, 1, -1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, ""]
    row = [int(utcnow().timestamp() * 1000), anki_id, -1, 3, 1, 0, 0, 1000, 0]
    body = {"chunk": {"done": True, "cards": [card], "revlog": [row]}}
    assert answer_json(post(client, "applyChunk", body, key=key, session="n1")) is None
    assert [c[0] for c in kept_payloads(engine, snapshot.CARD)] == [anki_id]


def test_a_new_note_sent_twice_becomes_one_card(
    client: FlaskClient, engine: Engine, person: int, synced: tuple[str, int]
) -> None:
    key, usn = synced
    with transaction(engine) as s:
        mine = make_deck(s, "mine", 1, owner_user_id=person)
        subscribe(s, person, mine, "en")
        mine_id = mine.id
    start(client, key, usn)
    did, nid = ID_BASE + mine_id * 128 + 1, 1_760_000_000_600
    fields = "\x1f".join(["Which node group?", "p5", ""])
    note = [nid, "guid-1", schema.NOTETYPE_ID, 1, -1, "", fields, "Which", 0, 0, ""]
    card = [nid + 1, nid, did, 0, 1, -1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, ""]
    body = {"chunk": {"done": True, "notes": [note, note], "cards": [card, card]}}
    assert answer_json(post(client, "applyChunk", body, key=key, session="n1")) is None
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).where(Card.deck_id == mine_id)) == 2


def test_json_with_nan_or_infinity_is_a_bad_request(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    start(client, key, usn)
    raw = zstandard.compress(
        b'{"chunk": {"done": true, "revlog": [[1, 2, -1, 3, NaN, 0, 0, 1, 0]]}}'
    )
    refused(post(client, "applyChunk", key=key, session="n1", raw=raw), 400, "Bad Request")
    assert count(engine, AnkiKeptObject) == 0


def test_an_options_group_made_by_an_anki_of_2015_is_the_devices(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    start(client, key, usn)
    old = {"id": 1_450_000_000_000, "name": "From 2015", "mod": 1, "usn": -1}
    apply_changes(client, key, "n1", decks=[[], [old]])
    assert [c["id"] for c in kept_payloads(engine, snapshot.DECK_CONFIG)] == [old["id"]]


def test_the_default_options_group_as_a_device_changed_it_becomes_the_persons_settings(
    client: FlaskClient, engine: Engine, person: int, synced: tuple[str, int]
) -> None:
    key, usn = synced
    start(client, key, usn)
    group = {"id": 1, "name": "Default", "mod": 5, "usn": -1, "desiredRetention": 0.87,
             "new": {"perDay": 33, "delays": [2.0, 15.0]}, "rev": {"perDay": -5, "maxIvl": 900},
             "lapse": {"delays": [12.5]}}  # fmt: skip
    apply_changes(client, key, "n1", decks=[[], [group]])
    with transaction(engine) as s:
        settings = s.get(SchedulerSettings, person)
        assert settings is not None
        assert (settings.new_per_day, settings.learning_steps, settings.relearning_steps) == (
            33,
            [120, 900],
            [750],
        )
        assert (settings.maximum_interval, settings.desired_retention) == (900, 0.87)
        assert settings.reviews_per_day != -5  # refused: left as it was, and ours goes back


def test_the_bookkeeping_of_tens_of_thousands_of_kept_objects_is_read_in_one_go(
    engine: Engine,
) -> None:
    """A sync bringing a shared deck's 70,000 notes and cards looks up what is recorded of
    them: more ids than PostgreSQL binds in one statement (65,535)."""
    with transaction(engine) as s:
        uid = make_user(s, "many@example.com")
        rows = [[OWN_DECK + i, f"g{i}", 1, 1, -1, "", "front\x1fback", "", 0, 0, ""]
                for i in range(10)]  # fmt: skip
        found = snapshot.of_rows(notes=rows)
        snapshot.record_some(s, uid, found, list(found.digests), 3)
    with transaction(engine) as s:
        recorded = snapshot.recorded_of(s, uid, oids=range(OWN_DECK, OWN_DECK + 70_000), since=10)
        assert len(recorded) == 10 and recorded[(snapshot.NOTE, OWN_DECK)][1] == 3
