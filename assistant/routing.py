"""Which path a turn takes: the intent classifier, the session's always-web switch and the threshold.

- the session's "always web search" switch sends every question to `web_search` (source "switch");
- a classification below `routing.confidence_threshold` goes to `rag_search` (source "threshold");
- without a classifier (it failed to load), a few unambiguous patterns pick greeting /
  conversation_meta / web_search and everything else is `rag_search` (source "rules");
- a `conversation_meta` classification of a question that names neither a participant nor the
  conversation ("How quickly does the support team answer emails?") goes to `rag_search` (source "rules");
- a follow-up of a document or web question keeps that path (source "follow-up"): the
  classifier sees "tell me more" or "when did she die?" without their context; a greeting formula
  or words about this conversation ("why did you say that?") keep their own label;
- an unsure `web_search` (`unsure_web`) is answered from the library when the library has relevant
  evidence (`Route.documents_first()`, source "documents-first"; decided by the turn after searching);
- a `greeting` or `conversation_meta` classification that the text does not confirm (`library_may_answer`:
  no greeting formula, no words about this conversation: "How do I end an R session?") is answered
  from the library when the library answers it (`Route.from_library()`, source "library"; decided by
  the turn after searching), else it keeps its label.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from models.intent_data import LABELS

log = logging.getLogger(__name__)

SEARCHES = ("rag_search", "web_search")  # the paths that answer from evidence

_GREETING = re.compile(
    r"^\s*(hi|hello|hey|hiya|howdy|yo|good (morning|afternoon|evening|night)|thanks?( you)?( so much)?|"
    r"thank you|cheers|bye|goodbye|see you|how are you( doing)?|what'?s up|nice to meet you)\b[\s!.?,]*"
    r"(hark|there|again|everyone|today)?[\s!.?]*$",
    re.I,
)
_META = re.compile(
    r"\b(what (did|have) i (just )?(ask|asked|say|said)|what was my (first|last|previous|earlier) (question|message)|"
    r"(my|the) (first|last|previous) question|what have we (talked|been talking) about|"
    r"(summari[sz]e|recap) (our|this|the) (conversation|chat|discussion)|how many questions)\b",
    re.I,
)
_WEB = re.compile(
    r"\b(search the (web|internet)|on the (web|internet)|google (it|for)|look (it )?up online|"
    r"latest news|news (about|on)|today'?s (news|weather)|weather (in|for|today)|stock price|right now)\b",
    re.I,
)

# words that make a question about this conversation whatever the library holds: what I/we asked
# or said, what you answered, my first question, your last answer, our chat, who you are
_ABOUT_THIS_CHAT = re.compile(
    r"\b((did|have|had)\s+(i|we)\s+(just\s+|already\s+|ever\s+)?(ask|say|tell|mention|talk|discuss|cover|type|write|bring|send)"
    r"|(i|we|i'?ve|we'?ve)\s+(just\s+|already\s+)?(asked|said|told you|mentioned|talked about|discussed|covered|typed|sent)"
    r"|(did|have|had)\s+(you|u)\s+(just\s+)?(say|tell|mention|answer|reply|suggest|write|mean|recommend|explain|use|give|get|quote|cite|find)"
    r"|(you|u)\s+(just\s+|already\s+)?(said|told me|mentioned|answered|replied|suggested|wrote|meant|recommended|explained|gave me)"
    r"|(your|ur)\s+((very\s+)?(last|previous|first|earlier|latest|most recent|second|third|initial)\s+)?"
    r"(answer|reply|response|message|point|explanation|sources?)"
    r"|(my|the)\s+(very\s+)?(first|last|previous|earlier|second|third|latest|most recent|initial)\s+(question|message|query|request|prompt|answer|reply)"
    r"|(were|was|are|have|had|did)\s+we\s+(been\s+)?(talking|chatting|discussing|start|begin|talk|discuss|cover)"
    r"|my name|(questions?|messages?)\s+(i|we)\s+(asked|sent|typed|had)|how many (questions|messages)"
    r"|(our|this)\s+(conversation|chat|discussion|thread|convo|talk)|the (conversation|chat|discussion) so far"
    r"|so far|(who|what) are (you|u)|your name|who (made|built|created|are) (you|u)|what can (you|u) (do|help)"
    r"|are (you|u) an? (bot|human|robot|person|ai)|(know|remember) about me|do (you|u) remember)\b"
    r"|^\W*(can you |could you |please |pls )?(repeat|rephrase|reword|simplify|shorten|restate|paraphrase|summari[sz]e|"
    r"recap|clarify|condense|translate|elaborate on|expand on|say)\s+(that|it|this|what you said|your)\b"
    r"|^\W*(recap|summary|summari[sz]e|sum up)(\s+(pls|please|so far))?\W*$",
    re.I,
)

# words without which a question cannot be about the conversation itself: it names a participant
# ("I", "you", "we"), the conversation, or what was said/asked in it
_CONVERSATION_CUE = re.compile(
    r"\b(i|i'?m|i'?ve|me|my|we|we'?ve|our|us|u|ur|you|your|ya|conversation|convo|chat|discussion|"
    r"talk(ed)?|earlier|before|previous(ly)?|prior|last|first|second|said|say|ask(ed)?|told|tell|"
    r"questions?|repeat|again|recap|summar\w*|so far|above|start over|forget|clear|"
    r"(shorten|rephrase|simplify|reword|expand on|elaborate on) (that|it|this))\b",
    re.I,
)


class Classifier(Protocol):
    def predict(self, text: str) -> Any: ...  # IntentPrediction(label, confidence, scores)


@dataclass(frozen=True)
class Route:
    label: str  # rag_search | web_search | greeting | conversation_meta
    confidence: float
    source: str  # classifier | switch | threshold | rules | follow-up | documents-first | library
    predicted: str = ""  # what the classifier said (before the switch/threshold)
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def searches(self) -> bool:
        """The path answers from evidence (documents or the web), not with a direct reply."""
        return self.label in SEARCHES

    def documents_first(self) -> Route:
        """This route, answered from the library instead of the web (the library had relevant evidence)."""
        return replace(self, label="rag_search", source="documents-first")

    def from_library(self) -> Route:
        """This route, answered from the library instead of a direct reply (the library answers it)."""
        return replace(self, label="rag_search", source="library")


def about_this_chat(text: str) -> bool:
    """The words are about this conversation ("what did I ask first?", "repeat that", "who are you?"),
    whatever the library holds."""
    return bool(_ABOUT_THIS_CHAT.search(text))


def _kept_by_its_words(label: str, text: str) -> bool:
    """A greeting formula, or words about this conversation ("why did you say that?", "repeat that"),
    keep their label after a document or web question: they are no follow-up of its topic."""
    return (label == "greeting" and bool(_GREETING.match(text))) or (
        label == "conversation_meta" and about_this_chat(text)
    )


def library_may_answer(r: Route, text: str) -> bool:
    """A greeting or conversation label from the classifier that the words do not confirm: the
    library is asked whether it answers the question ("How do I end an R session?" is not about
    this session). A greeting formula ("hi", "thanks so much") or words about this conversation
    keep the label without a search."""
    if r.source != "classifier":
        return False
    if r.label == "greeting":
        return not _GREETING.match(text) and len(text.split()) >= 4
    return r.label == "conversation_meta" and not about_this_chat(text)


def unsure_web(r: Route, text: str, min_confidence: float) -> bool:
    """A web route the classifier was not sure of, for a question that does not ask for the web itself:
    the library is searched first."""
    return (
        r.label == "web_search"
        and r.source == "classifier"
        and r.confidence < min_confidence
        and not explicit_web(text)
    )


def explicit_web(text: str) -> bool:
    """The question asks for the web itself ("search the web for…", "latest news", "weather today")."""
    return bool(_WEB.search(text))


def rule_intent(text: str) -> str:
    if _GREETING.match(text):
        return "greeting"
    if _META.search(text):
        return "conversation_meta"
    if _WEB.search(text):
        return "web_search"
    return "rag_search"


def route(
    text: str,
    *,
    always_web: bool,
    classifier: Classifier | None,
    threshold: float,
    follows: str | None = None,
) -> Route:
    """The path of one turn. Never raises: a failing classifier falls back to the rules.

    `follows`: the path of the previous question when this one is a follow-up of it. The
    classifier sees one utterance without its context ("tell me more" looks like small talk), so a
    follow-up of a document or web question keeps that path.
    """
    predicted, confidence, scores, source = "", 0.0, {}, "classifier"
    if classifier is not None:
        try:
            pred = classifier.predict(text)
            predicted, confidence = str(pred.label), float(pred.confidence)
            scores = {str(k): round(float(v), 4) for k, v in (getattr(pred, "scores", None) or {}).items()}
        except Exception as exc:  # noqa: BLE001 - degrade to the rules, the turn goes on
            log.warning("intent classifier failed (%s); routing by rules", type(exc).__name__)
            predicted = ""
    if not predicted or predicted not in LABELS:
        predicted, confidence, source = rule_intent(text), 1.0, "rules"
    label = predicted
    if source == "classifier" and confidence < threshold:
        label, source = "rag_search", "threshold"
    if label == "conversation_meta" and not _CONVERSATION_CUE.search(text):
        # "How quickly does the support team answer emails?" is about the documents, not this chat
        label, source = "rag_search", "rules"
    if follows in SEARCHES and label != follows and not _kept_by_its_words(label, text):
        label, source = follows, "follow-up"
    if always_web and label in SEARCHES:
        # the switch routes every *question* to the web; greetings and questions about the
        # conversation itself still get their own short answers
        label, source = "web_search", "switch"
    return Route(label=label, confidence=confidence, source=source, predicted=predicted, scores=scores)
