"""The conversation's topic: the main subject the person opened the conversation with.

A conversation is mostly about what its first question named ("What does CRAN stand for?": CRAN;
"Tell me about Frank Zappa, Disbandment.": Frank Zappa). A follow-up that leans on the
conversation ("Did they tour?", "what else did he do?") is about that topic even when the last
exchange offers another referent, so the rewrite names the topic beside the referent it found:
"Who was in the band (Frank Zappa)?". A question that names nothing is asked of the topic; one
that names the topic, a name or a term the conversation said, or points at the last exchange
("this movie") gets nothing.

The topic is the opening's first clause when it is written as a title ("All About Eve", "Bill W."),
else the first name of a closing "in X" ("… colors in Asymptote?"), else its first name ("CRAN" of
"CRAN stand for"). It stays the opening's for the whole conversation (memory.questions keeps it
when the window folds the opening away)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.llm.words import STOP, content_words
from assistant.referent import mid_capitals, names_in, terms_in

_ASK = re.compile(
    r"^\s*(please\s+)?((can|could) you\s+)?(tell me( more)?( about)?|explain|describe|what|which|who|whom|whose|"
    r"where|when|why|how( many| much| long| often)?)\b\s*((is|are|was|were|do|does|did|can|could|should|"
    r"would|will|has|have|had)\b\s*)?",
    re.I,
)
_CLAUSE = re.compile(r"[,;:?!]|(?<!\b[A-Z])\.(\s|$)")  # not after an initial ("A. C. Bhaktivedanta")
_PAREN = re.compile(r"\s*\([^)]*\)")
_SMALL = frozenset("of the and de la le von van der del da du for a an in on at to &".split())
_SETTING = re.compile(r"\b(in|with|for|using|under|on)\s+(?P<np>[^,;:?!]*?)[\s.?!]*$", re.I)
TITLE_WORDS = 6  # an opening clause this long or shorter, written as a title, is the topic


def opening_topic(question: str) -> str:
    """The subject of a conversation's first question ('' when it names none)."""
    q = _PAREN.sub("", " ".join((question or "").split()))
    rest = _ASK.sub("", q, count=1).strip()
    clause = _CLAUSE.split(rest, maxsplit=1)[0].strip() if rest else ""
    words = clause.split()
    titled = bool(words) and len(words) <= TITLE_WORDS and words[0][:1].isupper() and words[0] != "I"
    if titled and all(w[:1].isupper() or w[:1].isdigit() or w.lower() in _SMALL for w in words):
        return clause  # written as a title: "All About Eve"
    setting = _SETTING.search(clause)  # "… in LilyPond?": where the question is asked is its topic
    names = names_in(setting.group("np"), mid_capitals([clause])) if setting else []
    names = names or names_in(clause, set())
    if names:
        return names[0]
    return clause if titled else ""  # a title without a name: "Boy band"


@dataclass(frozen=True)
class Topic:
    """What the conversation is about, and the words that say so."""

    text: str

    @property
    def words(self) -> frozenset[str]:
        return frozenset(content_words(self.text))

    def named_in(self, text: str) -> bool:
        """`text` names the topic (any of its content words: "Zappa" names "Frank Zappa")."""
        return bool(self.words & set(content_words(text)))


def topic_of_conversation(questions: list[str]) -> Topic | None:
    """The topic of a conversation whose questions (as asked, oldest first) are `questions`."""
    for q in questions[:1]:
        text = opening_topic(q)
        if text and any(w.lower() not in STOP for w in text.split()):
            return Topic(text)
    return None


def with_topic(query: str, question: str, topic: Topic | None) -> str:
    """`query` (the rewrite of `question`) naming the topic at its end, unless it already names it."""
    if topic is None or topic.named_in(query) or topic.named_in(question):
        return query
    q = query.rstrip()
    end = q[-1] if q and q[-1] in "?.!" else "?"
    return f"{q.rstrip('?.! ')} ({topic.text}){end}"


_WH = re.compile(r"^\s*(what|what's|which|who|whom|whose|where|when|why|how|is|are|was|were|do|does|did|"
                 r"can|could|has|have|had|any|in|during|after|before)\b", re.I)  # fmt: skip
_DEMONSTRATIVE = re.compile(r"\b(this|that|these|those)\s+(?!is\b|was\b|are\b|were\b)[a-z]", re.I)
_DEFINITION = re.compile(
    r"^\s*(what|who)\s+(is|are|was|were)\s+(an?\s+)?[\w'’-]+(\s+[\w'’-]+){0,2}[\s?.!]*$", re.I
)


def leans_on_topic(question: str, topic: Topic | None, said: list[str]) -> bool:
    """A question that names nothing ("Why were there financial problems?": no name, not the
    topic's words, no word of a name or a term the conversation `said`) in a conversation with a topic is
    asked of that topic; a definition ("what is folk revival?") stands on its own."""
    if (
        topic is None
        or topic.named_in(question)
        or names_in(question, set())
        or _DEMONSTRATIVE.search(question)
    ):
        return False  # "this movie", "that time": what the last exchange spoke of, not the topic
    known = mid_capitals(said)  # a manual's terms name a subject too ("partial 8" after "\\partial")
    named = {w for t in said for name in names_in(t, known) + terms_in(t) for w in content_words(name)}
    if set(content_words(question)) & named:
        return False
    return bool(_WH.match(question)) and not _DEFINITION.match(question)
