from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import Engine, func, select

from flashcards.errors import InvalidInput
from flashcards.people import accounts, web_sessions
from flashcards.people.token_hashes import token_hash
from flashcards.srs.settings import ME_FIELDS, apply_user_settings, user_settings, validate_settings
from flashcards.storage.engine import transaction
from flashcards.storage.models import ApiToken, SchedulerSettings, User, WebSession

from .conftest import T0


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The production cost (32 MiB, ~0.1 s a hash) is tested once in test_accounts.py.
    monkeypatch.setattr(accounts, "PASSWORD_METHOD", "scrypt:1024:8:1")


def add_user(
    engine: Engine, email: str = "ana@example.com", password: str = "correct horse"
) -> int:
    with transaction(engine) as s:
        return accounts.create_user(s, email, password, now=T0).id


def test_password_hash_is_memory_hard_and_verifies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # the production setting
    h = accounts.hash_password("correct horse")
    assert "correct horse" not in h
    assert h.startswith("scrypt:32768:8:1$")
    assert accounts.verify_password(h, "correct horse")
    assert not accounts.verify_password(h, "correct horsf")
    assert accounts.hash_password("correct horse") != h  # salted


def test_create_user_stores_lower_case_email_hash_and_default_settings(engine: Engine) -> None:
    with transaction(engine) as s:
        user = accounts.create_user(
            s, "  Ana@Example.COM ", "correct horse", now=T0, display_name="Ana", locale="es"
        )
        user_id = user.id
    with transaction(engine) as s:
        row = s.get(User, user_id)
        assert row is not None
        assert row.email == "ana@example.com"
        assert row.password_hash != "correct horse"
        assert row.created_at == T0
        assert (row.locale, row.timezone, row.is_admin) == ("es", "UTC", False)
        settings = s.get(SchedulerSettings, user_id)
        assert settings is not None
        assert settings.desired_retention == 0.9
        assert settings.learning_steps == [60, 600]


def test_emails_are_unique_case_insensitively(engine: Engine) -> None:
    add_user(engine, "ana@example.com")
    with pytest.raises(accounts.EmailTaken) as info, transaction(engine) as s:
        accounts.create_user(s, "ANA@example.com", "another password", now=T0)
    assert info.value.field == "email"
    with transaction(engine) as s:
        assert s.scalar(select(func.count()).select_from(User)) == 1


@pytest.mark.parametrize(
    ("email", "password", "field"),
    [
        ("not-an-email", "correct horse", "email"),
        ("a b@example.com", "correct horse", "email"),
        ("ana@example.com", "short", "password"),
        ("ana@example.com", "x" * 2000, "password"),
    ],
)
def test_create_user_rejects_bad_input_naming_the_field(
    engine: Engine, email: str, password: str, field: str
) -> None:
    with pytest.raises(InvalidInput) as info, transaction(engine) as s:
        accounts.create_user(s, email, password, now=T0)
    assert info.value.field == field


def test_authenticate(engine: Engine) -> None:
    user_id = add_user(engine)
    with transaction(engine) as s:
        user = accounts.authenticate(s, "ANA@example.com", "correct horse")
        assert user is not None and user.id == user_id
        assert accounts.authenticate(s, "ana@example.com", "wrong password") is None
        assert accounts.authenticate(s, "nobody@example.com", "correct horse") is None
        assert accounts.authenticate(s, "garbage", "correct horse") is None


def test_change_password(engine: Engine) -> None:
    user_id = add_user(engine)
    with pytest.raises(accounts.WrongPassword) as info, transaction(engine) as s:
        accounts.change_password(s, user_id, "wrong password", "new password!")
    assert info.value.field == "current_password"
    assert not isinstance(info.value, InvalidInput)  # the form catches it by name
    with pytest.raises(InvalidInput) as info, transaction(engine) as s:
        accounts.change_password(s, user_id, "correct horse", "short")
    assert info.value.field == "new_password"
    with transaction(engine) as s:
        accounts.change_password(s, user_id, "correct horse", "new password!")
    with transaction(engine) as s:
        assert accounts.authenticate(s, "ana@example.com", "correct horse") is None
        assert accounts.authenticate(s, "ana@example.com", "new password!") is not None


def test_a_new_password_revokes_api_tokens_only_when_asked(engine: Engine) -> None:
    ana, bo = add_user(engine), add_user(engine, "bo@example.com")
    with transaction(engine) as s:
        kept = accounts.issue_token(s, ana, now=T0)
        laptop, phone = (accounts.issue_token(s, ana, now=T0) for _ in range(2))
        bos = accounts.issue_token(s, bo, now=T0)
    with transaction(engine) as s:
        assert accounts.change_password(s, ana, "correct horse", "new password!") == 0
    with transaction(engine) as s:
        assert accounts.user_id_for_token(s, kept) == ana
        revoked = accounts.change_password(
            s, ana, "new password!", "newer password", revoke_tokens=True
        )
    assert revoked == 3
    with transaction(engine) as s:
        assert [accounts.user_id_for_token(s, t) for t in (kept, laptop, phone)] == [None] * 3
        assert accounts.user_id_for_token(s, bos) == bo  # only the user's own
        assert accounts.issue_token(s, bo, now=T0)
        # An administrator's reset does the same.
        assert accounts.set_password(s, bo, "reset password", revoke_tokens=True) == 2
    # A refused change revokes nothing: the failure rolls it all back.
    with transaction(engine) as s:
        token = accounts.issue_token(s, ana, now=T0)
    with pytest.raises(InvalidInput), transaction(engine) as s:
        accounts.change_password(s, ana, "newer password", "short", revoke_tokens=True)
    with transaction(engine) as s:
        assert accounts.user_id_for_token(s, token) == ana


def test_web_sessions_are_stored_hashed_end_and_expire(engine: Engine) -> None:
    user_id = add_user(engine)
    day = timedelta(days=1)
    with transaction(engine) as s:
        old = web_sessions.start(s, user_id, now=T0, lifetime=31 * day)
        phone = web_sessions.start(s, user_id, now=T0 + 20 * day, lifetime=31 * day)
    with transaction(engine) as s:
        assert old not in s.scalars(select(WebSession.id_hash)).all()
        found = web_sessions.user_of(s, user_id, phone, now=T0 + 21 * day, lifetime=31 * day)
        assert found is not None and found.user.id == user_id
        # Another user's id with this session, or a made-up session: nobody.
        assert web_sessions.user_of(s, user_id + 1, phone, now=T0, lifetime=31 * day) is None
        assert web_sessions.user_of(s, user_id, "x" * 43, now=T0, lifetime=31 * day) is None
        # Past its lifetime a session is over, and the next sign-in drops its row.
        late = T0 + 32 * day
        assert web_sessions.user_of(s, user_id, old, now=late, lifetime=31 * day) is None
        laptop = web_sessions.start(s, user_id, now=late, lifetime=31 * day)
        assert s.scalar(select(func.count()).select_from(WebSession)) == 2  # phone, laptop
        web_sessions.end(s, laptop)
        assert web_sessions.user_of(s, user_id, laptop, now=late, lifetime=31 * day) is None
        assert web_sessions.user_of(s, user_id, phone, now=late, lifetime=31 * day)
        # Signing in again in the same browser ends the session it held.
        again = web_sessions.start(s, user_id, now=late, lifetime=31 * day, replacing=phone)
        assert web_sessions.user_of(s, user_id, phone, now=late, lifetime=31 * day) is None
        # A new password ends every session, by the person or by an administrator.
        accounts.change_password(s, user_id, "correct horse", "a new passphrase")
        assert web_sessions.user_of(s, user_id, again, now=late, lifetime=31 * day) is None
        again = web_sessions.start(s, user_id, now=late, lifetime=31 * day)
        accounts.set_password(s, user_id, "an admin's reset")
        assert s.scalar(select(func.count()).select_from(WebSession)) == 0


def test_a_web_session_in_use_is_renewed_and_one_unused_ends(engine: Engine) -> None:
    user_id = add_user(engine)
    day, life = timedelta(days=1), timedelta(days=31)
    with transaction(engine) as s:
        sid = web_sessions.start(s, user_id, now=T0, lifetime=life)
        fresh = web_sessions.user_of(s, user_id, sid, now=T0 + day / 2, lifetime=life)
        assert fresh is not None and not fresh.renew  # renewed at most once a day
        used = web_sessions.user_of(s, user_id, sid, now=T0 + 20 * day, lifetime=life)
        assert used is not None and used.renew
        web_sessions.renew(s, sid, now=T0 + 20 * day)
        # 45 days after sign-in, 25 after its last use: still open; 32 after it: over.
        assert web_sessions.user_of(s, user_id, sid, now=T0 + 45 * day, lifetime=life)
        assert web_sessions.user_of(s, user_id, sid, now=T0 + 52 * day, lifetime=life) is None


def test_tokens_are_stored_hashed_resolve_and_revoke(engine: Engine) -> None:
    user_id = add_user(engine)
    with transaction(engine) as s:
        token = accounts.issue_token(s, user_id, now=T0, name="phone")
        other = accounts.issue_token(s, user_id, now=T0)
    assert token != other and len(token) >= 40
    with transaction(engine) as s:
        stored = s.scalars(select(ApiToken.token_hash)).all()
        assert token not in stored
        assert token_hash(token) in stored
        assert accounts.user_id_for_token(s, token) == user_id
        assert accounts.user_id_for_token(s, token + "x") is None
        assert accounts.user_id_for_token(s, "") is None
        assert accounts.user_id_for_token(s, "x" * 10_000) is None
        assert accounts.revoke_token(s, token)
        assert not accounts.revoke_token(s, token)
    with transaction(engine) as s:
        assert accounts.user_id_for_token(s, token) is None
        assert accounts.user_id_for_token(s, other) == user_id


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("desired_retention", 0.69),
        ("desired_retention", 1.0),
        ("desired_retention", True),
        ("desired_retention", "0.9"),
        ("desired_retention", float("nan")),
        ("day_start_hour", 24),
        ("day_start_hour", -1),
        ("day_start_hour", 4.5),
        ("day_start_hour", float("inf")),
        ("new_per_day", True),
        ("new_per_day", 10_000),
        ("reviews_per_day", -1),
        ("reviews_per_day", 100_000),
        ("maximum_interval", 0),
        ("maximum_interval", 36501),
        ("learning_steps", [0]),
        ("learning_steps", [60, 86_401]),
        ("learning_steps", [60] * 11),
        ("learning_steps", "60"),
        ("relearning_steps", [True]),
        ("relearning_steps", [1.5]),
        ("locale", "fr"),
        ("locale", 1),
        ("timezone", "Mars/Olympus"),
        ("timezone", "../../etc/passwd"),
        ("timezone", "localtime"),  # the server's own clock, whatever it is set to
        ("timezone", "Factory"),
        ("timezone", ""),
        ("display_name", "x" * 101),
        ("display_name", "a\x00b"),
        ("colour", "blue"),
    ],
)
def test_validate_settings_names_the_field(field: str, value: object) -> None:
    with pytest.raises(InvalidInput) as info:
        validate_settings({field: value}, allowed=ME_FIELDS)
    assert info.value.field == field
    assert field in info.value.detail


def test_validate_settings_accepts_boundaries_and_nullable_overrides() -> None:
    values = {
        "desired_retention": 0.7,
        "day_start_hour": 0,
        "new_per_day": 0,
        "reviews_per_day": 99999,
        "maximum_interval": 36500,
        "learning_steps": [],
        "relearning_steps": [86_400.0],
        "locale": "ko",
        "timezone": "Pacific/Kiritimati",
        "display_name": "  Ana  ",
    }
    clean = validate_settings(values, allowed=ME_FIELDS)
    assert clean["display_name"] == "Ana"
    assert clean["desired_retention"] == 0.7
    assert clean["relearning_steps"] == [86_400]
    assert type(clean["relearning_steps"][0]) is int  # type: ignore[index]
    assert validate_settings({"new_per_day": None}, allowed={"new_per_day"}, nullable=True) == {
        "new_per_day": None
    }
    with pytest.raises(InvalidInput):
        validate_settings({"new_per_day": None}, allowed={"new_per_day"})
    with pytest.raises(InvalidInput):
        validate_settings({"new_per_day": 5}, allowed={"desired_retention"})


def test_apply_user_settings_writes_both_tables(engine: Engine) -> None:
    user_id = add_user(engine)
    values = validate_settings(
        {"timezone": "Asia/Seoul", "day_start_hour": 6, "new_per_day": 7, "learning_steps": [30]},
        allowed=ME_FIELDS,
    )
    with transaction(engine) as s:
        apply_user_settings(s, user_id, values)
    with transaction(engine) as s:
        body = user_settings(s, user_id)
    assert body["timezone"] == "Asia/Seoul"
    assert body["day_start_hour"] == 6
    assert body["new_per_day"] == 7
    assert body["learning_steps"] == [30]
    assert body["reviews_per_day"] == 200
