""""What about X?" / "and for X?": the previous question asked again with X in the place of what it
was said of ("How do I install R on Linux?" + "and for Windows?" → "How do I install R for Windows?").

X takes, in this order: the place of the previous question's words it starts like ("the maximum number
of pages" for "the maximum number of students per test"); of the phrase with the same preposition
("for simple ones" for "for multiple questions"); of its last determiner phrase when X starts with a
determiner ("the TeX colors" for "the standard X11 colors"); of the phrase holding X's last word
("system users" for "ordinary user accounts"); of the object of its last prepositional phrase that
names nothing ("smoking" for "late payment"), else of its last name when X is a name
("Windows" for "Linux"), else of its last determiner phrase after a verb ("parallel builds" for "the
debugging symbols", not for the subject of "How is the course assessed?"). Otherwise X is added at the end.
"ones" in X stands for the last word it replaces ("for simple ones": "for simple questions"). What a rewrite added in parentheses
("… (INXS)?") is dropped from the previous question first.
"""

from __future__ import annotations

from assistant.memory import ADDED

PREPOSITIONS = frozenset(
    "for on in with under from to of at about into by through via per over during after before without "
    "inside between against across like than".split()
)
_DETERMINERS = frozenset("the a an this that these those my your our its their".split())
# the words before a subject ("How is the course assessed?"): a determiner phrase after them is no object
AUXILIARIES = frozenset("is are was were do does did can could will would should has have had may might must".split())
# words that open a clause: a phrase ends before them ("… the first note get | if I give none")
_CLAUSE = frozenset("if when while because unless whether although where".split())
_SPAN_ENDS = PREPOSITIONS | _CLAUSE
_NOT_HEADS = PREPOSITIONS | _DETERMINERS  # a replaced phrase's last word that "ones" cannot stand for
_NOT_VERBS = AUXILIARIES | frozenset("how what which who whom whose when where why and or".split())


def _named(words: list[str]) -> bool:
    return any(w[:1].isupper() and w != "I" for w in words)


def _spans(words: list[str], starts: frozenset[str]) -> list[tuple[int, int]]:
    """(start, end) of the runs that open with a word of `starts` and reach the next preposition (or a
    word opening a clause)."""
    out = []
    for i, w in enumerate(words):
        if w.lower() in starts:
            end = next((j for j in range(i + 1, len(words)) if words[j].lower() in _SPAN_ENDS), len(words))
            if end > i + 1:
                out.append((i, end))
    return out


def swap(previous: str, rest: str) -> str:
    prev = ADDED.sub("", previous).strip().rstrip("?.! ").split()
    new = rest.strip().rstrip("?.! ").split()
    if not prev or not new:
        return f"{' '.join(prev)} {' '.join(new)}?".strip()
    lower = [w.lower() for w in prev]
    for k in range(len(new), 1, -1):  # the words it starts like
        head = [w.lower() for w in new[:k]]
        at = next((i for i in range(len(prev) - k + 1) if lower[i : i + k] == head), None)
        if at is not None:
            end = next((s for s, e in _spans(prev, PREPOSITIONS) if s >= at + k and _named(prev[s:e])), len(prev))
            return _put(prev, at, end, new)
    phrases = _spans(prev, PREPOSITIONS)
    if new[0].lower() in PREPOSITIONS:
        same = [p for p in phrases if lower[p[0]] == new[0].lower()]
        plain = [p for p in phrases if not _named(prev[p[0] + 1 : p[1]])]
        pick = (same or plain or phrases or [(len(prev), len(prev))])[-1]
        return _put(prev, pick[0], pick[1], new)
    if new[0].lower() in _DETERMINERS:
        dets = _spans(prev, _DETERMINERS)
        if dets:
            s, e = dets[-1]
            return _put(prev, s, e, new)
    shared = _shared_head(prev, new)
    if shared is not None:
        return _put(prev, *shared, new)
    plain = [p for p in phrases if not _named(prev[p[0] + 1 : p[1]])]
    if plain:
        s, e = plain[-1]
        return _put(prev, s + 1, e, new)
    if _named(new):
        names = [i for i, w in enumerate(prev) if i and w[:1].isupper() and w != "I"]
        if names:
            return _put(prev, names[-1], names[-1] + 1, new)
    dets = [(s, e) for s, e in _spans(prev, _DETERMINERS) if s and prev[s - 1].lower() not in _NOT_VERBS]
    if dets:  # "which tag keeps the debugging symbols" + "parallel builds": the object's place, not a subject's
        s, e = dets[-1]
        return _put(prev, s, e, new)
    return _join(prev, new, [])


def _shared_head(prev: list[str], new: list[str]) -> tuple[int, int] | None:
    """Where X goes when its last word is one of the previous question's, as a word of a phrase there
    ("system users" beside "… give ordinary user accounts"): that word's phrase, from as many words before
    it as X has before its own (plain lower-case words only) to the next small word."""
    last = _stem(new[-1])
    at = next((i for i in range(len(prev) - 1, 0, -1) if _stem(prev[i]) == last), None)
    if at is None or len(new) < 2 or prev[at - 1].lower() in _NOT_VERBS | _NOT_HEADS:
        return None
    start = at - (len(new) - 1)
    if start < 1 or any(w.lower() in _NOT_VERBS | _NOT_HEADS or not w.islower() for w in prev[start:at]):
        return None
    end = next((j for j in range(at + 1, len(prev)) if prev[j].lower() in _SPAN_ENDS | _NOT_VERBS or not prev[j].islower()),
               len(prev))
    return start, end


def _stem(word: str) -> str:
    w = word.lower().strip("?.!,;:")
    return w[:-1] if w.endswith("s") and len(w) > 3 else w


def _put(prev: list[str], start: int, end: int, new: list[str]) -> str:
    """`prev` with `new` in the place of its words start:end; "ones" in `new` stands for their last word
    ("for simple ones" in the place of "for multiple questions": "for simple questions")."""
    head = prev[end - 1] if end - start >= 2 and prev[end - 1].lower() not in _NOT_HEADS else None
    if head is not None:
        new = [head if i and (w.lower() == "ones" or (w.lower() == "one" and new[i - 1].lower() not in PREPOSITIONS))
               else w for i, w in enumerate(new)]
    return _join(prev[:start], new, prev[end:])


def _join(*parts: list[str]) -> str:
    return " ".join(w for part in parts for w in part) + "?"
