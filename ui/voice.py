"""The browser's voice loop: the microphone streamed into a live transcription, push-to-talk,
hands-free turns and barge-in. It collects input for `Assistant`; it decides nothing about answers.

The page captures the microphone itself (Web Audio, `ui/assets.py`) and posts 16-bit PCM every
~100 ms to `/hark/mic/{token}` (`ui/voice_routes.py`), in order and without gaps: Gradio's own
streaming `gr.Audio` drops chunks while its previous upload is still being handled, which on a busy
machine lost most of an utterance. Each tab's `VoiceState` is found by a random token the page
gets when it loads. `VoiceLoop.chunk` feeds the tab's `StreamingTranscriber` (assistant.listening
→ models.streaming) and answers with what it has heard so far.

Push-to-talk (hold the button or the space bar) ends the utterance when released; hands-free keeps
the microphone open and ends it after `end_of_turn_ms` of silence, sooner or later when Smart-Turn
(asked at a short pause, `turn_wait_ms`) is sure the question is over or goes on, then at once starts the next
one, so the user can speak while Hark answers. Either way the ended utterance waits in
`VoiceState.ended` and the page presses a hidden button whose Gradio event runs its turn: only
the tail is left to decode. A sound of `barge_hold_ms` while an answer is spoken pauses it at
once; speech of `barge_in_ms` while an answer runs or is spoken interrupts it (the page stops
playback, the answer is marked cut off); a sound that does not become speech lets it play on once
`resume_ms` of quiet follows it.
"""

from __future__ import annotations

import html
import io
import logging
import secrets
import threading
import time
import wave
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models import audio as audio_io
from models.echo import EchoCanceller
from models.runtime.errors import HarkError
from models.vad import FRAME_MS
from ui.speech_outbox import SpeechOutbox

log = logging.getLogger(__name__)

CUT_OFF = " _(cut off)_"
SENTENCE_GAP_S = 0.8
ECHO_TAIL_S = 1.5
TURN_CHECK_WAIT_S = 0.3  # at most this long for a verdict the silence rule is waiting on


@dataclass(eq=False)
class TurnCheck:
    """Smart-Turn's verdict on one pause, asked on a thread so the chunk that asks is not held up."""

    speech_end: int  # the VAD frame the pause's speech ended at
    p: float | None = None  # P(complete); None: not known (yet, or the model is unavailable)
    done: threading.Event = field(default_factory=threading.Event)

    def ask(self, listening: Any, audio: np.ndarray) -> None:
        def run() -> None:
            try:
                self.p = listening.turn_complete(audio)
            finally:
                self.done.set()

        threading.Thread(target=run, name="hark-turn-end", daemon=True).start()


@dataclass(eq=False)
class VoiceState:
    """The voice side of one browser tab."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    session: Any = None  # the tab's assistant Session
    listener: Any = None  # models.streaming.StreamingTranscriber of the utterance being spoken
    utterance: int = -1  # the page's number of the recording the listener belongs to
    ended: list[Any] = field(default_factory=list)  # utterances waiting for their turn
    hands_free: bool = False
    end_of_turn_ms: float = 600.0
    playing: bool = False  # the page reports that it is playing a spoken answer
    idle_at: float = float("-inf")  # time.monotonic() of its last pause or end (between two sentences)
    barged: bool = False  # this utterance already interrupted Hark
    # hands-free: Smart-Turn asked about the current pause (models/turn_end.py, on a thread of its own)
    turn_check: TurnCheck | None = None
    # a sound paused the playback (not yet a barge-in): the VAD's count of voiced frames before it
    hold_voiced: int | None = None
    vad_seen: int = 0  # the utterance's VAD frames at the previous barge-in decision
    cut_off_pending: bool = False  # mark the interrupted answer when the next turn starts
    # when each stage of the latest voice turn happened (epoch ms, `now_ms`): release, send,
    # stt_done, turn, transcript, sources, first_token, first_clause, audio_ready, served (bench.voice)
    marks: dict[str, Any] = field(default_factory=dict)
    outbox: SpeechOutbox = field(default_factory=SpeechOutbox, repr=False)  # its spoken sentences, for the page
    # Hark's own voice taken out of the microphone (the sentences served to the page are its reference)
    echo: EchoCanceller = field(default_factory=EchoCanceller, repr=False)
    served_at: float = float("-inf")  # time.monotonic() a sentence was last served to the page
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


SEND_MS = 100.0  # the page posts the microphone's samples once this much is recorded (ui/assets.py)


@dataclass(frozen=True)
class ChunkReply:
    """What one chunk changed, for the page."""

    partial: str = ""  # the live transcript (HTML)
    turn: bool = False  # an utterance ended: press the hidden send button
    barge: bool = False  # the user interrupted Hark: stop playback now
    hold: bool = False  # a sound while Hark speaks: pause the playback until it is known to be speech
    resume: bool = False  # it was not (a cough, a click): play on
    send_ms: float = SEND_MS  # post the next samples once this much has been recorded

    def as_json(self) -> dict[str, Any]:
        return {
            "partial": self.partial,
            "turn": self.turn,
            "barge": self.barge,
            "hold": self.hold,
            "resume": self.resume,
            "send_ms": self.send_ms,
        }


def now_ms() -> float:
    """Wall-clock milliseconds, the clock of the page's Date.now() (for the turn's marks)."""
    return time.time() * 1000


def partial_html(view: Any) -> str:
    """The live transcript: committed words plain, tentative ones in italics."""
    if view is None or not view.heard:
        return ""
    committed = html.escape(view.committed)
    tentative = html.escape(view.tentative)
    body = committed + (f" <i>{tentative}</i>" if tentative else "")
    return f"🎙️ {body}" if body.strip() else "🎙️ …"


class VoiceLoop:
    """The voice states of every tab of one app, by token (weakly: a closed tab's state goes)."""

    def __init__(self, assistant: Any, streaming_settings: Any) -> None:
        self.assistant = assistant
        self.settings = streaming_settings
        self._tabs: weakref.WeakValueDictionary[str, VoiceState] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def register(self, voice: VoiceState, session: Any) -> str:
        voice.session = session
        with self._lock:
            self._tabs[voice.token] = voice
        return voice.token

    def find(self, token: str) -> VoiceState | None:
        with self._lock:
            return self._tabs.get(token)

    # ---- audio from the page --------------------------------------------------------------------
    def chunk(
        self,
        voice: VoiceState,
        utterance: int,
        samples: np.ndarray,
        rate: int,
        end: bool,
        quiet: bool = False,
    ) -> ChunkReply:
        """16-bit mono samples of recording `utterance`; `end`: the user released (`quiet`: the
        microphone was switched off, so an utterance with no speech in it is dropped silently)."""
        with voice.lock:
            if utterance != voice.utterance or voice.listener is None:
                self._start_locked(voice, utterance)
            listener = voice.listener
        if listener is None:  # no speech recogniser: the turn says so
            return ChunkReply(turn=end)
        if len(samples):
            try:
                listener.feed(self._without_echo(voice, samples, rate), 16000)
            except HarkError as exc:
                log.warning("microphone chunk dropped: %s", exc.message)
        if listener.vad.speaking:  # the user speaks on: a turn run ahead on a pause's words is void
            self.assistant.listening.resumed(voice.session, listener)
        actions = self._barge_in(voice, listener)
        flags = {kind: kind in actions for kind in ("barge", "hold", "resume")}
        if end:
            if quiet and not listener.vad.heard:
                with voice.lock:
                    if voice.listener is listener:
                        voice.listener = None
                self.assistant.listening.resumed(voice.session, listener)
                listener.close()
                return ChunkReply()
            with voice.lock:
                if voice.listener is listener:
                    voice.marks = {"release": now_ms()}
                    voice.ended.append(listener)
                    voice.listener = None
            listener.end()  # the last pass starts now, not when the turn's event reaches the server
            return ChunkReply(turn=True, **flags)
        if voice.hands_free and listener.vad.heard and not listener.vad.speaking:
            if listener.vad.silence_ms >= self.turn_wait_ms(voice, listener):
                check = voice.turn_check
                with voice.lock:
                    if voice.listener is listener:
                        voice.marks = {"release": now_ms(), "smart_turn": check.p if check else None}
                        voice.ended.append(listener)
                        self._start_locked(voice, utterance)
                listener.end()
                return ChunkReply(turn=True, **flags)
        return ChunkReply(partial=partial_html(listener.view()), send_ms=self._send_ms(voice, listener), **flags)

    def _send_ms(self, voice: VoiceState, listener: Any) -> float:
        """Sooner while the speech pauses and its next frames decide when the pass in the pause
        starts, or (hands-free, that pass made) when the turn ends; never while a pass runs, whose
        2 cores the extra requests would share; but in hands-free with `end_of_turn: smart_text` the
        end of the pass in the pause is what ends the turn, so its verdict is read within ~40 ms."""
        vad = listener.vad
        if not vad.heard or vad.speaking:
            return SEND_MS
        if listener.passing():
            texts = voice.hands_free and self.settings.end_of_turn == "smart_text"
            return self.settings.pause_chunk_ms if texts and vad.silence_ms < voice.end_of_turn_ms else SEND_MS
        if listener.pausing() or (voice.hands_free and vad.silence_ms < self.turn_wait_ms(voice, listener)):
            return self.settings.pause_chunk_ms
        return SEND_MS

    def served(self, voice: VoiceState, turn: int, index: int, wav: bytes) -> None:
        """Sentence `index` of answer `turn` left for the page: the echo canceller's reference."""
        try:
            with wave.open(io.BytesIO(wav)) as w:
                pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2")
                rate = w.getframerate()
            samples = audio_io.from_array(pcm, rate).samples
        except (wave.Error, EOFError, HarkError) as exc:
            log.warning("spoken sentence unreadable for the echo canceller: %s", exc)
            return
        voice.served_at = time.monotonic()
        voice.echo.reference(turn, index, samples)

    def _without_echo(self, voice: VoiceState, samples: np.ndarray, rate: int) -> np.ndarray:
        """The chunk at 16 kHz with Hark's own playback subtracted while an answer plays, and for
        `ECHO_TAIL_S` after it paused, ended or a sentence was served (the echo is still in the air,
        or the page's report is on its way)."""
        x = audio_io.from_array(samples, rate).samples
        now = time.monotonic()
        active = voice.playing or now - max(voice.idle_at, voice.served_at) < ECHO_TAIL_S
        return voice.echo.process(x, active=active and self.settings.echo_cancel)

    def turn_wait_ms(self, voice: VoiceState, listener: Any) -> float:
        """The silence that ends this hands-free turn: `end_of_turn_ms`, or with `end_of_turn: smart`,
        once the pause reaches `smart_turn_pause_ms`, what Smart-Turn's verdict on it says (asked
        once per pause): complete → now, incomplete → `smart_turn_wait_ms`, unsure → the silence rule.
        `smart_text` also reads the words of the pass in the pause, once it is in (`text_rule`)."""
        s, vad = self.settings, listener.vad
        if s.end_of_turn == "silence" or vad.silence_ms < s.smart_turn_pause_ms:
            return voice.end_of_turn_ms
        check = voice.turn_check
        if check is None or check.speech_end != vad.last_speech_end:
            check = voice.turn_check = TurnCheck(vad.last_speech_end)
            check.ask(self.assistant.listening, listener.audio())
        if not check.done.is_set() and vad.silence_ms >= voice.end_of_turn_ms:
            check.done.wait(TURN_CHECK_WAIT_S)  # the silence rule would end it now: hear the verdict first
        p = check.p if check.done.is_set() else None
        if s.end_of_turn == "smart_text":
            by_text = self.text_rule(voice, listener, p)
            if by_text is not None:
                return by_text
        if p is None:
            return voice.end_of_turn_ms
        if p >= s.smart_turn_complete:
            return min(s.smart_turn_pause_ms, voice.end_of_turn_ms)
        if p <= s.smart_turn_incomplete:
            return max(s.smart_turn_wait_ms, voice.end_of_turn_ms)
        return voice.end_of_turn_ms

    def text_rule(self, voice: VoiceState, listener: Any, p: float | None) -> float | None:
        """The words' say on the end of the turn (`end_of_turn: smart_text`), or None (Smart-Turn's
        rule decides). The pass in the pause is the turn's transcript, so no answer starts before it
        is in: waiting for it costs the first audio nothing. Its text a finished question
        (`models/turn_text.py`) and p ≥ `text_turn_complete` → end now (p ≤ `smart_turn_incomplete`:
        the silence rule, not the model's longer wait); a question that stops on
        "and", "the", "for", "um"… → wait `smart_turn_wait_ms`; with `text_turn_veto`, a p ≥
        `smart_turn_complete` waits for the text while that pass runs."""
        from models.turn_text import text_verdict

        s = self.settings
        text = listener.pause_text()
        if text is None:
            sure = p is not None and p >= s.smart_turn_complete
            if s.text_turn_veto and sure and listener.passing():
                return voice.end_of_turn_ms  # the text is on its way: it decides, or the silence rule
            return None
        verdict = text_verdict(text)
        if verdict == "complete" and (p if p is not None else 0.0) >= s.text_turn_complete:
            return min(s.smart_turn_pause_ms, voice.end_of_turn_ms)
        if verdict == "incomplete" and (s.text_turn_veto or p is None or p < s.smart_turn_complete):
            return max(s.smart_turn_wait_ms, voice.end_of_turn_ms)
        if verdict == "complete" and p is not None and p <= s.smart_turn_incomplete:
            return voice.end_of_turn_ms  # a finished question is not made to wait: the silence rule
        return None

    def _start_locked(self, voice: VoiceState, utterance: int) -> None:
        if voice.listener is not None:
            if voice.listener not in voice.ended:  # abandoned: its turn run ahead is void
                self.assistant.listening.resumed(voice.session, voice.listener)
            voice.listener.close()  # an abandoned recording, or one that ended (its passes stop)
        voice.listener = self.assistant.listening.open(voice.session)
        voice.utterance = utterance
        voice.barged = False
        voice.vad_seen = 0
        voice.turn_check = None
        if voice.hold_voiced is not None:
            voice.hold_voiced = 0  # the new utterance's VAD counts from 0

    def _barge_in(self, voice: VoiceState, listener: Any) -> tuple[str, ...]:
        """What the user's sound does to Hark's answer, in order: "hold" (a sound of `barge_hold_ms`
        while it plays: pause it), "barge" (speech of `barge_in_ms` while it runs or is spoken, or
        that much sound since the hold, short words and the pauses between them included: interrupt
        it, once per utterance), "resume" (`resume_ms` of quiet after the held sound).

        Every rule reads the VAD's frame counts, never how the chunks happened to fall, so a busy
        machine that posts fewer, longer chunks decides the same way: a chunk that holds a whole
        cough and the quiet after it gives "hold" and "resume" at once."""
        vad = listener.vad
        s = self.settings
        seen, voice.vad_seen = voice.vad_seen, vad.frames
        held = voice.hold_voiced is not None
        # between two spoken sentences the page is briefly idle: still speaking for the user
        speaking = voice.playing or time.monotonic() - voice.idle_at < SENTENCE_GAP_S
        answering = held or speaking or bool(getattr(voice.session, "busy", False))
        if voice.barged or not answering:
            return ()
        actions: list[str] = []
        # a sound long enough that sounded (at least its last frame) in the audio just fed
        sound = vad.last_run_ms >= s.barge_hold_ms and vad.last_voiced_end > seen
        if not held and speaking and sound:
            voice.hold_voiced = vad.voiced_frames - vad.last_run_frames  # from the start of the sound
            held = True
            actions.append("hold")
        since_hold = (vad.voiced_frames - voice.hold_voiced) * FRAME_MS if held else 0.0
        if vad.speech_frames * FRAME_MS >= s.barge_in_ms or since_hold >= s.barge_in_ms:
            with voice.lock:
                voice.barged = voice.cut_off_pending = True
                voice.playing, voice.hold_voiced = False, None
            self.assistant.listening.interrupt(voice.session)
            return (*actions, "barge")
        if held and vad.quiet_ms >= s.resume_ms:
            voice.hold_voiced = None
            actions.append("resume")
        return tuple(actions)

    def take_ended(self, voice: VoiceState) -> Any:
        """The oldest utterance that ended, or None."""
        with voice.lock:
            return voice.ended.pop(0) if voice.ended else None

    def utterance_input(self, listener: Any, marks: dict[str, Any] | None = None) -> Any:
        """The turn's input for a finished utterance: the streamed transcript, or (when the stream
        heard nothing usable) the recorded samples, so the turn's own checks explain what was wrong."""
        from assistant.events import AudioInput

        try:
            result = listener.finish()
        except HarkError as exc:
            log.debug("streamed utterance unusable (%s); the turn checks the audio", exc.message)
            return AudioInput(samples=listener.audio(), sample_rate=16000)
        if marks is not None:
            marks["stt_done"] = result.ready_at * 1000
            marks["final_pass"] = result.final_pass
            marks["passes"] = [
                (m.kind, m.started * 1000, m.ended * 1000, m.audio_s, m.speech_end_s) for m in result.timeline
            ]
        return self.assistant.listening.heard(result)
