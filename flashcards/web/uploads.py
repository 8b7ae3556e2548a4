"""The web's upload forms: the body each may send, and its answer to a larger one.

MAX_CONTENT_LENGTH stays small for every other body; an upload form's route raises it for
its request, for someone signed in only (a visitor cannot make the server take in a large
body for nothing). A body over even that is refused before it is read, so its fields are
lost: the form's own page is shown again, empty, with the limit in the person's language,
instead of an error page. Under it the view reads the form and keeps what was typed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from babel.numbers import format_decimal
from flask import Flask, request
from werkzeug.wrappers import Response

from .auth import current_user
from .i18n import locale_code

# Room for the multipart envelope and the form's other fields around a file of the limit.
MULTIPART_SLACK = 64 * 1024


@dataclass(frozen=True)
class UploadForm:
    limit: Callable[[], int]  # bytes of the file it takes
    too_large: Callable[[], Response]  # its page again, saying the limit


FORMS: dict[str, UploadForm] = {}


def upload_form(endpoint: str, limit: Callable[[], int], too_large: Callable[[], Response]) -> None:
    FORMS[endpoint] = UploadForm(limit, too_large)


def _allow_large_upload() -> None:
    # Runs before the CSRF check, which is the first to read (and so size-check) the form.
    form = FORMS.get(request.endpoint or "")
    if form is not None and current_user() is not None:
        request.max_content_length = form.limit() + MULTIPART_SLACK


def too_large_response() -> Response | None:
    """The form's page for a body over its limit, or None where no upload form applies."""
    form = FORMS.get(request.endpoint or "")
    if form is None or current_user() is None:
        return None
    return form.too_large()


def mebibytes(size: int) -> str:
    """A size in MiB, to a tenth where it has one ("2,5", "64"), as the page's language
    writes numbers."""
    return str(format_decimal(size / (1024 * 1024), "#,##0.#", locale=locale_code()))


def init_app(app: Flask) -> None:
    app.before_request(_allow_large_upload)
