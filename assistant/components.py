"""The shared, lazily built parts of an Assistant: models, the store, the LLM chain, web search.

Every part is built at most once, on first use or in `warm_up()`, under its own lock, and then
shared by every session. A part can be injected (tests, the app) instead of built from the config.
`Components.all` lists the parts once, in the order they are built.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from assistant.config import HarkConfig
from assistant.llm.base import Message
from assistant.persona import Persona
from assistant.prefetch import DocumentSearch, Prefetcher
from assistant.trace import TraceLog
from assistant.websearch import WebSearch

if TYPE_CHECKING:
    from assistant.answer import Answerer
    from assistant.llm.chain import LLMChain
    from assistant.llm.extractive import JudgeFn
    from knowledge.retrieve import Retriever
    from knowledge.store import ChunkStore
    from models.embedder import Embedder
    from models.intent import IntentClassifier
    from models.speech import Transcriber
    from models.tts import Synthesiser

log = logging.getLogger(__name__)
T = TypeVar("T")


class Lazy(Generic[T]):
    """A value built once by `factory`, thread-safe. A failed build is retried on the next call.

    `model`: a model or store held in memory (listed in the status as loaded or not)."""

    def __init__(self, name: str, factory: Callable[[], T], value: T | None = None, *, model: bool = False) -> None:
        self.name = name
        self.model = model
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
        self.embedder: Lazy[Embedder] = Lazy("embedder", self._make_embedder, embedder, model=True)
        self.store: Lazy[ChunkStore] = Lazy("document store", self._make_store, store, model=True)
        self.retriever: Lazy[Retriever] = Lazy("retriever", self._make_retriever)
        self.classifier: Lazy[IntentClassifier] = Lazy(
            "intent classifier", self._make_classifier, classifier, model=True
        )
        self.chain: Lazy[LLMChain] = Lazy("LLM chain", self._make_chain, chain, model=True)
        self.answerer: Lazy[Answerer] = Lazy("answerer", self._make_answerer, answerer)
        self.persona: Lazy[Persona] = Lazy("persona", Persona, persona)
        self.transcriber: Lazy[Transcriber] = Lazy(
            "speech recogniser", self._make_transcriber, transcriber, model=True
        )
        self.synthesiser: Lazy[Synthesiser] = Lazy(
            "speech synthesiser", self._make_synthesiser, synthesiser, model=True
        )
        self.websearch: Lazy[WebSearch] = Lazy("web search", lambda: WebSearch(cfg.websearch), websearch)
        self.trace = TraceLog(cfg.path(cfg.trace.path))
        self.prefetcher = Prefetcher()  # document searches started beside the intent classifier

    @property
    def all(self) -> tuple[Lazy[Any], ...]:
        """Every part, in build order (`warm_up` builds them in this order)."""
        return (self.embedder, self.store, self.retriever, self.classifier, self.chain, self.answerer,
                self.persona, self.transcriber, self.synthesiser, self.websearch)  # fmt: skip

    def document_search(self, ahead: str | None = None) -> DocumentSearch:
        """One turn's library search, searching for `ahead` already (None: no prefetch)."""
        return DocumentSearch(self.retriever, self.prefetcher, ahead)

    # ---- factories (imports are lazy: torch, lancedb, faster-whisper load only when needed) ------
    def _make_embedder(self) -> Embedder:
        from knowledge.open_library import open_embedder

        return open_embedder(self.cfg.embedder)

    def _make_store(self) -> ChunkStore:
        from knowledge.open_library import open_store

        return open_store(self.embedder.get(), self.cfg.store, self.cfg.lancedb_uri)

    def _make_retriever(self) -> Retriever:
        from knowledge.retrieve import Retriever

        return Retriever(self.embedder.get(), self.store.get(), self.cfg.retrieval)

    def _make_classifier(self) -> IntentClassifier:
        from models.intent import IntentClassifier

        clf = IntentClassifier(self.cfg.intent, self.cfg.base_dir)
        clf.warm_up()
        clf.predict("Hark is warming up.")  # the tokenizer's configured copy and the first run: not in the first turn
        return clf

    def _make_transcriber(self) -> Transcriber:
        from assistant.library_terms import LibraryTerms
        from models.speech import Transcriber

        tr = Transcriber(self.cfg.speech)
        # the library's terms bias every pass (knowledge/vocabulary.py); the file the last ingest
        # wrote is read now (a loaded store only: nothing is built for it)
        terms = LibraryTerms(self.store.peek, on_change=tr.index_terms)
        terms.refresh()
        tr.vocabulary = terms
        if self.cfg.speech.warm_up:
            tr.warm_up()
        return tr

    def _make_synthesiser(self) -> Synthesiser:
        from models.runtime.errors import HarkError
        from models.tts import Synthesiser

        synth = Synthesiser(self.cfg.tts)
        if self.cfg.tts.warm_up:
            try:
                synth.warm_up(_said_often())
            except HarkError as exc:  # spoken answers are optional: the app starts, speaking says why not
                log.warning("spoken answers unavailable: %s", exc.message)
        return synth

    def _make_chain(self) -> LLMChain:
        from assistant.llm.chain import LLMChain

        chain = LLMChain(self.cfg.llm)
        chain.warm_up()  # SDK imports and clients now, not inside the first answer's first-token clock
        return chain

    def _make_answerer(self) -> Answerer:
        from assistant import answer_rules
        from assistant.answer import Answerer
        from assistant.answerability import Answerability

        answer_rules.warm_up()  # the word-frequency lists (~0.5 s): at start, not in the first answer
        emb = self.embedder.get_or_none()  # the extractive answerer ranks sentences with it
        if emb is not None:
            # an answer embeds its sentences as one batch, on the embedder's batch session: made
            # now, not in the first answer (~0.2 s)
            emb.embed_documents(["Hark is warming up.", "The first answer is not the slow one."])
        answerer = Answerer(
            self.cfg.llm,
            self.cfg.prompts,
            chain=self.chain.get(),
            embed=emb.embed_documents if emb is not None else None,
            min_score=self.cfg.retrieval.min_score,
            # coefficients fitted per embedder (cosines differ between embedders); another one calibrated
            answerability=Answerability.for_embedder(emb),
            judge=load_judge(self.cfg),
            judge_weight=self.cfg.judge.weight,
            judge_candidates=self.cfg.judge.candidates,
        )
        answerer.builder.warm_up()
        return answerer

    # ---- helpers used by the turn -----------------------------------------------------------------
    def llm_available(self) -> bool:
        """Whether a real LLM provider (not the extractive fallback) could answer."""
        try:
            chain = self.chain.get()
            return any(ok for name, ok in chain.available() if name != "extractive")
        except Exception:  # noqa: BLE001 - no chain → no LLM
            return False

    def complete(self, messages: list[Message], max_tokens: int = 256) -> str | None:
        """One short LLM completion (rewrite, summary, meta), or None when no provider answers."""
        if not self.llm_available():
            return None
        # a helper call (rewrite, summary, meta) must not hold a turn as long as an answer may
        timeout = min(self.cfg.llm.first_token_timeout, 10.0)
        return self.chain.get().complete(messages, max_tokens=max_tokens, timeout=timeout)

    def loaded(self) -> dict[str, bool]:
        """Which models (and the store) are in memory."""
        return {p.name: p.loaded for p in self.all if p.model}

    def errors(self) -> dict[str, str]:
        """Why each part that failed to build did."""
        return {p.name: p.error for p in self.all if p.error}


def load_judge(cfg: HarkConfig) -> JudgeFn | None:
    """The sentence judge's scoring, loaded now (the offline answer's first use is not the slow
    one); None when it is off or cannot load: the offline answer then ranks by words alone."""
    if not cfg.judge.enabled:
        return None
    from models.runtime.errors import HarkError
    from models.sentence_judge import SentenceJudge

    judge = SentenceJudge(cfg.judge, cfg.base_dir)
    try:
        judge.warm_up()
        judge.logits("Hark is warming up.", ["The first answer is not the slow one."])
    except HarkError as exc:
        log.warning("the sentence judge is unavailable: %s", exc.message)
        return None
    return judge.logits


def _said_often() -> list[str]:
    """The spoken pieces of the "not known" answer: rendered at warm-up, heard at once."""
    from assistant.events import NOT_KNOWN
    from assistant.speak import SentenceSplitter

    splitter = SentenceSplitter()
    return splitter.feed(NOT_KNOWN) + splitter.flush()
