"""A real browser uploads a file over the team deck form's limit: the page comes back with
the form and the limit in the person's language, not an error page; just over the limit,
what was typed is kept as well."""

from __future__ import annotations

import pytest

from flashcards.teams.deck_uploads import MAX_UPLOAD_BYTES
from flashcards.web.uploads import MULTIPART_SLACK

from .test_study_browser import ARTIFACTS, CHROMIUM, _page, _sign_up, browser, server

pytestmark = pytest.mark.browser
__all__ = ["CHROMIUM", "browser", "server"]  # the fixtures, shared with the study tests

from playwright.sync_api import Browser, expect  # noqa: E402

TOO_LARGE = "Lo que has subido es demasiado grande"


def test_an_oversized_upload_keeps_the_form(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "es", width=390)
    _sign_up(page, server, "uploads-browser@example.com")
    page.goto(f"{server}/teams")
    page.fill("#team-name", "Subidas")
    page.locator("form[action='/teams'] button[type=submit]").click()
    expect(page.locator("h1")).to_have_text("Subidas")
    decks = page.url + "/decks"
    page.goto(decks)
    expect(page.locator("#deck-limits")).to_have_text(
        "Un archivo o un texto de hasta 4 MiB, con 5.000 tarjetas como máximo."
    )

    # Just over the limit: the server reads the form, so the title and format come back.
    page.locator("input[name=format][value=csv]").check()
    page.fill("#deck-title", "Glosario de GPU")
    just_over = b"Q,A\n" * (MAX_UPLOAD_BYTES // 4) + b"Q,A\n"
    page.set_input_files(
        "#deck-file", files=[{"name": "big.csv", "mimeType": "text/csv", "buffer": just_over}]
    )
    with page.expect_response(lambda r: r.request.method == "POST") as sent:
        page.locator("form[action$='/decks'] button[type=submit]").click()
    assert sent.value.status == 413
    expect(page.locator("#deck-error")).to_contain_text(TOO_LARGE)
    expect(page.locator("#deck-error")).to_contain_text("4 MiB")
    expect(page.locator("#deck-title")).to_have_value("Glosario de GPU")
    expect(page.locator("input[name=format][value=csv]")).to_be_checked()
    problems.clear()  # the console's note of the 413, as meant

    # Far over it: refused unread, the same page with its form, empty.
    far = b"x" * (MAX_UPLOAD_BYTES + MULTIPART_SLACK + 1024)
    page.set_input_files(
        "#deck-file", files=[{"name": "huge.csv", "mimeType": "text/csv", "buffer": far}]
    )
    with page.expect_response(lambda r: r.request.method == "POST") as sent:
        page.locator("form[action$='/decks'] button[type=submit]").click()
    assert sent.value.status == 413
    expect(page.locator("#deck-error")).to_contain_text(TOO_LARGE)
    expect(page.locator("#deck-file")).to_be_visible()
    expect(page.locator("form[action$='/decks'] button[type=submit]")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "390-team-decks-too-large-es.png"), full_page=True)
    problems.clear()

    # The form still works: a small CSV makes the deck.
    page.locator("input[name=format][value=csv]").check()
    page.fill("#deck-title", "Glosario")
    page.set_input_files(
        "#deck-file",
        files=[{"name": "ok.csv", "mimeType": "text/csv", "buffer": b"NCCL,Colectivas\n"}],
    )
    page.locator("form[action$='/decks'] button[type=submit]").click()
    expect(page.locator("h1")).to_have_text("Glosario")
    assert not problems, problems
    context.close()
