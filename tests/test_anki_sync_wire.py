"""Anki's sync protocol, message by message, through the Flask test client: one test per
message the server answers, so that a new Anki release that changes one shows which; and the
refusals (old or new versions, malformed headers and bodies, oversized bodies and bombs,
wrong passwords and keys, another sync's session id), each writing nothing.

The real client against a real server is in `test_anki_sync_client.py`.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import zstandard
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, delete, func, select
from werkzeug.test import TestResponse

from flashcards.anki_sync import snapshot, wire
from flashcards.people.token_hashes import token_hash
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    AnkiCollection,
    AnkiCollectionFile,
    AnkiDevice,
    AnkiSyncObject,
    AnkiSyncSession,
    Card,
    Deck,
    RateLimitCount,
    ReviewLog,
    SchedulerSettings,
    Subscription,
)
from flashcards.storage.schema import utcnow
from tests.conftest import load_shipped_decks
from tests.factories import PASSWORD, answer, card_ids, make_deck, make_user, subscribe
from tests.web_helpers import csrf

CLIENT = "anki,26.09.3 (test),lin"
EMAIL = "anki@example.com"


def sync_header(key: str = "", session: str = "s1", version: int = 11) -> str:
    return json.dumps({"v": version, "k": key, "c": CLIENT, "s": session})


def post(
    client: FlaskClient,
    method: str,
    body: Any = None,
    *,
    key: str = "",
    session: str = "s1",
    version: int = 11,
    raw: bytes | None = None,
    header: str | None = None,
) -> TestResponse:
    data = raw if raw is not None else zstandard.compress(json.dumps(body or {}).encode())
    headers = {"Content-Type": "application/octet-stream"}
    sent = header if header is not None else sync_header(key, session, version)
    if sent:
        headers[wire.HEADER] = sent
    return client.post(f"/sync/{method}", data=data, headers=headers)


def decoded(response: TestResponse) -> bytes:
    assert response.status_code == 200, (response.status_code, response.data[:200])
    assert response.content_type == "application/octet-stream"
    plain = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(response.data)).read()
    assert response.headers[wire.ORIGINAL_SIZE] == str(len(plain))
    return plain


def answer_json(response: TestResponse) -> Any:
    return json.loads(decoded(response))


def refused(response: TestResponse, status: int, phrase: str) -> None:
    """Anki's own error answer: the status and its reason phrase, nothing else."""
    assert response.status_code == status, (response.status_code, response.data[:200])
    assert response.data.decode() == phrase
    assert "Set-Cookie" not in response.headers


@pytest.fixture
def person(engine: Engine) -> int:
    load_shipped_decks(engine)
    with transaction(engine) as s:
        uid = make_user(s, EMAIL)
        deck = s.scalars(select(Deck).where(Deck.slug == "eks-model-training")).one()
        subscribe(s, uid, deck, "es")
        for card_id in card_ids(s, deck.id)[:3]:
            answer(s, uid, card_id, 3, now=deck.created_at)
    return uid


def host_key(client: FlaskClient, email: str = EMAIL, password: str = PASSWORD) -> str:
    key = answer_json(post(client, "hostKey", {"u": email, "p": password}))["key"]
    assert isinstance(key, str)
    return key


def sign_in(client: FlaskClient, email: str) -> None:
    form = {"csrf_token": csrf(client), "email": email, "password": PASSWORD}
    assert client.post("/signin", data=form).status_code == 302


def count(engine: Engine, model: type) -> int:
    with engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(model)) or 0)


# --- hostKey ---


def test_host_key_gives_a_key_stored_hashed(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    key = host_key(client, "  ANKI@example.com ")  # as sign-in, the email in any spelling
    assert len(key) == 64 and int(key, 16) >= 0
    with engine.connect() as conn:
        row = conn.execute(select(AnkiDevice)).one()
    assert row.user_id == person
    assert row.key_hash == token_hash(key) != key
    assert row.client_version == CLIENT and row.last_sync_at is None
    assert host_key(client) != key  # each sign-in is a device of its own


def test_a_wrong_password_and_an_unknown_email_get_the_same_refusal(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    wrong = post(client, "hostKey", {"u": EMAIL, "p": "not the password"})
    unknown = post(client, "hostKey", {"u": "nobody@example.com", "p": PASSWORD})
    refused(wrong, 403, "Forbidden")
    refused(unknown, 403, "Forbidden")
    assert count(engine, AnkiDevice) == 0
    assert count(engine, RateLimitCount) == 2  # each counted, against its own email


def test_sign_ins_share_the_web_and_api_counter(
    app: Flask, client: FlaskClient, engine: Engine, person: int
) -> None:
    app.config["SIGNIN_ATTEMPTS_PER_15_MIN"] = 3
    for _ in range(2):
        bad = client.post("/api/v1/tokens", json={"email": EMAIL, "password": "wrong pass"})
        assert bad.status_code == 401
    refused(post(client, "hostKey", {"u": EMAIL, "p": "wrong pass"}), 403, "Forbidden")
    # The allowance is used up: even the right password is refused, with a time to wait.
    limited = post(client, "hostKey", {"u": EMAIL, "p": PASSWORD})
    refused(limited, 429, "Too Many Requests")
    assert int(limited.headers["Retry-After"]) > 0
    assert count(engine, AnkiDevice) == 0


@pytest.mark.parametrize(
    "body",
    [{"u": EMAIL}, {"u": EMAIL, "p": 5}, ["u", "p"], "u"],
    ids=["no password", "number", "list", "string"],
)
def test_host_key_without_email_and_password_is_a_bad_request(
    client: FlaskClient, engine: Engine, person: int, body: Any
) -> None:
    refused(post(client, "hostKey", body), 400, "Bad Request")
    assert count(engine, AnkiDevice) == 0


# --- the envelope ---


@pytest.mark.parametrize("version", [8, 9, 10])
def test_an_older_protocol_is_told_to_upgrade(
    client: FlaskClient, engine: Engine, person: int, version: int
) -> None:
    # 501 is what Anki's clients read as "please upgrade" (SyncErrorKind::ClientTooOld).
    refused(post(client, "hostKey", {"u": EMAIL, "p": PASSWORD}, version=version), 501,
            "Not Implemented")  # fmt: skip
    assert count(engine, AnkiDevice) == 0


def test_a_legacy_multipart_request_is_told_to_upgrade(client: FlaskClient, person: int) -> None:
    # Versions 8-10 send a gzip'd multipart form and no anki-sync header.
    response = client.post(
        "/sync/hostKey", data={"c": "1", "data": (io.BytesIO(b"\x1f\x8b"), "data")}
    )
    refused(response, 501, "Not Implemented")


def test_a_newer_protocol_is_a_bad_request(client: FlaskClient, person: int) -> None:
    refused(post(client, "hostKey", {"u": EMAIL, "p": PASSWORD}, version=12), 400, "Bad Request")


@pytest.mark.parametrize(
    "header",
    ["not json", "[11]", '{"v": "11"}', '{"v": 11, "k": 5}', '{"v": 11, "s": "' + "x" * 300 + '"}'],
    ids=["text", "list", "string version", "number key", "long session"],
)
def test_a_malformed_header_is_a_bad_request(
    client: FlaskClient, engine: Engine, person: int, header: str
) -> None:
    refused(post(client, "hostKey", {"u": EMAIL, "p": PASSWORD}, header=header), 400,
            "Bad Request")  # fmt: skip
    assert count(engine, AnkiDevice) == 0


@pytest.mark.parametrize(
    "raw",
    [b"{}", zstandard.compress(b"{not json"), zstandard.compress(b"\xff\xfe"), b""],
    ids=["not zstd", "not json", "not utf-8", "empty"],
)
def test_a_malformed_body_is_a_bad_request_and_writes_nothing(
    client: FlaskClient, engine: Engine, person: int, raw: bytes
) -> None:
    refused(post(client, "hostKey", raw=raw), 400, "Bad Request")
    assert count(engine, AnkiDevice) == 0 and count(engine, RateLimitCount) == 0


def test_a_body_over_the_limit_is_refused(
    app: Flask, client: FlaskClient, engine: Engine, person: int
) -> None:
    app.config["SYNC_MAX_BYTES"] = 1000
    # Random text compresses to about its own size: over the compressed limit.
    noise = json.dumps({"u": EMAIL, "p": PASSWORD, "pad": os.urandom(2000).hex()})
    refused(post(client, "hostKey", raw=zstandard.compress(noise.encode())), 413,
            "Request Entity Too Large")  # fmt: skip
    assert count(engine, AnkiDevice) == 0 and count(engine, RateLimitCount) == 0


def test_a_decompression_bomb_is_cut_off_at_the_limit(
    app: Flask, client: FlaskClient, engine: Engine, person: int
) -> None:
    app.config["SYNC_MAX_BYTES"] = 10_000
    # 64 MiB of zeros in a few KB: far under the compressed limit, far over 3 x it.
    bomb = zstandard.ZstdCompressor().compress(b"{" + b" " * (64 * 1024 * 1024) + b"}")
    assert len(bomb) < 10_000
    refused(post(client, "hostKey", raw=bomb), 413, "Request Entity Too Large")
    assert count(engine, AnkiDevice) == 0


def test_read_body_stops_reading_a_bomb_at_the_limit() -> None:
    """The body is decompressed as it streams in: an endless bomb (frame after frame of
    zeros) stops at the limit, having read a few frames, instead of reading forever."""
    frame = zstandard.compress(b"\0" * (1024 * 1024))
    read = 0

    class Endless:
        def read(self, size: int = -1) -> bytes:
            nonlocal read
            read += 1
            return frame

    with pytest.raises(wire.Refused) as refusal:
        wire.read_body(Endless(), max_bytes=1024 * 1024)  # type: ignore[arg-type]
    assert refusal.value.status == 413
    assert read <= 4  # 3 MiB decompressed, one frame a read


def test_an_unknown_method_is_not_found(client: FlaskClient, person: int) -> None:
    refused(post(client, "noSuchMethod", {}), 404, "Not Found")


# --- meta ---


def test_meta_gives_the_collection_stamps_and_begins_a_sync(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    key = host_key(client)
    meta = answer_json(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key, session="abc"))
    # Every field a current client reads (a missing media_usn broke AnkiDroid, #14635).
    assert set(meta) == {"mod", "scm", "usn", "ts", "msg", "cont", "hostNum", "empty", "media_usn"}
    assert meta["cont"] is True and meta["msg"] == "" and meta["usn"] == 0
    assert meta["empty"] is False  # they study a deck: a new device must download
    assert meta["mod"] >= meta["scm"] > 0
    with engine.connect() as conn:
        stamps = conn.execute(select(AnkiCollection)).one()
        sync = conn.execute(select(AnkiSyncSession)).one()
        device = conn.execute(select(AnkiDevice)).one()
    assert stamps.user_id == person and stamps.scm == meta["scm"]
    assert sync.device_id == device.id and sync.session_key == "abc"
    assert device.last_sync_at is not None
    again = answer_json(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key, session="def"))
    assert again["scm"] == meta["scm"] and again["mod"] >= meta["mod"]


def test_meta_of_someone_studying_nothing_says_empty(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    with transaction(engine) as s:
        make_user(s, "new@example.com")
    key = host_key(client, "new@example.com")
    assert answer_json(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key))["empty"] is True


@pytest.mark.parametrize("key", ["", "0" * 64, "x" * 150])
def test_meta_with_a_wrong_key_is_forbidden(
    client: FlaskClient, engine: Engine, person: int, key: str
) -> None:
    refused(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key), 403, "Forbidden")
    assert count(engine, AnkiCollection) == 0 and count(engine, AnkiSyncSession) == 0


def test_a_revoked_key_is_forbidden_and_writes_nothing(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    key = host_key(client)
    with transaction(engine) as s:
        s.execute(delete(AnkiDevice))
    refused(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key), 403, "Forbidden")
    refused(post(client, "download", {}, key=key), 403, "Forbidden")
    assert count(engine, AnkiCollection) == 0 and count(engine, AnkiSyncSession) == 0


# --- abort ---


def test_abort_ends_the_sync_of_its_session_only(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    key = host_key(client)
    post(client, "meta", {"v": 11, "cv": CLIENT}, key=key, session="mine")
    refused(post(client, "abort", {}, key=key, session="other"), 409, "Conflict")
    assert count(engine, AnkiSyncSession) == 1
    assert answer_json(post(client, "abort", {}, key=key, session="mine")) is None
    assert count(engine, AnkiSyncSession) == 0
    refused(post(client, "abort", {}, key=key, session="mine"), 409, "Conflict")


def test_another_persons_session_id_is_refused(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    with transaction(engine) as s:
        make_user(s, "other@example.com")
    mine, theirs = host_key(client), host_key(client, "other@example.com")
    post(client, "meta", {"v": 11, "cv": CLIENT}, key=theirs, session="their-sync")
    # My key with their sync's id: a conflict for me, their sync untouched.
    refused(post(client, "abort", {}, key=mine, session="their-sync"), 409, "Conflict")
    with engine.connect() as conn:
        rows = conn.execute(select(AnkiSyncSession.session_key)).scalars().all()
    assert rows == ["their-sync"]


# --- download ---


def test_download_serves_the_persons_collection(
    client: FlaskClient, engine: Engine, person: int, tmp_path: Path
) -> None:
    key = host_key(client)
    meta = answer_json(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key, session="a"))
    # A full sync uses a new HTTP client, so a new session id: download is not tied to one.
    data = decoded(post(client, "download", {}, key=key, session="b"))
    path = tmp_path / "collection.anki2"
    path.write_bytes(data)
    with sqlite3.connect(path) as conn:
        scm, mod, usn, ver = conn.execute("select scm, mod, usn, ver from col").fetchone()
        cards = conn.execute("select count(), max(usn), min(usn) from cards").fetchone()
        revlog = conn.execute("select count(), max(usn), min(usn) from revlog").fetchone()
        decks = json.loads(conn.execute("select decks from col").fetchone()[0])
    # The file holds the next usn: changes after it are above what the device holds.
    assert (scm, usn, ver) == (meta["scm"], meta["usn"] + 1, 11)
    after = answer_json(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key, session="c"))
    assert (after["mod"], after["usn"]) == (mod, usn)  # the device is up to date
    assert cards == (15, 0, 0) and revlog == (3, 0, 0)  # every row the server's own
    assert all(d["usn"] == 0 for d in decks.values())
    assert sorted(d["name"] for d in decks.values()) == [
        "Cuestionario sobre entrenamiento de modelos en EKS",
        "Default",
    ]
    with engine.connect() as conn:
        device = conn.execute(select(AnkiDevice)).one()
    assert device.last_sync_at is not None
    assert count(engine, AnkiSyncSession) == 1  # the meta after it began another


# --- the tokens page ---


def test_devices_are_listed_on_the_tokens_page_and_revocable(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    key = host_key(client)
    sign_in(client, EMAIL)
    page = client.get("/tokens").get_data(as_text=True)
    assert "Anki 26.09.3" in page and "Never" in page
    assert "http://localhost/" in page  # the address to enter in Anki
    post(client, "meta", {"v": 11, "cv": CLIENT}, key=key)
    page = client.get("/tokens").get_data(as_text=True)
    assert "Never" not in page
    with engine.connect() as conn:
        device_id = conn.scalar(select(AnkiDevice.id))
    token = csrf(client, "/tokens")
    done = client.post(f"/tokens/devices/{device_id}/revoke", data={"csrf_token": token})
    assert done.status_code == 302
    assert count(engine, AnkiDevice) == 0
    refused(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key), 403, "Forbidden")


def test_someone_elses_device_cannot_be_revoked(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    with transaction(engine) as s:
        make_user(s, "other@example.com")
    host_key(client, "other@example.com")
    with engine.connect() as conn:
        theirs = conn.scalar(select(AnkiDevice.id))
    sign_in(client, EMAIL)
    token = csrf(client, "/tokens")
    response = client.post(f"/tokens/devices/{theirs}/revoke", data={"csrf_token": token})
    assert response.status_code == 404
    assert count(engine, AnkiDevice) == 1


def test_a_new_password_signing_out_everywhere_revokes_devices(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    key = host_key(client)
    sign_in(client, EMAIL)
    token = csrf(client, "/settings")
    client.post(
        "/settings/password",
        data={
            "csrf_token": token,
            "current_password": PASSWORD,
            "new_password": "another good password",
            "revoke_tokens": "1",
        },
    )
    assert count(engine, AnkiDevice) == 0
    refused(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key), 403, "Forbidden")


def test_a_new_password_alone_keeps_devices(
    client: FlaskClient, engine: Engine, person: int
) -> None:
    host_key(client)
    sign_in(client, EMAIL)
    token = csrf(client, "/settings")
    client.post(
        "/settings/password",
        data={
            "csrf_token": token,
            "current_password": PASSWORD,
            "new_password": "another good password",
        },
    )
    assert count(engine, AnkiDevice) == 1


# --- a normal sync, step by step ---

ID_BASE = 1_600_000_000_000


@pytest.fixture
def synced(client: FlaskClient, engine: Engine, person: int) -> tuple[str, int]:
    """A device that downloaded the collection and began a normal sync ("n1"): its key and
    the usn it holds."""
    key = host_key(client)
    post(client, "meta", {"v": 11, "cv": CLIENT}, key=key, session="d")
    decoded(post(client, "download", {}, key=key, session="d"))
    meta = answer_json(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key, session="n1"))
    return key, int(meta["usn"])


def start(client: FlaskClient, key: str, usn: int, session: str = "n1") -> Any:
    body = {"minUsn": usn, "lnewer": True, "graves": None}
    return answer_json(post(client, "start", body, key=key, session=session))


def test_start_gives_no_graves_when_nothing_was_removed(
    client: FlaskClient, synced: tuple[str, int]
) -> None:
    key, usn = synced
    assert start(client, key, usn) == {"cards": [], "notes": [], "decks": []}


def test_start_gives_the_cards_of_a_deck_left_as_graves(
    client: FlaskClient, engine: Engine, person: int, synced: tuple[str, int]
) -> None:
    key, usn = synced
    with transaction(engine) as s:
        s.execute(delete(Subscription).where(Subscription.user_id == person))
    graves = start(client, key, usn)
    assert len(graves["cards"]) == 15 and len(graves["notes"]) == 15
    assert len(graves["decks"]) == 1


def test_start_needs_the_sync_meta_began(client: FlaskClient, synced: tuple[str, int]) -> None:
    key, usn = synced
    body = {"minUsn": usn, "lnewer": True, "graves": None}
    refused(post(client, "start", body, key=key, session="not-begun"), 409, "Conflict")
    refused(post(client, "start", {"minUsn": "1"}, key=key, session="n1"), 400, "Bad Request")


def test_apply_graves_keeps_what_we_hold(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    start(client, key, usn)
    card = ID_BASE + card_id_of(engine, 1) * 64
    body = {"chunk": {"cards": [card], "notes": [card], "decks": []}}
    assert answer_json(post(client, "applyGraves", body, key=key, session="n1")) is None
    # Deleted on the device only (a shipped deck's card): this sync's chunks send it back.
    sent = answer_json(post(client, "chunk", {}, key=key, session="n1"))
    assert [row[0] for row in sent.get("cards", [])] == [card]
    assert [row[0] for row in sent.get("notes", [])] == [card]
    with engine.connect() as conn:
        digest = conn.scalar(
            select(AnkiSyncObject.digest).where(
                AnkiSyncObject.oid == card, AnkiSyncObject.kind == snapshot.CARD
            )
        )
    assert digest  # what the device holds again


def test_apply_changes_answers_the_servers_changes(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    with transaction(engine) as s:
        settings = s.get(SchedulerSettings, 1)
        assert settings is not None
        settings.new_per_day = 7
    start(client, key, usn)
    body = {"changes": {"models": [], "decks": [[], []], "tags": []}}
    changes = answer_json(post(client, "applyChanges", body, key=key, session="n1"))
    assert changes["models"] == [] and changes["tags"] == []
    decks, options = changes["decks"]
    assert decks == []
    assert [o["new"]["perDay"] for o in options] == [7, 7]  # Default's and the deck's
    assert {o["usn"] for o in options} == {usn}


def test_chunk_sends_answers_given_elsewhere_since_the_last_sync(
    client: FlaskClient, engine: Engine, person: int, synced: tuple[str, int]
) -> None:
    key, usn = synced
    later = utcnow()
    with transaction(engine) as s:
        result = answer(s, person, card_id_of(engine, 10), 3, now=later)
    start(client, key, usn)
    chunk = answer_json(post(client, "chunk", {}, key=key, session="n1"))
    assert chunk["done"] is True
    (revlog,) = chunk["revlog"]
    assert revlog[0] == int(later.timestamp() * 1000) and revlog[3] == 3
    (card,) = chunk["cards"]
    assert card[0] == ID_BASE + result.card_id * 64 and card[6] == 1  # learning now
    assert "notes" not in chunk


def test_apply_chunk_applies_the_devices_answers_once(
    client: FlaskClient, engine: Engine, person: int, synced: tuple[str, int]
) -> None:
    key, usn = synced
    start(client, key, usn)
    answer_json(post(client, "chunk", {}, key=key, session="n1"))
    card_id = card_id_of(engine, 12)
    when = int(utcnow().timestamp() * 1000) - 5000
    row = [when, ID_BASE + card_id * 64, usn, 3, -600, 0, 0, 4200, 0]
    manual = [when + 1, ID_BASE + card_id * 64, usn, 0, 3, 0, 0, 0, 4]  # not an answer
    body = {"chunk": {"done": True, "revlog": [row, manual, row], "cards": [], "notes": []}}
    assert answer_json(post(client, "applyChunk", body, key=key, session="n1")) is None
    with engine.connect() as conn:
        logs = conn.execute(select(ReviewLog).where(ReviewLog.card_id == card_id)).all()
    assert len(logs) == 1
    assert logs[0].rating == 3 and logs[0].duration_ms == 4200
    assert int(logs[0].reviewed_at.timestamp() * 1000) == when


def test_apply_chunk_ignores_answers_to_cards_not_theirs(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    with transaction(engine) as s:
        other = make_deck(s, "not-subscribed", 2)
        foreign = card_ids(s, other.id)[0]
    start(client, key, usn)
    row = [int(utcnow().timestamp() * 1000), ID_BASE + foreign * 64, usn, 3, 1, 0, 0, 1, 0]
    body = {"chunk": {"done": True, "revlog": [row]}}
    post(client, "applyChunk", body, key=key, session="n1")
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).where(ReviewLog.card_id == foreign)) == 0


def test_sanity_check_compares_the_counts(client: FlaskClient, synced: tuple[str, int]) -> None:
    key, usn = synced
    start(client, key, usn)
    good = [[1, 2, 3], 15, 15, 3, 0, 1, 2, 2]
    answered = answer_json(post(client, "sanityCheck2", {"client": good}, key=key, session="n1"))
    assert answered["status"] == "ok"
    bad = [[0, 0, 0], 14, 15, 3, 0, 1, 2, 2]
    answered = answer_json(post(client, "sanityCheck2", {"client": bad}, key=key, session="n1"))
    assert answered["status"] == "bad" and answered["s"][1] == 15


def test_finish_moves_the_usn_on_and_ends_the_sync(
    client: FlaskClient, engine: Engine, synced: tuple[str, int]
) -> None:
    key, usn = synced
    start(client, key, usn)
    mod = answer_json(post(client, "finish", {}, key=key, session="n1"))
    assert isinstance(mod, int) and mod > 0
    assert count(engine, AnkiSyncSession) == 0
    meta = answer_json(post(client, "meta", {"v": 11, "cv": CLIENT}, key=key, session="n2"))
    assert (meta["mod"], meta["usn"]) == (mod, usn + 1)


def card_id_of(engine: Engine, position: int) -> int:
    with engine.connect() as conn:
        found = conn.scalar(
            select(Card.id)
            .join(Deck, Deck.id == Card.deck_id)
            .where(Deck.slug == "eks-model-training", Card.position == position)
        )
    assert found is not None
    return int(found)


def test_a_second_download_of_an_unchanged_collection_sends_the_kept_file(
    client: FlaskClient, engine: Engine, person: int, tmp_path: Path
) -> None:
    first_key, second_key = host_key(client), host_key(client)
    first = post(client, "download", {}, key=first_key)
    again = post(client, "download", {}, key=second_key)
    assert decoded(first) == decoded(again)
    with engine.connect() as conn:
        kept = conn.execute(select(AnkiCollectionFile.data, AnkiCollectionFile.size)).one()
    assert kept.data == first.data and kept.size == len(decoded(first))
    with transaction(engine) as s:
        answer(s, person, card_id_of(engine, 9), 3, now=utcnow())
    changed = decoded(post(client, "download", {}, key=second_key))
    assert changed != decoded(first)  # built again, with the new answer
    path = tmp_path / "changed.anki2"
    path.write_bytes(changed)
    with sqlite3.connect(path) as conn:
        assert conn.execute("select count() from revlog").fetchone() == (4,)
