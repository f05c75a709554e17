"""Per-session conversation memory with four strategies.

- ``window`` (default): the last ``window_exchanges`` exchanges verbatim plus a running summary of
  the older ones;
- ``buffer``: every exchange verbatim;
- ``summary``: only a running summary of every exchange;
- ``none``: nothing.

Summaries are extractive at once (each folded exchange becomes "User asked …; Hark answered …" with
the first sentence of the answer), and, when a summariser callable is wired (the LLM chain, by the
Assistant), rewritten by it in a background thread so a turn never waits for a summary; when the
LLM gives nothing the extractive summary stays. ``history()`` — what a prompt receives — always stays
within ``history_token_budget`` (an approximate count: words and punctuation marks), dropping the
oldest verbatim exchanges first and then trimming the summary from its oldest end.

The user's questions are also kept in order (except with ``none``) so "what did I ask first?" can
be answered whatever the strategy folds away.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, get_args

from assistant.config import MemoryStrategy as Strategy

log = logging.getLogger(__name__)

STRATEGIES: tuple[str, ...] = get_args(Strategy)
# Summariser: the exchanges to fold (and the summary so far) → a new summary, or None to fall back.
Summariser = Callable[[str, list["Exchange"]], "str | None"]

_TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
CITATION = re.compile(r"\s*\[\d+(?:[,\s]+\d+)*\]")  # an answer's "[1]", "[1, 2]" and the space before it
# what a follow-up rewrite added to a query in parentheses ("Did the band tour (INXS)?"): the
# conversation's topic, not the person's words
ADDED = re.compile(r"\s*\([^)]*\)")


def count_tokens(text: str) -> int:
    """Approximate token count (words and punctuation marks); close to BPE counts for English."""
    return len(_TOKEN.findall(text or ""))


def first_sentence(text: str, max_words: int = 40) -> str:
    text = CITATION.sub("", " ".join((text or "").split()))
    sent = _SENTENCE.split(text, maxsplit=1)[0] if text else ""
    words = sent.split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")


@dataclass
class Exchange:
    """One user turn and Hark's reply."""

    user: str
    assistant: str
    intent: str = ""
    query: str = ""  # the standalone retrieval query actually used (after rewriting)
    sources: list[str] = field(default_factory=list)
    cut_off: bool = False  # the user interrupted the spoken answer


def extractive_summary(previous: str, exchanges: list[Exchange]) -> str:
    parts = [previous.strip()] if previous.strip() else []
    for ex in exchanges:
        answer = first_sentence(ex.assistant)
        parts.append(f"User asked: {first_sentence(ex.user)} Hark answered: {answer}".strip())
    return " ".join(parts)


def trim_to_budget(text: str, budget: int, *, keep: Literal["start", "end"] = "end") -> str:
    """Cut `text` to at most `budget` approximate tokens, keeping its start or its end."""
    if count_tokens(text) <= budget:
        return text
    words = text.split()
    # words are at least one token each, so shrink until the count fits
    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        part = words[-mid:] if keep == "end" else words[:mid]
        if count_tokens(" ".join(part)) <= budget - 1:
            lo = mid
        else:
            hi = mid - 1
    part = words[-lo:] if keep == "end" and lo else words[:lo]
    return ("… " + " ".join(part)) if keep == "end" else (" ".join(part) + " …")


class ConversationMemory:
    """What one session remembers. Thread-safe; owned by exactly one Session."""

    def __init__(
        self,
        strategy: Strategy = "window",
        window_exchanges: int = 10,
        token_budget: int = 1500,
        summariser: Summariser | None = None,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown memory strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
        self._strategy: Strategy = strategy
        self.window_exchanges = window_exchanges
        self.token_budget = token_budget
        self.summariser = summariser
        self._exchanges: list[Exchange] = []
        self._summary = ""
        self._questions: list[str] = []
        self._pending: list[Exchange] = []  # folded exchanges not yet in an LLM summary
        self._llm_base = ""  # the last summary the LLM wrote (or the extractive one it failed on)
        self._generation = 0
        self._idle = threading.Event()
        self._idle.set()
        self._lock = threading.RLock()

    # ---- strategy -------------------------------------------------------------------------------
    @property
    def strategy(self) -> Strategy:
        return self._strategy

    @strategy.setter
    def strategy(self, value: Strategy) -> None:
        if value not in STRATEGIES:
            raise ValueError(f"unknown memory strategy {value!r}; choose one of {', '.join(STRATEGIES)}")
        with self._lock:
            self._strategy = value
            if value == "none":
                self.clear()
            else:
                self._fold()

    # ---- reading ----------------------------------------------------------------------------------
    @property
    def exchanges(self) -> list[Exchange]:
        """The exchanges kept verbatim (a copy)."""
        with self._lock:
            return list(self._exchanges)

    @property
    def summary(self) -> str:
        with self._lock:
            return self._summary

    @property
    def questions(self) -> list[str]:
        """Every question the user asked in this session, in order (empty with strategy none)."""
        with self._lock:
            return list(self._questions)

    @property
    def last(self) -> Exchange | None:
        with self._lock:
            return self._exchanges[-1] if self._exchanges else None

    def state_key(self) -> tuple:
        """Everything a turn reads from the memory, as a comparable value (a turn run ahead is kept
        only while it is unchanged: `assistant.speculation`)."""
        with self._lock:
            kept = tuple((ex.user, ex.assistant, ex.cut_off) for ex in self._exchanges)
            return self._strategy, len(self._questions), self._summary, kept

    def history(self, budget: int | None = None) -> str:
        """The conversation so far as prompt text, within the token budget."""
        budget = self.token_budget if budget is None else budget
        with self._lock:
            summary = self._summary
            exchanges = list(self._exchanges)
        lines = [
            f"User: {ex.user}\nAssistant: {ex.assistant}" + (" [cut off: the user interrupted]" if ex.cut_off else "")
            for ex in exchanges
        ]
        # newest exchanges first take the budget; the summary gets what is left (at least a little)
        kept: list[str] = []
        used = 0
        for line in reversed(lines):
            cost = count_tokens(line) + 1
            if used + cost > budget:
                break
            kept.append(line)
            used += cost
        kept.reverse()
        dropped = len(lines) - len(kept)
        if dropped:
            # exchanges that did not fit are at least represented extractively
            summary = extractive_summary(summary, exchanges[:dropped])
        out: list[str] = []
        if summary:
            header = "Summary of the earlier conversation: "
            room = budget - used - count_tokens(header) - 1
            if room > 8:
                out.append(header + trim_to_budget(summary, room, keep="end"))
        out.extend(kept)
        return "\n".join(out)

    # ---- writing ----------------------------------------------------------------------------------
    def add(self, exchange: Exchange) -> None:
        with self._lock:
            if self._strategy == "none":
                return
            self._questions.append(exchange.user)
            self._exchanges.append(exchange)
            self._fold()

    def mark_cut_off(self) -> bool:
        """The user interrupted the latest answer while it was spoken; False when there is none."""
        with self._lock:
            if not self._exchanges:
                return False
            self._exchanges[-1].cut_off = True
            return True

    def note_question(self, question: str) -> None:
        """Record only that a question was asked (refused requests: never summarised, never in a prompt)."""
        with self._lock:
            if self._strategy != "none":
                self._questions.append(question)

    def clear(self) -> None:
        with self._lock:
            self._exchanges.clear()
            self._summary = ""
            self._questions.clear()
            self._pending.clear()
            self._llm_base = ""
            self._generation += 1  # a summary being written for the old conversation is dropped

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until no LLM summary is being written (tests, shutdown). True when idle."""
        return self._idle.wait(timeout)

    def _fold(self) -> None:
        """Move exchanges the strategy does not keep verbatim into the running summary.

        The extractive summary is updated at once, so the turn never waits for an LLM; when a
        summariser is wired, a background worker then rewrites the summary with it (one worker per
        memory, folds queued in order) and swaps it in.
        """
        if self._strategy == "buffer":
            return
        keep = self.window_exchanges if self._strategy == "window" else 0
        if len(self._exchanges) <= keep:
            return
        n_old = len(self._exchanges) - keep
        old, self._exchanges = self._exchanges[:n_old], self._exchanges[n_old:]
        self._summary = self._cap(extractive_summary(self._summary, old))
        if self.summariser is None:
            return
        self._pending.extend(old)
        if self._idle.is_set():
            self._idle.clear()
            threading.Thread(target=self._summarise_pending, name="memory-summary", daemon=True).start()

    def _cap(self, text: str) -> str:
        # the summary alone never exceeds half the prompt budget
        return trim_to_budget(text.strip(), max(16, self.token_budget // 2), keep="end")

    def _summarise_pending(self) -> None:
        try:
            while True:
                with self._lock:
                    batch, base, generation = list(self._pending), self._llm_base, self._generation
                    if not batch or self.summariser is None:
                        return
                text: str | None = None
                try:
                    text = self.summariser(base, batch)  # type: ignore[misc]
                except Exception as exc:  # noqa: BLE001 - the extractive summary stays
                    log.warning("LLM summary failed (%s); keeping the extractive summary", type(exc).__name__)
                with self._lock:
                    if generation != self._generation:
                        continue  # the conversation was cleared meanwhile
                    del self._pending[: len(batch)]
                    if text and text.strip():
                        self._llm_base = self._cap(text)
                        # exchanges folded while the LLM was writing are appended extractively
                        self._summary = self._cap(extractive_summary(self._llm_base, self._pending))
                    else:
                        # no LLM summary: keep the extractive one as the base, do not retry this batch
                        self._llm_base = self._summary
                        self._pending.clear()
                        return
        finally:
            self._idle.set()
