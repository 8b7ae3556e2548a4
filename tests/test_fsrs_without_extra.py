"""The service as installed without the optimizer extra: a real server whose Python cannot
import fsrs_rs_python (a `sitecustomize` on its path blocks it, as if it were not installed).

Everything else works (answers, the queue, the settings page); what needs the package says
why it is unavailable: the settings page and the retention page in words, the API with a 503
problem. The monkeypatched tests beside this one cover each path; this one covers a whole
process started without it.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine

from flashcards.optimizer.fit import OPTIMIZER_PACKAGE
from flashcards.storage.engine import transaction

from .factories import card_ids, make_deck, make_token, make_user, subscribe
from .test_contention import Raw, sign_in
from .test_servers import Server

pytestmark = pytest.mark.slow
WHY = "its optional optimizer package (flashcards[optimizer]) is not installed"


def test_a_server_without_the_extra_serves_and_says_why(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        f"import sys\nsys.modules[{OPTIMIZER_PACKAGE!r}] = None  # import fails: not installed\n"
    )
    with transaction(engine) as session:
        user = make_user(session, "ana@example.com")
        deck = make_deck(session, "words", 5)
        subscribe(session, user, deck)
        card = card_ids(session, deck.id)[0]
        token = make_token(session, user)
    server = Server(
        database_url, tmp_path / "server.log", workers=1, env={"PYTHONPATH": str(blocker)}
    )
    try:
        api = Raw(server.port, token=token)
        overview = api.send("GET", "/api/v1/me/fsrs")
        assert overview.status == 200 and overview.json()["optimizer_available"] is False
        for method, path in (
            ("POST", "/api/v1/me/fsrs/optimize"),
            ("GET", "/api/v1/me/fsrs/retention"),
        ):
            refused = api.send(method, path)
            assert refused.status == 503, (path, refused.body)
            assert refused.json()["type"] == "/api/v1/problems/optimizer-unavailable"
            assert "not installed" in refused.json()["detail"]
        body = {"card_id": card, "rating": 3, "review_id": str(uuid.uuid4())}
        assert api.post_json("/api/v1/reviews", body).status in (200, 201)
        assert api.send("GET", "/api/v1/study/next").status in (200, 204)
        assert api.send("GET", "/api/v1/me/fsrs/reschedule").status == 200  # py-fsrs only
        api.close()

        cookie, _csrf = sign_in(server.port)
        browser = Raw(server.port, cookie=cookie)
        settings = browser.send("GET", "/settings")
        assert settings.status == 200
        assert f"Optimization is unavailable on this server: {WHY}" in settings.body.decode()
        retention = browser.send("GET", "/settings/fsrs/retention")
        assert retention.status == 200 and WHY in retention.body.decode()
        browser.close()
    finally:
        server.stop()
