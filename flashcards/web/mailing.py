"""Mail from the pages: whether it is configured, the public address links point to, and a
mail rendered from a template in the language of the person who will read it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flask import current_app, render_template, request, url_for
from flask_babel import force_locale

from .. import mail


def mail_enabled() -> bool:
    """Configured with a server, a sender and the public address (`config.mail_settings_from_env`
    accepts none without the others)."""
    config = current_app.config
    return bool(config.get("SMTP_URL") and config.get("MAIL_FROM") and config.get("BASE_URL"))


def public_url(endpoint: str, *, anchor: str | None = None) -> str:
    """The address of a page as people open it: under `FLASHCARDS_BASE_URL` when set, else
    as this request reached the service. A link that will be mailed uses the former only
    (see `mail_enabled`): the Host header is whatever the asker sent."""
    base = current_app.config.get("BASE_URL")
    if not base:
        return url_for(endpoint, _anchor=anchor, _external=True)
    path = url_for(endpoint, _anchor=anchor)
    # url_for's path includes the script root the request came through; the base URL
    # already names any prefix the service is mounted under.
    root = request.script_root
    if root and path.startswith(root):
        path = path[len(root) :]
    return f"{base}{path}"


def render_mail(template: str, *, to: str, locale: str, **context: Any) -> mail.Mail:
    """`templates/mail/<template>.txt` rendered in `locale`: its first line is the subject,
    the rest the body (one template holds both, so both are translated together)."""
    with force_locale(locale):
        rendered = render_template(f"mail/{template}.txt", **context)
    subject, _, body = rendered.strip().partition("\n")
    return mail.Mail(to=to, subject=subject.strip(), text=body.strip() + "\n", language=locale)


def send(mails: Sequence[mail.Mail]) -> list[str]:
    """Send through the configured server: the recipients refused; MailNotSent when none
    could be sent."""
    config = current_app.config
    server = mail.parse_smtp_url(str(config["SMTP_URL"]))
    return mail.send(server, str(config["MAIL_FROM"]), mails)
