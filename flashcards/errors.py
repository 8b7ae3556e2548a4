"""One rooted exception hierarchy, each error named by what happened.

The domain raises these without knowing HTTP: `api/errors.py` maps each class to a status and
a problem type, `web/error_table.py` to a page or a translated message, and the CLI prints the
detail as one line. A few broad classes stay as bases where the broad meaning is the whole
meaning: a value that fails validation (`InvalidInput`), a lookup that finds nothing
(`NotFound`), a caller who is not identified (`NotAuthenticated`), or one whose role does not
allow the action (`NotPermitted`). Errors of one domain module's own (`EmailTaken`,
`RemovedFromTeam`, `AnkiPackageError`, `RateLimited`...) live beside the code that raises them.
"""

from __future__ import annotations


class FlashcardsError(Exception):
    """Base of every error the service reports to a person or a client."""

    def __init__(self, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field  # the request or form field at fault, when there is one


# The request as sent cannot be read.


class MalformedRequest(FlashcardsError):
    """The request cannot be read: a body that is not JSON, a NUL character in a value."""


class UnsupportedContentType(FlashcardsError):
    """The body is sent as a type the operation does not read."""


class BodyTooLarge(FlashcardsError):
    """The body is larger than the operation takes."""


# Broad meanings, each a base for errors of that kind.


class InvalidInput(FlashcardsError):
    """A value that fails validation; `field` names it."""


class NotFound(FlashcardsError):
    """Nothing by that name or id, or nothing the caller may see."""


class NotAuthenticated(FlashcardsError):
    """The caller is not identified: no credentials, or wrong ones."""


class NotPermitted(FlashcardsError):
    """The caller is identified, and their role does not allow the action."""


class MissingToken(NotAuthenticated):
    """An API request without a bearer token."""


class WrongCredentials(NotAuthenticated):
    """A sign-in whose email and password do not match an account."""


class RoleRequired(NotPermitted):
    """The action needs a role in the team the caller does not have."""


class OwnerNotRemovable(NotPermitted):
    """A team's owner cannot be removed from it (ownership is handed over first)."""


class ManagerRemovesMembersOnly(NotPermitted):
    """A manager may remove plain members, not other managers."""


class NotDeckOwner(NotPermitted):
    """Only the person who imported a deck (or a team's leads, its team's) may delete it."""


class SignupClosed(NotPermitted):
    """Self sign-up is switched off on this server."""


# Studying.


class CardNotFound(NotFound):
    """No card by that id."""


class ReviewIdReused(FlashcardsError):
    """A review_id already used for another card, user or rating."""


class NotSubscribed(FlashcardsError):
    """An answer or a queue for a deck the person does not study."""


class CardRetired(FlashcardsError):
    """An answer to a new card retired from its deck, which is introduced to nobody."""


class UnknownReviewId(NotFound):
    """An undo naming an answer the person does not have (possibly undone already)."""


class NotLatestAnswer(FlashcardsError):
    """An undo naming an answer that is not the person's latest of today."""


class CardNotStudied(FlashcardsError):
    """The action needs a schedule (forget, set due date) and the card is still new."""


class NothingToUndo(FlashcardsError):
    """An undo on a study day without answers."""


class NoCardsMatch(FlashcardsError):
    """A custom study session asked for that would show no card."""


# Teams and decks.


class InvalidLabel(InvalidInput):
    """An invitation link's label that is too long or has control characters."""


class DueDateInPast(InvalidInput):
    """An assignment's due date before the lead's today."""


class TextTooLong(InvalidInput):
    """A card's question, answer or explanation longer than a card holds."""


class NoClozeDeletion(InvalidInput):
    """A Cloze text saved without a deletion ({{c1::...}}): it would make no card."""


class TooManyDeletions(InvalidInput):
    """A Cloze text with more deletion numbers than cards one note may make."""


class NotClozeCard(NotFound):
    """A Cloze text asked of a card made from none (or whose cards were edited one by one)."""


class LanguageNotInDeck(InvalidInput):
    """A card edited in a language the deck has no text in."""


class InvitationNotUsable(NotFound):
    """An invitation link that is unknown, revoked, expired or used up."""


class OwnerRoleByTransferOnly(FlashcardsError):
    """Nobody is made owner, nor the owner demoted, by a role change: ownership is handed over."""


class AlreadyOwner(FlashcardsError):
    """Handing a team over to its own owner."""


class RemovingSelf(FlashcardsError):
    """A lead removing themselves, which leaving the team does."""


class OwnerCannotLeave(FlashcardsError):
    """A team always keeps its one owner, who hands it over before leaving."""


class EditingRetiredCard(FlashcardsError):
    """An edit of a card retired from its team's deck: its text stays as it was last studied."""


class CardOfAnkiNote(FlashcardsError):
    """A card made on an Anki device from a note type of its own: its text comes from the
    note, which is edited in Anki (the note's other fields and cards are not shown here)."""


class AnkiFieldFormatted(CardOfAnkiNote):
    """An edit of a card's side whose note field holds formatting or pictures plain text
    does not keep: the field would be flattened on every device."""


class LastCardOfDeck(FlashcardsError):
    """A deck keeps at least one card; deleting the deck removes the last."""


class DeckNameTaken(FlashcardsError):
    """A deck's slug is already another deck's."""


class DeckTitleTaken(FlashcardsError):
    """The person already has a deck of that title: two would be one name in Anki, and one
    line in their library."""


class DeckFileError(InvalidInput):
    """A deck, quiz or CSV file that cannot be read; carries `file:line` so editors can jump
    to it, and the reason as data: `reason` is a stable code ("empty-back", "no-answer"...)
    and `facts` the values its sentence names (a key, a question number), so that every edge
    words it in its own language without reading `problem`'s English."""

    def __init__(
        self,
        path: str,
        line: int | None,
        problem: str,
        *,
        reason: str = "unreadable",
        facts: dict[str, str | int] | None = None,
        field: str | None = None,
    ) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}", field=field)
        self.path = path
        self.line = line
        self.problem = problem
        self.reason = reason
        self.facts: dict[str, str | int] = dict(facts or {})


class QuestionCountMismatch(DeckFileError):
    """A quiz given as a translation with another number of questions than the deck's cards."""

    def __init__(self, path: str, questions: int, cards: int) -> None:
        super().__init__(
            path,
            None,
            f"the quiz has {questions} questions but the deck has {cards} cards",
            reason="question-count",
            facts={"questions": questions, "cards": cards},
        )
        self.questions = questions
        self.cards = cards


class TooManyCards(InvalidInput):
    """An upload or an added card that would take a team deck past the cards it may hold."""

    def __init__(self, count: int, limit: int) -> None:
        super().__init__(f"{count} cards: a team deck holds at most {limit}", field="content")
        self.count = count
        self.limit = limit


class UploadTooLarge(BodyTooLarge):
    """An uploaded file or text larger than its form takes; `limit` in bytes."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"the upload is {size} bytes, more than the limit of {limit} bytes", field="content"
        )
        self.size = size
        self.limit = limit


class TooMuchContention(FlashcardsError):
    """Every attempt lost a race with other writes of the same rows (`storage.retry`)."""

    retry_after = 1  # seconds: the writes it lost to take milliseconds

    def __init__(self) -> None:
        super().__init__(
            "too many concurrent changes to the same data; nothing was written, "
            "retry after Retry-After seconds"
        )


# Personal FSRS parameters (flashcards/optimizer/).


class OptimizerUnavailable(FlashcardsError):
    """The optimizer's optional package is not installed on this server."""


class NotEnoughHistory(FlashcardsError):
    """Too few answers, or on too few cards, to fit parameters that could be trusted."""


class NothingToRevert(FlashcardsError):
    """A revert while the parameters in force are already the defaults."""
