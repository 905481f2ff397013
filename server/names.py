"""The rules for a registered player's name, and the key that makes names unique.

A name is NFKC-normalised (so full-width and other compatibility forms become
the ordinary letters), then checked: 3 to 20 characters; letters and digits of
any script, with ``_``, ``-`` and ``.`` between them; no control, format,
space or symbol characters; not mixing scripts in a way that imitates another
name (``confusable_homoglyphs.is_dangerous``: a Cyrillic "a" (U+0430) among Latin
letters). What is left is compared by two keys, each unique among accounts:

- the *key*: case-folded, then each character replaced by a fixed
  representative of the characters Unicode's confusables list says look like
  it (the data of ``confusable_homoglyphs``): "Alice", "ALICE" and "A1ice" have
  one key, and logging in goes by it (any case works);
- the *look*: the same replacement on the name as shown, then case-folded, for
  look-alikes that case-folding hides ("AIice" with a capital i looks like
  "Alice", though "aiice" does not look like "alice").

Reserved names (and any name whose key contains "computer", the computer's own
accounts) are refused, and so are their look-alikes in any case: a reserved name is compared
by a third, looser key (``loose_key``) that takes each letter in whichever case looks more
like another, so "QUORlDOR" (a small L for the capital i) passes for "QUORIDOR" as "AIice"
does for "Alice". Between two players' names that would be too strict ("Ilya" and "llya"
are different names); against the server's own it is the point.
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache

from confusable_homoglyphs import confusables

MIN_LENGTH = 3
MAX_LENGTH = 20
JOINERS = "_-."
RESERVED = (
    "admin",
    "administrator",
    "anonymous",
    "guest",
    "moderator",
    "quoridor",
    "root",
    "server",
    "system",
)
"""Names nobody may register (compared by key, so their look-alikes neither)."""
RESERVED_PARTS = ("computer",)
"""Nor any name containing one of these."""
GUEST_NAMES = ("anonymous", "guest")
"""Reserved names a guest may go by all the same: they say what a guest is."""
GUEST_MARK = " (guest)"
"""Added to a guest's name that would pass for the server's, the computer's or an account's."""


class NameRefused(ValueError):
    """Why a name cannot be registered (the message is for the person choosing it)."""


def normalise(name: str) -> str:
    return unicodedata.normalize("NFKC", name).strip()


def check(name: str) -> str:
    """The name as it will be shown (NFKC), or NameRefused saying what is wrong with it."""
    shown = normalise(name)
    if not MIN_LENGTH <= len(shown) <= MAX_LENGTH:
        raise NameRefused(f"a name has {MIN_LENGTH} to {MAX_LENGTH} characters")
    for char in shown:
        if not (char in JOINERS or _is_letter_or_digit(char)):
            what = unicodedata.name(char, hex(ord(char))).lower()
            shown_char = f"“{char}” " if char.isprintable() and not char.isspace() else ""
            raise NameRefused(
                f"a name has only letters, digits and {' '.join(JOINERS)}; not {shown_char}({what})"
            )
    if shown[0] in JOINERS or shown[-1] in JOINERS:
        raise NameRefused(f"a name starts and ends with a letter or digit, not {JOINERS}")
    if confusables.is_dangerous(shown):
        raise NameRefused("a name may not mix scripts with look-alike letters")
    if reserved(shown):
        raise NameRefused("that name is reserved")
    return shown


def reserved(name: str, guest: bool = False) -> bool:
    """Whether ``name`` is, or looks like, a reserved one (or contains "computer"); for a
    ``guest``'s name, leaving out those that only say it is a guest ("Guest")."""
    keys = (name_key(name), name_look(name), loose_key(name))
    names = _guest_reserved_keys() if guest else _reserved_keys()
    return any(k in names or any(p in k for p in _reserved_parts()) for k in keys)


@lru_cache(maxsize=4096)  # every hello asks; 10 to 35 us each to work out (interpreted)
def guest_name(name: str) -> str:
    """A guest's (cleaned) name as shown: marked as a guest's if it would pass for the
    server's or the computer's ("admin", "Computer L5")."""
    return name + GUEST_MARK if reserved(name, guest=True) else name


@lru_cache(maxsize=4096)  # every guest's hello on a server with accounts asks
def could_be_account(name: str) -> bool:
    """Whether an account may have this (cleaned) name, or one it looks like: a name of
    characters or a length no account has needs no look in the database. (Look-alike
    letters mixed in are no reason: "\u0430lice" with a Cyrillic a passes for "alice".)"""
    shown = normalise(name)
    return (
        MIN_LENGTH <= len(shown) <= MAX_LENGTH
        and all(char in JOINERS or _is_letter_or_digit(char) for char in shown)
        and shown[0] not in JOINERS
        and shown[-1] not in JOINERS
    )


def guest_of_account(name: str) -> str:
    """The name of a guest going by an account's name, marked: a guest "alice" passed
    for the registered alice in the lobby and in her rooms (an outside review)."""
    return name + GUEST_MARK


def name_key(name: str) -> str:
    """What makes two names the same: case and look-alike characters folded away."""
    folded = unicodedata.normalize("NFKC", normalise(name).casefold())
    return "".join(_representative(char) for char in folded)


def name_look(name: str) -> str:
    """The name's look-alikes folded as shown, then its case."""
    shown = "".join(_representative(char) for char in normalise(name))
    return name_key(shown)


def loose_key(name: str) -> str:
    """Each character as the smallest representative of its forms in any case: a name
    and its look-alikes in every mix of case ("QUORlDOR", "quoridor") share it."""
    forms = ((char.casefold(), char.lower(), char.upper()) for char in normalise(name))
    return "".join(min(_representatives(form) for form in each) for each in forms)


def _representatives(text: str) -> str:
    return "".join(_representative(char) for char in text)


def _is_letter_or_digit(char: str) -> bool:
    category = unicodedata.category(char)
    return category[0] == "L" or category == "Nd" or category[0] == "M"


@cache
def _representative(char: str) -> str:
    """The smallest code point among ``char``'s look-alikes (ASCII where there is one: "l",
    "I" and "1" all become "1"). The data lists, for most characters, the prototype they
    imitate, and for a prototype everything imitating it: two steps reach the whole set."""
    alikes = {char}
    for known in _alikes(char):
        alikes |= _alikes(known) | {known}
    return min(alikes)


def _alikes(char: str) -> set[str]:
    """The single characters the confusables data lists as looking like ``char``."""
    found = confusables.confusables_data.get(char) or []
    glyphs = (entry["c"].strip("\u200e\u200f") for entry in found)
    return {glyph for glyph in glyphs if len(glyph) == 1}


@cache
def _reserved_keys() -> frozenset[str]:
    return frozenset(key for name in RESERVED for key in _keys(name))


@cache
def _guest_reserved_keys() -> frozenset[str]:
    return _reserved_keys() - {key for name in GUEST_NAMES for key in _keys(name)}


@cache
def _reserved_parts() -> tuple[str, ...]:
    return tuple(key for part in RESERVED_PARTS for key in _keys(part))


def _keys(name: str) -> tuple[str, str]:
    return name_key(name), loose_key(name)
