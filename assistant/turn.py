"""One turn of the conversation, as a stream of events (see `Assistant.respond`).

audio → Transcript → persona (refusal / about Hark → Done) → intent → follow-up rewrite →
rag_search: retrieval → Sources → answer stream | web_search: SerpAPI → Sources(kind="web") →
answer stream | greeting / conversation_meta: a short direct reply → Done(answer, trace).

No stage failure ends the turn: it degrades and says so in a Notice. Cancelling stops the answer
and ends the turn with what was said so far. Memory is updated and one trace line appended at the
end of every turn, whatever path it took.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

from assistant.components import Components
from assistant.events import (
    NOT_KNOWN,
    Answer,
    AudioInput,
    Done,
    Event,
    IntentEvent,
    Notice,
    Restart,
    Rewritten,
    Sources,
    Token,
    Transcript,
)
from assistant.evidence import Found, search_documents
from assistant.memory import Exchange
from assistant.meta import greeting_reply, meta_reply
from assistant.prefetch import Prefetch
from assistant.rewrite import FollowUpRewriter, Rewrite, detect
from assistant.routing import Route, explicit_web, route
from assistant.session import Session
from assistant.trace import hit_scores
from knowledge.types import Hit

log = logging.getLogger(__name__)

STOPPED = "Stopped. That's what I had so far."
DIDNT_CATCH = "I didn't catch that. Please try again, or type your question."
_OWN_WORDS = ("what-about", "continuation")  # follow-ups that name their own subject


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)


class Turn:
    """The state of one running turn. Use `run()` once."""

    def __init__(self, parts: Components, session: Session, cancel: threading.Event) -> None:
        self.parts = parts
        self.cfg = parts.cfg
        self.session = session
        self.cancel = cancel
        self.timings: dict[str, float] = {}
        self.notices: list[str] = []
        self.trace: dict[str, Any] = {"turn_id": uuid.uuid4().hex[:12], "session_id": session.id}
        self.question = ""
        self.query = ""
        self.answer_question = ""
        self.label = ""
        self.path = ""  # where the evidence came from: rag_search (library) or web_search
        self.sources: list[Hit] = []
        self._prefetch: Prefetch | None = None  # the search for the turn's own words, started early

    # ---- the whole turn -----------------------------------------------------------------------
    def run(self, user_input: str | AudioInput) -> Iterator[Event]:
        t0 = time.perf_counter()
        answer: Answer | None = None
        try:
            for event in self._stages(user_input):
                if isinstance(event, Answer):
                    answer = event
                    continue
                if isinstance(event, Notice):
                    self.notices.append(event.text)
                yield event
        except Exception as exc:  # noqa: BLE001 - a bug in one stage must not end the conversation
            log.exception("turn failed")
            text = f"Something went wrong while answering ({type(exc).__name__}). Please try again."
            self.notices.append(text)
            yield Notice(text, "error")
        if self._prefetch is not None:  # never used (another path, or a rewritten query)
            self._prefetch.drop()
        if answer is None:
            answer = Answer(text=NOT_KNOWN, provider="none", not_known=True)
        self.timings["total"] = _ms(t0)
        record = self._finish(answer)
        yield Done(answer=answer, trace=record)

    def _finish(self, answer: Answer) -> dict[str, Any]:
        if self.question and self.label == "refusal":
            # a refused request never goes into a prompt or an LLM summary
            self.session.memory.note_question(self.question)
        elif self.question:
            self.session.remember(
                Exchange(
                    user=self.question,
                    assistant=answer.text,
                    intent=self.path or self.label,
                    query=self.query or self.question,
                    sources=[h.title or h.source_path for h in (answer.cited or self.sources)][:10],
                )
            )
        self.trace.update(
            question=self.question,
            query=self.query,
            provider=answer.provider,
            not_known=answer.not_known,
            cancelled=self.cancel.is_set(),
            answer_chars=len(answer.text),
            cited=[h.chunk_id for h in answer.cited],
            timings_ms=self.timings,
            notices=self.notices,
            memory=self.session.memory_strategy,
        )
        return self.parts.trace.write(self.trace)

    # ---- stages -------------------------------------------------------------------------------
    def _stages(self, user_input: str | AudioInput) -> Iterator[Event | Answer]:
        if isinstance(user_input, AudioInput):
            self.trace["input"] = "audio"
            text = yield from self._transcribe(user_input)
            if text is None:
                return
        else:
            self.trace["input"] = "text"
            text = str(user_input or "")
        text = " ".join(text.split())
        if not text:
            yield Notice("Please type or say a question.", "warning")
            yield Answer(text="Please type or say a question.", provider="none")
            return
        self.question = text

        t = time.perf_counter()
        persona = self.parts.persona.get().check(text)
        self.timings["persona"] = _ms(t)
        if persona is not None:
            self.label = "refusal" if persona.kind == "refusal" else "persona"
            self.trace["intent"] = {
                "label": self.label,
                "confidence": 1.0,
                "source": "persona",
                "topic": persona.topic,
            }
            yield IntentEvent(self.label, 1.0, source="persona")
            yield Token(persona.text)
            yield Answer(text=persona.text, provider="persona")
            return

        if self.cfg.routing.prefetch_search and not self.session.always_web_search:
            self._prefetch = self.parts.prefetcher.start(self.parts.retriever, text)
        r = self._route(text)
        if r.label in ("greeting", "conversation_meta"):
            yield IntentEvent(r.label, r.confidence, source=r.source)
            yield from self._direct(text, r.label)
            return

        self.query = text
        rw = self._rewrite(text)
        if rw.rewritten:
            self.query = rw.query
        # the answer is written for the question that carries the content words: the follow-up
        # itself when it names its subject ("and what about attendance?"), else the standalone query
        self.answer_question = text if rw.method == "heuristic" and rw.reason in _OWN_WORDS else self.query
        found: Found | None = None
        if (
            r.label == "web_search"
            and r.source == "classifier"
            and r.confidence < self.cfg.routing.web_min_confidence
            and not explicit_web(text)
        ):
            # not sure it is a web question: when the library answers it, answer from the library
            found = self._search_documents()
            if found.relevant:
                r.label, r.source = "rag_search", "documents-first"
                self.label = r.label
                self.trace["intent"].update(label=r.label, source=r.source)
        yield IntentEvent(r.label, r.confidence, source=r.source)
        if rw.rewritten:
            yield Rewritten(original=text, query=rw.query)
        if self.cancel.is_set():
            yield Notice(STOPPED)
            yield Answer(text="", provider="none")
            return

        evidence: list[Hit] = []
        relevant = False
        if r.label == "web_search":
            evidence, relevant = yield from self._web()
            self.path = "web_search" if evidence else ""
        if not evidence:
            self.path = "rag_search"  # a follow-up of this turn searches the library too
            evidence, relevant = yield from self._retrieve(found)
        self.sources = evidence
        yield from self._answer(evidence, relevant)

    def _direct(self, text: str, label: str) -> Iterator[Event | Answer]:
        """Greetings and questions about the conversation: a short reply, no retrieval."""
        if label == "greeting":
            reply, provider = greeting_reply(text), "greeting"
        else:
            t = time.perf_counter()
            reply, provider = meta_reply(text, self.session.memory, self._complete_or_none())
            self.timings["meta"] = _ms(t)
        yield Token(reply)
        yield Answer(text=reply, provider=provider)

    def _transcribe(self, audio: AudioInput) -> Iterator[Event | Answer]:
        from models.errors import HarkError

        t = time.perf_counter()
        transcriber = self.parts.transcriber.get_or_none()
        if transcriber is None:
            msg = f"Speech recognition is unavailable ({self.parts.transcriber.error}). Please type your question."
            yield Notice(msg, "error")
            yield Answer(text=msg, provider="speech")
            return None
        try:
            if audio.path:
                result = transcriber.transcribe(audio.path)
            else:
                result = transcriber.transcribe(audio.samples, sample_rate=audio.sample_rate)
        except HarkError as exc:  # SpeechInputError: empty, silent, too short/long, unreadable
            self.timings["transcribe"] = _ms(t)
            msg = exc.message if exc.message.lower().startswith("i didn't catch") else DIDNT_CATCH
            yield Notice(msg, "warning")
            yield Answer(text=msg, provider="speech")
            return None
        except Exception as exc:  # noqa: BLE001 - a decoder bug is still "didn't catch that"
            log.warning("transcription failed: %s", type(exc).__name__)
            self.timings["transcribe"] = _ms(t)
            yield Notice(DIDNT_CATCH, "warning")
            yield Answer(text=DIDNT_CATCH, provider="speech")
            return None
        self.timings["transcribe"] = _ms(t)
        self.trace["audio_seconds"] = round(float(getattr(result, "duration", 0.0) or 0.0), 2)
        text = (result.text or "").strip()
        if not text:
            yield Notice(DIDNT_CATCH, "warning")
            yield Answer(text=DIDNT_CATCH, provider="speech")
            return None
        yield Transcript(text=text, seconds=float(result.seconds))
        return text

    def _route(self, text: str) -> Route:
        t = time.perf_counter()
        classifier = self.parts.classifier.get_or_none()
        last = self.session.memory.last
        follows = (
            last.intent
            if last is not None and self.cfg.routing.follow_ups_inherit and detect(text, last)
            else None
        )
        r = route(
            text,
            always_web=self.session.always_web_search,
            classifier=classifier,
            threshold=self.cfg.routing.confidence_threshold,
            follows=follows,
        )
        self.timings["intent"] = _ms(t)
        self.label = r.label
        self.trace["intent"] = {
            "label": r.label,
            "confidence": round(r.confidence, 4),
            "source": r.source,
            "predicted": r.predicted,
        }
        return r

    def _complete_or_none(self):  # noqa: ANN202 - a callable or None
        return self.parts.complete if self.parts.llm_available() else None

    def _rewrite(self, text: str) -> Rewrite:
        if not self.cfg.routing.rewrite_follow_ups:
            return Rewrite(text, text, "none")
        t = time.perf_counter()
        memory = self.session.memory
        rewriter = FollowUpRewriter(self.parts.complete, self.parts.llm_available)
        try:
            rw = rewriter.rewrite(text, memory.last, memory.history(budget=600))
        except Exception as exc:  # noqa: BLE001 - keep the question as it is
            log.warning("follow-up rewrite failed (%s)", type(exc).__name__)
            rw = Rewrite(text, text, "none")
        self.timings["rewrite"] = _ms(t)
        self.trace["rewrite"] = {
            "original": rw.original,
            "query": rw.query,
            "method": rw.method,
            "reason": rw.reason,
        }
        return rw

    def _web(self) -> Iterator[Event]:
        t = time.perf_counter()
        results = self.parts.websearch.get().search(self.query)
        self.timings["web"] = _ms(t)
        self.trace["web"] = {"ok": results.ok, "results": len(results.hits)}
        for n in results.notices:
            yield Notice(n, "warning")
        if not results.hits:
            yield Notice("Answering from your documents instead.")
            return [], False
        self.trace["reranked"] = hit_scores(results.hits)
        yield Sources(hits=results.hits, candidates=[], kind="web")
        return results.hits, True

    def _search_documents(self) -> Found:
        """Retrieval for the current query, without events (failures become messages in the result)."""
        t = time.perf_counter()
        found = self._prefetch.take(self.query) if self._prefetch is not None else None
        self._prefetch = None
        self.trace["prefetched"] = found is not None
        if found is None:
            found = search_documents(self.parts.retriever, self.query)
        self.timings["retrieve"] = _ms(t)  # what the turn waited (a prefetch ran beside the intent)
        self.timings.update({f"retrieve.{k}": v for k, v in found.timings_ms.items()})
        if found.ok:
            self.trace["candidates"] = hit_scores(found.candidates)
            self.trace["reranked"] = hit_scores(found.hits)
            self.trace["relevant"] = found.relevant
        return found

    def _retrieve(self, found: Found | None = None) -> Iterator[Event]:
        found = found if found is not None else self._search_documents()
        for text in found.errors:
            yield Notice(text, "error")
        for text in found.notices:
            yield Notice(text, "warning")
        if not found.ok:
            return [], False
        yield Sources(hits=found.hits, candidates=found.candidates, kind="documents")
        return found.hits, found.relevant

    def _answer(self, evidence: list[Hit], relevant: bool) -> Iterator[Event | Answer]:
        t = time.perf_counter()
        said: list[str] = []
        final: Answer | None = None
        answerer = self.parts.answerer.get_or_none() if not self.cancel.is_set() else None
        if answerer is None and not self.cancel.is_set():
            yield Notice(f"Answers can't be written right now ({self.parts.answerer.error}).", "error")
        elif answerer is not None:
            try:
                stream = answerer.stream(
                    self.answer_question or self.query,
                    evidence,
                    self.session.memory.history(),
                    profile=self.session.profile,
                    reasoning=self.session.reasoning,
                    relevant=relevant,
                    cancel=self.cancel,
                )
                for item in stream:
                    if isinstance(item, Token):
                        if "first_token" not in self.timings:
                            self.timings["first_token"] = _ms(t)
                        said.append(item.text)
                        yield item
                    elif isinstance(item, Answer):
                        final = item
                    elif isinstance(item, Notice):
                        if isinstance(item, Restart):  # the partial answer is void
                            said.clear()
                        yield item
                    if self.cancel.is_set():
                        break
            except Exception as exc:  # noqa: BLE001 - keep what was said, say what failed
                log.exception("the answer stream failed")
                yield Notice(f"The answer could not be completed ({type(exc).__name__}).", "error")
        self.timings["answer"] = _ms(t)
        if final is not None and getattr(final, "trace", None):
            self.trace["answer"] = final.trace  # profile, reasoning, provider attempts (no keys)
        if self.cancel.is_set():
            yield Notice(STOPPED)
            provider = final.provider if final else "cancelled"
            yield Answer(text="".join(said), provider=provider, cited=final.cited if final else [])
            return
        if final is None:
            text = "".join(said).strip()
            final = Answer(text=text or NOT_KNOWN, provider="none", not_known=not text)
        yield final
