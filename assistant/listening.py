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
        self._tail: Any = None
        self._tail_failed = False

    def _tail_model(self) -> Any:
        """The model of the pass at release when `speech.streaming.tail_model` is set (else None)."""
        name = self.parts.cfg.speech.streaming.tail_model
        if not name or self._tail_failed:
            return None
        with self._lock:
            if self._tail is None and not self._tail_failed:
                from models.speech import Transcriber

                try:
                    tail = Transcriber(self.parts.cfg.speech.model_copy(update={"model": name}))
                    tail.warm_up()
                    self._tail = tail
                except Exception:  # noqa: BLE001 - the main model does the tail pass instead
                    log.warning("tail model %s unavailable; the main model decodes the tail", name, exc_info=True)
                    self._tail_failed = True
        return self._tail

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
            tail=self._tail_model(),
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
