"""The tab's outbox of spoken sentences: the page's long poll is woken by a sentence synthesised on
another thread, sees the end of the answer, and never gets an old answer's leftovers; a stopped
answer synthesises nothing more."""

from __future__ import annotations

import asyncio
import io
import threading
import time
import wave

from models.settings import TTSSettings
from models.tts import Synthesiser
from ui.speaker import SpeechQueue
from ui.speech_outbox import SpeechOutbox


def test_the_page_waiting_for_a_sentence_gets_it_as_soon_as_it_is_put():
    box = SpeechOutbox()
    n = box.begin()

    def later():
        time.sleep(0.2)
        box.put(n, b"RIFF-first")
        box.end(n)

    async def page():
        started = time.monotonic()
        begin = await box.next(0, None, timeout=5)  # ?after=0: an answer has begun
        first = await box.next(n, 0, timeout=5)
        waited = time.monotonic() - started
        end = await box.next(n, 1, timeout=5)
        nothing = await box.next(n, None, timeout=0.1)  # ?after=n: no newer answer yet
        return begin, first, waited, end, nothing

    threading.Thread(target=later).start()
    begin, first, waited, end, nothing = asyncio.run(page())
    assert (begin.kind, begin.turn) == ("begin", n)
    assert (first.kind, first.index, first.wav) == ("wav", 0, b"RIFF-first")
    assert 0.15 < waited < 2.0  # woken by the put, not by the timeout
    assert (end.kind, end.turn) == ("end", n)
    assert nothing is None


def test_a_new_answer_stops_the_old_one_and_its_leftovers_are_not_served():
    box = SpeechOutbox()
    old = box.begin()
    assert box.put(old, b"old-0")
    new = box.begin()
    assert not box.put(old, b"old-1") and not box.active(old)
    assert box.peek(old, 0).kind == "stopped" and box.peek(old, 1).kind == "stopped"
    assert box.peek(old, None).kind == "begin" and box.peek(old, None).turn == new
    assert box.peek(new, 0) is None  # waiting for its first sentence
    assert box.put(new, b"new-0")  # there already: ?after=old gets it, not "begin" and a second poll
    assert (box.peek(old, None).kind, box.peek(old, None).turn, box.peek(old, None).index) == ("wav", new, 0)
    assert box.peek(new, None) is None
    assert box.stop(new) and box.peek(new, 0).kind == "stopped" and not box.stop(new)


def test_a_stopped_answer_synthesises_no_further_sentence():
    synth = Synthesiser(TTSSettings(engine="espeak-ng"))
    calls: list[str] = []
    box = SpeechOutbox()
    speech = SpeechQueue()
    speech.answer = box.begin()

    def synthesise(text: str):
        calls.append(text)
        if len(calls) == 1:
            box.stop(speech.answer)  # the page stopped it (barge-in) while the first was synthesised
        return synth.synthesise(text)

    speech.feed("The rent is 950 euros per month. The deposit is 1,900 euros. Keys go back in 30 days. ")
    speech.finish()
    speech.speak_into(box, synthesise)
    assert len(calls) == 1 and box.peek(speech.answer, 0).kind == "stopped"


def test_every_sentence_of_a_spoken_answer_reaches_the_outbox_as_a_wav():
    box = SpeechOutbox()
    speech = SpeechQueue()
    speech.answer = box.begin()
    speech.feed("The rent is 950 euros per month [1]. The deposit is 1,900 euros.")
    speech.finish()
    speech.speak_into(box, Synthesiser(TTSSettings(engine="espeak-ng")).synthesise)
    speech.speak_into(box, lambda text: (_ for _ in ()).throw(AssertionError("spoken twice")))
    wavs = [box.peek(speech.answer, i) for i in range(2)]
    assert [w.kind for w in wavs] == ["wav", "wav"] and box.peek(speech.answer, 2).kind == "end"
    for w in wavs:
        with wave.open(io.BytesIO(w.wav)) as f:
            assert f.getnframes() / f.getframerate() > 0.5
