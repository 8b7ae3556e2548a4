"""Bad input, swept: the team-deck CSV and quiz importers (the quiz parser), deck files
through `decks sync`, and the `.apkg` importer, fed arbitrary and mutated input. Each either
succeeds or raises a FlashcardsError with a message, never another exception, and a refusal
leaves every table as it was, before the caller's rollback (the importers validate before
their first write).

The heavy sweeps take fewer examples on PostgreSQL, where each round trip costs more;
SWEEP_EXAMPLES=1000 runs a longer, random hunt by hand (the suite's own is derandomized).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import sqlite3
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import zstandard
from anki.collection import Collection
from click.testing import CliRunner
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from flashcards.anki import export_deck, import_package
from flashcards.api.errors import problem_type
from flashcards.cli import main
from flashcards.decks.deckfile import load_decks
from flashcards.decks.sync import sync_deck
from flashcards.errors import FlashcardsError
from flashcards.storage.engine import transaction, writer
from flashcards.storage.models import Deck, User
from flashcards.storage.schema import Base
from flashcards.teams import team_decks
from flashcards.teams.membership import create_team

from . import factories as f
from .conftest import DECKS, T0
from .test_anki_import import anki_export, studied_in_anki
from .web_helpers import csrf

T = TypeVar("T")

CSV_VALID = (
    "front,back,key,locale,explanation\n"
    "One plus one?,Two,sum,en,Arithmetic\n"
    '"Sky, by day?",Blue,sky,en,\n'
    "¿Uno más uno?,Dos,sum,es,\n"
)
CSV_PLAIN = "Q one,A one\nQ two,A two\n"
QUIZ_VALID = (
    "Team quiz\nTwo questions\n1. One plus one?\nAnswer\nTwo. Because arithmetic.\n"
    "2) Sky colour?\nRespuesta y explicación\nBlue.\n"
)
# Characters and words the parsers give meaning to, so mutations reach their branches.
TOKENS = [",", '"', "\n", "\r", "\r\n", "\x00", "\ufeff", " ", "\t", "--", "==", "1. ", "2) ",
          "front", "back", "key", "locale", "explanation", "Answer", "정답", "es", "xx_YY",
          "é", "o\u0301", "\u2028", "\ud7ff", "A" * 300]  # fmt: skip


def dump(session: Session) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, in key order: equal dumps mean nothing was written."""
    return {
        table.name: [
            tuple(row)
            for row in session.execute(select(table).order_by(*table.primary_key.columns))
        ]
        for table in Base.metadata.sorted_tables
    }


def sweep(engine: Engine, strategy: st.SearchStrategy[T], check: Callable[[T], object]) -> None:
    """Run `check` over `strategy`; far fewer examples on PostgreSQL than on SQLite."""
    examples = 60 if engine.dialect.name == "sqlite" else 12
    hunt = os.environ.get("SWEEP_EXAMPLES")  # a longer, random hunt, by hand

    @settings(
        max_examples=int(hunt) if hunt else examples,
        # The suite tries the same inputs every run, so that CI is red only for a change;
        # what a random hunt finds becomes a test of its own.
        derandomize=not hunt,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(strategy)
    def run(value: T) -> None:
        check(value)

    run()


def mutate(valid: str) -> st.SearchStrategy[str]:
    """`valid` with a few characters inserted, deleted, replaced or lines duplicated."""
    piece = st.one_of(st.sampled_from(TOKENS), st.text(max_size=3))
    op = st.tuples(st.sampled_from(["insert", "delete", "replace", "dup"]), st.integers(0), piece)

    def apply(ops: list[tuple[str, int, str]]) -> str:
        text = valid
        for kind, at, chunk in ops:
            i = at % (len(text) + 1)
            if kind == "insert":
                text = text[:i] + chunk + text[i:]
            elif kind == "delete":
                text = text[:i] + text[i + len(chunk) + 1 :]
            elif kind == "replace":
                text = text[:i] + chunk + text[i + len(chunk) :]
            else:
                lines = text.split("\n")
                lines.insert(at % (len(lines) + 1), lines[at % len(lines)])
                text = "\n".join(lines)
        return text

    return st.lists(op, min_size=1, max_size=6).map(apply)


def assert_clear(exc: FlashcardsError) -> None:
    assert exc.detail.strip() and "Traceback" not in exc.detail, repr(exc)
    assert problem_type(exc).status in (400, 404, 409, 413, 415, 422), exc


def refused_cleanly(engine: Engine, action: Callable[[Session], object]) -> bool:
    """Run `action` in a write transaction that is always rolled back; True if it refused."""
    with Session(writer(engine), expire_on_commit=False) as s, s.begin():
        before = dump(s)
        try:
            action(s)
        except FlashcardsError as exc:
            assert_clear(exc)
            assert dump(s) == before, f"partial write on refusal: {exc}"
            s.rollback()
            return True
        s.rollback()
        return False


# --- team decks: CSV and quiz text -------------------------------------------------------


class TeamWorld:
    def __init__(self, engine: Engine) -> None:
        with transaction(engine) as s:
            self.lead = f.make_user(s)
            self.team = create_team(s, self.lead, "Sweepers", now=T0).id
            deck, _ = team_decks.create_team_deck(
                s, self.team, self.lead, fmt="csv", content=CSV_VALID, locale="en",
                title="Base", now=T0,
            )  # fmt: skip
            self.slug = deck.slug

    def import_text(self, engine: Engine, target: str, fmt: str, content: str) -> bool:
        def action(s: Session) -> object:
            if target == "new":
                return team_decks.create_team_deck(
                    s, self.team, self.lead, fmt=fmt, content=content, locale="en",
                    title="Swept" if fmt == "csv" else None, now=T0,
                )  # fmt: skip
            return team_decks.upload_locale(
                s, self.team, self.lead, self.slug, fmt=fmt, content=content, locale=target,
                title="Swept", now=T0,
            )  # fmt: skip

        return refused_cleanly(engine, action)


TARGETS = st.sampled_from(["new", "en", "es", "ko"])


def team_text(fmt: str, valid: list[str]) -> st.SearchStrategy[tuple[str, str]]:
    text = st.one_of(
        st.text(max_size=200),
        st.lists(st.sampled_from(TOKENS), max_size=30).map("".join),
        st.sampled_from(valid).flatmap(mutate),
    )
    return st.tuples(TARGETS, text)


@pytest.fixture
def team_world(engine: Engine) -> TeamWorld:
    return TeamWorld(engine)


def test_csv_import_succeeds_or_refuses_cleanly(engine: Engine, team_world: TeamWorld) -> None:
    sweep(
        engine,
        team_text("csv", [CSV_VALID, CSV_PLAIN]),
        lambda case: team_world.import_text(engine, case[0], "csv", case[1]),
    )


def test_csv_made_of_arbitrary_cells(engine: Engine, team_world: TeamWorld) -> None:
    cell = st.one_of(st.text(max_size=12), st.sampled_from(TOKENS))
    rows = st.lists(st.lists(cell, min_size=0, max_size=6), min_size=0, max_size=8)

    def as_csv(table: list[list[str]]) -> str:
        out = io.StringIO()
        csv.writer(out).writerows(table)
        return out.getvalue()

    sweep(
        engine,
        st.tuples(TARGETS, rows.map(as_csv)),
        lambda case: team_world.import_text(engine, case[0], "csv", case[1]),
    )


def test_quiz_import_succeeds_or_refuses_cleanly(engine: Engine, team_world: TeamWorld) -> None:
    sweep(
        engine,
        team_text("quiz", [QUIZ_VALID]),
        lambda case: team_world.import_text(engine, case[0], "quiz", case[1]),
    )


# Inputs found by the sweeps, and the ones that reach the database driver: PostgreSQL refuses
# NUL characters, so these run on both databases with a full check.
FIXED_BAD_TEXT = [
    ("csv", "front,back\nQ\x00,A\n"),
    ("csv", "front,back,explanation\nQ,A,why\x00\n"),
    ("quiz", "T\nS\n1. Q\x00?\nAnswer\nA.\n"),
    ("quiz", "T\x00\nS\n1. Q?\nAnswer\nA.\n"),
    ("csv", "front,back,key\nQ,A,k\nQ2,A2,k\n"),
    ("csv", "front,back,locale\nQ,A,es\n"),
    ("csv", "front,back,nope\nQ,A,x\n"),
    ("quiz", "T\nS\n1. Q?\nA.\n"),
    ("csv", f"front,back\n{'Q' * 20_001},A\n"),
]


@pytest.mark.parametrize(("fmt", "content"), FIXED_BAD_TEXT)
def test_known_bad_text_is_refused_with_nothing_written(
    engine: Engine, team_world: TeamWorld, fmt: str, content: str
) -> None:
    for target in ("new", "en", "es"):
        assert team_world.import_text(engine, target, fmt, content), (target, content)


# --- deck files (decks/<slug>/), as `flashcards decks sync` reads them ----------------------

DECK_FILES = ["deck.toml", "en.deck", "es.deck", "ko.deck"]


def test_mutated_deck_files_sync_or_refuse_cleanly(engine: Engine, tmp_path: Path) -> None:
    # The shipped deck is in the database and has been studied, so a sync that gets through
    # the parser exercises the update path: edited texts, retired and restored cards.
    with transaction(engine) as s:
        for source in load_decks(DECKS):
            sync_deck(s, source, now=T0)
        user = f.make_user(s)
        deck = s.scalars(select(Deck)).one()
        f.subscribe(s, user, deck)
        f.answer(s, user, f.card_ids(s, deck.id)[0], "good", now=T0)
    originals = {name: (DECKS / "eks-model-training" / name).read_bytes() for name in DECK_FILES}
    content = st.one_of(
        st.sampled_from(DECK_FILES).flatmap(
            lambda name: st.tuples(st.just(name), mutate(originals[name].decode()).map(str.encode))
        ),
        st.tuples(st.sampled_from(DECK_FILES), st.text(max_size=300).map(str.encode)),
        st.tuples(st.sampled_from(DECK_FILES), st.binary(max_size=300)),
    )
    outcomes: list[bool] = []

    def check(case: tuple[str, bytes]) -> None:
        name, data = case
        folder = tmp_path / str(len(outcomes)) / "eks-model-training"
        shutil.copytree(DECKS / "eks-model-training", folder)
        (folder / name).write_bytes(data)
        outcomes.append(
            refused_cleanly(
                engine,
                lambda s: [sync_deck(s, source, now=T0) for source in load_decks(folder)],
            )
        )

    sweep(engine, content, check)
    # Both ways out were taken: the sweep reached the sync, not only the parser's errors.
    assert set(outcomes) == {True, False}, outcomes


# --- .apkg ----------------------------------------------------------------------------------


def valid_package(engine: Engine) -> tuple[int, bytes]:
    """A package of ours with progress in it, and the user who imports the mutants."""
    with transaction(engine) as s:
        user = f.make_user(s)
        deck = f.make_deck(s, "apkg-source", 3, locales=("en", "es"))
        f.subscribe(s, user, deck)
        for card in f.card_ids(s, deck.id)[:2]:
            f.answer(s, user, card, "good", now=T0)
        package = export_deck(s, deck.id, locales=None, user_id=user, with_scheduling=True, now=T0)
    return user, package.data


def collection_of(package: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(package)) as z:
        return z.read("collection.anki2")


def rezip(collection: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("collection.anki2", collection)
    return buffer.getvalue()


def byte_mutants(valid: bytes) -> st.SearchStrategy[bytes]:
    n = len(valid)
    flip = st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, 255)), min_size=1, max_size=8)
    return st.one_of(
        flip.map(lambda fl: bytes(b ^ dict(fl).get(i, 0) for i, b in enumerate(valid))),
        st.integers(0, n - 1).map(lambda i: valid[:i]),
        st.tuples(st.integers(0, n), st.integers(0, n), st.binary(max_size=64)).map(
            lambda t: valid[: min(t[:2])] + t[2] + valid[max(t[:2]) :]
        ),
        st.binary(max_size=512),
        st.binary(max_size=64).map(lambda b: b"PK\x03\x04" + b),
    )


# SQL that reshapes a real collection the way a hand-made or hostile package might.
COLUMNS = {
    "col": ["crt", "ver", "conf", "models", "decks", "dconf"],
    "notes": ["id", "guid", "mid", "mod", "tags", "flds"],
    "cards": ["id", "nid", "did", "ord", "type", "queue", "due", "ivl", "factor", "reps",
              "lapses", "left", "odue", "odid", "data"],
    "revlog": ["id", "cid", "ease", "ivl", "lastIvl", "factor", "time", "type"],
}  # fmt: skip
SQL_VALUES = st.one_of(
    st.none(),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([0, -1, 1, 2**31, 2**53, -(2**62)]),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.sampled_from(['{"1": {}}', '{"x": {"id": "y"}}', "[]", "null", '{"lrt": -5}', "\x1f"]),
    st.binary(max_size=8),
)


def edited_collection(collection: bytes, tmp: Path, edits: list[tuple[str, str, Any]]) -> bytes:
    path = tmp / "edited.anki2"
    path.write_bytes(collection)
    conn = sqlite3.connect(path)
    try:
        for table, column, value in edits:
            # An edit SQLite refuses (a text id for an INTEGER PRIMARY KEY) is left out.
            with contextlib.suppress(sqlite3.Error):
                conn.execute(f'UPDATE {table} SET "{column}" = ?', (value,))
        conn.commit()
    finally:
        conn.close()
    data = path.read_bytes()
    path.unlink()
    return data


def import_refused_cleanly(engine: Engine, user: int, data: bytes, scheduling: bool) -> bool:
    return refused_cleanly(
        engine,
        lambda s: import_package(
            s,
            data,
            owner_user_id=user,
            with_scheduling=scheduling,
            now=T0,
            max_bytes=1 << 20,
            max_unpacked_bytes=4 << 20,
        ),
    )


def test_valid_package_imports(engine: Engine) -> None:
    user, data = valid_package(engine)
    # The sweeps below mean something only if the unmutated package is accepted.
    assert not import_refused_cleanly(engine, user, data, True)


def test_mutated_package_bytes_succeed_or_refuse_cleanly(engine: Engine) -> None:
    user, data = valid_package(engine)
    sweep(
        engine,
        st.tuples(byte_mutants(data), st.booleans()),
        lambda case: import_refused_cleanly(engine, user, *case),
    )


def test_mutated_collections_succeed_or_refuse_cleanly(engine: Engine, tmp_path: Path) -> None:
    user, data = valid_package(engine)
    collection = collection_of(data)
    mutants = st.one_of(
        any_column_edits(COLUMNS).map(lambda e: edited_collection(collection, tmp_path, e)),
        byte_mutants(collection),
    ).map(rezip)
    sweep(
        engine,
        st.tuples(mutants, st.booleans()),
        lambda case: import_refused_cleanly(engine, user, *case),
    )


def modern_package(tmp_path: Path) -> bytes:
    """A package Anki writes today: `meta`, a zstd-compressed schema-18 collection (note
    types and fields in tables of their own), reviews in it."""
    col = Collection(str(tmp_path / "modern.anki2"))
    try:
        studied_in_anki(col, 3, (3,))  # one answer to a new card: fine at any time of day
        return anki_export(col, tmp_path / "modern.apkg", legacy=False)
    finally:
        col.close()


def modern_members(package: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(package)) as z:
        members = {name: z.read(name) for name in z.namelist()}
    # Anki's frames do not record their size, so a one-shot decompress cannot size its output.
    stream = zstandard.ZstdDecompressor().decompressobj()
    members["collection.anki21b"] = stream.decompress(members["collection.anki21b"])
    return members


def modern_repacked(members: dict[str, bytes], collection: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(
                name, zstandard.compress(collection) if name == "collection.anki21b" else data
            )
    return buffer.getvalue()


@st.composite
def any_column_edits(draw: st.DrawFn, columns: dict[str, list[str]]) -> list[tuple[str, str, Any]]:
    tables = st.sampled_from(sorted(columns))
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        table = draw(tables)
        edits.append((table, draw(st.sampled_from(columns[table])), draw(SQL_VALUES)))
    return edits


def test_mutated_modern_collections_succeed_or_refuse_cleanly(
    engine: Engine, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
    members = modern_members(modern_package(tmp_path))
    collection = members["collection.anki21b"]
    assert not import_refused_cleanly(engine, user, modern_repacked(members, collection), True)
    # Every column of every table the reader may look at, found in the collection itself.
    path = tmp_path / "probe.anki2"
    path.write_bytes(collection)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        columns = {
            table: [c[1] for c in conn.execute(f'PRAGMA table_info("{table}")')]
            for table in (
                "col",
                "notes",
                "cards",
                "revlog",
                "notetypes",
                "fields",
                "config",
                "decks",
            )
        }
    mutants = st.one_of(
        any_column_edits(columns).map(lambda e: edited_collection(collection, tmp_path, e)),
        byte_mutants(collection),
    ).map(lambda edited: modern_repacked(members, edited))
    sweep(
        engine,
        st.tuples(mutants, st.booleans()),
        lambda case: import_refused_cleanly(engine, user, *case),
    )


def test_mutated_packages_through_the_api_are_imported_or_4xx(
    client: FlaskClient, engine: Engine, tmp_path: Path
) -> None:
    user, data = valid_package(engine)
    with transaction(engine) as s:
        headers = {
            "Authorization": f"Bearer {f.make_token(s, user)}",
            "Content-Type": "application/octet-stream",
        }

    def check(case: tuple[bytes, bool]) -> None:
        package, scheduling = case
        with Session(engine) as s:
            before = dump(s)
        query = "?with_scheduling=true" if scheduling else ""
        r = client.post(f"/api/v1/imports{query}", data=package, headers=headers)
        # 200: a package close enough to one imported before updates that deck.
        imported = r.status_code == 201 or (r.status_code == 200 and r.get_json()["updated"])
        assert imported or 400 <= r.status_code < 500, r.get_data(as_text=True)
        if not imported:
            assert r.mimetype == "application/problem+json"
            assert r.get_json()["detail"]
            with Session(engine) as s:
                assert dump(s) == before

    mutants = st.one_of(
        byte_mutants(data),
        any_column_edits(COLUMNS).map(lambda e: rezip(edited_collection(collection, tmp, e))),
    )
    collection, tmp = collection_of(data), tmp_path
    sweep(engine, st.tuples(mutants, st.booleans()), check)


def test_nul_through_the_web_forms_is_refused_with_nothing_written(
    client: FlaskClient, engine: Engine, team_world: TeamWorld
) -> None:
    # NUL is no text: every form value with it is a 400 before any view runs (it used to
    # reach the domain, a 500 on PostgreSQL before team_decks refused it).
    form = {"csrf_token": csrf(client), "email": "", "password": f.PASSWORD}
    with Session(engine) as s:
        lead = s.get(User, team_world.lead)
        assert lead is not None
        form["email"] = lead.email
    assert client.post("/signin", data=form).status_code == 302
    token = csrf(client, "/")
    with Session(engine) as s:
        before = dump(s)
    team = team_world.team
    for url, data, status in [
        (f"/teams/{team}/decks", {"format": "csv", "content": "Q\x00,A\n", "title": "T"}, 400),
        (f"/teams/{team}/decks", {"format": "quiz", "content": QUIZ_VALID + "\x00"}, 400),
        (f"/teams/{team}/decks/{team_world.slug}/cards/sum",
         {"locale": "en", "question": "Q\x00", "answer": "A"}, 400),
    ]:  # fmt: skip
        r = client.post(url, data={"csrf_token": token, **data})
        assert r.status_code == status, (url, r.status_code)
    with Session(engine) as s:
        assert dump(s) == before


def test_nul_in_deck_and_quiz_files_is_a_file_line_error(
    cli: CliRunner, engine: Engine, tmp_path: Path
) -> None:
    deck = tmp_path / "decks" / "nul-deck"
    deck.mkdir(parents=True)
    (deck / "deck.toml").write_text('default_locale = "en"\n')
    (deck / "en.deck").write_text("title: T\n\n== k\nQ\x00\n--\nA\n")
    with Session(engine) as s:
        before = dump(s)
    result = cli.invoke(main, ["decks", "sync", str(tmp_path / "decks")])
    assert result.exit_code != 0 and "en.deck:4: a NUL character" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    with Session(engine) as s:
        assert dump(s) == before
    quiz = tmp_path / "quiz.txt"
    quiz.write_text(QUIZ_VALID.replace("Sky", "S\x00ky"))
    result = cli.invoke(main, ["decks", "import-quiz", str(quiz), "--locale", "en"])
    assert result.exit_code != 0 and "quiz.txt:6: a NUL character" in result.output
