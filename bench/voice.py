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
  on and the microphone speaks over it, with Hark's own playback routed back into the microphone
  too (`tests/ui/echo_path.py`: 100 ms, ×0.3, room noise): the time from the start of that speech
  to the page pausing the answer;
- self-playback (`--self` runs, `bench/voice_echo.py`): answers played back into the open
  microphone (delay 50–150 ms, gain 0.1–0.5, room noise): `self_barge_ins` of `self_playbacks`;
- paused questions (`--paused N`: N manuals questions of `bench.turn_clips`' report half, Piper and
  eSpeak NG, a 300–800 ms pause in the middle), hands-free with the configured end of turn and
  with the 600 ms silence rule: `false_cutoff_rate` (a turn ended inside the pause) for each.

Per run: release (or end of speech) → the final transcript in the chat, → the first answer text,
→ the first `playing` of the spoken answer in the page; Hark's share = first audio minus the
provider's 200 ms when the turn asked it (a question the library cannot answer is "not known"
without it). Times come from the page's own clock (Date.now()).

    python -m bench.voice                          # 3 LibriVox clips + 2 espeak questions, each way once
    python -m bench.voice --rounds 2 --json out.json
    python -m bench.voice --rounds 0 --barge 5     # barge-in only
    python -m bench.voice --variant window_margin_s=none --variant hands_free:window_margin_s=none  # 30-s passes beside
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

from bench.voice_browser import STAGES, barge_in, make_clips, one_turn, speech_onset  # noqa: E402
from bench.voice_echo import ROOMS, browser_clip, paused_turn, self_playback  # noqa: E402
from bench.wer import wer  # noqa: E402

TTFT = 0.2
ANSWER = (
    "The tenant must give the landlord a written notice period of two months [1]. The landlord must "
    "give three months [1]. Rent is 950 euros per month, due on the first working day [1]."
)
MODES = ("push_to_talk", "hands_free", "record_then_transcribe")


def _app(base: Path, llm_url: str, cpu_threads: int | None = None, piper_threads: int | None = None):
    from assistant.assistant import Assistant
    from assistant.config import ProviderSettings
    from tests.ui.conftest import demo_library, free_port
    from ui.app import build_app, serve
    from ui.launch_plan import LaunchPlan

    docs, cfg = demo_library(base, "base")
    if cpu_threads is not None:
        cfg.speech.cpu_threads = cpu_threads
    if piper_threads is not None:
        cfg.tts.piper_threads = piper_threads
    cfg.llm.order = ["bench"]
    cfg.llm.providers = {"bench": ProviderSettings(kind="openai_compatible", model="bench", base_url=llm_url)}
    assistant = Assistant(cfg)
    assistant.warm_up()
    assistant.ingest([docs])
    demo = build_app(assistant, cfg)
    url, _ = serve(demo, cfg, LaunchPlan("127.0.0.1", free_port(), False, None), block=False)
    voice = getattr(assistant.parts.synthesiser.get_or_none(), "engine_name", "unknown")
    return demo, url, voice, assistant


def _settings(text: str) -> dict:
    """`partial_model=tiny.en,pause_ms=150` → {key: typed value} (none → None)."""
    from models.settings import StreamingSettings

    raw = {k.strip(): v.strip() for k, v in (part.split("=", 1) for part in text.split(","))}
    raw = {k: None if v.lower() in ("none", "null") else v for k, v in raw.items()}
    typed = StreamingSettings(**raw)
    return {k: getattr(typed, k) for k in raw}


def _p50(values: list[float]) -> int | str:
    return round(statistics.median(values)) if values else "—"


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
    ap.add_argument("--self", dest="self_runs", type=int, default=5, help="answers played back into the microphone")
    ap.add_argument("--paused", type=int, default=2, help="paused questions (each by two voices, two rules)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--modes", default=",".join(MODES), help=f"which ways to ask, comma-separated (of {', '.join(MODES)})"
    )
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="[MODE:]KEY=VALUE[,KEY=VALUE]",
        help="also push-to-talk (or MODE: hands_free) with these speech.streaming settings, side by side "
        "(e.g. partial_model=tiny.en, hands_free:window_margin_s=none)",
    )
    ap.add_argument("--cpu-threads", type=int, default=None, help="speech.cpu_threads of the main model")
    ap.add_argument("--piper-threads", type=int, default=None, help="tts.piper_threads (0: all cores)")
    args = ap.parse_args(argv)
    variants = {}
    for v in args.variant:  # "[MODE:]KEY=VALUE,…": push-to-talk unless a mode is named
        mode, _, text = v.partition(":") if ":" in v.split("=", 1)[0] else ("", "", v)
        if mode not in ("", *MODES[:2]):
            raise SystemExit(f"--variant {v}: the mode is push_to_talk or hands_free")
        variants[f"{mode or 'push_to_talk'}[{text}]"] = _settings(text)
    chosen = tuple(m for m in args.modes.split(",") if m)
    if not chosen or set(chosen) - set(MODES):
        raise SystemExit(f"--modes {args.modes}: choose from {', '.join(MODES)}")
    modes = (*chosen, *variants)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

    from playwright.sync_api import sync_playwright

    from tests.llm_server import LLMServer, Reply
    from tests.ui.conftest import CHROMIUM, CHROMIUM_ARGS, fake_microphone
    from tests.ui.echo_path import echo_path_script

    load_before = os.getloadavg()
    results: dict[str, list[dict]] = {m: [] for m in modes}
    refs: dict[str, list[str]] = {m: [] for m in modes}
    with (
        tempfile.TemporaryDirectory() as tmp,
        LLMServer(default=Reply(ANSWER, ttft=TTFT, chunk_delay=0.025), max_lifetime=3600) as server,
    ):
        base = Path(tmp)
        demo, url, voice, assistant = _app(base, server.openai_url, args.cpu_threads, args.piper_threads)
        streaming = assistant.cfg.speech.streaming
        defaults = streaming.model_dump()
        for variant in variants.values():  # their second models load now, not in a measured turn
            streaming.__dict__.update(variant)
            assistant.listening.warm_up()
            streaming.__dict__.update(defaults)
        clips = make_clips(base, args.librivox, args.espeak)
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
                                r = one_turn(browser, url, mode.split("[")[0], clip_s, speech_end, demo.hark_voice_loop)
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
                                + f" (pass at release: {r['final_pass'] or '—'}; search prefetched: {r['prefetched']};"
                                + f" run ahead: {r['ahead']})"
                                + "\n      turn ms " + " ".join(f"{k} {v:.0f}" for k, v in r["timings_ms"].items())
                                + ("\n      passes " + ", ".join(r["passes"]) if r["passes"] else ""),
                                flush=True,
                            )
                    finally:
                        browser.close()
            stops = []
            for n in range(args.barge):
                path, _, _, _ = clips[n % len(clips)]
                onset = speech_onset(path)
                extra = fake_microphone(path, autoplay=True)
                browser = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra])
                try:
                    r = barge_in(browser, url, onset, echo_path_script(0.1, 0.3))
                finally:
                    browser.close()
                stops.append(r)
                print(
                    f"barge-in {n + 1}: playback paused {r['stop_ms']:.0f} ms after the speech began, "
                    f"stopped for good at {r['cut_ms']:.0f} ms",
                    flush=True,
                )
            hands_free_variants = {k: v for k, v in variants.items() if k.startswith("hands_free[")}
            selfs, paused = _turn_runs(p, url, base, args, streaming, hands_free_variants)
        demo.close()
    load_after = os.getloadavg()

    def p50(mode: str, key: str) -> float:
        return round(statistics.median(r[key] for r in results[mode]))

    summary: dict = {
        "clips": len(clips),
        "rounds": args.rounds,
        "tts_voice": voice,
        "piper_threads": assistant.cfg.tts.piper_threads,
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
                "hark_share_llm_turns_ms_p50": _p50([r["share_ms"] for r in results[mode] if r["asked_llm"]]),
                "hark_share_not_known_turns_ms_p50": _p50([r["share_ms"] for r in results[mode] if not r["asked_llm"]]),
                "turns_run_ahead": sum(r["ahead"] for r in results[mode]),
                "first_text_to_first_audio_ms_p50": round(
                    statistics.median(r["first_audio_ms"] - r["first_text_ms"] for r in results[mode])
                ),
                "wer": round(100 * wer(refs[mode], [r["heard"] for r in results[mode]]), 2),
                "stages_ms_p50": _stages(results[mode]),
                "runs": [
                    {"stages_ms": r["stages_ms"], "final_pass": r["final_pass"], "asked_llm": r["asked_llm"],
                     "ahead": r["ahead"], "share_ms": round(r["share_ms"])}
                    for r in results[mode]
                ],
            }
        live = [m for m in ("push_to_talk", "hands_free") if m in results]
        if live:
            streamed = [r["heard"] for m in live for r in results[m]]
            summary["wer_streaming"] = round(100 * wer([x for m in live for x in refs[m]], streamed), 2)
        if "record_then_transcribe" in results:
            summary["wer_full_clip"] = summary["record_then_transcribe"]["wer"]
        whole = summary.get("record_then_transcribe", {}).get("hark_share_first_audio_ms_p50", 0)
        print()
        print(
            f"{'p50 ms (from release / end of speech)':26} {'transcript':>10} {'first text':>10} {'first audio':>11} "
            f"{'Hark share':>10} {'LLM turns':>9} {'not known':>9} {'ahead':>5} {'vs whole':>8} {'text→audio':>10} "
            f"{'WER %':>6}"
        )
        for mode in modes:
            s = summary[mode]
            ratio = f"{whole / max(1, s['hark_share_first_audio_ms_p50']):7.2f}×" if whole else f"{'—':>8}"
            print(
                f"{mode:26} {s['release_to_transcript_ms_p50']:10} {s['release_to_first_text_ms_p50']:10} "
                f"{s['release_to_first_audio_ms_p50']:11} {s['hark_share_first_audio_ms_p50']:10} "
                f"{s['hark_share_llm_turns_ms_p50']:9} {s['hark_share_not_known_turns_ms_p50']:9} "
                f"{s['turns_run_ahead']:5} {ratio} {s['first_text_to_first_audio_ms_p50']:10} {s['wer']:6.2f}"
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
    if "hands_free" in summary:
        summary["hands_free_share_first_audio_ms_p50"] = summary["hands_free"]["hark_share_first_audio_ms_p50"]
    summary.update(_turn_summary(selfs, paused))
    print(f"voice {voice}; load (1 min) {load_before[0]:.1f} → {load_after[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


def _turn_runs(p, url: str, base: Path, args, streaming, variants: dict) -> tuple[list[dict], list[dict]]:
    """The self-playback runs and the paused questions (each with the configured end of turn, with
    each hands-free variant's settings and with the silence rule), each in a browser of its own."""
    import subprocess

    from bench.turn_clips import make_turn_clips
    from tests.ui.conftest import CHROMIUM, CHROMIUM_ARGS, fake_microphone

    selfs: list[dict] = []
    if args.self_runs:
        quiet = base / "quiet.wav"
        subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", str(quiet), "trim", "0", "90"], check=True)
    for n in range(args.self_runs):
        delay, gain = ROOMS[n % len(ROOMS)]
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *fake_microphone(quiet, autoplay=True)])
        try:
            r = self_playback(browser, url, delay, gain)
        finally:
            browser.close()
        selfs.append(r)
        print(f"self-playback {n + 1} ({r['delay_ms']} ms, ×{gain}): barge-in {r['barge_in']}, holds {r['holds']}, "
              f"turns {r['turns']}, routed {r['routed']}", flush=True)
    paused: list[dict] = []
    if args.paused:
        clips = [c for c in make_turn_clips(base / "turn_clips", 2 * args.paused) if c.pause_ms and c.half == "report"]
        for clip in clips:
            wav = browser_clip(clip, base)
            rules = {"configured": {}, **variants, "silence": {"end_of_turn": "silence"}}
            for rule, update in rules.items():
                keep = streaming.model_dump()
                streaming.__dict__.update(update)
                browser = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *fake_microphone(wav, autoplay=True)])
                try:
                    r = paused_turn(browser, url, clip, clip.speech_end)
                finally:
                    browser.close()
                    streaming.__dict__.update(keep)
                paused.append({**r, "rule": rule, "voice": clip.voice, "pause_ms": clip.pause_ms})
                print(f"paused {clip.voice} {clip.pause_ms} ms ({rule}): turns {r['turns']}, cut off {r['cut_off']}, "
                      f"first turn {r['first_turn_ms']} ms", flush=True)
    return selfs, paused


def _turn_summary(selfs: list[dict], paused: list[dict]) -> dict:
    out: dict = {}
    if selfs:
        out["self_playbacks"] = len(selfs)
        out["self_barge_ins"] = sum(r["barge_in"] for r in selfs)
        out["self_holds"] = sum(r["holds"] for r in selfs)
        out["self_playback_runs"] = selfs
        print(f"self-playback: {out['self_barge_ins']} barge-ins in {len(selfs)} answers played back into the "
              f"microphone ({out['self_holds']} holds)")
    others = sorted({r["rule"] for r in paused} - {"configured", "silence"})
    keys = [("configured", "false_cutoff_rate"), *((o, f"false_cutoff_rate {o}") for o in others),
            ("silence", "false_cutoff_rate_silence_rule")]
    for rule, key in keys:
        runs = [r for r in paused if r["rule"] == rule]
        if runs:
            out[key] = round(sum(r["cut_off"] for r in runs) / len(runs), 3)
            print(f"paused questions, {rule} end of turn: {sum(r['cut_off'] for r in runs)} of {len(runs)} cut off")
    if paused:
        out["paused_runs"] = paused
    return out


if __name__ == "__main__":
    raise SystemExit(main())
