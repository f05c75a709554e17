"""Whether a question names its own subject, or leans on the conversation for it.

Used by follow-up detection (`assistant.rewrite`): a question that names its subject ("Did Terry
Bradshaw give back to his alma mater?", "Did burlesque stay true to its origins?") is not rewritten,
whatever pronoun it holds.
"""

from __future__ import annotations

import re

from assistant.llm.words import content_words
from assistant.memory import Exchange
from assistant.referent import names_in
from assistant.swap import AUXILIARIES

PRONOUN = re.compile(r"\b(it|its|they|them|their|theirs|those|these|he|him|his|she|her|hers)\b", re.I)
NEW_SUBJECT_LETTERS = 3  # a yes/no question's new subject word this long (stemmed) is its own subject


def new_subject(q: str, exchanges: list[Exchange]) -> bool:
    """A yes/no question whose subject, the first content word after its verb, the conversation has
    not used ("Are cats allowed?" after questions about a course): it stands on its own. ("Did the
    band tour?" after talk of the band leans on it.)"""
    words = q.split()
    if not words or words[0].lower().strip(",.?!") not in AUXILIARIES:
        return False
    own = content_words(" ".join(words[1:]))
    said = set(content_words(" ".join(f"{e.user} {e.query} {e.assistant}" for e in exchanges)))
    return bool(own) and own[0] not in said and len(own[0]) >= NEW_SUBJECT_LETTERS


def has_own_subject(q: str) -> bool:
    """A question names its own subject when a name comes before its first pronoun ("Marie Curie and
    her prizes": her is Marie Curie; "When did she go to SNL?": she is someone else)."""
    m = PRONOUN.search(q)
    toks = q.split()
    # the subject's place: the first word, or the next one ("Did Terry Bradshaw …"), or the one after
    # an auxiliary ("What did Julia …"); "how do I get SVG from it?" names an object, not a subject
    at = [0, 1] + ([2] if len(toks) > 2 and toks[1].lower() in AUXILIARIES else [])
    before = q[: m.start()] if m else q
    if any(" ".join(toks[i:]).startswith(n) for n in names_in(before, set()) for i in at if i < len(toks)):
        return True
    return bool(m) and m.group(0).lower() in _THING_POSSESSIVE and _noun_subject(before)


_THING_POSSESSIVE = ("its", "their", "theirs")
_DETERMINERS = frozenset("the a an".split())


def _noun_subject(before: str) -> bool:
    """A yes/no question that opens with its own noun subject before a thing's possessive ("Did
    burlesque stay true to its origins?": its is burlesque's). Not his/her: "Did an injury end his
    career?" is about someone else."""
    toks = [t.lower().strip(",.?!") for t in before.split()]
    if len(toks) < 2 or toks[0] not in AUXILIARIES:
        return False
    head = toks[2] if toks[1] in _DETERMINERS and len(toks) > 2 else toks[1]
    return bool(content_words(head)) and not PRONOUN.fullmatch(head)
