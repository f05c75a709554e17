"""One turn of the conversation, as a stream of events (see `Assistant.respond`).

    user input ─hear→ Heard ─persona→ PersonaReply (refusal / about Hark) → Done
                            └route→ Route ─(greeting / conversation_meta)→ direct reply → Done
                                          └rewrite→ Question ─evidence→ Evidence ─answer→ Answer → Done
                                                           (Evidence.retrieval → Sources)

Each stage returns a typed value kept in `TurnState` (state.py); the trace line and the memory
exchange are built from that state when the turn ends, whatever path it took. No stage failure
ends the turn: it degrades and says so in a Notice. Cancelling stops the answer and ends the turn
with what was said so far.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext

from assistant.answer import STOPPED, answer_turn
from assistant.answerability import Signals
from assistant.components import Components
from assistant.events import (
    NOT_KNOWN,
    Answer,
    AudioInput,
    Done,
    Event,
    IntentEvent,
    Notice,
    Rewritten,
    Sources,
    Token,
    Transcript,
)
from assistant.evidence import Evidence, search_web
from assistant.hear import DIDNT_CATCH, NotHeard, hear
from assistant.meta import greeting_reply, meta_reply
from assistant.prefetch import DocumentSearch
from assistant.rewrite import FollowUpRewriter, Question, leans_on, rewrite_question
from assistant.routing import Route, library_may_answer, route, unsure_web
from assistant.session import Session
from assistant.state import TurnState, ms_since

log = logging.getLogger(__name__)

EMPTY = "Please type or say a question."


class Turn:
    """One running turn. Use `run()` once.

    A turn run ahead of the user's last word (`assistant.speculation`) passes `gate(kind)`, asked
    before a paid call ("llm", "web"), and `commit()`, asked before the memory and the trace are
    written; both may wait for the verdict, and False stops the call or the record."""

    def __init__(
        self,
        parts: Components,
        session: Session,
        cancel: threading.Event,
        gate: Callable[[str], bool] | None = None,
        commit: Callable[[], bool] | None = None,
    ) -> None:
        self.parts = parts
        self.cfg = parts.cfg
        self.session = session
        self.cancel = cancel
        self.state = TurnState(session_id=session.id)
        self._gate = gate or (lambda kind: True)
        self._commit = commit or (lambda: True)
        self.state.ahead = commit is not None

    def run(self, user_input: str | AudioInput) -> Iterator[Event]:
        t0 = time.perf_counter()
        answer: Answer | None = None
        try:
            for event in self._stages(user_input):
                if isinstance(event, Answer):
                    answer = event
                    continue
                if isinstance(event, Notice):
                    self.state.notices.append(event.text)
                yield event
        except Exception as exc:  # noqa: BLE001 - a bug in one stage must not end the conversation
            log.exception("turn failed")
            text = f"Something went wrong while answering ({type(exc).__name__}). Please try again."
            self.state.notices.append(text)
            yield Notice(text, "error")
        if answer is None:
            answer = Answer(text=NOT_KNOWN, provider="none", not_known=True)
        self.state.answer_trace = getattr(answer, "trace", None) or {}
        self.state.timings["total"] = ms_since(t0)
        yield Done(answer=answer, trace=self._finish(answer) if self._commit() else {})

    def _finish(self, answer: Answer) -> dict:
        st = self.state
        if st.text and st.intent == "refusal":  # a refused request never goes into a prompt or a summary
            self.session.memory.note_question(st.text)
        elif st.text:
            self.session.remember(st.exchange(answer))
        record = st.record(answer, cancelled=self.cancel.is_set(), memory=self.session.memory_strategy)
        return self.parts.trace.write(record)

    # ---- the stages, top to bottom ------------------------------------------------------------
    def _stages(self, user_input: str | AudioInput) -> Iterator[Event | Answer]:
        st = self.state
        st.input = "audio" if isinstance(user_input, AudioInput) else "text"
        with st.timed("transcribe") if st.input == "audio" else nullcontext():
            heard = hear(user_input, self.parts.transcriber)
        if isinstance(heard, NotHeard):
            st.audio_seconds = heard.audio_seconds
            yield Notice(heard.message, heard.level)
            yield Answer(text=heard.message, provider="speech")
            return
        st.heard, st.audio_seconds = heard, heard.audio_seconds
        if heard.input == "audio":
            yield Transcript(text=heard.text, seconds=heard.seconds)
        if not heard.text:
            yield Notice(EMPTY, "warning")
            yield Answer(text=EMPTY, provider="none")
            return

        with st.timed("persona"):
            st.persona = self.parts.persona.get().check(heard.text)
        if st.persona is not None:
            yield IntentEvent(st.intent, 1.0, source="persona")
            yield Token(st.persona.text)
            yield Answer(text=st.persona.text, provider="persona")
            return

        ahead = (
            heard.text if self.cfg.routing.prefetch_search and not self.session.always_web_search else None
        )
        with self.parts.document_search(ahead) as search:
            yield from self._route_and_answer(heard.text, search)

    def _route_and_answer(self, text: str, search: DocumentSearch) -> Iterator[Event | Answer]:
        st = self.state
        with st.timed("intent"):
            st.route = self._route(text)
        if library_may_answer(st.route, text):
            self._ask_the_library(text, search)
        heard = st.heard
        if (
            st.route.label == "greeting"
            and heard
            and heard.unsure_greeting(self.cfg.speech.short_speech_seconds)
        ):
            st.heard = None  # nothing was heard that can be answered (nor remembered)
            yield from (Notice(DIDNT_CATCH, "warning"), Answer(text=DIDNT_CATCH, provider="speech"))
            return
        if not st.route.searches:  # greeting, conversation_meta: a short reply, no retrieval
            yield IntentEvent(st.route.label, st.route.confidence, source=st.route.source)
            yield from self._direct(text, st.route.label)
            return

        st.question = st.question or self._rewrite(text)  # the library check may have rewritten it
        if unsure_web(st.route, text, self.cfg.routing.web_min_confidence):
            # not sure it is a web question: when the library answers it, answer from the library
            st.documents = self._search_documents(search, st.question.query)
            if st.documents.relevant:
                st.route = st.route.documents_first()
        yield IntentEvent(st.route.label, st.route.confidence, source=st.route.source)
        if st.question.rewritten:
            yield Rewritten(original=text, query=st.question.query)
        if self.cancel.is_set():
            yield Notice(STOPPED)
            yield Answer(text="", provider="none")
            return

        st.evidence = yield from self._evidence(st.route, st.question, search)
        yield from self._answer(st.question, st.evidence)

    def _ask_the_library(self, text: str, search: DocumentSearch) -> None:
        """A greeting or conversation label the words do not confirm: when the library answers the
        question, the turn answers from it (the search is kept for the answer or the trace)."""
        st = self.state
        st.question = self._rewrite(text)
        st.documents = self._search_documents(search, st.question.query)
        if st.documents.relevant and st.route is not None:
            st.route = st.route.from_library()
        else:
            st.question = None  # a direct reply: nothing was searched for it

    def _route(self, text: str) -> Route:
        last = self.session.memory.last
        inherit = last is not None and self.cfg.routing.follow_ups_inherit and leans_on(text, last)
        return route(
            text,
            always_web=self.session.always_web_search,
            classifier=self.parts.classifier.get_or_none(),
            threshold=self.cfg.routing.confidence_threshold,
            follows=last.intent if inherit and last is not None else None,
        )

    def _direct(self, text: str, label: str) -> Iterator[Event | Answer]:
        if label == "greeting":
            reply, provider = greeting_reply(text), "greeting"
        else:
            with self.state.timed("meta"):
                complete = self._complete if self.parts.llm_available() else None
                reply, provider = meta_reply(text, self.session.memory, complete)
        yield Token(reply)
        yield Answer(text=reply, provider=provider)

    def _rewrite(self, text: str) -> Question:
        if not self.cfg.routing.rewrite_follow_ups:
            return rewrite_question(text, self.session.memory, None)
        rewriter = FollowUpRewriter(self._complete, self.parts.llm_available)
        with self.state.timed("rewrite"):
            return rewrite_question(text, self.session.memory, rewriter)

    def _complete(self, messages: list, max_tokens: int = 256) -> str | None:
        """A short LLM completion (rewrite, meta), once the gate lets it be paid for."""
        return self.parts.complete(messages, max_tokens=max_tokens) if self._gate("llm") else None

    def _search_documents(self, search: DocumentSearch, query: str) -> Evidence:
        with self.state.timed("retrieve"):  # what the turn waited (a prefetch ran beside the intent)
            found = search.find(query)
        return self._decide(found)

    def _decide(self, found: Evidence) -> Evidence:
        """The answerability decision on the library's evidence, before any LLM call."""
        st = self.state
        answerer = self.parts.answerer.get_or_none()
        if answerer is None or not found.ok or st.question is None:
            return found
        heard = st.heard.confidence if st.heard is not None else None
        signals = Signals(
            intent_confidence=st.route.confidence if st.route is not None else None,
            avg_logprob=heard.avg_logprob if heard is not None else None,
            no_speech_prob=heard.no_speech_prob if heard is not None else None,
            library_level=found.retrieval.library_level if found.retrieval is not None else None,
            vocabulary=found.retrieval.vocabulary if found.retrieval is not None else None,
        )
        with st.timed("answerability"):  # judged on the text that was searched (a follow-up's standalone query)
            decision = answerer.assess(st.question.query, found.hits, found.candidates, signals, st.question.answered)
        return dataclasses.replace(found, relevant=decision.answerable, decision=decision)

    def _evidence(self, r: Route, question: Question, search: DocumentSearch) -> Iterator[Event]:
        """The web's evidence for a web route (when it has any), else the library's."""
        st = self.state
        if r.label == "web_search" and self._gate("web"):
            with st.timed("web"):
                st.web = search_web(self.parts.websearch.get(), question.query)
            yield from _notices(st.web)
            if st.web.retrieval is not None and st.web.hits:
                yield Sources(st.web.retrieval, kind="web")
                return st.web
            yield Notice("Answering from your documents instead.")
        if st.documents is None:
            st.documents = self._search_documents(search, question.query)
        yield from _notices(st.documents)
        if st.documents.retrieval is not None:
            yield Sources(st.documents.retrieval, kind="documents")
        return st.documents

    def _answer(self, question: Question, evidence: Evidence) -> Iterator[Event | Answer]:
        t = time.perf_counter()
        if evidence.relevant and self.parts.llm_available() and not self._gate("llm"):
            self.cancel.set()  # dropped before its answer was paid for
        answerer = None if self.cancel.is_set() else self.parts.answerer.get_or_none()
        s = self.session
        for item in answer_turn(answerer, question.answered, evidence, s.memory.history(), profile=s.profile,
                                reasoning=s.reasoning, cancel=self.cancel, unavailable=self.parts.answerer.error):  # fmt: skip
            if isinstance(item, Token) and "first_token" not in self.state.timings:
                self.state.timings["first_token"] = ms_since(t)
            yield item
        self.state.timings["answer"] = ms_since(t)


def _notices(evidence: Evidence) -> Iterator[Notice]:
    for text in evidence.errors:
        yield Notice(text, "error")
    for text in evidence.notices:
        yield Notice(text, "warning")
