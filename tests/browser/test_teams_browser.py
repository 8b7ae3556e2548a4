"""A real browser on the team pages: create a team, copy an invitation link, join with it in
another browser, and the team pages at 320 px without horizontal scroll or script errors."""

from __future__ import annotations

import pytest

from .test_study_browser import ARTIFACTS, CHROMIUM, _page, _sign_up, browser, server

pytestmark = pytest.mark.browser
__all__ = ["CHROMIUM", "browser", "server"]  # the fixtures, shared with the study tests

from playwright.sync_api import Browser, expect  # noqa: E402


def test_team_invite_copy_join_and_narrow_layout(server: str, browser: Browser) -> None:
    context, page, problems = _page(browser, "es", width=320)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    _sign_up(page, server, "lead-browser@example.com")
    page.goto(f"{server}/teams")
    page.fill("#team-name", "Plataforma")
    page.locator("form[action='/teams'] button[type=submit]").click()
    expect(page.locator("h1")).to_have_text("Plataforma")
    team_url = page.url
    page.locator("#assign-deck").select_option("eks-model-training")
    page.locator("form[action$='/assignments'] button[type=submit]").click()
    page.fill("#link-label", "Promoción de marzo, equipo de plataforma")
    page.locator("form[action$='/invitations'] button[type=submit]").click()
    expect(page.locator("table.links")).to_contain_text("Promoción de marzo, equipo de plataforma")
    link = page.locator("#new-link").inner_text().strip()
    copy = page.locator("button[data-copy]")
    expect(copy).to_be_visible()
    copy.click()
    expect(copy).to_have_text("Copiado")
    assert page.evaluate("navigator.clipboard.readText()") == link
    # Reloading the page that showed the new link makes no second link: it is a GET now.
    # The page's deferred script makes it one, and has run once the DOM is loaded; a reload
    # before then would post again, as the browser was asked to.
    page.wait_for_load_state("domcontentloaded")
    assert page.url == team_url
    page.reload()
    expect(page.locator("table.links tbody tr")).to_have_count(1)
    expect(page.locator("#new-link")).to_have_count(0)
    # The same for a new API token.
    page.goto(f"{server}/tokens")
    page.fill("#token-name", "portátil")
    page.locator("form[action='/tokens'] button[type=submit]").click()
    expect(page.locator("#new-token")).to_be_visible()
    page.wait_for_load_state("domcontentloaded")
    assert page.url == f"{server}/tokens"
    page.reload()
    expect(page.locator("#new-token")).to_have_count(0)
    expect(page.locator("td", has_text="portátil")).to_have_count(1)
    page.goto(team_url)

    other, joiner, joiner_problems = _page(browser, "ko", width=320)
    _sign_up(joiner, server, "member-browser@example.com")
    # A link that does not work, then the right one opened over it: only the fragment
    # changes, so the page's script has to notice (hashchange) and post the new token.
    joiner.goto(f"{server}/join#not-a-real-token")
    expect(joiner.locator("h1")).to_have_text("이 링크는 사용할 수 없습니다")
    assert joiner_problems == [  # the page's 404 status, as meant; nothing else
        "Failed to load resource: the server responded with a status of 404 (NOT FOUND)"
    ]
    joiner_problems.clear()
    joiner.goto(link)
    # The page's script posted the token from the link's fragment and took it off the URL.
    expect(joiner.locator("h1")).to_contain_text("Plataforma")
    assert joiner.url == f"{server}/join"
    joiner.locator("form[action$='/join/confirm'] button[type=submit]").click()
    joiner.wait_for_url(team_url)
    expect(joiner.locator("table.assignments")).to_contain_text("EKS")
    assert "lead-browser@example.com" not in joiner.content()

    team_path = team_url.removeprefix(server)
    # A team deck from pasted CSV, so that its page and its delete page are measured too.
    page.goto(f"{server}{team_path}/decks")
    page.locator("input[name=format][value=csv]").check()
    page.fill("#deck-title", "Glosario de GPU con un título bastante largo para una pantalla")
    page.fill(
        "#deck-content",
        "¿Qué es NCCL?,Una biblioteca de colectivas\n¿Qué es EFA?,Una interfaz de red\n",
    )
    page.locator("form[action$='/decks'] button[type=submit]").click()
    expect(page.locator("h1")).to_contain_text("Glosario")
    deck_path = page.url.removeprefix(server)
    for name, path in [
        ("teams", "/teams"),
        ("team", team_path),
        ("dashboard", f"{team_path}/dashboard"),
        ("team-decks", f"{team_path}/decks"),
        ("team-deck", deck_path),
        ("team-deck-delete", f"{deck_path}/delete"),
        ("team-delete", f"{team_path}/delete"),
    ]:
        page.goto(server + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=str(ARTIFACTS / f"320-{name}.png"), full_page=True)
        assert width <= 320, f"{path} is {width}px wide at 320px"
    # On a phone the assigned decks read as a card each, nothing scrolled out of sight.
    page.goto(server + team_path)
    assigned = page.locator("table.assignments").locator("xpath=..")
    assert assigned.evaluate("b => b.scrollWidth <= b.clientWidth + 1")
    expect(page.locator("table.assignments td[data-label]").first).to_be_visible()
    # On a laptop's screen the member table fits: its due dates wrap, its last column shows.
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{server}{team_path}/dashboard")
    box = page.locator("table.dashboard").locator("xpath=..")
    assert box.evaluate("b => b.scrollWidth <= b.clientWidth + 1"), box.evaluate(
        "b => [b.scrollWidth, b.clientWidth]"
    )
    assert not problems and not joiner_problems, (problems, joiner_problems)
    other.close()
    context.close()
