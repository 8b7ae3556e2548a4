"""What makes two names look alike: Unicode normalisation, invisible and direction-changing
characters, and words that mix scripts. Pure functions; no Flask, no database.

`alice\\u200b@example.test` (a zero-width space) or a name with a right-to-left override
renders exactly like another person's; a word spelled with Latin and Cyrillic letters
("pаypal", Cyrillic а) reads as the Latin one. Emails and display names are normalised
(NFKC, so compatibility forms such as fullwidth letters become the ordinary ones) and the
invisible ones refused; a mixed-script word cannot be refused (people may write names in
any script), so it is flagged where a team lead reads names.
"""

from __future__ import annotations

import re
import unicodedata

# Invisible letters: the Hangul fillers render as nothing at all (a favourite for "empty"
# names); they are Lo, not Cf, so they need naming.
_INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
# Cf: format characters, among them the zero-width space, joiners and marks
# (U+200B-U+200F), the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
# U+2066-U+2069), the word joiner (U+2060) and the byte-order mark (U+FEFF). Zl and Zp:
# line and paragraph separators, which break a line like a newline. Cs: lone surrogates,
# which no UTF-8 text can hold.
_HIDDEN_CATEGORIES = frozenset({"Cf", "Zl", "Zp", "Cs"})


def hidden_character(text: str) -> str | None:
    """The first character of `text` that is invisible or changes the text's direction,
    else None."""
    for char in text:
        if char in _INVISIBLE_LETTERS or unicodedata.category(char) in _HIDDEN_CATEGORIES:
            return char
    return None


def hidden_characters_class() -> str:
    """The hidden characters of the Basic Multilingual Plane as a regular expression's
    character ranges (`\\uXXXX` escapes, read alike by ECMA-262 and Python), for a JSON
    Schema `pattern`. Characters beyond it (a few format characters, such as the tag
    characters) cannot be written there portably; `hidden_character` refuses them too."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x10000):
        char = chr(code)
        if unicodedata.category(char) == "Cs":
            continue  # not characters: no JSON text carries them, and ECMA would read pairs
        if char in _INVISIBLE_LETTERS or unicodedata.category(char) in _HIDDEN_CATEGORIES:
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)


def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def fold(text: str) -> str:
    """NFKC with case folded (Unicode's NFKC_Casefold, near enough): one spelling for every
    way of writing the same address."""
    return nfkc(nfkc(text).casefold())


# Scripts that one word may legitimately combine (UTS #39's "highly restrictive" level):
# Japanese mixes Han, Hiragana and Katakana; Korean Hangul and Han; Chinese Han and Bopomofo;
# any of them with Latin.
_ALLOWED_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
_WORD = re.compile(r"[^\W\d_]+")  # runs of letters: words, split at spaces, digits and marks


def script(char: str) -> str | None:
    """The script of a letter, read from its Unicode name ("CYRILLIC SMALL LETTER A");
    None for anything that is not a letter of a named script."""
    if not unicodedata.category(char).startswith("L"):
        return None
    name = unicodedata.name(char, "")
    if name.startswith(("CJK ", "IDEOGRAPHIC")):
        return "HAN"
    first = name.partition(" ")[0]
    return None if first in ("", "MODIFIER") else first


def mixed_script(text: str) -> bool:
    """True when a word of `text` mixes letters of scripts that are not written together,
    as a Latin name spelled with a Cyrillic or Greek letter is. Different words in different
    scripts ("Иван Smith") are not mixed."""
    for word in _WORD.findall(nfkc(text)):
        scripts = {s for s in map(script, word) if s is not None}
        if len(scripts) > 1 and not any(scripts <= allowed for allowed in _ALLOWED_MIXES):
            return True
    return False


def looks_like_another(*texts: str) -> bool:
    """Whether a team lead should be warned that a member's name or email may imitate
    someone else's: a word mixing scripts, or an invisible or direction-changing character
    (refused now, but an account may predate that)."""
    return any(mixed_script(t) or hidden_character(t) is not None for t in texts)
