"""The spoken sentences of a tab's latest answer, waiting for the page to fetch them in order.

The tab's speech thread (`ui.speaker.SpeechQueue.speak_into`) puts each sentence's WAV here as soon
as it is synthesised; the page long-polls `GET /hark/speech/{token}` (`ui/voice_routes.py`) for the
next one and plays it itself (Web Audio, `ui/player_assets.py`), so nothing waits for Gradio's audio
stream. Only the latest answer is kept: `begin` of a new answer ends the previous one, so the page
never plays an old answer's leftovers.

The waiting is asyncio (the route's event loop), woken from the synthesising thread, so a page
waiting for the next sentence holds no thread.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field


@dataclass
class _Answer:
    number: int
    wavs: list[bytes] = field(default_factory=list)
    ended: bool = False
    stopped: bool = False  # ended by Stop, a barge-in or a newer answer, not by its last sentence


@dataclass(frozen=True)
class Speech:
    """What the page gets: a sentence (`wav`), or news about answer `turn` (`kind`):
    "begin" (it started), "end" (no more sentences), "stopped" (cut short: silence it)."""

    turn: int
    kind: str = "wav"
    index: int = -1
    wav: bytes = b""


class SpeechOutbox:
    """One tab's latest spoken answer (answers are numbered 1, 2, … per tab)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answer = _Answer(0, ended=True)
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def begin(self) -> int:
        """A new answer will be spoken: the previous one (if still going) is stopped."""
        with self._lock:
            old = self._answer
            if not old.ended:
                old.ended = old.stopped = True
            self._answer = _Answer(old.number + 1)
            number = self._answer.number
        self._wake()
        return number

    def active(self, number: int) -> bool:
        """Answer `number` is still wanted (not stopped, not superseded)."""
        with self._lock:
            return self._answer.number == number and not self._answer.ended

    def put(self, number: int, wav: bytes) -> bool:
        """Add a sentence of answer `number`; False when that answer is no longer wanted."""
        with self._lock:
            if self._answer.number != number or self._answer.ended:
                return False
            self._answer.wavs.append(wav)
        self._wake()
        return True

    def end(self, number: int) -> None:
        """Answer `number` has no more sentences."""
        self._finish(number, stopped=False)

    def stop(self, number: int | None = None) -> bool:
        """Cut answer `number` (None: whichever is going) short; True if it was still going."""
        return self._finish(number, stopped=True)

    def _finish(self, number: int | None, stopped: bool) -> bool:
        with self._lock:
            a = self._answer
            if a.ended or (number is not None and a.number != number):
                return False
            a.ended, a.stopped = True, stopped
            if stopped:
                a.wavs.clear()
        self._wake()
        return True

    def _wake(self) -> None:
        with self._lock:
            waiters = list(self._waiters)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    def peek(self, turn: int, n: int | None) -> Speech | None:
        """The answer to `GET ?turn=T&n=N` (`n` None: `?after=T`, i.e. wait for an answer newer
        than T) if there is one now, else None. A newer answer whose first sentence is already
        here (a "not known" answer, or one run ahead) is that sentence, not "begin": the page
        starts the new answer either way, and saves a round trip."""
        with self._lock:
            a = self._answer
            if n is None:
                if a.number <= turn:
                    return None
                return Speech(a.number, "wav", 0, a.wavs[0]) if a.wavs else Speech(a.number, "begin")
            if a.number > turn:
                return Speech(turn, "stopped")  # a newer answer replaced it
            if a.number < turn:
                return None
            if n < len(a.wavs):
                return Speech(turn, "wav", n, a.wavs[n])
            if a.ended:
                return Speech(turn, "stopped" if a.stopped else "end")
            return None

    async def next(self, turn: int, n: int | None, timeout: float) -> Speech | None:
        """`peek`, waiting up to `timeout` s for it to have an answer."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            event = asyncio.Event()
            waiter = (loop, event)
            with self._lock:
                self._waiters.add(waiter)
            try:
                found = self.peek(turn, n)  # after registering: a put from now on wakes us
                remaining = deadline - loop.time()
                if found is not None or remaining <= 0:
                    return found
                try:
                    await asyncio.wait_for(event.wait(), remaining)
                except TimeoutError:
                    return self.peek(turn, n)
            finally:
                with self._lock:
                    self._waiters.discard(waiter)
