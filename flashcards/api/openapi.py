"""GET /api/v1/openapi.json: an OpenAPI 3.1 document merged from every API module.

Each module of `flashcards.api` describes its own routes at module level:
- `PATHS`: {"/api/v1/...": {"get": operation, ...}}, keyed by the full URL path;
- `SCHEMAS`: {"Name": json_schema}, referenced as `ref("Name")`.
Operations require the bearer token unless they say `"security": []`. Shared problem
responses are referenced with `problems(401, 422, ...)`.
"""

from __future__ import annotations

import copy
import importlib
import pkgutil
from typing import Any

from flask import Response, current_app, jsonify

from . import bp

_PROBLEM_TITLES = {
    400: (
        "BadRequest",
        "The request is malformed: its body is not valid JSON, or a value has a NUL character.",
    ),
    401: ("Unauthorized", "No valid bearer token (or wrong credentials)."),
    403: ("Forbidden", "The caller may not do this."),
    404: ("NotFound", "No such resource, or not visible to the caller."),
    409: ("Conflict", "The request conflicts with the current state."),
    413: ("PayloadTooLarge", "The request body is larger than the limit."),
    415: ("UnsupportedMediaType", "The request body is not sent as application/json."),
    422: ("InvalidInput", "A field is missing or invalid; `field` names it."),
    429: ("TooManyRequests", "Too many attempts; wait for Retry-After seconds."),
    503: (
        "ServiceUnavailable",
        "The database cannot be reached right now (a restart, a failover), or other changes "
        "to the same data kept winning; nothing was written. Retry after Retry-After "
        "seconds. Answers are safe to resend with the same review_id.",
    ),
}

# Statuses any operation with a JSON request body can answer.
BODY_PROBLEMS = (400, 413, 415, 422)


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def json_request(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": json_content(schema)}


def problems(*statuses: int) -> dict[str, Any]:
    return {
        str(status): {"$ref": f"#/components/responses/{_PROBLEM_TITLES[status][0]}"}
        for status in statuses
    }


def _problem_responses() -> dict[str, Any]:
    responses: dict[str, Any] = {}
    for status, (name, description) in _PROBLEM_TITLES.items():
        response: dict[str, Any] = {
            "description": description,
            "content": {"application/problem+json": {"schema": ref("Problem")}},
        }
        if status == 401:
            response["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
        if status in (429, 503):
            response["headers"] = {"Retry-After": {"schema": {"type": "integer", "minimum": 1}}}
        responses[name] = response
    return responses


PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "An error, as RFC 9457 problem details.",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {
            "type": "string",
            "description": "What happened, as a URI reference to compare: "
            "/api/v1/problems/<slug> (e.g. review-id-reused) for the service's own errors, "
            "about:blank for plain HTTP ones (no such route, an unexpected error).",
        },
        "title": {"type": "string"},
        "status": {"type": "integer", "minimum": 400, "maximum": 599},
        "detail": {"type": "string"},
        "field": {"type": "string", "description": "The request field at fault."},
    },
}

PATHS: dict[str, Any] = {
    "/api/v1/openapi.json": {
        "get": {
            "operationId": "getOpenApi",
            "summary": "This document.",
            "security": [],
            "responses": {
                "200": {
                    "description": "The OpenAPI 3.1 document of the API.",
                    "content": json_content({"type": "object"}),
                }
            },
        }
    }
}


def _merge_paths(into: dict[str, Any], module: str, paths: dict[str, Any]) -> None:
    for path, item in paths.items():
        target = into.setdefault(path, {})
        for method, operation in item.items():
            if method in target:
                raise RuntimeError(f"{module} describes {method.upper()} {path} a second time")
            target[method] = copy.deepcopy(operation)


def build_document() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {"Problem": PROBLEM_SCHEMA}
    package = importlib.import_module(__package__ or "flashcards.api")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        _merge_paths(paths, info.name, getattr(module, "PATHS", {}))
        for name, schema in getattr(module, "SCHEMAS", {}).items():
            if name in schemas and schemas[name] != schema:
                raise RuntimeError(f"{info.name} redefines schema {name}")
            schemas[name] = copy.deepcopy(schema)
    for item in paths.values():
        for operation in item.values():
            # Any query string can carry a NUL character, which every request refuses.
            operation["responses"].setdefault("400", problems(400)["400"])
            if operation["operationId"] != "getOpenApi":  # the one that reads no database
                operation["responses"].setdefault("503", problems(503)["503"])
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Flashcards API",
            "version": "1",
            "description": "Spaced repetition with FSRS. Errors are application/problem+json.",
        },
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": schemas,
            "responses": _problem_responses(),
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A token from POST /api/v1/tokens or `flashcards users token`.",
                }
            },
        },
        "security": [{"bearer": []}],
    }


@bp.get("/openapi.json")
def openapi_document() -> Response:
    document = current_app.extensions.get("flashcards.openapi")
    if document is None:
        document = current_app.extensions["flashcards.openapi"] = build_document()
    return jsonify(document)
