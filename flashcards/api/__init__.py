"""JSON API v1: thin views over the domain modules, errors as application/problem+json."""

from __future__ import annotations

from flask import Blueprint

bp = Blueprint("api", __name__, url_prefix="/api/v1")
