"""The state of one turn: what each stage returned, in the order the stages run.

    Heard → (PersonaReply | Route) → Question → Evidence → Answer

A stage fills its field once and later stages read it; nothing is patched after the fact. The trace
record (`record()`) and the memory exchange (`exchange()`) are built from these values, here only.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from assistant.events import Answer
from assistant.evidence import Evidence
from assistant.hear import Heard
from assistant.memory import Exchange
from assistant.persona import PersonaReply
from assistant.rewrite import Question
from assistant.routing import Route
from assistant.trace import hit_scores

_INTENT = {"documents": "rag_search", "web": "web_search"}


@dataclass
class TurnState:
    session_id: str
    input: Literal["text", "audio"] = "text"
    turn_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    heard: Heard | None = None  # None: nothing could be heard (see the notices)
    audio_seconds: float | None = None  # the recording's length, also when nothing was heard in it
    persona: PersonaReply | None = None  # the persona answered (no route)
    route: Route | None = None
    question: Question | None = None
    documents: Evidence | None = None  # the library search, when one ran
    web: Evidence | None = None  # the web search, when one ran
    evidence: Evidence | None = None  # what the answer was written from
    answer_trace: dict[str, Any] = field(default_factory=dict)  # the answerer's (no keys)
    timings: dict[str, float] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    ahead: bool = False  # run ahead of the user's last word, then adopted (assistant.speculation)

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        t = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = ms_since(t)

    @property
    def text(self) -> str:
        """The question as heard ("" when there was none)."""
        return self.heard.text if self.heard is not None else ""

    @property
    def intent(self) -> str:
        """The path this turn took, as memory keeps it (a follow-up inherits it)."""
        if self.evidence is not None:
            return _INTENT[self.evidence.kind]
        if self.persona is not None:
            return "refusal" if self.persona.kind == "refusal" else "persona"
        return self.route.label if self.route is not None else ""

    def exchange(self, answer: Answer) -> Exchange:
        hits = answer.cited or (self.evidence.hits if self.evidence is not None else [])
        query = self.question.query if self.question is not None else ""
        return Exchange(
            user=self.text,
            assistant=answer.text,
            intent=self.intent,
            query=query or self.text,
            sources=[h.title or h.source_path for h in hits][:10],
        )

    def record(self, answer: Answer, *, cancelled: bool, memory: str) -> dict[str, Any]:
        """The trace line of this turn (`trace.TraceLog` scrubs and writes it)."""
        rec: dict[str, Any] = {"turn_id": self.turn_id, "session_id": self.session_id, "input": self.input}
        if self.audio_seconds is not None:
            rec["audio_seconds"] = self.audio_seconds
        if self.ahead:
            rec["ahead"] = True
        if self.persona is not None:
            rec["intent"] = {"label": self.intent, "confidence": 1.0, "source": "persona",
                             "topic": self.persona.topic}  # fmt: skip
        elif self.route is not None:
            r = self.route
            rec["intent"] = {"label": r.label, "confidence": round(r.confidence, 4), "source": r.source,
                             "predicted": r.predicted}  # fmt: skip
        if self.question is not None and self.question.rewrite is not None:
            rw = self.question.rewrite
            rec["rewrite"] = {"original": rw.original, "query": rw.query, "method": rw.method, "reason": rw.reason}
        timings = dict(self.timings)
        if self.documents is not None:
            rec["prefetched"] = self.documents.prefetched
            timings.update({f"retrieve.{k}": v for k, v in self.documents.timings_ms.items()})
            if self.documents.ok:
                rec["candidates"] = hit_scores(self.documents.candidates)
                rec["reranked"] = hit_scores(self.documents.hits)
                rec["relevant"] = self.documents.relevant
                if self.documents.decision is not None:
                    rec["answerability"] = self.documents.decision.to_trace()
        if self.web is not None:
            rec["web"] = {"ok": self.web.ok, "results": len(self.web.hits)}
            if self.web.hits:
                rec["reranked"] = hit_scores(self.web.hits)
        if self.answer_trace:
            rec["answer"] = self.answer_trace  # profile, reasoning, provider attempts
        rec.update(
            question=self.text,
            query=self.question.query if self.question is not None else "",
            provider=answer.provider,
            not_known=answer.not_known,
            cancelled=cancelled,
            answer_chars=len(answer.text),
            cited=[h.chunk_id for h in answer.cited],
            timings_ms=timings,
            notices=self.notices,
            memory=memory,
        )
        return rec


def ms_since(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)
