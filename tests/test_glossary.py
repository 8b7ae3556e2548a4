"""The catalogs keep to translations/glossary.toml: one word per concept, none of the variants
it forbids, one quotation-mark style per language, Korean's parentheses without a space, and
headers filled in. A new string that strays fails here with the msgid and the reason."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po

TRANSLATIONS = Path(__file__).resolve().parent.parent / "translations"
GLOSSARY: dict[str, Any] = tomllib.loads((TRANSLATIONS / "glossary.toml").read_text("utf-8"))
LOCALES = sorted(GLOSSARY)
# Placeholders name values, not words: "%(team)s" is no mention of a team.
PLACEHOLDER = re.compile(r"%\([a-z_]+\)[sdif]")


@dataclass(frozen=True)
class Entry:
    msgids: tuple[str, ...]  # singular, and plural if any
    strings: tuple[str, ...]  # each msgstr form

    @property
    def msgid(self) -> str:
        return self.msgids[0]


def _words(msgid: str) -> str:
    return PLACEHOLDER.sub("", msgid).strip()


def _entry(message: Message) -> Entry:
    ids = (message.id,) if isinstance(message.id, str) else tuple(message.id)
    strings = (message.string,) if isinstance(message.string, str) else tuple(message.string)
    return Entry(tuple(str(i) for i in ids), tuple(str(s or "") for s in strings))


def _catalog(locale: str) -> Catalog:
    with (TRANSLATIONS / locale / "LC_MESSAGES" / "messages.po").open("rb") as f:
        return read_po(f, locale=locale)


@pytest.fixture(scope="module", params=LOCALES)
def locale(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def entries(locale: str) -> list[Entry]:
    return [_entry(m) for m in _catalog(locale) if m.id]


def test_the_glossary_covers_every_catalog() -> None:
    catalogs = sorted(p.parent.parent.name for p in TRANSLATIONS.glob("*/LC_MESSAGES/*.po"))
    assert catalogs == LOCALES
    for locale in LOCALES:
        assert len(GLOSSARY[locale]["term"]) >= 10 and GLOSSARY[locale]["forbid"]


def test_each_key_term_is_the_one_allowed(locale: str, entries: list[Entry]) -> None:
    problems = []
    for term in GLOSSARY[locale]["term"]:
        exceptions = set(term.get("except", []))
        english, use = re.compile(term["msgid"]), re.compile(term["use"])
        matched = [e for e in entries if any(english.search(_words(i)) for i in e.msgids)]
        # A pattern that no longer matches any msgid guards nothing: say so.
        assert matched, f"{locale}: no msgid has {term['concept']!r}"
        for entry in matched:
            if entry.msgid in exceptions:
                continue
            for string in entry.strings:
                if not use.search(string):
                    problems.append(f"{term['concept']}: {entry.msgid!r} -> {string!r}")
    assert not problems, f"{locale}: the glossary's term is missing:\n" + "\n".join(problems)


def test_no_forbidden_variant(locale: str, entries: list[Entry]) -> None:
    problems = []
    for rule in GLOSSARY[locale]["forbid"]:
        pattern = re.compile(rule["pattern"])
        unless = re.compile(rule["unless_msgid"]) if "unless_msgid" in rule else None
        for entry in entries:
            if unless and any(unless.search(i) for i in entry.msgids):
                continue
            for string in entry.strings:
                if pattern.search(string):
                    problems.append(f"{rule['why']}: {entry.msgid!r} -> {string!r}")
    assert not problems, f"{locale}: forbidden variants:\n" + "\n".join(problems)


def test_one_quotation_mark_style(locale: str, entries: list[Entry]) -> None:
    rules = GLOSSARY[locale]["punctuation"]
    opening, closing = rules["quotes"]
    problems = []
    for entry in entries:
        for string in entry.strings:
            wrong = [q for q in rules["forbidden_quotes"] if q in string]
            if wrong or string.count(opening) != string.count(closing):
                problems.append(f"{entry.msgid!r} -> {string!r}")
    assert not problems, f"{locale}: quote with {opening}…{closing} only:\n" + "\n".join(problems)


def test_no_space_before_a_parenthesis_in_korean(locale: str, entries: list[Entry]) -> None:
    if not GLOSSARY[locale]["punctuation"]["no_space_before_paren"]:
        pytest.skip(f"{locale} puts a space before a parenthesis")
    spaced = [f"{e.msgid!r} -> {s!r}" for e in entries for s in e.strings if re.search(r"\s\(", s)]
    assert not spaced, f"{locale}: a space before “(”:\n" + "\n".join(spaced)


def test_no_fuzzy_or_empty_entry(locale: str) -> None:
    catalog = _catalog(locale)
    for message in catalog:
        if not message.id:
            continue
        assert not message.fuzzy, f"{locale}: fuzzy {message.id!r}"
        assert all(s.strip() for s in _entry(message).strings), f"{locale}: empty {message.id!r}"


PLACEHOLDER_HEADERS = re.compile(r"YEAR|MO-DA|HO:MI|ZONE|FULL NAME|EMAIL@ADDRESS|LL@li\.org")


def test_the_headers_are_filled_in(locale: str) -> None:
    catalog = _catalog(locale)
    headers = dict(catalog.mime_headers)
    for name in ("PO-Revision-Date", "Last-Translator", "Language-Team", "Report-Msgid-Bugs-To"):
        assert headers.get(name) and not PLACEHOLDER_HEADERS.search(headers[name]), (
            f"{locale}: header {name} is {headers.get(name)!r}"
        )
    assert headers["Language"] == locale
    assert "@" not in headers["Last-Translator"] + headers["Language-Team"]  # no personal email
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d[+-]\d{4}", headers["PO-Revision-Date"])


def test_the_glossary_catches_what_it_is_for() -> None:
    # The rules themselves, on the variants the review removed: each must be caught.
    ko = {r["why"]: re.compile(r["pattern"]) for r in GLOSSARY["ko"]["forbid"]}
    caught = {
        "멤버 %(num)d명",
        "취소됨",
        "내보내기",
        "좋음",
        "지금은 모두 끝났어요",
        "이미 계정이 있나요?",
        "덱을 삭제할까요?",
        "함께 공부하고",
        "팀 관리자",
        "다시 시도해 주세요.",
    }
    for text in caught:
        assert any(p.search(text) for p in ko.values()), text
    for fine in ("서버 관리자가 만듭니다.", "다시 시도하세요.", "삭제하시겠습니까?", "취소"):
        assert not any(p.search(fine) for p in ko.values()), fine
    es = [re.compile(r["pattern"]) for r in GLOSSARY["es"]["forbid"]]
    spain_would_flag = (
        "¿Qué tan bien lo recordabas?",
        "sus gestores",
        "Se importó 1 tarjeta",
        "No se pudo leer",
        "Algo salió mal",
        "Cerrar sesión en todos los demás",
    )
    for text in spain_would_flag:
        assert any(p.search(text) for p in es), text
    for fine in ("Se ha importado 1 tarjeta", "¿Lo has recordado bien?", "sus responsables"):
        assert not any(p.search(fine) for p in es), fine
