"""The voice loop's side of the assistant: live transcription of an utterance, its early document
search, and barge-in (the user interrupting a spoken answer).

`Listening.open(session)` gives a `models.streaming.StreamingTranscriber` on the shared speech
model; each pass it makes in a pause of the speech starts the document search for those words
(`Prefetcher.early`), so when the user releases with the same words the turn takes that search, and
runs the whole turn ahead on them (`assistant.speculation`, `speech.streaming.preemptive`): when the
user ends with those words the turn is adopted, when they speak on it is dropped (`resumed`).
`heard(result)` turns its transcript into the `AudioInput` of the turn. `interrupt(session)` stops
the running turn and marks the interrupted answer as cut off in the session's memory.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from assistant.events import AudioInput, Streamed
from assistant.speculation import PAID, Speculation, answers_locally, conversation_key, same_hearing

if TYPE_CHECKING:
    from assistant.components import Components
    from assistant.session import Session
    from models.speech import Decoded
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
                    main = self.parts.transcriber.peek()
                    model.vocabulary = main.vocabulary if main is not None else None  # the library's terms
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
        if streaming.end_of_turn != "silence" and self._turn_model() is not None:
            self.turn_complete(np.zeros(16000, np.float32))

    def _turn_model(self) -> Any:
        """Smart-Turn v3 (models/turn_end.py), loaded once; None when it cannot be (logged once:
        hands-free then ends turns by silence alone)."""
        with self._lock:
            if "turn_end" not in self._extra and "turn_end" not in self._failed:
                from models.turn_end import TurnEnd

                self._extra["turn_end"] = TurnEnd()
        return self._extra.get("turn_end")

    def turn_complete(self, audio: np.ndarray) -> float | None:
        """P(the user's turn is complete) for 16 kHz audio ending now, or None (model unavailable)."""
        model = self._turn_model()
        if model is None:
            return None
        try:
            return model.probability(audio)
        except Exception:  # noqa: BLE001 - a missing package or model: the silence rule decides
            log.warning("end-of-turn model unavailable; hands-free turns end by silence", exc_info=True)
            with self._lock:
                self._failed.add("turn_end")
                self._extra.pop("turn_end", None)
            return None

    def open(self, session: Session | None = None) -> StreamingTranscriber | None:
        """A live transcription for one utterance; None when speech recognition is unavailable."""
        transcriber = self.parts.transcriber.get_or_none()
        if transcriber is None:
            return None
        from models.streaming import StreamingTranscriber

        cfg = self.parts.cfg
        listener = StreamingTranscriber(
            transcriber,
            cfg.speech.streaming,
            tail=self._extra_model(cfg.speech.streaming.tail_model),
            partial=self._extra_model(cfg.speech.streaming.partial_model, cfg.speech.streaming.partial_threads),
            max_seconds=cfg.speech.max_seconds,
        )

        def paused(decoded: Decoded) -> None:  # each pass made in a pause of the speech
            if cfg.routing.prefetch_search and not getattr(session, "always_web_search", False):
                self.parts.prefetcher.early(self.parts.retriever, decoded.text)
            if session is not None:
                self.run_ahead(session, listener, decoded)

        listener.on_hypothesis = paused
        return listener

    # ---- the turn run ahead -----------------------------------------------------------------------
    def run_ahead(self, session: Session, owner: Any, decoded: Decoded) -> Speculation | None:
        """Start the turn for `decoded` (a pass in a pause of utterance `owner`) now, to be adopted
        when the utterance ends with these words; None when it is not run ahead: switched off, a
        turn of the session is running (this speech may be a barge-in), or no words."""
        from assistant.turn import Turn

        mode = self.parts.cfg.speech.streaming.preemptive
        text = decoded.text.strip()
        if mode == "off" or session.busy or not any(ch.isalnum() for ch in text):
            return None
        heard = Streamed(text=text, seconds=0.0, duration=float(getattr(owner, "seconds", 0.0)),
                         speech_seconds=decoded.speech_seconds, avg_logprob=decoded.avg_logprob,
                         no_speech_prob=decoded.no_speech_prob)  # fmt: skip
        key = conversation_key(session)
        current = session.take_ahead(owner)
        if current is not None and current.key == key and not current.failed and same_hearing(current.heard, heard):
            session.put_ahead(current)  # the same words again: keep the one running
            return current
        if current is not None:
            current.drop()

        def ahead() -> frozenset[str]:  # asked in the speculation's thread: it may probe a local server
            return frozenset(PAID) if mode == "always" else frozenset({"llm"}) if answers_locally(self.parts) else frozenset()

        def turn(cancel: threading.Event, gate: Any, commit: Any) -> Any:
            return Turn(self.parts, session, cancel, gate, commit).run(AudioInput(streamed=heard))

        synth = self.parts.synthesiser.peek() if session.speak_answers else None
        speak = synth.synthesise if synth is not None else None
        speculation = Speculation(turn, heard, owner, key, ahead, speak)
        replaced = session.put_ahead(speculation)
        if replaced is not None:  # another utterance's (abandoned)
            replaced.drop()
        return speculation

    @staticmethod
    def resumed(session: Session | None, owner: Any) -> None:
        """The user speaks on in utterance `owner` (or abandoned it): its turn run ahead is dropped."""
        found = session.take_ahead(owner) if session is not None else None
        if found is not None:
            found.drop()

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
