"""Sending mail through the configured SMTP server: password reset links, team invitations.

Standard library only (`smtplib`, `email`), no Flask: the callers render and translate the
subject and body. The server is named by one URL (`FLASHCARDS_SMTP_URL`):

- `smtp://host[:25]`: plain SMTP, as to a relay on the local network;
- `smtp+starttls://[user:pass@]host[:587]`: upgraded to TLS before anything is sent;
- `smtps://[user:pass@]host[:465]`: TLS from the first byte.

A user name and password in the URL are percent-decoded. Whatever goes wrong on the way
(unreachable, TLS refused, login refused, the server refusing the sender or every recipient)
is `MailNotSent`, whose detail says what the server said.
"""

from __future__ import annotations

import smtplib
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from urllib.parse import unquote, urlsplit

from .errors import FlashcardsError, InvalidInput

SCHEMES = {"smtp": ("plain", 25), "smtp+starttls": ("starttls", 587), "smtps": ("tls", 465)}
TIMEOUT_SECONDS = 10.0


class MailNotSent(FlashcardsError):
    """The SMTP server could not be reached or refused the mail; `detail` says how."""


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    security: str  # "plain", "starttls" or "tls"
    username: str | None = None
    # Never shown by repr: not in a log line, nor a traceback.
    password: str | None = field(default=None, repr=False)


def parse_smtp_url(url: str, *, setting: str = "FLASHCARDS_SMTP_URL") -> SmtpServer:
    """The server a URL names; InvalidInput naming `setting` for one that names none."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise InvalidInput(
            f"{setting} must start with smtp://, smtp+starttls:// or smtps://", field=setting
        )
    try:
        port = parts.port
    except ValueError:
        raise InvalidInput(f"{setting} has a port that is not a number", field=setting) from None
    if not parts.hostname:
        raise InvalidInput(f"{setting} names no host", field=setting)
    security, default_port = SCHEMES[scheme]
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    if password is not None and security == "plain":
        # A password sent over plain SMTP is readable by anyone on the path.
        raise InvalidInput(
            f"{setting}: a password needs smtp+starttls:// or smtps://", field=setting
        )
    return SmtpServer(parts.hostname, port or default_port, security, username, password)


def parse_sender(sender: str, *, setting: str = "FLASHCARDS_MAIL_FROM") -> str:
    """The From address as configured (`Name <addr@host>` or `addr@host`), checked."""
    text = sender.strip()
    if "\n" in text or "\r" in text:
        raise InvalidInput(f"{setting} must be one line", field=setting)
    message = EmailMessage()
    try:
        message["From"] = text
        addresses = message["From"].addresses
    except (ValueError, IndexError):
        addresses = ()
    if len(addresses) != 1 or not addresses[0].domain:
        raise InvalidInput(
            f"{setting} must be one address, like Flashcards <cards@example.com>", field=setting
        )
    return text


@dataclass(frozen=True)
class Mail:
    to: str
    subject: str
    text: str
    html: str | None = None
    language: str | None = None  # the body's language, for the Content-Language header


def deliverable(address: str) -> bool:
    """Whether `address` can be written in a To header as it is: an address our looser
    account check lets through may not (`a<b@example.com`), or may be read as another one
    (`a(comment)@example.com` is `a@example.com`), or need SMTPUTF8 (`ü@example.com`)."""
    try:
        return Address(addr_spec=address).addr_spec == address and address.isascii()
    except (ValueError, IndexError):
        return False


def message(mail: Mail, sender: str) -> EmailMessage:
    """The MIME message: plain text, with an HTML alternative when the mail has one.
    ValueError for a recipient that is not `deliverable`."""
    if not deliverable(mail.to):
        raise ValueError(f"cannot address a mail to {mail.to!r}")
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = str(Address(addr_spec=mail.to))
    msg["Subject"] = mail.subject
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = make_msgid(domain=_domain(sender))
    # Mail sent by a program: vacation replies and the like should not answer it.
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(mail.text)
    if mail.html is not None:
        msg.add_alternative(mail.html, subtype="html")
    if mail.language:  # after the content, which replaces every Content-* header
        msg["Content-Language"] = mail.language.replace("_", "-")
    return msg


def _domain(sender: str) -> str:
    probe = EmailMessage()
    probe["From"] = sender
    return str(probe["From"].addresses[0].domain)


def send(server: SmtpServer, sender: str, mails: Sequence[Mail]) -> list[str]:
    """Send every mail over one connection; the recipients the server refused, or that
    cannot be addressed (the others were accepted). MailNotSent when nothing could be
    sent: the server unreachable, TLS or the login refused, or the sender refused."""
    if not mails:
        return []
    refused: list[str] = []
    try:
        with _connect(server) as smtp:
            for mail in mails:
                try:
                    smtp.send_message(message(mail, sender))
                except (smtplib.SMTPRecipientsRefused, ValueError):
                    refused.append(mail.to)
    except smtplib.SMTPAuthenticationError as exc:
        raise MailNotSent(f"the mail server refused the login: {_said(exc)}") from None
    except smtplib.SMTPSenderRefused as exc:
        raise MailNotSent(f"the mail server refused the sender {sender}: {_said(exc)}") from None
    except smtplib.SMTPResponseException as exc:
        raise MailNotSent(f"the mail server answered {exc.smtp_code}: {_said(exc)}") from None
    except (smtplib.SMTPException, ssl.SSLError) as exc:
        raise MailNotSent(f"the mail could not be sent: {exc}") from None
    except OSError as exc:
        where = f"{server.host}:{server.port}"
        raise MailNotSent(f"the mail server {where} cannot be reached: {exc}") from None
    return refused


def _said(exc: smtplib.SMTPResponseException) -> str:
    said = exc.smtp_error
    text = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
    return f"{exc.smtp_code} {text}".strip()


def _connect(server: SmtpServer) -> smtplib.SMTP:
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if server.security == "tls":
        smtp = smtplib.SMTP_SSL(server.host, server.port, timeout=TIMEOUT_SECONDS, context=context)
    else:
        smtp = smtplib.SMTP(server.host, server.port, timeout=TIMEOUT_SECONDS)
    try:
        if server.security == "starttls":
            smtp.starttls(context=context)
        if server.username is not None:
            smtp.login(server.username, server.password or "")
    except BaseException:
        smtp.close()
        raise
    return smtp
