"""JSON API v1: thin views over the domain modules, errors as application/problem+json.

Every module of this package registers its routes on `bp`, each declared for the OpenAPI
document with `openapi.documented` and its bodies as pydantic models (`models*.py`).
"""

from __future__ import annotations

import importlib
import pkgutil

from flask import Blueprint

bp = Blueprint("api", __name__, url_prefix="/api/v1")

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
