"""The catalogs are complete: every string of the code and templates is in messages.pot and
translated in es and ko, with no fuzzy entry, the right plural forms and the same placeholders."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po
from flask import Flask
from flask_babel import force_locale, gettext, ngettext

REPO = Path(__file__).resolve().parent.parent
TRANSLATIONS = REPO / "translations"
LOCALES = {"es": 2, "ko": 1}  # locale: number of plural forms
PLACEHOLDER = re.compile(r"%\([a-z_]+\)[sdif]|%[sdif]|\{[a-z_]*\}")


def _read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=locale)


def _ids(catalog: Catalog) -> set[str]:
    return {m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id}


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    out = tmp_path_factory.mktemp("pot") / "messages.pot"
    # The same command as `make translations-extract`.
    subprocess.run(
        [
            str(Path(sys.executable).with_name("pybabel")),
            "-q",
            "extract",
            "-F",
            "babel.cfg",
            "-k",
            "_l",
            "-k",
            "lazy_gettext",
            "-k",
            "ngettext:1,2",
            "-k",
            "lazy_ngettext:1,2",
            "--no-location",
            "--sort-output",
            "--project=flashcards",
            "-o",
            str(out),
            "flashcards",
        ],
        cwd=REPO,
        check=True,
    )
    return _read(out)


def test_every_string_is_in_the_template(extracted: Catalog) -> None:
    missing = _ids(extracted) - _ids(_read(TRANSLATIONS / "messages.pot"))
    assert not missing, f"run `make translations-update`; missing from messages.pot: {missing}"
    assert len(_ids(extracted)) > 100


@pytest.mark.parametrize("locale", sorted(LOCALES))
def test_catalog_is_complete(extracted: Catalog, locale: str) -> None:
    catalog = _read(TRANSLATIONS / locale / "LC_MESSAGES" / "messages.po", locale)
    missing = _ids(extracted) - _ids(catalog)
    assert not missing, f"{locale}: missing from the catalog: {missing}"
    assert catalog.num_plurals == LOCALES[locale]
    for message in catalog:
        if not message.id:
            continue
        assert not message.fuzzy, f"{locale}: fuzzy entry {message.id!r}"
        ids = [message.id] if isinstance(message.id, str) else list(message.id)
        strings = [message.string] if isinstance(message.string, str) else list(message.string)
        if isinstance(message.id, tuple):
            assert len(strings) == LOCALES[locale], f"{locale}: plural forms of {message.id!r}"
        for string in strings:
            assert string and string.strip(), f"{locale}: untranslated {message.id!r}"
            expected = sorted(set(PLACEHOLDER.findall(ids[-1])) | set(PLACEHOLDER.findall(ids[0])))
            assert sorted(set(PLACEHOLDER.findall(string))) == expected, (
                f"{locale}: placeholders differ in {message.id!r} -> {string!r}"
            )
        assert not list(message.check(catalog)), f"{locale}: {message.id!r}"


def test_translations_are_used_with_plurals(app: Flask) -> None:
    with app.test_request_context():
        with force_locale("es"):
            assert gettext("Show answer") == "Mostrar respuesta"
            assert ngettext("%(num)d card", "%(num)d cards", 1) == "1 tarjeta"
            assert ngettext("%(num)d card", "%(num)d cards", 15) == "15 tarjetas"
        with force_locale("ko"):
            assert gettext("Show answer") == "정답 보기"
            assert ngettext("%(num)d card", "%(num)d cards", 15) == "카드 15장"
