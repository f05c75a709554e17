"""The voice loop as a user hears it: a real browser, a fake microphone, spoken answers.

Headless Chromium plays speech as its microphone (the LibriVox clips of Debian's
pocketsphinx-testdata, 3–7 s of human speech, and espeak-ng questions, 0.3 s of quiet each side)
into the real app
(whisper base int8, the bundled MiniLM library of tests/ui/conftest.DOCS, answers spoken) whose
LLM is a loopback OpenAI-compatible server with a fixed 200 ms time to first token and ~40 tokens/s.
Three ways to ask, in turn within each run (so load hits them alike):

- push-to-talk: hold the 🎙️ button while the clip plays and 0.3 s more, release (0.6 s after the
  last word);
- hands-free: switch it on; the clip's end of speech (known from the file) starts the clock;
- record-then-transcribe: the Record/Stop buttons (the whole clip is sent and transcribed at Stop);
- barge-in (`--barge` runs): a typed question answered aloud; while Hark speaks, hands-free goes
  on and the microphone speaks over it: the time from the start of that speech to the page
  pausing the answer.

Per run: release (or end of speech) → the final transcript in the chat, → the first answer text,
→ the first `playing` of the spoken answer in the page; Hark's share = first audio minus the
provider's 200 ms when the turn asked it (a question the library cannot answer is "not known"
without it). Times come from the page's own clock (Date.now()).

    python -m bench.voice                          # 3 LibriVox clips + 2 espeak questions, each way once
    python -m bench.voice --rounds 2 --json out.json
    python -m bench.voice --rounds 0 --barge 5     # barge-in only
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
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
# the turn's stages (ui.voice.VoiceState.marks, server clock = the page's clock), then the page's
# first sound: release → the end chunk reaches the server → the transcript is ready → the turn's
# event runs → the turn starts → … → the first clause's WAV is ready → the page has fetched it →
# decoded it → plays it
STAGES = ("release", "send", "stt_done", "turn", "transcript", "sources", "first_token", "first_clause",
          "audio_ready", "fetched", "decoded", "playing")

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


def _timing(path: Path) -> tuple[float, float]:
    """Where the speech of a 16-bit WAV ends and how long it is (s)."""
    import wave

    with wave.open(str(path)) as w:
        data = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        rate = w.getframerate()
    loud = np.flatnonzero(np.abs(data) > 600)
    return float(loud[-1] / rate), len(data) / rate


def _onset(path: Path) -> float:
    """Where the speech of a 16-bit WAV starts (s)."""
    import wave

    with wave.open(str(path)) as w:
        data = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        rate = w.getframerate()
    return float(np.flatnonzero(np.abs(data) > 600)[0] / rate)


def _clips(folder: Path, librivox: int, espeak: int) -> list[tuple[Path, str, float, float]]:
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
        out.append((path, clip.reference, *_timing(path)))
    for i, q in enumerate(QUESTIONS[:espeak]):
        path = speak_to_wav(q, folder / f"q{i}.wav")
        out.append((path, q, *_timing(path)))
    return out


def _app(base: Path, llm_url: str, cpu_threads: int | None = None):
    from assistant.assistant import Assistant
    from assistant.config import ProviderSettings
    from tests.ui.conftest import demo_library, free_port
    from ui.app import build_app, serve
    from ui.launch_plan import LaunchPlan

    docs, cfg = demo_library(base, "base")
    if cpu_threads is not None:
        cfg.speech.cpu_threads = cpu_threads
    cfg.llm.order = ["bench"]
    cfg.llm.providers = {"bench": ProviderSettings(kind="openai_compatible", model="bench", base_url=llm_url)}
    assistant = Assistant(cfg)
    assistant.warm_up()
    assistant.ingest([docs])
    demo = build_app(assistant, cfg)
    url, _ = serve(demo, cfg, LaunchPlan("127.0.0.1", free_port(), False, None), block=False)
    voice = getattr(assistant.parts.synthesiser.get_or_none(), "engine_name", "unknown")
    return demo, url, voice, assistant


def _one(browser, url: str, mode: str, clip_s: float, speech_end: float, loop=None) -> dict:
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
        "prefetched": marks.get("prefetched"),
        "timings_ms": marks.get("timings_ms", {}),
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


def _barge(browser, url: str, onset_s: float) -> dict:
    """A typed question answered aloud; once Hark speaks, hands-free goes on and the microphone
    (the file plays from the moment it opens) speaks over it. Stop latency = the page pausing the
    answer (paused at the first sound, `barge_hold_ms`) − the start of the user's speech."""
    ctx = browser.new_context(permissions=["microphone"], viewport={"width": 1360, "height": 900})
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_function("() => document.querySelector('#voice-token textarea, #voice-token input')?.value")
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


def _settings(text: str) -> dict:
    """`partial_model=tiny.en,pause_ms=150` → {key: typed value} (none → None)."""
    from models.settings import StreamingSettings

    raw = {k.strip(): v.strip() for k, v in (part.split("=", 1) for part in text.split(","))}
    raw = {k: None if v.lower() in ("none", "null") else v for k, v in raw.items()}
    typed = StreamingSettings(**raw)
    return {k: getattr(typed, k) for k in raw}


def _stages(runs: list[dict]) -> dict[str, int]:
    """p50 of each stage's time over the runs that reached it."""
    out = {}
    for k in STAGES:
        values = [r["stages_ms"][k] for r in runs if k in r["stages_ms"]]
        if values:
            out[k] = round(statistics.median(values))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--librivox", type=int, default=3, help="LibriVox clips of pocketsphinx-testdata (≤ 5)")
    ap.add_argument("--espeak", type=int, default=2, help="espeak-ng questions (≤ 3)")
    ap.add_argument("--rounds", type=int, default=1, help="times each clip is asked each way")
    ap.add_argument("--barge", type=int, default=3, help="barge-in runs (LibriVox speech over the answer)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="KEY=VALUE[,KEY=VALUE]",
        help="also push-to-talk with these speech.streaming settings, side by side (e.g. partial_model=tiny.en)",
    )
    ap.add_argument("--cpu-threads", type=int, default=None, help="speech.cpu_threads of the main model")
    args = ap.parse_args(argv)
    variants = {f"push_to_talk[{v}]": _settings(v) for v in args.variant}
    modes = (*MODES, *variants)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

    from playwright.sync_api import sync_playwright

    from tests.llm_server import LLMServer, Reply
    from tests.ui.conftest import CHROMIUM, CHROMIUM_ARGS, fake_microphone

    load_before = os.getloadavg()
    results: dict[str, list[dict]] = {m: [] for m in modes}
    refs: dict[str, list[str]] = {m: [] for m in modes}
    with (
        tempfile.TemporaryDirectory() as tmp,
        LLMServer(default=Reply(ANSWER, ttft=TTFT, chunk_delay=0.025), max_lifetime=3600) as server,
    ):
        base = Path(tmp)
        demo, url, voice, assistant = _app(base, server.openai_url, args.cpu_threads)
        streaming = assistant.cfg.speech.streaming
        defaults = streaming.model_dump()
        for variant in variants.values():  # their second models load now, not in a measured turn
            streaming.__dict__.update(variant)
            assistant.listening.warm_up()
            streaming.__dict__.update(defaults)
        clips = _clips(base, args.librivox, args.espeak)
        with sync_playwright() as p:
            for rnd in range(args.rounds):
                for n, (path, ref, speech_end, clip_s) in enumerate(clips):
                    extra = fake_microphone(path, autoplay=True)  # a user has clicked the page before
                    browser = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra])
                    try:
                        for mode in modes:
                            streaming.__dict__.update(variants.get(mode, {}))  # Listening.open reads it
                            asked = len(server.requests)
                            try:
                                r = _one(browser, url, mode.split("[")[0], clip_s, speech_end, demo.hark_voice_loop)
                            finally:
                                streaming.__dict__.update(defaults)
                            # the provider's wait counts only when it was asked (not for "not known")
                            r["asked_llm"] = len(server.requests) > asked
                            r["share_ms"] = r["first_audio_ms"] - (TTFT * 1000 if r["asked_llm"] else 0)
                            results[mode].append(r)
                            refs[mode].append(ref)
                            print(
                                f"{rnd + 1}.{n + 1} {mode:22} transcript {r['transcript_ms']:6.0f} ms  first text "
                                f"{r['first_text_ms']:6.0f} ms  first audio {r['first_audio_ms']:6.0f} ms  "
                                f"«{r['heard']}»\n      stages " + " ".join(f"{k} {v}" for k, v in r["stages_ms"].items())
                                + f" (pass at release: {r['final_pass'] or '—'}; search prefetched: {r['prefetched']})"
                                + "\n      turn ms " + " ".join(f"{k} {v:.0f}" for k, v in r["timings_ms"].items())
                                + ("\n      passes " + ", ".join(r["passes"]) if r["passes"] else ""),
                                flush=True,
                            )
                    finally:
                        browser.close()
            stops = []
            for n in range(args.barge):
                path, _, _, _ = clips[n % len(clips)]
                onset = _onset(path)
                extra = fake_microphone(path, autoplay=True)
                browser = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra])
                try:
                    r = _barge(browser, url, onset)
                finally:
                    browser.close()
                stops.append(r)
                print(
                    f"barge-in {n + 1}: playback paused {r['stop_ms']:.0f} ms after the speech began, "
                    f"stopped for good at {r['cut_ms']:.0f} ms",
                    flush=True,
                )
        demo.close()
    load_after = os.getloadavg()

    def p50(mode: str, key: str) -> float:
        return round(statistics.median(r[key] for r in results[mode]))

    summary: dict = {
        "clips": len(clips),
        "rounds": args.rounds,
        "tts_voice": voice,
        "load_1min_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
    }
    if args.rounds:
        for mode in modes:
            summary[mode] = {
                "release_to_transcript_ms_p50": p50(mode, "transcript_ms"),
                "release_to_first_text_ms_p50": p50(mode, "first_text_ms"),
                "release_to_first_audio_ms_p50": p50(mode, "first_audio_ms"),
                "hark_share_first_audio_ms_p50": p50(mode, "share_ms"),
                "turns_asking_the_llm": sum(r["asked_llm"] for r in results[mode]),
                "first_text_to_first_audio_ms_p50": round(
                    statistics.median(r["first_audio_ms"] - r["first_text_ms"] for r in results[mode])
                ),
                "wer": round(100 * wer(refs[mode], [r["heard"] for r in results[mode]]), 2),
                "stages_ms_p50": _stages(results[mode]),
                "runs": [
                    {"stages_ms": r["stages_ms"], "final_pass": r["final_pass"], "asked_llm": r["asked_llm"]}
                    for r in results[mode]
                ],
            }
        streamed = [r["heard"] for m in ("push_to_talk", "hands_free") for r in results[m]]
        summary["wer_streaming"] = round(100 * wer(refs["push_to_talk"] + refs["hands_free"], streamed), 2)
        summary["wer_full_clip"] = summary["record_then_transcribe"]["wer"]
        whole = summary["record_then_transcribe"]["hark_share_first_audio_ms_p50"]
        print()
        print(
            f"{'p50 ms (from release / end of speech)':26} {'transcript':>10} {'first text':>10} {'first audio':>11} "
            f"{'Hark share':>10} {'vs whole':>8} {'text→audio':>10} {'WER %':>6}"
        )
        for mode in modes:
            s = summary[mode]
            ratio = whole / max(1, s["hark_share_first_audio_ms_p50"])
            print(
                f"{mode:26} {s['release_to_transcript_ms_p50']:10} {s['release_to_first_text_ms_p50']:10} "
                f"{s['release_to_first_audio_ms_p50']:11} {s['hark_share_first_audio_ms_p50']:10} {ratio:7.2f}× "
                f"{s['first_text_to_first_audio_ms_p50']:10} {s['wer']:6.2f}"
            )
        print()
        print("where the time goes, p50 ms from release (hands-free: end of speech) to each stage:")
        print(f"{'':26}" + "".join(f"{k:>13}" for k in STAGES))
        for mode in modes:
            st = summary[mode]["stages_ms_p50"]
            print(f"{mode:26}" + "".join(f"{st[k]:13}" if k in st else f"{'—':>13}" for k in STAGES))
    print(f"{len(clips)} clips × {args.rounds} round(s)")
    if args.rounds:
        print("turns that asked the LLM (the others are \"not known\"): " + ", ".join(
            f"{mode} {summary[mode]['turns_asking_the_llm']}/{len(results[mode])}" for mode in modes))
    if stops:
        summary["barge_in_stop_ms_p50"] = round(statistics.median(r["stop_ms"] for r in stops))
        summary["barge_in_cut_ms_p50"] = round(statistics.median(r["cut_ms"] for r in stops))
        print(
            f"barge-in, {len(stops)} runs: playback paused {summary['barge_in_stop_ms_p50']} ms p50 after the user "
            f"began to speak, stopped for good at {summary['barge_in_cut_ms_p50']} ms"
        )
    print(f"voice {voice}; load (1 min) {load_before[0]:.1f} → {load_after[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
