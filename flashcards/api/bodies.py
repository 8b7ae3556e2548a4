"""Reading a request's JSON body: as a declared model (`parse_body`) or a plain object
(`json_body`), with anything wrong said as a 400/413/415/422 problem, never a 500."""

from __future__ import annotations

import functools
import json
import re
from typing import Any, TypeVar

from flask import request
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ..errors import InvalidInput, MalformedRequest, UnsupportedContentType
from .models import Body


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# Built once: `json.loads` given an option builds a decoder (and its scanner) on every call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _loads(data: bytes) -> Any:
    """`json.loads(data, parse_constant=_reject_constant)`, decoding the bytes as it does."""
    return _DECODER.decode(data.decode(json.detect_encoding(data), "surrogatepass"))


def _has_lone_surrogate(body: Any) -> bool:
    # json accepts "\\ud800" alone; the database driver would then fail to encode it (a 500).
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _has_nul(body: Any) -> bool:
    pending = [body]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if "\x00" in value:
                return True
        elif isinstance(value, dict):
            pending.extend(value)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def json_body() -> dict[str, Any]:
    """The request body as a JSON object, or a 400/413/415/422 problem saying what is wrong."""
    mimetype = request.mimetype
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise UnsupportedContentType(
            "the request body must be JSON, sent with Content-Type: application/json"
        )
    data = request.get_data(cache=True)  # raises 413 above MAX_CONTENT_LENGTH
    try:
        body = _loads(data)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError and undecodable bytes.
        raise MalformedRequest(f"the request body is not valid JSON: {exc}") from None
    if (b"\\ud" in data or b"\\uD" in data) and _has_lone_surrogate(body):
        raise MalformedRequest(
            "the request body has a lone UTF-16 surrogate escape, which is not text"
        )
    if not isinstance(body, dict):
        raise InvalidInput("the request body must be a JSON object")
    if b"\\u0000" in data:
        # No text column takes it: PostgreSQL refuses NUL in text (a 500 if it got there).
        for name, value in body.items():
            if _has_nul(value) or "\x00" in name:
                raise InvalidInput(f"{name} must not contain NUL characters", field=name)
    return body


# Bodies the fast parser could misread: a NUL or a UTF-16 surrogate escape (which need the
# checks of `json_body`), and NaN or Infinity, which pydantic's parser takes but JSON does not.
_CLOSE_LOOK = re.compile(rb"\\u0000|\\u[dD]|NaN|Infinity")

B = TypeVar("B", bound=Body)


def parse_body(model: type[B], *, optional: bool = False) -> B:
    """The request body as `model`, or a 400/413/415/422 problem saying what is wrong.

    `optional`: an empty body stands for `{}`, whatever its content type.
    """
    req = request
    if optional and not req.get_data(cache=True):
        return model.model_validate({})
    mimetype = req.mimetype
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise UnsupportedContentType(
            "the request body must be JSON, sent with Content-Type: application/json"
        )
    data = req.get_data(cache=True)  # raises 413 above MAX_CONTENT_LENGTH
    if _CLOSE_LOOK.search(data):
        return _validated(model, json_body())
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "json_invalid":
            # Say it as json does, or accept what only it reads (UTF-16, a byte-order mark).
            return _validated(model, json_body())
        raise invalid_input(model, exc) from None


def _validated(model: type[B], body: dict[str, Any]) -> B:
    try:
        # Through JSON again so that the checks are those of JSON input (a UUID as a string).
        return model.model_validate_json(json.dumps(body))
    except ValidationError as exc:
        raise invalid_input(model, exc) from None


def invalid_input(model: type[Body], exc: ValidationError) -> InvalidInput:
    """pydantic's first error as our 422, naming the field; unknown fields are said first."""
    errors = exc.errors(include_url=False)
    error = min(errors, key=lambda e: e["type"] != "extra_forbidden")
    if not error["loc"]:
        return InvalidInput("the request body must be a JSON object")
    field = str(error["loc"][0])
    kind = error["type"]
    if kind == "extra_forbidden":
        allowed = ", ".join(sorted(model.model_fields))
        return InvalidInput(f"unknown field {field!r}; allowed: {allowed}", field=field)
    if kind == "missing":
        return InvalidInput(f"{field} is required", field=field)
    if field in model.messages:
        return InvalidInput(model.messages[field], field=field)
    if kind == "value_error":
        return InvalidInput(str(error["ctx"]["error"]), field=field)
    return InvalidInput(_described(model, field, error), field=field)


@functools.cache
def _integer_bounds(model: type[Body], field: str) -> tuple[int, int] | None:
    """The documented bounds of an integer field, as the model's schema states them."""
    schema = model.model_json_schema()["properties"].get(field, {})
    for kind in (schema, *schema.get("anyOf", ())):
        if kind.get("type") == "integer" and "minimum" in kind and "maximum" in kind:
            return kind["minimum"], kind["maximum"]
    return None


def _described(model: type[Body], field: str, error: ErrorDetails) -> str:
    ctx = error.get("ctx", {})
    bounds = _integer_bounds(model, field)
    if error["type"].startswith(("int_", "greater_than", "less_than")) and bounds is not None:
        return f"{field} must be an integer from {bounds[0]} to {bounds[1]}"
    if error["type"] == "string_type":
        return f"{field} must be a string"
    if error["type"] == "string_too_long":
        return f"{field} may have at most {ctx['max_length']} characters"
    if error["type"] == "string_too_short":
        return f"{field} must have at least {ctx['min_length']} characters"
    return f"{field}: {error['msg']}"
