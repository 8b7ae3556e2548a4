"""Every main page in a real browser, in English, Spanish and Korean at 1280 and 390 px, and
dark in English too (colours do not change with the language): axe-core finds no serious or
critical violation, no table cell breaks inside a word or a number, and nothing but a scroll
box is wider than the screen. Screenshots go to test-artifacts/: of a failing page, and of
the Korean and dark ones. Also the header (a menu on phones, with and without JavaScript),
the language applied on pick, the theme chosen in settings, and keyboard hints only with a
keyboard.

axe-core comes from the npm registry through make (`.cache/npm`, git-ignored); a missing copy
skips these tests, or fails them under FLASHCARDS_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from flashcards import create_app
from flashcards.decks import own_decks
from flashcards.srs.settings import apply_user_settings
from flashcards.storage import migrate
from flashcards.storage.engine import make_engine, transaction
from flashcards.storage.models import Deck
from flashcards.teams import assignments, invitations, membership, team_decks

from ..conftest import load_shipped_decks
from ..factories import PASSWORD, answer, card_ids, make_user
from .test_study_browser import ARTIFACTS, _closed_before_sending, browser

pytestmark = pytest.mark.browser
__all__ = ["browser"]  # the fixture, shared with the study tests

from playwright.sync_api import Browser, BrowserContext, Page, expect  # noqa: E402

AXE = Path(__file__).resolve().parents[2] / ".cache/npm/node_modules/axe-core/axe.min.js"
if not AXE.exists():
    message = (
        f"axe-core is missing at {AXE}: run `make .cache/npm/node_modules/axe-core/axe.min.js`"
    )
    if os.environ.get("FLASHCARDS_REQUIRE_BROWSER") == "1":
        raise RuntimeError(message)
    pytest.skip(f"accessibility tests skipped: {message}", allow_module_level=True)

WIDTHS = (1280, 390)
# (language, colour scheme): contrast depends on the theme alone, layout on the language (the
# longest lines are Spanish and Korean ones; English is the dark theme's).
RUNS = [("es", "light"), ("ko", "light"), ("en", "dark")]
# People whose names and languages stretch the tables: long Spanish names, Korean ones.
LEADS = {
    "en": ("lead-en@example.com", "Avery Lead"),
    "es": ("lead-es@example.com", "Lucía Martínez Echeverría"),
    "ko": ("lead-ko@example.com", "김민준"),
}
MEMBERS = [
    ("maximiliano.fernandez-de-la-cruz@example.com", "Maximiliano Fernández de la Cruz"),
    ("seo-yeon@example.com", "이서연"),
    ("training@example.com", ""),
]
# A subdeck (the library nests it under a parent with no deck of its own) holding a card
# with a blank (marked on both sides), so both are checked in every theme and language.
OWN_TITLE = {
    "en": "Training::Distributed training notes",
    "es": "Entrenamiento::Apuntes de entrenamiento distribuido",
    "ko": "학습::분산 학습 노트",
}
OWN_CLOZE = {
    "en": "{{c1::FSDP}} shards the {{c2::optimizer state}} across GPUs.",
    "es": "{{c1::FSDP}} reparte el {{c2::estado del optimizador}} entre las GPU.",
    "ko": "{{c1::FSDP}}는 {{c2::옵티마이저 상태}}를 여러 GPU에 나눠 둡니다.",
}
OWN_CARD = {
    "en": ("NCCL's all-reduce [...] the gradients across every GPU.",
           "NCCL's all-reduce sums the gradients across every GPU."),
    "es": ("El all-reduce de NCCL [...] los gradientes de todas las GPU.",
           "El all-reduce de NCCL suma los gradientes de todas las GPU."),
    "ko": ("NCCL의 all-reduce는 모든 GPU의 그래디언트를 [...].",
           "NCCL의 all-reduce는 모든 GPU의 그래디언트를 합산합니다."),
}  # fmt: skip
CSV = "\n".join(
    f"¿Qué hace la operación colectiva número {i} de NCCL?,Sincroniza los gradientes {i}"
    for i in range(1, 7)
)


@dataclass(frozen=True)
class Site:
    url: str
    team: str  # the team's path
    team_deck: str  # a team deck's path
    card: int  # a shipped card the leads have answered, for its history page
    own_decks: dict[str, tuple[str, str]]  # per language: a lead's own deck's slug, a card's key


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A server with a team whose three leads (one per language) have answered some cards."""
    from werkzeug.serving import make_server

    url = f"sqlite:///{tmp_path_factory.mktemp('design') / 'db.sqlite3'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    load_shipped_decks(engine)
    now = datetime.now(UTC)
    with transaction(engine) as s:
        leads = {}
        for locale, (email, name) in LEADS.items():
            leads[locale] = make_user(s, email, locale=locale, timezone="Asia/Seoul", now=now)
            apply_user_settings(s, leads[locale], {"display_name": name})
        owner = leads["en"]
        team = membership.create_team(s, owner, "Plataforma de entrenamiento de modelos", now=now)
        link = invitations.create_invitation(s, team.id, owner, now=now)
        members = [leads["es"], leads["ko"]]
        for email, name in MEMBERS:
            member = make_user(s, email, now=now)
            apply_user_settings(s, member, {"display_name": name})
            members.append(member)
        for member in members:
            invitations.join(s, member, link.token, now=now)
        for locale in ("es", "ko"):
            membership.change_role(s, team.id, owner, leads[locale], "manager")
        deck, _report = team_decks.create_team_deck(
            s, team.id, owner, fmt="csv", content=CSV, locale="es", title="Glosario de GPU", now=now
        )
        due = (now + timedelta(days=21)).date()
        assignments.assign(s, team.id, owner, "eks-model-training", due, now=now)
        assignments.assign(s, team.id, owner, deck.slug, due, now=now)
        shipped = s.query(Deck).filter_by(slug="eks-model-training").one()
        cards = card_ids(s, shipped.id)
        for i, lead in enumerate(leads.values()):
            for j, card in enumerate(cards[: 5 + i]):
                answer(
                    s, lead, card, "again" if j % 3 == 0 else "good", now=now - timedelta(hours=j)
                )
        own = {}
        for locale, lead in leads.items():
            question, reply = OWN_CARD[locale]
            mine = own_decks.create_own_deck(
                s, lead, title=OWN_TITLE[locale], locales=[locale], now=now
            )
            (key,) = own_decks.add_card(
                s,
                lead,
                mine.slug,
                question=question,
                answer=reply,
                explanation="",
                tags=["gpu"],
                now=now,
            )
            # And a Cloze text's cards, whose page edits the text as a whole.
            own_decks.add_card(
                s, lead, mine.slug, question=OWN_CLOZE[locale], answer="", explanation="",
                tags=None, now=now,
            )  # fmt: skip
            own[locale] = (mine.slug, key)
        team_path, deck_path = f"/teams/{team.id}", f"/teams/{team.id}/decks/{deck.slug}"
    engine.dispose()
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "design-browser-test"})
    httpd = make_server("127.0.0.1", 0, _closed_before_sending(app), threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield Site(f"http://127.0.0.1:{httpd.server_port}", team_path, deck_path, cards[0], own)
    httpd.shutdown()
    thread.join(5)
    app.extensions["flashcards.engine"].dispose()


def _context(
    browser: Browser, locale: str, width: int, scheme: str, **options: Any
) -> BrowserContext:
    return browser.new_context(
        locale=locale,
        viewport={"width": width, "height": 844 if width < 500 else 900},
        color_scheme=scheme,  # type: ignore[arg-type]
        timezone_id="Asia/Seoul",
        **options,
    )


def _sign_in(page: Page, site: Site, email: str) -> None:
    page.goto(f"{site.url}/signin")
    page.fill("#email", email)
    page.fill("#password", PASSWORD)
    page.press("#password", "Enter")
    page.wait_for_url(f"{site.url}/")


HERE = Path(__file__).parent
AXE_RUN = (HERE / "axe_run.js").read_text(encoding="utf-8")
LAYOUT_CHECK = (HERE / "layout_check.js").read_text(encoding="utf-8")


def _pages(site: Site, locale: str) -> list[tuple[str, str]]:
    own, key = site.own_decks[locale]
    return [
        ("library", "/"),
        ("deck", "/decks/eks-model-training"),
        ("study", "/study"),
        ("stats", "/stats"),
        ("settings", "/settings"),
        ("tokens", "/tokens"),
        ("teams", "/teams"),
        ("team", site.team),
        ("dashboard", f"{site.team}/dashboard"),
        ("team-decks", f"{site.team}/decks"),
        ("team-deck", site.team_deck),
        ("deck-cards", "/decks/eks-model-training/cards"),
        ("browse", "/browse"),
        ("card-history", f"/browse/cards/{site.card}"),
        ("leeches", "/leeches"),
        ("custom-study", "/study/custom"),
        ("study-options", "/study-options"),
        ("new-deck", "/decks/new"),
        ("own-deck", f"/decks/{own}"),
        ("own-card", f"/decks/{own}/cards/{key}"),
        ("own-cloze", f"/decks/{own}/cards/c002-c2"),
        ("reschedule", "/settings/fsrs/reschedule"),
        ("retention", "/settings/fsrs/retention"),
        ("media", "/media"),
    ]


SIGNED_OUT = [
    ("signin", "/signin"),
    ("signup", "/signup"),
    ("join", "/join"),
    ("forgot", "/forgot"),
]


def _check(
    page: Page, name: str, tag: str, failures: list[str], *, layout: bool, screenshot: bool
) -> None:
    before = len(failures)
    for violation in page.evaluate(AXE_RUN):
        failures.append(f"{tag} {name}: {violation}")
    if layout:
        found = page.evaluate(LAYOUT_CHECK)
        if found["broken"]:
            failures.append(f"{tag} {name}: words broken inside a table cell: {found['broken']}")
        if found["overflowing"] or found["pageWidth"] > found["viewport"]:
            failures.append(
                f"{tag} {name}: {found['pageWidth']}px wide at {found['viewport']}px: "
                f"{found['overflowing']}"
            )
    if screenshot or len(failures) > before:
        page.screenshot(path=str(ARTIFACTS / f"design-{tag}-{name}.png"), full_page=True)


@pytest.mark.parametrize(("locale", "scheme"), RUNS)
def test_every_page_passes_axe_and_keeps_its_tables_whole(
    site: Site, browser: Browser, locale: str, scheme: str
) -> None:
    failures: list[str] = []
    for width in WIDTHS:
        tag = f"{locale}-{scheme}-{width}"
        context = _context(browser, locale, width, scheme)
        # Loaded into every page before its own scripts, bypassing the page's CSP.
        context.add_init_script(path=AXE)
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda e, found=problems: found.append(str(e)))
        # Tables and overflow depend on the width and the language, not the colours. A page
        # that fails is photographed; for a look at the rest, the Korean pages (the longest
        # lines) and the dark theme's, which are a third of the sweep's time.
        checks = {
            "layout": scheme == "light",
            "screenshot": locale == "ko" or (scheme == "dark" and width > 500),
        }
        # A theme's colours are the same at every width: at a phone's, the dark theme is
        # checked on what only a phone shows, the open menu.
        sweep = scheme == "light" or width > 500
        for name, path in SIGNED_OUT if sweep else ():
            page.goto(site.url + path)
            _check(page, name, tag, failures, **checks)
        _sign_in(page, site, LEADS[locale][0])
        for name, path in _pages(site, locale) if sweep else ():
            page.goto(site.url + path)
            _check(page, name, tag, failures, **checks)
            if name == "study" and page.locator("#reveal").count():
                page.locator("#reveal").click()
                expect(page.locator("#answer")).to_be_visible()
                _check(page, "study-back", tag, failures, **checks)
        if width < 500:
            page.goto(site.url + "/")
            page.locator("details.menu > summary").click()
            _check(page, "menu-open", tag, failures, **checks)
        failures.extend(f"{tag}: {p}" for p in problems)
        context.close()
    assert not failures, "\n".join(failures)


def test_phone_header_is_a_menu_that_works_without_javascript(site: Site, browser: Browser) -> None:
    for javascript in (True, False):
        context = _context(browser, "es", 390, "light", java_script_enabled=javascript)
        page = context.new_page()
        _sign_in(page, site, LEADS["es"][0])
        page.goto(site.url + "/stats")
        stats = page.get_by_role("link", name="Estadísticas")
        expect(stats).to_be_hidden()
        page.screenshot(path=str(ARTIFACTS / f"design-phone-header-js-{javascript}.png"))
        header = page.locator("header.site").bounding_box()
        # One line (two without JavaScript, where the language has its button), not a quarter.
        assert header is not None and header["height"] < (70 if javascript else 120), header
        page.locator("details.menu > summary").click()
        expect(stats).to_be_visible()
        expect(stats).to_have_attribute("aria-current", "page")
        if javascript:  # Escape closes the menu, back on its button
            page.keyboard.press("Escape")
            expect(stats).to_be_hidden()
            expect(page.locator("details.menu > summary")).to_be_focused()
            page.locator("details.menu > summary").click()
        page.get_by_role("link", name="Equipos").click()
        page.wait_for_url(f"{site.url}/teams")
        expect(page.locator("details.menu")).not_to_have_attribute("open", "")
        # The language button is there without JavaScript, hidden with it until needed.
        expect(page.locator("form.lang button[type=submit]")).to_be_visible(visible=not javascript)
        context.close()
    # On a wide screen the links show, the button does not, with or without JavaScript.
    for javascript in (True, False):
        context = _context(browser, "es", 1280, "light", java_script_enabled=javascript)
        page = context.new_page()
        _sign_in(page, site, LEADS["es"][0])
        expect(page.locator("details.menu > summary")).to_be_hidden()
        decks = page.get_by_role("link", name="Mazos")
        expect(decks).to_be_visible()
        expect(decks).to_have_attribute("aria-current", "page")
        expect(page.locator("header nav a[aria-current]")).to_have_count(1)
        page.get_by_role("link", name="Ajustes").click()
        expect(page.get_by_role("link", name="Ajustes")).to_have_attribute("aria-current", "page")
        context.close()


def test_between_phone_and_wide_the_menu_is_one_line(site: Site, browser: Browser) -> None:
    """From 52rem (832 px), where the menu button gives way to the links, to 90rem, where they
    sit beside the brand, the links are one line of their own in every language: Spanish's
    and Korean's words used to wrap "Cerrar sesión" onto a third line of the header."""
    for locale, width in (("es", 840), ("es", 1000), ("ko", 840), ("en", 1200)):
        context = _context(browser, locale, width, "light")
        page = context.new_page()
        _sign_in(page, site, LEADS[locale][0])
        tops = page.eval_on_selector_all(
            "header nav li", "items => items.map(i => Math.round(i.getBoundingClientRect().top))"
        )
        assert len(tops) == 8 and len(set(tops)) == 1, (locale, width, tops)
        page.screenshot(path=str(ARTIFACTS / f"design-header-{locale}-{width}.png"))
        context.close()


def test_a_language_picked_from_the_list_applies_at_once(site: Site, browser: Browser) -> None:
    context = _context(browser, "en", 390, "light")
    page = context.new_page()
    page.goto(site.url + "/signin")
    expect(page.locator("form.lang button[type=submit]")).to_be_hidden()
    # What a pointer does: press on the closed list, then pick an entry of its popup.
    page.locator("#lang-select").dispatch_event("pointerdown")
    page.select_option("#lang-select", "ko")
    expect(page.locator("html")).to_have_attribute("lang", "ko")
    expect(page.locator("h1")).to_have_text("로그인")
    context.close()


def test_the_theme_chosen_in_settings_overrides_the_browsers(site: Site, browser: Browser) -> None:
    def background(page: Page) -> str:
        # The page after a form's redirect may still be loading its stylesheet.
        page.wait_for_load_state("load")
        return str(page.evaluate("getComputedStyle(document.documentElement).backgroundColor"))

    context = _context(browser, "en", 1280, "light")
    page = context.new_page()
    page.goto(site.url + "/signin")
    expect(page.locator("html")).not_to_have_attribute("data-theme", re.compile(".*"))
    light = background(page)
    _sign_in(page, site, "training@example.com")
    page.goto(site.url + "/settings")
    page.select_option("#theme", "dark")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#live")).to_contain_text("Settings saved.")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    dark = background(page)
    assert dark != light
    page.emulate_media(color_scheme="dark")
    page.goto(site.url + "/settings")
    assert background(page) == dark  # "system" in a dark browser is the same dark
    page.select_option("#theme", "light")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    assert background(page) == light  # a light choice wins over the dark browser
    page.select_option("#theme", "system")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#live")).to_contain_text("Settings saved.")
    assert background(page) == dark
    context.close()


def test_keyboard_hints_only_with_a_keyboard(site: Site, browser: Browser) -> None:
    for touch in (False, True):
        options: dict[str, Any] = {"has_touch": True, "is_mobile": True} if touch else {}
        context = _context(browser, "en", 390 if touch else 1280, "light", **options)
        page = context.new_page()
        _sign_in(page, site, "seo-yeon@example.com")
        page.goto(site.url + "/study")  # the team's deck: subscribed when it was assigned
        hints = page.locator(".help").all()  # the answer keys and the card actions' keys
        assert len(hints) == 2
        for hint in hints:
            expect(hint).to_be_visible(visible=not touch)
        expect(page.locator(".keys")).to_be_visible(visible=not touch)
        page.locator("#reveal").click()
        expect(page.locator(".rate kbd").first).to_be_visible(visible=not touch)
        context.close()
