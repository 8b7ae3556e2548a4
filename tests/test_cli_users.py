from __future__ import annotations

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select

from flashcards.cli import main
from flashcards.people import accounts
from flashcards.storage.engine import transaction
from flashcards.storage.models import User


@pytest.fixture(autouse=True)
def cheap_password_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The production cost (32 MiB, ~0.1 s a hash) is tested once in test_accounts.py.
    monkeypatch.setattr(accounts, "PASSWORD_METHOD", "scrypt:1024:8:1")


def test_add_reads_password_from_stdin_and_stores_a_hash(cli: CliRunner, engine: Engine) -> None:
    result = cli.invoke(
        main, ["users", "add", "Ana@Example.com", "--admin", "--name", "Ana"], input="s3cret pw\n"
    )
    assert result.exit_code == 0, result.output
    assert "ana@example.com" in result.output
    assert "s3cret" not in result.output
    with transaction(engine) as s:
        user = s.scalar(select(User))
        assert user is not None
        assert (user.email, user.is_admin, user.display_name) == ("ana@example.com", True, "Ana")
        assert user.password_hash != "s3cret pw"
        assert accounts.authenticate(s, "ana@example.com", "s3cret pw") is not None


def test_password_is_never_an_argument(cli: CliRunner, engine: Engine) -> None:
    result = cli.invoke(main, ["users", "add", "ana@example.com", "s3cret pw"], input="")
    assert result.exit_code != 0
    result = cli.invoke(main, ["users", "add", "ana@example.com", "--password", "s3cret pw"])
    assert result.exit_code != 0
    with transaction(engine) as s:
        assert s.scalar(select(User)) is None


def test_add_reports_bad_input_in_one_line(cli: CliRunner, engine: Engine) -> None:
    result = cli.invoke(main, ["users", "add", "ana@example.com"], input="short\n")
    assert result.exit_code == 1
    assert "at least 8 characters" in result.output
    assert "Traceback" not in result.output
    result = cli.invoke(main, ["users", "add", "ana@example.com"], input="")
    assert result.exit_code == 1
    assert "stdin" in result.output
    result = cli.invoke(main, ["users", "add", "nonsense"], input="s3cret pw\n")
    assert result.exit_code == 1
    assert "email" in result.output
    assert cli.invoke(main, ["users", "add", "a@example.com"], input="s3cret pw\n").exit_code == 0
    result = cli.invoke(main, ["users", "add", "A@example.com"], input="s3cret pw\n")
    assert result.exit_code == 1
    assert "already exists" in result.output


def test_token_prints_a_working_token(cli: CliRunner, engine: Engine) -> None:
    assert cli.invoke(main, ["users", "add", "ana@example.com"], input="s3cret pw\n").exit_code == 0
    result = cli.invoke(main, ["users", "token", "ANA@example.com", "--name", "laptop"])
    assert result.exit_code == 0, result.output
    token = result.output.strip()
    with transaction(engine) as s:
        user_id = accounts.user_id_for_token(s, token)
        assert user_id == s.scalar(select(User.id))
    result = cli.invoke(main, ["users", "token", "nobody@example.com"])
    assert result.exit_code == 1
    assert "no user" in result.output


def test_password_resets(cli: CliRunner, engine: Engine) -> None:
    assert cli.invoke(main, ["users", "add", "ana@example.com"], input="s3cret pw\n").exit_code == 0
    result = cli.invoke(main, ["users", "password", "ana@example.com"], input="new secret\n")
    assert result.exit_code == 0, result.output
    with transaction(engine) as s:
        assert accounts.authenticate(s, "ana@example.com", "new secret") is not None


def test_password_reset_can_revoke_api_tokens(cli: CliRunner, engine: Engine) -> None:
    assert cli.invoke(main, ["users", "add", "ana@example.com"], input="s3cret pw\n").exit_code == 0
    token = cli.invoke(main, ["users", "token", "ana@example.com"]).output.strip()
    result = cli.invoke(main, ["users", "password", "ana@example.com"], input="new secret\n")
    assert result.exit_code == 0, result.output
    assert "revoked" not in result.output
    with transaction(engine) as s:
        assert accounts.user_id_for_token(s, token) is not None  # kept unless asked
        assert accounts.authenticate(s, "ana@example.com", "new secret") is not None
    result = cli.invoke(
        main, ["users", "password", "ana@example.com", "--revoke-tokens"], input="newer secret\n"
    )
    assert result.exit_code == 0, result.output
    assert "API tokens revoked: 1." in result.output
    with transaction(engine) as s:
        assert accounts.user_id_for_token(s, token) is None
        assert accounts.authenticate(s, "ana@example.com", "newer secret") is not None


def test_list(cli: CliRunner, engine: Engine) -> None:
    result = cli.invoke(main, ["users", "list"])
    assert result.exit_code == 0
    assert "No users" in result.output
    cli.invoke(main, ["users", "add", "ana@example.com", "--admin"], input="s3cret pw\n")
    cli.invoke(main, ["users", "add", "bo@example.com", "--name", "Bo"], input="s3cret pw\n")
    result = cli.invoke(main, ["users", "list"])
    assert result.exit_code == 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 2
    assert "ana@example.com\tadmin" in lines[0]
    assert "bo@example.com\tuser\tBo" in lines[1]
