"""Invitation links mailed from the team's page, when the server sends mail: the addresses a
lead typed, checked before the link is made, and the mail in the language the lead picked.

The mail is sent after the link is made and committed, so that whatever happens to it the
lead sees the link (shown once) and can send it another way.
"""

from __future__ import annotations

import re

from flask import flash
from flask_babel import gettext as _
from flask_babel import ngettext

from .. import mail
from ..errors import InvalidInput
from ..http.request_policies import limiter
from ..mail import MailNotSent
from ..people import account_limits, accounts
from ..people.ratelimit import RateLimited
from ..srs.settings import SUPPORTED_LOCALES
from .i18n import locale_code
from .mailing import public_url, render_mail, send

MAX_INVITE_MAILS = 20  # addresses in one request; the hourly allowance is a setting
SEPARATORS = re.compile(r"[\s,;]+")


def addresses(raw: str) -> list[str]:
    """The addresses typed (separated by spaces, commas, semicolons or lines), each in the
    one form accounts use, without repeats. InvalidInput naming the first that is none
    (its `detail` is the address as typed), or past the cap (its field is `emails_count`)."""
    found: list[str] = []
    for typed in SEPARATORS.split(raw.strip()):
        if not typed:
            continue
        try:
            address = accounts.normalise_email(typed)
        except InvalidInput:
            address = ""
        if not mail.deliverable(address):
            raise InvalidInput(typed, field="emails")
        if address not in found:
            found.append(address)
    if len(found) > MAX_INVITE_MAILS:
        raise InvalidInput(f"at most {MAX_INVITE_MAILS} addresses at a time", field="emails_count")
    return found


def address_error(exc: InvalidInput) -> str:
    if exc.field == "emails_count":
        return str(
            _("Mail an invitation to at most %(max)d addresses at a time.", max=MAX_INVITE_MAILS)
        )
    return str(_("“%(address)s” is not an email address.", address=exc.detail))


def mail_language(chosen: str | None) -> str:
    return chosen if chosen in SUPPORTED_LOCALES else locale_code()


def mail_invitation(
    lead_id: int,
    to: list[str],
    *,
    token: str,
    team: str,
    lead: str,
    days: int,
    language: str,
) -> None:
    """Mail the link to each address, each counted against the lead's hourly allowance (all
    or none: past it nothing is sent); the outcome is flashed."""
    if not to:
        return
    mails = limiter("invite_mail")
    key = account_limits.invite_mail_key(lead_id)
    taken = 0
    try:
        for _address in to:
            mails.reserve(key)
            taken += 1
    except RateLimited as exc:
        for _place in range(taken):
            mails.refund(key)
        minutes = max(1, round(exc.retry_after / 60))
        flash(
            _(
                "Too many invitations were mailed from your account. Try again in "
                "%(minutes)d min, or copy the link and send it yourself.",
                minutes=minutes,
            ),
            "error",
        )
        return
    link = public_url("web.join_page", anchor=token)
    messages = [
        render_mail(
            "invitation", to=address, locale=language, team=team, lead=lead, link=link, days=days
        )
        for address in to
    ]
    try:
        refused = send(messages)
    except MailNotSent as exc:
        flash(
            _(
                "The invitation could not be mailed (%(reason)s). Copy the link and send it "
                "yourself.",
                reason=exc.detail,
            ),
            "error",
        )
        return
    sent = len(to) - len(refused)
    if sent:
        flash(
            ngettext(
                "The invitation was mailed to %(num)d address.",
                "The invitation was mailed to %(num)d addresses.",
                sent,
            )
        )
    if refused:
        flash(
            _(
                "The mail server refused these addresses: %(addresses)s.",
                addresses=", ".join(refused),
            ),
            "error",
        )
