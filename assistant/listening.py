"""The voice loop's side of the assistant: live transcription of an utterance, its early document
search, and barge-in (the user interrupting a spoken answer).

`Listening.open(session)` gives a `models.streaming.StreamingTranscriber` on the shared speech
model; each pass it makes in a pause of the speech starts the document search for those words
(`Prefetcher.early`), so when the user releases with the same words the turn takes that search.
`heard(result)` turns its transcript into the `AudioInput` of the turn. `interrupt(session)` stops
the running turn and marks the interrupted answer as cut off in the session's memory.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from assistant.events import AudioInput, Streamed

if TYPE_CHECKING:
    from assistant.components import Components
    from assistant.session import Session
    from models.streaming import StreamingTranscriber, StreamResult

log = logging.getLogger(__name__)


class Listening:
    """Shared by the sessions of one Assistant; thread-safe."""

    def __init__(self, parts: Components) -> None:
        self.parts = parts
        self._lock = threading.Lock()
        self._extra: dict[str, Any] = {}
        self._failed: set[str] = set()

    def _extra_model(self, name: str | None, threads: int | None = None) -> Any:
        """A second speech model (`speech.streaming.tail_model` / `partial_model`, on `threads`
        CPU threads when given), loaded once; None when not set or unavailable (then the main
        model does its passes)."""
        if not name or name == self.parts.cfg.speech.model or name in self._failed:
            return None  # not set, the main model itself, or unavailable
        key = name if threads is None else f"{name}@{threads}"
        with self._lock:
            if key not in self._extra and name not in self._failed:
                from models.speech import Transcriber

                update: dict[str, Any] = {"model": name}
                if threads is not None:
                    update["cpu_threads"] = threads
                try:
                    model = Transcriber(self.parts.cfg.speech.model_copy(update=update))
                    model.warm_up()
                    self._extra[key] = model
                except Exception:  # noqa: BLE001 - the main model does these passes instead
                    log.warning(
                        "speech model %s unavailable; the main model does its passes", name, exc_info=True
                    )
                    self._failed.add(name)
        return self._extra.get(key)

    def warm_up(self) -> None:
        """Load the configured second models now (else the first utterance waits for them)."""
        streaming = self.parts.cfg.speech.streaming
        self._extra_model(streaming.tail_model)
        self._extra_model(streaming.partial_model, streaming.partial_threads)

    def open(self, session: Session | None = None) -> StreamingTranscriber | None:
        """A live transcription for one utterance; None when speech recognition is unavailable."""
        transcriber = self.parts.transcriber.get_or_none()
        if transcriber is None:
            return None
        from models.streaming import StreamingTranscriber

        cfg = self.parts.cfg
        early = None
        if cfg.routing.prefetch_search and not getattr(session, "always_web_search", False):

            def early(text: str) -> None:
                self.parts.prefetcher.early(self.parts.retriever, text)

        return StreamingTranscriber(
            transcriber,
            cfg.speech.streaming,
            tail=self._extra_model(cfg.speech.streaming.tail_model),
            partial=self._extra_model(cfg.speech.streaming.partial_model, cfg.speech.streaming.partial_threads),
            on_hypothesis=early,
            max_seconds=cfg.speech.max_seconds,
        )

    @staticmethod
    def heard(result: StreamResult) -> AudioInput:
        return AudioInput(
            streamed=Streamed(
                text=result.text,
                seconds=result.seconds,
                duration=result.duration,
                speech_seconds=result.speech_seconds,
                avg_logprob=result.avg_logprob,
                no_speech_prob=result.no_speech_prob,
            )
        )

    @staticmethod
    def interrupt(session: Session, wait_seconds: float = 5.0) -> None:
        """Stop the running turn (if any) and mark the latest answer as cut off, once it is kept."""
        was_running = session.cancel()

        def mark() -> None:
            deadline = time.monotonic() + wait_seconds
            while session.busy and time.monotonic() < deadline:
                time.sleep(0.02)
            session.memory.mark_cut_off()

        if was_running:  # the turn remembers its answer as it ends: mark it after that
            threading.Thread(target=mark, name="hark-cut-off", daemon=True).start()
        else:
            session.memory.mark_cut_off()
