"""Follow-up detection and rewriting into a standalone retrieval query.

Detection is a cheap heuristic (no model call): a follow-up leans on the previous exchange —
"tell me more", "what about them?", "and the second one?", a pronoun with nothing to refer to in
the question itself. A question that stands on its own (a new topic) is never rewritten.

Rewriting goes through the LLM chain when one is available (any callable `messages -> str | None`)
and falls back to a heuristic that resolves the reference from the last exchange: its standalone
query (the topic), named entities, and numbered or bulleted items in its answer ("the second one").
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from assistant.llm.base import Message
from assistant.memory import ConversationMemory, Exchange

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
_ABOUT = re.compile(r"^(and\s+)?(what|how) about\b\s*(?P<rest>.*)$", re.I)
_AND = re.compile(r"^(and|also|but|so|then)\b\s*(?P<rest>.*)$", re.I)
_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "last": -1,
}  # fmt: skip
_ORDINAL = re.compile(
    r"\b(the|that|this)\s+(?P<n>"
    + "|".join(_ORDINALS)
    + r")(\s+(one|item|point|option|source|result|step|thing))?\b",
    re.I,
)
_NUMBER = re.compile(r"\b(number|item|point|option|step|source)\s+(?P<n>\d{1,2})\b", re.I)
_PRONOUN = re.compile(r"\b(it|its|they|them|their|theirs|those|these|he|him|his|she|her|hers)\b", re.I)
_DEICTIC = re.compile(
    r"\b(that|this)(\s+one)?\s*[?.!]*$|\b(about|of|on|for|by|with|mean by)\s+(that|this)\b", re.I
)
_EXPLETIVE = re.compile(r"^\s*(is|was) it (true|possible|allowed|legal|ok|okay|necessary|required)\b", re.I)
_WH = re.compile(
    r"^\s*(please\s+)?(can you\s+|could you\s+)?(tell me( about)?|explain|describe|what|which|who|whom|whose|where|when|why|"
    r"how( many| much| long| often| do| does| did| is| are| can)?)\b\s*"
    r"((is|are|was|were|do|does|did|can|could|should|would|will|must|may|might|shall|has|have|had|"
    r"the meaning of)\b\s*)?",
    re.I,
)
_LIST_ITEM = re.compile(r"^\s*(?:(?:\d{1,2}|[a-z])[.)]|[-*•])\s+(?P<item>.+)$", re.M)
_INLINE_ITEM = re.compile(r"(?:^|\s)\(?(\d{1,2})[.)]\s+(.+?)(?=\s+\(?\d{1,2}[.)]\s+|$)")
_CAPS = re.compile(r"\b([A-Z][\w'’-]+(?:\s+(?:of|de|la|the|and|von|van)?\s*[A-Z][\w'’-]+)*)")
_CITATION = re.compile(r"\s*\[\d+(?:[,\s]+\d+)*\]")
_STOP_START = {
    "What",
    "Which",
    "Who",
    "Where",
    "When",
    "Why",
    "How",
    "Tell",
    "Is",
    "Are",
    "Do",
    "Does",
    "The",
    "I",
    "A",
}

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
        rw = rewriter.rewrite(text, memory.last, memory.history(budget=600))
    except Exception as exc:  # noqa: BLE001 - keep the question as it is
        log.warning("follow-up rewrite failed (%s)", type(exc).__name__)
        rw = Rewrite(text, text, "none")
    query = rw.query if rw.rewritten else text
    # the answer is written for the question that carries the content words: the follow-up itself
    # when it names its subject ("and what about attendance?"), else the standalone query
    answered = text if rw.method == "heuristic" and rw.reason in _OWN_WORDS else query
    return Question(text, query, answered, rw)


def topic_of(question: str) -> str:
    """The noun phrase a question is about: 'What are the penalties for late payment?' → 'the penalties for late payment'."""
    q = _CITATION.sub("", " ".join(question.split())).strip().rstrip("?.! ")
    stripped = _WH.sub("", q, count=1).strip()
    return stripped or q


def entities_of(text: str) -> list[str]:
    out: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        for m in _CAPS.finditer(sentence):
            name = m.group(1).strip()
            words = name.split()
            if m.start() == 0 and len(words) == 1 and words[0] in _STOP_START:
                continue
            if words[0] in _STOP_START:
                name = " ".join(words[1:])
            if name and name not in out:
                out.append(name)
    return out


def list_items(answer: str) -> list[str]:
    items = [m.group("item").strip() for m in _LIST_ITEM.finditer(answer or "")]
    if len(items) < 2:
        inline = [m.group(2).strip() for m in _INLINE_ITEM.finditer(" ".join((answer or "").split()))]
        if len(inline) >= 2:
            items = inline
    return [_CITATION.sub("", it).strip().rstrip(".;,") for it in items]


def detect(question: str, last: Exchange | None) -> str:
    """Why `question` is a follow-up of `last` ('' when it stands on its own)."""
    if last is None:
        return ""
    q = " ".join(question.split())
    if not q:
        return ""
    if _MORE.match(q):
        return "more"
    if _ORDINAL.search(q) or _NUMBER.search(q):
        return "ordinal"
    m = _ABOUT.match(q)
    if m and len(m.group("rest").split()) <= 4:
        return "what-about"
    if _PRONOUN.search(q) and not _EXPLETIVE.match(q) and not _has_own_subject(q):
        return "pronoun"
    if _DEICTIC.search(q):
        return "deictic"
    m = _AND.match(q)
    if m and len(q.split()) <= 6:
        return "continuation"
    return ""


def _has_own_subject(q: str) -> bool:
    """A pronoun in a question that names its own subject ('Marie Curie and her prizes') is not a reference."""
    caps = [e for e in entities_of(q) if e not in _STOP_START]
    return bool(caps)


class FollowUpRewriter:
    """Rewrites follow-ups. `complete` (the LLM chain) is optional; `available` says whether to try it."""

    def __init__(self, complete: Complete | None = None, available: Callable[[], bool] | None = None) -> None:
        self._complete = complete
        self._available = available or (lambda: complete is not None)

    def rewrite(self, question: str, last: Exchange | None, history: str = "") -> Rewrite:
        reason = detect(question, last)
        if not reason or last is None:
            return Rewrite(question, question, "none")
        if self._complete is not None and self._available():
            query = self._llm(question, last, history)
            if query:
                return Rewrite(question, query, "llm", reason)
        return Rewrite(question, heuristic_rewrite(question, last, reason), "heuristic", reason)

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


def heuristic_rewrite(question: str, last: Exchange, reason: str) -> str:
    q = " ".join(question.split()).strip()
    topic = topic_of(last.query or last.user)
    if reason == "more":
        return f"{topic} more details"
    if reason == "ordinal":
        item = _pick_item(q, last)
        if item:
            return f"{item} {topic}" if _overlap(item, topic) < 0.5 else item
        return f"{q.rstrip('?.! ')} {topic}"
    if reason == "what-about":
        rest = _ABOUT.match(q).group("rest").rstrip("?.! ")  # type: ignore[union-attr]
        if _PRONOUN.search(rest) or _DEICTIC.search(rest):
            return _resolve_pronouns(rest, topic, topic)
        if not rest:
            return f"{topic} more details"
        # "What is the fine for pets?" + "what about smoking?" → "the fine for smoking"-style query
        return f"{rest} {topic}"
    if reason in ("pronoun", "deictic"):
        people = [e for e in entities_of(last.user + ". " + last.assistant) if len(e) > 2]
        return _resolve_pronouns(q, topic, people[0] if people else topic)
    # continuation: "and for tenants?" → question + topic
    return f"{q.rstrip('?.! ')} {topic}"


def _resolve_pronouns(q: str, topic: str, person: str) -> str:
    done = False

    def sub(m: re.Match[str]) -> str:
        nonlocal done
        word = m.group(0).lower()
        if done:
            return "" if word in ("its", "their", "his", "her") else m.group(0)
        done = True
        if word in ("he", "him", "she", "hers"):
            return person
        if word in ("his", "her"):
            return f"{person}'s"
        if word in ("its", "their", "theirs"):
            return f"{topic}'s" if len(topic.split()) <= 4 else "the"
        return topic

    out = _PRONOUN.sub(sub, q)
    if not done:  # deictic "that/this"
        out = re.sub(r"\b(that|this)(\s+one)?\b(?=[\s?.!]*$)", topic, q, count=1, flags=re.I)
        out = re.sub(
            r"\b(about|of|on|for|by|with|mean by)\s+(that|this)\b", rf"\1 {topic}", out, count=1, flags=re.I
        )
    elif topic not in out:
        out = f"{out.rstrip('?.! ')} {topic}"
    return " ".join(out.split())


def _pick_item(q: str, last: Exchange) -> str:
    m = _ORDINAL.search(q)
    n = _ORDINALS[m.group("n").lower()] if m else int(_NUMBER.search(q).group("n"))  # type: ignore[union-attr]
    noun = (m.group(0) if m else "").lower()
    pools = [list_items(last.assistant), list(last.sources)]
    if "source" in noun or "result" in noun:
        pools.reverse()
    for pool in pools:
        if pool and (n == -1 or 1 <= n <= len(pool)):
            return " ".join(pool[n - 1 if n > 0 else -1].split()[:30])
    return ""


def _overlap(a: str, b: str) -> float:
    wa, wb = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
    return len(wa & wb) / max(1, len(wb))
