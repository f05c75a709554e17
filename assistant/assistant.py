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
from assistant.listening import Listening
from assistant.llm.base import Message
from assistant.memory import Exchange
from assistant.session import Session
from assistant.speculation import conversation_key
from assistant.turn import Turn
from assistant.watch import FolderWatcher
from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

_SUMMARY_SYSTEM = (
    "Summarise the conversation below in at most five sentences for later reference: keep the "
    "questions asked, the facts given and any names, numbers and documents mentioned. Reply with "
    "the summary only."
)


QUOTE_FOUND = 0.6  # share of a quote's words on the page for the highlight to be the quote's


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
        self.listening = Listening(self.parts)  # live transcription and barge-in (the voice loop)
        self._warm_lock = threading.Lock()
        self._ingest_lock = threading.Lock()
        self._watcher: FolderWatcher | None = None
        self._reindexing = ""  # what the automatic re-index is doing, for the status panel
        # an injected store cannot be rebuilt by an ingest child; an injected embedder is checked by identity
        self._injected = {name for name, part in (("embedder", embedder), ("store", store)) if part is not None}

    # ---- start-up -------------------------------------------------------------------------------
    def warm_up(
        self, *, speech: bool = True, tts: bool = True, on_loaded: Callable[[str], None] | None = None
    ) -> None:
        """Load every model once (embedder, store, intent classifier, whisper, tts).

        A part that fails to load raises HarkError saying what to do. Safe to call repeatedly and
        from several threads. `on_loaded(name)` runs after each part is ready (a benchmark reads
        the memory each part adds there).
        """
        p = self.parts
        skip = {p.websearch} | ({p.transcriber} if not speech else set())
        skip |= {p.synthesiser} if not (tts and self.cfg.tts.enabled) else set()
        wanted = [part for part in p.all if part not in skip]
        with self._warm_lock:
            for part in wanted:
                try:
                    part.get()
                    if on_loaded is not None:
                        on_loaded(part.name)
                except HarkError:
                    raise
                except Exception as exc:  # noqa: BLE001 - turned into a message with what to do
                    raise HarkError(
                        f"Could not load the {part.name}: {type(exc).__name__}: {str(exc)[:200]}",
                        "Run `python launch.py -v` for details; see README 'Set up on a fresh machine'.",
                    ) from exc
            if p.transcriber in wanted:
                self.listening.warm_up()
            self.library_changed(refresh=False)

    # ---- sessions and turns ------------------------------------------------------------------------
    def new_session(self) -> Session:
        return Session.from_config(self.cfg, summariser=self._summarise)

    def respond(
        self, session: Session, user_input: str | AudioInput, cancel: threading.Event | None = None
    ) -> Iterator[Event]:
        """One turn: Transcript?, IntentEvent, Rewritten?, Sources?, Token*, Notice*, then Done.

        A spoken turn whose words were run ahead while the user paused (`assistant.speculation`) is
        that turn, adopted: its events so far at once, then the rest."""
        ahead = session.take_ahead()
        if ahead is not None:
            if ahead.matches(user_input, conversation_key(session)):
                event = session.begin_turn(ahead.cancel)
                session.put_spoken(ahead)
                try:
                    yield from ahead.adopt(cancel)
                finally:
                    session.end_turn(event)
                return
            ahead.drop()
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
            Message("system", _SUMMARY_SYSTEM),
            Message("user", f"{earlier}Conversation:\n{convo[-6000:]}"),
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
                others = sum(store.other_indexes().values()) if chunks == 0 else 0
            except Exception:  # noqa: BLE001 - a status panel must not fail
                chunks, others = None, 0
            if self._reindexing:
                warning = self._reindexing
            elif others and not warning:
                warning = (
                    f"The library was indexed with another embedder or layout ({others} chunks, kept apart); "
                    f"{getattr(emb, 'identity', 'this embedder')} has its own index: use Re-index library "
                    "to embed the documents again."
                )
        web = self.parts.websearch.get_or_none()
        return {
            "embedder": embedder,
            "is_fallback": bool(embedder.get("is_fallback", False)),
            "warning": warning,
            "providers": providers,
            "web_search": bool(web is not None and web.configured),
            "models_loaded": self.parts.loaded(),
            "errors": self.parts.errors(),
            "chunks": chunks,
        }

    # ---- the library ------------------------------------------------------------------------------
    def ingest(self, paths: list[Path], progress: Callable[[float, str], None] | None = None) -> Any:
        """Index files/folders into the shared store (one ingestion at a time). → IngestReport.

        By default (`ingest.isolation: process`) the documents are read in a child process
        (knowledge/ingest_process.py): the parser stack's memory is returned when it ends and a
        parser crash is reported as a HarkError instead of ending the app. With an injected store
        (tests), or `isolation: inline`, the Ingestor runs in this process.
        """
        from knowledge.ingest import Ingestor
        from knowledge.ingest_process import EmbedderMismatch

        wanted = [Path(p) for p in paths]
        with self._ingest_lock:
            inline_because = self._inline_reason()
            if not inline_because:
                try:
                    return self._ingest_in_child(wanted, progress)
                except EmbedderMismatch as exc:
                    if "embedder" not in self._injected:
                        raise
                    inline_because = f"the injected embedder is not the configured one ({exc.message})"
            log.debug("ingesting in this process: %s", inline_because)
            ingestor = Ingestor(self.parts.store.get(), self.parts.embedder.get(), self.cfg.ingest)
            try:
                return ingestor.ingest(wanted, progress=progress)
            finally:
                self.library_changed(refresh=False)

    def reindex_previous(self, progress: Callable[[float, str], None] | None = None) -> Any:
        """Embed the library again when this embedder's index is empty and another embedder's (or
        layout's) index holds it, or read again the files an older reader or cut indexed
        (`knowledge.reindex`): → (what it did, in a sentence, and the
        IngestReport), None when there was nothing to do or it failed.
        The status panel says what is happening meanwhile; a failure is logged and said there."""
        from knowledge.reindex import reindex_plan, stale_plan

        try:
            store = self.parts.store.get()
            ing = self.cfg.ingest
            plan = reindex_plan(store) or stale_plan(store, ing.chunk_words, ing.overlap_words)
        except Exception as exc:  # noqa: BLE001 - the library stays as it is; the user can re-index
            log.warning("could not check for another embedder's index: %s", exc)
            return None
        if plan is None or not plan.paths:
            return None
        emb = self.parts.embedder.peek()
        what = plan.describe(getattr(emb, "identity", "this embedder"))
        log.info(what)
        self._reindexing = f"Re-indexing: {what}. Answers cover the files as they finish."
        try:
            report = self.ingest(plan.paths, progress)
        except Exception as exc:  # noqa: BLE001 - said in the status; the other index is untouched
            log.warning("the automatic re-index failed: %s", exc)
            self._reindexing = f"The automatic re-index failed ({exc}); use Re-index library."
            return None
        self._reindexing = ""
        return what, report

    def _inline_reason(self) -> str:
        """Why this ingestion cannot run in a child process ("" when it can)."""
        from knowledge.ingest_process import configured_identities

        if self.cfg.ingest.isolation == "inline":
            return "ingest.isolation is inline"
        if "store" in self._injected:
            return "the store was injected; a child process cannot open it"
        emb = self.parts.embedder.peek()
        if "embedder" in self._injected and emb is not None:
            if emb.identity not in configured_identities(self.cfg.embedder):
                return f"the injected embedder {emb.identity} is not one the configuration builds"
        return ""

    def _ingest_in_child(self, paths: list[Path], progress: Callable[[float, str], None] | None) -> Any:
        """Run the ingestion in a child process, then let this process's store see its commits."""
        from knowledge.ingest_process import IngestJob, run_ingest_process

        emb = self.parts.embedder.peek()
        job = IngestJob(
            embedder=self.cfg.embedder.model_dump(),
            store=self.cfg.store.model_dump(),
            ingest=self.cfg.ingest.model_dump(),
            uri=self.cfg.lancedb_uri,
            paths=[str(p) for p in paths],
            expect_identity=str(getattr(emb, "identity", "")) if emb is not None else "",
            log_level=logging.getLogger("knowledge").getEffectiveLevel(),
        )
        try:
            return run_ingest_process(job, progress)
        finally:  # also after a crash: whatever the child committed is visible now
            self.library_changed()

    def library_changed(self, *, refresh: bool = True) -> None:
        """After the library changed (or the models loaded): see the latest version now (`refresh`:
        another process wrote it) and read the search snapshot ahead of the next question."""
        store = self.parts.store.peek()
        if store is not None:
            try:
                if refresh:
                    store.refresh()
                store.warm_up()
            except Exception as exc:  # noqa: BLE001 - the store still refreshes within refresh_seconds
                log.warning("could not refresh the store after a library change: %s", exc)

    def watch(self, folder: Path) -> bool:
        """Keep `folder` in sync while this Assistant lives: ingested now, then again within seconds
        of any change to its files (assistant/watch.py). False when it is already watched."""
        with self._warm_lock:
            if self._watcher is None:
                self._watcher = FolderWatcher(lambda paths: self.ingest(paths), self.cfg.ingest.extensions)
        return self._watcher.add(Path(folder))

    @property
    def watcher(self) -> FolderWatcher | None:
        """The folder watcher, once a folder is watched (its `folders()`, `syncs`, `version`)."""
        return self._watcher

    def documents(self) -> list[Any]:
        return list(self.parts.store.get().documents())

    def library_note(self) -> str | None:
        """A note on the library's language when the embedder reads it poorly (a German or mixed library
        and the English-only bundled embedder; `assistant.library_language`), else None."""
        from assistant.library_language import library_note

        store = self.parts.store.get_or_none()  # None, the reason logged: no note
        if store is None:
            return None
        return library_note(store, getattr(self.parts.embedder.get_or_none(), "identity", None))

    def locate_source(self, hit: Any, quote: str = "") -> tuple[Path | None, Any]:
        """The file a retrieved chunk comes from (None when it is gone) and where its passage sits in
        it: `knowledge.citations.Location` (page and character span; PDF highlight boxes). With
        `quote` (the sentences an answer quotes from it), where those sit, when they are found there:
        the highlight is what the answer says, on the page that holds it."""
        from knowledge.citations import document_path, locate

        docs = {d.source_path: d for d in self.documents()}
        path = document_path(docs.get(hit.source_path), hit.source_path)
        if quote.strip():
            loc = locate(path, quote, list(hit.pages), best_page=True)
            if loc.found and loc.coverage >= QUOTE_FOUND:
                return path, loc
        return path, locate(path, hit.chunk_text, list(hit.pages))

    def store(self) -> Any:
        """The shared chunk store (opened now if needed), for tools that write chunks themselves
        (benchmarks); call `library_changed()` after writing."""
        return self.parts.store.get()

    def delete_document(self, source_path: str) -> None:
        with self._ingest_lock:
            try:
                self.parts.store.get().delete_document(source_path)
            finally:
                self.library_changed(refresh=False)

    # ---- speech out -------------------------------------------------------------------------------
    def synthesise(self, text: str, session: Session | None = None) -> tuple[int, np.ndarray]:
        """Speech for `text` → (sample_rate, int16 samples). Raises HarkError when unavailable.
        `session`: the first piece of its answer may have been synthesised while the user paused."""
        ready = session.take_spoken(text) if session is not None else None
        if ready is not None:
            try:
                return ready.result(timeout=60)
            except Exception:  # noqa: BLE001 - cancelled or failed ahead: synthesised now (says why if it fails)
                log.debug("the first piece synthesised ahead is unusable; synthesising it now")
        return self.parts.synthesiser.get().synthesise(text)

    def synthesiser(self) -> Any:
        """The speech synthesiser, loaded now (for `speak_stream`). Raises HarkError when unavailable."""
        return self.parts.synthesiser.get()
