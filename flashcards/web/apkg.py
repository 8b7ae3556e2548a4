"""Anki packages on the web: download a deck (optionally with my progress), upload an .apkg.

The domain raises English details meant for logs and the CLI; here they become sentences in
the page's language. The upload route accepts bodies above MAX_CONTENT_LENGTH (a deck
package is routinely several MiB), up to MAX_UPLOAD_BYTES (`web/uploads.py`).
"""

from __future__ import annotations

import io

from flask import Flask, current_app, flash, redirect, request, send_file, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from sqlalchemy.exc import IntegrityError
from werkzeug.wrappers import Response

from ..anki import (
    AnkiPackageError,
    ImportedDeck,
    ImportReport,
    import_package,
    read_for_import,
)
from ..anki_sync.adopted_export import export_any_deck
from ..decks.deck_tree import path_of
from ..decks.deckfile import MAX_TEXT
from ..errors import InvalidInput
from ..http.request_db import begin_writing, db
from ..srs import subscriptions
from ..storage.models import Deck
from ..storage.retry import retrying
from ..storage.schema import utcnow
from . import bp
from .auth import login_required, user_id
from .i18n import whole_number, word_list
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


def summary_messages(report: ImportReport) -> list[str]:
    """What the import made: new decks, or the changes to the decks the package came from."""
    made = [d for d in report.decks if not d.updated]
    updated = [d for d in report.decks if d.updated]
    out = []
    if len(made) == 1:
        out.append(
            ngettext(
                "Imported %(num)d card into “%(title)s”.",
                "Imported %(num)d cards into “%(title)s”.",
                made[0].cards,
                title=made[0].title,
            )
        )
    elif made:
        out.append(
            ngettext(
                "Imported %(num)d card into %(count)d decks: %(titles)s.",
                "Imported %(num)d cards into %(count)d decks: %(titles)s.",
                sum(d.cards for d in made),
                count=len(made),
                titles=_titles(made),
            )
        )
    if not updated:
        return out
    if len(updated) == 1:
        out.append(
            _(
                "This package came from “%(title)s”, so that deck was updated instead of "
                "copied: your progress is kept.",
                title=updated[0].title,
            )
        )
    else:
        out.append(
            _(
                "This package came from %(titles)s, so those decks were updated instead of "
                "copied: your progress is kept.",
                titles=_titles(updated),
            )
        )
    changed, added = sum(d.changed for d in updated), sum(d.added for d in updated)
    if changed:
        out.append(ngettext("%(num)d card was changed.", "%(num)d cards were changed.", changed))
    if added:
        out.append(ngettext("%(num)d card was added.", "%(num)d cards were added.", added))
    if not changed and not added:
        out.append(str(_("Nothing in it had changed.")))
    return [str(message) for message in out]


SHOWN_TITLES = 5


def _titles(decks: list[ImportedDeck]) -> str:
    """The decks' titles, quoted, as a list; past a few, how many more."""
    titles = [str(_("“%(title)s”", title=d.title)) for d in decks[:SHOWN_TITLES]]
    if len(decks) > SHOWN_TITLES:
        more = len(decks) - SHOWN_TITLES
        titles.append(ngettext("%(num)d other deck", "%(num)d other decks", more))
    return word_list(titles)


def too_large_message(limit: int) -> str:
    return str(
        _(
            "This file is too large: packages up to %(size)s MiB can be imported.",
            size=mebibytes(limit),
        )
    )


def import_error_message(exc: InvalidInput) -> str:
    """A translated sentence for each kind of problem the importer reports."""
    if not isinstance(exc, AnkiPackageError):
        return str(_("This package could not be imported."))
    if exc.kind == "too_many_notes":
        return str(
            _(
                "This package has %(count)s notes; at most %(limit)s can be imported.",
                count=whole_number(exc.count),
                limit=whole_number(exc.limit),
            )
        )
    if exc.kind == "too_many_cards":
        return str(
            _(
                "This package makes %(count)s cards (a Cloze note makes one for each "
                "deletion); at most %(limit)s can be imported.",
                count=whole_number(exc.count),
                limit=whole_number(exc.limit),
            )
        )
    if exc.kind == "too_many_decks":
        return str(
            _(
                "This package's cards are in %(count)s decks; at most %(limit)s can be imported.",
                count=whole_number(exc.count),
                limit=whole_number(exc.limit),
            )
        )
    if exc.kind == "too_many_reviews":
        return str(
            _(
                "This package has %(count)s reviews; at most %(limit)s can be imported with "
                "their progress. Import it without progress instead.",
                count=whole_number(exc.count),
                limit=whole_number(exc.limit),
            )
        )
    if exc.kind == "cloze_too_large":
        return str(
            _(
                "This package's Cloze notes are too long for their many deletions: the cards "
                "they make would be too large to import."
            )
        )
    if exc.kind == "templates_too_large":
        return str(
            _(
                "This package's card templates repeat its fields so often that the cards they "
                "make would be too large to import."
            )
        )
    if exc.kind == "too_large":
        return too_large_message(current_app.config["MAX_UPLOAD_BYTES"])
    if exc.kind == "unpacks_too_large":
        # A small file that unpacks to a huge one (a zip bomb): its size is not the problem.
        return str(
            _(
                "This package unpacks to more than %(size)s MiB, more than can be imported.",
                size=mebibytes(exc.limit),
            )
        )
    if exc.kind == "nothing_to_import":
        return str(
            _("This package has no notes we can import (notes with an empty front are left out).")
        )
    if exc.kind == "no_complete_language":
        return str(
            _(
                "No language in this package has every card, so the deck would have no "
                "language to show them in."
            )
        )
    if exc.kind == "unknown_language":
        return str(
            _(
                "A note in this package is tagged with the language “%(code)s”, which we do "
                "not know.",
                code=exc.code[:40],
            )
        )
    if exc.kind == "unsupported_version":
        return str(_("This package comes from a version of Anki we cannot read."))
    if exc.kind == "media_quota":
        return str(
            _(
                "This package's images and sounds would take your media files past the "
                "%(quota)s MB this service keeps for you. Nothing was imported.",
                quota=whole_number(exc.limit),
            )
        )
    if exc.kind == "not_a_package":
        return str(_("This file is not an Anki package (.apkg)."))
    return str(_("This Anki package is damaged and cannot be read."))


def report_messages(report: ImportReport) -> list[str]:
    """The import report's notes, in the page's language."""
    out: list[str] = []
    # A deck updated with nothing new has no news of how its Cloze notes became cards.
    if report.cloze_notes and (not report.updated or report.added):
        out.append(
            ngettext(
                "%(num)d Cloze note became question-and-answer cards, one for each deletion.",
                "%(num)d Cloze notes became question-and-answer cards, one for each deletion.",
                report.cloze_notes,
            )
        )
    for reason, count in report.skipped.items():
        if reason == "empty_front":
            out.append(
                ngettext(
                    "%(num)d note with an empty front was left out.",
                    "%(num)d notes with an empty front were left out.",
                    count,
                )
            )
        elif reason == "too_long":
            out.append(
                ngettext(
                    "%(num)d note with a text longer than %(limit)s characters was left out.",
                    "%(num)d notes with a text longer than %(limit)s characters were left out.",
                    count,
                    limit=whole_number(MAX_TEXT),
                )
            )
        elif reason == "missing_language":
            out.append(
                ngettext(
                    "%(num)d note new to the deck was left out: it has no text in the deck's "
                    "language.",
                    "%(num)d notes new to the deck were left out: they have no text in the "
                    "deck's language.",
                    count,
                )
            )
        else:
            out.append(
                ngettext(
                    "%(num)d note was left out because it could not be used.",
                    "%(num)d notes were left out because they could not be used.",
                    count,
                )
            )
    if report.media_added:
        out.append(
            ngettext(
                "%(num)d image or sound was added to your media files.",
                "%(num)d images and sounds were added to your media files.",
                report.media_added,
            )
        )
    if report.media_unused:
        out.append(
            ngettext(
                "%(num)d media file was left out: no card imported uses it.",
                "%(num)d media files were left out: no card imported uses them.",
                report.media_unused,
            )
        )
    if report.media_missing:
        out.append(
            ngettext(
                "%(num)d image or sound the cards use is not in the package (%(names)s): the "
                "cards show it as missing until a file of that name is added.",
                "%(num)d images and sounds the cards use are not in the package (%(names)s): "
                "the cards show them as missing until files of those names are added.",
                len(report.media_missing),
                names=", ".join(report.media_missing[:3])
                + (" …" if len(report.media_missing) > 3 else ""),
            )
        )
    if report.media_not_shown:
        out.append(
            ngettext(
                "%(num)d media file is kept for Anki but not shown on these pages: an SVG "
                "image (which can carry scripts) or a sound of a type browsers do not play.",
                "%(num)d media files are kept for Anki but not shown on these pages: SVG "
                "images (which can carry scripts) or sounds of a type browsers do not play.",
                report.media_not_shown,
            )
        )
    if report.media_left_out:
        out.append(
            ngettext(
                "%(num)d media file (image or sound) was left out: cards here are text only.",
                "%(num)d media files (images or sounds) were left out: cards here are text only.",
                report.media_left_out,
            )
        )
    if report.formatting_simplified:
        out.append(
            ngettext(
                "%(num)d note had formatting that was reduced to plain text.",
                "%(num)d notes had formatting that was reduced to plain text.",
                report.formatting_simplified,
            )
        )
    if report.suspended_made_active:
        out.append(
            ngettext(
                "%(num)d card suspended in Anki was imported as active, as the deck came without "
                "your progress: import it with “Keep my progress” to keep it suspended.",
                "%(num)d cards suspended in Anki were imported as active, as the deck came "
                "without your progress: import it with “Keep my progress” to keep them suspended.",
                report.suspended_made_active,
            )
        )
    return out
