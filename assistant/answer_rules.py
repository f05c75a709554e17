"""Rules that refuse what the fitted answerability model would answer (`Answerability.decide`).

Each is a plain test a user can read in the trace, and each earned its place on the manuals set:

- `unknown_term`: a short English question names a rare term the library never mentions ("MusicXML");
- `absent_asked`: a question whether something exists or a tool can do something names a word the
  library never has, rare or not ("is there an android app …");
- `other_document`: the question names a document by a rare word of its title ("DocBook") and the
  best sentence comes from another document ("Is there a dark mode for the DocBook webhelp output?"
  answered from the AMC manual's "mode" setting): what the user asked about is not what was found.

The first two apply to questions of at most `TERM_RULE_WORDS` words (a long message, such as a
patient's story, names many things the answer need not).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.memory import ADDED
from assistant.unknown_terms import absent_asked, unknown_terms
from knowledge.types import Hit
from knowledge.vocabulary import zipf

TERM_RULE_WORDS = 15
TITLE_ZIPF = 3.0  # a title word rarer than this in English and German names its document ("DocBook", "LilyPond")
_TITLE_WORD = re.compile(r"[^\W\d_]{4,}")


def refusal(question: str, vocabulary: Sequence[str] | None, hits: Sequence[Hit], candidates: Sequence[Hit],
            best_source: str | None) -> tuple[str, dict[str, float]]:  # fmt: skip
    """The first rule that refuses (its reason, or ""), and what each rule found (for the trace)."""
    short = len(question.split()) <= TERM_RULE_WORDS
    terms = unknown_terms(question, vocabulary) if short else []
    absent = absent_asked(question, vocabulary, [h.chunk_text for h in hits[:5]]) if short else []
    other = other_document(question, list(hits) + list(candidates), best_source)
    found = {"unknown_terms": float(len(terms)), "absent_asked": float(len(absent)), "other_document": float(other)}
    reason = "absent_asked" if absent else "unknown_term" if terms else "other_document" if other else ""
    return reason, found


def warm_up() -> None:
    """Read the word-frequency lists the rules consult (~0.5 s): at start, not in the first answer."""
    zipf("hark")
    unknown_terms("What is a harkening?", ["hark"])  # the English list and its common words


def other_document(question: str, pool: Sequence[Hit], best_source: str | None) -> bool:
    """The question names one or more documents of `pool` by a rare word of their title, and
    `best_source` is none of them."""
    if not best_source:
        return False
    # the user's words: what a follow-up rewrite added in parentheses ("… (Project Aurelia)?") is
    # the conversation's topic, not a document the question asks about
    asked = {w.lower() for w in _TITLE_WORD.findall(ADDED.sub(" ", question))}
    titles = {h.source_path: {w.lower() for w in _TITLE_WORD.findall(h.title or "")} for h in pool}
    named = {src for src, words in titles.items() for w in words & asked if zipf(w) < TITLE_ZIPF}
    return bool(named) and best_source not in named
