"""The browser runs of `bench.voice` about whose turn it is: Hark's answers played back into its own
microphone (does it barge in on itself?), and hands-free questions with a pause in the middle
(is the turn cut off inside the pause?).

- `self_playback`: hands-free on, a typed question answered aloud; the page's playback reaches the
  microphone through `tests/ui/echo_path.py` (delayed `delay_s`, attenuated `gain`, room noise)
  until the answer has played to its end. Counted: barge-ins (the answer cut) and holds (paused).
- `paused_turn`: hands-free, the fake microphone plays a question from `bench.turn_clips` with a
  300–800 ms pause inserted in the middle; a false cut-off is a turn that ended before its last word.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.voice_browser import open_voice_page
from tests.ui.echo_path import echo_path_script

QUESTION = "What notice period must the tenant give?"
ROOMS = [(0.05, 0.5), (0.1, 0.3), (0.15, 0.1), (0.08, 0.4), (0.12, 0.2)]  # (delay s, gain) in turn


def self_playback(browser, url: str, delay_s: float, gain: float) -> dict:
    ctx, page = open_voice_page(browser, url, echo_path_script(delay_s, gain))
    page.get_by_role("tab", name="Settings").click()
    page.locator("#speak input").check()
    page.wait_for_timeout(500)
    page.locator("#hands-free input").check()
    page.get_by_role("tab", name="Chat").click()
    page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'mic-open')", timeout=60_000)
    box = page.locator("#question textarea")
    box.fill(QUESTION)
    box.press("Enter")
    page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'playing')", timeout=120_000)
    page.wait_for_function(
        "() => harkVoiceLog.some(e => ['ended', 'cut'].includes(e.kind))", timeout=120_000
    )
    page.wait_for_timeout(1500)
    kinds = [e["kind"] for e in page.evaluate("harkVoiceLog")]
    taps = page.evaluate("window.harkEcho.taps")
    ctx.close()
    return {
        "barge_in": "barge-in" in kinds or "cut" in kinds,
        "holds": kinds.count("hold"),
        "turns": kinds.count("turn"),
        "routed": taps > 0,
        "delay_ms": round(delay_s * 1000),
        "gain": gain,
    }


def browser_clip(clip, folder: Path) -> Path:
    """A bench.turn_clips clip as the 48 kHz WAV Chromium's fake microphone plays."""
    out = folder / (Path(clip.path).stem + "_48k.wav")
    if not out.exists():
        subprocess.run(["sox", clip.path, "-r", "48000", "-c", "1", "-b", "16", str(out)], check=True)
    return out


def paused_turn(browser, url: str, clip, last_word_s: float) -> dict:
    """Hands-free over one paused question: the turns it ended with, and whether the first ended
    before the last word (a cut-off), on the page's clock from the microphone's opening."""
    ctx, page = open_voice_page(browser, url)
    page.get_by_role("tab", name="Settings").click()
    page.locator("#hands-free input").check()
    page.get_by_role("tab", name="Chat").click()
    page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'mic-open')", timeout=60_000)
    opened = page.evaluate("harkVoiceLog.find(e => e.kind === 'mic-open').t")
    page.wait_for_function("() => harkVoiceLog.some(e => e.kind === 'turn')", timeout=120_000)
    left = opened + (last_word_s + 2.5) * 1000 - page.evaluate("Date.now()")
    if left > 0:
        page.wait_for_timeout(int(left))  # a second turn, from the words after the pause, by now
    turns = [e["t"] - opened for e in page.evaluate("harkVoiceLog") if e["kind"] == "turn"]
    ctx.close()
    return {"turns": len(turns), "cut_off": turns[0] < last_word_s * 1000, "first_turn_ms": round(turns[0])}
