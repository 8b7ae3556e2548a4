"""A real browser: a person makes their own deck from the library, adds a card, studies it,
and opens it for editing from the review page with `e`, from either side of the card."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Dialog, expect

from .test_study_browser import ARTIFACTS, _page, _sign_up, browser, server

__all__ = ["browser", "server"]  # the fixtures, shared with the study tests


def test_make_a_deck_add_a_card_study_and_edit_it(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "en")
    _sign_up(page, server, "maker@example.com")
    page.get_by_role("link", name="New deck").click()
    page.fill("#deck-title", "Kitchen words")
    # The deck's own language is no translation to add: its box follows the choice.
    page.select_option("#deck-locale", "es")
    expect(page.locator("input[name=other_locales][value=es]")).to_be_disabled()
    page.select_option("#deck-locale", "en")
    expect(page.locator("input[name=other_locales][value=en]")).to_be_disabled()
    expect(page.locator("input[name=other_locales][value=es]")).to_be_enabled()
    page.locator("input[name=other_locales][value=es]").check()
    page.get_by_role("button", name="Create deck").click()
    expect(page).to_have_url(re.compile(r"/decks/user\d+-kitchen-words/cards$"))
    expect(page.locator("#live")).to_contain_text("Deck created")
    slug = page.url.rstrip("/").split("/")[-2]

    page.fill("#new-question", "What is a spoon in Spanish?")
    page.fill("#new-answer", "cuchara")
    page.fill("#new-tags", "kitchen nouns")
    page.get_by_role("button", name="Add card").click()
    expect(page.locator("#live")).to_contain_text("Card added")
    expect(page.locator("ol.cards .question")).to_have_text("What is a spoon in Spanish?")
    page.screenshot(path=str(ARTIFACTS / "own-deck-cards.png"), full_page=True)
    # As in Anki's Add window: back on the form for the next card, and Ctrl+Enter adds it.
    expect(page.locator("#new-question")).to_be_focused()
    page.keyboard.type("What is a fork in Spanish?")
    page.locator("#new-answer").fill("tenedor")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#live")).to_contain_text("Card added")
    expect(page.locator("ol.cards .question")).to_have_count(2)
    expect(page.locator("#new-question")).to_be_focused()

    page.goto(f"{server}/study?deck={slug}")
    expect(page.locator("#question")).to_have_text("What is a spoon in Spanish?")
    page.keyboard.press("e")  # the person's own deck: editable from the review page
    expect(page).to_have_url(re.compile(rf"/decks/{slug}/cards/c001\?study={slug}$"))
    expect(page.locator("#t-en")).to_have_value("kitchen nouns")
    # Each language is its own form: saving one asks first when another has unsaved text.
    card_page = page.url
    typed_es = page.locator("#q-es").input_value()
    page.fill("#q-es", "¿Cuchara?")
    asked: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    page.locator("section[lang=en] form.card-edit button[type=submit]").click()
    expect(page.locator("#q-es")).to_be_focused()
    assert page.url == card_page and len(asked) == 1 and "not saved" in asked[0], asked
    page.fill("#q-es", typed_es)  # as it was: nothing left unsaved
    page.fill("#q-en", "Spoon, in Spanish?")
    page.locator("section[lang=en] form.card-edit button[type=submit]").click()
    # Saved, back to studying the deck, as closing Anki's editor goes back to the review.
    expect(page).to_have_url(re.compile(rf"/study\?deck={slug}$"))
    expect(page.locator("#live")).to_contain_text("Card saved")

    expect(page.locator("#question")).to_have_text("Spoon, in Spanish?")
    page.keyboard.press("Space")
    expect(page.locator("#answer")).to_contain_text("cuchara")
    # Edited from the answer side, saving comes back to the answer side.
    page.keyboard.press("e")
    expect(page).to_have_url(re.compile(rf"/decks/{slug}/cards/c001\?study={slug}&card=\d+&show="))
    page.fill("#a-en", "la cuchara")
    page.locator("section[lang=en] form.card-edit button[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"/study\?deck={slug}&card=\d+&show="))
    expect(page.locator("#answer")).to_be_visible()
    expect(page.locator("#answer")).to_contain_text("la cuchara")

    page.evaluate("window.__noReload = true")
    page.keyboard.press("3")
    # One learning card left, due in minutes: the deck's only card was answered.
    expect(page.locator("#undo-form button")).to_contain_text("Undo answer")
    assert page.evaluate("window.__noReload") is True
    assert not problems, problems
    context.close()
