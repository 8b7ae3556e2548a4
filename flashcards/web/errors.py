"""Error pages for the HTML side, in the visitor's language, at the status `error_table`
gives; /api/ keeps its problem+json."""

from __future__ import annotations

from flask import Flask, current_app, render_template, request
from sqlalchemy.exc import DBAPIError
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response

from ..api.errors import API_PREFIX, UNAVAILABLE_RETRY_AFTER, http_problem
from ..errors import FlashcardsError, TooMuchContention
from ..storage.engine import database_unavailable
from . import bp
from .auth import as_signed_out
from .error_table import answer_for
from .uploads import too_large_response


@bp.errorhandler(FlashcardsError)
def _domain_error(exc: FlashcardsError) -> tuple[str, int]:
    status = answer_for(exc).status
    return render_template("error.html", status=status), status


@bp.errorhandler(TooMuchContention)
def _contention(exc: TooMuchContention) -> tuple[str, int, dict[str, str]]:
    status = answer_for(exc).status
    headers = {"Retry-After": str(exc.retry_after)}
    return render_template("error.html", status=status, busy=True), status, headers


@bp.errorhandler(HTTPException)
def _http_error(exc: HTTPException) -> Response | tuple[str, int]:
    status = exc.code or 500
    if status == 413:
        # An upload form's own page again, with its limit, rather than an error page.
        too_large = too_large_response()
        if too_large is not None:
            return too_large
    return render_template("error.html", status=status, csrf=exc.description == "csrf"), status


@bp.errorhandler(DBAPIError)
def _database_error(exc: DBAPIError) -> tuple[str, int, dict[str, str]]:
    if not database_unavailable(exc):
        raise exc  # a bug: Flask's 500 page
    current_app.logger.error(
        "database unavailable on %s %s", request.method, request.path, exc_info=exc
    )
    as_signed_out()  # the page's header would ask the database again
    headers = {"Retry-After": str(UNAVAILABLE_RETRY_AFTER)}
    return render_template("error.html", status=503), 503, headers


def _outside_blueprints(exc: HTTPException) -> Response | tuple[str, int]:
    # A URL that matches no route or method belongs to no blueprint, nor does an error raised
    # before routing is done (the CSRF check): only an app-wide handler sees them.
    if request.path.startswith(API_PREFIX):
        return http_problem(exc)
    status = exc.code or 500
    return render_template("error.html", status=status, csrf=exc.description == "csrf"), status


def init_app(app: Flask) -> None:
    app.register_error_handler(HTTPException, _outside_blueprints)
