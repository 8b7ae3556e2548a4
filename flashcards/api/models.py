"""The API's declared bodies: pydantic models that validate requests and shape responses.

Each limit is written once, in a model field, and reaches both the validation and the
OpenAPI document (`openapi.py` builds the document's schemas from these models). Request
models (`Body`) are strict and closed: a string is never taken for a number, and an unknown
field is refused. Response models (`Reply`) are serialized with `reply()`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar

from flask import Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer, WithJsonSchema


class Body(BaseModel):
    """A JSON request body; parse one with `api.bodies.parse_body`."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)

    # A field's own refusal message, for errors whose generic wording would say less.
    messages: ClassVar[dict[str, str]] = {}


class Reply(BaseModel):
    """A JSON response body."""

    model_config = ConfigDict(frozen=True)


def reply(body: Reply, status: int = 200) -> Response:
    return Response(body.model_dump_json(), status=status, mimetype="application/json")


def _whole_number(value: Any) -> Any:
    # JSON Schema's "integer" includes 60.0, which clients may send; bool stays refused.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An integer as JSON Schema means it: 3 or 3.0, never true or "3". Placed after an int's
# bounds (`Annotated[int, Field(ge=1), WHOLE]`), so that they stay minimum and maximum in
# the document.
WHOLE = BeforeValidator(_whole_number)

# Times as `datetime.isoformat` writes them ("+00:00"), as the API always has.
Timestamp = Annotated[
    datetime,
    PlainSerializer(datetime.isoformat, return_type=str),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
