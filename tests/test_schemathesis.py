"""Schemathesis against /api/v1/openapi.json: no server error, every response as documented.

Bounded (examples per operation, derandomized) so it stays under a minute; SQLite only.
Generated slugs and card ids almost never exist, so for the study operations half of the
cases get a real slug or card id: the answer, undo and subscription paths really run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import schemathesis
from flask import Flask
from fsrs import Rating
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import checks
from sqlalchemy import Engine, select

from flashcards.api import browse, cards, study
from flashcards.api.openapi import OPERATIONS
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, Deck

from . import factories as f
from .conftest import T0

CHECKS = [
    checks.not_a_server_error,
    checks.response_schema_conformance,
    checks.status_code_conformance,
    checks.content_type_conformance,
]
# Revokes the token it is called with: run last, each case with a token of its own.
REVOKE = ("/api/v1/tokens/current", "delete")
# Each example hashes a password (scrypt, 32 MiB): fewer of them.
SLOW = {("/api/v1/tokens", "post"), ("/api/v1/users", "post"), ("/api/v1/me/password", "post")}
STUDY_IDS = {
    operation.operation_id
    for view, operation in OPERATIONS.items()
    if view.__module__ in (study.__name__, cards.__name__, browse.__name__)
}


def use_real_ids(case: Any, data: st.DataObject, slugs: list[str], cards: list[int]) -> None:
    # Mostly real ids (Hypothesis favours the first element), sometimes the generated ones.
    if not data.draw(st.sampled_from([True, True, False]), label="real ids"):
        return
    if case.path_parameters and "slug" in case.path_parameters:
        case.path_parameters["slug"] = data.draw(st.sampled_from(slugs), label="slug")
    if case.path_parameters and "card_id" in case.path_parameters:
        case.path_parameters["card_id"] = data.draw(st.sampled_from(cards), label="card_id")
    if isinstance(case.body, dict) and "card_id" in case.body:
        case.body["card_id"] = data.draw(st.sampled_from(cards), label="card_id")
        case.body.pop("reviewed_at", None)  # else nearly always before the last review
    if isinstance(case.body, dict) and "card_ids" in case.body:
        chosen = st.lists(st.sampled_from(cards), min_size=1, max_size=3)
        case.body["card_ids"] = data.draw(chosen, label="card_ids")


def run_operation(
    operation: Any,
    *,
    headers: Callable[[], dict[str, str]],
    examples: int,
    real_ids: tuple[list[str], list[int]] | None,
) -> None:
    @given(case=operation.as_strategy(), data=st.data())
    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: Any, data: st.DataObject) -> None:
        if real_ids is not None:
            use_real_ids(case, data, *real_ids)
        case.call_and_validate(headers=headers(), checks=CHECKS)

    check()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_every_operation_conforms_and_never_500(app: Flask, loaded_engine: Engine) -> None:
    with transaction(loaded_engine) as s:
        user = f.make_user(s)
        token = f.make_token(s, user)
        other = f.make_user(s)
        private = f.make_deck(s, "private", 2, owner_user_id=other)
        shipped = s.scalars(select(Deck).where(Deck.owner_user_id.is_(None))).first()
        assert shipped is not None
        f.subscribe(s, user, shipped)
        cards = list(
            s.scalars(select(Card.id).where(Card.deck_id == shipped.id).order_by(Card.position))
        )
        f.answer(s, user, cards[0], Rating.Good, now=T0)
        f.answer(s, user, cards[1], Rating.Easy, now=T0)
        # Real ids, plus ids of a deck the caller cannot see.
        slugs = [shipped.slug, shipped.slug, "private"]
        ids = [*cards[:4], *f.card_ids(s, private.id)]
    app.config["SIGNIN_ATTEMPTS_PER_15_MIN"] = 1_000_000
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    headers = {"Authorization": f"Bearer {token}"}

    def fresh_token() -> dict[str, str]:
        with transaction(loaded_engine) as s:
            return {"Authorization": f"Bearer {f.make_token(s, user)}"}

    tested = set()
    operations = [result.ok() for result in schema.get_all_operations()]
    study_operations = {
        (operation.path, operation.method.lower())
        for operation in operations
        if operation.definition.raw["operationId"] in STUDY_IDS
    }
    assert len(study_operations) == len(STUDY_IDS) == 14
    operations.sort(key=lambda operation: (operation.path, operation.method.lower()) == REVOKE)
    for operation in operations:
        key = (operation.path, operation.method.lower())
        run_operation(
            operation,
            headers=fresh_token if key == REVOKE else lambda: headers,
            examples=8 if key in SLOW or key == REVOKE else 30,
            real_ids=(slugs, ids) if key in study_operations else None,
        )
        tested.add(key)
    assert tested >= study_operations | {REVOKE}
