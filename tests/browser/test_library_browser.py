"""A real browser on the library, the study page without JavaScript (Back and a stale tab
after answering) and the stats charts' values on hover and keyboard focus."""

from __future__ import annotations

import pytest

from .test_study_browser import ARTIFACTS, CHROMIUM, PASSWORD, _page, _sign_up, browser, server

pytestmark = pytest.mark.browser
__all__ = ["CHROMIUM", "browser", "server"]  # the fixtures, shared with the study tests

from playwright.sync_api import Browser, Page, expect  # noqa: E402


def _sign_up_without_script(page: Page, server: str, email: str) -> None:
    page.goto(f"{server}/signup")
    page.fill("#email", email)
    page.fill("#password", PASSWORD)
    page.press("#password", "Enter")
    page.wait_for_url(f"{server}/")


def test_back_or_a_stale_tab_never_shows_an_unseen_cards_answer(
    server: str, browser: Browser
) -> None:
    context = browser.new_context(locale="en", java_script_enabled=False)
    page = context.new_page()
    _sign_up_without_script(page, server, "stale-nojs@example.com")
    expect(page.locator("#empty-library")).to_be_visible()  # no deck yet: pick one
    page.screenshot(path=str(ARTIFACTS / "library-en-empty.png"), full_page=True)
    page.locator("form[action$='/subscription'] button[type=submit]").first.click()
    page.goto(f"{server}/")
    expect(page.locator(".deck .study-deck")).to_have_count(1)
    page.locator(".deck .study-deck").click()

    first = page.locator("#question").inner_text()
    expect(page.locator(".card-deck")).to_contain_text("From ")
    page.click("#reveal")
    expect(page.locator("#answer")).to_be_visible()
    page.locator("button.rate-3").click()
    expect(page.locator("#question")).not_to_have_text(first)
    second = page.locator("#question").inner_text()

    # Back to the first card's revealed page: the card due now, face down.
    page.go_back()
    expect(page.locator("#stale-reveal")).to_be_visible()
    expect(page.locator("#question")).to_have_text(second)
    expect(page.locator("#answer")).to_be_hidden()
    expect(page.locator("#answer-form")).to_be_hidden()
    page.screenshot(path=str(ARTIFACTS / "study-en-no-javascript-back.png"), full_page=True)

    # A second tab shows the second card face down; this tab answers it meanwhile.
    other = context.new_page()
    other.goto(f"{server}/study")
    expect(other.locator("#question")).to_have_text(second)
    page.goto(f"{server}/study")
    page.click("#reveal")
    page.locator("button.rate-4").click()
    expect(page.locator("#question")).not_to_have_text(second)
    third = page.locator("#question").inner_text()
    # The stale tab's "Show answer" reveals neither card: the third is shown face down.
    other.click("#reveal")
    expect(other.locator("#question")).to_have_text(third)
    expect(other.locator("#answer")).to_be_hidden()
    expect(other.locator("#stale-reveal")).to_be_visible()
    context.close()


def test_chart_values_show_on_hover_and_keyboard_focus(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "en")
    _sign_up(page, server, "charts@example.com")
    page.locator("form[action$='/subscription'] button[type=submit]").first.click()
    page.goto(f"{server}/study?deck=eks-model-training")
    page.keyboard.press("Space")
    page.keyboard.press("3")
    expect(page.locator("#live")).to_contain_text("Good")
    page.goto(f"{server}/")
    expect(page.locator("#deck-eks-model-training .counts")).to_contain_text("14 new")
    page.screenshot(path=str(ARTIFACTS / "library-en.png"), full_page=True)
    page.goto(f"{server}/settings")
    page.fill("#timezone", "Mars/Olympus")
    page.fill("#learning_steps", "1m 10x")
    page.locator("form.settings button[type=submit]").click()
    expect(page.locator(".field-error")).to_have_count(2)
    expect(page.locator("#learning_steps")).to_have_value("1m 10x")
    page.screenshot(path=str(ARTIFACTS / "settings-en-errors.png"), full_page=True)
    problems.remove(
        "Failed to load resource: the server responded with a status of 422 (UNPROCESSABLE ENTITY)"
    )
    page.goto(f"{server}/stats")

    reviews = page.locator("section.chart", has=page.locator("#chart-1"))
    readout = reviews.locator("[data-readout]")
    today = reviews.locator("[data-point]").last
    expect(readout).to_be_hidden()
    today.hover()
    expect(readout).to_be_visible()
    expect(readout).to_have_text(today.get_attribute("aria-label") or "?")
    assert (today.get_attribute("aria-label") or "").endswith(": 1")
    expect(today.locator("title")).to_have_text(today.get_attribute("aria-label") or "?")

    # The keyboard. The heatmap is one tab stop (today's square); up is the day before.
    page.mouse.move(0, 0)
    heat = page.locator("section.heatmap")
    day = heat.locator("[data-point]").last
    assert "1 answer" in (day.get_attribute("aria-label") or "")
    day.focus()
    expect(heat.locator("[data-readout]")).to_contain_text("1 answer")
    page.keyboard.press("ArrowUp")
    expect(heat.locator("[data-point]").nth(363)).to_be_focused()
    expect(heat.locator("[data-readout]")).to_contain_text("0 answers")
    # The next tab stop is the reviews chart's, today's bar; the arrows move along the days.
    page.keyboard.press("Tab")
    expect(today).to_be_focused()
    page.keyboard.press("ArrowLeft")
    yesterday = reviews.locator("[data-point]").nth(88)
    expect(yesterday).to_be_focused()
    expect(readout).to_have_text(yesterday.get_attribute("aria-label") or "?")
    assert (yesterday.get_attribute("aria-label") or "").endswith(": 0")
    page.keyboard.press("Home")
    expect(reviews.locator("[data-point]").first).to_be_focused()
    # Retention has no answer to a card in review yet, and says so instead of a blank frame.
    expect(page.locator("#chart-3-empty")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "stats-en-charts.png"), full_page=True)
    assert not problems, problems
    context.close()


def test_library_and_stats_in_korean_on_a_phone(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "ko", width=390)
    _sign_up(page, server, "phone-ko@example.com")
    page.locator("form[action$='/subscription'] button[type=submit]").first.click()
    page.goto(f"{server}/study")
    page.keyboard.press("Space")
    page.keyboard.press("3")
    expect(page.locator("#live .flash")).to_be_visible()
    expect(page.locator(".card-deck")).to_contain_text("덱:")
    for name, path in [("library", "/"), ("stats", "/stats")]:
        page.goto(server + path)
        page.screenshot(path=str(ARTIFACTS / f"390-ko-{name}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
    # The heatmap's days are labelled in Korean, with Babel's full dates.
    label = page.locator("section.heatmap [data-point]").last.get_attribute("aria-label") or ""
    assert label.endswith("응답 1개") and "년" in label and "일" in label, label
    expect(page.locator("svg.days .weekday").first).to_have_text("일")  # a Korean week: Sunday
    # Too wide for a phone, it opens scrolled to the latest days, as the reviews per day do.
    scrolled = page.evaluate(
        "[...document.querySelectorAll('[data-scroll-end]')].map(box => box.scrollLeft)"
    )
    assert len(scrolled) == 2 and all(left > 0 for left in scrolled), scrolled
    assert not problems, problems
    context.close()


def test_a_folded_parent_deck_stays_folded(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "en")
    _sign_up(page, server, "folds@example.com")
    for title in ("Training", "Training::Notes"):
        page.goto(f"{server}/decks/new")
        page.fill("#deck-title", title)
        page.press("#deck-title", "Enter")
        page.wait_for_url("**/cards")
    page.goto(f"{server}/")
    fold = page.locator("details.subdecks")
    subdeck = fold.locator(".deck h3")
    expect(subdeck).to_have_text("Notes")
    fold.locator("summary").click()
    expect(subdeck).to_be_hidden()
    page.reload()
    expect(fold).not_to_have_attribute("open", "")
    expect(subdeck).to_be_hidden()
    # Opened again, it opens on the next visit too.
    fold.locator("summary").press("Enter")
    expect(subdeck).to_be_visible()
    page.reload()
    expect(subdeck).to_be_visible()
    assert not problems, problems
    context.close()


LUMINANCE = """(el) => {
  const [r, g, b] = getComputedStyle(el).backgroundColor.match(/[\\d.]+/g).map(Number);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}"""


def test_the_heatmap_shades_grow_away_from_the_page_in_either_theme(
    server: str, browser: Browser
) -> None:
    context, page, problems = _page(browser, "en")
    _sign_up(page, server, "heat@example.com")
    for scheme, darker_with_more in (("light", True), ("dark", False)):
        page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
        page.goto(f"{server}/stats")
        # Every level's swatch, as a busy year's legend shows them.
        page.evaluate(
            "for (let i = 0; i < 5; i++) { const s = document.createElement('span');"
            " s.className = 'swatch level-' + i; s.dataset.probe = '';"
            " document.querySelector('main').append(s); }"
        )
        swatches = page.locator("[data-probe]")
        shades = [swatches.nth(i).evaluate(LUMINANCE) for i in range(5)]
        page_shade = page.locator("html").evaluate(LUMINANCE)
        # More answers, further from the page's own shade: darker on light, brighter on dark.
        assert shades == sorted(shades, reverse=darker_with_more), (scheme, shades)
        assert abs(shades[4] - page_shade) > abs(shades[0] - page_shade), (scheme, page_shade)
    assert not problems, problems
    context.close()
