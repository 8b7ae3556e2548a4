"""A real browser: Anki's keys on the card shown (- bury, @ suspend, Ctrl+1..7 flags,
Ctrl+Alt+N forget) with undo taking each back, with JavaScript and without."""

from __future__ import annotations

from playwright.sync_api import Browser, Page, expect

from .test_study_browser import ARTIFACTS, _page, _sign_up, browser, server

__all__ = ["browser", "server"]  # the fixtures, shared with the study tests


def _counts(page: Page) -> list[str]:
    return page.locator(".counts .num").all_inner_texts()


def test_bury_suspend_and_flag_with_the_keys_and_undo_each(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "en")
    _sign_up(page, server, "keys@example.com")
    page.locator("form[action$='/subscription'] button[type=submit]").click()
    page.goto(f"{server}/study")
    page.evaluate("window.__noReload = true")
    first = page.locator("#question").inner_text()
    new_before = int(_counts(page)[0])

    page.keyboard.press("-")
    expect(page.locator("#live")).to_contain_text("buried until tomorrow")
    expect(page.locator("#question")).not_to_have_text(first)
    second = page.locator("#question").inner_text()
    assert int(_counts(page)[0]) == new_before - 1
    assert page.evaluate("window.__noReload") is True, "bury"

    page.keyboard.press("@")
    expect(page.locator("#live")).to_contain_text("suspended")
    expect(page.locator("#question")).not_to_have_text(second)
    third = page.locator("#question").inner_text()
    assert int(_counts(page)[0]) == new_before - 2
    assert page.evaluate("window.__noReload") is True, "suspend"

    page.keyboard.press("Control+2")
    expect(page.locator("#live")).to_contain_text("Orange")
    expect(page.locator("#flag")).to_have_value("2")
    expect(page.locator("#question")).to_have_text(third)
    # Seen on the card itself, in its colour, as Anki shows a flagged card.
    expect(page.locator("#card-flag")).to_have_text("Flag: Orange")
    dot = page.locator("#card-flag").evaluate(
        "p => getComputedStyle(p, '::before').backgroundColor"
    )
    assert dot == "rgb(240, 140, 0)", dot
    page.keyboard.press("Control+2")  # the card's own flag again: removed
    expect(page.locator("#live")).to_contain_text("Flag removed")
    expect(page.locator("#flag")).to_have_value("0")
    expect(page.locator("#card-flag")).to_have_count(0)
    assert page.evaluate("window.__noReload") is True, "flag"
    page.screenshot(path=str(ARTIFACTS / "study-card-actions.png"), full_page=True)

    # Undo, latest first: the flag comes back, goes, then the suspension, then the burial.
    page.keyboard.press("u")
    expect(page.locator("#flag")).to_have_value("2")
    page.keyboard.press("u")
    expect(page.locator("#flag")).to_have_value("0")
    page.keyboard.press("u")
    expect(page.locator("#question")).to_have_text(second)
    page.keyboard.press("Control+z")
    expect(page.locator("#question")).to_have_text(first)
    assert int(_counts(page)[0]) == new_before
    assert page.evaluate("window.__noReload") is True
    assert not problems, problems
    context.close()


def test_forget_with_anki_key_and_undo(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "en")
    _sign_up(page, server, "forget-key@example.com")
    page.goto(f"{server}/settings")
    page.fill("#new_per_day", "1")
    page.locator("form.settings button[type=submit]").click()
    page.goto(f"{server}/")
    page.locator("form[action$='/subscription'] button[type=submit]").click()
    page.goto(f"{server}/study")
    first = page.locator("#question").inner_text()
    expect(page.locator("#card-actions button[value=forget]")).to_have_count(0)  # a new card
    page.keyboard.press("Space")
    page.keyboard.press("1")
    # The day's one new card, now in learning, is the only card: shown again, ahead of time.
    expect(page.locator("#card-actions button[value=forget]")).to_be_visible()
    expect(page.locator("#question")).to_have_text(first)
    page.evaluate("window.__noReload = true")

    page.keyboard.press("Control+Alt+n")
    expect(page.locator("#live")).to_contain_text("Card forgotten")
    assert page.evaluate("window.__noReload") is True
    page.keyboard.press("u")
    expect(page.locator("#card-actions button[value=forget]")).to_be_visible()
    expect(page.locator("#question")).to_have_text(first)
    assert not problems, problems
    context.close()


def test_card_actions_work_without_javascript(server: str, browser: Browser) -> None:
    context = browser.new_context(locale="en", java_script_enabled=False)
    page = context.new_page()
    _sign_up(page, server, "actions-nojs@example.com")
    page.locator("form[action$='/subscription'] button[type=submit]").click()
    page.goto(f"{server}/study")
    first = page.locator("#question").inner_text()
    page.locator("#card-actions button[value=bury]").click()
    expect(page.locator("#question")).not_to_have_text(first)
    page.select_option("#flag", "5")
    page.locator("#card-actions button[value=flag]").click()
    expect(page.locator("#live")).to_contain_text("Pink")
    expect(page.locator("#flag")).to_have_value("5")
    page.locator("#undo-form button").click()
    expect(page.locator("#flag")).to_have_value("0")
    page.locator("#undo-form button").click()
    expect(page.locator("#question")).to_have_text(first)
    context.close()
