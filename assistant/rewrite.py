"""Follow-up detection and rewriting into a standalone retrieval query.

Detection is a cheap heuristic (no model call): a follow-up leans on the previous exchange —
"tell me more", "what about them?", "and the second one?", a pronoun with nothing to refer to in
the question itself, or a short question without a subject ("did the band tour?", "what's the
default?"). A question that names its own subject (a new topic) is never rewritten.

Rewriting goes through the LLM chain when one is available (any callable `messages -> str | None`);
its rewrite is used only when it keeps the question's content words and adds only words of the
conversation (`consistent`). Otherwise a heuristic names what the question refers to: the
conversation's salient noun phrase (`assistant.referent`) in place of a pronoun or after a question
without a subject, the previous question with X in its place for "what about X" (`assistant.swap`),
and numbered or bulleted items of the last answer for "the second one" (`assistant.items`). The
conversation's topic, what its opening question named (`assistant.topic`), is named beside the referent,
and given to a question that names nothing. It never pastes the previous question's predicate into a
pronoun's place, so queries do not pile up across turns.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from assistant.events import NOT_KNOWN
from assistant.items import ORDINALS, pick_item
from assistant.llm.base import Message
from assistant.llm.words import content_words
from assistant.memory import ADDED, CITATION, ConversationMemory, Exchange
from assistant.referent import mid_capitals, names_in, referent
from assistant.subject import PRONOUN, has_own_subject, new_subject
from assistant.swap import AUXILIARIES, swap
from assistant.topic import Topic, leans_on_topic, topic_of_conversation, with_topic
from assistant.word_match import covered

log = logging.getLogger(__name__)

Complete = Callable[[list[Message]], "str | None"]
_OWN_WORDS = ("what-about", "continuation")  # follow-ups that name their own subject

_MORE = re.compile(
    r"^(ok(ay)?,?\s+|and\s+|so\s+|please\s+|can you\s+|could you\s+)*"
    r"(tell me more|more( details| info(rmation)?)?|go on|continue|elaborate|keep going|say more|"
    r"expand( on (that|this|it))?|explain( that| this| it)?( more| further| in more detail)?|"
    r"why( is that| so)?|how so|what else|anything else|details|more please|really)\b[\s?.!]*(please)?[\s?.!]*$",
    re.I,
)
# "anything else?", "any other interesting aspects?": more of the same subject, in a question's words
_ELSE = re.compile(r"\b(anything|something|what)\s+else\b|\bany\s+other\s+(interesting|notable|important)\b", re.I)
_WH_START = re.compile(r"^\s*(what|what's|which|who|whom|whose|where|when|why|how|is|are|was|were|do|does|did|"
                       r"can|could|has|have|had)\b", re.I)  # fmt: skip
_DEFINITE = re.compile(r"\b(the|this|that|these|those)\s+([\w'’-]+(\s+[\w'’-]+)?)", re.I)
_TERM = re.compile(r"^\s*(what|who|when|where)\s+(is|are|was|were)\s+(?!the\b|this\b|that\b|these\b|those\b)[\w'’-]+"
                   r"(\s+[\w'’-]+)?[\s?.!]*$", re.I)  # fmt: skip
ELLIPSIS_WORDS = 2  # content words: up to this many, a question without a subject leans on the conversation
_ABOUT = re.compile(r"^(and\s+)?(what|how) about\b\s*(?P<rest>.*)$", re.I)
_AND = re.compile(r"^(and|also|but|so|then)\b\s*(?P<rest>.*)$", re.I)
# "and the notes after it?", "and its group?": a noun phrase (a verb would start "and turn them back on?")
_NOUN_PHRASE = re.compile(r"^(the|a|an|its|their|his|her)\s+\w", re.I)
_DEICTIC = re.compile(
    r"\b(that|this)(\s+one)?\s*[?.!]*$|\b(about|of|on|for|by|with|mean by)\s+(that|this)\b", re.I
)
# "and which one keeps …?": "one" stands for what the previous question asked about ("Which DEB_BUILD_OPTIONS tag …")
_WHICH_ONE = re.compile(r"^(?:(?:and|or|but|so|then)\s+)?(?P<wh>which|what)\s+ones?\b(?P<rest>.*)$", re.I)
_NOUN_END = frozenset("the a an this that these those my your its their his her our to in on for of with by".split())
_EXPLETIVE = re.compile(r"^\s*(is|was) it (true|possible|allowed|legal|ok|okay|necessary|required)\b", re.I)
_WH = re.compile(
    r"^\s*(please\s+)?(can you\s+|could you\s+)?(tell me( about)?|explain|describe|what|which|who|whom|whose|where|when|why|"
    r"how( many| much| long| often| do| does| did| is| are| can)?)\b\s*"
    r"((is|are|was|were|do|does|did|can|could|should|would|will|must|may|might|shall|has|have|had|"
    r"the meaning of)\b\s*)?",
    re.I,
)

SYSTEM_PROMPT = (
    "You rewrite a follow-up question into one standalone search query, using the conversation to "
    "resolve pronouns and references such as 'it', 'them', 'the second one' or 'tell me more'. "
    "Reply with the query only, on one line, no quotes, no explanation."
)


@dataclass(frozen=True)
class Rewrite:
    original: str
    query: str
    method: str  # none | heuristic | llm
    reason: str = ""  # why it was considered a follow-up

    @property
    def rewritten(self) -> bool:
        return self.method != "none" and self.query.strip() != self.original.strip()


@dataclass(frozen=True)
class Question:
    """The rewrite stage's result: what is searched and what is answered, for the question as heard."""

    heard: str
    query: str  # searched: the standalone query (the heard text unless a follow-up was rewritten)
    answered: str  # the question the answer is written for
    rewrite: Rewrite | None = None  # None when rewriting is switched off

    @property
    def rewritten(self) -> bool:
        return self.rewrite is not None and self.rewrite.rewritten


def rewrite_question(text: str, memory: ConversationMemory, rewriter: FollowUpRewriter | None) -> Question:
    """The `Question` for `text` (`rewriter` None: no rewriting). Never raises."""
    if rewriter is None:
        return Question(text, text, text)
    try:
        rw = rewriter.rewrite(text, memory.last, memory.history(budget=600), memory.exchanges, memory.summary,
                              topic=topic_of_conversation(memory.questions))
    except Exception as exc:  # noqa: BLE001 - keep the question as it is
        log.warning("follow-up rewrite failed (%s)", type(exc).__name__)
        rw = Rewrite(text, text, "none")
    query = rw.query if rw.rewritten else text
    # the answer is written for the question that carries the content words: the follow-up itself
    # when it names its subject ("and what about attendance?"), else the standalone query ("and turn
    # them back on?" names nothing: "turn automatic beams back on" does)
    own = rw.method == "heuristic" and rw.reason in _OWN_WORDS and not (PRONOUN.search(text) or _DEICTIC.search(text))
    answered = text if own else query
    return Question(text, query, answered, rw)


def asked_noun(question: str) -> str:
    """What a which/what question asks for, the words between "which" and its verb: "Which
    DEB_BUILD_OPTIONS tag skips the test suite?" → "DEB_BUILD_OPTIONS tag" ('' for "What is X?").
    Without a tagger, the verb is an auxiliary, the word before an article or a preposition, or a
    lower-case word in -s not followed by an auxiliary."""
    words = [w.strip("?.!,;:") for w in _AND.sub(r"\g<rest>", " ".join(question.split())).split()]
    if len(words) < 2 or words[0].lower() not in ("which", "what"):
        return ""
    noun: list[str] = []
    for i, w in enumerate(words[1:5], start=1):
        after = words[i + 1].lower() if i + 1 < len(words) else ""
        verb = noun and (after in _NOUN_END or (w.islower() and w.endswith("s") and after not in AUXILIARIES))
        if not w or w.lower() in AUXILIARIES or w.lower() in _NOUN_END or verb:  # "tag skips", not "line types are"
            break
        noun.append(w)
    return " ".join(noun)


def topic_of(question: str) -> str:
    """The noun phrase a question is about: 'What are the penalties for late payment?' → 'the penalties for late payment'."""
    q = CITATION.sub("", " ".join(question.split())).strip().rstrip("?.! ")
    stripped = _WH.sub("", q, count=1).strip()
    return stripped or q


def detect(question: str, last: Exchange | None, exchanges: list[Exchange] | None = None) -> str:
    """Why `question` is a follow-up of `last` ('' when it stands on its own); `exchanges`: the
    conversation kept (default: `last` alone), where a definite phrase or a part of a name is looked up."""
    if last is None:
        return ""
    q = " ".join(question.split())
    if not q:
        return ""
    if _MORE.match(q) or _ELSE.search(q):
        return "more"
    if pick_item(q, last):
        return "ordinal"
    m = _ABOUT.match(q)
    if m and len(m.group("rest").split()) <= 4:
        return "what-about"
    if _WHICH_ONE.match(q) and asked_noun(last.query or last.user):
        return "one"
    own = has_own_subject(q)
    if PRONOUN.search(q) and not _EXPLETIVE.match(q) and not own:
        return "pronoun"
    if _DEICTIC.search(q):
        return "deictic"
    m = _AND.match(q)
    if m and len(q.split()) <= 6:
        return "continuation"
    kept = exchanges or [last]
    short = len(content_words(q)) <= ELLIPSIS_WORDS  # "the rent" in a longer question names its own subject
    if not names_in(q, set()) and (_elliptical(q) or (short and _definite(q, kept))) and not _names_one(q, kept) \
            and not new_subject(q, kept):
        return "ellipsis"
    return ""


def leans_on(question: str, last: Exchange | None) -> bool:
    """Whether `question` says outright that it follows `last` (a pronoun, "what about", "tell me
    more" …): then it takes the path of the question it follows. A short question without a subject
    ("what was my first question?") may be a follow-up for the search, but it keeps its own path."""
    return detect(question, last) not in ("", *_WEAK)


def _elliptical(q: str) -> bool:
    """A short question without a subject of its own ("Did the band tour?", "what's the default?");
    not "what is X?" asked of a bare term (a definition stands on its own)."""
    if _TERM.match(q):
        return False
    return bool(_WH_START.match(q)) and len(content_words(q)) <= ELLIPSIS_WORDS


def _definite(q: str, exchanges: list[Exchange]) -> bool:
    """The question speaks of "the X" / "this X" and the conversation has spoken of X."""
    words = {w for m in _DEFINITE.finditer(q) for w in content_words(m.group(2))}
    said = " ".join(f"{e.user} {e.query} {e.assistant}" for e in exchanges)
    return bool(words & set(content_words(said)))


def _names_one(q: str, exchanges: list[Exchange]) -> bool:
    """The question holds a word of one of the conversation's names ("Why are the amplifiers
    important?" in a conversation about Carlos Santana's Amplifiers): it names its subject."""
    said = _said(exchanges)
    named = {w for t in said for name in names_in(t, mid_capitals(said)) for w in content_words(name)}
    return bool(set(content_words(q)) & named)


def _said(exchanges: list[Exchange]) -> list[str]:
    return [t for e in exchanges for t in (e.user, e.query, e.assistant)]


class FollowUpRewriter:
    """Rewrites follow-ups. `complete` (the LLM chain) is optional; `available` says whether to try it.
    An LLM rewrite is used only when it keeps the question's own words and adds only words of the
    conversation (`consistent`); otherwise the heuristic's is."""

    def __init__(self, complete: Complete | None = None, available: Callable[[], bool] | None = None,
                 *, check: bool = True) -> None:  # fmt: skip
        self._complete = complete
        self._available = available or (lambda: complete is not None)
        self.check = check  # off only to measure what the check prevents (bench.followups_llm)

    def rewrite(self, question: str, last: Exchange | None, history: str = "",
                exchanges: list[Exchange] | None = None, summary: str = "",
                topic: Topic | None = None) -> Rewrite:  # fmt: skip
        """`exchanges`: the conversation kept verbatim, oldest first (default: `last` alone);
        `summary`: what the memory folded away; `topic`: what the conversation opened with."""
        kept = list(exchanges) if exchanges else ([last] if last else [])
        reason = detect(question, last, kept)
        if not reason and last is not None and leans_on_topic(question, topic, _said(kept)):
            reason = "topic"
        if not reason or last is None:
            return Rewrite(question, question, "none")
        if reason in _WEAK and last.assistant.strip() == NOT_KNOWN:
            # found only by what it lacks, after a question the documents could not answer: the
            # conversation has no subject to lend it ("How much is the pet deposit?" after "Who led the Panthers?")
            return Rewrite(question, question, "none")
        if self._complete is not None and self._available():
            query = self._llm(question, last, history)
            context = " ".join([history, summary] + [f"{e.user} {e.query} {e.assistant}" for e in kept])
            if query and (not self.check or consistent(question, query, context)):
                return Rewrite(question, query, "llm", reason)
            if query:
                log.info("LLM follow-up rewrite not used: it drops the question's words or adds new ones")
        # "any other interesting aspects?" names the topic alone when there is one: the last referent is
        # what the person asks to go beyond
        own = reason == "topic" or (reason == "more" and topic is not None and not _MORE.match(question)
                                    and not PRONOUN.search(question))  # fmt: skip
        query = question if own else heuristic_rewrite(question, last, reason, kept, summary)
        if reason in TOPIC_REASONS:
            query = with_topic(query, question, topic)
        return Rewrite(question, query, "heuristic", reason)

    def _llm(self, question: str, last: Exchange, history: str) -> str | None:
        context = history.strip() or f"User: {last.user}\nAssistant: {last.assistant}"
        messages = [
            Message("system", SYSTEM_PROMPT),
            Message("user", f"Conversation:\n{context[-3000:]}\n\nFollow-up: {question}\nStandalone query:"),
        ]
        try:
            out = self._complete(messages) if self._complete else None
        except Exception as exc:  # noqa: BLE001 - the heuristic takes over
            log.warning("LLM follow-up rewrite failed (%s); using the heuristic", type(exc).__name__)
            return None
        if not out:
            return None
        line = next((ln for ln in out.strip().splitlines() if ln.strip()), "")
        line = line.strip().strip("\"'`").removeprefix("Standalone query:").strip()
        if not line or len(line.split()) > 40:
            return None
        return line


def consistent(question: str, rewrite: str, conversation: str) -> bool:
    """Whether a rewrite keeps every content word of the question (but the words that only point
    back: "the second one", "tell me more") and adds only words the conversation holds (up to a typo
    or an inflection, `word_match.in_bag`)."""
    own, new = set(content_words(question)) - _REFERRING, set(content_words(rewrite))
    if not new or covered(own, new) != own:
        return False
    added = new - own
    return covered(added, set(content_words(conversation)) | own) == added


def heuristic_rewrite(question: str, last: Exchange, reason: str, exchanges: list[Exchange] | None = None,
                      summary: str = "") -> str:  # fmt: skip
    """The question with what it refers to named: a pronoun replaced by the conversation's salient
    noun phrase (`assistant.referent`), a short question without a subject given it, "what about X"
    put in the previous question's place. The previous question's predicate is never pasted in."""
    q = " ".join(question.split()).strip()
    kept = exchanges or [last]
    previous = _MORE_DETAILS.sub("", last.query or last.user).strip()
    topic = topic_of(previous)
    if reason == "more":
        if _MORE.match(q):
            return f"{topic} more details"
        if PRONOUN.search(q) and not has_own_subject(q):  # "what else did he do?"
            return heuristic_rewrite(q, last, "pronoun", kept, summary)
        ref = referent(kept, summary, skip=q)
        return _with(q, ref) if ref else f"{q.rstrip('?.! ')} {topic}"
    if reason == "one":
        m = _WHICH_ONE.match(q)
        assert m is not None
        return f"{m.group('wh')} {asked_noun(previous)}{m.group('rest').rstrip('?.! ')}?"
    if reason == "ordinal":
        item = pick_item(q, last)
        if item:
            return f"{item} {topic}" if _overlap(item, topic) < 0.5 else item
        return f"{q.rstrip('?.! ')} {topic}"
    if reason in ("what-about", "continuation"):
        rest = (_ABOUT.match(q) or _AND.match(q)).group("rest").rstrip("?.! ")  # type: ignore[union-attr]
        if PRONOUN.search(rest) or _DEICTIC.search(rest):  # "and turn them back on?"
            return heuristic_rewrite(rest, last, "pronoun", kept, summary)
        if not rest:
            return f"{topic} more details"
        if _WH_START.match(rest):  # "and how do I delete one?": a question of its own
            again = detect(rest, last, kept) or "ellipsis"
            return heuristic_rewrite(rest, last, again, kept, summary) if again != reason else rest
        return swap(previous, rest)
    if reason == "pronoun" and (m := _AND.match(q)) and _NOUN_PHRASE.match(m.group("rest")):
        # "and the notes after it?": the thing it names, asked in the previous question's place
        named = heuristic_rewrite(m.group("rest"), last, "pronoun", kept, summary)
        return swap(previous, ADDED.sub("", named))
    if reason == "ellipsis":  # unless the question already names what the conversation is about
        top = referent(kept, summary, named=True)
        return _with(q, top) if top and not set(content_words(top)) <= set(content_words(q)) else q
    first = PRONOUN.search(q)
    thing = bool(first) and first.group(0).lower() in ("it", "its", "they", "them", "their", "theirs")
    ref = referent(kept, summary, thing=thing, skip=q)
    person = referent(kept, summary, person=True, skip=q) or ref
    if not ref:
        return q
    out = _resolve_pronouns(q, ref, person)
    # a phrase put in a pronoun's place ("automatic beams") keeps the name the conversation is about
    name = referent(kept, summary, named=True) if not names_in(out, set()) else ""
    return _with(out, name) if name and not set(content_words(name)) <= set(content_words(out)) else out


_OBJECT_HER = re.compile(r"\s*([?.!,;:]|$|(to|for|with|in|at|on|from|about|by|after|before|and|or|when|as)\b)", re.I)
_WEAK = ("ellipsis", "topic")  # follow-ups found by what they lack, not by a word that points back
TOPIC_REASONS = ("pronoun", "ellipsis", "more", "deictic", "topic", "continuation", "what-about", "one")  # follow-ups that name the topic beside the referent
_REFERRING = frozenset(content_words(" ".join(ORDINALS) + " number item point option step source result thing "
                                     "else details elaborate continue expand"))
_MORE_DETAILS = re.compile(r"\s+more details$", re.I)
def _with(q: str, ref: str) -> str:
    """`q` naming `ref` at its end: "Did the band tour?" → "Did the band tour (INXS)?"."""
    q = q.rstrip()
    end = q[-1] if q and q[-1] in "?.!" else "?"
    return f"{q.rstrip('?.! ')} ({ref}){end}"


def _resolve_pronouns(q: str, thing: str, person: str) -> str:
    """`q` with its first pronoun replaced by what it refers to (he/she: `person`, else `thing`);
    a later possessive of the same referent is dropped ("his … his" → "X's … the")."""
    done = False

    def sub(m: re.Match[str]) -> str:
        nonlocal done
        word = m.group(0).lower()
        if done:
            return m.group(0)
        done = True
        ref = person if word in ("he", "him", "she", "his", "her", "hers") else thing
        if word == "her" and _OBJECT_HER.match(q, m.end()):
            return ref  # "who blacklisted her?": her is not a possessive
        if word in ("his", "her", "its", "their", "theirs"):
            return (f"{ref}'" if ref.endswith("s") else f"{ref}'s") if len(ref.split()) <= 5 else ref
        return ref

    out = PRONOUN.sub(sub, q)
    if not done:  # deictic "that/this"
        out = re.sub(r"\b(that|this)(\s+one)?\b(?=[\s?.!]*$)", thing, q, count=1, flags=re.I)
        out = re.sub(
            r"\b(about|of|on|for|by|with|mean by)\s+(that|this)\b", rf"\1 {thing}", out, count=1, flags=re.I
        )
    return " ".join(out.split())


def _overlap(a: str, b: str) -> float:
    wa, wb = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
    return len(wa & wb) / max(1, len(wb))
