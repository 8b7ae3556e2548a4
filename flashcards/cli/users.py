"""`flashcards users ...`: accounts and API tokens from the command line.

Passwords are never arguments (they would land in shell history and `ps`): they come from a
hidden prompt on a terminal, or from the first line of stdin otherwise.
"""

from __future__ import annotations

import os
import sys

import click
from sqlalchemy import select

from ..config import parse_base_url
from ..people import accounts, resets
from ..storage.models import User
from . import context


def _read_password() -> str:
    if sys.stdin.isatty():
        password: str = click.prompt("Password", hide_input=True, confirmation_prompt=True)
        return password
    line = sys.stdin.readline()
    if not line:
        raise click.ClickException("no password on stdin (give it as the first line)")
    return line.rstrip("\r\n")


@click.group("users")
def users_group() -> None:
    """Accounts: add users, issue API tokens, list users."""


@users_group.command("add")
@click.argument("email")
@click.option("--admin", is_flag=True, help="Make the user an administrator.")
@click.option("--name", "display_name", default="", help="Display name.")
@click.option("--locale", default="en", show_default=True, help="UI language: en, es or ko.")
@click.option("--timezone", default="UTC", show_default=True, help="IANA time zone name.")
def add(email: str, admin: bool, display_name: str, locale: str, timezone: str) -> None:
    """Add a user; the password is prompted for, or read from stdin when piped."""
    # Validate the email before asking for a password nobody will use.
    accounts.normalise_email(email)
    password = _read_password()
    with context.transaction() as session:
        try:
            user = accounts.create_user(
                session,
                email,
                password,
                now=context.now(),
                display_name=display_name,
                locale=locale,
                timezone=timezone,
                is_admin=admin,
            )
        except accounts.EmailTaken:
            # An administrator may know: the sign-up pages' vaguer answer is for strangers.
            raise click.ClickException(
                f"a user with email {accounts.normalise_email(email)} already exists"
            ) from None
        user_id, address = user.id, user.email
    click.echo(f"Added user {user_id} {address}{' (admin)' if admin else ''}.")


@users_group.command("token")
@click.argument("email")
@click.option("--name", default="cli", show_default=True, help="A label for the token.")
def token(email: str, name: str) -> None:
    """Print a new API token for the user (shown once; only its hash is stored)."""
    with context.transaction() as session:
        user = accounts.user_by_email(session, email)
        new_token = accounts.issue_token(session, user.id, now=context.now(), name=name)
    click.echo(new_token)


@users_group.command("password")
@click.argument("email")
@click.option(
    "--revoke-tokens", is_flag=True, help="Also revoke the user's API tokens (after a leak)."
)
def password(email: str, revoke_tokens: bool) -> None:
    """Set a user's password; prompted for, or read from stdin when piped."""
    with context.transaction() as session:
        user = accounts.user_by_email(session, email)
        user_id, address = user.id, user.email
    new_password = _read_password()
    with context.transaction() as session:
        # SamePassword (a one-line error) when it is the password it would replace.
        revoked = accounts.set_password(session, user_id, new_password, revoke_tokens=revoke_tokens)
    click.echo(f"Password changed for {address}.")
    if revoke_tokens:
        click.echo(f"API tokens revoked: {revoked}.")


@users_group.command("reset-link")
@click.argument("email")
@click.option(
    "--base-url",
    help="Where people open the service, e.g. https://cards.example.com "
    "[default: FLASHCARDS_BASE_URL].",
)
def reset_link(email: str, base_url: str | None) -> None:
    """Print a one-time password reset link for the user (for a server that sends no mail):
    it works once, for an hour, and dies if the password changes first."""
    configured = base_url or os.environ.get("FLASHCARDS_BASE_URL")
    if not configured:
        raise click.ClickException(
            "the link needs the address people open the service at: set FLASHCARDS_BASE_URL "
            "or pass --base-url https://cards.example.com"
        )
    base = parse_base_url(configured, "--base-url" if base_url else "FLASHCARDS_BASE_URL")
    with context.transaction() as session:
        user = accounts.user_by_email(session, email)
        token = resets.issue(session, user.id, now=context.now())
    click.echo(resets.link(base, token))


@users_group.command("list")
def list_users() -> None:
    """Print every user: id, email, admin flag, display name."""
    with context.transaction() as session:
        rows = session.execute(
            select(User.id, User.email, User.is_admin, User.display_name, User.created_at).order_by(
                User.id
            )
        ).all()
    if not rows:
        click.echo("No users. Add one with: flashcards users add EMAIL")
    for user_id, email, is_admin, display_name, created_at in rows:
        role = "admin" if is_admin else "user"
        click.echo(f"{user_id}\t{email}\t{role}\t{display_name}\t{created_at:%Y-%m-%d}")


COMMANDS = [users_group]
