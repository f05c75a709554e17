"""What a follow-up refers to: the salient noun phrase of the conversation so far.

No model, no tagger: noun phrases are found by their shape, and ranked by how often and how recently
the conversation mentions them.

- names: runs of capitalised words and acronyms ("Frank Zappa", "CRAN", "Zappa and the Mothers of
  Invention"), joined by at most two small words ("of", "the", "and" …). A single capitalised word
  at the start of a sentence counts only when it is an acronym or the conversation also capitalises
  it elsewhere ("In", "Interest" at a list item's start are not names); a manual's terms count as
  names ("\\tuplet", "generate.manifest", "autoBeamOff", "q()");
- phrases of the person's questions: the subject of "what is X" ("the penalties for late payment"), what a
  how-to question acts on ("turn off automatic beams"), what a which-question asks about ("which paper
  type does …"), the subject of a do-question and other determiner phrases ("the CRAN mirror", "an R
  session"; "did the band tour" → "the band").

Each candidate scores, per exchange, `QUESTION` when the person's side (the question or the query
Hark made of it) mentions it and `ANSWER` when the answer does, times `RECENCY ** age` (age 0: the last
exchange); a mention of only some of a name's words counts for that share, and a name that is part of a
longer one counts for the longer one ("Darin", "Bobby Darin"); older exchanges folded into the memory's
summary count `SUMMARY` (and its names are candidates too). Names get `NAME` on top. The subject (the
first name of the opening question, or of the summary once the memory folded it) gets `TOPIC`, times
`RECENCY ** age` of the last question that spoke of it: a subject the person has left fades. The last
question's focus moves the conversation on: a phrase of it that holds a name gets that name's score and
`TOPIC`; what it acts on or asks about ranks above everything it names; the terms of the answer to a
"which parameter …?" get `TOPIC`. Ties go to the earliest mention. The weights were chosen on the select
half of the followups set (`launch.py eval followups --half select`: the highest resolution + precision
with left alone ≥ 0.95).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from assistant.llm.words import STOP, content_words
from assistant.memory import ADDED, CITATION, Exchange

QUESTION, ANSWER, SUMMARY, NAME, RECENCY, TOPIC = 2.0, 1.0, 0.3, 1.0, 0.75, 12.0

_TOKEN = re.compile(r"[\w][\w'’.&-]*|[^\w\s]")
_SENTENCE = re.compile(r"(?<=[.!?;:])(?<!\b[A-Z]\.)\s+|\n+")  # not after an initial ("William H. Seward")
_JOIN = {"of", "the", "and", "de", "la", "le", "von", "van", "der", "del", "da", "du", "&", "for", "a"}
_NOT_NAMES = set(
    "january february march april may june july august september october november december monday tuesday "
    "wednesday thursday friday saturday sunday i i'm tell yes no ok okay hark user assistant "
    # words that open a sentence before a name ("During Vicente Fernández's …")
    "during after before since despite following although though while meanwhile however later upon".split()
)
_PRONOUNS = re.compile(r"\b(it|its|they|them|their|he|him|his|she|her|this|that|these|those)\b", re.I)
_COPULA = re.compile(r"^\s*(what|who|which)\s+(is|are|was|were)\s+(?P<np>.+?)[\s?.!]*$", re.I)
COPULA_WORDS = 8  # the longest subject of "what is X" taken for a phrase
_DET = re.compile(r"\b(?P<np>(the|a|an|this|my|your|our)\s+[\w'’.-]+(\s+[\w'’.-]+){0,3})", re.I)
_DO = re.compile(r"^\s*((what|when|where|why|how|which|who)\s+\w*\s*)?(do|does|did|can|could|will|would|should)\s+",
                 re.I)  # fmt: skip
_JOINED = re.compile(r"\s(and|&)\s", re.I)  # two names joined: "Lorde and McDonald"
_HE_SHE = re.compile(r"\b(he|him|his|she|her|hers)\b", re.I)
# "how do I turn off automatic beams in LilyPond?": the thing acted on, up to a small word
_HOWTO = re.compile(r"^\s*(how|where|when|why)\s+(do|can|could|should|would|will|must)\s+(i|we|you)\s+[\w'-]+"
                    r"(\s+(off|on|up|out|back|down|away|in))?\s+(?P<np>[^?.!,;:]+)", re.I)  # fmt: skip
_WHICH_NOUN = re.compile(r"^\s*which\s+(?P<np>[\w.-]+(\s+[\w.-]+){1,2}?)\s+(does|do|did|is|are|was|were|should|must|can|"
                         r"will|would)\b", re.I)  # fmt: skip
# "how many lines of history does interactive asy keep?": what is counted
_HOW_MANY = re.compile(r"^\s*how\s+(many|much)\s+(?P<np>[\w'’.-]+(\s+[\w'’.-]+){0,3}?)\s+(does|do|did|can|could|will|would|"
                       r"should|must|is|are|was|were|has|have|had)\b", re.I)  # fmt: skip
_ENDS = frozenset("in on at for from with by to of into so and or when while if that without using via as than".split())
# terms of a manual: \tuplet, generate.manifest, autoBeamOff, q()
_TERM = re.compile(r"(?<![\w\\])(\\[A-Za-z]+|[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)+|[a-z]+[A-Z][A-Za-z]*|[A-Za-z]\w*\(\))")
# a question that asks for a name ("which parameter …?"): its answer's terms are what follows is about
_WHICH = re.compile(r"^\s*(which|what)\s+([\w.-]+\s+){0,3}(parameter|option|tag|command|program|variable|file|"
                    r"function|package|module|keyword|setting|font|key|directive|field|element)s?\b", re.I)  # fmt: skip


@dataclass(frozen=True)
class Candidate:
    text: str  # as first written ("Frank Zappa", "the CRAN mirror")
    score: float
    name: bool  # a capitalised name, not a phrase of common words
    acted_on: bool = False  # what the last question acts on or asks about (`focus_of`)


def _capitalised(tok: str) -> bool:
    return tok[:1].isupper() or (tok[:1].isdigit() and any(c.isupper() for c in tok))


def _acronym(tok: str) -> bool:
    return sum(c.isupper() for c in tok) >= 2 or (len(tok) == 1 and tok.isupper() and tok not in ("I", "A"))


def _sentences(text: str) -> list[str]:
    text = CITATION.sub("", text or "")
    return [s.strip(" -*•\t") for s in _SENTENCE.split(text) if s.strip(" -*•\t")]


def mid_capitals(texts: list[str]) -> set[str]:
    """Words written capitalised somewhere other than at a sentence's start."""
    return set().union(*(_mid_capitals(t) for t in texts))


@lru_cache(maxsize=1024)
def _mid_capitals(text: str) -> frozenset[str]:
    out: set[str] = set()
    for sent in _sentences(text):
        toks = _TOKEN.findall(sent)
        out.update(t.lower() for t in toks[1:] if _capitalised(t))
    return frozenset(out)


def names_in(text: str, known: set[str]) -> list[str]:
    """The names in `text` (see the module docstring); `known`: `mid_capitals` of the conversation."""
    return [name for name, alone in _spans(text) if not alone or _acronym(name) or name.lower() in known]


@lru_cache(maxsize=1024)
def _spans(text: str) -> tuple[tuple[str, bool], ...]:
    """(name, a single capitalised word at a sentence's start) for each name-shaped run of `text`."""
    out: list[tuple[str, bool]] = []
    for sent in _sentences(text):
        toks = _TOKEN.findall(sent)
        i = 0
        while i < len(toks):
            if not _capitalised(toks[i]):
                i += 1
                continue
            j, end = i + 1, i + 1  # extend over capitalised words and at most two joining words
            while j < len(toks) and not re.search(r"['’]s$", toks[j - 1]):  # a possessive ends a name
                if _capitalised(toks[j]):
                    end = j = j + 1
                elif toks[j].lower() in _JOIN and j - end < 2:
                    j += 1
                else:
                    break
            span = [t.rstrip(".") for t in toks[i:end]]
            while span and (span[0].lower() in STOP or span[0].lower() in _NOT_NAMES):
                if span[0] == "The" and i > 0 and len(span) > 1:
                    break  # "The Beatles" in mid-sentence: a name's own article
                span = span[1:]
            span = [re.sub(r"['’]s$", "", t) for t in span]
            if span and not (len(span) == 1 and span[0].lower() in _NOT_NAMES):
                name = " ".join(span)
                alone = len(span) == 1 and toks[i].rstrip(".") == span[0] and i == 0
                if all(n != name for n, _ in out):
                    out.append((name, alone))
            i = end
    return tuple(out)


def terms_in(text: str) -> list[str]:
    """A manual's terms: commands, parameters, functions ("\\tuplet", "generate.manifest", "q()")."""
    out: list[str] = []
    for m in _TERM.finditer(text or ""):
        term = m.group(1).rstrip(".")
        if (len(term) > 4 or term.endswith("()")) and term.lower() not in ("e.g", "i.e") and term not in out:
            out.append(term)
    return out


def focus_of(question: str) -> str:
    """What a how-to question acts on ("automatic beams"), or what a which-question asks about
    ("which paper type does …" → "paper type"); '' when it is neither."""
    q = " ".join(CITATION.sub("", question or "").split())
    which = _WHICH_NOUN.match(q) or _HOW_MANY.match(q)
    if which:
        return which.group("np")
    do = _DO.match(q)
    subject = _DET.match(q, do.end()) if do else None
    if subject:  # "how long should the single line synopsis of a package be?"
        return _cut(subject.group("np").split(), do=True)
    m = _HOWTO.match(q)
    if not m:
        return ""
    words = m.group("np").split()
    cut = next((k for k, w in enumerate(words[1:], 1) if w.lower() in _ENDS), len(words))
    return " ".join(words[: min(cut, 5)])


def copula_subject(question: str) -> str:
    """X of "what is X?" without a closing phrase that names where ("the default line width of a pen"
    of "… of a pen in Asymptote"); '' when it is no such question or X is long or a pronoun."""
    m = _COPULA.match(" ".join(CITATION.sub("", question or "").split()))
    if not m or _PRONOUNS.search(m.group("np")):
        return ""
    words = m.group("np").split()
    if len(words) > 2 and words[-2].lower() in ("in", "on", "for", "with", "under") and words[-1][:1].isupper():
        words = words[:-2]  # "… in Asymptote"
    return " ".join(words) if len(words) <= COPULA_WORDS else ""


def phrases_in(question: str) -> list[str]:
    """Noun phrases of a person's question (see the module docstring)."""
    q = " ".join(CITATION.sub("", question or "").split())
    out: list[str] = [focus_of(q)] if focus_of(q) else []
    subject = copula_subject(q)
    if subject:
        out.append(subject)
    do = _DO.match(q)
    for m in _DET.finditer(q):
        words = _cut(m.group("np").split(), do=bool(do) and m.start() == do.end()).split()
        if len(words) >= 2 and words[0].lower() not in ("this",) and not _PRONOUNS.fullmatch(words[1]):
            np = " ".join(words)
            if np not in out and not any(np.lower() in o.lower() for o in out):
                out.append(np)
    return out


def _cut(words: list[str], *, do: bool = False) -> str:
    """A determiner phrase up to its first small word; after "did/does" its last word is taken for
    the verb ("did the band tour" → "the band")."""
    cut = next((k for k, w in enumerate(words[1:], 1) if w.lower() in STOP or w.lower() in _ENDS), None)
    words = words[:cut]
    if do and cut is None and len(words) > 2:
        words = words[:-1]
    words[-1] = words[-1].rstrip("?.!,;:")
    return " ".join(words)


@lru_cache(maxsize=4096)
def _key(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


def _mention(words: frozenset[str], bag: frozenset[str]) -> float:
    return len(words & bag) / len(words) if words else 0.0


def salient(exchanges: list[Exchange], summary: str = "") -> list[Candidate]:
    """The conversation's candidate referents, most salient first."""
    return list(_salient(tuple((ex.user, ex.query, ex.assistant) for ex in exchanges), summary))


@lru_cache(maxsize=64)  # a rewrite asks several times about the same conversation
def _salient(said: tuple[tuple[str, str, str], ...], summary: str) -> tuple[Candidate, ...]:
    exchanges = [Exchange(user=u, assistant=a, query=q) for u, q, a in said]
    texts = [t for ex in exchanges for t in (ex.user, ex.query, ex.assistant)] + [summary]
    known = mid_capitals(texts)
    found: dict[frozenset[str], tuple[str, bool, int]] = {}  # key → (text, name, first position)
    for name in names_in(summary, known):  # what the memory folded away: the oldest mentions
        found.setdefault(_key(name), (name, True, -1))
    for n, ex in enumerate(exchanges):
        asked = ex.user if ex.query == ex.user else f"{ex.user}. {ex.query}"
        # a one-letter name an answer says ("the C major scale", "the half-note D") is a note, a grade, a
        # label: a referent only once the person's question says it too ("an R session")
        told = [t for t in names_in(ex.assistant, known) if len(t) > 1 or re.search(rf"\b{re.escape(t)}\b", asked)]
        named = names_in(asked, known) + told + terms_in(asked) + terms_in(ex.assistant)
        for text, name in [(t, True) for t in named] + [(t, False) for t in phrases_in(ADDED.sub("", ex.query or ex.user))]:
            key = _key(text)
            if key and (key not in found or (name and not found[key][1])):
                found[key] = (text, name, found[key][2] if key in found else n)
            elif key and not name and not found[key][1]:
                found[key] = (text, name, n)  # a phrase asked again is as recent as its last asking
    bags = [(_key(f"{ex.user} {ex.query}"), _key(ex.assistant)) for ex in exchanges]
    folded = _key(summary)
    # the subject: the first name of the conversation's opening (the summary's start once folded)
    opening, start = (summary.lower(), -1) if summary.strip() else (exchanges[0].user.lower() if exchanges else "", 0)
    opening = opening.replace(".", "")  # a name is kept without its initials' periods ("William H Seward")
    placed = [(opening.find(text.lower().replace(".", "")), k) for k, (text, name, first) in found.items()
              if name and first == start]  # fmt: skip
    subject = min(((at, k) for at, k in placed if at >= 0), default=(0, None), key=lambda p: p[0])[1]
    scores: dict[frozenset[str], float] = {}
    for key, (_, name, _first) in found.items():
        score = SUMMARY * _mention(key, folded) + (NAME if name else 0.0)
        if key == subject:  # the subject stays while the person's questions keep speaking of it
            asked_at = [age for age, (asked, _) in enumerate(reversed(bags)) if key & asked]
            score += TOPIC * RECENCY ** min(asked_at, default=len(bags))
        for age, (asked, answered) in enumerate(reversed(bags)):
            score += RECENCY**age * (QUESTION * _mention(key, asked) + ANSWER * _mention(key, answered))
        scores[key] = score
    # a name that is part of a longer one ("Darin", "Bobby Darin") is the same referent: its
    # mentions count for the longer name
    for key in sorted(scores, key=len):
        if found[key][1] and len(found[key][0]) > 2:  # not "R" in "Comprehensive R Archive Network"
            longer = [k for k in scores if k > key and found[k][1] and not _JOINED.search(found[k][0])]
            if longer:
                best = max(longer, key=lambda k: scores[k])
                scores[best] += scores.pop(key) - NAME
    # a phrase of the last question that holds a name ("the CRAN mirror", "an R session") is what the
    # conversation is about now: it takes the name's score and the subject's `TOPIC` (the name stays,
    # for "he" and "she")
    latest = len(exchanges) - 1
    last = exchanges[-1] if exchanges else None
    focus = _key(focus_of(last.user)) if last else frozenset()
    acted_on = {focus, _key(copula_subject(last.user))} if last else set()
    asked = _key(last.user) if last else frozenset()
    for key in scores:
        if not found[key][1] and found[key][2] == latest:
            held = [k for k in scores if k < key and found[k][1]]
            if held:
                scores[key] += max(scores[k] for k in held) + TOPIC
    for key in scores:  # what the question acts on: above everything it names ("triplets" over "LilyPond")
        if not found[key][1] and found[key][2] == latest and key in acted_on:
            said = [scores[k] for k in scores if k != key and (k & asked)]
            scores[key] = max([scores[key] + TOPIC, *(v + NAME for v in said)])
    # "which parameter …?" answered "generate.manifest": the follow-up is about that
    if last is not None and _WHICH.match(last.user):
        for term in terms_in(last.assistant):
            if _key(term) in scores:
                scores[_key(term)] += TOPIC
    ranked = sorted(scores, key=lambda k: (scores[k], -found[k][2]), reverse=True)
    return tuple(Candidate(found[k][0], round(scores[k], 3), found[k][1], k == focus) for k in ranked)


def _person(text: str) -> bool:
    """Shaped like a person's name: one to four capitalised words, nothing joining them; an initial
    ("Bill W.") or a capital inside a word ("DiFiglia", "McCartney") is a person's, an acronym is not."""
    words = text.split()
    return 1 <= len(words) <= 4 and all(w[:1].isupper() and not _upper_word(w) for w in words) \
        and not (len(words) == 1 and len(words[0].rstrip(".")) == 1)


def _upper_word(tok: str) -> bool:
    """An acronym written in capitals ("CRAN", "NASA"), not a name with an inner capital."""
    letters = [c for c in tok if c.isalpha()]
    return len(letters) >= 2 and sum(c.isupper() for c in letters) * 2 > len(letters)


def people(exchanges: list[Exchange]) -> set[frozenset[str]]:
    """Names the conversation has taken for a person: a question's "he" or "she" that the query made
    of it replaced by that name."""
    out: set[frozenset[str]] = set()
    for ex in exchanges:
        if ex.query and ex.query != ex.user and _HE_SHE.search(ex.user):
            asked = _key(ex.user)
            out.update(k for k in (_key(n) for n in names_in(ADDED.sub("", ex.query), set())) if k and not k <= asked)
    return out


def referent(exchanges: list[Exchange], summary: str = "", *, person: bool = False, thing: bool = False,
             named: bool = False, skip: str = "") -> str:  # fmt: skip
    """The most salient noun phrase ('' when there is none); `person`: a name only (he, she);
    `thing`: not a name the conversation took for a person (it, they); `named`: a name, or what the
    last question acted on when it holds one, when there is any; `skip`: a text whose words the referent must not be made of only
    (the question itself)."""
    own = _key(skip)
    found = [c for c in salient(exchanges, summary) if not _key(c.text) <= own]
    if person:
        found = [c for c in found if c.name and _person(c.text)] or [c for c in found if c.name]
    elif thing:
        known = people(exchanges)
        found = [c for c in found if not any(_key(c.text) <= k for k in known)] or found
    if named:  # a name; or what the last question acted on, when it holds one ("the CRAN mirror")
        found = [c for c in found if c.name or (c.acted_on and any(w[:1].isupper() or _TERM.match(w)
                                                                   for w in c.text.split()))] or found  # fmt: skip
    return found[0].text if found else ""
