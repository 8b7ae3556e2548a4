"""Anki packages on the web: download a deck (optionally with my progress), upload an .apkg.

The domain raises English details meant for logs and the CLI; they become sentences in the
page's language in `import_messages`. The upload route accepts bodies above
MAX_CONTENT_LENGTH (a deck package is routinely several MiB), up to MAX_UPLOAD_BYTES
(`web/uploads.py`).
"""

from __future__ import annotations

import io

from flask import Flask, current_app, flash, redirect, request, send_file, url_for
from flask_babel import gettext as _
from sqlalchemy.exc import IntegrityError
from werkzeug.wrappers import Response

from ..anki import ImportReport, import_package, read_for_import
from ..anki_sync.adopted_export import export_any_deck
from ..decks.deck_tree import path_of
from ..errors import InvalidInput
from ..http.request_db import begin_writing, db
from ..srs import subscriptions
from ..storage.models import Deck
from ..storage.retry import retrying
from ..storage.schema import utcnow
from . import bp
from .auth import login_required, user_id
from .i18n import whole_number
from .import_messages import (
    import_error_message,
    report_messages,
    summary_messages,
    too_large_message,
)
from .library import library_page
from .uploads import mebibytes, upload_form

UPLOAD_ENDPOINT = "web.import_apkg"


def _package_limit() -> int:
    return int(current_app.config["MAX_UPLOAD_BYTES"])


def _too_large_page() -> Response:
    page = library_page(import_error=too_large_message(_package_limit()))
    return Response(page, status=413, mimetype="text/html")


upload_form(UPLOAD_ENDPOINT, _package_limit, _too_large_page)


def limits_hint() -> str:
    """What the import form takes, stated on it in the page's language."""
    return str(
        _(
            "Packages up to %(size)s MiB, with at most %(notes)s notes.",
            size=mebibytes(_package_limit()),
            notes=whole_number(current_app.config["APKG_MAX_NOTES"]),
        )
    )


def init_app(app: Flask) -> None:
    app.jinja_env.globals["apkg_limits"] = limits_hint


@bp.get("/decks/<slug>/apkg")
@login_required
def export_apkg(slug: str) -> Response:
    # A GET: it changes nothing, and another site cannot read the response it would trigger.
    uid = user_id()
    session = db()
    deck = subscriptions.find_visible_deck(session, uid, slug)
    wanted = request.args.get("locale")
    if request.args.get("languages") == "all":
        chosen: list[str] | None = None
    elif wanted in subscriptions.deck_locales(session, deck.id):
        chosen = [str(wanted)]
    else:
        chosen = [subscriptions.reading_locale(session, uid, deck)]
    package = export_any_deck(
        session,
        deck.id,
        locales=chosen,
        user_id=uid,
        with_scheduling=request.args.get("progress") == "1",
        now=utcnow(),
    )
    return send_file(
        io.BytesIO(package.data),
        mimetype="application/apkg",
        as_attachment=True,
        download_name=package.filename,
        max_age=0,
    )


@bp.post("/decks/import")
@login_required
def import_apkg() -> Response | tuple[str, int]:
    uid = user_id()
    upload = request.files.get("package")
    data = upload.read() if upload is not None else b""
    if not data:
        return library_page(import_error=_("Choose an .apkg file to import.")), 422
    limit = _package_limit()
    if len(data) > limit:
        return library_page(import_error=too_large_message(limit)), 413
    with_scheduling = request.form.get("with_scheduling") == "1"
    copy = request.form.get("copy") == "1"
    locale = request.form.get("locale") or None  # none chosen: the importer's own rule
    now = utcnow()
    try:
        package = read_for_import(
            data,
            with_scheduling=with_scheduling,
            max_notes=current_app.config["APKG_MAX_NOTES"],
            max_bytes=limit,
            with_media=True,
        )
        # Read and checked first: on SQLite nobody's writes wait on the parsing.
        session = begin_writing()

        def work() -> ImportReport:
            report = import_package(
                session,
                package,
                owner_user_id=uid,
                slug=None,
                locale=locale,
                with_scheduling=with_scheduling,
                now=now,
                untitled=_("Imported from Anki"),
                update_existing=not copy,
                media_quota_mb=int(current_app.config["MEDIA_QUOTA_MB"]),
            )
            for imported in report.decks:
                deck = session.get(Deck, imported.deck_id)
                assert deck is not None
                subscriptions.subscribe(session, uid, deck, None, now=now)
            return report

        # A concurrent import can take the same free name first; the retry picks another.
        report = retrying(session, work, retry_on=(IntegrityError,), attempts=3)
    except InvalidInput as exc:  # the package, or what it asks for, is refused
        db().rollback()
        return library_page(import_error=import_error_message(exc)), 422
    for message in summary_messages(report):
        flash(message)
    for message in report_messages(report):
        flash(message)
    # A deck with its subdecks opens on the deck, which lists them; unrelated decks, the library.
    top = report.decks[0]
    under = [path_of(d.title)[: len(path_of(top.title))] for d in report.decks]
    if all(path == path_of(top.title) for path in under):
        return redirect(url_for("web.deck", slug=top.slug))
    return redirect(url_for("web.library"))
