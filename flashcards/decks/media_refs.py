"""Images and sounds in our card text. No Flask.

Card text is plain text, so a media file is named in it by a token: `[sound:name]` as Anki
writes sounds in its fields, and `[image:name]` for what Anki writes as `<img src="name">`.
Both name a file of the card owner's media folder (`people.media_folder`). Anki fields in
become tokens (`sanitize.html_to_text`) and tokens go out as Anki's own forms
(`sanitize.text_to_html`); the web shows the files only for the types browsers play safely
(`media_type`): never SVG, which can carry script.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..errors import InvalidInput
from ..people.media_folder import check_name, is_valid_name

IMAGE, SOUND = "image", "sound"
# A name runs to the first "]": Anki's sound tags end there too, so no name holds one.
TOKEN_RE = re.compile(r"\[(image|sound):([^\[\]\n]+)\]")

IMAGE_TYPES = {
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
    ".webp": "image/webp", ".avif": "image/avif", ".bmp": "image/bmp",
}  # fmt: skip
# Anki plays video through [sound:] too.
SOUND_TYPES = {
    ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".oga": "audio/ogg", ".opus": "audio/ogg",
    ".wav": "audio/wav", ".m4a": "audio/mp4", ".aac": "audio/aac", ".flac": "audio/flac",
    ".mp4": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg",
}  # fmt: skip


class NotShownMediaType(InvalidInput):
    """A file of a type the pages do not show (SVG, a document...), offered to a card."""


@dataclass(frozen=True)
class MediaRef:
    kind: str  # IMAGE or SOUND
    name: str


def token(kind: str, name: str) -> str:
    return f"[{kind}:{name}]"


def is_local_name(name: str) -> bool:
    """Whether a token can name this as a file of the media folder: a valid name there
    (`media_folder.check_name`), no scheme or path (nothing that loads from elsewhere or
    points a browser at another page), and nothing that would end the token."""
    return (
        not any(c in name for c in ":/\\")
        and is_valid_name(name)
        and TOKEN_RE.fullmatch(token(IMAGE, name)) is not None
    )


def split(text: str) -> list[str | MediaRef]:
    """The text as its plain parts and its media tokens, in order."""
    parts: list[str | MediaRef] = []
    last = 0
    for match in TOKEN_RE.finditer(text):
        if match.start() > last:
            parts.append(text[last : match.start()])
        parts.append(MediaRef(match.group(1), match.group(2)))
        last = match.end()
    if last < len(text):
        parts.append(text[last:])
    return parts


def names(*texts: str) -> set[str]:
    """Every file name the texts' tokens name."""
    return {m.group(2) for text in texts for m in TOKEN_RE.finditer(text)}


def renamed(text: str, new_names: dict[str, str]) -> str:
    """The text with each token naming a key of `new_names` naming its value instead."""
    if not new_names or "[" not in text:
        return text
    return TOKEN_RE.sub(lambda m: token(m.group(1), new_names.get(m.group(2), m.group(2))), text)


def without_images(text: str) -> str:
    """The text with its image tokens taken out (for a deck that keeps no media: sounds stay
    as text, as Anki's own notes show them without the file)."""
    if "[image:" not in text:
        return text
    return TOKEN_RE.sub(lambda m: "" if m.group(1) == IMAGE else m.group(0), text).strip()


def media_type(ref: MediaRef) -> str | None:
    """The content type the web serves the token's file as, None for one it does not show
    (or an image token naming a sound, or the reverse)."""
    return served_type(ref.name) if media_kind(ref.name) == ref.kind else None


def media_kind(name: str) -> str | None:
    """IMAGE or SOUND for a file the pages show by that name, None for one they do not."""
    if not is_local_name(name):
        return None
    suffix = PurePosixPath(name).suffix.lower()
    return IMAGE if suffix in IMAGE_TYPES else SOUND if suffix in SOUND_TYPES else None


def shown_kind(name: str) -> str:
    """IMAGE or SOUND for a file offered to a card: `InvalidMediaName` for a name the folder
    refuses, `NotShownMediaType` for a type the pages do not show."""
    check_name(name)
    kind = media_kind(name)
    if kind is None:
        raise NotShownMediaType(
            "only images (PNG, JPEG, GIF, WebP, AVIF, BMP) and sounds or videos (MP3, Ogg, "
            "WAV, M4A, AAC, FLAC, MP4, WebM) are taken",
            field="file",
        )
    return kind


def served_type(name: str) -> str | None:
    """The content type of a file the web serves by name, None for one it never serves."""
    suffix = PurePosixPath(name).suffix.lower()
    return IMAGE_TYPES.get(suffix) or SOUND_TYPES.get(suffix)
