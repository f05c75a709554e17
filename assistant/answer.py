"""The answer step of a turn: evidence + question → streamed, grounded, cited answer.

`Answerer.stream(...)` yields `Token`s, `Notice`s and finally exactly one `Answer` (a
`TracedAnswer`, whose `.trace` holds the per-provider attempts and timings — never a key).

Stream protocol for renderers (the Gradio app, the terminal, `ask --json`):
- `Token.text` is appended to the answer being shown. Citations in tokens are already filtered
  and renumbered, so the streamed text matches the final one for the default strategy.
- `Restart` (a `Notice` subclass, level "warning") means the provider broke off mid-answer: the
  text streamed so far is void — clear it, show the notice, and append the tokens that follow
  (the next provider answers from scratch; nothing is glued onto a half answer).
- The final `Answer.text` is authoritative: show it in place of the streamed text (they are the
  same text up to surrounding whitespace). For reasoning strategies with a final marker (cot,
  react) only the part after "Answer:" is streamed — the reasoning is neither shown nor spoken.
  `Answer.cited` are the cited hits, in the order [1], [2], …
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from assistant.answerability import Answerability, Decision, Signals
from assistant.config import LLMSettings, PromptSettings
from assistant.events import NOT_KNOWN, Answer, Notice, Restart, Token
from assistant.evidence import Evidence
from assistant.grounding import (
    CitationRewriter,
    has_evidence,
    is_not_known,
    parse_relevance,
    tidy,
)
from assistant.llm.chain import ChainResult, LLMChain, Switch
from assistant.llm.extractive import EmbedFn, ExtractiveAnswerer, JudgeFn
from assistant.prompts.builder import PromptBuilder
from knowledge.types import Hit
from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

STOPPED = "Stopped. That's what I had so far."

_REASONS = {
    "auth": "its key was refused",
    "rate_limit": "it is rate-limited",
    "server": "it had a server error",
    "timeout": "it did not answer in time",
    "connection": "it could not be reached",
    "truncated": "the connection dropped",
}


@dataclass
class TracedAnswer(Answer):
    trace: dict[str, Any] = field(default_factory=dict)


class Answerer:
    """One per app (thread-safe): the chain's provider health is shared by all sessions."""

    def __init__(
        self,
        llm_settings: LLMSettings,
        prompt_settings: PromptSettings,
        *,
        chain: LLMChain | None = None,
        builder: PromptBuilder | None = None,
        embed: EmbedFn | None = None,
        min_score: float | None = None,
        answerability: Answerability | None = None,
        judge: JudgeFn | None = None,
        judge_weight: float = 1.0,
        judge_candidates: int = 6,
    ) -> None:
        self.llm_settings = llm_settings
        self.prompt_settings = prompt_settings
        self.chain = chain or LLMChain(llm_settings)
        self.builder = builder or PromptBuilder(prompt_settings)
        self.answerability = answerability or Answerability(None)
        # the embedder ranks the sentences (`extractive_embedding`) or only measures the cosine of the
        # first few that the answerability model reads (`sentence_sim`)
        self.extractive = ExtractiveAnswerer(
            max_sentences=llm_settings.extractive_sentences,
            embed=embed,
            rank_by_embedding=llm_settings.extractive_embedding,
            similarity_candidates=self.answerability.sentence_candidates,
            judge=judge,
            judge_weight=judge_weight,
            judge_candidates=judge_candidates,
        )
        self.min_score = min_score  # only when no answerability decision is given

    def assess(
        self,
        question: str,
        evidence: Sequence[Hit],
        candidates: Sequence[Hit] = (),
        signals: Signals | None = None,
        answered: str | None = None,
    ) -> Decision:
        """Whether the documents answer `question`, the text that was searched (before any LLM
        call); the decision carries the ranked sentences the extractive answer is then composed
        from, ranked for `answered` (the user's own words, e.g. a follow-up) when that differs."""
        blocks = self.builder.blocks(evidence)
        words = signals.vocabulary if signals is not None else None  # the library's word counts
        ranked, sentence_sim = self.extractive.rank_with_similarity(question, blocks, words)
        decision = self.answerability.decide(question, blocks, candidates, ranked, signals, sentence_sim)
        if answered and answered != question:
            own = self.extractive.rank(answered, blocks, words)
            if own and own[0].coverage > 0:
                decision = dataclasses.replace(decision, ranked=own)
        return decision

    def answer(
        self, question: str, evidence: Sequence[Hit], history: str = "", **kwargs: Any
    ) -> TracedAnswer:
        """The whole answer at once (consumes `stream`)."""
        result: TracedAnswer | None = None
        for event in self.stream(question, evidence, history, **kwargs):
            if isinstance(event, TracedAnswer):
                result = event
        assert result is not None
        return result

    def stream(
        self,
        question: str,
        evidence: Sequence[Hit],
        history: str = "",
        *,
        profile: str | None = None,
        reasoning: str | None = None,
        relevant: bool = True,
        cancel: threading.Event | None = None,
        decision: Decision | None = None,
    ) -> Iterator[Token | Notice | Answer]:
        t0 = time.monotonic()
        profile, reasoning, notices = self._choose(profile, reasoning)
        yield from notices
        blocks = self.builder.blocks(evidence)
        trace: dict[str, Any] = {"profile": profile, "reasoning": reasoning, "blocks": len(blocks)}

        if decision is not None:
            trace["answerability"] = decision.to_trace()
        threshold = self.min_score if decision is None else None
        if not has_evidence(blocks, relevant, threshold) or (decision is not None and not decision.answerable):
            trace["grounding"] = (
                "no_evidence" if not blocks else "not_answerable" if decision is not None else "below_threshold"
            )
            yield Token(NOT_KNOWN)
            yield self._not_known("grounding", trace, t0)
            return
        if self.prompt_settings.relevance_check:
            verdict = self._relevance(question, blocks)
            trace["relevance_check"] = {True: "yes", False: "no", None: "no_verdict"}[verdict]
            if verdict is False:
                yield Token(NOT_KNOWN)
                yield self._not_known("relevance_check", trace, t0)
                return

        messages = self.builder.build(question, blocks, history, profile=profile, reasoning=reasoning)
        marker = self.builder.strategy(reasoning).final_marker
        rewriter, gate = CitationRewriter(len(blocks)), _MarkerGate(marker)
        restarts = 0
        first_token_ms: float | None = None
        result: ChainResult | None = None
        for item in self.chain.stream(
            messages, extractive=lambda: self._extractive(question, blocks, decision), cancel=cancel
        ):
            if isinstance(item, str):
                out = rewriter.feed(gate.feed(item))
                if out:
                    if first_token_ms is None:
                        first_token_ms = _ms(t0)
                    yield Token(out)
            elif isinstance(item, Switch):
                reason = _REASONS.get(item.reason, "it failed")
                if item.discard:
                    restarts += 1
                    rewriter, gate = CitationRewriter(len(blocks)), _MarkerGate(marker)
                    yield Restart(f"The answer from {item.provider} broke off ({reason}); starting again.")
                else:
                    yield Notice(f"{item.provider} is unavailable ({reason}); trying the next provider.")
            else:
                result = item
        tail = rewriter.feed(gate.finish()) + rewriter.finish()
        if tail:
            yield Token(tail)
        assert result is not None  # the chain always ends with a ChainResult
        final, text = rewriter, tidy(rewriter.text)
        trace.update(
            provider=result.provider,
            attempts=[a.to_dict() for a in result.attempts],
            restarts=restarts,
            cancelled=result.cancelled,
            first_token_ms=first_token_ms,
        )
        if result.cancelled:
            trace["total_ms"] = _ms(t0)
            yield TracedAnswer(text, result.provider or "cancelled", final.cited_hits(blocks), trace=trace)
            return
        if not text or is_not_known(text):
            yield self._not_known(result.provider, trace, t0)
            return
        cited = final.cited_hits(blocks)
        trace["cited"] = [h.chunk_id for h in cited]
        trace["total_ms"] = _ms(t0)
        yield TracedAnswer(text, result.provider, cited, trace=trace)

    # ------------------------------------------------------------------ helpers
    def _extractive(self, question: str, blocks: list[Hit], decision: Decision | None) -> str:
        if decision is not None and decision.ranked:
            return self.extractive.compose(question, self.extractive.judged(question, decision.ranked))
        return self.extractive.answer(question, blocks)

    def _choose(self, profile: str | None, reasoning: str | None) -> tuple[str, str, list[Notice]]:
        notices: list[Notice] = []
        try:
            profile = self.builder.profile(profile).name
        except HarkError as exc:
            notices.append(Notice(f"{exc.message}; using the default profile", "warning"))
            profile = self.builder.profile(None).name
        try:
            reasoning = self.builder.strategy(reasoning).name
        except HarkError as exc:
            notices.append(Notice(f"{exc.message}; using the default strategy", "warning"))
            reasoning = self.builder.strategy(None).name
        return profile, reasoning, notices

    def _relevance(self, question: str, blocks: list[Hit]) -> bool | None:
        timeout = min(self.llm_settings.first_token_timeout, 10.0)
        reply = self.chain.complete(
            self.builder.relevance_messages(question, blocks), max_tokens=4, timeout=timeout
        )
        return parse_relevance(reply)

    @staticmethod
    def _not_known(provider: str, trace: dict[str, Any], t0: float) -> TracedAnswer:
        trace.setdefault("provider", provider)
        trace["total_ms"] = _ms(t0)
        return TracedAnswer(NOT_KNOWN, provider, [], not_known=True, trace=trace)


def answer_turn(
    answerer: Answerer | None,
    question: str,
    evidence: Evidence,
    history: str,
    *,
    profile: str,
    reasoning: str,
    cancel: threading.Event,
    unavailable: str = "",
) -> Iterator[Token | Notice | Answer]:
    """The answer stage of a turn: `Answerer.stream`, kept whole when it fails or is cancelled.

    Yields what the answerer yields, then exactly one `Answer`: on cancel what was said so far
    (after a `STOPPED` notice); when the stream breaks, what was said with a notice saying so.
    `answerer` None: it could not be built (`unavailable` says why) or the turn was cancelled.
    """
    said: list[str] = []
    final: Answer | None = None
    if answerer is None and not cancel.is_set():
        yield Notice(f"Answers can't be written right now ({unavailable}).", "error")
    elif answerer is not None:
        try:
            for item in answerer.stream(question, evidence.hits, history, profile=profile, reasoning=reasoning,
                                        relevant=evidence.relevant, cancel=cancel,
                                        decision=evidence.decision):  # fmt: skip
                if isinstance(item, Answer):
                    final = item
                    continue
                if isinstance(item, Token):
                    said.append(item.text)
                elif isinstance(item, Restart):  # the partial answer is void
                    said.clear()
                yield item
                if cancel.is_set():
                    break
        except Exception as exc:  # noqa: BLE001 - keep what was said, say what failed
            log.exception("the answer stream failed")
            yield Notice(f"The answer could not be completed ({type(exc).__name__}).", "error")
    if cancel.is_set():
        yield Notice(STOPPED)
        if final is None:
            yield Answer(text="".join(said), provider="cancelled")
        else:  # the answerer's trace (attempts, timings) stays with what was said
            yield TracedAnswer("".join(said), final.provider, final.cited, trace=getattr(final, "trace", {}))
        return
    if final is None:
        text = "".join(said).strip()
        final = Answer(text=text or NOT_KNOWN, provider="none", not_known=not text)
    yield final


class _MarkerGate:
    """For strategies that reason before a final marker ("Answer:"): nothing passes until the
    marker has been seen, then only what follows it — so the reasoning is neither shown nor
    spoken. If the stream ends without the marker, the whole text passes at the end."""

    def __init__(self, marker: str | None) -> None:
        self.marker = marker
        self._open = not marker
        self._held = ""

    def feed(self, chunk: str) -> str:
        if self._open:
            return chunk
        self._held += chunk
        idx = self._held.find(self.marker or "")
        if idx < 0:
            return ""
        self._open = True
        out, self._held = self._held[idx + len(self.marker or "") :].lstrip(), ""
        return out

    def finish(self) -> str:
        out, self._held = self._held, ""
        return out if not self._open else ""


def _ms(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000.0, 2)

