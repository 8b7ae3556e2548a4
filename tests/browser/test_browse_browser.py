"""A real browser on the card browser: two cards selected and suspended with the keyboard
alone, then seen marked, and the undo taking both back; a card moved to another of the
person's own decks with the deck picker, and back with the undo."""

from __future__ import annotations

from playwright.sync_api import Browser, Page, expect

from .test_study_browser import ARTIFACTS, _page, _sign_up, browser, server

__all__ = ["browser", "server"]  # the fixtures, shared with the study tests


def test_select_two_cards_and_suspend_them_with_the_keyboard(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "en")
    _sign_up(page, server, "browse@example.com")
    page.locator("form[action$='/subscription'] button[type=submit]").click()
    page.goto(f"{server}/browse")
    rows = page.locator("table.browse tbody tr")
    expect(rows).to_have_count(15)
    first, second = rows.nth(0), rows.nth(1)
    # The deck's name is not squeezed to a word a line beside the questions.
    deck_cell = first.locator("td.deck-name").bounding_box()
    assert deck_cell is not None and deck_cell["width"] >= 144, deck_cell
    # Keyboard only: a checkbox, Space; Tab past the card's link to the next one, Space.
    first.locator("input[type=checkbox]").focus()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    expect(first.locator("input[type=checkbox]")).to_be_checked()
    expect(second.locator("input[type=checkbox]")).to_be_checked()
    expect(rows.nth(2).locator("input[type=checkbox]")).not_to_be_checked()
    # The box above them says some are ticked; it ticks every card of the page, and clears them.
    pick_all = page.get_by_label("Select every card on this page")
    assert pick_all.evaluate("box => box.indeterminate") is True
    pick_all.check()
    expect(page.locator("table.browse tbody input[type=checkbox]:checked")).to_have_count(15)
    pick_all.uncheck()
    expect(page.locator("table.browse tbody input[type=checkbox]:checked")).to_have_count(0)
    first.locator("input[type=checkbox]").check()
    second.locator("input[type=checkbox]").check()
    page.locator("#b-action").focus()
    expect(page.locator("#b-action")).to_have_value("suspend")
    # Only the fields the chosen action reads show: none for suspending, the flag for a flag.
    fields = ["#b-act-flag", "#b-act-tag", "#b-act-due", "[name=restore_position]"]
    for field in fields:
        expect(page.locator(field)).to_be_hidden()
    page.select_option("#b-action", "flag")
    expect(page.locator("#b-act-flag")).to_be_visible()
    for field in fields[1:]:
        expect(page.locator(field)).to_be_hidden()
    page.select_option("#b-action", "remove_tag")
    expect(page.locator("#b-act-tag")).to_be_visible()
    expect(page.locator("#b-act-flag")).to_be_hidden()
    page.select_option("#b-action", "suspend")
    page.locator("#bulk button[type=submit]").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#live")).to_contain_text("Suspended 2 cards.")
    assert page.url == f"{server}/browse"  # the same search as before: all cards
    expect(rows.nth(0).locator("[data-mark=suspended]")).to_be_visible()
    expect(rows.nth(1).locator("[data-mark=suspended]")).to_be_visible()
    expect(page.locator("[data-mark=suspended]")).to_have_count(2)
    page.screenshot(path=str(ARTIFACTS / "browse-suspended.png"), full_page=True)
    page.get_by_role("button", name="Undo suspend").click()
    expect(page.locator("#live")).to_contain_text("Undone.")
    expect(page.locator("[data-mark=suspended]")).to_have_count(0)
    assert not problems, problems
    context.close()


def _own_deck(page: Page, server: str, title: str, question: str) -> str:
    page.goto(f"{server}/")
    page.get_by_role("link", name="New deck").click()
    page.fill("#deck-title", title)
    page.select_option("#deck-locale", "en")
    page.get_by_role("button", name="Create deck").click()
    expect(page.locator("#live")).to_contain_text("Deck created")
    page.fill("#new-question", question)
    page.fill("#new-answer", "an answer")
    page.get_by_role("button", name="Add card").click()
    expect(page.locator("#live")).to_contain_text("Card added")
    return page.url.rstrip("/").split("/")[-2]


def test_move_a_card_to_another_own_deck_with_the_picker(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "en")
    _sign_up(page, server, "mover@example.com")
    first = _own_deck(page, server, "Kitchen words", "What is a spoon?")
    second = _own_deck(page, server, "Garden words", "What is a rake?")
    page.goto(f"{server}/browse?deck={first}")
    rows = page.locator("table.browse tbody tr")
    expect(rows).to_have_count(1)
    rows.nth(0).locator("input[type=checkbox]").check()
    page.get_by_label("Action").select_option("move")
    picker = page.get_by_label("Move to")
    expect(picker.locator("option")).to_have_text(
        ["Choose a deck", "Garden words", "Kitchen words"]
    )
    picker.select_option(label="Garden words")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#live")).to_contain_text("Moved 1 card.")
    assert page.url == f"{server}/browse?deck={first}"  # the search kept: now empty
    expect(rows).to_have_count(0)
    page.goto(f"{server}/browse?deck={second}")
    expect(rows).to_have_count(2)
    expect(page.locator("table.browse")).to_contain_text("What is a spoon?")
    page.screenshot(path=str(ARTIFACTS / "browse-moved.png"), full_page=True)
    page.get_by_role("button", name="Undo move").click()
    expect(page.locator("#live")).to_contain_text("Undone.")
    expect(rows).to_have_count(1)
    assert not problems, problems
    context.close()
