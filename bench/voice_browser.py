"""The browser side of `bench.voice`: the clips the fake microphone plays, and one turn (or one
barge-in) driven in headless Chromium, timed on the page's clock and the turn's server marks."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

QUESTIONS = [
    "could you tell me what notice period the tenant has to give in the rental agreement",
    "how much is the rent for the flat each month and when is it due",
    "how often should the chain of the city bike be lubricated",
]

# the turn's stages (ui.voice.VoiceState.marks, server clock = the page's clock), then the page's
# first sound: release → the end chunk reaches the server → the transcript is ready → the turn's
# event runs → the turn starts → … → the first clause's WAV is ready → the page has fetched it →
# decoded it → plays it
STAGES = ("release", "send", "stt_done", "turn", "transcript", "sources", "first_token", "first_clause",
          "audio_ready", "served", "fetched", "decoded", "playing")


WATCH = """
window.harkBench = {};
setInterval(() => {
  const b = window.harkBench, now = Date.now();
  const users = document.querySelectorAll("#chat [data-testid='user']");
  const bots = document.querySelectorAll("#chat [data-testid='bot']");
  if (users.length && !b.transcript) {
    const t = users[users.length - 1].innerText;
    if (t.trim() && !t.includes('transcribing')) { b.transcript = now; b.text_heard = t; }
  }
  if (bots.length && !b.first_text) {
    const t = bots[bots.length - 1].innerText.trim();
    if (t && t !== '…') { b.first_text = now; }
  }
}, 10);
"""


def speech_timing(path: Path) -> tuple[float, float]:
    """Where the speech of a 16-bit WAV ends and how long it is (s)."""
    import wave

    with wave.open(str(path)) as w:
        data = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        rate = w.getframerate()
    loud = np.flatnonzero(np.abs(data) > 600)
    return float(loud[-1] / rate), len(data) / rate


def speech_onset(path: Path) -> float:
    """Where the speech of a 16-bit WAV starts (s)."""
    import wave

    with wave.open(str(path)) as w:
        data = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        rate = w.getframerate()
    return float(np.flatnonzero(np.abs(data) > 600)[0] / rate)


def make_clips(folder: Path, librivox: int, espeak: int) -> list[tuple[Path, str, float, float]]:
    """(48 kHz WAV with 0.3 s pads, reference, end of speech, length): LibriVox clips of
    pocketsphinx-testdata, then espeak-ng questions."""
    import subprocess

    from tests.audio_data import librivox_clips
    from tests.ui.conftest import speak_to_wav

    out = []
    for i, clip in enumerate(librivox_clips()[:librivox]):
        path = folder / f"l{i}.wav"
        subprocess.run(
            ["sox", str(clip.path), "-r", "48000", "-c", "1", "-b", "16", str(path), "pad", "0.3", "0.3"],
            check=True,
        )
        out.append((path, clip.reference, *speech_timing(path)))
    for i, q in enumerate(QUESTIONS[:espeak]):
        path = speak_to_wav(q, folder / f"q{i}.wav")
        out.append((path, q, *speech_timing(path)))
    return out


def one_turn(browser, url: str, mode: str, clip_s: float, speech_end: float, loop=None) -> dict:
    ctx = browser.new_context(permissions=["microphone"], viewport={"width": 1360, "height": 900})
    page = ctx.new_page()
    page.add_init_script(WATCH)
    page.goto(url)
    page.wait_for_function("() => document.querySelector('#voice-token textarea, #voice-token input')?.value")
    page.get_by_role("tab", name="Settings").click()
    page.locator("#speak input").check()
    page.wait_for_timeout(1500)  # the page's audio modules finish loading
    if mode == "hands_free":
        page.locator("#hands-free input").check()
        page.get_by_role("tab", name="Chat").click()
        page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'mic-open')")
        opened = page.evaluate("harkVoiceLog.find(e => e.kind === 'mic-open').t")
        start = opened + speech_end * 1000
    else:
        page.get_by_role("tab", name="Chat").click()
        if mode == "push_to_talk":
            box = page.locator("#ptt").bounding_box()
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()
            page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'mic-open')")
            page.wait_for_timeout(int((clip_s + 0.3) * 1000))
            start = page.evaluate("Date.now()")
            page.mouse.up()
        else:
            page.locator("#mic button.record-button").click()
            page.locator("#mic button.stop-button").wait_for(state="visible")
            page.wait_for_timeout(int((clip_s + 0.3) * 1000))
            start = page.evaluate("Date.now()")
            page.locator("#mic button.stop-button").click()
    try:
        page.wait_for_function(
            "() => window.harkBench.first_text && harkVoiceLog.some(e => e.kind === 'playing')",
            timeout=180_000,
        )
    except Exception:
        log = page.evaluate("harkVoiceLog")
        raise SystemExit(
            f"{mode}: no spoken answer; voice log {log}; bench {page.evaluate('window.harkBench')}; "
            f"chat {page.locator('#chat').inner_text()!r}"
        ) from None
    bench = page.evaluate("window.harkBench")
    playing = page.evaluate(f"harkVoiceLog.filter(e => e.kind === 'playing' && e.t > {start - 5000})[0].t")
    token = page.evaluate("document.querySelector('#voice-token textarea, #voice-token input').value")
    log = page.evaluate("harkVoiceLog")
    voice = loop.find(token) if loop is not None else None
    marks = dict(voice.marks) if voice is not None else {}
    _quiet(page, voice)
    ended = dict(voice.marks) if voice is not None else {}  # what the turn's end recorded
    ctx.close()
    marks["playing"] = playing
    for kind in ("fetched", "decoded"):  # the page's player: the first sentence's WAV arrived, decoded
        t = [e["t"] for e in log if e["kind"] == kind and start - 5000 < e["t"] <= playing]
        if t:
            marks[kind] = t[-1]
    return {
        "transcript_ms": bench["transcript"] - start,
        "first_text_ms": bench["first_text"] - start,
        "first_audio_ms": playing - start,
        "heard": bench.get("text_heard", "").replace("🎙️", "").strip(),
        "stages_ms": {k: round(marks[k] - start) for k in STAGES if isinstance(marks.get(k), float | int)},
        "final_pass": marks.get("final_pass", ""),
        "prefetched": ended.get("prefetched", marks.get("prefetched")),
        "ahead": bool(ended.get("ahead", marks.get("ahead", False))),
        "timings_ms": marks.get("timings_ms", ended.get("timings_ms", {})),
        "passes": [
            f"{kind} {a - start:.0f}→{b - start:.0f} ({audio:.2f}/{speech:.2f} s)"
            for kind, a, b, audio, speech in marks.get("passes", [])
        ],
    }


def _quiet(page, voice) -> None:
    """Stop the answer (its text and the sentences not yet spoken) and wait for the turn to end,
    so the next run does not share the CPU with this one's leftovers."""
    try:
        page.locator("#stop").click(timeout=5000)
    except Exception:  # noqa: BLE001 - no Stop to press: the answer has ended
        pass
    deadline = time.monotonic() + 15
    while voice is not None and getattr(voice.session, "busy", False) and time.monotonic() < deadline:
        time.sleep(0.05)
    page.wait_for_timeout(300)


def open_voice_page(browser, url: str, script: str | None = None):
    """A new context with the microphone allowed (`script`: a page init script), once the page's
    voice session is ready: (context, page)."""
    ctx = browser.new_context(permissions=["microphone"], viewport={"width": 1360, "height": 900})
    if script:
        ctx.add_init_script(script)
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_function("() => document.querySelector('#voice-token textarea, #voice-token input')?.value")
    return ctx, page


def barge_in(browser, url: str, onset_s: float, script: str | None = None) -> dict:
    """A typed question answered aloud; once Hark speaks, hands-free goes on and the microphone
    (the file plays from the moment it opens) speaks over it. Stop latency = the page pausing the
    answer (paused at the first sound, `barge_hold_ms`) − the start of the user's speech. `script`:
    a page init script (bench.voice: Hark's playback routed back into the microphone)."""
    ctx, page = open_voice_page(browser, url, script)
    page.get_by_role("tab", name="Settings").click()
    page.locator("#speak input").check()
    page.get_by_role("tab", name="Chat").click()
    page.wait_for_timeout(1500)
    box = page.locator("#question textarea")
    box.fill("What notice period must the tenant give?")
    box.press("Enter")
    page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'playing')", timeout=120_000)
    page.get_by_role("tab", name="Settings").click()
    page.locator("#hands-free input").check()
    page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'cut')", timeout=60_000)
    log = page.evaluate("harkVoiceLog")
    ctx.close()
    t = {e["kind"]: e["t"] for e in reversed(log)}
    stopped = min(t.get("hold", t["cut"]), t["cut"])  # paused at the first sound, or stopped
    speech = t["mic-open"] + onset_s * 1000
    return {"stop_ms": stopped - speech, "cut_ms": t["cut"] - speech}
