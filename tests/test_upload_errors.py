"""A refused team deck upload names the line and the reason, on every edge: the domain's
error carries them as data, the web words them in the person's language, the API returns them
as problem members, the CLI as its line. An upload over the size limit shows its form again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from flashcards.cli import main
from flashcards.decks.cloze import MAX_CLOZE_CARDS
from flashcards.decks.deckfile import CardSource
from flashcards.errors import DeckFileError, TooManyCards, UploadTooLarge
from flashcards.people.accounts import create_user, issue_token
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, Deck
from flashcards.teams.deck_uploads import MAX_CARDS, MAX_UPLOAD_BYTES, parse_upload
from flashcards.web.uploads import MULTIPART_SLACK

from .conftest import T0
from .web_helpers import csrf, sign_up

CSV_HEADER = "front,back\n"
MANY_DELETIONS = " ".join(f"{{{{c{n}::w{n}}}}}" for n in range(1, MAX_CLOZE_CARDS + 2))


def _line_error(fmt: str, content: str) -> DeckFileError:
    with pytest.raises(DeckFileError) as caught:
        parse_upload(fmt, content, "en", "Title")
    return caught.value


@pytest.mark.parametrize(
    ("content", "line", "reason", "facts"),
    [
        ("front,back\nQ,\n", 2, "empty-back", {}),
        ("front,back\n,A\n", 2, "empty-front", {}),
        # Blank lines count: the number is the line an editor shows.
        ("Q1,A1\n\n\nQ2,  \n", 4, "empty-back", {}),
        ("Q1,A1\nQ2,A2,k2,en,extra\n", 2, "extra-cells", {"cells": 5, "columns": 4}),
        ("front,back,colour\nQ,A,red\n", 1, "unknown-column", {"column": "colour"}),
        ("front,back,key\nQ,A,Bad Key\n", 2, "invalid-key", {"key": "Bad Key"}),
        ("front,back,key\nQ,A,k\nR,B,k\n", 3, "duplicate-key", {"key": "k", "locale": "en"}),
        ('Q1,A1\nQ2,"' + "x" * 20_001 + '"\n', 2, "too-long", {"limit": 20_000}),
        ("Q1,A1\nQ2,A\x002\n", 2, "nul", {}),
        # A quotation mark left open is named on the line it opens, not taken as one long
        # cell holding every row after it; a stray one, on its own line.
        ('front,back\n"Unclosed,answer\nQ2,A2\nQ3,A3\n', 2, "csv-syntax", {}),
        ('front,back\nQ1,A1\n"Q2"?,A2\n', 3, "csv-syntax", {}),
        # A Cloze front: its back may be empty, but not the deletions' own closing.
        ('Q1,A1\n"{{c1::Paris}} is in {{c2::France.",\n', 2, "cloze-unclosed", {"number": 2}),
        ("Q1,A1\n{{c1::Paris is in France.,A\n", 2, "cloze-unclosed", {"number": 1}),
        ("Q1,A1\n" + MANY_DELETIONS + ",\n", 2, "too-many-deletions", {"limit": 100}),
        ("Q1,A1\n{{c1::}},\n", 2, "empty-front", {}),
        (
            "front,back,key\n{{c1::a}} b,,k\nQ,A,k-c1\n",
            3,
            "duplicate-key",
            {"key": "k-c1", "locale": "en"},
        ),
        (
            "front,back,key\n{{c1::a}} b,,k\nQ,A,k\n",
            3,
            "duplicate-key",
            {"key": "k", "locale": "en"},
        ),
        # Its back and explanation are one text, the cards' Back Extra.
        (
            "front,back,explanation\n{{c1::a}} b," + "x" * 15_000 + "," + "y" * 5_000 + "\n",
            2,
            "too-long",
            {"limit": 20_000},
        ),
    ],
)
def test_csv_errors_carry_line_and_reason(
    content: str, line: int, reason: str, facts: dict[str, object]
) -> None:
    error = _line_error("csv", content)
    assert (error.line, error.reason, error.facts) == (line, reason, facts)
    assert error.detail.startswith(f"upload:{line}: ")


def test_csv_without_cards_says_so() -> None:
    assert _line_error("csv", "  \n").reason == "empty"
    header_only = _line_error("csv", CSV_HEADER)
    assert (header_only.line, header_only.reason) == (None, "header-only")


@pytest.mark.parametrize(
    ("content", "line", "reason", "facts"),
    [
        ("Quiz\n1. Q?\nAnswer\n", 3, "no-answer", {"question": 1}),
        ("Quiz\n1. Q?\nA.\n", 3, "no-marker", {"question": 1}),
        (
            "Quiz\n1. Q?\nAnswer\nA.\n3. R?\nAnswer\nB.\n",
            5,
            "question-number",
            {"found": 3, "expected": 2},
        ),
        ("Quiz\nSub\nMore\n1. Q?\nAnswer\nA.\n", 3, "no-question-one", {}),
        ("Quiz\n1. Q?\nAnswer\nAnswer\nA.\n", 4, "second-marker", {"question": 1}),
    ],
)
def test_quiz_errors_carry_line_and_reason(
    content: str, line: int, reason: str, facts: dict[str, object]
) -> None:
    error = _line_error("quiz", content)
    assert (error.line, error.reason, error.facts) == (line, reason, facts)


def test_the_card_cap_is_its_own_error_with_the_count() -> None:
    rows = "".join(f"Q{i},A{i}\n" for i in range(MAX_CARDS + 1))
    with pytest.raises(TooManyCards) as caught:
        parse_upload("csv", rows, "en", "Big")
    assert (caught.value.count, caught.value.limit) == (MAX_CARDS + 1, MAX_CARDS)
    # A translation's rows are not more cards: 3,000 cards in two languages is 3,000 cards.
    two = "front,back,key,locale\n" + "".join(
        f"Q{i},A{i},k{i},{loc}\n" for loc in ("en", "es") for i in range(3000)
    )
    assert len(parse_upload("csv", two, "en", "Two")) == 2
    quiz = "Quiz\n" + "".join(f"{i}. Q{i}?\nAnswer\nA{i}.\n" for i in range(1, MAX_CARDS + 2))
    with pytest.raises(TooManyCards):
        parse_upload("quiz", quiz, "en", None)


def test_a_cloze_front_makes_a_card_for_each_number() -> None:
    csv_text = (
        "front,back,key,locale,explanation\n"
        '"{{c1::Paris}} is the capital of {{c2::France::country}}.",In Europe.,,en,Since 987.\n'
        "Madrid?,Spain,,en,\n"
        "{{c1::Rome}} is in Italy.,,rome,en,\n"
        # A translation's Cloze row: the same keys, the n-th row of each language.
        '"{{c1::París}} es la capital de {{c2::Francia::país}}.",,,es,\n'
    )
    en, es = parse_upload("csv", csv_text, "en", "Capitals")
    whole = "Paris is the capital of France."
    assert en.cards == (
        CardSource("q01-c1", "[...] is the capital of France.", whole,
                   "In Europe.\n\nSince 987.", 2, "q01"),
        CardSource("q01-c2", "Paris is the capital of [country].", whole,
                   "In Europe.\n\nSince 987.", 2, "q01"),
        CardSource("q02", "Madrid?", "Spain", "", 3),
        CardSource("rome-c1", "[...] is in Italy.", "Rome is in Italy.", "", 4, "rome"),
    )  # fmt: skip
    assert [(c.key, c.question) for c in es.cards] == [
        ("q01-c1", "[...] es la capital de Francia."),
        ("q01-c2", "París es la capital de [país]."),
    ]
    # No opening "{{cN::" (or only c0, which Anki makes no card of): a plain card, back needed.
    for plain in ("{{c0::Paris}} is in France.", "Is {{Paris}} in France?"):
        assert _line_error("csv", f"{CSV_HEADER}{plain},\n").reason == "empty-back"


def test_the_card_cap_counts_a_cloze_rows_cards() -> None:
    cloze_row = " ".join(f"{{{{c{n}::w}}}}" for n in range(1, 51)) + ",\n"
    full = cloze_row * (MAX_CARDS // 50)
    assert len(parse_upload("csv", full, "en", "Full")[0].cards) == MAX_CARDS
    with pytest.raises(TooManyCards) as caught:
        parse_upload("csv", full + cloze_row * 2 + "Q,A\n", "en", "Big")
    assert caught.value.count == MAX_CARDS + 101
    # A line's problem is still said first, past the cap too.
    assert _line_error("csv", full + cloze_row + "{{c1::open,\n").reason == "cloze-unclosed"


def test_the_size_limit_is_counted_in_bytes() -> None:
    line = "질문,답\n"  # 4 characters, 11 bytes
    korean = line * (MAX_UPLOAD_BYTES // len(line.encode()) + 1)
    assert len(korean) < MAX_UPLOAD_BYTES
    with pytest.raises(UploadTooLarge) as caught:
        parse_upload("csv", korean, "ko", "Big")
    assert caught.value.limit == MAX_UPLOAD_BYTES


# --- the web ---


def _lead_with_team(app: Flask, language: str = "en") -> tuple[FlaskClient, int, str]:
    lead = app.test_client()
    sign_up(lead, "lead@example.com", language=language)
    token = csrf(lead, "/teams")
    response = lead.post("/teams", data={"csrf_token": token, "name": "Platform"})
    team = int(response.headers["Location"].rsplit("/", 1)[-1])
    return lead, team, f"/teams/{team}/decks"


def _upload(
    client: FlaskClient, path: str, *, content: str = "", file: bytes | None = None, **form: str
):  # type: ignore[no-untyped-def]
    """A multipart post built here, as bytes: the test client would spool a large body to a
    temporary file that nobody closes when the server refuses it unread."""
    fields = {"csrf_token": csrf(client, path), "format": "csv", "locale": "en", **form}
    if not file:
        fields["content"] = content
    parts = [
        f'--b\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    if file is not None:
        head = '--b\r\nContent-Disposition: form-data; name="file"; filename="cards.csv"\r\n'
        parts.append(f"{head}Content-Type: text/csv\r\n\r\n".encode() + file + b"\r\n")
    body = b"".join(parts) + b"--b--\r\n"
    return client.post(path, data=body, content_type="multipart/form-data; boundary=b")


def _team_decks(engine: Engine) -> int:
    with engine.connect() as c:
        return c.scalar(select(func.count()).where(Deck.owner_team_id.is_not(None))) or 0


def test_the_web_names_the_line_and_the_reason(app: Flask, engine: Engine) -> None:
    lead, _team, decks = _lead_with_team(app)
    response = _upload(lead, decks, content="front,back\nQ,\n", title="Ops glossary")
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "Line 2: the back is empty." in page
    assert 'value="Ops glossary"' in page  # what was typed is kept
    assert "cannot be read as a quiz" not in page

    rows = "".join(f"Q{i},A{i}\n" for i in range(6000))
    page = _upload(lead, decks, content=rows, title="Big").get_data(as_text=True)
    assert "6,000 cards: a team deck holds at most 5,000." in page

    quiz = _upload(lead, decks, content="Quiz\n1. Q?\nAnswer\n", format="quiz")
    assert "Line 3: question 1 has no answer." in quiz.get_data(as_text=True)

    unclosed = _upload(lead, decks, content='Q1,A1\n"Q2,A2\nQ3,A3\n', title="T")
    page = unclosed.get_data(as_text=True)
    assert "Line 2: this is not valid CSV (is a quotation mark left open?)." in page
    latin1 = _upload(lead, decks, file="Q1,A1\nQ2,Ñ\n".encode("latin-1"), title="T")
    assert "Line 2: this is not UTF-8 text." in latin1.get_data(as_text=True)
    # The field the problem is in is the one marked: the file, the text pasted, the title.
    invalid = re.compile(r'<(?:input|textarea|select) id="deck-(\w+)"[^>]*aria-invalid="true"')
    assert invalid.findall(latin1.get_data(as_text=True)) == ["file"]
    assert invalid.findall(page) == ["content"]
    untitled = _upload(lead, decks, content="Q1,A1\n", title="")
    assert invalid.findall(untitled.get_data(as_text=True)) == ["title"]
    assert _team_decks(engine) == 0


def test_the_web_says_it_in_the_persons_language(app: Flask, engine: Engine) -> None:
    lead, _team, decks = _lead_with_team(app, "es")
    page = _upload(lead, decks, content="front,back\nQ,\n", title="T").get_data(as_text=True)
    assert "Línea 2: el reverso está vacío." in page
    rows = "".join(f"Q{i},A{i}\n" for i in range(12_000))
    page = _upload(lead, decks, content=rows, title="Big").get_data(as_text=True)
    assert "12.000 tarjetas: un mazo de equipo tiene como máximo 5.000." in page


def test_a_bad_cloze_text_names_its_line_and_writes_nothing(app: Flask, engine: Engine) -> None:
    lead, _team, decks = _lead_with_team(app)
    bad = 'Q1,A1\n"{{c1::Paris}} is in {{c2::France.",\n'
    response = _upload(lead, decks, content=bad, title="Capitals")
    assert response.status_code == 422
    assert "Line 2: the Cloze deletion {{c2::…}} is not closed with }}." in response.get_data(
        as_text=True
    )
    assert _team_decks(engine) == 0
    # Nor in a new version of a deck: its cards stay as they were, none of the good rows'.
    good = 'Q1,A1\n"{{c1::Paris}} is in {{c2::France}}.",\n'
    deck_page = _upload(lead, decks, content=good, title="Capitals").headers["Location"]
    before = _deck_cards(engine)
    many = "Q0,A0\n{{c1::Rome}} is in Italy.,\n" + MANY_DELETIONS + ",\n"
    response = _upload(lead, f"{deck_page}/source", content=many, title="Capitals")
    assert response.status_code == 422
    assert (
        "Line 3: a Cloze text makes a card for each deletion number: at most 100."
        in response.get_data(as_text=True)
    )
    assert (
        _deck_cards(engine)
        == before
        == [
            ("q01", "Q1", None),
            ("q02-c1", "[...] is in France.", "q02"),
            ("q02-c2", "Paris is in [...].", "q02"),
        ]
    )


def _deck_cards(engine: Engine) -> list[tuple[str, str, str | None]]:
    """Every card of every deck, as key, English question and its note key's stem."""
    with engine.connect() as c:
        rows = c.execute(
            select(Card.key, CardText.question, Card.note_key)
            .join(CardText, CardText.card_id == Card.id)
            .where(Card.retired_at.is_(None))
            .order_by(Card.deck_id, Card.position)
        )
        return [(key, question, note and note.rsplit("-", 1)[0]) for key, question, note in rows]


def test_the_upload_form_states_its_limits(app: Flask, engine: Engine) -> None:
    lead, _team, decks = _lead_with_team(app, "es")
    page = lead.get(decks).get_data(as_text=True)
    assert "Un archivo o un texto de hasta 4 MiB, con 5.000 tarjetas como máximo." in page
    library = lead.get("/").get_data(as_text=True)
    assert "Paquetes de hasta 64 MiB, con 100.000 notas como máximo." in library


def test_an_upload_over_the_limit_shows_the_form_again(app: Flask, engine: Engine) -> None:
    lead, team, decks = _lead_with_team(app)
    # Just over the limit: the body is read, so the typed fields come back.
    over = b"Q,A\n" * (MAX_UPLOAD_BYTES // 4) + b"Q,A\n"
    response = _upload(lead, decks, file=over, title="Kept title", format="csv")
    assert response.status_code == 413
    page = response.get_data(as_text=True)
    assert "This upload is too large: a quiz text or CSV may have up to 4 MiB." in page
    assert 'value="Kept title"' in page and '<form method="post"' in page
    assert 'value="csv" checked' in page

    # Far over it, refused before the body is read: the same page, its form empty.
    far = b"x" * (MAX_UPLOAD_BYTES + MULTIPART_SLACK + 1)
    response = _upload(lead, decks, file=far, title="Lost")
    assert response.status_code == 413
    page = response.get_data(as_text=True)
    assert "This upload is too large" in page and 'id="deck-title"' in page
    assert "Something went wrong" not in page

    # A language's upload on a deck's page, the same.
    made = _upload(lead, decks, content="Q1,A1\nQ2,A2\n", title="Small")
    deck_page = made.headers["Location"]
    response = _upload(lead, f"{deck_page}/source", file=far, locale="es")
    assert response.status_code == 413
    page = response.get_data(as_text=True)
    assert "This upload is too large" in page and 'id="upload-title"' in page
    assert "Q1" in page  # the deck's cards, as its page shows them
    assert _team_decks(engine) == 1
    del team


def test_a_visitor_over_the_body_limit_gets_no_upload_page(app: Flask, engine: Engine) -> None:
    lead, team, decks = _lead_with_team(app)
    visitor = app.test_client()
    head = b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n'
    response = visitor.post(
        decks,
        data=head + b"x" * (2 * 1024 * 1024) + b"\r\n--b--\r\n",
        content_type="multipart/form-data; boundary=b",
    )
    assert response.status_code == 413
    assert "This upload is too large" not in response.get_data(as_text=True)
    del lead, team


# --- the API ---


def _api_lead(client: FlaskClient, engine: Engine) -> tuple[dict[str, str], int]:
    with transaction(engine) as s:
        user = create_user(s, "api-lead@example.com", "correct horse battery", now=T0)
        token = issue_token(s, user.id, now=T0)
    headers = {"Authorization": f"Bearer {token}"}
    team = client.post("/api/v1/teams", json={"name": "API team"}, headers=headers).get_json()
    return headers, int(team["id"])


def test_the_api_returns_line_and_reason(client: FlaskClient, engine: Engine) -> None:
    headers, team = _api_lead(client, engine)
    url = f"/api/v1/teams/{team}/decks"
    body = {"format": "csv", "content": "front,back\nQ,\n", "locale": "en", "title": "T"}
    response = client.post(url, json=body, headers=headers)
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert problem["line"] == 2 and problem["reason"] == "empty-back"
    assert problem["type"] == "/api/v1/problems/invalid-deck-file"
    assert problem["detail"] == "upload:2: the back is empty"

    rows = "".join(f"Q{i},A{i}\n" for i in range(6000))
    response = client.post(url, json={**body, "content": rows}, headers=headers)
    problem = response.get_json()
    assert response.status_code == 422 and problem["reason"] == "too-many-cards"
    assert problem["type"] == "/api/v1/problems/too-many-cards"
    assert problem["detail"] == "6000 cards: a team deck holds at most 5000"

    bad_cloze = {**body, "content": 'Q,A\n"{{c1::Paris}} is in {{c2::France",\n'}
    problem = client.post(url, json=bad_cloze, headers=headers).get_json()
    assert (problem["line"], problem["reason"]) == (2, "cloze-unclosed")
    assert problem["detail"] == "upload:2: the Cloze deletion {{c2:: is not closed with }}"

    bad_locale = {**body, "content": "front,back,locale\nQ,A,zz\n"}
    problem = client.post(url, json=bad_locale, headers=headers).get_json()
    assert (problem["line"], problem["reason"]) == (2, "unknown-locale")

    # Over the body limit it stays a 413 problem.
    huge = {**body, "content": "Q,A\n" * 300_000}
    response = client.post(url, json=huge, headers=headers)
    assert response.status_code == 413 and response.mimetype == "application/problem+json"
    assert _team_decks(engine) == 0


# --- the CLI ---


def test_the_cli_names_the_line_and_the_reason(
    cli: CliRunner, tmp_path: Path, engine: Engine
) -> None:
    quiz = tmp_path / "quiz.txt"
    quiz.write_text("Quiz\n1. Q?\nAnswer\n\n2. R?\nAnswer\nB.\n", encoding="utf-8")
    result = cli.invoke(
        main, ["decks", "import-quiz", str(quiz), "--locale", "en", "--decks-dir", str(tmp_path)]
    )
    assert result.exit_code != 0
    assert re.search(rf"Error: {re.escape(str(quiz))}:3: question 1 has no answer", result.output)
