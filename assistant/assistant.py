"""`Assistant`: the one object the Gradio app, the terminal chat and `ask` talk to.

It owns the shared parts (models, the store, the LLM chain, web search; see `components.py`) and
hands out `Session`s, which own everything per conversation. `respond()` runs one turn (`turn.py`)
and yields typed events. Many sessions may call `respond()` at the same time from different
threads: the shared parts are built once under locks and are themselves thread-safe; nothing per
session is stored on the Assistant.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from assistant.components import Components
from assistant.config import HarkConfig
from assistant.events import AudioInput, Event
from assistant.memory import Exchange
from assistant.session import Session
from assistant.turn import Turn
from models.errors import HarkError

log = logging.getLogger(__name__)

_SUMMARY_SYSTEM = (
    "Summarise the conversation below in at most five sentences for later reference: keep the "
    "questions asked, the facts given and any names, numbers and documents mentioned. Reply with "
    "the summary only."
)


class Assistant:
    """Shared by every session of one app. Thread-safe."""

    def __init__(
        self,
        cfg: HarkConfig,
        *,
        embedder: Any = None,
        store: Any = None,
        classifier: Any = None,
        transcriber: Any = None,
        synthesiser: Any = None,
        **parts: Any,  # chain=, answerer=, websearch=, persona= (tests)
    ) -> None:
        self.cfg = cfg
        self.parts = Components(
            cfg,
            embedder=embedder,
            store=store,
            classifier=classifier,
            transcriber=transcriber,
            synthesiser=synthesiser,
            **parts,
        )
        self._warm_lock = threading.Lock()
        self._ingest_lock = threading.Lock()

    # ---- start-up -------------------------------------------------------------------------------
    def warm_up(self, *, speech: bool = True, tts: bool = True) -> None:
        """Load every model once (embedder, store, intent classifier, whisper, tts).

        A part that fails to load raises HarkError saying what to do. Safe to call repeatedly and
        from several threads.
        """
        wanted = [self.parts.embedder, self.parts.store, self.parts.retriever, self.parts.classifier]
        wanted += [self.parts.chain, self.parts.answerer, self.parts.persona]
        if speech:
            wanted.append(self.parts.transcriber)
        if tts and self.cfg.tts.enabled:
            wanted.append(self.parts.synthesiser)
        with self._warm_lock:
            for part in wanted:
                try:
                    part.get()
                except HarkError:
                    raise
                except Exception as exc:  # noqa: BLE001 - turned into a message with what to do
                    raise HarkError(
                        f"Could not load the {part.name}: {type(exc).__name__}: {str(exc)[:200]}",
                        "Run `python launch.py -v` for details; see README 'Set up on a fresh machine'.",
                    ) from exc

    # ---- sessions and turns ------------------------------------------------------------------------
    def new_session(self) -> Session:
        return Session.from_config(self.cfg, summariser=self._summarise)

    def respond(
        self, session: Session, user_input: str | AudioInput, cancel: threading.Event | None = None
    ) -> Iterator[Event]:
        """One turn: Transcript?, IntentEvent, Rewritten?, Sources?, Token*, Notice*, then Done."""
        event = session.begin_turn(cancel)
        try:
            yield from Turn(self.parts, session, event).run(user_input)
        finally:
            session.end_turn(event)

    def _summarise(self, previous: str, exchanges: list[Exchange]) -> str | None:
        """The memory's LLM summariser; None (→ extractive) without a provider."""
        if not self.parts.llm_available():
            return None
        convo = "\n".join(f"User: {ex.user}\nAssistant: {ex.assistant}" for ex in exchanges)
        earlier = f"Earlier summary: {previous}\n\n" if previous else ""
        messages = [
            {"role": "system", "content": _SUMMARY_SYSTEM},
            {"role": "user", "content": f"{earlier}Conversation:\n{convo[-6000:]}"},
        ]
        return self.parts.complete(messages, max_tokens=200)

    # ---- status -----------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """What is loaded and available, for the UI's status panel. Never contains a key."""
        emb = self.parts.embedder.peek()
        embedder: dict[str, Any] = {"loaded": emb is not None}
        warning = ""
        if emb is not None:
            embedder.update(
                identity=getattr(emb, "identity", ""),
                dim=getattr(emb, "dim", 0),
                is_fallback=bool(getattr(emb, "is_fallback", False)),
                fallback_reason=getattr(emb, "fallback_reason", ""),
            )
            if embedder["is_fallback"]:
                warning = f"Using the bundled all-MiniLM-L6-v2 embedder instead of CLIP: {embedder['fallback_reason']}"
        chain = self.parts.chain.get_or_none()
        providers = [(str(n), bool(ok)) for n, ok in chain.available()] if chain is not None else []
        store = self.parts.store.peek()
        chunks: int | None = None
        if store is not None:
            try:
                chunks = int(store.count())
            except Exception:  # noqa: BLE001 - a status panel must not fail
                chunks = None
        web = self.parts.websearch.get_or_none()
        return {
            "embedder": embedder,
            "is_fallback": bool(embedder.get("is_fallback", False)),
            "warning": warning,
            "providers": providers,
            "web_search": bool(web is not None and web.configured),
            "models_loaded": self.parts.loaded(),
            "errors": {p.name: p.error for p in self._all_parts() if p.error},
            "chunks": chunks,
        }

    def _all_parts(self) -> list[Any]:
        p = self.parts
        return [
            p.embedder,
            p.store,
            p.retriever,
            p.classifier,
            p.transcriber,
            p.synthesiser,
            p.chain,
            p.answerer,
        ]

    # ---- the library ------------------------------------------------------------------------------
    def ingest(self, paths: list[Path], progress: Callable[[float, str], None] | None = None) -> Any:
        """Index files/folders into the shared store (one ingestion at a time). → IngestReport."""
        from knowledge.ingest import Ingestor

        with self._ingest_lock:
            ingestor = Ingestor(self.parts.store.get(), self.parts.embedder.get(), self.cfg.ingest)
            return ingestor.ingest([Path(p) for p in paths], progress=progress)

    def documents(self) -> list[Any]:
        return list(self.parts.store.get().documents())

    def delete_document(self, source_path: str) -> None:
        with self._ingest_lock:
            self.parts.store.get().delete_document(source_path)

    # ---- speech out -------------------------------------------------------------------------------
    def synthesise(self, text: str) -> tuple[int, np.ndarray]:
        """Speech for `text` → (sample_rate, int16 samples). Raises HarkError when unavailable."""
        return self.parts.synthesiser.get().synthesise(text)
