"""Lookalike accounts: emails and names are normalised (NFKC, case), invisible and
direction-changing characters are refused wherever an account is made, renamed or looked up,
and a name mixing scripts is flagged in the team lead's member list (web and API)."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient
from sqlalchemy import Engine, select, update

from flashcards.cli import main
from flashcards.errors import InvalidInput
from flashcards.people import accounts
from flashcards.people.names import hidden_character, looks_like_another, mixed_script, script
from flashcards.storage import migrate
from flashcards.storage.engine import transaction
from flashcards.storage.models import TeamMember, User
from flashcards.teams import membership

from .conftest import T0
from .web_helpers import PASSWORD, csrf

PROBLEM = "application/problem+json"
HIDDEN = [
    "\u200b",  # zero-width space
    "\u200c",  # zero-width non-joiner
    "\u200d",  # zero-width joiner
    "\u200e",  # left-to-right mark
    "\u200f",  # right-to-left mark
    "\u202a",  # left-to-right embedding
    "\u202e",  # right-to-left override
    "\u2060",  # word joiner
    "\u2066",  # left-to-right isolate
    "\u2069",  # pop directional isolate
    "\ufeff",  # byte-order mark
    "\u00ad",  # soft hyphen (Cf too)
    "\u2028",  # line separator
    "\u3164",  # Hangul filler: a letter that renders as nothing
]


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(accounts, "PASSWORD_METHOD", "scrypt:1024:8:1")


# --- the pure helpers ---


@pytest.mark.parametrize("char", HIDDEN)
def test_hidden_characters_are_found(char: str) -> None:
    assert hidden_character(f"ali{char}ce") == char


@pytest.mark.parametrize(
    "text", ["Ana María", "김민수", "Иван", "山田 たろう", "Zoë", "O'Brien-Smith"]
)
def test_ordinary_names_have_no_hidden_character(text: str) -> None:
    assert hidden_character(text) is None


def test_scripts_are_read_from_unicode_names() -> None:
    assert script("a") == "LATIN"
    assert script("а") == "CYRILLIC"  # U+0430
    assert script("ο") == "GREEK"  # U+03BF
    assert script("山") == "HAN"
    assert script("김") == "HANGUL"
    assert script("1") is None and script("-") is None


@pytest.mark.parametrize(
    ("name", "mixed"),
    [
        ("pаypal", True),  # Cyrillic а in a Latin word
        ("Alicе", True),  # Cyrillic е at the end
        ("Jοhn", True),  # Greek omicron
        ("аlice@example.test", True),  # in an email too
        ("Alice", False),
        ("Иван Smith", False),  # two words, each in one script
        ("Ελληνικά", False),
        ("山田たろう", False),  # Han and Hiragana: Japanese
        ("ヤマダ太郎", False),  # Katakana and Han
        ("김민수金", False),  # Hangul and Han: Korean
        ("Ａｌｉｃｅ", False),  # fullwidth Latin is Latin after NFKC
        ("", False),
    ],
)
def test_mixed_script_words_are_detected(name: str, mixed: bool) -> None:
    assert mixed_script(name) is mixed


def test_looks_like_another_covers_names_emails_and_hidden_characters() -> None:
    assert looks_like_another("Alice", "alice\u200b@example.test")
    assert looks_like_another("Аlice", "alice@example.test")
    assert not looks_like_another("Alice", "alice@example.test")


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("ALICE@Example.TEST", "alice@example.test"),
        ("ａｌｉｃｅ@ｅｘａｍｐｌｅ.test", "alice@example.test"),  # fullwidth
        ("  alice@example.test ", "alice@example.test"),
        ("straße@example.test", "strasse@example.test"),  # case folded, not just lowered
    ],
)
def test_emails_are_normalised(typed: str, stored: str) -> None:
    assert accounts.normalise_email(typed) == stored


@pytest.mark.parametrize("char", HIDDEN)
def test_emails_with_hidden_characters_are_refused(char: str) -> None:
    with pytest.raises(InvalidInput) as info:
        accounts.normalise_email(f"alice{char}@example.test")
    assert info.value.field == "email"


# --- where accounts are made and found ---


def test_sign_up_and_sign_in_use_the_normal_form(client: FlaskClient, engine: Engine) -> None:
    made = client.post(
        "/api/v1/users",
        json={
            "email": "ＡＬＩＣＥ@example.test",
            "password": PASSWORD,
            "display_name": "Ａｌｉｃｅ",
        },
    )
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["email"] == "alice@example.test"
    assert made.get_json()["display_name"] == "Alice"
    # The lookalike spelling is the same account: taken, and it signs in.
    again = client.post("/api/v1/users", json={"email": "Alice@example.test", "password": PASSWORD})
    assert again.status_code == 409
    for spelling in ("alice@example.test", "ａｌｉｃｅ@example.test"):
        token = client.post("/api/v1/tokens", json={"email": spelling, "password": PASSWORD})
        assert token.status_code == 201


@pytest.mark.parametrize("char", ["\u200b", "\u202e", "\u2066", "\ufeff", "\u3164"])
def test_api_refuses_hidden_characters_in_emails_and_names(
    client: FlaskClient, engine: Engine, char: str
) -> None:
    body: dict[str, Any] = {"email": f"alice{char}@example.test", "password": PASSWORD}
    response = client.post("/api/v1/users", json=body)
    assert response.status_code == 422 and response.mimetype == PROBLEM
    assert response.get_json()["field"] == "email"
    body = {"email": "bob@example.test", "password": PASSWORD, "display_name": f"Bo{char}b"}
    response = client.post("/api/v1/users", json=body)
    assert response.status_code == 422 and response.get_json()["field"] == "display_name"
    # Nor may an existing account rename itself so.
    made = client.post("/api/v1/users", json={**body, "display_name": "Bob"})
    assert made.status_code == 201
    token = client.post(
        "/api/v1/tokens", json={"email": "bob@example.test", "password": PASSWORD}
    ).get_json()["token"]
    response = client.patch(
        "/api/v1/me",
        json={"display_name": f"Al{char}ice"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 422 and response.get_json()["field"] == "display_name"
    with transaction(engine) as s:
        assert s.scalars(select(User.display_name)).all() == ["Bob"]


def test_web_sign_up_refuses_hidden_characters(client: FlaskClient, engine: Engine) -> None:
    token = csrf(client, "/signup")
    form = {"csrf_token": token, "email": "alice\u200b@example.test", "password": PASSWORD}
    page = client.post("/signup", data=form)
    assert page.status_code == 422
    assert "name@example.com" in page.get_data(as_text=True)
    form = {**form, "email": "alice@example.test", "display_name": "\u202eecilA"}
    page = client.post("/signup", data=form)
    assert page.status_code == 422
    assert 'id="display_name-error"' in page.get_data(as_text=True)
    with transaction(engine) as s:
        assert s.scalars(select(User)).all() == []


def test_cli_add_refuses_hidden_characters_in_one_line(cli: CliRunner, engine: Engine) -> None:
    result = cli.invoke(main, ["users", "add", "alice\u200b@example.test"], input="s3cret pw\n")
    assert result.exit_code == 1
    assert "invisible" in result.output and "Traceback" not in result.output
    result = cli.invoke(
        main, ["users", "add", "alice@example.test", "--name", "A\u202elice"], input="s3cret pw\n"
    )
    assert result.exit_code == 1
    assert "display_name" in result.output and "Traceback" not in result.output
    result = cli.invoke(main, ["users", "add", "ＡＬＩＣＥ@example.test"], input="s3cret pw\n")
    assert result.exit_code == 0, result.output
    assert "alice@example.test" in result.output


# --- the lead's member list ---


def team_with_lookalikes(engine: Engine) -> tuple[int, str]:
    """A team whose owner is Alice, with a member named "Аlice" (Cyrillic А) and one whose
    email has a zero-width space, stored before such emails were refused."""
    with transaction(engine) as s:
        owner = accounts.create_user(
            s, "alice@example.test", PASSWORD, now=T0, display_name="Alice"
        )
        team = membership.create_team(s, owner.id, "Crew", now=T0)
        cyrillic = accounts.create_user(
            s, "mallory@example.test", PASSWORD, now=T0, display_name="Аlice"
        )
        hidden = accounts.create_user(s, "eve@example.test", PASSWORD, now=T0)
        s.execute(update(User).where(User.id == hidden.id).values(email="alice\u200b@example.test"))
        for member in (cyrillic, hidden):
            s.add(TeamMember(team_id=team.id, user_id=member.id, role="member", joined_at=T0))
        token = accounts.issue_token(s, owner.id, now=T0)
        return team.id, token


def test_api_member_list_flags_mixed_scripts(client: FlaskClient, engine: Engine) -> None:
    team_id, token = team_with_lookalikes(engine)
    response = client.get(
        f"/api/v1/teams/{team_id}/members", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 200
    flags = {m["email"]: m["mixed_script"] for m in response.get_json()["members"]}
    assert flags == {
        "alice@example.test": False,
        "mallory@example.test": True,
        "alice\u200b@example.test": True,
    }


def test_web_member_list_shows_a_badge(client: FlaskClient, engine: Engine) -> None:
    team_id, _token = team_with_lookalikes(engine)
    client.post(
        "/signin",
        data={"csrf_token": csrf(client), "email": "alice@example.test", "password": PASSWORD},
    )
    page = client.get(f"/teams/{team_id}").get_data(as_text=True)
    rows = [row for row in page.split("<tr>") if "example.test" in row]
    assert len(rows) == 3
    badged = {("mallory" in row or "\u200b" in row) for row in rows if "Mixed scripts" in row}
    assert badged == {True} and sum("Mixed scripts" in row for row in rows) == 2
    # Translated, as every string is.
    client.post("/language", data={"csrf_token": csrf(client, "/"), "locale": "es"})
    page = client.get(f"/teams/{team_id}").get_data(as_text=True)
    assert "Mixed scripts" not in page


# --- emails stored before the folding ---


def test_0012_folds_stored_emails_that_would_no_longer_be_found(engine: Engine) -> None:
    migrate.downgrade(engine, "0010")
    stored = {
        "ana@example.test": "ana@example.test",  # ASCII: untouched
        "straße@example.test": "strasse@example.test",
        "ｂｏｂ@example.test": "bob@example.test",  # fullwidth, as lower() left it
        "ǆ@example.test": "dž@example.test",  # a compatibility digraph
        "maße@example.test": "maße@example.test",  # its folded form is taken: kept
        "masse@example.test": "masse@example.test",
        "eve\u200b@example.test": "eve\u200b@example.test",  # a lookalike: left, flagged
    }
    with transaction(engine) as s:
        for email in stored:
            s.add(User(email=email, password_hash=accounts.hash_password(PASSWORD), created_at=T0))
    migrate.upgrade(engine)
    with transaction(engine) as s:
        assert set(s.scalars(select(User.email))) == set(stored.values())
        # Found again by the spelling their owners type.
        assert accounts.authenticate(s, "Straße@example.test", PASSWORD) is not None
        assert accounts.authenticate(s, "bob@example.test", PASSWORD) is not None


def test_the_documented_name_pattern_refuses_what_the_validator_refuses() -> None:
    """Clients validating with the OpenAPI document refuse the same names we do (in the
    Basic Multilingual Plane, all a JSON Schema pattern can name portably)."""
    import re

    from flashcards.api.models_accounts import SignUp
    from flashcards.srs.settings import CONTROL_CHARS

    pattern = re.compile(SignUp.model_json_schema()["properties"]["display_name"]["pattern"])
    for code in range(0x10000):
        char = chr(code)
        if 0xD800 <= code <= 0xDFFF:
            continue
        refused = hidden_character(char) is not None or CONTROL_CHARS.match(char) is not None
        assert (pattern.fullmatch(char) is None) is refused, hex(code)
