"""A person's images and sounds on the pages: the `card_text` filter shows a card's media
tokens (`decks.media_refs`) as images and players (`question_text` and `answer_text` mark
a Cloze card's blank and what fills it, `decks.blanks`), `/media/<name>` serves the files from
the person's own media folder (`http.media_files`), from our origin, so the CSP stays as it
is, and `/media` shows what the folder holds and deletes what nothing uses
(`anki_sync.media_use`)."""

from __future__ import annotations

from babel.units import format_unit
from flask import current_app, flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from markupsafe import Markup, escape
from werkzeug.wrappers import Response

from ..anki_sync.media_use import delete_unused, media_use
from ..decks import blanks, media_refs
from ..http.media_files import media_response
from ..http.request_db import db, writes
from ..people import media_folder
from ..storage.schema import utcnow
from . import bp
from .auth import login_required, user_id
from .i18n import lang_tag, locale_code


@bp.app_template_filter("card_text")
def card_text(text: str) -> Markup:
    """Card text, escaped, with its images and sounds shown. A token of a type browsers do
    not play safely (SVG, which can carry script), or naming no file of the folder, is said
    to be not shown."""
    if "[" not in text:
        return escape(text)
    out: list[str] = []
    for part in media_refs.split(text):
        if isinstance(part, str):
            out.append(escape(part))
            continue
        content_type = media_refs.media_type(part)
        if content_type is None:
            note = (
                _("Image not shown here: %(name)s", name=part.name)
                if part.kind == media_refs.IMAGE
                else _("Sound not played here: %(name)s", name=part.name)
            )
            # In the interface's language, inside the card's own.
            lang = escape(lang_tag(locale_code()))
            out.append(f'<span class="media-note" lang="{lang}">{escape(note)}</span>')
            continue
        src = escape(url_for("web.media_file", name=part.name))
        if part.kind == media_refs.IMAGE:
            out.append(f'<img class="card-media" src="{src}" alt="{escape(part.name)}">')
        elif content_type.startswith("video/"):
            out.append(
                f'<video class="card-media" controls preload="metadata" src="{src}"></video>'
            )
        else:
            label = escape(part.name)
            out.append(f'<audio controls preload="none" src="{src}" aria-label="{label}"></audio>')
    return Markup("".join(out))


@bp.app_template_filter("question_text")
def question_text(question: str, answer: str) -> Markup:
    """`card_text` of a question, its blanks marked when the answer fills them (`blanks`)."""
    found = blanks.filled(question, answer)
    return card_text(question) if found is None else _marked(found[0])


@bp.app_template_filter("card_line")
def card_line(text: str) -> str:
    """A card's text on one line of a list (the browser, leeches, the other languages): an
    image or a sound by its file's name after a symbol, not its token ("[image:x.png]")."""
    symbol = {media_refs.IMAGE: "\N{FRAME WITH PICTURE}", media_refs.SOUND: "\N{SPEAKER}"}
    return media_refs.TOKEN_RE.sub(lambda m: f"{symbol.get(m[1], '')} {m[2]}", text)


@bp.app_template_filter("answer_text")
def answer_text(answer: str, question: str) -> Markup:
    """`card_text` of an answer, what fills the question's blanks marked, as Anki marks
    the asked deletion of a Cloze card."""
    found = blanks.filled(question, answer)
    return card_text(answer) if found is None else _marked(found[1])


def _marked(parts: list[blanks.Part]) -> Markup:
    return Markup("").join(
        Markup('<mark class="blank">%s</mark>') % card_text(p.text)
        if p.blank
        else card_text(p.text)
        for p in parts
    )


@bp.app_template_filter("file_size")
def file_size(size: int) -> str:
    """A size in the page's language: kilobytes under a megabyte, else megabytes (of 1,024,
    as the quota counts them)."""
    if size < media_folder.MiB:
        return str(format_unit(size / 1024, "digital-kilobyte", length="short",
                               format="#,##0.#", locale=locale_code()))  # fmt: skip
    return str(format_unit(size / media_folder.MiB, "digital-megabyte", length="short",
                           format="#,##0.#", locale=locale_code()))  # fmt: skip


@bp.get("/media")
@login_required
def media_page() -> str:
    quota = int(current_app.config["MEDIA_QUOTA_MB"]) * media_folder.MiB
    return render_template("media.html", use=media_use(db(), user_id()), quota_bytes=quota)


@bp.post("/media/unused")
@writes
@login_required
def delete_unused_media() -> Response:
    session = db()
    deleted = delete_unused(session, user_id(), now=utcnow())
    session.commit()
    flash(
        ngettext("%(num)d unused file was deleted.", "%(num)d unused files were deleted.", deleted)
    )
    return redirect(url_for("web.media_page"), 303)


@bp.get("/media/<path:name>")
@login_required
def media_file(name: str) -> Response:
    return media_response(db(), user_id(), name)
