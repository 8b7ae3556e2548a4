"""GET /api/v1/openapi.json: the OpenAPI 3.1 document, generated from the declared operations.

Each view declares its operation with `@documented(...)` beneath its route: summary, request
model, response models by status and the problems it can answer. The document walks the
app's `url_map`, so a route without a declaration fails the build (and the tests), and the
component schemas come from the pydantic models in `models*.py`, so a limit is written once.

Added to every operation: 400 (a NUL anywhere in the request), 401 unless `public`, 404 when
the path has parameters, 400/413/415/422 with a body, 503 unless it reads no database.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from flask import Flask, Response, current_app, jsonify
from pydantic import BaseModel, Field
from pydantic.json_schema import models_json_schema

from . import bp
from .models import Body, Reply

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
SCHEMA_REF = "#/components/schemas/{model}"
_PROBLEM_REF = SCHEMA_REF.format(model="Problem")
_PATH_PARAMETER = re.compile(r"<(?:([^:<>]+):)?([^<>]+)>")
_PARAMETER_SCHEMAS: dict[str, dict[str, Any]] = {"int": {"type": "integer", "minimum": 0}}


class Problem(Reply):
    """An error, as RFC 9457 problem details."""

    type: str = Field(
        description="What happened, as a URI reference to compare: /api/v1/problems/<slug> "
        "(e.g. review-id-reused) for the service's own errors, about:blank for plain HTTP ones "
        "(no such route, an unexpected error)."
    )
    title: str
    status: int = Field(ge=400, le=599)
    detail: str
    field: str | None = Field(None, description="The request field at fault.")
    line: int | None = Field(
        None, description="The line of an uploaded quiz text or CSV at fault, from 1."
    )
    reason: str | None = Field(
        None,
        description="Why an upload was refused, as a stable code: empty-front, empty-back, "
        "too-long, extra-cells, invalid-key, duplicate-key, unknown-column, csv-syntax, "
        "cloze-unclosed, too-many-deletions, nul, "
        "empty, header-only, no-title, no-questions, expected-question, question-number, "
        "no-marker, second-marker, no-answer, marker-first, no-question-one, question-count, "
        "unknown-locale, too-many-cards.",
    )


@dataclass(frozen=True)
class Answer:
    """One documented response: a JSON model, or other content described as it is."""

    description: str
    model: type[Reply] | None = None
    content: dict[str, Any] | None = None
    headers: dict[str, Any] | None = None


@dataclass(frozen=True)
class Query:
    name: str
    schema: dict[str, Any]
    description: str = ""


@dataclass(frozen=True)
class Operation:
    operation_id: str
    summary: str
    responses: dict[int, Answer]
    problems: tuple[int, ...] = ()
    description: str | None = None
    body: type[Body] | None = None
    body_required: bool = True
    body_content: dict[str, Any] | None = None  # a body that is not JSON
    query: tuple[Query, ...] = ()
    public: bool = False
    reads_database: bool = True
    tags: tuple[str, ...] = ()


OPERATIONS: dict[Callable[..., Any], Operation] = {}
View = TypeVar("View", bound=Callable[..., Any])


def documented(
    operation_id: str,
    summary: str,
    responses: dict[int, Answer],
    *problems: int,
    description: str | None = None,
    body: type[Body] | None = None,
    body_required: bool = True,
    body_content: dict[str, Any] | None = None,
    query: tuple[Query, ...] = (),
    public: bool = False,
    reads_database: bool = True,
    tags: tuple[str, ...] = (),
) -> Callable[[View], View]:
    """Declare the view's operation for the document; place it beneath the route decorator.

    `problems`: the statuses it answers beyond those every operation of its kind can.
    """
    operation = Operation(
        operation_id,
        summary,
        responses,
        problems,
        description=description,
        body=body,
        body_required=body_required,
        body_content=body_content,
        query=query,
        public=public,
        reads_database=reads_database,
        tags=tags,
    )

    def register(view: View) -> View:
        OPERATIONS[view] = operation
        return view

    return register


def _problem_responses() -> dict[str, Any]:
    responses: dict[str, Any] = {}
    for status, (name, description) in _PROBLEM_TITLES.items():
        response: dict[str, Any] = {
            "description": description,
            "content": {"application/problem+json": {"schema": {"$ref": _PROBLEM_REF}}},
        }
        if status == 401:
            response["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
        if status in (429, 503):
            response["headers"] = {"Retry-After": {"schema": {"type": "integer", "minimum": 1}}}
        responses[name] = response
    return responses


Mode = Literal["validation", "serialization"]


def _statuses(operation: Operation, has_parameters: bool) -> set[int]:
    statuses = {400, *operation.problems}
    if not operation.public:
        statuses.add(401)
    if has_parameters:
        statuses.add(404)
    if operation.body is not None:
        statuses.update(BODY_PROBLEMS)
    if operation.reads_database:
        statuses.add(503)
    return statuses


def _operation(operation: Operation, rule: str, refs: dict[Any, dict[str, Any]]) -> dict[str, Any]:
    parameters = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": dict(_PARAMETER_SCHEMAS.get(converter, {"type": "string"})),
        }
        for converter, name in _PATH_PARAMETER.findall(rule)
    ]
    parameters += [
        {"name": q.name, "in": "query", "required": False, "schema": q.schema}
        | ({"description": q.description} if q.description else {})
        for q in operation.query
    ]
    responses: dict[str, Any] = {}
    for status, answer in sorted(operation.responses.items()):
        response: dict[str, Any] = {"description": answer.description}
        if answer.model is not None:
            schema = refs[(answer.model, "serialization")]
            response["content"] = {"application/json": {"schema": schema}}
        if answer.content is not None:
            response["content"] = answer.content
        if answer.headers is not None:
            response["headers"] = answer.headers
        responses[str(status)] = response
    for status in sorted(_statuses(operation, bool(_PATH_PARAMETER.search(rule)))):
        name = _PROBLEM_TITLES[status][0]
        responses.setdefault(str(status), {"$ref": f"#/components/responses/{name}"})
    document: dict[str, Any] = {"operationId": operation.operation_id, "summary": operation.summary}
    if operation.description:
        document["description"] = operation.description
    if operation.tags:
        document["tags"] = list(operation.tags)
    if parameters:
        document["parameters"] = parameters
    if operation.body is not None:
        content = {"application/json": {"schema": refs[(operation.body, "validation")]}}
        document["requestBody"] = {"required": operation.body_required, "content": content}
    elif operation.body_content is not None:
        document["requestBody"] = {"required": True, "content": operation.body_content}
    if operation.public:
        document["security"] = []
    document["responses"] = responses
    return document


def build_document(app: Flask) -> dict[str, Any]:
    declared: list[tuple[str, str, Operation]] = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith(f"{bp.url_prefix}/"):
            continue
        operation = OPERATIONS.get(app.view_functions[rule.endpoint])
        if operation is None:
            raise RuntimeError(f"{rule.rule} ({rule.endpoint}) declares no operation")
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            declared.append((rule.rule, method.lower(), operation))
    models: set[tuple[type[BaseModel], Mode]] = {(Problem, "serialization")}
    for _path, _method, operation in declared:
        if operation.body is not None:
            models.add((operation.body, "validation"))
        models.update((a.model, "serialization") for a in operation.responses.values() if a.model)
    refs, definitions = models_json_schema(
        sorted(models, key=lambda m: (m[0].__name__, m[1])), ref_template=SCHEMA_REF
    )
    paths: dict[str, Any] = {}
    for route, method, operation in declared:
        path = _PATH_PARAMETER.sub(r"{\2}", route)
        paths.setdefault(path, {})[method] = _operation(operation, route, refs)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Flashcards API",
            "version": "1",
            "description": "Spaced repetition with FSRS. Errors are application/problem+json.",
        },
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": definitions.get("$defs", {}),
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
@documented(
    "getOpenApi",
    "This document.",
    {
        200: Answer(
            "The OpenAPI 3.1 document of the API.",
            content={"application/json": {"schema": {"type": "object"}}},
        )
    },
    public=True,
    reads_database=False,
)
def openapi_document() -> Response:
    document = current_app.extensions.get("flashcards.openapi")
    if document is None:
        document = current_app.extensions["flashcards.openapi"] = build_document(current_app)
    return jsonify(document)
