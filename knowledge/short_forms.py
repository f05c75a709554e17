"""Words people shorten when they type a question ("max number of students", "which config file",
"the pkg name") and their full forms, which manuals write ("The maximum number of students per test
is limited to 4,095"). Full-text search gets the full form of every such word in a query besides the word
itself; the offline answer's word matching counts the two as one word (`canonical`).

Only shortenings with one reading in a manual are listed ("conf", a file's extension, and "sec",
section or second, are not); "min" is "minimum" more often than "minutes" there, and a search that
also looks for "minimum" costs little when it is not.
"""

from __future__ import annotations

import re

# short form → full form; a word's plural is listed where people shorten it too
SHORT_FORMS: dict[str, str] = {
    "max": "maximum", "min": "minimum", "config": "configuration", "configs": "configurations",
    "cfg": "configuration", "info": "information", "dir": "directory",
    "dirs": "directories", "pkg": "package", "pkgs": "packages", "env": "environment", "num": "number",
    "approx": "approximately", "docs": "documentation", "repo": "repository", "repos": "repositories",
    "lib": "library", "libs": "libraries", "arg": "argument", "args": "arguments", "params": "parameters",
    "prefs": "preferences", "msg": "message", "msgs": "messages", "auth": "authentication",
    "app": "application", "apps": "applications", "secs": "seconds", "ver": "version",
    "img": "image", "imgs": "images", "spec": "specification", "specs": "specifications",
    "req": "requirement", "reqs": "requirements", "attr": "attribute", "attrs": "attributes",
    "char": "character", "chars": "characters",
    "abbrev": "abbreviation", "admin": "administrator", "admins": "administrators",
}  # fmt: skip
_WORD = re.compile(r"\w+", re.UNICODE)


def canonical(word: str) -> str:
    """A lower-cased word's full form when it is a listed shortening ("max" → "maximum"), else itself."""
    return SHORT_FORMS.get(word, word)


def with_full_forms(query: str) -> str:
    """`query` with the full form of each listed shortening it holds appended ("max students" → "max
    students maximum"), for full-text search only. Not the other way: a manual that writes "max"
    for "maximum" writes it in code ("toc.max.depth"), where "maximum" asked finds its prose."""
    words = {w.lower() for w in _WORD.findall(query)}
    extra = [full for w in sorted(words) if (full := SHORT_FORMS.get(w)) and full not in words]
    return f"{query} {' '.join(extra)}" if extra else query
