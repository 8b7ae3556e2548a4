"""language codes Babel does not know ("zz", "en_ZZ"), accepted before, become known ones

Such a code made every page naming the deck's language fail, for everyone who saw the deck.
Each unknown code of a deck becomes its language alone when that is known ("en_ZZ" becomes
"en"), else English, the pages' own fallback; the deck's default, its texts and everyone's
subscriptions to it move together. A code is moved to the first of those the deck has no
texts in yet, so nothing is lost; when the deck has both already, the texts merge: a card
with a text in both keeps the one in the known code (the other could never be shown). A
person's interface language that Babel does not know becomes English.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 20:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from flashcards.decks.locales import is_known_locale

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FALLBACK = "en"

users = sa.table("users", sa.column("id"), sa.column("locale"))
decks = sa.table("decks", sa.column("id"), sa.column("default_locale"))
deck_texts = sa.table("deck_texts", sa.column("deck_id"), sa.column("locale"))
cards = sa.table("cards", sa.column("id"), sa.column("deck_id"))
card_texts = sa.table("card_texts", sa.column("card_id"), sa.column("locale"))
subscriptions = sa.table("subscriptions", sa.column("deck_id"), sa.column("locale"))


def _deck_locales(conn: sa.Connection, deck_id: int) -> set[str]:
    """Every code the deck's rows use: its default, its texts, its subscriptions."""
    deck_cards = sa.select(cards.c.id).where(cards.c.deck_id == deck_id)
    found = set(conn.scalars(sa.select(decks.c.default_locale).where(decks.c.id == deck_id)))
    found |= set(conn.scalars(sa.select(deck_texts.c.locale).where(deck_texts.c.deck_id == deck_id)))
    found |= set(
        conn.scalars(
            sa.select(card_texts.c.locale).distinct().where(card_texts.c.card_id.in_(deck_cards))
        )
    )
    found |= set(
        conn.scalars(sa.select(subscriptions.c.locale).where(subscriptions.c.deck_id == deck_id))
    )
    return found


def _texts_in(conn: sa.Connection, deck_id: int) -> set[str]:
    deck_cards = sa.select(cards.c.id).where(cards.c.deck_id == deck_id)
    found = set(conn.scalars(sa.select(deck_texts.c.locale).where(deck_texts.c.deck_id == deck_id)))
    return found | set(
        conn.scalars(
            sa.select(card_texts.c.locale).distinct().where(card_texts.c.card_id.in_(deck_cards))
        )
    )


def _target(code: str, taken: set[str]) -> str:
    language = code.partition("_")[0]
    candidates = [language] if language != code and is_known_locale(language) else []
    if FALLBACK not in candidates:
        candidates.append(FALLBACK)
    return next((c for c in candidates if c not in taken), candidates[0])


def _move(conn: sa.Connection, deck_id: int, code: str, target: str) -> None:
    deck_cards = sa.select(cards.c.id).where(cards.c.deck_id == deck_id)
    with_target = sa.select(card_texts.c.card_id).where(card_texts.c.locale == target)
    conn.execute(
        card_texts.update()
        .where(
            card_texts.c.locale == code,
            card_texts.c.card_id.in_(deck_cards),
            card_texts.c.card_id.not_in(with_target),
        )
        .values(locale=target)
    )
    # What is left under the code are cards that have a text in the target already.
    conn.execute(
        card_texts.delete().where(card_texts.c.locale == code, card_texts.c.card_id.in_(deck_cards))
    )
    has_title = conn.scalar(
        sa.select(sa.func.count())
        .select_from(deck_texts)
        .where(deck_texts.c.deck_id == deck_id, deck_texts.c.locale == target)
    )
    this_deck = (deck_texts.c.deck_id == deck_id, deck_texts.c.locale == code)
    if has_title:
        conn.execute(deck_texts.delete().where(*this_deck))
    else:
        conn.execute(deck_texts.update().where(*this_deck).values(locale=target))
    conn.execute(
        decks.update()
        .where(decks.c.id == deck_id, decks.c.default_locale == code)
        .values(default_locale=target)
    )
    conn.execute(
        subscriptions.update()
        .where(subscriptions.c.deck_id == deck_id, subscriptions.c.locale == code)
        .values(locale=target)
    )


def upgrade() -> None:
    conn = op.get_bind()
    for user_id, locale in conn.execute(sa.select(users.c.id, users.c.locale)).all():
        if not is_known_locale(locale):
            conn.execute(users.update().where(users.c.id == user_id).values(locale=FALLBACK))
    columns = (decks.c.default_locale, deck_texts.c.locale, card_texts.c.locale,
               subscriptions.c.locale)  # fmt: skip
    codes = {code for column in columns for code in conn.scalars(sa.select(column).distinct())}
    unknown = sorted(code for code in codes if not is_known_locale(code))
    if not unknown:
        return
    affected = set(conn.scalars(sa.select(decks.c.id).where(decks.c.default_locale.in_(unknown))))
    affected |= set(
        conn.scalars(sa.select(deck_texts.c.deck_id).where(deck_texts.c.locale.in_(unknown)))
    )
    affected |= set(
        conn.scalars(
            sa.select(cards.c.deck_id)
            .join(card_texts, card_texts.c.card_id == cards.c.id)
            .where(card_texts.c.locale.in_(unknown))
        )
    )
    affected |= set(
        conn.scalars(sa.select(subscriptions.c.deck_id).where(subscriptions.c.locale.in_(unknown)))
    )
    for deck_id in sorted(affected):
        for code in sorted(c for c in _deck_locales(conn, deck_id) if not is_known_locale(c)):
            _move(conn, deck_id, code, _target(code, _texts_in(conn, deck_id)))


def downgrade() -> None:
    # Nothing to undo: the codes it wrote are as valid at 0010 as they are now, and the
    # unknown ones it replaced were the problem.
    pass
