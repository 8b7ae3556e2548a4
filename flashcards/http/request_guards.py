"""Checks every request's input gets before a view sees it."""

from __future__ import annotations

from flask import Flask, request
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import BadRequest

FORM_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def init_app(app: Flask) -> None:
    app.before_request(refuse_nul_in_query)


def refuse_nul_in_query() -> None:
    if request.query_string:  # most requests have none: then no arguments to parse
        refuse_nul(request.args)


def refuse_nul_in_form() -> None:
    """The web's forms, checked once the upload limit is set (reading the form reads the body)."""
    if request.method in FORM_METHODS:
        refuse_nul(request.form)


def refuse_nul(values: MultiDict[str, str]) -> None:
    """A NUL character in a query or form value is a 400: no text column takes it
    (PostgreSQL refuses it), and a lookup with it would otherwise fail as a 500."""
    for name, value in values.items(multi=True):
        if "\x00" in name or "\x00" in value:
            raise BadRequest("a query or form value has a NUL character, which is not text")
