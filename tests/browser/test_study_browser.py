"""A real browser: sign up, subscribe in Korean or Spanish, study with the keyboard alone,
undo; and the layout at 320 px. Screenshots go to test-artifacts/.

Needs Debian's chromium at /usr/bin/chromium; without it these tests skip, unless
FLASHCARDS_REQUIRE_BROWSER=1 (CI), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from flashcards import create_app
from flashcards.storage import migrate
from flashcards.storage.engine import make_engine

from ..conftest import load_shipped_decks

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PASSWORD = "correct horse battery"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = pytest.mark.browser

if not CHROMIUM.exists():
    if os.environ.get("FLASHCARDS_REQUIRE_BROWSER") == "1":
        raise RuntimeError("FLASHCARDS_REQUIRE_BROWSER=1 but /usr/bin/chromium is missing")
    pytest.skip(
        "browser tests skipped: /usr/bin/chromium is not installed", allow_module_level=True
    )

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402


def _closed_before_sending(app: WSGIApplication) -> WSGIApplication:
    """The app with each response read (and its file closed) before Werkzeug sends it.

    Werkzeug's development server does not close a response whose client went away (the
    browser drops a favicon fetch when the page moves on), and the open static file then
    surfaces as a ResourceWarning in whichever test runs next.
    """

    def buffered(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        response = app(environ, start_response)
        try:
            return [b"".join(response)]
        finally:
            close = getattr(response, "close", None)
            if close is not None:
                close()

    return buffered


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from werkzeug.serving import make_server

    url = f"sqlite:///{tmp_path_factory.mktemp('browser') / 'db.sqlite3'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    load_shipped_decks(engine)
    engine.dispose()
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "browser-test"})
    httpd = make_server("127.0.0.1", 0, _closed_before_sending(app), threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    thread.join(5)
    app.extensions["flashcards.engine"].dispose()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def _page(browser: Browser, locale: str, width: int = 1000) -> tuple[Any, Page, list[str]]:
    context = browser.new_context(
        locale=locale, viewport={"width": width, "height": 800}, timezone_id="Asia/Seoul"
    )
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    return context, page, problems


def _sign_up(page: Page, server: str, email: str) -> None:
    page.goto(f"{server}/signup")
    page.fill("#email", email)
    page.fill("#password", PASSWORD)
    page.press("#password", "Enter")
    page.wait_for_url(f"{server}/")


STUDY_CASES = {
    "ko": {
        "subscribed": "이 덱의 학습 언어는 한국어입니다.",
        "labels": ["다시", "어려움", "알맞음", "쉬움"],
        "interval": re.compile(r"^\d+(\.\d)?(분|시간|일|개월|년)$"),
        "undone": "되돌렸습니다",
        # Shift+U: the physical U key, whatever it types (capital U here, ㅕ with Korean input).
        "undo_key": "Shift+U",
        "show": "정답 보기",
    },
    "es": {
        "subscribed": "Estudias este mazo en español.",
        "labels": ["Otra vez", "Difícil", "Bien", "Fácil"],
        "interval": re.compile(r"^\d+(,\d)? (minutos?|horas?|días?|mes(es)?|años?)$"),
        "undone": "Deshecho",
        "undo_key": "Control+z",
        "show": "Mostrar respuesta",
    },
}


@pytest.mark.parametrize("language", ["ko", "es"])
def test_study_three_cards_with_the_keyboard_and_undo(
    server: str, browser: Browser, language: str
) -> None:
    case = STUDY_CASES[language]
    context, page, problems = _page(browser, language)
    _sign_up(page, server, f"{language}@example.com")
    expect(page.locator("html")).to_have_attribute("lang", language)
    page.select_option("#locale-eks-model-training", language)
    page.locator("form[action$='/subscription'] button[type=submit]").click()
    expect(page.locator("#live")).to_contain_text(str(case["subscribed"]))

    page.goto(f"{server}/study")
    # A marker on window survives only if no answer reloads the page.
    page.evaluate("window.__noReload = true")
    expect(page.locator("#reveal")).to_have_text(str(case["show"]))
    questions = []
    for i in range(3):
        question = page.locator("#question").inner_text()
        questions.append(question)
        expect(page.locator("#answer")).to_be_hidden()
        if i == 0:  # Space held down reveals, and its repeats do not answer
            page.keyboard.down("Space")
            expect(page.locator("#answer")).to_be_visible()
            page.keyboard.down("Space")
            page.keyboard.up("Space")
            page.wait_for_timeout(300)  # an answer sent would have replaced the card by now
            expect(page.locator("#question")).to_have_text(question)
        else:
            page.keyboard.press("Space" if i % 2 == 0 else "Enter")
        expect(page.locator("#answer")).to_be_visible()
        expect(page.locator("#answer")).to_be_focused()
        labels = page.locator(".rate-label").all_inner_texts()
        assert labels == case["labels"]
        for interval in page.locator(".rate-interval").all_inner_texts():
            assert case["interval"].match(interval.strip()), interval  # type: ignore[union-attr]
        if i == 0:
            page.screenshot(path=str(ARTIFACTS / f"study-{language}-revealed.png"))
        # Good by its digit, then by Space pressed again (Anki's default answer), then Easy.
        page.keyboard.press(["3", "Space", "4"][i])
        expect(page.locator("#question")).not_to_have_text(question)
        expect(page.locator("#question")).to_be_focused()
    assert page.evaluate("window.__noReload") is True
    assert len(set(questions)) == 3

    page.keyboard.press(str(case["undo_key"]))
    expect(page.locator("#live")).to_contain_text(str(case["undone"]))
    expect(page.locator("#question")).to_have_text(questions[2])
    expect(page.locator("html")).to_have_attribute("lang", language)
    counts = page.locator(".counts .num").all_inner_texts()
    assert counts == ["13", "2", "0"]
    page.screenshot(path=str(ARTIFACTS / f"study-{language}-after-undo.png"), full_page=True)
    page.goto(f"{server}/stats")
    # No answer to a card in review yet: the retention chart says so instead of a blank frame.
    expect(page.locator("svg.bars")).to_have_count(2)
    expect(page.locator("#chart-3-empty")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / f"stats-{language}.png"), full_page=True)
    assert not problems, problems
    context.close()


def test_layout_at_320_px_has_no_horizontal_scroll(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "ko", width=320)
    _sign_up(page, server, "narrow@example.com")
    page.locator("form[action$='/subscription'] button[type=submit]").click()
    for name, path in [
        ("library", "/"),
        ("deck", "/decks/eks-model-training"),
        ("study", "/study?show=1"),
        ("settings", "/settings"),
        ("tokens", "/tokens"),
        ("stats", "/stats"),
    ]:
        page.goto(server + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=str(ARTIFACTS / f"320-{name}.png"), full_page=True)
        assert width <= 320, f"{path} is {width}px wide at 320px"
    # With an answer the charts and the year's heatmap are drawn: each scrolls in its box.
    page.goto(f"{server}/study")
    page.keyboard.press("Space")
    # The answer buttons stay on the screen, however far the answer reaches below it.
    expect(page.locator("#answer")).to_be_visible()
    page.evaluate(
        "document.querySelector('.answer-text').style.minHeight = '1200px';window.scrollTo(0, 0)"
    )  # a long answer, read from its top
    for n in range(1, 5):
        box = page.locator(f".rate-{n}").bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 800, (n, box)
    page.keyboard.press("3")
    expect(page.locator("#live .flash")).to_be_visible()
    page.goto(f"{server}/stats")
    expect(page.locator("svg.days")).to_have_count(1)
    assert page.evaluate("document.documentElement.scrollWidth") <= 320
    # Reviews per day opens on the latest days, scrolled, with its y axis still at the box's
    # left and the bars' own axis under it.
    reviews = page.locator("section.chart", has=page.locator("#chart-1")).locator(".scroll")
    assert reviews.evaluate("box => box.scrollLeft") > 0
    frame, axis = reviews.bounding_box(), reviews.locator("svg.axis").bounding_box()
    bars = reviews.locator("svg.bars").bounding_box()
    assert frame and axis and bars
    assert abs(axis["x"] - frame["x"]) <= 1.5 and axis["width"] > 30, (frame, axis)
    assert abs(axis["height"] - bars["height"]) < 0.5, (axis, bars)
    assert reviews.locator("svg.axis .tick").first.is_visible()
    page.screenshot(path=str(ARTIFACTS / "320-stats-charts.png"), full_page=True)
    # The charts' labels keep a legible size (scaled to the width they were about 6 px).
    heights = page.eval_on_selector_all(
        "svg .tick, svg .xlabel", "els => els.map(e => e.getBoundingClientRect().height)"
    )
    assert heights and min(heights) >= 9, heights
    # Sign-up took the browser's timezone.
    page.goto(f"{server}/settings")
    expect(page.locator("#timezone")).to_have_value("Asia/Seoul")
    assert not problems, problems
    context.close()


def test_study_works_without_javascript(server: str, browser: Browser) -> None:
    context = browser.new_context(locale="es", java_script_enabled=False)
    page = context.new_page()
    _sign_up(page, server, "nojs@example.com")
    page.locator("form[action$='/subscription'] button[type=submit]").click()
    page.goto(f"{server}/study")
    first = page.locator("#question").inner_text()
    page.click("#reveal")
    # A second tab shows the same card, with the same review id.
    other = context.new_page()
    other.goto(page.url)
    expect(other.locator("#question")).to_have_text(first)
    page.locator("button.rate-3").click()
    expect(page.locator("#question")).not_to_have_text(first)
    expect(page.locator("#live")).to_contain_text("Bien")
    other.locator("button.rate-1").click()
    # Sent twice, applied once: the card is in learning once, and no lapse was recorded.
    expect(other.locator("#question")).not_to_have_text(first)
    assert other.locator(".counts .num").all_inner_texts() == ["14", "1", "0"]
    page.screenshot(path=str(ARTIFACTS / "study-es-no-javascript.png"), full_page=True)
    context.close()


def test_custom_study_reveals_and_answers_in_place(server: str, browser: Browser) -> None:
    """Custom study's cards show their answer and take ratings as the study page's do: with
    Space or a click, then 1-4, without a reload (the link only showed the answer without
    JavaScript: with it, a click did nothing)."""
    context, page, problems = _page(browser, "en")
    _sign_up(page, server, "custom@example.com")
    # Each form's page is waited for: under load, the next step could otherwise run on the
    # page the form was sent from (a flag set there, a marker lost with it).
    with page.expect_navigation():
        page.locator("form[action$='/subscription'] button[type=submit]").click()
    page.goto(f"{server}/study")
    page.keyboard.press("Control+Digit1")  # a red flag on the first card
    expect(page.locator("#card-actions")).to_have_attribute("data-flag", "1")
    page.goto(f"{server}/study/custom")
    # The form shows what the kind of session chosen reads: days for studying ahead...
    expect(page.locator("#days")).to_be_visible()
    expect(page.locator("#flag")).to_be_hidden()
    page.check("input[name=mode][value=flag]")
    # ...a flag for a flag's cards.
    expect(page.locator("#days")).to_be_hidden()
    expect(page.locator("#tag")).to_be_hidden()
    page.select_option("#flag", "1")
    with page.expect_navigation():
        page.click("form[action$='/study/custom'] button[type=submit]")
    page.evaluate("window.__noReload = true")
    expect(page.locator("#answer")).to_be_hidden()
    page.keyboard.press("Space")
    expect(page.locator("#answer")).to_be_visible()
    expect(page.locator("#answer")).to_be_focused()
    flagged = page.locator("#question").inner_text()
    expect(page.locator("#card-flag")).to_have_text("Flag: Red")  # the study page's controls
    page.keyboard.press("3")
    expect(page.locator("#question")).to_have_text("Custom study is done")
    # Undo, as on the study page: the card is back in the session, not on the study page.
    page.keyboard.press("u")
    expect(page.locator("#question")).to_have_text(flagged)
    expect(page.locator(".custom-mode")).to_be_visible()
    page.keyboard.press("Space")
    page.keyboard.press("Space")  # Good, Anki's default answer
    expect(page.locator("#question")).to_have_text("Custom study is done")
    assert page.evaluate("window.__noReload") is True
    # A preview: the answer by a click, then the next card.
    with page.expect_navigation():
        page.click("button:has-text('End custom study')")
    page.check("input[name=mode][value=preview]")
    page.select_option("#deck", "eks-model-training")
    page.fill("#amount", "2")
    with page.expect_navigation():
        page.click("form[action$='/study/custom'] button[type=submit]")
    first = page.locator("#question").inner_text()
    page.click("#reveal")
    expect(page.locator("#answer")).to_be_visible()
    page.click("#answer-form button[type=submit]")
    expect(page.locator("#question")).not_to_have_text(first)
    expect(page.locator("#answer")).to_be_hidden()
    assert not problems, problems
    context.close()


def test_the_language_menu_waits_for_its_button(server: str, browser: Browser) -> None:
    """Arrow keys move through the languages without leaving the page (WCAG 3.2.2): a
    change of language is asked for with the button, not made by the first key press."""
    context, page, problems = _page(browser, "en")
    page.goto(f"{server}/signin")
    page.focus("#lang-select")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.locator("html").get_attribute("lang") == "en"
    assert page.locator("#lang-select").input_value() == "ko"
    page.locator("form.lang button[type=submit]").click()
    expect(page.locator("html")).to_have_attribute("lang", "ko")
    expect(page.locator("h1")).to_have_text("로그인")
    assert not problems, problems
    context.close()
