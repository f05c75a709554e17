"""Preemptive answers: a spoken turn started from the pass in the speech's pause, before the user has
finished (LiveKit's "preemptive generation").

While the user speaks, the live transcription re-decodes the utterance as soon as the speech pauses
(`models.streaming`); that pass usually ends a few hundred milliseconds before the end of the turn is
known (push-to-talk: the release; hands-free: `end_of_turn_ms` of silence). `Listening` starts a
`Speculation` from it: the whole turn (intent, search, answerability, the answer's first tokens) runs
in the background on those words, its events kept. When the utterance's final transcript is that pass
(same words, same confidence) and the conversation has not changed since, the turn adopts it
(`Assistant.respond`): the kept events are replayed at once and the rest streams as it comes. Else
it is dropped: cancelled, and nothing of it reaches the memory, the trace or the page.

Nothing a dropped speculation did may cost the user or change what they see:
- it writes no memory and no trace: the turn waits for the verdict before it records anything;
- a paid call (a cloud LLM, the web search) waits for the verdict too, unless `preemptive: always`;
  work on this machine (search, the extractive answer, a local OpenAI-compatible server) goes ahead;
- speech that resumes in the same utterance drops it at once (a local LLM stops generating).

When the answer is to be spoken (`speak`), the answer's first piece (its first clause, as the page's
`SentenceSplitter` cuts it) is synthesised as soon as its words have come, so an adopted turn's first
sound is ready too (`first_piece`; the session keeps the adopted speculation to find it, since the
piece may complete after the adoption).
"""

from __future__ import annotations

import ipaddress
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from assistant.events import AudioInput, Done, Event, Streamed, Token
from assistant.speak import SentenceSplitter

if TYPE_CHECKING:
    from assistant.components import Components
    from assistant.session import Session

log = logging.getLogger(__name__)

VERDICT_WAIT_S = 120.0  # a speculation nobody adopts or drops gives up (its utterance was lost)
PAID = ("llm", "web")  # the calls a speculation may hold back: gate(kind) → go ahead?


def local_url(url: str | None) -> bool:
    """A server on this machine or the local network (no per-token bill): loopback, private or
    link-local addresses, `localhost` and `*.local` names."""
    host = (urlparse(url or "").hostname or "").lower()
    if not host:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


def answers_locally(parts: Components) -> bool:
    """Whether the provider that would answer now costs nothing per call: the first usable provider of
    the chain is an OpenAI-compatible server at a local address, or there is none (the extractive
    answer)."""
    chain = parts.chain.get_or_none()
    if chain is None:
        return True
    for provider in chain.providers:
        if provider.available():
            s = parts.cfg.llm.providers.get(provider.name)
            return s is not None and s.kind == "openai_compatible" and local_url(s.base_url)
    return True


def conversation_key(session: Session) -> tuple:
    """Everything of the session a turn reads: a speculation is adopted only while it is unchanged."""
    return (
        session.always_web_search,
        session.reasoning,
        session.profile,
        session.memory.state_key(),
    )


def same_hearing(a: Streamed, b: Streamed) -> bool:
    """The same pass's words and confidence (the seconds waited and the audio's length may differ)."""
    return (
        " ".join(a.text.split()) == " ".join(b.text.split())
        and a.avg_logprob == b.avg_logprob
        and a.no_speech_prob == b.no_speech_prob
        and a.speech_seconds == b.speech_seconds
    )


class Speculation:
    """One turn run ahead on a hypothesis. `source(cancel, gate, commit)` is the turn's event
    stream: `gate(kind)` before a paid call and `commit()` before it records anything block until
    the verdict and say whether to go on."""

    def __init__(
        self,
        source: Callable[[threading.Event, Callable[[str], bool], Callable[[], bool]], Iterator[Event]],
        heard: Streamed,
        owner: Any,
        key: tuple,
        ahead: Callable[[], frozenset[str]] = frozenset,
        speak: Callable[[str], Any] | None = None,
    ) -> None:
        self.heard = heard
        self.owner = owner  # the utterance (StreamingTranscriber) it was started for
        self.key = key
        # which PAID kinds of call it makes before the verdict (the others wait): asked in its own
        # thread, since whether a local server answers is a network probe
        self._policy = ahead
        self.ahead: frozenset[str] = frozenset()
        self.cancel = threading.Event()
        self._events: list[Event] = []
        self._done = False
        self._failed = False
        self._verdict: bool | None = None
        self._cond = threading.Condition()
        self._source = source
        self._speak = speak
        self.first_piece: tuple[str, Future] | None = None  # the answer's first piece and its audio
        self._thread = threading.Thread(target=self._run, name="hark-speculation", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        splitter = SentenceSplitter() if self._speak is not None else None
        try:
            self.ahead = self._policy()
            for event in self._source(self.cancel, self._gate, self._commit):
                # split before the event is kept: whoever reads the event finds its first piece set
                if splitter is not None and isinstance(event, (Token, Done)):
                    fed = splitter.feed(event.text) if isinstance(event, Token) else splitter.flush()
                    pieces = [p for p in fed if p.strip()]
                    if pieces:
                        self._render(pieces[0])
                        splitter = None
                with self._cond:
                    self._events.append(event)
                    self._cond.notify_all()
        except Exception:  # noqa: BLE001 - a failed speculation is not adopted; the turn runs anew
            log.warning("preemptive turn failed", exc_info=True)
            with self._cond:
                self._failed = True
        finally:
            with self._cond:
                self._done = True
                self._cond.notify_all()

    def _render(self, piece: str) -> None:
        """Synthesise the first piece beside the turn (it goes on streaming meanwhile)."""
        speak = self._speak
        assert speak is not None
        audio: Future = Future()
        self.first_piece = (piece, audio)

        def run() -> None:
            if self.cancel.is_set():
                audio.cancel()
                return
            try:
                audio.set_result(speak(piece))
            except Exception as exc:  # noqa: BLE001 - the page synthesises it again, and says why
                audio.set_exception(exc)

        threading.Thread(target=run, name="hark-speculation-voice", daemon=True).start()

    def _decided(self, timeout: float = VERDICT_WAIT_S) -> bool:
        with self._cond:
            self._cond.wait_for(lambda: self._verdict is not None, timeout)
            if self._verdict is None:
                self._verdict = False
                self.cancel.set()
            return self._verdict

    def _gate(self, kind: str) -> bool:
        if kind not in PAID or kind in self.ahead:
            return not self.cancel.is_set()
        return self._decided() and not self.cancel.is_set()

    def _commit(self) -> bool:
        return self._decided()

    # ---- the verdict --------------------------------------------------------------------------
    @property
    def failed(self) -> bool:
        with self._cond:
            return self._failed

    def matches(self, user_input: Any, key: tuple) -> bool:
        """Whether the turn's input is what this speculation heard, in the same conversation."""
        streamed = user_input.streamed if isinstance(user_input, AudioInput) else None
        return (
            streamed is not None
            and key == self.key
            and not (self.failed or self.cancel.is_set())
            and same_hearing(streamed, self.heard)
        )

    def adopt(self, cancel: threading.Event | None = None) -> Iterator[Event]:
        """The turn's events: those kept so far at once, then the rest as they come. Setting
        `cancel` stops the turn (as it would a turn run now)."""
        with self._cond:
            self._verdict = True
            self._cond.notify_all()
        i, finished = 0, False
        try:
            while not finished:
                with self._cond:
                    while i >= len(self._events) and not self._done:
                        if cancel is not None and cancel.is_set():
                            self.cancel.set()
                        self._cond.wait(0.05)
                    batch, i = self._events[i:], len(self._events)
                    finished = self._done and i >= len(self._events)
                yield from batch
        finally:
            if not finished:  # nobody reads on (the page went away): stop the turn, as a turn run now
                self.cancel.set()

    def drop(self) -> None:
        """Not adopted: stop it; it records nothing."""
        self.cancel.set()
        with self._cond:
            if self._verdict is None:
                self._verdict = False
            self._cond.notify_all()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)
