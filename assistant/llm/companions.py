"""Which sentences go with the extractive answer's best one, and in what order: a close sentence that
defines what a "what is X" question asks about goes first; a best sentence that refers back ("This
tag says …", "You can set this value …") gets the sentence it refers to in front of it; a short
value line right after it ("Defaults to 300.") follows it; a reference entry's description that
speaks of "this parameter" is prefixed with the entry's name; a later context block's sentence that
holds far more of the question than the best ones goes first (`later_match`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.llm.asked import defines
from assistant.llm.sentence_filters import MIN_WORDS, code_like, is_heading, value_row
from assistant.llm.sentence_rank import ScoredSentence
from assistant.llm.words import content_words
from knowledge.sentences import NAME_LINE, ends_sentence, whole_sentences
from knowledge.types import SECTION_SEP, Hit

FOLLOW_ON_WORDS = 8  # a sentence this short right after the best one finishes it
# a later block's sentence goes first when it holds this share more of the question's words than each of the three
# best ranked ones (0.4: the select halves unchanged, 0.3 lost a cited page there; manuals conversations +1, +1)
LATER_COVERAGE = 0.4

_ANAPHOR = re.compile(r"^\W*(this|these|that|those|it|its|they|their|such|thus|hence|otherwise|then|likewise|"
                      r"similarly|in (this|that|such a) case|the (latter|former))\b", re.I)
# "You can set this value to 0.6 to …", "To use this option, …": a sentence naming "this value" in its
# first words is about the option or value the sentence before it names
_THING = (r"(value|values|option|options|setting|variable|parameter|file|command|flag|switch|field|threshold|ratio|"
          r"number|limit|range|ranges)\b")
# … or anywhere after a preposition: "… choose UIDs for user accounts in this range, …"
_NAMES_BACK = re.compile(r"^\W*(?:[\w'’-]+\s+){1,4}?(this|that|these|those) " + _THING + r"|"
                         r"\b(in|to|from|of|within|outside) (this|these) " + _THING, re.I)
# a file's name: "ly/property-init.ly", "adduser.conf" (not "e.g.")
_FILE_NAME = re.compile(r"(?<![\w.])[\w/-]*[\w-]{2,}\.[a-z]{1,5}\b(?!\.\w)")
_FILE_BACK = re.compile(r"^\W*(?:[\w'’-]+\s+){0,4}?(this|that) file\b", re.I)
FILE_LOOKBACK = 3  # sentences back in which "this file" finds the file it names


def definition_first(question: str, ranked: Sequence[ScoredSentence], relative: float) -> Sequence[ScoredSentence]:
    """A "what is X" question is answered by the sentence that defines X: one scored close to the
    best (`relative` of its score) goes first."""
    if defines(question, ranked[0].text):
        return ranked
    found = next((s for s in ranked[1:] if s.score >= ranked[0].score * relative and defines(question, s.text)), None)
    return ranked if found is None else [found, *(s for s in ranked if s is not found)]


def follow_on(best: ScoredSentence, ranked: Sequence[ScoredSentence]) -> ScoredSentence | None:
    """The short sentence right after `best` in its chunk that states a value ("Defaults to 300.",
    "The default is none."): it finishes what `best` says, so it comes second whatever its own score."""
    nxt = next((s for s in ranked if s.block == best.block and s.position == best.position + 1), None)
    if nxt is None or len(nxt.text.split()) > FOLLOW_ON_WORDS:
        return None
    return nxt if value_row(nxt.text) or (ends_sentence(nxt.text) and re.search(r"\bdefaults?\b", nxt.text, re.I)) else None


# a reference entry's description speaks of its entry as "this parameter", "the template" …, or
# of its value: "If zero (the default), text is adjusted …"
_ENTRY_REF = re.compile(r"\b(this|the) (parameter|template|attribute[- ]set|processing instruction|PI|element|option|"
                        r"function|macro|variable|setting|property|command)\b|"
                        r"^(if|when|unless) (it is |its value is |the value is )?(zero|non-?zero|true|false|set|unset|"
                        r"empty|blank|[01])\b", re.I)  # fmt: skip
_ENTRY = re.compile(r"^[\w\\][\w.:@*-]*(\(\))?$")


def entry_named(best: ScoredSentence) -> str:
    """The name of the reference entry `best` describes as "this parameter" or by its value ("If
    zero, …"): the last part of its section path, when that is a name like "highlight.source",
    unless the sentence names it."""
    entry = best.section.rsplit(SECTION_SEP, 1)[-1].strip()
    if not _ENTRY_REF.search(best.text) or not _ENTRY.match(entry) or not re.search(r"[._\\()-]", entry):
        return ""
    return "" if entry in best.text else entry


def antecedent(best: ScoredSentence, ranked: Sequence[ScoredSentence]) -> ScoredSentence | None:
    """The sentence right before `best` in its chunk when `best` opens by referring back to it, or the
    name line (with its synopsis) of the reference page whose description `best` opens."""
    # a reference page's description ("Sets the path to …") is about the name line above it
    names = [s for s in ranked if s.block == best.block and s.position < best.position and NAME_LINE.match(s.text)]
    right_before = next((s for s in ranked if s.block == best.block and s.position == best.position - 1), None)
    # "That's the purpose of the bibliography.collection parameter." is about the sentence right before it
    leans = _ANAPHOR.match(best.text) is not None and right_before is not None and not NAME_LINE.match(right_before.text)
    if names and not NAME_LINE.match(best.text) and not leans:
        return max(names, key=lambda s: s.position)
    if not (_ANAPHOR.match(best.text) or (_NAMES_BACK.search(best.text) and not entry_named(best))):
        return None
    back = 1
    if _FILE_BACK.match(best.text):  # "Open ly/property-init.ly … The one you use for .ly files … This file …"
        named = [s for s in ranked if s.block == best.block and best.position - FILE_LOOKBACK <= s.position < best.position
                 and _FILE_NAME.search(s.text)]  # fmt: skip
        back = best.position - max(s.position for s in named) if named else 1
    before = next((s for s in ranked if s.block == best.block and s.position == best.position - back), None)
    if before is None or len(before.text.split()) > 35 or "•" in before.text or before.text.count(";") > 1:
        return None  # a list or a run of items before it: not what "this" names
    return before


def later_match(q_words: set[str], later: Sequence[Hit], first_block: int, ranked: list[ScoredSentence]) -> list[ScoredSentence]:
    """`ranked` with a sentence of the `later` context blocks (numbered from `first_block`) in front when it
    holds `LATER_COVERAGE` more of the question's words than each of the three best ranked sentences: a
    definition list's entry whose chunk ranks low ("nostrip: This tag means that the debugging symbols
    should not be stripped from the binary …" for "Which DEB_BUILD_OPTIONS tag keeps the debugging symbols?")."""
    if not ranked or not q_words:
        return ranked
    best = max(s.coverage for s in ranked[:3])  # the sentences about to be said
    found: ScoredSentence | None = None
    for block, hit in enumerate(later, start=first_block):
        # no sentence holds more of the question than its whole chunk does: most chunks are passed over unread
        whole = set(content_words(f"{hit.section} {hit.chunk_text}", name_parts=True)) & q_words
        if len(whole) / len(q_words) < best + LATER_COVERAGE:
            continue
        for pos, sent in enumerate(whole_sentences(hit.chunk_text)):
            if code_like(sent) or len(sent.split()) < MIN_WORDS or is_heading(sent):
                continue
            cov = len(set(content_words(f"{hit.section} {sent}", name_parts=True)) & q_words) / len(q_words)
            if cov >= best + LATER_COVERAGE and (found is None or cov > found.coverage):
                found = ScoredSentence(sent, block, pos, ranked[0].score + 1e-6, hit.source_path,
                                       heading=hit.section, section=hit.section, coverage=cov)
    return [found, *ranked] if found else ranked
