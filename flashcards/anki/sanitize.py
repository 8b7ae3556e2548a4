"""HTML in and out of Anki fields.

Out: our text is plain, so it is escaped and line breaks become `<br>`; an image token
becomes Anki's `<img src>` (`decks.media_refs`).
In: Anki fields are HTML written by anyone. They first go through an allow-list sanitizer
(nh3, i.e. Rust's ammonia): no scripts, styles, event handlers, forms, frames, or anything
that loads a resource but an image of the media folder (no CSS urls, no `<audio>`, no image
from elsewhere). Our card text is plain text rendered escaped, so the clean HTML is then
reduced to text with its line structure kept, and each image to its token.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import nh3

from ..decks import media_refs

ALLOWED_TAGS = {
    "a", "b", "blockquote", "br", "code", "div", "em", "hr", "i", "li", "ol", "p", "pre",
    "s", "span", "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "u", "ul",
    "img",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "span": {"class"}, "div": {"class"}, "img": {"src"}}
# Links, and images from elsewhere, which become no token (`_media_name`): nothing kept loads
# a URL by itself.
URL_SCHEMES = {"http", "https", "mailto"}
BLOCK_TAGS = {"p", "div", "li", "tr", "blockquote", "pre", "hr", "table", "ul", "ol"}
CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
BLANK_LINES_RE = re.compile(r"\n{3,}")
MARKUP_RE = re.compile(r"<(?!/?(br|div|p|img)\b)[a-z]", re.IGNORECASE)


def text_to_html(text: str) -> str:
    """Our plain text as an Anki field: escaped, no field separators, `<br>` for newlines,
    images as `<img>` (sounds are Anki's `[sound:]` already)."""
    cleaned = CONTROL_RE.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))
    if "[image:" not in cleaned:
        return html.escape(cleaned, quote=False).replace("\n", "<br>")
    out = []
    for part in media_refs.split(cleaned):
        if isinstance(part, str):
            out.append(html.escape(part, quote=False).replace("\n", "<br>"))
        elif part.kind == media_refs.IMAGE and media_refs.is_local_name(part.name):
            out.append(f'<img src="{html.escape(part.name)}">')
        else:
            out.append(html.escape(media_refs.token(part.kind, part.name), quote=False))
    return "".join(out)


def clean_html(value: str) -> str:
    if "<" not in value and "&" not in value:
        return value  # no markup and no entities: nothing for the sanitizer to remove
    return str(
        nh3.clean(
            value,
            tags=ALLOWED_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            url_schemes=URL_SCHEMES,
            link_rel="noopener noreferrer nofollow",
            strip_comments=True,
        )
    )


def has_formatting(clean: str) -> bool:
    """Whether reducing this clean HTML to text loses anything beyond line breaks."""
    return MARKUP_RE.search(clean) is not None


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.parts.append("\n")
        elif tag == "img":
            name = _media_name(dict(attrs).get("src"))
            if name is not None:
                self.parts.append(media_refs.token(media_refs.IMAGE, name))
        elif tag in BLOCK_TAGS:
            self._newline()

    def handle_endtag(self, tag: str) -> None:
        if tag in BLOCK_TAGS:
            self._newline()

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def _newline(self) -> None:
        if self.parts and not "".join(self.parts[-1:]).endswith("\n"):
            self.parts.append("\n")


def _media_name(src: str | None) -> str | None:
    """The media folder's file an `<img src>` names; None for an image from elsewhere (a
    URL, a path), which is not kept."""
    return src if src is not None and media_refs.is_local_name(src) else None


def html_to_text(value: str, *, already_clean: bool = False) -> str:
    """Anki field HTML as our plain text (sanitized first, so nothing unsafe survives anyway)."""
    parser = _TextExtractor()
    parser.feed(value if already_clean else clean_html(value))
    parser.close()
    # A no-break space stays one (our own cards use it, as in "200 000"): plain text shows it as
    # a space that does not wrap.
    text = CONTROL_RE.sub(" ", "".join(parser.parts))
    lines = [line.rstrip() for line in text.split("\n")]
    return BLANK_LINES_RE.sub("\n\n", "\n".join(lines)).strip()
