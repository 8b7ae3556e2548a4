"""Every error class has its own row in the API's table and in the web's; no edge guesses."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from flask import Flask
from flask_babel import force_locale

import flashcards
from flashcards.api.errors import PROBLEM_TYPES, problem_type
from flashcards.errors import FlashcardsError, InvalidInput, NotFound, NothingToUndo
from flashcards.web.error_table import answer_for, error_answers, message_for

PACKAGE = Path(flashcards.__file__).parent


def every_error_class() -> list[type[FlashcardsError]]:
    """FlashcardsError's subclasses, wherever in the package they are defined."""
    for info in pkgutil.walk_packages(flashcards.__path__, "flashcards."):
        importlib.import_module(info.name)
    found: list[type[FlashcardsError]] = []
    pending = list(FlashcardsError.__subclasses__())
    while pending:
        cls = pending.pop()
        if cls.__module__.startswith("flashcards.") and cls not in found:
            found.append(cls)
        pending.extend(cls.__subclasses__())
    return sorted(found, key=lambda c: c.__qualname__)


ERRORS = every_error_class()


def test_the_hierarchy_is_found() -> None:
    # A walk that found nothing would make the tests below pass vacuously.
    names = {cls.__name__ for cls in ERRORS}
    assert {"ReviewIdReused", "EmailTaken", "RemovedFromTeam", "AnkiPackageError"} <= names


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_every_error_has_a_problem_type(cls: type[FlashcardsError]) -> None:
    assert cls in PROBLEM_TYPES, f"{cls.__name__} needs a row in api/errors.py PROBLEM_TYPES"
    kind = PROBLEM_TYPES[cls]
    assert 400 <= kind.status <= 599 and kind.title
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", kind.slug), kind.slug


def test_every_error_has_a_web_answer(app: Flask) -> None:
    with app.test_request_context("/"):
        answers = error_answers()
    missing = [cls.__name__ for cls in ERRORS if cls not in answers]
    assert missing == [], "these need a row in web/error_table.py"
    assert set(answers) == set(ERRORS)  # no row for a class that is gone
    for cls, answer in answers.items():
        # A page answers at the API's status, so both edges say the same thing.
        assert answer.status == PROBLEM_TYPES[cls].status, cls.__name__
        assert answer.message is None or answer.message.strip()


def test_problem_types_are_distinct() -> None:
    slugs = [kind.slug for kind in PROBLEM_TYPES.values()]
    assert len(slugs) == len(set(slugs))
    assert set(PROBLEM_TYPES) == set(ERRORS)  # no row for a class that is gone


def test_messages_are_translated(app: Flask) -> None:
    with app.test_request_context("/"):
        english = message_for(NothingToUndo)
        with force_locale("ko"):
            korean = message_for(NothingToUndo("there is no answer from today to undo"))
    assert english == "There is nothing to undo today."
    assert korean != english and korean.strip()


def test_an_unmapped_subclass_takes_its_base_row(app: Flask) -> None:
    class SomeLookup(NotFound):
        pass

    assert problem_type(SomeLookup("x")).status == 404
    with app.test_request_context("/"):
        assert answer_for(SomeLookup("x")).status == 404
        with pytest.raises(LookupError):
            message_for(InvalidInput("x"))  # a form words its own validation


def test_no_edge_reads_which_error_it_caught() -> None:
    # Catching a broad class and then asking which one it was is what the tables replace.
    generic = re.compile(r"isinstance\(exc, (FlashcardsError|NotFound|NotPermitted)\b")
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if generic.search(line)
    ]
    assert offenders == []
