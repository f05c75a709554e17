"""The voice controls of the Chat tab and their Gradio events (the loop itself is `ui/voice.py`).

- `#ptt`: hold it, or hold the space bar when no text field has the focus, to talk; release to
  send. The page script (`ui/assets.py`, VOICE_JS) captures the microphone and streams it to
  `/hark/mic/{token}` while held; `#hark-partial` shows what has been heard so far.
- The `gr.Audio` Record/Stop pair stays for people who prefer clicks: the whole recording is sent
  when they stop, then transcribed (the record-then-transcribe path).
- Settings → Hands-free: the microphone stays open; a pause ends the question; speaking while Hark
  answers interrupts it. The end-of-turn silence is a slider.
- Hidden: `#voice-token` (the tab's token for the microphone route) and `#voice-send`, the button
  the page presses when an utterance has ended; its event runs the turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from ui.voice import CUT_OFF, VoiceLoop, now_ms


@dataclass
class VoiceControls:
    ptt: Any
    mic: Any
    partial: Any
    token: Any
    send: Any


@dataclass
class VoiceSwitches:
    hands_free: Any
    end_of_turn: Any


def voice_controls() -> VoiceControls:
    ptt = gr.Button("🎙️ Hold to talk (or hold Space), release to send", elem_id="ptt")
    mic = gr.Audio(sources=["microphone"], type="numpy", elem_id="mic", label="…or click Record, then Stop")
    partial = gr.HTML('<div id="hark-partial" class="hark-partial"></div>', elem_id="partial")
    token = gr.Textbox(visible="hidden", elem_id="voice-token", show_label=False)
    send = gr.Button("send the spoken question", visible="hidden", elem_id="voice-send")
    return VoiceControls(ptt, mic, partial, token, send)


def voice_settings(end_of_turn_ms: float) -> VoiceSwitches:
    hands_free = gr.Checkbox(
        label="Hands-free: the microphone stays on, a pause ends your question, and speaking while "
        "Hark answers interrupts it",
        elem_id="hands-free",
    )
    end_of_turn = gr.Slider(
        200,
        2000,
        value=end_of_turn_ms,
        step=50,
        label="Hands-free: the silence that ends your question (ms)",
        elem_id="end-of-turn",
    )
    return VoiceSwitches(hands_free, end_of_turn)


def wire_voice(
    loop: VoiceLoop,
    controls: VoiceControls,
    switches: VoiceSwitches,
    state: Any,
    chat_out: list[Any],
    turn: Callable[..., Any],
    chat_outputs: Callable[..., tuple],
    ensure: Callable[[Any], Any],
    whole_clip: Callable[..., Any],
) -> list[Any]:
    """The voice events (`whole_clip`: the Record/Stop handler); returns those Stop cancels."""

    def mark_cut_off(st: Any) -> None:
        """The answer the user interrupted says so (its memory entry is marked by the assistant)."""
        if not st.voice.cut_off_pending:
            return
        st.voice.cut_off_pending = False
        answers = [m for m in st.messages if m.get("role") == "assistant"]
        if answers and not str(answers[-1].get("content", "")).endswith(CUT_OFF):
            answers[-1]["content"] = f"{answers[-1].get('content', '')}{CUT_OFF}"

    def spoken_turn(st: Any):
        st = ensure(st)
        st.voice.marks.setdefault("send", now_ms())
        mark_cut_off(st)
        listener = loop.take_ended(st.voice)
        if listener is None:
            yield chat_outputs(st)
            return
        yield from turn(st, loop.utterance_input(listener, st.voice.marks))

    def set_voice(attr: str) -> Callable[[Any, Any], Any]:
        def set_value(value: Any, st: Any) -> Any:
            st = ensure(st)
            setattr(st.voice, attr, value)
            return st

        return set_value

    ev_clip = controls.mic.stop_recording(whole_clip, [controls.mic, state], chat_out, api_name="voice")
    ev_clip.then(lambda: None, None, controls.mic, api_name=False, queue=False)
    ev_spoken = controls.send.click(spoken_turn, state, chat_out, api_name=False)
    hands_free = switches.hands_free
    hands_free.change(set_voice("hands_free"), [hands_free, state], state, queue=False, api_name=False)
    hands_free.change(None, hands_free, None, js="(on) => { window.harkHandsFree && window.harkHandsFree(on); }")
    end_of_turn = switches.end_of_turn
    end_of_turn.change(set_voice("end_of_turn_ms"), [end_of_turn, state], state, queue=False, api_name=False)
    return [ev_clip, ev_spoken]
