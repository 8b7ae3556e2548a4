"""One rooted exception hierarchy; the web layer and the CLI each translate it in one place."""

from __future__ import annotations


class FlashcardsError(Exception):
    """Base of every error the service reports to a person or a client."""

    status = 400
    title = "Bad request"

    def __init__(self, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


class BadRequest(FlashcardsError):
    """The request itself is malformed, e.g. its body is not valid JSON."""


class UnsupportedMediaType(FlashcardsError):
    status = 415
    title = "Unsupported media type"


class InvalidInput(FlashcardsError):
    status = 422
    title = "Invalid input"


class NotFound(FlashcardsError):
    status = 404
    title = "Not found"


class Forbidden(FlashcardsError):
    status = 403
    title = "Forbidden"


class Conflict(FlashcardsError):
    status = 409
    title = "Conflict"


class Unauthorized(FlashcardsError):
    status = 401
    title = "Unauthorized"


class TooManyRequests(FlashcardsError):
    status = 429
    title = "Too many requests"


class PayloadTooLarge(FlashcardsError):
    status = 413
    title = "Payload too large"


class TooMuchContention(FlashcardsError):
    """Every attempt lost a race with other writes of the same rows (`db.with_retries`)."""

    status = 503
    title = "Service unavailable"
    retry_after = 1  # seconds: the writes it lost to take milliseconds

    def __init__(self) -> None:
        super().__init__(
            "too many concurrent changes to the same data; nothing was written, "
            "retry after Retry-After seconds"
        )


class DeckFileError(InvalidInput):
    """A deck or quiz file that cannot be read; carries `file:line` so editors can jump to it."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem
