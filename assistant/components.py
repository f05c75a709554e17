"""The shared, lazily built parts of an Assistant: models, the store, the LLM chain, web search.

Every part is built at most once, on first use or in `warm_up()`, under its own lock, and then
shared by every session. A part can be injected (tests, the app) instead of built from the config.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from assistant.config import HarkConfig
from assistant.persona import Persona
from assistant.prefetch import Prefetcher
from assistant.trace import TraceLog
from assistant.websearch import WebSearch

log = logging.getLogger(__name__)
T = TypeVar("T")


class Lazy(Generic[T]):
    """A value built once by `factory`, thread-safe. A failed build is retried on the next call."""

    def __init__(self, name: str, factory: Callable[[], T], value: T | None = None) -> None:
        self.name = name
        self._factory = factory
        self._value = value
        self._lock = threading.Lock()
        self.error = ""  # why the last build failed

    @property
    def loaded(self) -> bool:
        return self._value is not None

    def peek(self) -> T | None:
        return self._value

    def get(self) -> T:
        """The value, built now if needed. Raises what the factory raises."""
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._factory()
                    self.error = ""
                    log.debug("%s ready", self.name)
        return self._value  # type: ignore[return-value]

    def get_or_none(self) -> T | None:
        """The value, or None when it cannot be built (the reason is kept in `error`, logged once)."""
        try:
            return self.get()
        except Exception as exc:  # noqa: BLE001 - the caller degrades
            reason = str(getattr(exc, "message", "") or exc) or type(exc).__name__
            if reason != self.error:
                log.warning("%s unavailable: %s", self.name, reason)
            self.error = reason
            return None


class Components:
    """Everything a turn needs that is shared between sessions."""

    def __init__(
        self,
        cfg: HarkConfig,
        *,
        embedder: Any = None,
        store: Any = None,
        classifier: Any = None,
        transcriber: Any = None,
        synthesiser: Any = None,
        chain: Any = None,
        answerer: Any = None,
        websearch: WebSearch | None = None,
        persona: Persona | None = None,
    ) -> None:
        self.cfg = cfg
        self.embedder = Lazy("embedder", self._make_embedder, embedder)
        self.store = Lazy("document store", self._make_store, store)
        self.retriever = Lazy("retriever", self._make_retriever)
        self.classifier = Lazy("intent classifier", self._make_classifier, classifier)
        self.transcriber = Lazy("speech recogniser", self._make_transcriber, transcriber)
        self.synthesiser = Lazy("speech synthesiser", self._make_synthesiser, synthesiser)
        self.chain = Lazy("LLM chain", self._make_chain, chain)
        self.answerer = Lazy("answerer", self._make_answerer, answerer)
        self.websearch = Lazy("web search", lambda: WebSearch(cfg.websearch), websearch)
        self.persona = Lazy("persona", Persona, persona)
        self.trace = TraceLog(cfg.path(cfg.trace.path))
        self.prefetcher = Prefetcher()  # document searches started beside the intent classifier

    # ---- factories (imports are lazy: torch, lancedb, faster-whisper load only when needed) ------
    def _make_embedder(self) -> Any:
        from models.embedder import load_embedder

        return load_embedder(self.cfg.embedder)

    def _make_store(self) -> Any:
        from knowledge.store import ChunkStore

        emb = self.embedder.get()
        return ChunkStore.open(self.cfg.lancedb_uri, emb.identity, emb.dim, self.cfg.store)

    def _make_retriever(self) -> Any:
        from knowledge.retrieve import Retriever

        return Retriever(self.embedder.get(), self.store.get(), self.cfg.retrieval)

    def _make_classifier(self) -> Any:
        from models.intent import IntentClassifier

        clf = IntentClassifier(self.cfg.intent, self.cfg.base_dir)
        clf.warm_up()
        return clf

    def _make_transcriber(self) -> Any:
        from models.speech import Transcriber

        tr = Transcriber(self.cfg.speech)
        if self.cfg.speech.warm_up:
            tr.warm_up()
        return tr

    def _make_synthesiser(self) -> Any:
        from models.tts import Synthesiser

        synth = Synthesiser(self.cfg.tts)
        if self.cfg.tts.warm_up:
            synth.warm_up()
        return synth

    def _make_chain(self) -> Any:
        from assistant.llm.chain import LLMChain

        chain = LLMChain(self.cfg.llm)
        chain.warm_up()  # SDK imports and clients now, not inside the first answer's first-token clock
        return chain

    def _make_answerer(self) -> Any:
        from assistant.answer import Answerer

        emb = self.embedder.get_or_none()  # the extractive answerer ranks sentences with it
        return Answerer(
            self.cfg.llm,
            self.cfg.prompts,
            chain=self.chain.get(),
            embed=emb.embed_documents if emb is not None else None,
            min_score=self.cfg.retrieval.min_score,
        )

    # ---- helpers used by the turn -----------------------------------------------------------------
    def llm_available(self) -> bool:
        """Whether a real LLM provider (not the extractive fallback) could answer."""
        try:
            chain = self.chain.get()
            return any(ok for name, ok in chain.available() if name != "extractive")
        except Exception:  # noqa: BLE001 - no chain → no LLM
            return False

    def complete(self, messages: list[dict[str, str]], max_tokens: int = 256) -> str | None:
        """One short LLM completion (rewrite, summary, meta), or None when no provider answers."""
        if not self.llm_available():
            return None
        from assistant.llm.base import Message

        chain = self.chain.get()
        msgs = [Message(m["role"], m["content"]) for m in messages]  # type: ignore[arg-type]
        # a helper call (rewrite, summary, meta) must not hold a turn as long as an answer may
        return chain.complete(
            msgs, max_tokens=max_tokens, timeout=min(self.cfg.llm.first_token_timeout, 10.0)
        )

    def loaded(self) -> dict[str, bool]:
        parts = (self.embedder, self.store, self.classifier, self.transcriber, self.synthesiser, self.chain)
        return {p.name: p.loaded for p in parts}
