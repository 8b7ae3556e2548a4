"""Issue 26, points 1, 4 and part of 7: odd input gets a precise 4xx, never a 500.

Unknown language codes everywhere one enters (and pages that survive one stored before),
a CSV with only its header row, hostile packages (deep JSON, NUL characters, over-long
fields, Python exceptions in messages), unsafe `next` targets, malformed chunked bodies,
and one rounding for imported memory states.
"""

from __future__ import annotations

import itertools
import json
import socket
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from gunicorn.http.body import Body, ChunkedReader
from gunicorn.http.unreader import IterUnreader
from sqlalchemy import Engine, func, select, update

from flashcards.anki import AnkiPackageError, import_package
from flashcards.cli import main
from flashcards.decks.deckfile import MAX_TEXT, load_deck_dir
from flashcards.decks.locales import UnknownLocale, is_known_locale
from flashcards.errors import DeckFileError
from flashcards.people.accounts import create_user, issue_token
from flashcards.storage import migrate
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Card,
    CardText,
    Deck,
    DeckText,
    ReviewLog,
    ReviewState,
    Subscription,
    User,
)
from tests import factories as f
from tests.conftest import T0
from tests.test_anki_export import export, study_eks, wall_now
from tests.test_anki_import import counts, hostile_package
from tests.test_servers import Server
from tests.test_web_teams import _invite, _join, _new_team, _people, _post, _user_id
from tests.web_helpers import PASSWORD, csrf, sign_up

# --- 1. language codes ------------------------------------------------------------------


def test_only_language_codes_babel_knows_are_accepted() -> None:
    for code in ("en", "es", "ko", "pt_BR", "zh_TW", "ko_KP", "eo"):
        assert is_known_locale(code), code
    # Babel would parse "en_ZZ" and "und" as en_US: the territory and language must be kept.
    for code in (
        "zz",
        "xx",
        "inf",
        "tlh",
        "en_ZZ",
        "en_AQ",
        "und",
        "EN",
        "en-US",
        "en\n",
        "",
        None,
        3,
    ):
        assert not is_known_locale(code), code


def _api_lead(client: FlaskClient, engine: Engine) -> tuple[dict[str, str], int]:
    with transaction(engine) as s:
        user = create_user(s, "api-lead@example.com", "password1", now=T0)
        headers = {"Authorization": f"Bearer {issue_token(s, user.id, now=T0)}"}
    team = client.post("/api/v1/teams", json={"name": "Platform"}, headers=headers).get_json()
    return headers, team["id"]


def test_a_team_deck_in_an_unknown_language_is_refused_naming_the_code(
    client: FlaskClient, engine: Engine
) -> None:
    headers, team = _api_lead(client, engine)
    url = f"/api/v1/teams/{team}/decks"
    quiz = "Quiz\nSub\n1. One plus one?\nAnswer\nTwo.\n"
    for body, named in (
        ({"format": "quiz", "content": quiz, "locale": "zz"}, "'zz'"),
        ({"format": "quiz", "content": quiz, "locale": "en_ZZ"}, "'en_ZZ'"),
        (
            {
                "format": "csv",
                "title": "Ops",
                "locale": "en",
                "content": "front,back,locale\nQ,A,en\nP,R,tlh\n",
            },
            "line 3: 'tlh'",
        ),
    ):
        response = client.post(url, json=body, headers=headers)
        assert response.status_code == 422, response.get_json()
        problem = response.get_json()
        assert named in problem["detail"] and problem["field"] in ("locale", "content")
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(Deck)) == 0


def test_the_web_names_an_unknown_language_of_a_csv_line(app: Flask, engine: Engine) -> None:
    lead, _member, _outsider = _people(app)
    team = _new_team(lead)
    decks = f"/teams/{team}/decks"
    form = {
        "format": "csv",
        "title": "Ops",
        "locale": "en",
        "content": "front,back,locale\nQ,A,xx\n",
    }
    response = _post(lead, decks, form, decks)
    assert response.status_code == 422
    assert "Line 2: “xx” is not a language code we know" in response.get_data(as_text=True)


def test_deck_files_and_quiz_imports_refuse_an_unknown_language(
    tmp_path: Path, cli: CliRunner, engine: Engine
) -> None:
    good = "title: T\n\n== a\nQ\n--\nA\n"
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "deck.toml").write_text('default_locale = "en"\n')
    (folder / "en.deck").write_text(good)
    (folder / "zz.deck").write_text(good)
    with pytest.raises(DeckFileError, match="'zz' is not a language code we know"):
        load_deck_dir(folder)
    (folder / "zz.deck").unlink()
    (folder / "deck.toml").write_text('default_locale = "tlh"\n')
    (folder / "tlh.deck").write_text(good)
    with pytest.raises(DeckFileError, match="default_locale: 'tlh' is not a language code"):
        load_deck_dir(folder)

    quiz = tmp_path / "quiz.txt"
    quiz.write_text("Quiz\nSub\n1. One plus one?\nAnswer\nTwo.\n")
    result = cli.invoke(
        main, ["decks", "import-quiz", str(quiz), "--locale", "en_ZZ", "--decks-dir", str(tmp_path)]
    )
    assert result.exit_code == 2 and "'en_ZZ' is not a language code we know" in result.output
    assert not (tmp_path / "quiz").exists()


def test_a_package_with_an_unknown_language_is_refused(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    now, user_id, data = hostile_package(
        loaded_engine,
        tmp_path,
        lambda conn: conn.execute(
            "UPDATE notes SET tags = ' lang::zz ' WHERE id = (SELECT min(id) FROM notes)"
        ),
    )
    package = export(loaded_engine, now)
    with transaction(loaded_engine) as s:
        before = counts(s)
        with pytest.raises(AnkiPackageError) as refused:
            import_package(s, data, owner_user_id=user_id, now=now)
        assert refused.value.kind == "unknown_language" and refused.value.code == "zz"
        assert "tagged lang::zz: 'zz' is not a language code we know" in refused.value.detail
        with pytest.raises(UnknownLocale, match="'inf' is not a language code"):
            import_package(s, package, owner_user_id=user_id, now=now, locale="inf")
        assert counts(s) == before


def test_the_api_refuses_an_unknown_language_for_an_import_and_the_settings(
    client: FlaskClient, engine: Engine
) -> None:
    headers, _team = _api_lead(client, engine)
    response = client.post(
        "/api/v1/imports?locale=zz",
        data=b"PK",
        headers={**headers, "Content-Type": "application/octet-stream"},
    )
    assert response.status_code == 422 and "'zz'" in response.get_json()["detail"]
    response = client.patch("/api/v1/me", json={"locale": "zz"}, headers=headers)
    assert response.status_code == 422 and response.get_json()["field"] == "locale"


def _team_with_a_stored_deck(app: Flask, engine: Engine, locale: str) -> tuple[FlaskClient, int]:
    """A member of a team whose deck was stored in `locale` (before the rule), subscribed."""
    lead, member, _outsider = _people(app)
    team = _new_team(lead)
    _join(member, _invite(lead, team))
    member_id = _user_id(engine, "mia@example.com")
    with transaction(engine) as s:
        deck = f.make_deck(s, f"team{team}-odd", 3, locales=(locale,))
        deck.owner_team_id = team
        s.flush()
        f.subscribe(s, member_id, deck, locale)
    return member, team


def test_pages_survive_a_deck_stored_in_an_unknown_language(app: Flask, engine: Engine) -> None:
    member, team = _team_with_a_stored_deck(app, engine, "zz")
    for path in ("/", f"/teams/{team}/decks", f"/decks/team{team}-odd"):
        response = member.get(path)
        assert response.status_code == 200, path
    assert "zz" in member.get(f"/decks/team{team}-odd").get_data(as_text=True)


# --- 4a. a CSV with only its header row -------------------------------------------------


def test_a_csv_with_only_a_header_row_is_refused(
    app: Flask, client: FlaskClient, engine: Engine
) -> None:
    headers, team = _api_lead(client, engine)
    body = {"format": "csv", "title": "Ops", "locale": "en", "content": "front,back,key\n"}
    response = client.post(f"/api/v1/teams/{team}/decks", json=body, headers=headers)
    assert response.status_code == 422
    assert "no cards" in response.get_json()["detail"]

    lead, _member, _outsider = _people(app)
    web_team = _new_team(lead)
    decks = f"/teams/{web_team}/decks"
    assert _post(lead, decks, body, decks).status_code == 422
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(Deck)) == 0


# --- 4b, 4c, 7. hostile packages --------------------------------------------------------

DEEP = "[" * 50_000 + "]" * 50_000


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("UPDATE col SET models = ?", "col.models"),
        ("UPDATE col SET decks = ?", "col.decks"),
        ("UPDATE col SET conf = ?", "col.conf"),
        ("UPDATE cards SET data = ?", "cards.data"),
    ],
)
def test_deeply_nested_json_in_a_package_is_refused(
    loaded_engine: Engine, tmp_path: Path, sql: str, named: str
) -> None:
    now, user_id, data = hostile_package(loaded_engine, tmp_path, lambda c: c.execute(sql, (DEEP,)))
    with transaction(loaded_engine) as s:
        before = counts(s)
        with pytest.raises(AnkiPackageError) as refused:
            import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=now)
        assert named in refused.value.detail and "nested too deeply" in refused.value.detail
        assert counts(s) == before


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("UPDATE col SET models = '[1]'", "col.models"),
        ("UPDATE col SET decks = '{\"1\": []}'", "col.decks"),
        ("UPDATE notes SET mid = 'x'", "notes"),
        ("UPDATE cards SET ivl = 'x'", "cards"),
        ("UPDATE revlog SET ease = 'x'", "revlog"),
    ],
)
def test_a_damaged_package_is_described_not_quoted_from_python(
    loaded_engine: Engine, tmp_path: Path, sql: str, named: str
) -> None:
    now, user_id, data = hostile_package(loaded_engine, tmp_path, lambda c: c.execute(sql))
    with pytest.raises(AnkiPackageError) as refused, transaction(loaded_engine) as s:
        import_package(s, data, owner_user_id=user_id, with_scheduling=True, now=now)
    detail = refused.value.detail
    assert named in detail and "not in the form Anki writes" in detail, detail
    for python in ("Error(", "object", "'list'", "invalid literal"):
        assert python not in detail, detail


def _nul_edits(conn: sqlite3.Connection) -> None:
    (decks_json,) = conn.execute("SELECT decks FROM col").fetchone()
    decks = json.loads(decks_json)
    for deck in decks.values():
        if deck["name"] != "Default":
            deck["name"] = "EKS\x00 quiz"
    conn.execute("UPDATE col SET decks = ?", (json.dumps(decks),))
    first = "(SELECT min(id) FROM notes)"
    conn.execute(f"UPDATE notes SET guid = 'ab' || char(0) || 'cd' WHERE id = {first}")
    conn.execute(f"UPDATE notes SET tags = ' lang::en ops' || char(0) || 'x ' WHERE id = {first}")


def test_nul_characters_in_a_package_are_left_out(loaded_engine: Engine, tmp_path: Path) -> None:
    now, user_id, data = hostile_package(loaded_engine, tmp_path, _nul_edits)
    with transaction(loaded_engine) as s:
        report = import_package(s, data, owner_user_id=user_id, now=now)
        assert report.title == "EKS quiz" and report.cards == 15
        guids = list(
            s.scalars(select(CardText.anki_guid).join(Card).where(Card.deck_id == report.deck_id))
        )
        assert None in guids and not any("\x00" in g for g in guids if g)
        tags = [
            t
            for ts in s.scalars(select(Card.tags).where(Card.deck_id == report.deck_id))
            for t in ts
        ]
        assert "opsx" in tags and not any("\x00" in t for t in tags)


def test_package_fields_have_the_cap_of_every_card_text(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    long_front = "x" * (MAX_TEXT + 1)
    now, user_id, data = hostile_package(
        loaded_engine,
        tmp_path,
        lambda c: c.execute(
            "UPDATE notes SET flds = ? || substr(flds, instr(flds, char(31)))"
            " WHERE id = (SELECT min(id) FROM notes)",
            (long_front,),
        ),
    )
    with transaction(loaded_engine) as s:
        report = import_package(s, data, owner_user_id=user_id, now=now)
        assert report.skipped == {"too_long": 1} and report.cards == 14
        assert any(f"longer than {MAX_TEXT} characters" in m for m in report.messages)
        longest = s.scalar(
            select(func.max(func.length(CardText.question)))
            .join(Card)
            .where(Card.deck_id == report.deck_id)
        )
        assert longest is not None and longest <= MAX_TEXT


def test_imported_progress_stores_its_state_rounded_as_its_log(loaded_engine: Engine) -> None:
    now = wall_now()
    user_id = study_eks(loaded_engine, now)
    data = export(loaded_engine, now, user_id=user_id, with_scheduling=True)
    with transaction(loaded_engine) as s:
        report = import_package(
            s, data, owner_user_id=user_id, with_scheduling=True, now=now, slug="back"
        )
        states = list(s.scalars(select(ReviewState).where(ReviewState.deck_id == report.deck_id)))
        assert len(states) == 4
        for state in states:
            logs = list(
                s.scalars(
                    select(ReviewLog)
                    .where(ReviewLog.card_id == state.card_id)
                    .order_by(ReviewLog.reviewed_at)
                )
            )
            assert (state.stability, state.difficulty) == (logs[-1].stability, logs[-1].difficulty)
            for earlier, later in itertools.pairwise(logs):
                assert later.stability_before == earlier.stability
            assert state.stability == round(state.stability or 0, 4)


# --- 4d. unsafe `next` targets ----------------------------------------------------------

UNSAFE_TARGETS = ("/x\r\ny", "/\t/evil.example", "/\n/evil.example", "/x\x7fy", "/\\evil")


def test_sign_in_with_an_unsafe_next_goes_to_the_library(app: Flask, engine: Engine) -> None:
    sign_up(app.test_client(), "ana@example.com")
    for target in UNSAFE_TARGETS:
        client = app.test_client()
        form = {
            "csrf_token": csrf(client),
            "email": "ana@example.com",
            "password": PASSWORD,
            "next": target,
        }
        response = client.post("/signin", data=form)
        assert response.status_code == 302 and response.headers["Location"] == "/", target
        assert client.get("/settings").status_code == 200  # signed in


def test_the_language_switch_with_an_unsafe_next_goes_to_the_library(
    app: Flask, engine: Engine
) -> None:
    client = app.test_client()
    sign_up(client, "ana@example.com")
    for target in UNSAFE_TARGETS:
        form = {"csrf_token": csrf(client, "/"), "locale": "es", "next": target}
        response = client.post("/language", data=form)
        assert response.status_code == 302 and response.headers["Location"] == "/", target
    with transaction(engine) as s:
        assert s.scalar(select(User.locale).where(User.email == "ana@example.com")) == "es"


# --- 4e. malformed chunked bodies -------------------------------------------------------

BAD_CHUNKS = b"zz\r\n{}\r\n0\r\n\r\n"


def test_a_malformed_chunk_size_is_a_400_through_gunicorns_reader(
    client: FlaskClient, engine: Engine
) -> None:
    # The body as gunicorn hands it to the app: its reader decodes the chunks as they are read.
    for path, mimetype, expected in (
        ("/api/v1/tokens", "application/json", "application/problem+json"),
        ("/signin", "application/x-www-form-urlencoded", "text/html"),
    ):
        body = Body(ChunkedReader(SimpleNamespace(), IterUnreader([BAD_CHUNKS])))
        response = client.post(
            path,
            headers={"Transfer-Encoding": "chunked", "Content-Type": mimetype},
            environ_overrides={"wsgi.input": body, "wsgi.input_terminated": True},
        )
        assert response.status_code == 400 and response.mimetype == expected, path


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


@pytest.mark.slow
def test_a_malformed_chunk_size_is_a_400_from_a_real_server(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    server = Server(database_url, tmp_path / "server.log", workers=1)
    try:
        for path, mimetype, expected in (
            ("/api/v1/tokens", "application/json", b"application/problem+json"),
            ("/signin", "application/x-www-form-urlencoded", b"text/html"),
        ):
            head = (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {mimetype}\r\n"
                "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            )
            answer = _raw(server.port, head.encode() + BAD_CHUNKS)
            status, _, rest = answer.partition(b"\r\n")
            assert status.startswith(b"HTTP/1.1 400"), answer[:300]
            assert expected in rest.split(b"\r\n\r\n")[0], answer[:300]
    finally:
        server.stop()


# --- 1. the migration that repairs stored codes -----------------------------------------


def test_0014_repairs_unknown_language_codes_stored_before(engine: Engine) -> None:
    # Stored with today's models (which validate nothing), then taken down to 0013 with
    # them: the models have columns 0013 lacks.
    with transaction(engine) as s:
        odd = f.make_user(s, "odd@example.com")
        s.execute(update(User).where(User.id == odd).values(locale="zz"))
        reader = f.make_user(s, "reader@example.com")
        only_zz = f.make_deck(s, "only-zz", 2, locales=("zz",))
        f.subscribe(s, reader, only_zz, "zz")
        # An English deck with a variant nobody knows: it becomes plain English where free.
        variant = f.make_deck(s, "variant", 2, locales=("es", "en_ZZ"))
        # Both candidates taken: the texts merge, the known code's text wins.
        crowded = f.make_deck(s, "crowded", 2, locales=("en", "xx"))
        f.subscribe(s, reader, crowded, "xx")
        fine = f.make_deck(s, "fine", 2, locales=("en", "ko"))
        ids = {d.slug: d.id for d in (only_zz, variant, crowded, fine)}
    migrate.downgrade(engine, "0013")
    migrate.upgrade(engine)

    def texts(slug: str) -> set[tuple[str, str]]:
        rows = s.execute(
            select(CardText.locale, CardText.question).join(Card).where(Card.deck_id == ids[slug])
        )
        return {(loc, q) for loc, q in rows}

    with transaction(engine) as s:
        assert s.scalar(select(User.locale).where(User.id == odd)) == "en"
        defaults = {slug: loc for slug, loc in s.execute(select(Deck.slug, Deck.default_locale))}
        assert defaults == {"only-zz": "en", "variant": "es", "crowded": "en", "fine": "en"}
        assert texts("only-zz") == {("en", "only-zz q1 zz"), ("en", "only-zz q2 zz")}
        assert {loc for loc, _ in texts("variant")} == {"es", "en"}
        assert ("en", "variant q1 en_ZZ") in texts("variant")
        assert texts("crowded") == {("en", "crowded q1 en"), ("en", "crowded q2 en")}
        assert {loc for loc, _ in texts("fine")} == {"en", "ko"}
        titles = {(d, loc) for d, loc in s.execute(select(DeckText.deck_id, DeckText.locale))}
        assert titles == {
            (ids["only-zz"], "en"),
            (ids["variant"], "es"),
            (ids["variant"], "en"),
            (ids["crowded"], "en"),
            (ids["fine"], "en"),
            (ids["fine"], "ko"),
        }
        subs = {(d, loc) for d, loc in s.execute(select(Subscription.deck_id, Subscription.locale))}
        assert subs == {(ids["only-zz"], "en"), (ids["crowded"], "en")}
        every: set[Any] = set(s.scalars(select(CardText.locale))) | set(
            s.scalars(select(Deck.default_locale))
        )
        assert all(is_known_locale(code) for code in every)
