"""Every API error as application/problem+json (RFC 9457), and strict request-body parsing.

`PROBLEM_TYPES` is the one table from an error class to its status, problem type and title;
the domain's errors know nothing of HTTP. Werkzeug's HTTP errors (routing 404 and 405, 413
from MAX_CONTENT_LENGTH) become problems too when the URL is under /api/. The request's session
is closed without commit by teardown, so nothing partial is written.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import Response, current_app, request
from pydantic import ValidationError
from pydantic_core import ErrorDetails
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from ..anki.errors import AnkiPackageError
from ..decks.locales import UnknownLocale
from ..errors import (
    AlreadyOwner,
    BodyTooLarge,
    CardNotFound,
    CardNotStudied,
    CardRetired,
    DeckFileError,
    DeckNameTaken,
    DueDateInPast,
    EditingRetiredCard,
    FlashcardsError,
    InvalidInput,
    InvalidLabel,
    InvitationNotUsable,
    LanguageNotInDeck,
    LastCardOfDeck,
    MalformedRequest,
    ManagerRemovesMembersOnly,
    MissingToken,
    NotAuthenticated,
    NotDeckOwner,
    NotEnoughHistory,
    NotFound,
    NothingToRevert,
    NothingToUndo,
    NotLatestAnswer,
    NotPermitted,
    NotSubscribed,
    OptimizerUnavailable,
    OwnerCannotLeave,
    OwnerNotRemovable,
    OwnerRoleByTransferOnly,
    QuestionCountMismatch,
    RemovingSelf,
    ReviewIdReused,
    RoleRequired,
    SignupClosed,
    TextTooLong,
    TooManyCards,
    TooMuchContention,
    UnknownReviewId,
    UnsupportedContentType,
    UploadTooLarge,
    WrongCredentials,
)
from ..mail import MailNotSent
from ..people.accounts import EmailTaken, InvalidToken, SamePassword, WrongPassword
from ..people.ratelimit import RateLimited
from ..people.resets import AdminResetByOwner, ResetLinkNotUsable
from ..srs.custom_study import NoCustomStudy
from ..storage.backup import BackupError
from ..storage.engine import database_unavailable
from ..teams.invitations import RemovedFromTeam
from ..teams.team_decks import UnknownCardKey
from . import bp
from .models import Body

PROBLEM_MIMETYPE = "application/problem+json"
API_PREFIX = "/api/"
# A problem's `type` is this plus its slug: a URI reference the same on every instance
# (RFC 9457 3.1.1), which a client compares rather than dereferences.
PROBLEM_TYPE_PREFIX = "/api/v1/problems/"
# What a client waits before retrying when the database is out of reach (a restart, a
# failover): long enough not to pile on, short enough for a person at the keyboard.
UNAVAILABLE_RETRY_AFTER = 5


@dataclass(frozen=True)
class ProblemType:
    status: int
    slug: str
    title: str

    @property
    def uri(self) -> str:
        return PROBLEM_TYPE_PREFIX + self.slug


P = ProblemType
PROBLEM_TYPES: dict[type[FlashcardsError], ProblemType] = {
    # The request as sent
    MalformedRequest: P(400, "malformed-request", "Malformed request"),
    UnsupportedContentType: P(415, "unsupported-content-type", "Unsupported media type"),
    BodyTooLarge: P(413, "body-too-large", "Payload too large"),
    # Validation
    InvalidInput: P(422, "invalid-input", "Invalid input"),
    DeckFileError: P(422, "invalid-deck-file", "Invalid deck file"),
    UnknownLocale: P(422, "unknown-locale", "Unknown language code"),
    InvalidLabel: P(422, "invalid-label", "Invalid label"),
    DueDateInPast: P(422, "due-date-in-past", "Due date in the past"),
    TextTooLong: P(422, "text-too-long", "Text too long"),
    LanguageNotInDeck: P(422, "language-not-in-deck", "Language not in the deck"),
    QuestionCountMismatch: P(422, "question-count-mismatch", "Questions do not match the cards"),
    UnknownCardKey: P(422, "unknown-card-key", "Unknown card key"),
    AnkiPackageError: P(422, "invalid-package", "Unreadable Anki package"),
    SamePassword: P(422, "same-password", "New password equals the current one"),
    BackupError: P(422, "invalid-backup", "Unusable backup"),
    # Lookups
    NotFound: P(404, "not-found", "Not found"),
    CardNotFound: P(404, "card-not-found", "No such card"),
    UnknownReviewId: P(404, "unknown-review-id", "No answer with this review_id"),
    InvitationNotUsable: P(404, "invitation-not-usable", "Invitation unknown or no longer valid"),
    NoCustomStudy: P(404, "no-custom-study", "No custom study session"),
    # Identity
    NotAuthenticated: P(401, "not-authenticated", "Unauthorized"),
    MissingToken: P(401, "missing-token", "No API token"),
    InvalidToken: P(401, "invalid-token", "Invalid API token"),
    WrongCredentials: P(401, "wrong-credentials", "Wrong email or password"),
    # The current password proves who a signed-in caller is: well formed, and refused.
    WrongPassword: P(403, "wrong-password", "Wrong current password"),
    # Permission
    NotPermitted: P(403, "not-permitted", "Forbidden"),
    RoleRequired: P(403, "role-required", "Role required"),
    OwnerNotRemovable: P(403, "owner-not-removable", "The owner cannot be removed"),
    ManagerRemovesMembersOnly: P(
        403, "manager-removes-members-only", "Managers remove plain members only"
    ),
    NotDeckOwner: P(403, "not-deck-owner", "Not the deck's owner"),
    SignupClosed: P(403, "signup-closed", "Sign-up is closed"),
    RemovedFromTeam: P(403, "removed-from-team", "Removed from the team"),
    # State that does not allow the change
    ReviewIdReused: P(409, "review-id-reused", "review_id already used"),
    NotSubscribed: P(409, "not-subscribed", "Not subscribed to the deck"),
    CardRetired: P(409, "card-retired", "Card retired"),
    EditingRetiredCard: P(409, "editing-retired-card", "Retired cards are not edited"),
    NotLatestAnswer: P(409, "not-latest-answer", "Not the latest answer"),
    NothingToUndo: P(409, "nothing-to-undo", "Nothing to undo"),
    CardNotStudied: P(409, "card-not-studied", "The card is still new"),
    OwnerRoleByTransferOnly: P(
        409, "owner-role-by-transfer-only", "Ownership is transferred, not assigned"
    ),
    AlreadyOwner: P(409, "already-owner", "Already the owner"),
    RemovingSelf: P(409, "removing-self", "Leave instead of removing yourself"),
    OwnerCannotLeave: P(409, "owner-cannot-leave", "The owner cannot leave"),
    LastCardOfDeck: P(409, "last-card-of-deck", "A deck keeps one card"),
    DeckNameTaken: P(409, "deck-name-taken", "Deck name taken"),
    EmailTaken: P(409, "email-taken", "Email cannot be used"),
    # Load
    RateLimited: P(429, "rate-limited", "Too many requests"),
    TooMuchContention: P(503, "too-much-contention", "Service unavailable"),
    # Personal FSRS parameters
    NotEnoughHistory: P(409, "not-enough-history", "Not enough history to fit parameters"),
    NothingToRevert: P(409, "nothing-to-revert", "No parameters to revert"),
    OptimizerUnavailable: P(503, "optimizer-unavailable", "Optimizer not installed"),
    # Password reset links and mail
    ResetLinkNotUsable: P(404, "reset-link-not-usable", "Reset link unknown or no longer valid"),
    AdminResetByOwner: P(403, "admin-reset-by-owner", "Not for an administrator's account"),
    MailNotSent: P(502, "mail-not-sent", "Mail not sent"),
    # Team deck uploads
    TooManyCards: P(422, "too-many-cards", "Too many cards"),
    UploadTooLarge: P(413, "upload-too-large", "Upload too large"),
}
del P


def problem_type(exc: FlashcardsError) -> ProblemType:
    """The table's entry for the error's class, or for its nearest mapped base."""
    for cls in type(exc).__mro__:
        found = PROBLEM_TYPES.get(cls)
        if found is not None:
            return found
    raise LookupError(f"{type(exc).__name__} is missing from PROBLEM_TYPES")


def problem(
    status: int,
    title: str,
    detail: str,
    *,
    type_uri: str = "about:blank",
    field: str | None = None,
    headers: dict[str, str] | None = None,
    members: dict[str, Any] | None = None,
) -> Response:
    body: dict[str, Any] = {"type": type_uri, "title": title, "status": status}
    body["detail"] = detail
    if field is not None:
        body["field"] = field
    body.update(members or {})
    response = Response(
        json.dumps(body, ensure_ascii=False), status=status, mimetype=PROBLEM_MIMETYPE
    )
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


@bp.errorhandler(FlashcardsError)
def _flashcards_error(exc: FlashcardsError) -> Response:
    kind = problem_type(exc)
    headers: dict[str, str] = {}
    if isinstance(exc, NotAuthenticated):
        headers["WWW-Authenticate"] = 'Bearer realm="flashcards"'
    if isinstance(exc, (RateLimited, TooMuchContention)):
        headers["Retry-After"] = str(int(exc.retry_after))
    return problem(
        kind.status,
        kind.title,
        exc.detail,
        type_uri=kind.uri,
        field=exc.field,
        headers=headers,
        members=_members(exc),
    )


def _members(exc: FlashcardsError) -> dict[str, Any]:
    """Where and why an upload was refused, as data a client acts on without the detail."""
    members: dict[str, Any] = {}
    if isinstance(exc, DeckFileError):
        members["reason"] = exc.reason
    elif isinstance(exc, UnknownLocale):
        members["reason"] = "unknown-locale"
    elif isinstance(exc, TooManyCards):
        members["reason"] = "too-many-cards"
    line = getattr(exc, "line", None) if isinstance(exc, (DeckFileError, UnknownLocale)) else None
    if line is not None:
        members["line"] = line
    return members


def http_problem(exc: HTTPException) -> Response:
    status = exc.code or 500
    headers = {}
    if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
        headers["Allow"] = ", ".join(sorted(exc.valid_methods))
    detail = exc.description or exc.name
    if exc.code == 413:
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        detail = f"the request body is larger than the limit of {limit} bytes"
    return problem(status, exc.name, detail, headers=headers)


@bp.errorhandler(HTTPException)
def _api_http_error(exc: HTTPException) -> Response:
    return http_problem(exc)


@bp.errorhandler(Exception)
def _unexpected(exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        return http_problem(exc)
    if database_unavailable(exc):
        current_app.logger.error(
            "database unavailable on %s %s", request.method, request.path, exc_info=exc
        )
        return problem(
            503,
            "Service unavailable",
            "the database cannot be reached right now; retry after Retry-After seconds",
            headers={"Retry-After": str(UNAVAILABLE_RETRY_AFTER)},
        )
    current_app.logger.exception("unhandled error on %s %s", request.method, request.path)
    return problem(500, "Internal server error", "an unexpected error occurred; it has been logged")


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
