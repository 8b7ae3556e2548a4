"""The HTML pages: thin views over the domain modules, localized with Flask-Babel.

Every module of this package registers its routes on `bp`. `init_app` wires the pieces that
are app-wide: Babel's selectors, the CSRF check, the security headers and template helpers.
"""

from __future__ import annotations

from flask import Blueprint, Flask

from ..http.request_guards import refuse_nul_in_form

bp = Blueprint("web", __name__)
# The web's routes only, after the app's own hooks (the upload limit, the CSRF check).
bp.before_request(refuse_nul_in_form)

from . import (  # noqa: E402  (the modules register their routes on `bp`)
    account,
    apkg,
    auth,
    browse,
    csrf,
    custom_study,
    deck_cards,
    errors,
    fsrs,
    i18n,
    join,
    leeches,
    library,
    media,
    own_decks,
    password_reset,
    security,
    stats,
    study,
    team_deck_uploads,
    team_decks,
    team_progress,
    teams,
    uploads,
)

__all__ = [
    "account",
    "apkg",
    "auth",
    "bp",
    "browse",
    "custom_study",
    "deck_cards",
    "fsrs",
    "init_app",
    "join",
    "leeches",
    "library",
    "media",
    "own_decks",
    "password_reset",
    "stats",
    "study",
    "team_deck_uploads",
    "team_decks",
    "team_progress",
    "teams",
]


def init_app(app: Flask) -> None:
    i18n.init_app(app)
    uploads.init_app(app)  # before the CSRF check reads the (larger) upload body
    apkg.init_app(app)
    csrf.init_app(app)
    security.init_app(app)
    errors.init_app(app)
    app.jinja_env.globals["current_user"] = auth.current_user
    app.jinja_env.filters["language_label"] = i18n.language_name
    app.register_blueprint(bp)
