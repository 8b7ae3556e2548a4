"""A real browser on the card browser: two cards selected and suspended with the keyboard
alone, then seen marked, and the undo taking both back."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

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
    # Keyboard only: a checkbox, Space; Tab past the card's link to the next one, Space.
    first.locator("input[type=checkbox]").focus()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    expect(first.locator("input[type=checkbox]")).to_be_checked()
    expect(second.locator("input[type=checkbox]")).to_be_checked()
    expect(rows.nth(2).locator("input[type=checkbox]")).not_to_be_checked()
    page.locator("#b-action").focus()
    expect(page.locator("#b-action")).to_have_value("suspend")
    page.locator("#bulk button[type=submit]").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#live")).to_contain_text("Suspended 2 cards.")
    assert page.url == f"{server}/browse"  # the same search as before: all cards
    expect(rows.nth(0).locator("[data-mark=suspended]")).to_be_visible()
    expect(rows.nth(1).locator("[data-mark=suspended]")).to_be_visible()
    expect(page.locator("[data-mark=suspended]")).to_have_count(2)
    page.screenshot(path=str(ARTIFACTS / "browse-suspended.png"), full_page=True)
    page.get_by_role("button", name="Undo the last change").click()
    expect(page.locator("#live")).to_contain_text("Undone.")
    expect(page.locator("[data-mark=suspended]")).to_have_count(0)
    assert not problems, problems
    context.close()
