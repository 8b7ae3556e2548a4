"""A real SMTP server on localhost, in the test process (aiosmtpd), and an app that mails
through it."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from flask import Flask
from sqlalchemy import Engine

from flashcards import create_app

BASE_URL = "https://cards.example.test"
MAIL_FROM = "Flashcards <cards@example.test>"


@dataclass
class Inbox:
    """What the server received; addresses in `refuse` are answered 550 at RCPT."""

    messages: list[EmailMessage] = field(default_factory=list)
    refuse: set[str] = field(default_factory=set)

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: Any
    ) -> str:
        if address in self.refuse:
            return "550 5.1.1 no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or b""
        parsed = message_from_bytes(content, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        return "250 Message accepted"

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if m["To"] == address]


def text_of(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return str(body.get_content())  # type: ignore[attr-defined]


def link_in(message: EmailMessage, path: str) -> str:
    """The token of the one `BASE_URL + path#token` link in the mail."""
    found = re.findall(re.escape(BASE_URL + path) + r"#([A-Za-z0-9_-]+)", text_of(message))
    assert len(found) == 1, text_of(message)
    return str(found[0])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def mail_config(database_url: str, smtp_port: int, **extra: Any) -> dict[str, Any]:
    return {
        "TESTING": True,
        "DATABASE_URL": database_url,
        "SECRET_KEY": "test-secret",
        "SMTP_URL": f"smtp://127.0.0.1:{smtp_port}",
        "MAIL_FROM": MAIL_FROM,
        "BASE_URL": BASE_URL,
        **extra,
    }


@pytest.fixture
def mail_app(
    database_url: str, engine: Engine, smtp: tuple[Inbox, int], tmp_path: Path
) -> Iterator[Flask]:
    application = create_app(mail_config(database_url, smtp[1]))
    yield application
    application.extensions["flashcards.engine"].dispose()


@pytest.fixture
def inbox(smtp: tuple[Inbox, int]) -> Inbox:
    return smtp[0]
