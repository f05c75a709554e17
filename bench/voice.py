"""The voice loop as a user hears it: a real browser, a fake microphone, spoken answers.

Headless Chromium plays a spoken question (espeak-ng, ~5 s) as its microphone into the real app
(whisper base int8, the bundled MiniLM library of tests/ui/conftest.DOCS, answers spoken) whose
LLM is a loopback OpenAI-compatible server with a fixed 200 ms time to first token and ~40 tokens/s.
Three ways to ask, in turn within each run (so load hits them alike):

- push-to-talk: hold the 🎙️ button while the clip plays (+0.3 s), release;
- hands-free: switch it on; the clip's end of speech (known from the file) starts the clock;
- record-then-transcribe: the Record/Stop buttons (the whole clip is sent and transcribed at Stop).

Per run: release (or end of speech) → the final transcript in the chat, → the first answer text,
→ the first `playing` of the spoken answer in the page; Hark's share = first audio minus the
provider's 200 ms. Times come from the page's own clock (Date.now()).

    python -m bench.voice                  # 3 runs of each
    python -m bench.voice --runs 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from models.runtime.env import prepare_process_env  # noqa: E402

prepare_process_env(offline=True)

import numpy as np  # noqa: E402

from bench.wer import wer  # noqa: E402

QUESTIONS = [
    "could you tell me what notice period the tenant has to give in the rental agreement",
    "how much is the rent for the flat each month and when is it due",
    "how often should the chain of the city bike be lubricated",
]
TTFT = 0.2
ANSWER = (
    "The tenant must give the landlord a written notice period of two months [1]. The landlord must "
    "give three months [1]. Rent is 950 euros per month, due on the first working day [1]."
)
MODES = ("push_to_talk", "hands_free", "record_then_transcribe")

WATCH = """
window.harkBench = {};
new MutationObserver(() => {
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
}).observe(document.documentElement, {subtree: true, childList: true, characterData: true});
"""


def _wav(folder: Path, text: str, name: str) -> tuple[Path, float, float]:
    """48 kHz question with 0.3 s pads; where its speech ends and its length (s)."""
    from tests.ui.conftest import speak_to_wav

    path = speak_to_wav(text, folder / f"{name}.wav")
    import wave

    with wave.open(str(path)) as w:
        data = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        rate = w.getframerate()
    loud = np.flatnonzero(np.abs(data) > 600)
    return path, float(loud[-1] / rate), len(data) / rate


def _app(base: Path, llm_url: str):
    from assistant.assistant import Assistant
    from assistant.config import ProviderSettings, load_config
    from tests.ui.conftest import DOCS, ROOT, free_port
    from ui.app import build_app, serve
    from ui.launch_plan import LaunchPlan

    docs = base / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    cfg = load_config(ROOT / "config.yaml")
    cfg.embedder.backend = "minilm"
    cfg.speech.model = "base"
    cfg.intent.adapter_dir = str(ROOT / "models" / "intent_adapter")
    cfg.llm.order = ["bench"]
    cfg.llm.providers = {"bench": ProviderSettings(kind="openai_compatible", model="bench", base_url=llm_url)}
    cfg._base_dir = base
    assistant = Assistant(cfg)
    assistant.warm_up()
    assistant.ingest([docs])
    demo = build_app(assistant, cfg)
    url, _ = serve(demo, cfg, LaunchPlan("127.0.0.1", free_port(), False, None), block=False)
    voice = getattr(assistant.parts.synthesiser.get_or_none(), "engine_name", "unknown")
    return demo, url, voice


def _one(browser, url: str, mode: str, clip_s: float, speech_end: float) -> dict:
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
    page.wait_for_function(
        "() => window.harkBench.first_text && harkVoiceLog.some(e => e.kind === 'playing')", timeout=120_000
    )
    bench = page.evaluate("window.harkBench")
    playing = page.evaluate(f"harkVoiceLog.filter(e => e.kind === 'playing' && e.t > {start - 5000})[0].t")
    ctx.close()
    return {
        "transcript_ms": bench["transcript"] - start,
        "first_text_ms": bench["first_text"] - start,
        "first_audio_ms": playing - start,
        "heard": bench.get("text_heard", "").replace("🎙️", "").strip(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

    from playwright.sync_api import sync_playwright

    from tests.llm_server import LLMServer, Reply
    from tests.ui.conftest import CHROMIUM, CHROMIUM_ARGS

    load_before = os.getloadavg()
    results: dict[str, list[dict]] = {m: [] for m in MODES}
    refs: dict[str, list[str]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory() as tmp, LLMServer(
        default=Reply(ANSWER, ttft=TTFT, chunk_delay=0.025), max_lifetime=3600
    ) as server:
        base = Path(tmp)
        demo, url, voice = _app(base, server.openai_url)
        clips = [_wav(base, q, f"q{i}") for i, q in enumerate(QUESTIONS)]
        with sync_playwright() as p:
            for run in range(args.runs):
                q = run % len(QUESTIONS)
                path, speech_end, clip_s = clips[q]
                extra = [
                    "--autoplay-policy=no-user-gesture-required",  # a user has clicked the page before
                    "--use-fake-ui-for-media-stream",
                    "--use-fake-device-for-media-stream",
                    f"--use-file-for-fake-audio-capture={path}%noloop",
                ]
                browser = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra])
                try:
                    for mode in MODES:
                        r = _one(browser, url, mode, clip_s, speech_end)
                        results[mode].append(r)
                        refs[mode].append(QUESTIONS[q])
                        print(f"run {run + 1} {mode:22} transcript {r['transcript_ms']:6.0f} ms  first text "
                              f"{r['first_text_ms']:6.0f} ms  first audio {r['first_audio_ms']:6.0f} ms  «{r['heard']}»")
                finally:
                    browser.close()
        demo.close()
    load_after = os.getloadavg()

    def p50(mode: str, key: str) -> float:
        return round(statistics.median(r[key] for r in results[mode]))

    summary: dict = {"runs": args.runs, "tts_voice": voice, "load_1min_before_after": [load_before[0], load_after[0]]}
    for mode in MODES:
        summary[mode] = {
            "release_to_transcript_ms_p50": p50(mode, "transcript_ms"),
            "release_to_first_text_ms_p50": p50(mode, "first_text_ms"),
            "release_to_first_audio_ms_p50": p50(mode, "first_audio_ms"),
            "hark_share_first_audio_ms_p50": p50(mode, "first_audio_ms") - round(TTFT * 1000),
        }
    streamed = [r["heard"] for m in ("push_to_talk", "hands_free") for r in results[m]]
    streamed_refs = refs["push_to_talk"] + refs["hands_free"]
    summary["wer_streaming"] = round(100 * wer(streamed_refs, streamed), 2)
    summary["wer_full_clip"] = round(
        100 * wer(refs["record_then_transcribe"], [r["heard"] for r in results["record_then_transcribe"]]), 2
    )
    print()
    print(f"{'p50 ms (from release / end of speech)':40} {'transcript':>10} {'first text':>10} {'first audio':>11} {'Hark share':>10}")
    for mode in MODES:
        s = summary[mode]
        print(f"{mode:40} {s['release_to_transcript_ms_p50']:10} {s['release_to_first_text_ms_p50']:10} "
              f"{s['release_to_first_audio_ms_p50']:11} {s['hark_share_first_audio_ms_p50']:10}")
    print(f"WER streaming {summary['wer_streaming']:.1f}, full clip {summary['wer_full_clip']:.1f}; voice {voice}; "
          f"load {load_before[0]:.1f} → {load_after[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
