"""A real browser through "Forgot password?": the link is mailed through a real SMTP server
on localhost, opened from the mail, and the new password set with it, once."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller

from flashcards import create_app
from flashcards.storage import migrate
from flashcards.storage.engine import make_engine

from ..smtp_server import MAIL_FROM, Inbox, free_port, text_of
from .test_study_browser import ARTIFACTS, CHROMIUM, PASSWORD, _page, _sign_up, browser

pytestmark = pytest.mark.browser
__all__ = ["CHROMIUM", "browser"]  # the fixture, shared with the study tests

from playwright.sync_api import Browser, expect  # noqa: E402

NEW_PASSWORD = "una contraseña nueva"


@pytest.fixture(scope="module")
def mailing_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Inbox]]:
    from werkzeug.serving import make_server

    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    url = f"sqlite:///{tmp_path_factory.mktemp('reset-browser') / 'db.sqlite3'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    app = create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "browser-test",
            "SMTP_URL": f"smtp://127.0.0.1:{port}",
            "MAIL_FROM": MAIL_FROM,
        }
    )
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    base = f"http://127.0.0.1:{httpd.server_port}"
    app.config["BASE_URL"] = base  # known once the server has its port
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield base, inbox
    finally:
        httpd.shutdown()
        thread.join(5)
        app.extensions["flashcards.engine"].dispose()
        controller.stop()


def test_forgot_password_by_mail_end_to_end(
    mailing_server: tuple[str, Inbox], browser: Browser
) -> None:
    server, inbox = mailing_server
    context, page, problems = _page(browser, "ko")
    _sign_up(page, server, "reset-browser@example.com")  # Korean: their saved language
    context.close()

    context, page, problems = _page(browser, "es", width=390)
    page.goto(f"{server}/signin")
    page.get_by_role("link", name="¿Has olvidado la contraseña?").click()
    expect(page.locator("h1")).to_have_text("¿Has olvidado tu contraseña?")
    page.fill("#email", "Reset-Browser@example.com")
    page.press("#email", "Enter")
    expect(page.locator("h1")).to_have_text("Revisa tu correo")
    page.screenshot(path=str(ARTIFACTS / "390-es-forgot-sent.png"), full_page=True)

    # Mailed once the answer is sent: it may arrive a moment after the page.
    deadline = time.monotonic() + 10
    while not inbox.to("reset-browser@example.com") and time.monotonic() < deadline:
        time.sleep(0.05)
    [mail] = inbox.to("reset-browser@example.com")
    assert mail["Subject"] == "Flashcards 비밀번호 재설정"
    [link] = [line for line in text_of(mail).splitlines() if line.startswith(server)]

    page.goto(link)
    # The script took the token from the fragment into the form, and off the address bar.
    assert page.url == f"{server}/reset"
    expect(page.locator("#reset-link")).to_be_hidden()
    page.fill("#new_password", NEW_PASSWORD)
    page.screenshot(path=str(ARTIFACTS / "390-es-reset.png"), full_page=True)
    page.locator("form[data-reset-link] button[type=submit]").click()
    page.wait_for_url(f"{server}/")
    # Signed in now: the pages speak their saved language.
    expect(page.locator(".flash")).to_contain_text("비밀번호를 변경했고 로그인되었습니다")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390

    # The link again, in another browser: it worked once.
    again, other, other_problems = _page(browser, "es")
    other.goto(link)
    other.fill("#new_password", "otra contraseña más")
    other.locator("form[data-reset-link] button[type=submit]").click()
    expect(other.locator("h1")).to_have_text("Este enlace no funciona")
    assert other_problems == [
        "Failed to load resource: the server responded with a status of 404 (NOT FOUND)"
    ]
    # The new password signs in; the old one does not.
    other.goto(f"{server}/signin")
    other.fill("#email", "reset-browser@example.com")
    other.fill("#password", PASSWORD)
    other.press("#password", "Enter")
    expect(other.locator("h1")).to_have_text("Iniciar sesión")
    other.fill("#password", NEW_PASSWORD)
    other.press("#password", "Enter")
    other.wait_for_url(f"{server}/")
    assert not problems, problems
    again.close()
    context.close()
