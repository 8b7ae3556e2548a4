"""A real browser on the personal FSRS pages: the desired-retention view and the reschedule
preview, in Korean and Spanish at 320 px, without horizontal scroll or script errors."""

from __future__ import annotations

import pytest

from .test_study_browser import ARTIFACTS, CHROMIUM, _page, _sign_up, browser, server

pytestmark = pytest.mark.browser
__all__ = ["CHROMIUM", "browser", "server"]  # the fixtures, shared with the study tests

from playwright.sync_api import Browser, expect  # noqa: E402

HEADINGS = {
    "ko": ("목표 기억률에 따른 복습량", "카드 일정 다시 잡기", "추천"),
    "es": ("Retención deseada: lo que cuesta", "Reprograma tus tarjetas", "sugerida"),
}


@pytest.mark.parametrize("language", ["ko", "es"])
def test_retention_and_reschedule_pages_at_320_px(
    server: str, browser: Browser, language: str
) -> None:
    context, page, problems = _page(browser, language, width=320)
    _sign_up(page, server, f"fsrs-{language}@example.com")
    page.locator("form[action$='/subscription'] button[type=submit]").click()
    retention, reschedule, suggested = HEADINGS[language]

    page.goto(f"{server}/settings")
    page.locator("a[href='/settings/fsrs/retention']").click()
    expect(page.locator("h1")).to_have_text(retention)
    rows = page.locator("table.fsrs-retention tbody tr")
    expect(rows).to_have_count(28)
    expect(page.locator("tr.suggested th")).to_contain_text(suggested)
    expect(rows.first.locator("th")).to_contain_text("70")
    width = page.evaluate("document.documentElement.scrollWidth")
    page.screenshot(path=str(ARTIFACTS / f"320-fsrs-retention-{language}.png"), full_page=True)
    assert width <= 320, f"the retention page is {width}px wide at 320px"

    page.goto(f"{server}/settings/fsrs/reschedule")
    expect(page.locator("h1")).to_have_text(reschedule)
    expect(page.locator("table.fsrs-workload tbody tr")).to_have_count(30)
    # Nothing answered yet: nothing to move, so no button to press.
    expect(page.locator("form[action='/settings/fsrs/reschedule']")).to_have_count(0)
    width = page.evaluate("document.documentElement.scrollWidth")
    page.screenshot(path=str(ARTIFACTS / f"320-fsrs-reschedule-{language}.png"), full_page=True)
    assert width <= 320, f"the reschedule page is {width}px wide at 320px"
    assert not problems, problems
    context.close()
