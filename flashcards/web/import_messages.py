"""What the web says of an Anki package import: the decks it made or updated, what it left
out, and why a package was refused, each in the page's language."""

from __future__ import annotations

from flask import current_app
from flask_babel import gettext as _
from flask_babel import ngettext

from ..anki import AnkiPackageError, ImportedDeck, ImportReport
from ..decks.deckfile import MAX_TEXT
from ..errors import InvalidInput
from .i18n import whole_number, word_list
from .uploads import mebibytes


def too_large_message(limit: int) -> str:
    return str(
        _(
            "This file is too large: packages up to %(size)s MiB can be imported.",
            size=mebibytes(limit),
        )
    )


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
        elif reason == "not_owned_new":
            out.append(
                ngettext(
                    "%(num)d note new to the deck was left out: the deck is not yours, so only "
                    "its makers add cards to it.",
                    "%(num)d notes new to the deck were left out: the deck is not yours, so "
                    "only its makers add cards to it.",
                    count,
                )
            )
        elif reason == "not_owned_edited":
            out.append(
                ngettext(
                    "%(num)d note edited in Anki keeps the deck's text: the deck is not yours "
                    "to edit.",
                    "%(num)d notes edited in Anki keep the deck's text: the deck is not yours "
                    "to edit.",
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
