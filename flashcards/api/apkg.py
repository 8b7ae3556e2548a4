"""Anki packages over the API: a deck out as `.apkg` (with the caller's progress), one in.

Packages are far larger than any JSON body, so the import view raises the request's body
limit to MAX_UPLOAD_BYTES (FLASHCARDS_APKG_MAX_BYTES) for itself only, before it reads anything.
"""

from __future__ import annotations

from flask import Response, current_app, request
from flask_babel import force_locale, gettext
from sqlalchemy.exc import IntegrityError
from werkzeug.exceptions import RequestEntityTooLarge

from ..anki import ImportReport, import_package, read_for_import
from ..anki.importer import check_names
from ..anki_sync.adopted_export import export_any_deck
from ..config import parse_bool
from ..errors import BodyTooLarge, InvalidInput, UnsupportedContentType
from ..http.request_db import begin_writing, db
from ..srs import subscriptions
from ..storage.models import Deck, User
from ..storage.retry import retrying
from ..storage.schema import utcnow
from . import bp
from .auth import current_user_id
from .models import reply
from .models_apkg import Imported
from .openapi import Answer, Query, documented

PACKAGE_MIMETYPES = frozenset(
    {
        "application/octet-stream",
        "application/zip",
        "application/x-zip-compressed",
        "application/apkg",
        "application/vnd.anki",
    }
)
MULTIPART = "multipart/form-data"
# Room for the multipart envelope around a package of exactly the limit.
MULTIPART_SLACK = 64 * 1024
MIB = 1024 * 1024

_BINARY = {"type": "string", "format": "binary"}
_FLAG = {"type": "boolean", "default": False}
_COUNT_HEADER = {"schema": {"type": "integer", "minimum": 0}}


def flag(name: str) -> bool:
    """A true/false query parameter; anything else is a 422 naming it."""
    value = request.args.get(name)
    return False if value is None else parse_bool(value, name)


def optional_arg(name: str) -> str | None:
    value = request.args.get(name)
    if value is None or value == "":
        return None
    if "\x00" in value:
        raise InvalidInput(f"{name} must not contain a NUL character", field=name)
    return value


@bp.get("/decks/<slug>/export.apkg")
@documented(
    "exportDeckApkg",
    "A deck as an Anki package (.apkg), optionally with the caller's progress.",
    {
        200: Answer(
            "The package, as an attachment.",
            content={"application/octet-stream": {"schema": _BINARY}},
            headers={
                "Content-Disposition": {"schema": {"type": "string"}},
                "X-Notes": {**_COUNT_HEADER, "description": "Notes in the package."},
                "X-Reviews": {**_COUNT_HEADER, "description": "Review log rows in it."},
            },
        )
    },
    422,
    description="One language (`locale`; default: the one the caller studies the deck in, "
    "else their UI language if the deck has it, else the deck's default) as one Anki deck, or "
    "every language (`all_locales=true`) as one subdeck each; the subdecks the caller studies "
    "under the deck go along, each an Anki deck of its own. With `with_scheduling=true` the "
    "caller's own review state and log go along; import it in Anki with 'Import any learning "
    "progress'.",
    query=(
        Query("locale", {"type": "string"}, "One of the deck's locales."),
        Query("all_locales", _FLAG, "Every language, one subdeck each."),
        Query("with_scheduling", _FLAG, "Include the caller's progress."),
    ),
)
def export_apkg(slug: str) -> Response:
    user_id = current_user_id()
    locale = optional_arg("locale")
    all_locales = flag("all_locales")
    with_scheduling = flag("with_scheduling")
    if locale is not None and all_locales:
        raise InvalidInput("send either locale or all_locales=true, not both", field="locale")
    session = db()
    deck = subscriptions.find_visible_deck(session, user_id, slug)
    one = None if all_locales else locale or subscriptions.reading_locale(session, user_id, deck)
    package = export_any_deck(
        session,
        deck.id,
        locales=None if one is None else [one],
        # Only ever the caller's own progress: a token never exports someone else's reviews.
        user_id=user_id,
        with_scheduling=with_scheduling,
        now=utcnow(),
    )
    response = Response(package.data, mimetype="application/octet-stream")
    response.headers.set("Content-Disposition", "attachment", filename=package.filename)
    response.headers["X-Notes"] = str(package.notes)
    response.headers["X-Reviews"] = str(package.reviews)
    return response


def _package_body(limit: int) -> bytes:
    """The uploaded package: the raw body, or the multipart field `file`; 413 above `limit`."""
    mimetype = request.mimetype
    too_large = BodyTooLarge(
        f"the package is larger than the limit of {limit} bytes ({limit / MIB:.1f} MiB)"
    )
    # Set before anything reads the body; Werkzeug then stops reading at the limit, with or
    # without a Content-Length.
    try:
        if mimetype in PACKAGE_MIMETYPES:
            request.max_content_length = limit
            data: bytes = request.get_data(cache=False)
            return data
        if mimetype == MULTIPART:
            request.max_content_length = limit + MULTIPART_SLACK
            upload = request.files.get("file")
            if upload is None:
                raise InvalidInput("send the .apkg in the multipart field 'file'", field="file")
            data = upload.stream.read(limit + 1)
            if len(data) > limit:
                raise too_large
            return data
    except RequestEntityTooLarge:
        raise too_large from None
    raise UnsupportedContentType(
        "send the .apkg as the request body with Content-Type: application/octet-stream, "
        "or as the field 'file' of a multipart/form-data form"
    )


@bp.post("/imports")
@documented(
    "importApkg",
    "Create a deck from an Anki package (.apkg, old or new format), or update the deck it "
    "came from.",
    {
        201: Answer("Imported as a new deck.", Imported),
        200: Answer("Imported again into the caller's deck it came from (`updated`).", Imported),
    },
    404,
    409,
    413,
    415,
    422,
    description="The package is the raw request body, or the field `file` of a multipart "
    "form; its size limit is the server's FLASHCARDS_APKG_MAX_BYTES (64 MiB by default), not "
    "the limit of JSON bodies. The new deck is owned by the caller, who is subscribed to it. "
    "A package that cannot be read is refused with 422 and nothing is written. A package "
    "whose notes came from one of the caller's own decks (exported from it, or imported into "
    "it before) updates that deck by note GUID instead, keeping the caller's progress: 200, "
    "`updated: true`. `copy=true`, or a `slug`, always makes a new deck.",
    query=(
        Query(
            "slug",
            {"type": "string"},
            "The new deck's name in URLs, after the caller's own prefix `user<id>-` (default: "
            "from its Anki name).",
        ),
        Query("locale", {"type": "string"}, "Language of the notes (default: yours)."),
        Query("with_scheduling", _FLAG, "Keep Anki's progress as the caller's."),
        Query("copy", _FLAG, "A new deck even if the package came from one of the caller's."),
    ),
    body_content={
        "application/octet-stream": {"schema": _BINARY},
        "multipart/form-data": {
            "schema": {"type": "object", "required": ["file"], "properties": {"file": _BINARY}},
            "encoding": {"file": {"contentType": "application/octet-stream"}},
        },
    },
)
def import_apkg() -> Response:
    user_id = current_user_id()  # before the body: an anonymous upload is not even read
    slug = optional_arg("slug")
    locale = optional_arg("locale")
    with_scheduling = flag("with_scheduling")
    copy = flag("copy")
    limit: int = current_app.config["MAX_UPLOAD_BYTES"]
    max_notes: int = current_app.config["APKG_MAX_NOTES"]
    check_names(user_id, slug, locale)  # before reading: the package is the long part
    # Read before the write transaction begins: on SQLite other writers would wait on it.
    package = read_for_import(
        _package_body(limit),
        with_scheduling=with_scheduling,
        max_notes=max_notes,
        max_bytes=limit,
        with_media=True,
    )
    session = begin_writing()
    owner = session.get(User, user_id)
    # A package that names no deck gets a title in its owner's language, as on the web.
    with force_locale(owner.locale if owner is not None else "en"):
        untitled = gettext("Imported from Anki")

    def work() -> ImportReport:
        now = utcnow()
        report = import_package(
            session,
            package,
            owner_user_id=user_id,
            slug=slug,
            locale=locale,
            with_scheduling=with_scheduling,
            now=now,
            untitled=untitled,
            update_existing=not copy,
            media_quota_mb=int(current_app.config["MEDIA_QUOTA_MB"]),
        )
        # Imported to be studied: the caller's deck list shows it straight away.
        for imported in report.decks:
            deck = session.get(Deck, imported.deck_id)
            assert deck is not None
            subscriptions.subscribe(session, user_id, deck, None, now=now)
        return report

    # A concurrent import can take the same free slug first; the retry then picks another
    # (or, for a slug the caller chose, answers 409).
    report = retrying(session, work, retry_on=(IntegrityError,), attempts=3)
    return reply(Imported.of(report), 200 if report.updated else 201)
