"""A real browser on a card's image and sound: an imported deck's picture is decoded and
drawn and its player is there, under the service's CSP, with nothing refused."""

from __future__ import annotations

import io
import math
import re
import struct
import wave
from pathlib import Path

import pytest

from ..test_card_media import anki_package, media_package, png
from .test_study_browser import ARTIFACTS, CHROMIUM, _page, _sign_up, browser, server

pytestmark = pytest.mark.browser
__all__ = ["CHROMIUM", "browser", "server"]

from playwright.sync_api import Browser, expect  # noqa: E402


def test_an_imported_cards_image_and_sound_play_on_the_study_page(
    server: str, browser: Browser, tmp_path: Path
) -> None:
    context, page, problems = _page(browser, "es")
    _sign_up(page, server, "media-browser@example.com")
    page.set_input_files(
        "#package",
        files=[
            {
                "name": "biology.apkg",
                "mimeType": "application/octet-stream",
                "buffer": media_package(tmp_path, legacy=False, image=png(240, 120)),
            }
        ],
    )
    page.locator("form[action$='/decks/import'] button[type=submit]").click()
    expect(page.locator("body")).to_contain_text("Se han añadido 2 imágenes y sonidos")

    page.goto(f"{server}/study")
    image = page.locator("#question img.card-media")
    expect(image).to_be_visible()
    # Decoded, not a broken-image box: the PNG's own size.
    assert page.evaluate("document.querySelector('#question img').naturalWidth") == 240
    page.keyboard.press("Space")
    player = page.locator(".answer-text audio")
    expect(player).to_be_visible()
    assert player.get_attribute("src") == "/media/hello.mp3"
    page.screenshot(path=str(ARTIFACTS / "study-es-media.png"), full_page=True)
    page.evaluate("document.addEventListener('play', function () { window.played = true; }, true)")
    # The player's play button clicked, the study keys still rate the card.
    box = player.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 20, box["y"] + box["height"] / 2)  # its play button
    page.wait_for_function("() => window.played === true")
    page.keyboard.press("3")
    expect(page.locator("#live")).to_contain_text("Bien")

    # In the deck's list of cards the picture is a thumbnail on the card's first line.
    page.goto(f"{server}/")
    page.locator("ol.decks a, ul.decks h2 a").first.click()
    page.locator("a[href$='/cards']").first.click()
    thumbnail = page.locator("ol.cards img.card-media")
    expect(thumbnail).to_be_visible()
    card = page.locator("ol.cards > li").first.bounding_box()
    box = thumbnail.bounding_box()
    assert card is not None and box is not None
    assert box["y"] - card["y"] < 40 and box["height"] <= 96  # 6rem
    page.screenshot(path=str(ARTIFACTS / "deck-cards-es-media.png"), full_page=True)
    assert not problems, problems  # a CSP refusal would be a console error
    # A picture added from the card's page shows on the card.
    page.locator("ol.cards a[href*='/cards/']").first.click()
    page.set_input_files(
        "#media-es",
        files=[{"name": "hoja.png", "mimeType": "image/png", "buffer": png(120, 60, shade=200)}],
    )
    page.select_option("#side-es", "answer")
    page.locator("form.media-add button[type=submit]").click()
    expect(page.locator("#live")).to_contain_text("Se ha añadido hoja.png a la tarjeta.")
    expect(page.locator("#a-es")).to_have_value(re.compile(r"\[image:hoja\.png\]$"))
    page.screenshot(path=str(ARTIFACTS / "own-card-es-media.png"), full_page=True)
    assert not problems, problems
    context.close()


def tone() -> bytes:
    """Half a second of a 440 Hz tone, as a WAV file a browser plays."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(
            b"".join(
                struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * i / 8000)))
                for i in range(4000)
            )
        )
    return out.getvalue()


def test_a_player_reached_with_the_keyboard_keeps_its_focus(
    server: str, browser: Browser, tmp_path: Path
) -> None:
    context, page, problems = _page(browser, "en")
    _sign_up(page, server, "media-keys@example.com")
    package = anki_package(tmp_path, [("Listen", "A tone [sound:tone.wav]")],
                           {"tone.wav": tone()}, legacy=False)  # fmt: skip
    page.set_input_files(
        "#package",
        files=[{"name": "tone.apkg", "mimeType": "application/octet-stream", "buffer": package}],
    )
    page.locator("form[action$='/decks/import'] button[type=submit]").click()
    page.goto(f"{server}/study")
    page.keyboard.press("Space")
    expect(page.locator(".answer-text audio")).to_be_visible()
    page.evaluate("() => { window.played = false; document.addEventListener('play', "
                  "function () { window.played = true; }, true); }")  # fmt: skip
    for _ in range(30):
        if page.evaluate("() => document.activeElement.tagName") == "AUDIO":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.tagName") == "AUDIO"
    page.evaluate("() => document.activeElement.play()")
    page.wait_for_function("() => window.played === true")
    # Its own keys stay with it (pause, seek): the focus is not taken away.
    assert page.evaluate("() => document.activeElement.tagName") == "AUDIO"
    assert not problems, problems
    context.close()
