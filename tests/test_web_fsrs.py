"""Personal FSRS on the settings page: the parameters in force, every fit, Optimize and revert."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select

from flashcards.optimizer.fit import DEFAULTS, OPTIMIZER_PACKAGE, OPTIMIZER_SWITCH
from flashcards.storage.engine import transaction
from flashcards.storage.models import FsrsParameterSet, ReviewLog, SchedulerSettings

from .conftest import T0
from .db_snapshots import built_once
from .factories import PASSWORD, make_user
from .fsrs_learner import simulate_learner
from .web_helpers import csrf

OPTIMIZE = "/settings/fsrs/optimize"
REVERT = "/settings/fsrs/revert"
# Fitted at 18:30 UTC, which is 3:30 the next day in Seoul; in a past year, so the date
# shows its year whatever today is.
FITTED_AT = datetime(2025, 3, 3, 18, 30, tzinfo=UTC)
EARLIER = datetime(2025, 1, 10, 9, 0, tzinfo=UTC)


def sign_in(client: FlaskClient, email: str) -> None:
    response = client.post(
        "/signin",
        data={"csrf_token": csrf(client), "email": email, "password": PASSWORD},
    )
    assert response.status_code == 302, response.get_data(as_text=True)


def settings_page(client: FlaskClient) -> str:
    response = client.get("/settings")
    assert response.status_code == 200
    return response.get_data(as_text=True)


def post(client: FlaskClient, path: str) -> str:
    """A button pressed on the settings page; the page it redirects back to."""
    response = client.post(path, data={"csrf_token": csrf(client, "/settings")})
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/settings#fsrs")
    return settings_page(client)


def parameter_sets(engine: Engine) -> int:
    with transaction(engine) as session:
        return session.scalar(select(func.count()).select_from(FsrsParameterSet)) or 0


def parameters(engine: Engine, user: int) -> list[float] | None:
    with transaction(engine) as session:
        return session.get_one(SchedulerSettings, user).parameters


def learner(engine: Engine, days: int) -> int:
    def build() -> int:
        with transaction(engine) as session:
            user = make_user(session, "learner@example.com")
            simulate_learner(session, user, T0, days=days)
            return user

    return built_once(engine, ("learner", days), build)


def add_set(
    engine: Engine,
    user: int,
    when: datetime,
    *,
    adopted: bool,
    parameters: list[float] | None = None,
    **scores: float,
) -> None:
    row = {
        "log_loss": 0.35214,
        "rmse_bins": 0.04321,
        "previous_log_loss": 0.41234,
        "previous_rmse_bins": 0.06789,
        "default_log_loss": 0.41234,
        "default_rmse_bins": 0.06789,
        **scores,
    }
    parameters = parameters or [0.3, *DEFAULTS[1:]]
    with transaction(engine) as session:
        session.add(
            FsrsParameterSet(
                user_id=user,
                parameters=parameters,
                created_at=when,
                answers=12345,
                cards=678,
                adopted=adopted,
                **row,
            )
        )
        if adopted:
            session.get_one(SchedulerSettings, user).parameters = parameters


NO_SETS = {
    "en": ("Personal FSRS", "In force: the default parameters.", "Optimize now"),
    "es": ("FSRS personal", "En uso: los parámetros predeterminados.", "Optimizar ahora"),
    "ko": ("개인 FSRS", "적용 중: 기본 매개변수", "지금 최적화"),
}


@pytest.mark.parametrize("locale", sorted(NO_SETS))
def test_the_section_shows_the_defaults_and_the_button_to_a_person_with_no_fits(
    engine: Engine, client: FlaskClient, locale: str
) -> None:
    with transaction(engine) as session:
        make_user(session, "ana@example.com", locale=locale)
    sign_in(client, "ana@example.com")
    page = settings_page(client)
    for text in NO_SETS[locale]:
        assert text in page
    assert f'action="{OPTIMIZE}"' in page
    assert f'action="{REVERT}"' not in page  # nothing to go back to
    assert 'class="fsrs-history"' not in page and 'class="fsrs-in-force"' not in page


@dataclass(frozen=True)
class Shown:
    """The page's words and formats in one language."""

    fitted_at: str  # in Seoul: the 4th, not UTC's 3rd
    answers: str  # 12345
    log_loss: str  # 0.35214
    earlier_log_loss: str  # 0.5
    default_log_loss: str  # 0.41234
    in_force: str
    not_adopted: str


WITH_SETS = {
    "en": Shown(
        "Tue, Mar 4, 2025, 3:30\u202fAM", "12,345", "0.3521", "0.5000", "0.4123",
        "In force", "Not adopted",
    ),
    "es": Shown(
        "mar, 4 mar 2025, 3:30", "12.345", "0,3521", "0,5000", "0,4123",
        "En uso", "No adoptado",
    ),
    "ko": Shown(
        "2025년 3월 4일 (화) 오전 3:30", "12,345", "0.3521", "0.5000", "0.4123",
        "적용 중", "채택 안 됨",
    ),
}  # fmt: skip


@pytest.mark.parametrize("locale", sorted(WITH_SETS))
def test_the_section_shows_the_set_in_force_and_every_fit_in_the_persons_locale(
    engine: Engine, client: FlaskClient, locale: str
) -> None:
    with transaction(engine) as session:
        user = make_user(session, "ana@example.com", locale=locale, timezone="Asia/Seoul")
    add_set(engine, user, EARLIER, adopted=False, log_loss=0.5)
    add_set(engine, user, FITTED_AT, adopted=True)
    sign_in(client, "ana@example.com")
    page = settings_page(client)
    shown = WITH_SETS[locale]
    in_force = page[page.index('class="fsrs-in-force"') : page.index("</table>")]
    for text in (shown.answers, shown.log_loss, shown.default_log_loss):
        assert text in in_force, text
    assert shown.fitted_at in page and f'action="{REVERT}"' in page
    history = page[page.index('class="fsrs-history"') :]
    # Newest first: the set in force, then the earlier fit, which was not adopted.
    assert history.index(shown.fitted_at) < history.index(shown.earlier_log_loss)
    assert history.index(shown.in_force) < history.index(shown.not_adopted)


def test_optimize_with_too_little_history_says_how_much_is_needed_and_writes_nothing(
    engine: Engine, client: FlaskClient
) -> None:
    user = learner(engine, days=10)
    sign_in(client, "learner@example.com")
    page = post(client, OPTIMIZE)
    assert "a fit needs at least 400 answers on 50 cards" in page
    assert parameter_sets(engine) == 0 and parameters(engine, user) is None
    assert "In force: the default parameters." in page


def test_optimize_is_counted_by_the_accounts_fit_limit(engine: Engine, client: FlaskClient) -> None:
    client.application.config["FITS_PER_HOUR"] = 1
    learner(engine, days=10)
    sign_in(client, "learner@example.com")
    assert "a fit needs at least" in post(client, OPTIMIZE)
    page = post(client, OPTIMIZE)
    assert "You have asked for too many fits. Try again in 60 min." in page
    assert "a fit needs at least" not in page  # no fit at all


def test_optimize_adopts_a_better_fit_and_going_back_restores_the_defaults(
    engine: Engine, client: FlaskClient
) -> None:
    user = learner(engine, days=90)
    sign_in(client, "learner@example.com")
    page = post(client, OPTIMIZE)
    assert "New parameters adopted: they predict your later answers better" in page
    assert "In force: parameters fitted to your history on" in page
    adopted = parameters(engine, user)
    assert adopted is not None and adopted != list(DEFAULTS)
    with transaction(engine) as session:
        fitted = session.scalars(select(FsrsParameterSet)).one()
        assert fitted.adopted and fitted.parameters == adopted
        # Where its history ended, from which the automatic trigger counts new answers.
        assert fitted.history_end_log_id == session.scalar(select(func.max(ReviewLog.id)))
    history = page[page.index('class="fsrs-history"') :]
    assert f"<td>{fitted.answers:,}</td>" in history and "In force" in history
    assert "This returns to the default parameters." in page

    # The same history again: the fit equals the set in force, so that set is kept.
    page = post(client, OPTIMIZE)
    assert "The parameters in force were kept" in page
    assert parameters(engine, user) == adopted and parameter_sets(engine) == 2

    page = post(client, REVERT)
    assert "Back to the default parameters." in page
    assert parameters(engine, user) is None
    assert "In force: the default parameters." in page
    assert "Adopted, later reverted" in page and "Not adopted" in page
    assert f'action="{REVERT}"' not in page

    # Pressed again from a page shown before: nothing to go back to, nothing written.
    response = client.post(REVERT, data={"csrf_token": csrf(client, "/settings")})
    assert response.status_code == 302
    assert "nothing to go back to" in settings_page(client)
    assert parameters(engine, user) is None


def test_going_back_from_a_second_adopted_set_returns_to_the_first(
    engine: Engine, client: FlaskClient
) -> None:
    first = [0.3, *DEFAULTS[1:]]
    with transaction(engine) as session:
        user = make_user(session, "ana@example.com", timezone="Asia/Seoul")
    add_set(engine, user, EARLIER, adopted=True, parameters=first)
    add_set(engine, user, FITTED_AT, adopted=True, parameters=[0.5, *DEFAULTS[1:]])
    sign_in(client, "ana@example.com")
    earlier = "Fri, Jan 10, 2025, 6:00\u202fPM"  # 9:00 UTC in Seoul
    assert f"This returns to the parameters fitted on {earlier}." in settings_page(client)
    page = post(client, REVERT)
    assert f"Back to the parameters fitted on {earlier}." in page
    assert f"In force: parameters fitted to your history on {earlier}." in page
    assert parameters(engine, user) == first


@pytest.mark.parametrize(
    ("how", "why"),
    [
        ("switched off", "its administrator has switched it off (FLASHCARDS_OPTIMIZER=off)"),
        (
            "not installed",
            "its optional optimizer package (flashcards[optimizer]) is not installed",
        ),
    ],
)
def test_without_the_optimizer_the_page_says_why_and_offers_no_fit(
    engine: Engine, client: FlaskClient, monkeypatch: pytest.MonkeyPatch, how: str, why: str
) -> None:
    if how == "switched off":
        monkeypatch.setenv(OPTIMIZER_SWITCH, "off")
    else:
        monkeypatch.setitem(sys.modules, OPTIMIZER_PACKAGE, None)  # import fails as if absent
    learner(engine, days=90)
    sign_in(client, "learner@example.com")
    page = settings_page(client)
    assert f"Optimization is unavailable on this server: {why}" in page
    assert f'action="{OPTIMIZE}"' not in page and "Optimize now" not in page
    # A form kept from before the switch: refused with the same reason, nothing written.
    assert f"Optimization is unavailable on this server: {why}" in post(client, OPTIMIZE)
    assert parameter_sets(engine) == 0


def test_the_buttons_need_the_csrf_token(engine: Engine, client: FlaskClient) -> None:
    user = learner(engine, days=90)
    add_set(engine, user, FITTED_AT, adopted=True)
    sign_in(client, "learner@example.com")
    in_force = parameters(engine, user)
    for path in (OPTIMIZE, REVERT):
        assert client.post(path).status_code == 400
        assert client.post(path, data={"csrf_token": "forged"}).status_code == 400
    assert parameter_sets(engine) == 1 and parameters(engine, user) == in_force
