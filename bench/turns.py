"""When does a hands-free turn end? The silence rule against Smart-Turn v3 at a short pause, offline.

Every clip of `bench.turn_clips` (the manuals' English questions, Piper and eSpeak NG, each spoken
straight through and with a 300/500/800 ms pause inserted between its middle words) is fed frame
by frame to the voice loop's VAD (`models/vad.py`). Each silence after speech is an end-of-turn
candidate: the silence rule ends the turn after `end_of_turn_ms` (600); the smart rule asks
Smart-Turn (`models/turn_end.py`) once the silence reaches `pause` and ends the turn at once when
p ≥ `complete` (plus the model's own time), waits `wait` ms when p ≤ `incomplete`, and falls back to
the silence rule in between. Per rule:

- end of speech → end of turn, p50 / p90 (ms; the end of speech is the clip's last loud sample),
  over every clip (a paused clip's turn ends after its last word, or inside the pause);
- false cut-offs: the share of paused clips whose turn ended inside the pause.

The rule (printed): on the select half, among the settings whose false cut-offs are no more than
the 600 ms silence rule's and whose p90 is at most 50 ms over its (a complete question is not made
to wait), the smallest p50 (within 10 ms: fewer false cut-offs, then a lower p90); then the report
half's numbers for it, and for the model alone (p ≥ 0.5 ends the turn).

With the text (`--text`, the rule's fifth and sixth values: `end_of_turn: smart_text`): the pass in
each pause (`bench.turn_texts`: whisper base over the clip up to the pause's 128th ms, its text and
time) is read by `models/turn_text.py`; once it is in, "complete" text with p ≥ `text_complete` ends
the turn at once (with p ≤ `incomplete`, the silence rule decides, not `wait`), "incomplete" text
waits `wait` (and, with `veto`, so it does when p ≥ `complete`; then a p ≥ `complete` also waits
for the text). The voice loop cannot start an answer before that
pass is in (it is the transcript), so each rule is also scored by when the turn and the transcript
are both ready ("ready p50"); the text rules are chosen by it (same bounds on false cut-offs and p90).

    python -m bench.turns [--limit N] [--clips DIR] [--text] [--json OUT]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from models.runtime.env import prepare_process_env  # noqa: E402

prepare_process_env(offline=True)

from bench.turn_clips import TurnClip, make_turn_clips, read_wav  # noqa: E402

PAUSES = (160, 224, 256)  # ms: whole 32 ms VAD frames (5, 7, 8)
COMPLETE = (0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99)
INCOMPLETE = (0.01, 0.05, 0.1, 0.2, 0.3, 0.5)
WAITS = (600, 1000, 1500)
TEXT_COMPLETE = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)
TIE_MS = 10  # p50s this close count as equal: then fewer false cut-offs, then a lower p90
P90_SLACK_MS = 50  # a complete question may wait at most this much longer at p90 than with the silence rule
SILENCE_MS = 600.0


def decide(events: list[dict], rule: tuple | None) -> tuple[float, int]:
    """When the turn ends (s) and at which silence, for rule (pause, complete, incomplete, wait
    [, text_complete, veto]) or None (the silence rule)."""
    from models.turn_text import text_verdict

    for n, e in enumerate(events):
        if rule is None:
            wait, extra = SILENCE_MS, 0.0
        else:
            pause, complete, incomplete, waiting = rule[:4]
            if pause not in e["p"]:
                wait, extra = SILENCE_MS, 0.0  # shorter than the pause: the model was not asked
            else:
                p = e["p"][pause]
                wait, extra = (
                    (pause, e["model_ms"][pause]) if p >= complete
                    else (waiting, 0.0) if p <= incomplete else (SILENCE_MS, 0.0)
                )
                if len(rule) > 4 and "text" in e:
                    text_complete, veto = rule[4:]
                    verdict, ready = text_verdict(e["text"]), text_ready_ms(e)
                    if verdict == "complete" and p >= text_complete:
                        wait, extra = max(ready, pause + e["model_ms"][pause]), 0.0
                    elif verdict == "incomplete" and (veto or p < complete):
                        wait, extra = max(waiting, SILENCE_MS), 0.0
                    elif veto and p >= complete:
                        wait, extra = max(ready, pause + e["model_ms"][pause]), 0.0
                    elif verdict == "complete" and p <= incomplete:
                        wait, extra = SILENCE_MS, 0.0  # a finished question is not made to wait longer
        if e["ms"] >= wait:
            return e["start"] + (wait + extra) / 1000, n
    return events[-1]["start"] + 10.0, len(events) - 1


def text_ready_ms(e: dict) -> float:
    """When the pass in this pause is in, from the speech's end (ms)."""
    from bench.turn_texts import pass_pause_ms

    return pass_pause_ms() + e.get("text_ms", 0.0)


def score(clips: list[TurnClip], events: list[list[dict]], rule) -> dict:
    delays, ready, cut, paused = [], [], 0, 0
    for clip, ev in zip(clips, events, strict=True):
        end, n = decide(ev, rule)
        early = end < clip.speech_end - 0.05  # ended before the last word: inside the pause
        if clip.pause_ms:
            paused += 1
            cut += early
        if not early:
            delays.append((end - clip.speech_end) * 1000)
            e = ev[n]  # the transcript is the pass in this pause (a pass at the end when there is none)
            text_at = e["start"] + text_ready_ms(e) / 1000 if "text" in e else end
            ready.append((max(end, text_at) - clip.speech_end) * 1000)
    delays.sort()
    return {
        "end_ms_p50": round(statistics.median(delays)) if delays else None,
        "end_ms_p90": round(delays[int(0.9 * (len(delays) - 1))]) if delays else None,
        "ready_ms_p50": round(statistics.median(ready)) if ready else None,
        "false_cutoff_rate": round(cut / max(1, paused), 3),
        "paused": paused,
        "clips": len(clips),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="first N English questions")
    ap.add_argument("--clips", type=Path, default=None, help="folder for the clips (kept between runs)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--text", action="store_true", help="also the rules with the pass in the pause's text")
    args = ap.parse_args(argv)
    from models.turn_end import TurnEnd

    folder = args.clips or Path(tempfile.mkdtemp(prefix="hark_turns_"))
    clips = make_turn_clips(folder, args.limit)
    model = TurnEnd()
    model.warm_up()
    cache = folder / "silences.json"  # the VAD and the model on each clip: the slow part
    known = json.loads(cache.read_text()) if cache.exists() else {}
    events = [known.get(c.path) or silence_runs(c, model) for c in clips]
    for ev in events:  # JSON keys are strings
        for e in ev:
            e["p"] = {int(k): v for k, v in e["p"].items()}
            e["model_ms"] = {int(k): v for k, v in e["model_ms"].items()}
    cache.write_text(json.dumps({c.path: ev for c, ev in zip(clips, events, strict=True)}))
    if args.text:
        from bench.turn_texts import pause_texts

        pause_texts(folder, clips, events)
    rules = [None, *itertools.product(PAUSES, COMPLETE, INCOMPLETE, WAITS)]
    rules = [r for r in rules if r is None or r[2] <= r[1]]
    halves = {h: [i for i, c in enumerate(clips) if c.half == h] for h in ("select", "report")}
    scores: dict = {}

    def on(half: str, rule) -> dict:
        if (half, rule) not in scores:
            idx = halves[half]
            scores[half, rule] = score([clips[i] for i in idx], [events[i] for i in idx], rule)
        return scores[half, rule]

    base = on("select", None)

    def choose(candidates: list, key: str):
        ok = [
            r for r in candidates
            if on("select", r)["false_cutoff_rate"] <= base["false_cutoff_rate"]
            and on("select", r)["end_ms_p90"] <= base["end_ms_p90"] + P90_SLACK_MS
        ]
        fastest = min((on("select", r)[key] for r in ok), default=None)
        near = [r for r in ok if on("select", r)[key] <= (fastest or 0) + TIE_MS]
        return min(near, key=lambda r: (on("select", r)["false_cutoff_rate"], on("select", r)["end_ms_p90"]), default=None)

    best = choose(rules[1:], "end_ms_p50")
    rows = {"silence 600 ms": None, "chosen": best}
    if best is not None:
        p, c, inc, w = best
        rows["the model alone (≥0.5 ends, else 600 ms)"] = (p, 0.5, 0.0, 600)
        rows["no fallback band (≥c ends, else wait)"] = (p, c, c, w)
        rows["a wider incomplete band (p ≤ 0.5 waits)"] = (p, c, 0.5, w)
    text_best = None
    if args.text:
        text_rules = [(*r, t, v) for r in rules[1:] for t in TEXT_COMPLETE for v in (False, True)]
        text_best = choose(text_rules, "ready_ms_p50")
        rows["smart, as configured (256, 0.99, 0.2, 1000)"] = (256, 0.99, 0.2, 1000)
        if text_best is not None:
            rows["with the text (chosen by ready p50)"] = text_best
            rows["the text alone (Smart-Turn any p)"] = (*text_best[:4], 0.0, True)
    print(f"{len(clips)} clips ({sum(c.pause_ms > 0 for c in clips)} paused); model {model.last_ms:.0f} ms a call")
    print(f"{'rule':44} {'half':7} {'end p50':>8} {'end p90':>8} {'ready p50':>9} {'false cut-offs':>15}")
    summary = {"clips": len(clips), "chosen": best, "chosen_text": text_best, "rows": {}}
    for name, rule in rows.items():
        for half in ("select", "report"):
            s = on(half, rule)
            summary["rows"][f"{name} [{half}]"] = {"rule": rule, **s}
            print(f"{name:44} {half:7} {s['end_ms_p50']:>8} {s['end_ms_p90']:>8} {s['ready_ms_p50']:>9} "
                  f"{s['false_cutoff_rate']:>9.3f} of {s['paused']}")
    print(f"rule: false cut-offs on the select half ≤ the silence rule's ({base['false_cutoff_rate']:.3f}) and p90 ≤ "
          f"its {base['end_ms_p90']} + {P90_SLACK_MS} ms, then the smallest p50 (±{TIE_MS} ms: fewer false cut-offs, lower p90) → pause, complete, incomplete, wait = {best}")
    if args.text:
        print(f"with the text, the smallest ready p50 under the same bounds → (pause, complete, incomplete, wait, text_complete, veto) = {text_best}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


def silence_runs(clip: TurnClip, model) -> list[dict]:
    """The silences after speech (start s, length ms, the model's p per pause), from the VAD."""
    from models.vad import FRAME, FRAME_MS, RATE, VoiceActivity

    data, rate = read_wav(clip.path)
    assert rate == RATE
    x = data.astype(np.float32) / 32768
    vad = VoiceActivity(0.5, 250.0)
    out: list[dict] = []
    current: dict | None = None
    for i in range(len(x) // FRAME):
        vad.feed(x[i * FRAME : (i + 1) * FRAME])
        if not vad.heard:
            continue
        if vad.speaking:
            if current is not None:
                current["ms"] = (i + 1 - vad.last_run_frames) * FRAME_MS - current["start"] * 1000
                current = None
            continue
        if current is None:
            current = {"start": vad.speech_end_seconds, "ms": float("inf"), "p": {}, "model_ms": {}}
            out.append(current)
        for p in PAUSES:
            if p not in current["p"] and vad.silence_ms >= p:
                current["p"][p] = model.probability(x[: (i + 1) * FRAME])
                current["model_ms"][p] = model.last_ms
    return out


if __name__ == "__main__":
    raise SystemExit(main())
