"""The deck library (subscribe, pick each deck's language) and a deck's own page."""

from __future__ import annotations

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from markupsafe import Markup, escape
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response

from ..anki_sync import adopted_changes
from ..decks import deck_tree, own_decks
from ..decks.deckfile import MAX_TITLE
from ..errors import DeckTitleTaken, InvalidInput
from ..http.request_db import db, writes
from ..srs import deck_settings, queue, subscriptions
from ..srs.settings import user_settings
from ..storage.retry import retrying
from ..storage.schema import utcnow
from ..teams.assignments import assignments_by_deck
from . import bp
from .account import WHOLE_NUMBER, field_labels, setting_problem
from .auth import current_user, login_required, user_id
from .error_table import message_for
from .i18n import language_in_sentence, locale_code
from .teams import status_names


@bp.get("/")
def library() -> str:
    if current_user() is None:
        return render_template("welcome.html")
    return library_page()


def library_page(*, import_error: str | None = None) -> str:
    """The signed-in person's library; the import form shows `import_error` if given."""
    uid = user_id()
    session = db()
    decks = subscriptions.deck_summaries(session, uid, locale_code())
    studied = subscriptions.deck_forest(d for d in decks if d.subscribed_locale)
    # One statement for every deck's counts, by the queue's own rules and limits; a parent's
    # take in its subdecks', as its Study button does.
    by_deck, shown = queue.counts_with_subdecks(
        session,
        uid,
        now=utcnow(),
        subdecks={
            node.deck.id: subscriptions.parent_ids(node)
            for node in deck_tree.walk(studied)
            if node.deck is not None
        },
    )
    return render_template(
        "library.html",
        studied=studied,
        others=[d for d in decks if not d.subscribed_locale],
        by_deck=shown,
        in_subdecks={
            node.deck.id: sum(d.card_count for d in node.decks()) - node.deck.card_count
            for node in deck_tree.walk(studied)
            if node.deck is not None
        },
        counts=queue.total(by_deck),
        import_error=import_error,
        assigned=assignments_by_deck(session, uid, now=utcnow()),
        statuses=status_names(),
    )


@bp.get("/decks/<slug>")
@login_required
def deck(slug: str) -> str:
    uid = user_id()
    session = db()
    found = subscriptions.find_visible_deck(session, uid, slug)
    summary = _summary(session, uid, found.id)
    counts = None
    studied = subscriptions.studied_tree(session, uid, found)
    if studied is not None:
        deck_ids = subscriptions.parent_ids(studied)
        _card, counts = queue.next_card(session, uid, now=utcnow(), deck_ids=deck_ids)
    overrides = deck_settings.deck_overrides(session, uid, found.id)
    subdecks = _subdecks(studied)
    return render_template(
        "deck.html",
        deck=summary,
        subdecks=subdecks,
        in_subdecks=sum(subscriptions.card_counts(session, [d.id for d in subdecks]).values()),
        counts=counts,
        overrides=overrides,
        defaults=user_settings(session, uid),
        labels=field_labels(),
        own=found.owner_user_id == uid,
        reading=subscriptions.reading_locale(session, uid, found),
    )


def _summary(session: Session, uid: int, deck_id: int) -> subscriptions.DeckSummary:
    """The deck as the library lists it, in the page's language."""
    return next(
        d for d in subscriptions.deck_summaries(session, uid, locale_code()) if d.id == deck_id
    )


@bp.post("/decks/<slug>/settings")
@writes
@login_required
def deck_settings_form(slug: str) -> Response:
    uid = user_id()
    session = db()
    found = subscriptions.find_visible_deck(session, uid, slug)
    values: dict[str, object] = {}
    for name in deck_settings.DECK_FIELDS:
        raw = request.form.get(name, "").strip().replace(",", ".")
        if not raw:
            values[name] = None
            continue
        if name != "desired_retention":
            values[name] = int(raw) if WHOLE_NUMBER.fullmatch(raw) else raw
            continue
        try:
            values[name] = float(raw)
        except ValueError:
            values[name] = raw
    try:
        deck_settings.set_deck_overrides(session, uid, found.id, values)
    except InvalidInput as exc:
        flash(setting_problem(exc.field or ""), "error")
        return redirect(url_for("web.deck", slug=slug))
    session.commit()
    flash(_("Settings saved."))
    return redirect(url_for("web.deck", slug=slug))


@bp.post("/decks/<slug>/subscription")
@writes
@login_required
def subscribe(slug: str) -> Response:
    uid = user_id()
    session = db()
    found = subscriptions.find_visible_deck(session, uid, slug)
    locale = request.form.get("locale") or None
    try:
        # Two at once meet at the primary key on PostgreSQL: the retry finds the other's row.
        sub = retrying(
            session,
            lambda: subscriptions.subscribe(session, uid, found, locale, now=utcnow()),
            retry_on=(IntegrityError,),
        )
    except InvalidInput:
        flash(_("This deck is not available in that language."), "error")
        return redirect(url_for("web.deck", slug=slug))
    flash(_("You study this deck in %(language)s.", language=language_in_sentence(sub.locale)))
    return redirect(url_for("web.deck", slug=slug))


@bp.post("/decks/<slug>/unsubscribe")
@writes
@login_required
def unsubscribe(slug: str) -> Response:
    uid = user_id()
    session = db()
    found = subscriptions.find_visible_deck(session, uid, slug)
    if subscriptions.unsubscribe(session, uid, found):
        session.commit()
        flash(_("Unsubscribed. Your progress is kept if you come back."))
    return redirect(url_for("web.library"))


@bp.post("/decks/<slug>/rename")
@writes
@login_required
def rename_deck(slug: str) -> Response:
    session = db()
    try:
        own_decks.rename_own_deck(
            session,
            user_id(),
            slug,
            title=request.form.get("title", ""),
            locale=request.form.get("locale") or None,
        )
    except DeckTitleTaken as exc:
        session.rollback()
        flash(message_for(exc), "error")
        return redirect(url_for("web.deck", slug=slug), 303)
    except InvalidInput as exc:
        session.rollback()
        if exc.field == "title":
            flash(_("A title needs 1 to %(num)d characters.", num=MAX_TITLE), "error")
        else:  # the form's language, which the page gave: only a stale or altered form
            flash(_("Check “%(field)s”: this value is not allowed.", field=_("Language")), "error")
        return redirect(url_for("web.deck", slug=slug), 303)
    session.commit()
    flash(_("Deck renamed."))
    return redirect(url_for("web.deck", slug=slug), 303)


@bp.get("/decks/<slug>/delete")
@login_required
def delete_deck_page(slug: str) -> str:
    """The confirmation asked before one's own deck is deleted (a page: it works without
    script)."""
    uid = user_id()
    session = db()
    found = own_decks.find_own_deck(session, uid, slug)
    return render_template(
        "deck_delete.html",
        deck=_summary(session, uid, found.id),
        subdecks=_subdecks(subscriptions.studied_tree(session, uid, found)),
    )


def _subdecks(
    studied: deck_tree.Node[subscriptions.StudiedDeck] | None,
) -> list[subscriptions.StudiedDeck]:
    """The decks under a studied deck, parents first."""
    return list(studied.decks())[1:] if studied is not None else []


@bp.post("/decks/<slug>/delete")
@writes
@login_required
def delete_deck(slug: str) -> Response:
    session = db()
    adopted_changes.delete_own_deck(session, user_id(), slug)
    session.commit()
    flash(_("The deck is deleted."))
    return redirect(url_for("web.library"), 303)


@bp.app_template_filter("deck_name")
def deck_name(title: str) -> Markup:
    """A deck's title, a subdeck's ("Languages::Spanish::Week 1", as Anki names it) shown as
    its path, muted, before its own name."""
    *parents, own = deck_tree.path_of(title)
    if not parents:
        return escape(title)
    path = "".join(f"{escape(part)} › " for part in parents)
    return Markup(f'<span class="deck-path">{path}</span>{escape(own)}')
